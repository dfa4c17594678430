using System;
using System.Net.Http;
using System.Security.Cryptography.X509Certificates;

namespace Utilityd.Client
{
    /// <summary>
    /// How a <see cref="UtilitydClient"/> reaches its replicas and keeps the
    /// client contract (docs/CLIENTS.md). A property left unset (zero or
    /// null) means its documented default.
    /// </summary>
    public sealed class ClientOptions
    {
        /// <summary>The replicas: "host:port", a comma-separated list of
        /// them, or "dns:///name:port" (a name looked up again every
        /// <see cref="ResolveInterval"/>, as a Kubernetes headless Service).
        /// Every address is a replica.</summary>
        public string Target { get; set; } = "";

        /// <summary>The game's AI tick (default 100 ms): one attempt of a
        /// batch may take half of it.</summary>
        public TimeSpan AiTick { get; set; }

        /// <summary>Overrides the attempt deadline (default AiTick / 2).</summary>
        public TimeSpan BatchDeadline { get; set; }

        /// <summary>How long a batch may take in all, attempts included
        /// (default 2 s).</summary>
        public TimeSpan Deadline { get; set; }

        /// <summary>Attempts a batch may make, retries and hedges included
        /// (default 3).</summary>
        public int MaxAttempts { get; set; }

        /// <summary>Retries and hedges may add this share of the first
        /// attempts (default 0.2), after a reserve of
        /// <see cref="RetryBudgetReserve"/> (default 10).</summary>
        public double RetryBudgetRatio { get; set; }

        /// <summary>See <see cref="RetryBudgetRatio"/>.</summary>
        public double RetryBudgetReserve { get; set; }

        /// <summary>How often a host name in the target is looked up again
        /// (default 5 s).</summary>
        public TimeSpan ResolveInterval { get; set; }

        /// <summary>HTTP/2 keepalive: a ping after this long without reads
        /// (default 20 s; keep at or above the server's
        /// --min_client_ping_interval, 10 s) ...</summary>
        public TimeSpan KeepaliveTime { get; set; }

        /// <summary>... and the connection closed when it goes unanswered
        /// this long (default 10 s).</summary>
        public TimeSpan KeepaliveTimeout { get; set; }

        /// <summary>TLS for every replica (null: plaintext).</summary>
        public TlsOptions? Tls { get; set; }

        /// <summary>Leave named factors for the server to pack (default: the
        /// SDK packs them into the set's order, once per set revision).</summary>
        public bool NoPacking { get; set; }

        /// <summary>Largest message sent or received (default 16 MiB).</summary>
        public int MaxMessageBytes { get; set; }

        /// <summary>Makes the HTTP handler of each replica's channel. Needed
        /// where .NET's SocketsHttpHandler is missing or speaks no HTTP/2
        /// (Unity, netstandard2.1): pass a handler that does (TLS is then
        /// the handler's business). Null on .NET: a SocketsHttpHandler with
        /// the keepalive and TLS above.</summary>
        public Func<HttpMessageHandler>? HttpHandlerFactory { get; set; }

        internal ClientOptions WithDefaults()
        {
            var o = (ClientOptions)MemberwiseClone();
            if (o.AiTick <= TimeSpan.Zero) o.AiTick = TimeSpan.FromMilliseconds(100);
            if (o.BatchDeadline <= TimeSpan.Zero) o.BatchDeadline = TimeSpan.FromTicks(o.AiTick.Ticks / 2);
            if (o.Deadline <= TimeSpan.Zero) o.Deadline = TimeSpan.FromSeconds(2);
            if (o.MaxAttempts <= 0) o.MaxAttempts = 3;
            if (o.RetryBudgetRatio <= 0) o.RetryBudgetRatio = 0.2;
            if (o.RetryBudgetReserve <= 0) o.RetryBudgetReserve = 10;
            if (o.ResolveInterval <= TimeSpan.Zero) o.ResolveInterval = TimeSpan.FromSeconds(5);
            if (o.KeepaliveTime <= TimeSpan.Zero) o.KeepaliveTime = TimeSpan.FromSeconds(20);
            if (o.KeepaliveTimeout <= TimeSpan.Zero) o.KeepaliveTimeout = TimeSpan.FromSeconds(10);
            if (o.MaxMessageBytes <= 0) o.MaxMessageBytes = 16 << 20;
            return o;
        }
    }

    /// <summary>TLS to the replicas; mutual TLS with
    /// <see cref="ClientCertificate"/>.</summary>
    public sealed class TlsOptions
    {
        /// <summary>The CA that signs the replicas' certificates (null: the
        /// system's trust store).</summary>
        public X509Certificate2? RootCertificate { get; set; }

        /// <summary>The client's certificate, with its private key, for
        /// mutual TLS (null: none).</summary>
        public X509Certificate2? ClientCertificate { get; set; }

        /// <summary>The name the replicas' certificates must carry (null: the
        /// host of each address).</summary>
        public string? ServerName { get; set; }
    }

    /// <summary>How a batch went: the attempts it took and which replica
    /// answered (empty when none did). Pass one to a Decide call to have it
    /// filled in.</summary>
    public sealed class CallInfo
    {
        /// <summary>Attempts made, the answered one included.</summary>
        public int Attempts { get; set; }

        /// <summary>The replica that answered ("" when none did).</summary>
        public string Replica { get; set; } = "";

        internal void CopyFrom(int attempts, string replica)
        {
            Attempts = attempts;
            Replica = replica;
        }
    }

    /// <summary>One replica of the target as the client sees it.</summary>
    public readonly struct ReplicaState
    {
        internal ReplicaState(string address, bool ejected, string why, ulong answered)
        {
            Address = address;
            Ejected = ejected;
            Why = why;
            Answered = answered;
        }

        /// <summary>"ip:port".</summary>
        public string Address { get; }

        /// <summary>Whether the replica gets no new batch until a probe
        /// answers.</summary>
        public bool Ejected { get; }

        /// <summary>Why it is ejected ("" when it is not).</summary>
        public string Why { get; }

        /// <summary>Answers (batches and probes) it gave.</summary>
        public ulong Answered { get; }
    }
}
