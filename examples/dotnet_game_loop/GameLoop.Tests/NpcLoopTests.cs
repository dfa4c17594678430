using System;
using System.Diagnostics;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Utilityd.Client;
using Utilityd.Client.Tests;
using Xunit;
using Xunit.Abstractions;

namespace GameLoop.Tests
{
    public class NpcLoopTests
    {
        private readonly ITestOutputHelper _log;

        public NpcLoopTests(ITestOutputHelper log) => _log = log;

        /// <summary>Two replicas: one frozen for two seconds, then the other
        /// killed. Every NPC of both sets goes on deciding, losing at most
        /// one tick, and the loop never stalls.</summary>
        [Fact]
        public async Task TheLoopRidesOutAFrozenAndAKilledReplica()
        {
            using var a = new Server();
            using var b = new Server();
            var tick = TimeSpan.FromMilliseconds(100);
            await using var client = UtilitydClient.Connect(new ClientOptions { Target = a.Address + "," + b.Address, AiTick = tick });
            using (var ready = new CancellationTokenSource(TimeSpan.FromSeconds(10))) await client.WaitForReadyAsync(ready.Token);
            // Warm up as a server does before its first tick (.NET compiles
            // each method on its first call).
            await new NpcLoop(client, foragers: 2, villagers: 2, tick).RunAsync(3);
            var loop = new NpcLoop(client, foragers: 20, villagers: 10, tick);
            var worst = 0;
            const int ticks = 60;
            var clock = Stopwatch.StartNew();
            await loop.RunAsync(ticks, t =>
            {
                switch (t)
                {
                    case 10: a.Signal("STOP"); break;
                    case 30: a.Signal("CONT"); break;
                    case 40: b.Signal("KILL"); break;
                }
                if (t == 0) return;
                for (var i = 0; i < loop.Npcs.Count; i++) // ticks since each NPC's last decision
                {
                    var gap = t - 1 - loop.Npcs[i].Fresh;
                    if (gap > worst) _log.WriteLine($"tick {t}: {loop.Npcs[i].Id} went {gap} ticks without a decision " +
                                                  $"({loop.Errors} errors, {loop.Skipped} skipped, {loop.LastError}; {loop.Npcs[i].LastError})");
                    worst = Math.Max(worst, gap);
                }
            });
            var elapsed = clock.Elapsed;
            foreach (var n in loop.Npcs)
            {
                Assert.True(n.Fresh >= ticks - 2, $"{n.Id}: last decided at tick {n.Fresh} of {ticks}");
                Assert.NotEqual("", n.Action);
            }
            Assert.Contains(loop.Npcs, n => n.Set == "villager_needs" && n.Action.Length > 0);
            Assert.True(worst <= 1, $"an NPC went {worst} ticks without a decision (at most 1)");
            Assert.True(elapsed < tick * (ticks + 5), $"{ticks} ticks took {elapsed}: the loop stalled");
            _log.WriteLine($"{ticks} ticks, {loop.Npcs.Count} NPCs, {loop.Errors} without an answer, " +
                           $"{loop.Skipped} skipped, worst gap {worst}, {elapsed.TotalSeconds:0.00} s");
        }
    }
}
