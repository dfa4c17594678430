using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;
using Utilityd.V1;

namespace Utilityd.Client.Tests
{
    /// <summary>A real utilityd on loopback: UTILITYD_BINARY and
    /// UTILITYD_EXAMPLES (the example sets) name them; ctest sets both.</summary>
    public sealed class Server : IDisposable
    {
        private readonly Process _process;
        private readonly string _dir;

        public Server(params string[] flags)
        {
            var binary = Environment.GetEnvironmentVariable("UTILITYD_BINARY");
            var sets = Environment.GetEnvironmentVariable("UTILITYD_EXAMPLES");
            if (string.IsNullOrEmpty(binary) || string.IsNullOrEmpty(sets))
            {
                throw new InvalidOperationException("UTILITYD_BINARY and UTILITYD_EXAMPLES must name the server and the example sets");
            }
            _dir = Path.Combine(Path.GetTempPath(), "utilityd-cs-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(_dir);
            var ports = Path.Combine(_dir, "ports");
            var start = new ProcessStartInfo(binary) { RedirectStandardError = true, RedirectStandardOutput = true };
            foreach (var a in new[] { "--config_dir=" + sets, "--grpc_address=127.0.0.1:0", "--http_address=127.0.0.1:0",
                                      "--port_file=" + ports, "--log_level=warning" })
            {
                start.ArgumentList.Add(a);
            }
            foreach (var f in flags) start.ArgumentList.Add(f);
            _process = Process.Start(start)!;
            _process.OutputDataReceived += (_, _) => { };
            _process.ErrorDataReceived += (_, _) => { };
            _process.BeginOutputReadLine();
            _process.BeginErrorReadLine();
            for (var i = 0; i < 400; i++)
            {
                if (File.Exists(ports))
                {
                    var line = File.ReadAllText(ports).Split('\n')[0].Trim();
                    if (line.Length > 0)
                    {
                        Address = "127.0.0.1:" + line;
                        return;
                    }
                }
                if (_process.HasExited) break;
                Thread.Sleep(25);
            }
            Dispose();
            throw new InvalidOperationException("utilityd did not start");
        }

        public string Address { get; } = "";

        public int Pid => _process.Id;

        public void Dispose()
        {
            try
            {
                if (!_process.HasExited)
                {
                    Signal("CONT");
                    _process.Kill();
                }
                _process.WaitForExit();
            }
            catch (InvalidOperationException)
            {
            }
            try
            {
                Directory.Delete(_dir, true);
            }
            catch (IOException)
            {
            }
        }

        /// <summary>Sends a signal by name (STOP, CONT, KILL, TERM).</summary>
        public void Signal(string name)
        {
            using var kill = Process.Start("kill", $"-{name} {_process.Id}");
            kill.WaitForExit();
        }
    }

    public static class Agents
    {
        /// <summary>
        /// The test host (vstest and xunit's runner) keeps several
        /// thread-pool threads in blocking waits, and on a 2-core machine
        /// the pool starts with 2: the SDK's continuations then queue until
        /// the pool injects a thread, about every half second (seen as an
        /// NPC losing five ticks, with the SDK's own code on no stack). The
        /// SDK never blocks a pool thread; a game server whose own code
        /// does needs the same setting (docs/GAME_SERVERS.md, ".NET").
        /// </summary>
        [ModuleInitializer]
        internal static void RoomForTheTestHost() => ThreadPool.SetMinThreads(16, 16);

        public static AgentSnapshot Forager(string id, float hunger, float danger)
        {
            var a = new AgentSnapshot { AgentId = id, BehaviourSet = "eat_hide_wander" };
            a.NamedFactors.Add(new Dictionary<string, float>
            {
                ["hunger"] = hunger, ["danger"] = danger, ["food_distance"] = 5, ["idle_time"] = 2,
            });
            return a;
        }

        public static DecideRequest Batch(params AgentSnapshot[] agents)
        {
            var r = new DecideRequest();
            r.Agents.Add(agents);
            return r;
        }

        public static UtilitydClient Connect(string target, TimeSpan? deadline = null)
        {
            var c = UtilitydClient.Connect(new ClientOptions { Target = target, Deadline = deadline ?? TimeSpan.Zero });
            using var ready = new CancellationTokenSource(TimeSpan.FromSeconds(10));
            c.WaitForReadyAsync(ready.Token).GetAwaiter().GetResult();
            return c;
        }
    }
}
