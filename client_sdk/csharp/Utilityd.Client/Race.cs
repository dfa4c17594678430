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
            var o = p.Options;
            using var all = CancellationTokenSource.CreateLinkedTokenSource(ct);
            all.CancelAfter(o.Deadline);
            var deadline = DateTime.UtcNow + o.Deadline;
            var running = new List<Task<Outcome<T>>>();
            var busy = new List<Replica>();
            var tried = new List<Replica>();
            var failures = new List<string>();
            var lastCode = StatusCode.Unavailable;
            var launched = 0;
            Replica? latest = null;
            var hedgeAt = TimeSpan.Zero; // zero: no hedge due
            Replica? queued = null;
            var queuedAt = TimeSpan.Zero;

            void Launch(Replica r)
            {
                launched++;
                busy.Add(r);
                tried.Add(r);
                latest = r;
                hedgeAt = Clock.Now + o.BatchDeadline;
                running.Add(Attempt(r, call, new CallOptions(deadline: deadline, cancellationToken: all.Token)));
            }

            T Done(T value, int attempts, string replica)
            {
                info?.CopyFrom(attempts, replica);
                return value;
            }

            UtilitydException Fail(UtilitydException e)
            {
                info?.CopyFrom(launched, e.Replica);
                e.Attempts = launched;
                return e;
            }

            p.Deposit();
            var first = p.Next(null);
            if (first.Replica == null)
            {
                throw Fail(new UtilitydException(StatusCode.Unavailable, $"{method}: no replica for target {o.Target}"));
            }
            if (first.NotBefore > Clock.Now)
            {
                queued = first.Replica;
                queuedAt = first.NotBefore;
            }
            else
            {
                Launch(first.Replica);
            }
            try
            {
                while (true)
                {
                    using var wait = CancellationTokenSource.CreateLinkedTokenSource(all.Token);
                    var waits = new List<Task>(running);
                    Task? timer = null;
                    var due = queued != null ? queuedAt : hedgeAt;
                    if (queued != null || hedgeAt != TimeSpan.Zero)
                    {
                        var left = due - Clock.Now;
                        timer = Task.Delay(left > TimeSpan.Zero ? left : TimeSpan.Zero, wait.Token);
                        waits.Add(timer);
                    }
                    var deadlineTask = Task.Delay(Timeout.Infinite, all.Token);
                    waits.Add(deadlineTask);
                    var finished = await Task.WhenAny(waits).ConfigureAwait(false);
                    wait.Cancel();
                    var retry = false;
                    if (finished != deadlineTask && finished != timer &&
                        ((Task<Outcome<T>>)finished).Result.Error == null)
                    {
                        var answer = ((Task<Outcome<T>>)finished).Result;
                        p.OnAnswered(answer.Replica);
                        return Done(answer.Value, launched, answer.Replica.Address);
                    }
                    if (all.IsCancellationRequested)
                    {
                        if (ct.IsCancellationRequested)
                        {
                            throw Fail(new UtilitydException(StatusCode.Cancelled, $"{method}: cancelled by the caller"));
                        }
                        throw Fail(Exhausted(method, StatusCode.DeadlineExceeded, failures, o.Deadline, true, launched));
                    }
                    if (finished == timer)
                    {
                        if (queued != null)
                        {
                            var r = queued;
                            queued = null;
                            Launch(r);
                            continue;
                        }
                        hedgeAt = TimeSpan.Zero;
                        var limit = Format(o.BatchDeadline);
                        p.Eject(latest!, "missed the attempt deadline of " + limit);
                        failures.Add(latest!.Address + ": no answer within " + limit);
                        retry = true;
                    }
                    else
                    {
                        var outcome = ((Task<Outcome<T>>)finished).Result;
                        running.Remove((Task<Outcome<T>>)finished);
                        busy.Remove(outcome.Replica);
                        if (outcome.Replica == latest) hedgeAt = TimeSpan.Zero;
                        var e = outcome.Error!;
                        if (e.StatusCode != StatusCode.Cancelled && e.StatusCode != StatusCode.DeadlineExceeded)
                        {
                            lastCode = e.StatusCode;
                            failures.Add(outcome.Replica.Address + ": " + e.Status.Detail);
                            switch (OnFailure(p, outcome.Replica, e.StatusCode, e.Status.Detail, PushbackOf(e.Trailers)))
                            {
                                case AfterFailure.Final:
                                    var final = UtilitydException.FromRpc(e);
                                    final.Replica = outcome.Replica.Address;
                                    throw Fail(final);
                                case AfterFailure.Retry:
                                    retry = true;
                                    break;
                            }
                        }
                    }
                    if (retry && queued == null && launched < o.MaxAttempts && p.Withdraw())
                    {
                        var pk = p.NextUntried(busy, tried);
                        if (pk.Replica != null)
                        {
                            if (pk.NotBefore > Clock.Now)
                            {
                                queued = pk.Replica;
                                queuedAt = pk.NotBefore;
                            }
                            else
                            {
                                Launch(pk.Replica);
                            }
                        }
                    }
                    if (queued == null && running.Count == 0)
                    {
                        throw Fail(Exhausted(method, lastCode, failures, o.Deadline, false, launched));
                    }
                }
            }
            finally
            {
                all.Cancel(); // ends every attempt still running
            }
        }
    }
}
