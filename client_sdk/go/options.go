package utilityd

import (
	"crypto/tls"
	"time"
)

// Options configure a Client. The zero value of each field means its
// documented default.
type Options struct {
	// The replicas: "host:port", a comma-separated list of them, or
	// "dns:///name:port" (a name resolved again every ResolveInterval, as a
	// Kubernetes headless Service). Every address is a replica.
	Target string
	// The game's AI tick (default 100 ms): an attempt may take half of it.
	AITick time.Duration
	// Overrides the attempt deadline (default AITick / 2).
	BatchDeadline time.Duration
	// How long a batch may take in all, attempts included (default 2 s).
	Deadline time.Duration
	// Attempts a batch may make, retries and hedges included (default 3).
	MaxAttempts int
	// Retries and hedges may add RetryBudgetRatio of the first attempts
	// (default 0.2), after a reserve of RetryBudgetReserve (default 10).
	RetryBudgetRatio   float64
	RetryBudgetReserve float64
	// How often a host name in the target is resolved again (default 5 s).
	ResolveInterval time.Duration
	// Keepalive: a ping after KeepaliveTime without reads, the connection
	// closed when unanswered for KeepaliveTimeout (defaults 20 s and 10 s;
	// keep at or above the server's --min_client_ping_interval, 10 s).
	KeepaliveTime    time.Duration
	KeepaliveTimeout time.Duration
	// TLS for every replica (nil: plaintext). Mutual TLS: set Certificates.
	TLS *tls.Config
	// Leave named factors for the server to pack (default: the SDK packs
	// them into the set's order, once per set revision).
	NoPacking bool
	// Largest message sent or received (default 16 MiB).
	MaxMessageBytes int
}

func (o Options) withDefaults() Options {
	if o.AITick <= 0 {
		o.AITick = 100 * time.Millisecond
	}
	if o.BatchDeadline <= 0 {
		o.BatchDeadline = o.AITick / 2
	}
	if o.Deadline <= 0 {
		o.Deadline = 2 * time.Second
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 3
	}
	if o.RetryBudgetRatio <= 0 {
		o.RetryBudgetRatio = 0.2
	}
	if o.RetryBudgetReserve <= 0 {
		o.RetryBudgetReserve = 10
	}
	if o.ResolveInterval <= 0 {
		o.ResolveInterval = 5 * time.Second
	}
	if o.KeepaliveTime <= 0 {
		o.KeepaliveTime = 20 * time.Second
	}
	if o.KeepaliveTimeout <= 0 {
		o.KeepaliveTimeout = 10 * time.Second
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = 16 << 20
	}
	return o
}

// CallInfo says how a batch went: the attempts it took and which replica
// answered ("" when none did).
type CallInfo struct {
	Attempts int
	Replica  string
}

// ReplicaState is one replica of the target as the client sees it.
type ReplicaState struct {
	Address  string
	Ejected  bool
	Why      string // why it is ejected
	Answered uint64 // answers (batches and probes) it gave
}
