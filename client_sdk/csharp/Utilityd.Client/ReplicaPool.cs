using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Grpc.Core;
using Grpc.Health.V1;
using Grpc.Net.Client;
using Utilityd.V1;

namespace Utilityd.Client
{
    /// <summary>A monotonic clock for deadlines and holds.</summary>
    internal static class Clock
    {
        private static readonly Stopwatch Watch = Stopwatch.StartNew();

        public static TimeSpan Now => Watch.Elapsed;
    }

    /// <summary>One replica: an address and a channel of its own.</summary>
    internal sealed class Replica
    {
        public Replica(string address, GrpcChannel channel)
        {
            Address = address;
            Channel = channel;
            Stub = new DecisionService.DecisionServiceClient(channel);
            Health = new Health.HealthClient(channel);
        }

        public string Address { get; }
        public GrpcChannel Channel { get; }
        public DecisionService.DecisionServiceClient Stub { get; }
        public Health.HealthClient Health { get; }

        // The pool's view of it, guarded by the pool's lock.
        public bool Ejected;
        public TimeSpan EjectedAt;
        public string Why = "";
        public int Strikes; // consecutive failed probes
        public TimeSpan NextProbe;
        public bool Probing;
        public TimeSpan PushedBackUntil;
        public int Refusals; // overload refusals since its last answer
        public ulong Answered;
    }

    /// <summary>Where the next attempt goes, and when it may be sent.</summary>
    internal readonly struct Pick
    {
        public Pick(Replica? replica, TimeSpan notBefore)
        {
            Replica = replica;
            NotBefore = notBefore;
        }

        public Replica? Replica { get; }
        public TimeSpan NotBefore { get; }
    }

    /// <summary>
    /// The fleet: a channel per replica, ejection until a probe answers,
    /// pushback holds, the retry budget, names looked up again.
    /// </summary>
    internal sealed class ReplicaPool : IDisposable
    {
        private const string HealthService = "utilityd.v1.DecisionService";
        private static readonly TimeSpan ProbeTick = TimeSpan.FromMilliseconds(20);
        private static readonly TimeSpan MaxProbeBackoff = TimeSpan.FromSeconds(1);

        private readonly object _mu = new object();
        private readonly CancellationTokenSource _stop = new CancellationTokenSource();
        private readonly Task _probeLoop;
        private readonly List<Task> _probes = new List<Task>();
        private List<Replica> _replicas = new List<Replica>();
        private int _next;
        private bool _closed;
        private string _host = ""; // a name to look up again ("" for addresses)
        private double _budget;

        public ReplicaPool(ClientOptions opts)
        {
            Options = opts;
            _budget = opts.RetryBudgetReserve;
            Resolve(true);
            _probeLoop = Task.Run(ProbeLoop);
        }

        public ClientOptions Options { get; }

        /// <summary>Stops probing, waits for the probes to end (they are
        /// cancelled) and closes every channel. Idempotent.</summary>
        public async Task DisposeAsync()
        {
            List<Replica> replicas;
            lock (_mu)
            {
                if (_closed) return;
                _closed = true;
                replicas = _replicas;
            }
            _stop.Cancel();
            await _probeLoop.ConfigureAwait(false); // it ends on cancellation
            Task[] probes;
            lock (_mu) probes = _probes.ToArray();
            await Task.WhenAll(probes).ConfigureAwait(false); // a probe catches its own failures
            foreach (var r in replicas) r.Channel.Dispose();
            _stop.Dispose();
        }

        public void Dispose() => DisposeAsync().GetAwaiter().GetResult();

        // --- the retry budget ----------------------------------------------

        public void Deposit()
        {
            lock (_mu) _budget = Math.Min(Options.RetryBudgetReserve, _budget + Options.RetryBudgetRatio);
        }

        public bool Withdraw()
        {
            lock (_mu)
            {
                if (_budget < 1) return false;
                _budget--;
                return true;
            }
        }

        // --- replicas --------------------------------------------------------

        private GrpcChannel Dial(string address)
        {
            var scheme = Options.Tls != null ? "https" : "http";
            var channelOptions = new GrpcChannelOptions
            {
                MaxReceiveMessageSize = Options.MaxMessageBytes,
                MaxSendMessageSize = Options.MaxMessageBytes,
                // Deadlines, not gRPC's retries, decide when to try another
                // replica.
                MaxRetryAttempts = 0,
                DisposeHttpClient = true,
            };
            if (Options.HttpHandlerFactory != null)
            {
                channelOptions.HttpHandler = Options.HttpHandlerFactory();
            }
            else
            {
#if NET
                channelOptions.HttpHandler = Transport.Handler(Options, HostOf(address));
                // A replica that comes back is connected again within half a
                // second (gRPC's default backoff starts at a second).
                channelOptions.InitialReconnectBackoff = TimeSpan.FromMilliseconds(100);
                channelOptions.MaxReconnectBackoff = TimeSpan.FromMilliseconds(500);
#else
                throw new UtilitydException(StatusCode.InvalidArgument,
                    "HttpHandlerFactory: this framework has no HTTP/2 handler of its own; pass one",
                    ErrorReason.Unspecified, "HttpHandlerFactory");
#endif
            }
            var channel = GrpcChannel.ForAddress($"{scheme}://{address}", channelOptions);
#if NET
            if (Options.HttpHandlerFactory == null)
            {
                // Connected in the background now, not by the first batch.
                _ = channel.ConnectAsync(_stop.Token).ContinueWith(t => _ = t.Exception, TaskScheduler.Default);
            }
#endif
            return channel;
        }

        /// <summary>Whether the replica's channel is failing to connect (a
        /// batch would fail at once).</summary>
        private static bool Failing(Replica r)
        {
#if NET
            return r.Channel.State == ConnectivityState.TransientFailure;
#else
            return false;
#endif
        }

        private static string HostOf(string address)
        {
            var colon = address.LastIndexOf(':');
            var host = colon > 0 ? address.Substring(0, colon) : address;
            return host.Trim('[', ']');
        }

        private static UtilitydException BadTarget(string message) =>
            new UtilitydException(StatusCode.InvalidArgument, "target: " + message, ErrorReason.Unspecified, "target");

        /// <summary>Splits "host:port" ("[v6]:port" too); false when it is not.</summary>
        internal static bool SplitHostPort(string item, out string host, out int port)
        {
            host = "";
            port = 0;
            var colon = item.LastIndexOf(':');
            if (colon <= 0 || colon == item.Length - 1) return false;
            host = item.Substring(0, colon);
            if (host.StartsWith("[", StringComparison.Ordinal))
            {
                if (!host.EndsWith("]", StringComparison.Ordinal)) return false;
                host = host.Substring(1, host.Length - 2);
            }
            else if (host.Contains(':'))
            {
                return false; // an IPv6 address needs its brackets
            }
            return host.Length > 0 && int.TryParse(item.Substring(colon + 1), out port) && port > 0 && port < 65536;
        }

        private static string JoinHostPort(IPAddress ip, int port) =>
            ip.AddressFamily == AddressFamily.InterNetworkV6 ? $"[{ip}]:{port}" : $"{ip}:{port}";

        /// <summary>Turns the target into replicas; known addresses keep their
        /// channel and state, ones gone from DNS are closed.</summary>
        private void Resolve(bool first)
        {
            var target = Options.Target.Trim();
            if (target.Length == 0) throw BadTarget("is empty");
            foreach (var prefix in new[] { "dns:///", "dns:" })
            {
                if (target.StartsWith(prefix, StringComparison.Ordinal))
                {
                    target = target.Substring(prefix.Length);
                    break;
                }
            }
            var addresses = new List<string>();
            foreach (var raw in target.Split(','))
            {
                var item = raw.Trim();
                if (item.Length == 0) continue;
                if (!SplitHostPort(item, out var host, out var port))
                    throw BadTarget($"\"{item}\" is not host:port");
                if (IPAddress.TryParse(host, out var ip))
                {
                    addresses.Add(JoinHostPort(ip, port));
                    continue;
                }
                _host = host;
                try
                {
                    addresses.AddRange(Dns.GetHostAddresses(host).Select(a => JoinHostPort(a, port)));
                }
                catch (SocketException)
                {
                    // Not yet: looked up again every ResolveInterval.
                }
            }
            Dictionary<string, Replica> known;
            lock (_mu) known = _replicas.ToDictionary(r => r.Address);
            var fresh = new List<Replica>();
            foreach (var a in addresses.Distinct())
            {
                if (known.TryGetValue(a, out var kept))
                {
                    fresh.Add(kept);
                    known.Remove(a);
                    continue;
                }
                fresh.Add(new Replica(a, Dial(a)));
            }
            if (first && fresh.Count == 0 && _host.Length == 0) throw BadTarget("names no replica");
            lock (_mu)
            {
                _replicas = fresh;
                if (_next >= fresh.Count) _next = 0;
            }
            foreach (var gone in known.Values) gone.Channel.Dispose();
        }

        /// <summary>
        /// Where an attempt goes, skipping <paramref name="busy"/>: round robin
        /// over admitted replicas; else the one whose pushback ends first;
        /// else the longest ejected. No replica when all are busy.
        /// </summary>
        public Pick Next(IReadOnlyCollection<Replica>? busy)
        {
            var now = Clock.Now;
            List<Replica> replicas;
            lock (_mu) replicas = _replicas;
            // Read outside the lock: a channel's state takes the channel's own.
            var failing = new bool[replicas.Count];
            for (var i = 0; i < replicas.Count; i++) failing[i] = Failing(replicas[i]);
            lock (_mu)
            {
                var n = _replicas.Count;
                for (var k = 0; k < n; k++)
                {
                    var at = (_next + k) % n;
                    var r = _replicas[at];
                    if (r.Ejected || (busy != null && busy.Contains(r)) || r.PushedBackUntil > now ||
                        (ReferenceEquals(replicas, _replicas) && failing[at]))
                    {
                        continue;
                    }
                    _next = (_next + k + 1) % n;
                    return new Pick(r, TimeSpan.Zero);
                }
                Replica? best = null;
                foreach (var r in _replicas)
                {
                    if ((busy != null && busy.Contains(r)) || r.Ejected || r.PushedBackUntil <= now) continue;
                    if (best == null || r.PushedBackUntil < best.PushedBackUntil) best = r;
                }
                if (best != null) return new Pick(best, best.PushedBackUntil);
                foreach (var r in _replicas)
                {
                    if (busy != null && busy.Contains(r)) continue;
                    if (best == null || (r.Ejected && best.Ejected && r.EjectedAt < best.EjectedAt) ||
                        (!r.Ejected && best.Ejected))
                    {
                        best = r;
                    }
                }
                return new Pick(best, TimeSpan.Zero);
            }
        }

        /// <summary>As <see cref="Next"/>, preferring a replica the batch has
        /// not tried yet (when every replica is ejected, a retry goes to
        /// another one, not again to the longest ejected).</summary>
        public Pick NextUntried(List<Replica> busy, List<Replica> tried)
        {
            if (tried.Count > busy.Count)
            {
                var pick = Next(tried);
                if (pick.Replica != null) return pick;
            }
            return Next(busy);
        }

        /// <summary>Re-admits a replica that gave an answer.</summary>
        public void OnAnswered(Replica r)
        {
            lock (_mu)
            {
                r.Answered++;
                r.Ejected = false;
                r.Strikes = 0;
                r.Refusals = 0;
            }
        }

        /// <summary>Avoids a replica until a health probe answers SERVING.</summary>
        public void Eject(Replica r, string why)
        {
            var now = Clock.Now;
            lock (_mu)
            {
                if (r.Ejected) return;
                r.Ejected = true;
                r.EjectedAt = now;
                r.Why = why;
                r.NextProbe = now + Options.BatchDeadline;
            }
        }

        /// <summary>Holds back a replica that refused for overload: no attempt
        /// before the hint, doubled with each refusal in a row, up to a second.</summary>
        public void PushBack(Replica r, TimeSpan after)
        {
            lock (_mu)
            {
                var hold = TimeSpan.FromTicks(after.Ticks << Math.Min(r.Refusals, 10));
                if (hold > MaxProbeBackoff) hold = MaxProbeBackoff;
                if (hold < after) hold = after;
                r.Refusals++;
                var until = Clock.Now + hold;
                if (until > r.PushedBackUntil) r.PushedBackUntil = until;
            }
        }

        public ReplicaState[] States()
        {
            lock (_mu)
            {
                return _replicas.Select(r => new ReplicaState(r.Address, r.Ejected, r.Ejected ? r.Why : "", r.Answered))
                                .ToArray();
            }
        }

        // --- probes ----------------------------------------------------------

        private async Task Probe(Replica r)
        {
            var serving = false;
            var answered = false;
            try
            {
                // A connection still being made is given the probe's whole
                // deadline.
                var options = new CallOptions(deadline: DateTime.UtcNow + Options.BatchDeadline,
                                              cancellationToken: _stop.Token).WithWaitForReady(true);
                var resp = await r.Health.CheckAsync(new HealthCheckRequest { Service = HealthService }, options)
                                  .ConfigureAwait(false);
                answered = true;
                serving = resp.Status == HealthCheckResponse.Types.ServingStatus.Serving;
            }
            catch (Exception e) when (e is RpcException || e is OperationCanceledException)
            {
                // Unanswered (or the pool closing): backed off below.
            }
            var now = Clock.Now;
            lock (_mu)
            {
                r.Probing = false;
                if (serving)
                {
                    r.Ejected = false;
                    r.Strikes = 0;
                    return;
                }
                if (answered)
                {
                    // Up, not serving yet (loading its sets): it will be soon.
                    r.NextProbe = now + Options.BatchDeadline;
                    return;
                }
                r.Strikes++;
                var wait = TimeSpan.FromTicks(Options.BatchDeadline.Ticks << Math.Min(r.Strikes, 6));
                r.NextProbe = now + (wait > MaxProbeBackoff ? MaxProbeBackoff : wait);
            }
        }

        private async Task ProbeLoop()
        {
            var nextResolve = Clock.Now + Options.ResolveInterval;
            while (!_stop.IsCancellationRequested)
            {
                try
                {
                    await Task.Delay(ProbeTick, _stop.Token).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    return;
                }
                var now = Clock.Now;
                var due = new List<Replica>();
                lock (_mu)
                {
                    _probes.RemoveAll(t => t.IsCompleted);
                    foreach (var r in _replicas)
                    {
                        if (!r.Ejected || r.Probing || r.NextProbe > now) continue;
                        r.Probing = true;
                        due.Add(r);
                    }
                }
                // Started outside the lock: starting a call may wait on the
                // channel's own locks.
                foreach (var r in due)
                {
                    var probe = Task.Run(() => Probe(r));
                    lock (_mu) _probes.Add(probe);
                }
                if (_host.Length > 0 && now >= nextResolve)
                {
                    try
                    {
                        Resolve(false);
                    }
                    catch (UtilitydException)
                    {
                        // A failed look-up keeps the replicas known.
                    }
                    nextResolve = Clock.Now + Options.ResolveInterval;
                }
            }
        }

        /// <summary>Returns once some replica answers a health check SERVING.</summary>
        public async Task WaitForReadyAsync(CancellationToken ct)
        {
            var last = new List<string>();
            while (true)
            {
                List<Replica> replicas;
                lock (_mu) replicas = new List<Replica>(_replicas);
                last.Clear();
                foreach (var r in replicas)
                {
                    string why;
                    try
                    {
                        var resp = await r.Health.CheckAsync(new HealthCheckRequest { Service = HealthService },
                            deadline: DateTime.UtcNow.AddMilliseconds(200), cancellationToken: ct).ConfigureAwait(false);
                        if (resp.Status == HealthCheckResponse.Types.ServingStatus.Serving)
                        {
                            OnAnswered(r);
                            return;
                        }
                        why = "not serving";
                    }
                    catch (RpcException e) when (!ct.IsCancellationRequested)
                    {
                        why = e.Status.Detail;
                    }
                    catch (RpcException)
                    {
                        why = "cancelled";
                    }
                    last.Add(r.Address + ": " + why);
                }
                try
                {
                    await Task.Delay(50, ct).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    throw new UtilitydException(StatusCode.Unavailable, "no replica ready (" + string.Join("; ", last) + ")");
                }
            }
        }
    }
}
