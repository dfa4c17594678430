using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Grpc.Core;

namespace Utilityd.Client
{
    /// <summary>What to do after an attempt failed.</summary>
    internal enum AfterFailure
    {
        Retry,
        Final,
        Nothing,
    }

    /// <summary>One unary call raced by the contract.</summary>
    internal static class Race
    {
        /// <summary>
        /// Classifies a failed attempt and tells the pool: overload with a
        /// hint holds the replica back and retries elsewhere; a replica down
        /// or draining is ejected and the batch retried; anything else is
        /// final. <paramref name="retryAfterMs"/> &lt; 0: no hint.
        /// </summary>
        public static AfterFailure OnFailure(ReplicaPool p, Replica r, StatusCode code, string message, long retryAfterMs)
        {
            switch (code)
            {
                case StatusCode.ResourceExhausted:
                    if (retryAfterMs < 0) return AfterFailure.Final; // no retry can help (a batch too large)
                    p.PushBack(r, TimeSpan.FromMilliseconds(retryAfterMs));
                    return AfterFailure.Retry;
                case StatusCode.Unavailable:
                    p.Eject(r, message);
                    return AfterFailure.Retry;
                case StatusCode.Cancelled:
                case StatusCode.DeadlineExceeded:
                    return AfterFailure.Nothing;
                default:
                    return AfterFailure.Final;
            }
        }

        /// <summary>The error of a batch no attempt answered, each replica
        /// named once with what it said last.</summary>
        public static UtilitydException Exhausted(string method, StatusCode code, List<string> failures,
                                                  TimeSpan deadline, bool timedOut, int attempts)
        {
            var what = timedOut ? $"{method}: no answer within {Format(deadline)}" : $"{method}: no replica answered";
            if (failures.Count > 0) what += " (" + string.Join("; ", OnceEach(failures)) + ")";
            return new UtilitydException(code, what) { Attempts = attempts };
        }

        /// <summary>A duration as the other SDKs print it: "50ms", "2s".</summary>
        public static string Format(TimeSpan t) =>
            t.TotalMilliseconds % 1000 == 0 ? $"{t.TotalSeconds:0}s" : $"{t.TotalMilliseconds:0.###}ms";

        /// <summary>Keeps each replica's last failure, in the order replicas
        /// first failed.</summary>
        private static List<string> OnceEach(List<string> failures)
        {
            var last = new Dictionary<string, int>();
            var order = new List<string>();
            for (var i = 0; i < failures.Count; i++)
            {
                var f = failures[i];
                var k = f.IndexOf(": ", StringComparison.Ordinal);
                var replica = k >= 0 ? f.Substring(0, k) : f;
                if (!last.ContainsKey(replica)) order.Add(replica);
                last[replica] = i;
            }
            var result = new List<string>(order.Count);
            foreach (var r in order) result.Add(failures[last[r]]);
            return result;
        }

        /// <summary>The grpc-retry-pushback-ms hint of a failed call, or -1.</summary>
        public static long PushbackOf(Metadata? trailers)
        {
            var v = trailers?.GetValue("grpc-retry-pushback-ms");
            return v != null && long.TryParse(v, out var ms) ? ms : -1;
        }

        private readonly struct Outcome<T>
        {
            public Outcome(Replica replica, T value, RpcException? error)
            {
                Replica = replica;
                Value = value;
                Error = error;
            }

            public Replica Replica { get; }
            public T Value { get; }
            public RpcException? Error { get; }
        }

        private static async Task<Outcome<T>> Attempt<T>(Replica r, Func<Replica, CallOptions, Task<T>> call,
                                                         CallOptions options)
        {
            try
            {
                return new Outcome<T>(r, await call(r, options).ConfigureAwait(false), null);
            }
            catch (RpcException e)
            {
                return new Outcome<T>(r, default!, e);
            }
            catch (OperationCanceledException e)
            {
                return new Outcome<T>(r, default!, new RpcException(new Status(StatusCode.Cancelled, "cancelled", e)));
            }
        }

        /// <summary>
        /// Runs one unary call by the contract: the first attempt on the next
        /// replica; past the attempt deadline its replica is ejected and the
        /// call raced on another (the first answer wins, the rest are
        /// cancelled); refusals for overload or unavailability retried on
        /// another replica after the hint, within max attempts and the
        /// retry budget.
        /// </summary>
        public static async Task<T> Run<T>(ReplicaPool p, string method, Func<Replica, CallOptions, Task<T>> call,
                                           CallInfo? info, CancellationToken ct)
        {
            using var race = new UnaryRace<T>(p, method, call, ct);
            try
            {
                var (value, replica) = await race.RunAsync().ConfigureAwait(false);
                info?.CopyFrom(race.Launched, replica);
                return value;
            }
            catch (UtilitydException e)
            {
                e.Attempts = race.Launched;
                info?.CopyFrom(race.Launched, e.Replica);
                throw;
            }
        }

        /// <summary>The state of one raced unary call.</summary>
        private sealed class UnaryRace<T> : IDisposable
        {
            private readonly ReplicaPool _p;
            private readonly ClientOptions _o;
            private readonly string _method;
            private readonly Func<Replica, CallOptions, Task<T>> _call;
            private readonly CancellationToken _caller;
            private readonly CancellationTokenSource _all;
            private readonly DateTime _deadline;
            private readonly List<Task<Outcome<T>>> _running = new List<Task<Outcome<T>>>();
            private readonly List<Replica> _busy = new List<Replica>();
            private readonly List<Replica> _tried = new List<Replica>();
            private readonly List<string> _failures = new List<string>();
            private StatusCode _lastCode = StatusCode.Unavailable;
            private Replica? _latest;
            private TimeSpan _hedgeAt; // zero: no hedge due
            private Replica? _queued;  // an attempt waiting for its replica's pushback
            private TimeSpan _queuedAt;

            public UnaryRace(ReplicaPool p, string method, Func<Replica, CallOptions, Task<T>> call, CancellationToken ct)
            {
                _p = p;
                _o = p.Options;
                _method = method;
                _call = call;
                _caller = ct;
                _all = CancellationTokenSource.CreateLinkedTokenSource(ct);
                _all.CancelAfter(_o.Deadline);
                _deadline = DateTime.UtcNow + _o.Deadline;
            }

            public int Launched { get; private set; }

            public void Dispose()
            {
                _all.Cancel(); // ends every attempt still running
                _all.Dispose();
            }

            private void Launch(Replica r)
            {
                Launched++;
                _busy.Add(r);
                _tried.Add(r);
                _latest = r;
                _hedgeAt = Clock.Now + _o.BatchDeadline;
                _running.Add(Attempt(r, _call, new CallOptions(deadline: _deadline, cancellationToken: _all.Token)));
            }

            /// <summary>Sends now, or queues until the replica's pushback ends.</summary>
            private void Start(Pick pick)
            {
                if (pick.NotBefore > Clock.Now)
                {
                    _queued = pick.Replica;
                    _queuedAt = pick.NotBefore;
                }
                else
                {
                    Launch(pick.Replica!);
                }
            }

            public async Task<(T, string)> RunAsync()
            {
                _p.Deposit();
                var first = _p.Next(null);
                if (first.Replica == null)
                {
                    throw new UtilitydException(StatusCode.Unavailable, $"{_method}: no replica for target {_o.Target}");
                }
                Start(first);
                while (true)
                {
                    using var wait = CancellationTokenSource.CreateLinkedTokenSource(_all.Token);
                    var waits = new List<Task>(_running);
                    Task? timer = null;
                    if (_queued != null || _hedgeAt != TimeSpan.Zero)
                    {
                        var left = (_queued != null ? _queuedAt : _hedgeAt) - Clock.Now;
                        timer = Task.Delay(left > TimeSpan.Zero ? left : TimeSpan.Zero, wait.Token);
                        waits.Add(timer);
                    }
                    var deadline = Task.Delay(Timeout.Infinite, _all.Token);
                    waits.Add(deadline);
                    var finished = await Task.WhenAny(waits).ConfigureAwait(false);
                    wait.Cancel();
                    if (finished != deadline && finished != timer)
                    {
                        var outcome = ((Task<Outcome<T>>)finished).Result;
                        if (outcome.Error == null)
                        {
                            _p.OnAnswered(outcome.Replica);
                            return (outcome.Value, outcome.Replica.Address);
                        }
                    }
                    if (_all.IsCancellationRequested) throw TimedOut();
                    var retry = finished == timer ? OnTimer() : OnFailure((Task<Outcome<T>>)finished);
                    if (retry) RetryElsewhere();
                    if (_queued == null && _running.Count == 0)
                    {
                        throw Exhausted(_method, _lastCode, _failures, _o.Deadline, false, Launched);
                    }
                }
            }

            private UtilitydException TimedOut() => _caller.IsCancellationRequested
                ? new UtilitydException(StatusCode.Cancelled, $"{_method}: cancelled by the caller")
                : Exhausted(_method, StatusCode.DeadlineExceeded, _failures, _o.Deadline, true, Launched);

            /// <summary>The queued attempt is due, or the latest attempt missed
            /// its deadline (its replica is ejected). True: try elsewhere.</summary>
            private bool OnTimer()
            {
                if (_queued != null)
                {
                    var r = _queued;
                    _queued = null;
                    Launch(r);
                    return false;
                }
                _hedgeAt = TimeSpan.Zero;
                var limit = Format(_o.BatchDeadline);
                _p.Eject(_latest!, "missed the attempt deadline of " + limit);
                _failures.Add(_latest!.Address + ": no answer within " + limit);
                return true;
            }

            /// <summary>An attempt failed. True: try elsewhere; throws when no
            /// retry can help.</summary>
            private bool OnFailure(Task<Outcome<T>> finished)
            {
                var outcome = finished.Result;
                _running.Remove(finished);
                _busy.Remove(outcome.Replica);
                if (outcome.Replica == _latest) _hedgeAt = TimeSpan.Zero;
                var e = outcome.Error!;
                if (e.StatusCode == StatusCode.Cancelled || e.StatusCode == StatusCode.DeadlineExceeded) return false;
                _lastCode = e.StatusCode;
                _failures.Add(outcome.Replica.Address + ": " + e.Status.Detail);
                switch (Race.OnFailure(_p, outcome.Replica, e.StatusCode, e.Status.Detail, PushbackOf(e.Trailers)))
                {
                    case AfterFailure.Final:
                        var final = UtilitydException.FromRpc(e);
                        final.Replica = outcome.Replica.Address;
                        throw final;
                    case AfterFailure.Retry:
                        return true;
                    default:
                        return false;
                }
            }

            private void RetryElsewhere()
            {
                if (_queued != null || Launched >= _o.MaxAttempts || !_p.Withdraw()) return;
                var pick = _p.NextUntried(_busy, _tried);
                if (pick.Replica != null) Start(pick);
            }
        }
    }
}
