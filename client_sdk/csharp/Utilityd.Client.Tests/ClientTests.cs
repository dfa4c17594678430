using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using Grpc.Core;
using Utilityd.V1;
using Xunit;
using static Utilityd.Client.Tests.Agents;

namespace Utilityd.Client.Tests
{
    public class ClientTests
    {
        [Theory]
        [InlineData("")]
        [InlineData("127.0.0.1")]
        [InlineData("a:1,b")]
        [InlineData("::1:50051")]
        public void MalformedTargetsAreInvalidArgumentNamingTheTarget(string target)
        {
            var e = Assert.Throws<UtilitydException>(() => UtilitydClient.Connect(new ClientOptions { Target = target }));
            Assert.Equal(StatusCode.InvalidArgument, e.Code);
            Assert.Equal("target", e.Field);
        }

        [Fact]
        public void PackNamesWhatIsWrongAndLeavesTheAgentAlone()
        {
            var summary = new BehaviourSetSummary { Name = "s", Revision = "r1" };
            summary.Factors.Add(new[] { "a", "b" });
            summary.TargetFactors.Add("d");
            var s = new Schema(summary);
            var a = new AgentSnapshot();
            a.NamedFactors.Add("b", 2);
            a.NamedFactors.Add("a", 1);
            var t = new TargetSnapshot { TargetId = "t" };
            t.NamedFactors.Add("d", 3);
            a.Targets.Add(t);
            s.Pack(a);
            Assert.Equal(new[] { 1f, 2f }, a.Factors);
            Assert.Equal(new[] { 3f }, a.Targets[0].Factors);
            Assert.Empty(a.NamedFactors);
            Assert.Equal("r1", a.ExpectedRevision);

            var bad = new AgentSnapshot();
            bad.NamedFactors.Add("a", 1);
            bad.NamedFactors.Add("c", 9);
            var e = Assert.Throws<UtilitydException>(() => s.Pack(bad));
            Assert.Equal(ErrorReason.UnknownFactor, e.Reason);
            Assert.Contains("unknown factor \"c\"", e.Message);
            Assert.Equal(2, bad.NamedFactors.Count);
            Assert.Equal("", bad.ExpectedRevision);
        }

        [Fact]
        public void ServiceErrorsCarryTheirReasonAndField()
        {
            var e = UtilitydException.FromError(new Error
            {
                Code = ErrorCode.ResourceExhausted, Reason = ErrorReason.Overloaded, Message = "full", Field = "agents",
            });
            Assert.Equal(StatusCode.ResourceExhausted, e.Code);
            Assert.True(e.IsOverloaded);
            Assert.False(e.IsStaleRevision);
            Assert.Equal("agents", e.Field);
        }

        [Fact]
        public async Task DecidesAndStreamsAgainstARealReplica()
        {
            using var server = new Server();
            await using var c = Connect(server.Address);
            var req = Batch(Forager("f1", 0.9f, 0.05f));
            var info = new CallInfo();
            var resp = await c.DecideAsync(req, default, info);
            Assert.Equal("eat", resp.Decisions[0].Action);
            Assert.Equal(1, info.Attempts);
            Assert.Equal(server.Address, info.Replica);
            Assert.Empty(req.Agents[0].Factors); // the caller's request is not packed in place

            var stream = c.OpenStream(new StreamOptions { MaxInFlight = 4 });
            const int n = 50;
            var pending = Enumerable.Range(0, n)
                .Select(i => stream.DecideAsync(Batch(Forager("f" + i, 0.1f, 0.9f)))).ToList();
            var answers = await Task.WhenAll(pending);
            for (var i = 0; i < n; i++) Assert.Equal("f" + i, answers[i].Decisions[0].AgentId);
            Assert.Equal(n, answers.Select(a => a.RequestId).Distinct().Count());
            var stats = stream.Stats;
            Assert.Equal(n, stats.Batches);
            Assert.Equal(n, stats.Answered);
            Assert.Single(stats.Replicas);
            await stream.CloseAsync();
            var closed = await Assert.ThrowsAsync<UtilitydException>(() => stream.DecideAsync(req));
            Assert.Equal(StatusCode.FailedPrecondition, closed.Code);
        }

        [Fact]
        public async Task AnUnknownSetIsTheAgentsErrorNotTheBatchs()
        {
            using var server = new Server();
            await using var c = Connect(server.Address);
            var a = Forager("x", 0.5f, 0.5f);
            a.BehaviourSet = "no_such_set";
            var resp = await c.DecideAsync(Batch(a, Forager("ok", 0.9f, 0)));
            Assert.Equal(ErrorReason.UnknownSet, resp.Decisions[0].Error.Reason);
            Assert.Null(resp.Decisions[1].Error);
        }

        [Fact]
        public async Task ABatchTooLargeIsFinalWithItsReason()
        {
            using var server = new Server("--max_agents_per_request=2");
            await using var c = Connect(server.Address);
            var info = new CallInfo();
            var e = await Assert.ThrowsAsync<UtilitydException>(() =>
                c.DecideAsync(Batch(Forager("a", 0, 0), Forager("b", 0, 0), Forager("c", 0, 0)), default, info));
            Assert.Equal(StatusCode.ResourceExhausted, e.Code);
            Assert.Equal(1, info.Attempts); // no retry can help
        }

        [Fact]
        public async Task AFrozenReplicaCostsABatchOneAttemptDeadline()
        {
            using var a = new Server();
            using var b = new Server();
            await using var c = Connect(a.Address + "," + b.Address);
            await using var stream = c.OpenStream();
            for (var i = 0; i < 4; i++) await c.DecideAsync(Batch(Forager("warm" + i, 0.9f, 0)));
            a.Signal("STOP");
            try
            {
                for (var i = 0; i < 10; i++)
                {
                    var unary = new CallInfo();
                    var streamed = new CallInfo();
                    await c.DecideAsync(Batch(Forager("u" + i, 0.9f, 0)), default, unary);
                    await stream.DecideAsync(Batch(Forager("s" + i, 0.9f, 0)), default, streamed);
                    Assert.Equal(b.Address, unary.Replica);
                    Assert.Equal(b.Address, streamed.Replica);
                    Assert.InRange(unary.Attempts, 1, 2);
                    Assert.InRange(streamed.Attempts, 1, 2);
                }
                var frozen = c.Replicas.Single(r => r.Address == a.Address);
                Assert.True(frozen.Ejected);
                Assert.Contains("attempt deadline", frozen.Why);
            }
            finally
            {
                a.Signal("CONT");
            }
            // Once it answers a probe it is admitted again.
            var sw = Stopwatch.StartNew();
            while (c.Replicas.Single(r => r.Address == a.Address).Ejected && sw.Elapsed < TimeSpan.FromSeconds(10))
            {
                await Task.Delay(20);
            }
            Assert.False(c.Replicas.Single(r => r.Address == a.Address).Ejected);
        }

        [Fact]
        public async Task NoReplicaAnsweringSettlesWithEachReplicaNamed()
        {
            await using var c = UtilitydClient.Connect(new ClientOptions { Target = "127.0.0.1:1,127.0.0.1:2" });
            var e = await Assert.ThrowsAsync<UtilitydException>(() => c.DecideAsync(Batch(Forager("f", 0, 0))));
            Assert.True(StatusCode.Unavailable == e.Code, e.Message);
            Assert.True(e.Message.Contains("127.0.0.1:2"), e.Attempts + " " + e.Message);
            Assert.Contains("127.0.0.1:1", e.Message);
            Assert.Contains("127.0.0.1:2", e.Message);
            Assert.InRange(e.Attempts, 2, 3);
        }

        [Fact]
        public async Task CancellationStopsTheCallersWait()
        {
            using var server = new Server();
            // Attempts and the batch outlast the cancellation by seconds:
            // under load the 30 ms timer can fire late, and only the
            // cancellation may end this wait (with the defaults a 50 ms
            // attempt deadline could settle the batch first).
            await using var c = UtilitydClient.Connect(new ClientOptions
            {
                Target = server.Address,
                BatchDeadline = TimeSpan.FromSeconds(10),
                Deadline = TimeSpan.FromSeconds(20),
            });
            using (var ready = new CancellationTokenSource(TimeSpan.FromSeconds(10)))
            {
                await c.WaitForReadyAsync(ready.Token);
            }
            server.Signal("STOP");
            try
            {
                using var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(30));
                var e = await Assert.ThrowsAsync<UtilitydException>(() => c.DecideAsync(Batch(Forager("f", 0, 0)), cts.Token));
                Assert.Equal(StatusCode.Cancelled, e.Code);
            }
            finally
            {
                server.Signal("CONT");
            }
        }

        /// <summary>The netstandard2.1 path (Unity): the caller's handler
        /// factory makes each replica's HTTP/2 handler.</summary>
        [Fact]
        public async Task AHandlerFactoryMakesEachReplicasHandler()
        {
            using var a = new Server();
            using var b = new Server();
            var made = 0;
            await using var c = UtilitydClient.Connect(new ClientOptions
            {
                Target = a.Address + "," + b.Address,
                HttpHandlerFactory = () =>
                {
                    Interlocked.Increment(ref made);
                    return new System.Net.Http.SocketsHttpHandler();
                },
            });
            Assert.Equal(2, made);
            for (var i = 0; i < 4; i++)
            {
                var resp = await c.DecideAsync(Batch(Forager("f" + i, 0.9f, 0)));
                Assert.Equal("eat", resp.Decisions[0].Action);
            }
            Assert.All(c.Replicas, r => Assert.True(r.Answered > 0, r.Address + " answered nothing"));
        }

        [Fact]
        public async Task ANameIsResolvedIntoReplicas()
        {
            using var server = new Server();
            var port = server.Address.Split(':')[1];
            await using (var later = UtilitydClient.Connect(new ClientOptions { Target = "dns:///no-such-host.invalid:" + port }))
            {
                Assert.Empty(later.Replicas);
            }
            IPAddress[] local;
            try
            {
                local = Dns.GetHostAddresses("localhost");
            }
            catch (System.Net.Sockets.SocketException)
            {
                return; // no /etc/hosts here
            }
            if (local.Length == 0) return;
            await using var c = UtilitydClient.Connect(new ClientOptions { Target = "dns:///localhost:" + port });
            Assert.Contains(c.Replicas, r => r.Address == server.Address);
            var resp = await c.DecideAsync(Batch(Forager("f", 0.9f, 0)));
            Assert.Null(resp.Decisions[0].Error);
        }
    }
}
