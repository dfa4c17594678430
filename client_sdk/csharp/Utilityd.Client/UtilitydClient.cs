using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Threading;
using System.Threading.Tasks;
using Grpc.Core;
using Utilityd.V1;

namespace Utilityd.Client
{
    /// <summary>
    /// Decides batches on a target's replicas, keeping the client contract
    /// (docs/CLIENTS.md): a deadline per attempt (half the AI tick), a batch
    /// past it raced on another replica with the first answer winning, a
    /// replica that missed one avoided until a health probe answers, retries
    /// after overload only once the replica's hint has passed and within a
    /// retry budget. Thread-safe; one per game server.
    /// <code>
    /// await using var client = UtilitydClient.Connect(new ClientOptions { Target = "10.0.0.5:50051,10.0.0.6:50051" });
    /// var response = await client.DecideAsync(request, ct);
    /// </code>
    /// </summary>
    public sealed class UtilitydClient : IAsyncDisposable, IDisposable
    {
        private readonly ConcurrentDictionary<string, Schema> _schemas =
            new ConcurrentDictionary<string, Schema>(StringComparer.Ordinal);

        private UtilitydClient(ClientOptions options)
        {
            Options = options;
            Pool = new ReplicaPool(options);
        }

        /// <summary>The options in force, defaults filled in.</summary>
        public ClientOptions Options { get; }

        internal ReplicaPool Pool { get; }

        /// <summary>
        /// Resolves the target into replicas and connects to each in the
        /// background: it does not wait for a connection
        /// (<see cref="WaitForReadyAsync"/> does). Throws a
        /// <see cref="UtilitydException"/> with InvalidArgument and field
        /// "target" for a malformed target.
        /// </summary>
        public static UtilitydClient Connect(ClientOptions options)
        {
            if (options == null) throw new ArgumentNullException(nameof(options));
            return new UtilitydClient(options.WithDefaults());
        }

        /// <summary>Stops probing and closes every channel; calls and streams
        /// still running end with an error. Idempotent.</summary>
        public void Dispose() => Pool.Dispose();

        /// <inheritdoc cref="Dispose"/>
        public ValueTask DisposeAsync() => new ValueTask(Pool.DisposeAsync());

        /// <summary>Completes once some replica answers a health check
        /// SERVING; throws Unavailable naming what each replica said when
        /// <paramref name="ct"/> ends. A game framework's join hook should
        /// wait a second at most.</summary>
        public Task WaitForReadyAsync(CancellationToken ct = default) => Pool.WaitForReadyAsync(ct);

        /// <summary>The target's replicas now, with their state.</summary>
        public ReplicaState[] Replicas => Pool.States();

        /// <summary>
        /// Decides one batch: named factors packed by the SDK (the request is
        /// not modified), the attempt deadline, hedging, retries. Agents
        /// refused because their set changed since the SDK packed them are
        /// packed again and asked again before this returns. A failure of the
        /// whole batch throws <see cref="UtilitydException"/>; an agent's own
        /// failure is in its Decision.Error. <paramref name="info"/>, when
        /// given, is filled with how the call went, failed or not.
        /// </summary>
        public async Task<DecideResponse> DecideAsync(DecideRequest request, CancellationToken ct = default,
                                                      CallInfo? info = null)
        {
            if (request == null) throw new ArgumentNullException(nameof(request));
            var packed = await PackAsync(request, ct).ConfigureAwait(false);
            var response = await SendAsync(packed, info, ct).ConfigureAwait(false);
            await RepairStaleAsync(request, response, ct).ConfigureAwait(false);
            return response;
        }

        internal Task<DecideResponse> SendAsync(DecideRequest request, CallInfo? info, CancellationToken ct) =>
            Race.Run(Pool, "Decide", (r, o) => r.Stub.DecideAsync(request, o).ResponseAsync, info, ct);

        /// <summary>Opens a stream of batches over every healthy replica
        /// (replica streams are opened when first used). Dispose it, or call
        /// CloseAsync, to end it.</summary>
        public DecisionStream OpenStream(StreamOptions? options = null) => new DecisionStream(this, options);

        /// <summary>Lists the served sets with their revisions.</summary>
        public Task<ListBehaviourSetsResponse> ListBehaviourSetsAsync(CancellationToken ct = default) =>
            Race.Run(Pool, "ListBehaviourSets",
                     (r, o) => r.Stub.ListBehaviourSetsAsync(new ListBehaviourSetsRequest(), o).ResponseAsync, null, ct);

        /// <summary>One set's definition and summary.</summary>
        public Task<GetBehaviourSetResponse> GetBehaviourSetAsync(string name, CancellationToken ct = default) =>
            Race.Run(Pool, "GetBehaviourSet",
                     (r, o) => r.Stub.GetBehaviourSetAsync(new GetBehaviourSetRequest { Name = name }, o).ResponseAsync,
                     null, ct);

        /// <summary>The cached schema of a set, fetched on first use.</summary>
        public async ValueTask<Schema> GetSchemaAsync(string set, CancellationToken ct = default)
        {
            if (_schemas.TryGetValue(set, out var s)) return s;
            var resp = await GetBehaviourSetAsync(set, ct).ConfigureAwait(false);
            s = new Schema(resp.Summary);
            _schemas[set] = s;
            return s;
        }

        /// <summary>Drops a set's cached schema (fetched again on next use).</summary>
        public void InvalidateSchema(string set) => _schemas.TryRemove(set, out _);

        private static bool TargetsNamed(AgentSnapshot a)
        {
            foreach (var t in a.Targets)
            {
                if (t.NamedFactors.Count > 0) return true;
            }
            return false;
        }

        internal static bool HasNamed(DecideRequest request)
        {
            foreach (var a in request.Agents)
            {
                if (a.NamedFactors.Count > 0 || TargetsNamed(a)) return true;
            }
            return false;
        }

        /// <summary>The request with named factors packed (a copy when any
        /// agent has them; the request itself otherwise). Agents of sets that
        /// cannot be had, or that do not pack, are left for the server to
        /// answer.</summary>
        internal async ValueTask<DecideRequest> PackAsync(DecideRequest request, CancellationToken ct)
        {
            if (Options.NoPacking || !HasNamed(request)) return request;
            var packed = request.Clone();
            var seen = new Dictionary<string, Schema?>(StringComparer.Ordinal);
            foreach (var a in packed.Agents)
            {
                if ((a.NamedFactors.Count == 0 && !TargetsNamed(a)) || a.BehaviourSet.Length == 0) continue;
                if (!seen.TryGetValue(a.BehaviourSet, out var s))
                {
                    try
                    {
                        s = await GetSchemaAsync(a.BehaviourSet, ct).ConfigureAwait(false);
                    }
                    catch (UtilitydException)
                    {
                        s = null; // the server names what is wrong with the agent
                    }
                    seen[a.BehaviourSet] = s;
                }
                try
                {
                    s?.Pack(a);
                }
                catch (UtilitydException)
                {
                    // Likewise.
                }
            }
            return packed;
        }

        private static bool IsStale(Decision d) => d.Error != null && d.Error.Reason == ErrorReason.StaleRevision;

        /// <summary>Re-packs and re-decides the agents the SDK packed that the
        /// server refused for a stale revision, and puts their answers in
        /// place.</summary>
        internal async Task RepairStaleAsync(DecideRequest original, DecideResponse response, CancellationToken ct)
        {
            if (Options.NoPacking || !HasNamed(original)) return;
            var stale = new List<int>();
            var put = new List<Action<Decision>>(); // where each stale agent's answer goes
            void Consider(int i, Decision d, Action<Decision> replace)
            {
                if (i >= 0 && i < original.Agents.Count && original.Agents[i].ExpectedRevision.Length == 0 && IsStale(d))
                {
                    stale.Add(i);
                    put.Add(replace);
                }
            }
            for (var i = 0; i < response.Decisions.Count; i++)
            {
                var at = i;
                Consider(i, response.Decisions[i], d => response.Decisions[at] = d);
            }
            if (response.Compact != null)
            {
                foreach (var x in response.Compact.Full)
                {
                    var entry = x;
                    Consider((int)x.Agent, x.Decision, d => entry.Decision = d);
                }
            }
            if (stale.Count == 0) return;
            var retry = new DecideRequest { RequestId = original.RequestId, Explain = original.Explain };
            foreach (var i in stale)
            {
                InvalidateSchema(original.Agents[i].BehaviourSet);
                retry.Agents.Add(original.Agents[i]);
            }
            DecideResponse again;
            try
            {
                again = await SendAsync(await PackAsync(retry, ct).ConfigureAwait(false), null, ct).ConfigureAwait(false);
            }
            catch (UtilitydException)
            {
                return; // keep the FAILED_PRECONDITION answers
            }
            if (again.Decisions.Count != stale.Count) return;
            for (var k = 0; k < stale.Count; k++) put[k](again.Decisions[k]);
        }
    }
}
