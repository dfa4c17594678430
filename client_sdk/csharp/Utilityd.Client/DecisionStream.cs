using System;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Grpc.Core;
using Utilityd.V1;

namespace Utilityd.Client
{
    /// <summary>How a <see cref="DecisionStream"/> behaves.</summary>
    public sealed class StreamOptions
    {
        /// <summary>DecideAsync waits while this many batches are unanswered
        /// (default 8).</summary>
        public int MaxInFlight { get; set; }
    }

    /// <summary>What a stream did, for the game's own metrics.</summary>
    public sealed class StreamStats
    {
        /// <summary>Batches submitted.</summary>
        public long Batches { get; internal set; }
        /// <summary>Batches answered.</summary>
        public long Answered { get; internal set; }
        /// <summary>Batches that settled with an error.</summary>
        public long Failed { get; internal set; }
        /// <summary>Attempts past the attempt deadline.</summary>
        public long DeadlineMisses { get; internal set; }
        /// <summary>Batches sent again after a replica's stream broke.</summary>
        public long Resent { get; internal set; }
        /// <summary>Retries after an overload refusal.</summary>
        public long OverloadRetries { get; internal set; }
        /// <summary>Replica streams that broke while open.</summary>
        public long Reconnects { get; internal set; }
        /// <summary>Replicas with an open DecideStream.</summary>
        public IReadOnlyList<string> Replicas { get; internal set; } = Array.Empty<string>();

        internal StreamStats Copy() => (StreamStats)MemberwiseClone();
    }

    /// <summary>
    /// A long-lived stream of batches over every healthy replica: a
    /// DecideStream per replica, opened when first used, batches round
    /// robin. A batch unanswered within the attempt deadline, or whose
    /// replica's stream breaks, is sent again on another replica's stream;
    /// the first answer wins and each batch settles exactly once.
    /// Thread-safe.
    /// <code>
    /// await using var stream = client.OpenStream();
    /// var response = await stream.DecideAsync(request, ct);
    /// </code>
    /// </summary>
    public sealed class DecisionStream : IAsyncDisposable
    {
        private readonly UtilitydClient _client;
        private readonly ReplicaPool _pool;
        private readonly ClientOptions _o;
        private readonly SemaphoreSlim _room;
        private readonly object _mu = new object();
        private readonly Dictionary<ulong, Batch> _pending = new Dictionary<ulong, Batch>();
        private readonly Dictionary<Replica, ReplicaStream> _subs = new Dictionary<Replica, ReplicaStream>();
        private readonly List<Task> _workers = new List<Task>();
        private readonly SemaphoreSlim _wake = new SemaphoreSlim(0, 1);
        private readonly StreamStats _stats = new StreamStats();
        private readonly Task _timers;
        private ulong _nextId = 1;
        private bool _closing;
        private bool _stopped;

        internal DecisionStream(UtilitydClient client, StreamOptions? options)
        {
            _client = client;
            _pool = client.Pool;
            _o = client.Options;
            var max = options?.MaxInFlight > 0 ? options.MaxInFlight : 8;
            _room = new SemaphoreSlim(max, max);
            _timers = Task.Run(TimersAsync);
        }

        private struct Attempt
        {
            public ReplicaStream? Sub; // null once its stream ended or answered
            public Replica Replica;
        }

        internal sealed class Settled
        {
            public DecideResponse? Response;
            public UtilitydException? Error;
            public int Attempts;
            public string Replica = "";
        }

        private sealed class Batch
        {
            public ulong Id;
            public DecideRequest Sent = null!;
            public DecideRequest? Original; // as submitted, when the SDK packed it
            public readonly TaskCompletionSource<Settled> Done =
                new TaskCompletionSource<Settled>(TaskCreationOptions.RunContinuationsAsynchronously);
            public TimeSpan Deadline;
            public TimeSpan HedgeAt; // zero: none due
            public TimeSpan SendAt;  // zero: none due (a retry after pushback)
            public readonly List<Attempt> Attempts = new List<Attempt>(2);
            public int Launched;
            public readonly List<string> Failures = new List<string>();
            public StatusCode LastCode = StatusCode.Unavailable;
        }

        /// <summary>
        /// Sends a batch and returns its answer. Waits while MaxInFlight
        /// batches are unanswered. A RequestId of 0 is assigned (ids must be
        /// unique on a stream). A batch that fails throws
        /// <see cref="UtilitydException"/>; <paramref name="info"/>, when
        /// given, is filled either way. Cancelling <paramref name="ct"/>
        /// stops the wait, not the batch (it settles within the deadline).
        /// </summary>
        public async Task<DecideResponse> DecideAsync(DecideRequest request, CancellationToken ct = default,
                                                      CallInfo? info = null)
        {
            var done = await SubmitAsync(request, ct).ConfigureAwait(false);
            var settled = await WithCancellation(done, ct).ConfigureAwait(false);
            info?.CopyFrom(settled.Attempts, settled.Replica);
            if (settled.Error != null) throw settled.Error;
            return settled.Response!;
        }

        private static async Task<T> WithCancellation<T>(Task<T> task, CancellationToken ct)
        {
            if (!ct.CanBeCanceled || task.IsCompleted) return await task.ConfigureAwait(false);
            var cancelled = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            using (ct.Register(() => cancelled.TrySetResult(true)))
            {
                if (await Task.WhenAny(task, cancelled.Task).ConfigureAwait(false) != task)
                {
                    throw new OperationCanceledException(ct);
                }
            }
            return await task.ConfigureAwait(false);
        }

        internal async Task<Task<Settled>> SubmitAsync(DecideRequest request, CancellationToken ct)
        {
            if (request == null) throw new ArgumentNullException(nameof(request));
            await _room.WaitAsync(ct).ConfigureAwait(false);
            DecideRequest sent;
            try
            {
                sent = await _client.PackAsync(request, ct).ConfigureAwait(false);
            }
            catch
            {
                _room.Release();
                throw;
            }
            var b = new Batch
            {
                // The stream owns what it may send again.
                Sent = ReferenceEquals(sent, request) ? request.Clone() : sent,
                Original = ReferenceEquals(sent, request) ? null : request,
            };
            lock (_mu)
            {
                if (b.Sent.RequestId == 0) b.Sent.RequestId = _nextId;
                if (b.Sent.RequestId >= _nextId) _nextId = b.Sent.RequestId + 1;
                b.Id = b.Sent.RequestId;
                _stats.Batches++;
                if (_closing)
                {
                    Settle(b, new UtilitydException(StatusCode.FailedPrecondition, "stream is closed"));
                    return b.Done.Task;
                }
                b.Deadline = Clock.Now + _o.Deadline;
                _pending[b.Id] = b;
                _pool.Deposit();
                if (!Dispatch(b))
                {
                    Settle(b, new UtilitydException(StatusCode.Unavailable, "Decide: no replica for target " + _o.Target));
                }
            }
            return b.Done.Task;
        }

        // The methods below run under _mu.

        /// <summary>Sends b to the next replica; false when none can take it.</summary>
        private bool Dispatch(Batch b)
        {
            var busy = new List<Replica>(b.Attempts.Count);
            var tried = new List<Replica>(b.Attempts.Count);
            foreach (var a in b.Attempts)
            {
                if (a.Sub != null) busy.Add(a.Replica);
                tried.Add(a.Replica);
            }
            var pk = _pool.NextUntried(busy, tried);
            if (pk.Replica == null) return false;
            var now = Clock.Now;
            if (pk.NotBefore > now)
            {
                b.SendAt = pk.NotBefore; // the timer loop sends it then
                Kick();
                return true;
            }
            if (!_subs.TryGetValue(pk.Replica, out var sub))
            {
                sub = new ReplicaStream(this, pk.Replica);
                _subs[pk.Replica] = sub;
                AddWorker(sub.Start());
            }
            sub.Send(b.Sent);
            b.Attempts.Add(new Attempt { Sub = sub, Replica = pk.Replica });
            b.Launched++;
            b.HedgeAt = now + _o.BatchDeadline;
            Kick();
            return true;
        }

        private void AddWorker(Task t)
        {
            if (_workers.Count >= 64) _workers.RemoveAll(w => w.IsCompleted);
            _workers.Add(t);
        }

        private void Kick()
        {
            if (_wake.CurrentCount == 0)
            {
                try
                {
                    _wake.Release();
                }
                catch (SemaphoreFullException)
                {
                    // Awake already.
                }
            }
        }

        /// <summary>Another attempt of b if max attempts and the budget allow.</summary>
        private void Retry(Batch b)
        {
            if (b.SendAt != TimeSpan.Zero) return; // an attempt waiting for its replica's pushback is the retry
            var outstanding = false;
            foreach (var a in b.Attempts) outstanding |= a.Sub != null;
            if (b.Launched < _o.MaxAttempts && _pool.Withdraw() && Dispatch(b)) return;
            if (!outstanding)
            {
                Settle(b, Race.Exhausted("Decide", b.LastCode, b.Failures, _o.Deadline, false, b.Launched));
            }
        }

        private void Settle(Batch b, UtilitydException e)
        {
            e.Attempts = b.Launched;
            Deliver(b, new Settled { Error = e, Attempts = b.Launched });
        }

        private void Deliver(Batch b, Settled s)
        {
            // Only this batch's entry: a caller's id used twice must not
            // drop the other batch.
            if (_pending.TryGetValue(b.Id, out var entry) && entry == b) _pending.Remove(b.Id);
            if (s.Error == null) _stats.Answered++;
            else _stats.Failed++;
            _room.Release();
            b.Done.TrySetResult(s);
        }

        // --- what replica streams report ----------------------------------

        internal void OnAnswer(ReplicaStream sub, DecideResponse resp)
        {
            var r = sub.Replica;
            // A refusal for overload, or a replica not serving, proves it
            // alive but not available.
            var overloaded = resp.Error?.Reason == ErrorReason.Overloaded;
            if (!overloaded && resp.Error?.Code != ErrorCode.Unavailable) _pool.OnAnswered(r);
            lock (_mu)
            {
                if (!_pending.TryGetValue(resp.RequestId, out var b)) return; // answered already (a hedge's twin)
                for (var i = 0; i < b.Attempts.Count; i++)
                {
                    if (b.Attempts[i].Replica == r) b.Attempts[i] = new Attempt { Replica = r };
                }
                if (resp.Error != null)
                {
                    OnRefusal(b, r, resp.Error, overloaded);
                    return;
                }
                var settled = new Settled { Response = resp, Attempts = b.Launched, Replica = r.Address };
                if (b.Original == null)
                {
                    Deliver(b, settled);
                    return;
                }
                // Agents refused for a stale revision are re-packed and asked
                // again (a unary call) before the result is handed over.
                _pending.Remove(b.Id);
                AddWorker(RepairThenDeliver(b, settled));
            }
        }

        private void OnRefusal(Batch b, Replica r, Error error, bool overloaded)
        {
            var e = UtilitydException.FromError(error);
            if (overloaded)
            {
                b.LastCode = e.Code;
                b.Failures.Add(r.Address + ": " + e.Message);
                if (Race.OnFailure(_pool, r, e.Code, e.Message, error.RetryAfterMs) == AfterFailure.Retry &&
                    Clock.Now < b.Deadline)
                {
                    _stats.OverloadRetries++;
                    Retry(b);
                    return;
                }
            }
            if (e.Code == StatusCode.Unavailable && Clock.Now + _o.BatchDeadline < b.Deadline)
            {
                // A replica not serving yet (loading its sets) or any more:
                // the batch was not decided. It goes again after an attempt
                // deadline, to another replica if one serves, uncharged.
                b.LastCode = e.Code;
                b.Failures.Add(r.Address + ": " + e.Message);
                _pool.Eject(r, e.Message);
                b.SendAt = Clock.Now + _o.BatchDeadline;
                b.HedgeAt = TimeSpan.Zero;
                Kick();
                return;
            }
            e.Attempts = b.Launched;
            e.Replica = r.Address;
            Deliver(b, new Settled { Error = e, Attempts = b.Launched, Replica = r.Address });
        }

        private async Task RepairThenDeliver(Batch b, Settled settled)
        {
            await _client.RepairStaleAsync(b.Original!, settled.Response!, CancellationToken.None).ConfigureAwait(false);
            lock (_mu)
            {
                _pending[b.Id] = b;
                Deliver(b, settled);
            }
        }

        internal void OnDone(ReplicaStream sub, Exception? error)
        {
            lock (_mu)
            {
                if (_subs.TryGetValue(sub.Replica, out var current) && current == sub) _subs.Remove(sub.Replica);
                if (_stopped) return;
                _stats.Reconnects++;
                var e = error is RpcException rpc
                    ? UtilitydException.FromRpc(rpc)
                    : new UtilitydException(StatusCode.Unavailable, error?.Message ?? "the stream ended");
                _pool.Eject(sub.Replica, e.Message);
                foreach (var b in new List<Batch>(_pending.Values))
                {
                    bool wasHere = false, other = false;
                    for (var i = 0; i < b.Attempts.Count; i++)
                    {
                        if (b.Attempts[i].Sub == sub)
                        {
                            b.Attempts[i] = new Attempt { Replica = sub.Replica };
                            wasHere = true;
                        }
                        else if (b.Attempts[i].Sub != null)
                        {
                            other = true;
                        }
                    }
                    if (!wasHere) continue;
                    b.LastCode = e.Code;
                    b.Failures.Add(sub.Replica.Address + ": " + e.Message);
                    // Sent again at once, not charged to the retry budget: it
                    // may never have reached the replica.
                    if (!other && b.SendAt == TimeSpan.Zero)
                    {
                        _stats.Resent++;
                        if (b.Launched >= _o.MaxAttempts || !Dispatch(b))
                        {
                            b.HedgeAt = TimeSpan.Zero;
                            Retry(b);
                        }
                    }
                }
            }
        }

        /// <summary>Hedges batches past their attempt deadline, sends those
        /// whose pushback has passed, ends those past their deadline.</summary>
        private async Task TimersAsync()
        {
            while (true)
            {
                TimeSpan wake;
                lock (_mu)
                {
                    if (_stopped) return;
                    var now = Clock.Now;
                    wake = now + TimeSpan.FromSeconds(1);
                    foreach (var b in new List<Batch>(_pending.Values))
                    {
                        Tick(b, now);
                        if (!_pending.ContainsKey(b.Id)) continue;
                        wake = Earlier(Earlier(Earlier(wake, b.Deadline), b.HedgeAt), b.SendAt);
                    }
                }
                var left = wake - Clock.Now;
                await _wake.WaitAsync(left > TimeSpan.Zero ? left : TimeSpan.Zero).ConfigureAwait(false);
            }
        }

        /// <summary>The earlier of a wake time and a due time (zero: none due).</summary>
        private static TimeSpan Earlier(TimeSpan wake, TimeSpan due) => due != TimeSpan.Zero && due < wake ? due : wake;

        private void Tick(Batch b, TimeSpan now)
        {
            if (now >= b.Deadline)
            {
                Settle(b, Race.Exhausted("Decide", StatusCode.DeadlineExceeded, b.Failures, _o.Deadline, true, b.Launched));
            }
            else if (b.SendAt != TimeSpan.Zero && now >= b.SendAt)
            {
                b.SendAt = TimeSpan.Zero;
                if (!Dispatch(b)) Retry(b);
            }
            else if (b.HedgeAt != TimeSpan.Zero && now >= b.HedgeAt)
            {
                b.HedgeAt = TimeSpan.Zero;
                Replica? latest = null;
                foreach (var a in b.Attempts)
                {
                    if (a.Sub != null) latest = a.Replica;
                }
                if (latest == null) return;
                _stats.DeadlineMisses++;
                var limit = Race.Format(_o.BatchDeadline);
                _pool.Eject(latest, "missed the attempt deadline");
                b.Failures.Add(latest.Address + ": no answer within " + limit);
                b.LastCode = StatusCode.DeadlineExceeded;
                Retry(b);
            }
        }

        /// <summary>The stream's counters and the replicas it is on.</summary>
        public StreamStats Stats
        {
            get
            {
                lock (_mu)
                {
                    var s = _stats.Copy();
                    var replicas = new List<string>();
                    foreach (var r in _subs.Keys) replicas.Add(r.Address);
                    s.Replicas = replicas;
                    return s;
                }
            }
        }

        /// <summary>Batches sent and not yet answered.</summary>
        public int InFlight
        {
            get
            {
                lock (_mu) return _pending.Count;
            }
        }

        /// <summary>
        /// Waits until <paramref name="ct"/> ends for every batch's answer,
        /// then ends the stream: batches still unanswered get Unavailable.
        /// Every task the stream started has ended when this completes.
        /// Idempotent.
        /// </summary>
        public async Task CloseAsync(CancellationToken ct = default)
        {
            lock (_mu)
            {
                if (_closing) return;
                _closing = true;
            }
            var clean = true;
            while (true)
            {
                lock (_mu)
                {
                    if (_pending.Count == 0) break;
                }
                if (ct.IsCancellationRequested)
                {
                    clean = false;
                    break;
                }
                await Task.Delay(2).ConfigureAwait(false);
            }
            List<ReplicaStream> subs;
            Task[] workers;
            lock (_mu)
            {
                _stopped = true;
                foreach (var b in new List<Batch>(_pending.Values))
                {
                    Settle(b, new UtilitydException(StatusCode.Unavailable, "stream closed before an answer arrived"));
                }
                subs = new List<ReplicaStream>(_subs.Values);
                foreach (var s in subs)
                {
                    if (clean) s.End();
                    else s.Cancel();
                }
                workers = _workers.ToArray();
            }
            Kick();
            // A replica that does not end its stream within 2 s is cut off.
            var all = Task.WhenAll(workers);
            if (await Task.WhenAny(all, Task.Delay(TimeSpan.FromSeconds(2))).ConfigureAwait(false) != all)
            {
                foreach (var s in subs) s.Cancel();
            }
            await all.ConfigureAwait(false);
            await _timers.ConfigureAwait(false);
        }

        /// <summary>Closes the stream, waiting up to the batch deadline for
        /// answers still due.</summary>
        public async ValueTask DisposeAsync()
        {
            using var cts = new CancellationTokenSource(_o.Deadline);
            await CloseAsync(cts.Token).ConfigureAwait(false);
        }
    }

    /// <summary>One replica's DecideStream: a writer of queued batches and a
    /// reader of answers.</summary>
    internal sealed class ReplicaStream
    {
        private readonly DecisionStream _stream;
        private readonly CancellationTokenSource _cts = new CancellationTokenSource();
        private readonly Queue<DecideRequest> _queue = new Queue<DecideRequest>();
        private readonly SemaphoreSlim _kick = new SemaphoreSlim(0, int.MaxValue);
        private bool _ending;

        public ReplicaStream(DecisionStream stream, Replica replica)
        {
            _stream = stream;
            Replica = replica;
        }

        public Replica Replica { get; }

        public Task Start() => Task.Run(RunAsync);

        public void Send(DecideRequest request)
        {
            lock (_queue)
            {
                if (_ending) return;
                _queue.Enqueue(request);
            }
            _kick.Release();
        }

        /// <summary>Half-closes once the queued writes are out; the server
        /// then ends the stream.</summary>
        public void End()
        {
            lock (_queue) _ending = true;
            _kick.Release();
        }

        public void Cancel()
        {
            try
            {
                _cts.Cancel();
            }
            catch (ObjectDisposedException)
            {
                // Ended already.
            }
        }

        /// <summary>Opens the stream (waiting for the replica while the
        /// attempt deadline moves batches elsewhere), reads answers on one
        /// task and writes queued batches on this one.</summary>
        private async Task RunAsync()
        {
            AsyncDuplexStreamingCall<DecideRequest, DecideResponse> call;
            try
            {
                call = Replica.Stub.DecideStream(new CallOptions(cancellationToken: _cts.Token).WithWaitForReady(true));
            }
            catch (Exception e)
            {
                _stream.OnDone(this, e);
                return;
            }
            using (call)
            {
                var reader = ReadAsync(call);
                var closed = false;
                try
                {
                    while (true)
                    {
                        await _kick.WaitAsync(_cts.Token).ConfigureAwait(false);
                        while (true)
                        {
                            DecideRequest? next;
                            bool ending;
                            lock (_queue)
                            {
                                next = _queue.Count > 0 ? _queue.Dequeue() : null;
                                ending = _ending;
                            }
                            if (next != null)
                            {
                                await call.RequestStream.WriteAsync(next).ConfigureAwait(false);
                                continue;
                            }
                            if (ending && !closed)
                            {
                                closed = true;
                                await call.RequestStream.CompleteAsync().ConfigureAwait(false);
                            }
                            break;
                        }
                    }
                }
                catch (Exception)
                {
                    // Cancelled, or the stream broke: the reader says why.
                    Cancel();
                }
                await reader.ConfigureAwait(false);
            }
            _cts.Dispose();
        }

        private async Task ReadAsync(AsyncDuplexStreamingCall<DecideRequest, DecideResponse> call)
        {
            Exception? error = null;
            try
            {
                while (await call.ResponseStream.MoveNext(_cts.Token).ConfigureAwait(false))
                {
                    _stream.OnAnswer(this, call.ResponseStream.Current);
                }
            }
            catch (Exception e)
            {
                error = e;
            }
            Cancel(); // stops the writer
            _stream.OnDone(this, error);
        }
    }
}
