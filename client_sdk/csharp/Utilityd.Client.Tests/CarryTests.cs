using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;
using Utilityd.V1;
using Xunit;
using static Utilityd.Client.Tests.Agents;

namespace Utilityd.Client.Tests
{
    /// <summary>What a block carries from one tick to the next, against a
    /// real replica: tree state (guard_tree) and coordination holdings
    /// (arena_goblin's attack tokens).</summary>
    public class CarryTests
    {
        private static async Task<DecisionBlock> DecideBlock(UtilitydClient c, BlockColumns columns, AgentBlock block)
        {
            Blocks.Write(columns, block);
            var request = new DecideRequest();
            request.Blocks.Add(block);
            var resp = await c.DecideAsync(request);
            Assert.Null(resp.Blocks[0].Error);
            return resp.Blocks[0];
        }

        /// <summary>Guards ticked as a block with their tree state carried
        /// decide, tick after tick, what the same guards decide as snapshots
        /// whose state a TreeTracker carries, down to the state's bytes.</summary>
        [Fact]
        public async Task TreeStateCarriedInABlockMatchesTheTracker()
        {
            using var server = new Server();
            await using var c = Connect(server.Address);
            var schema = await c.GetSchemaAsync("guard_tree");
            const int rows = 6;
            var f = schema.Summary.Factors.Count;
            var factors = new float[rows * f];
            var columns = new BlockColumns
            {
                BehaviourSet = "guard_tree", ExpectedRevision = schema.Revision,
                AgentIds = Enumerable.Range(0, rows).Select(r => (ulong)r).ToArray(), Factors = factors,
                FixedWidthIndices = true,
            };
            var block = new AgentBlock();
            var carry = new CarryBuffers();
            var trees = new TreeTracker();
            var actionsSeen = new HashSet<int>();
            var halts = 0; // a leaf halted needs the state of the tick before
            for (var tick = 0; tick < 8; tick++)
            {
                for (var r = 0; r < rows; r++)
                {
                    for (var k = 0; k < f; k++)
                    {
                        var name = schema.Summary.Factors[k];
                        factors[r * f + k] = name switch
                        {
                            "player_visible" => (r + tick / 3) % 2,
                            "player_distance" => (r * 7 + tick * 3) % 40,
                            "health" => 100 - r * 12,
                            _ => 50,
                        };
                    }
                }
                columns.GameTime = tick * 0.1;
                var answer = await DecideBlock(c, columns, block);
                // The block asked for fixed-width indices: the server
                // answered in those columns only.
                Assert.Empty(answer.ActionIndex);
                var actionIndex = answer.ActionIndexFixed;
                Assert.Equal(rows, actionIndex.Count);
                var snapshots = new DecideRequest();
                for (var r = 0; r < rows; r++)
                {
                    var a = new AgentSnapshot
                    {
                        AgentId = r.ToString(), BehaviourSet = "guard_tree", ExpectedRevision = schema.Revision,
                        GameTime = tick * 0.1,
                    };
                    a.Factors.Add(factors.Skip(r * f).Take(f));
                    trees.Prepare(a);
                    snapshots.Agents.Add(a);
                }
                var snap = await c.DecideAsync(snapshots);
                for (var r = 0; r < rows; r++)
                {
                    var d = snap.Decisions[r];
                    Assert.Null(d.Error);
                    Assert.True(schema.ActionIndex(d.Action) == actionIndex[r],
                                $"tick {tick}, row {r}: block {actionIndex[r]}, snapshot {d.Action}");
                    var from = (int)answer.TreeStateOffsets[r];
                    var to = (int)answer.TreeStateOffsets[r + 1];
                    Assert.Equal(d.TreeState.ToByteArray(), answer.TreeStates.Span.Slice(from, to - from).ToArray());
                    var halted = (int)(answer.HaltedOffsets[r + 1] - answer.HaltedOffsets[r]);
                    Assert.True(d.HaltedLeaves.Count == halted, $"tick {tick}, row {r}: halted {halted}, snapshot {d.HaltedLeaves.Count}");
                    halts += halted;
                    actionsSeen.Add(actionIndex[r]);
                    trees.Update(d);
                }
                Blocks.CarryTreeState(answer, columns, carry);
            }
            Assert.True(actionsSeen.Count > 1, "every guard did the same thing every tick");
            Assert.True(halts > 0, "no running leaf was ever halted: the carried state was never used");
        }

        /// <summary>Goblins around one mage: two attack tokens for the mage.
        /// The first tick grants two, to the closest goblins. Then the others
        /// come closer; carried as holdings, the tokens stay with the first
        /// two (holders keep while their action goes on), and no tick grants
        /// more.</summary>
        [Fact]
        public async Task HoldingsCarriedInABlockKeepTheirTokens()
        {
            using var server = new Server();
            await using var c = Connect(server.Address);
            var schema = await c.GetSchemaAsync("arena_goblin");
            const int rows = 6;
            int F(string n) => schema.FactorIndex(n);
            int T(string n) => schema.TargetFactorIndex(n);
            var factors = new float[rows * schema.Summary.Factors.Count];
            var targetFactors = new float[rows * schema.Summary.TargetFactors.Count];
            for (var r = 0; r < rows; r++)
            {
                factors[r * schema.Summary.Factors.Count + F("health")] = 30;
                factors[r * schema.Summary.Factors.Count + F("courage")] = 1;
                targetFactors[r * schema.Summary.TargetFactors.Count + T("distance")] = 2 + r;
                targetFactors[r * schema.Summary.TargetFactors.Count + T("mage_health")] = 80;
            }
            var columns = new BlockColumns
            {
                BehaviourSet = "arena_goblin", ExpectedRevision = schema.Revision,
                AgentIds = Enumerable.Range(0, rows).Select(r => (ulong)(100 + r)).ToArray(), Factors = factors,
                TargetOffsets = Enumerable.Range(0, rows + 1).Select(r => (uint)r).ToArray(),
                TargetFactors = targetFactors, TargetIds = Enumerable.Repeat(7UL, rows).ToArray(),
            };
            var block = new AgentBlock();
            var carry = new CarryBuffers();
            List<int>? holders = null;
            for (var tick = 0; tick < 3; tick++)
            {
                if (tick == 1)
                {
                    for (var r = 0; r < rows; r++) targetFactors[r * schema.Summary.TargetFactors.Count + T("distance")] = 8 - r;
                }
                var answer = await DecideBlock(c, columns, block);
                var granted = Enumerable.Range(0, rows)
                    .Where(r => answer.GrantOffsets[r + 1] > answer.GrantOffsets[r]).ToList();
                Assert.True(granted.Count == 2, $"tick {tick}: {granted.Count} goblins hold a token for one mage (2 exist)");
                Assert.All(answer.GrantTargetIds, id => Assert.Equal(7UL, id));
                if (holders != null) Assert.Equal(holders, granted);
                holders = granted;
                Blocks.CarryHeld(answer, columns, carry);
                Assert.Equal(answer.GrantOffsets.ToArray(), columns.HeldOffsets.ToArray());
            }
        }
    }
}
