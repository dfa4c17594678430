using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using Grpc.Core;
using Utilityd.V1;
using Xunit;
using static Utilityd.Client.Tests.Agents;

namespace Utilityd.Client.Tests
{
    /// <summary>A chunk of foragers (eat_hide_wander: hunger, danger,
    /// food_distance, idle_time), factor-major as an ECS keeps them.</summary>
    public sealed class Chunk
    {
        public readonly ulong[] Ids;
        public readonly float[] Factors;
        public readonly int[] Running;

        public Chunk(int rows)
        {
            Ids = new ulong[rows];
            Factors = new float[4 * rows];
            Running = new int[rows];
            for (var r = 0; r < rows; r++)
            {
                Ids[r] = (ulong)(1000 + r);
                Factors[0 * rows + r] = (r % 10) / 10f;
                Factors[1 * rows + r] = (r % 7) / 10f;
                Factors[2 * rows + r] = r % 25;
                Factors[3 * rows + r] = r % 20;
                Running[r] = r % 4 - 1;
            }
        }

        public BlockColumns Columns() => new BlockColumns
        {
            BehaviourSet = "eat_hide_wander", AgentIds = Ids, Factors = Factors, Layout = FactorLayout.Columns,
            CurrentAction = Running,
        };
    }

    public class BlockTests
    {
        [Fact]
        public async Task BlocksDecideBitForBitAsSnapshots()
        {
            using var server = new Server();
            await using var c = Connect(server.Address);
            var schema = await c.GetSchemaAsync("eat_hide_wander");
            const int rows = 300;
            var chunk = new Chunk(rows);
            var block = new AgentBlock();
            Blocks.Write(chunk.Columns(), block);
            var request = new DecideRequest();
            request.Blocks.Add(block);
            var resp = await c.DecideAsync(request);
            var actions = new int[rows];
            var scores = new float[rows];
            var errors = new List<RowError>();
            Blocks.Read(resp.Blocks[0], rows, new BlockAnswers { ActionIndex = actions, Score = scores }, errors);
            Assert.Empty(errors);

            var snapshots = new DecideRequest();
            for (var r = 0; r < rows; r++)
            {
                var a = new AgentSnapshot
                {
                    AgentId = chunk.Ids[r].ToString(), BehaviourSet = "eat_hide_wander", ExpectedRevision = schema.Revision,
                };
                for (var f = 0; f < 4; f++) a.Factors.Add(chunk.Factors[f * rows + r]);
                if (chunk.Running[r] >= 0) a.CurrentAction = schema.Summary.Actions[chunk.Running[r]];
                snapshots.Agents.Add(a);
            }
            var snap = await c.DecideAsync(snapshots);
            for (var r = 0; r < rows; r++)
            {
                var d = snap.Decisions[r];
                Assert.True(schema.ActionIndex(d.Action) == actions[r], $"row {r}: block {actions[r]}, snapshot {d.Action}");
                Assert.True(BitConverter.SingleToInt32Bits(d.Score) == BitConverter.SingleToInt32Bits(scores[r]),
                            $"row {r}: block {scores[r]}, snapshot {d.Score}");
            }
        }

        [Fact]
        public async Task ABlockOfAnotherRevisionIsRefusedAsAWhole()
        {
            using var server = new Server();
            await using var c = Connect(server.Address);
            var columns = new Chunk(4).Columns();
            columns.ExpectedRevision = "not-the-revision";
            var block = new AgentBlock();
            Blocks.Write(columns, block);
            var request = new DecideRequest();
            request.Blocks.Add(block);
            var resp = await c.DecideAsync(request);
            var e = Assert.Throws<UtilitydException>(() =>
                Blocks.Read(resp.Blocks[0], 4, new BlockAnswers { ActionIndex = new int[4] }, new List<RowError>()));
            Assert.Equal(StatusCode.FailedPrecondition, e.Code);
            Assert.True(e.IsStaleRevision);
        }

        [Fact]
        public void ReadNamesASpanOfTheWrongSize()
        {
            var answer = new DecisionBlock { Flags = Google.Protobuf.ByteString.CopyFrom(0, 0) };
            answer.ActionIndex.Add(new[] { 0, 1 });
            answer.TargetIndex.Add(new[] { -1, -1 });
            answer.Score.Add(new[] { 1f, 1f });
            var e = Assert.Throws<UtilitydException>(() =>
                Blocks.Read(answer, 2, new BlockAnswers { Score = new float[3] }, new List<RowError>()));
            Assert.Equal("BlockAnswers.Score", e.Field);
            var rows = Assert.Throws<UtilitydException>(() =>
                Blocks.Read(answer, 3, new BlockAnswers(), new List<RowError>()));
            Assert.Contains("expected 3 rows", rows.Message);
        }

        /// <summary>The game thread's share of a block: writing the chunk into
        /// a kept message and reading the answer into the chunk's arrays
        /// allocate nothing once the message has grown.</summary>
        [Fact]
        public void WritingAndReadingABlockAllocateNothingOnTheGameThread()
        {
            const int rows = 1024;
            var chunk = new Chunk(rows);
            var columns = chunk.Columns();
            var block = new AgentBlock();
            var answer = new DecisionBlock { Flags = Google.Protobuf.ByteString.CopyFrom(new byte[rows]) };
            for (var r = 0; r < rows; r++)
            {
                answer.ActionIndex.Add(r % 4);
                answer.TargetIndex.Add(-1);
                answer.Score.Add(r / 1024f);
            }
            var actions = new int[rows];
            var scores = new float[rows];
            var errors = new List<RowError>();
            Blocks.Write(columns, block); // grows the message once
            var before = GC.GetAllocatedBytesForCurrentThread();
            for (var tick = 0; tick < 100; tick++)
            {
                chunk.Factors[tick % chunk.Factors.Length] += 1;
                Blocks.Write(columns, block);
                Blocks.Read(answer, rows, new BlockAnswers { ActionIndex = actions, Score = scores }, errors);
            }
            var allocated = GC.GetAllocatedBytesForCurrentThread() - before;
            Assert.Equal(0, allocated);
            Assert.Equal(rows, block.AgentIds.Count);
            Assert.Equal(3, actions[1023]);
        }
    }
}
