using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text.Json;
using Google.Protobuf;
using Utilityd.V1;
using Xunit;

namespace Utilityd.Client.Tests
{
    /// <summary>tests/vectors/client_sdk_vectors.json, which the C++, Go and
    /// TypeScript SDKs read too (its messages in the proto3 JSON form).</summary>
    public class VectorsTests
    {
        private static readonly JsonParser Parser = new JsonParser(JsonParser.Settings.Default);

        internal static string SourceDir()
        {
            var env = Environment.GetEnvironmentVariable("UTILITYD_SOURCE_DIR");
            if (!string.IsNullOrEmpty(env)) return env;
            foreach (var start in new[] { Directory.GetCurrentDirectory(), AppContext.BaseDirectory })
            {
                for (var d = new DirectoryInfo(start); d != null; d = d.Parent)
                {
                    if (File.Exists(Path.Combine(d.FullName, "tests/vectors/client_sdk_vectors.json"))) return d.FullName;
                }
            }
            throw new InvalidOperationException("set UTILITYD_SOURCE_DIR to the checkout");
        }

        private static JsonElement Load(string section)
        {
            var doc = JsonDocument.Parse(File.ReadAllText(Path.Combine(SourceDir(), "tests/vectors/client_sdk_vectors.json")));
            var list = doc.RootElement.GetProperty(section);
            Assert.True(list.GetArrayLength() > 0, section + " is empty");
            return list;
        }

        private static T Parse<T>(JsonElement e) where T : IMessage, new() => Parser.Parse<T>(e.GetRawText());

        private static string Str(JsonElement e, string name, string fallback = "") =>
            e.TryGetProperty(name, out var v) ? v.GetString() ?? fallback : fallback;

        [Fact]
        public void DecisionIds()
        {
            foreach (var c in Load("decisionIds").EnumerateArray())
            {
                var @base = ulong.Parse(Str(c, "base", "0"));
                var index = c.TryGetProperty("index", out var i) ? i.GetInt32() : 0;
                Assert.Equal(Str(c, "hex"), Client.DecisionIds.Hex(Client.DecisionIds.Id(@base, index)));
            }
        }

        [Fact]
        public void Packing()
        {
            foreach (var c in Load("packing").EnumerateArray())
            {
                var name = Str(c, "name");
                var schema = new Schema(Parse<BehaviourSetSummary>(c.GetProperty("summary")));
                var given = Parse<AgentSnapshot>(c.GetProperty("given"));
                var agent = given.Clone();
                var error = Str(c, "error");
                if (error.Length > 0)
                {
                    var e = Assert.Throws<UtilitydException>(() => schema.Pack(agent));
                    Assert.True(error == e.Message, $"{name}: {e.Message}, want {error}");
                    Assert.True(agent.Equals(given), name + ": a failed pack changed the agent");
                    continue;
                }
                schema.Pack(agent);
                Assert.True(Parse<AgentSnapshot>(c.GetProperty("packed")).Equals(agent), $"{name}: got {agent}");
            }
        }

        [Fact]
        public void BlocksEncodeToTheReferenceBytes()
        {
            foreach (var c in Load("blocks").EnumerateArray())
            {
                var b = Parse<AgentBlock>(c.GetProperty("block"));
                // JSON's "NaN" has no sign; the reference bytes carry the
                // quiet NaN C, Go and JavaScript make (.NET's float.NaN is
                // its negative twin; the service takes either).
                Canonical(b.Factors);
                Canonical(b.SecondsSinceAction);
                Canonical(b.TargetFactors);
                var input = new BlockColumns
                {
                    BehaviourSet = b.BehaviourSet, ExpectedRevision = b.ExpectedRevision, Layout = b.Layout,
                    AgentIds = b.AgentIds.ToArray(), Factors = b.Factors.ToArray(),
                    CurrentAction = b.CurrentAction.ToArray(), SecondsSinceAction = b.SecondsSinceAction.ToArray(),
                    Seeds = b.Seeds.ToArray(), Personality = b.Personality.ToArray(),
                    TargetOffsets = b.TargetOffsets.ToArray(), TargetFactors = b.TargetFactors.ToArray(),
                    TargetIds = b.TargetIds.ToArray(), CurrentTarget = b.CurrentTarget.ToArray(),
                    ExplainRows = b.ExplainRows.ToArray(), GameTime = b.GameTime,
                    TreeStateOffsets = b.TreeStateOffsets.ToArray(), TreeStates = b.TreeStates.ToByteArray(),
                    OutcomeOffsets = b.OutcomeOffsets.ToArray(), OutcomeLeaves = b.OutcomeLeaves.ToArray(),
                    OutcomeStatuses = b.OutcomeStatuses.ToArray(), HeldOffsets = b.HeldOffsets.ToArray(),
                    HeldResources = b.HeldResources.ToArray(), HeldTargetIds = b.HeldTargetIds.ToArray(),
                    HeldAmounts = b.HeldAmounts.ToArray(), FixedWidthIndices = b.FixedWidthIndices,
                };
                // Written twice into one message: the second write replaces
                // the first.
                var output = new AgentBlock();
                Blocks.Write(input, output);
                Blocks.Write(input, output);
                Assert.Equal(Convert.FromBase64String(Str(c, "wire")), output.ToByteArray());
            }
        }

        [Fact]
        public void AnswersReadIntoTheCallersArrays()
        {
            foreach (var c in Load("answers").EnumerateArray())
            {
                var name = Str(c, "name");
                var want = Parse<DecisionBlock>(c.GetProperty("block"));
                var answer = DecisionBlock.Parser.ParseFrom(Convert.FromBase64String(Str(c, "wire")));
                Assert.True(answer.Equals(want), name + ": the wire does not parse to the block");
                // The indices the reader must give: the fixed-width columns
                // when the answer has them.
                var fixedWidth = want.ActionIndexFixed.Count > 0;
                var wantActions = fixedWidth ? want.ActionIndexFixed : want.ActionIndex;
                var wantTargets = fixedWidth ? want.TargetIndexFixed : want.TargetIndex;
                var rows = wantActions.Count;
                var actions = new int[rows];
                var targets = new int[rows];
                var scores = new float[rows];
                var flags = new byte[rows];
                var errors = new List<RowError>();
                var output = new BlockAnswers { ActionIndex = actions, TargetIndex = targets, Score = scores, Flags = flags };
                if (want.Error != null)
                {
                    var e = Assert.Throws<UtilitydException>(() =>
                        Blocks.Read(answer, rows, new BlockAnswers { ActionIndex = actions }, errors));
                    Assert.Equal(want.Error.Message, e.Message);
                    continue;
                }
                Blocks.Read(answer, rows, output, errors);
                Assert.Equal(wantActions, actions);
                Assert.Equal(wantTargets, targets);
                Assert.Equal(want.Score, scores);
                Assert.Equal(want.Flags.ToByteArray(), flags);
                Assert.Equal(want.Full.Select(x => (int)x.Agent), errors.Select(e => e.Row));
            }
        }

        [Fact]
        public void TreeTracker()
        {
            foreach (var c in Load("trees").EnumerateArray())
            {
                var trees = new TreeTracker();
                var k = 0;
                foreach (var step in c.GetProperty("steps").EnumerateArray())
                {
                    var at = $"{Str(c, "name")}, step {k++}";
                    if (step.TryGetProperty("prepare", out var p))
                    {
                        var s = new AgentSnapshot { AgentId = Str(p, "agentId") };
                        trees.Prepare(s);
                        Assert.True(Str(p, "expectState") == s.TreeState.ToBase64(), at);
                        var outcomes = p.TryGetProperty("expectOutcomes", out var o)
                            ? o.EnumerateArray().Select(Parse<LeafOutcome>).ToList() : new List<LeafOutcome>();
                        Assert.Equal(outcomes, s.LeafOutcomes.ToList());
                        var running = p.TryGetProperty("expectRunning", out var r) ? r.GetInt32() : 0;
                        Assert.True(running == trees.Running(s.AgentId).Count, at);
                    }
                    else if (step.TryGetProperty("update", out var u))
                    {
                        trees.Update(Parse<Decision>(u));
                    }
                    else if (step.TryGetProperty("report", out var rep))
                    {
                        var status = (NodeStatus)Enum.Parse(typeof(NodeStatus),
                            ToPascal(Str(rep, "status").Substring("NODE_STATUS_".Length)));
                        trees.Report(Str(rep, "agentId"), rep.GetProperty("leaf").GetInt32(), status);
                    }
                    else
                    {
                        trees.Forget(step.GetProperty("forget").GetString()!);
                    }
                }
            }
        }

        private static void Canonical(Google.Protobuf.Collections.RepeatedField<float> values)
        {
            for (var i = 0; i < values.Count; i++)
            {
                if (float.IsNaN(values[i])) values[i] = BitConverter.Int32BitsToSingle(0x7FC00000);
            }
        }

        private static string ToPascal(string upperSnake) =>
            string.Concat(upperSnake.Split('_').Select(w => w.Substring(0, 1) + w.Substring(1).ToLowerInvariant()));
    }
}
