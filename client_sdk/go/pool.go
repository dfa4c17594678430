package utilityd

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"

	pb "github.com/utilityd/utilityd/client_sdk/go/proto/utilitydv1"
)

const (
	healthService   = "utilityd.v1.DecisionService"
	probeTick       = 20 * time.Millisecond
	maxProbeBackoff = time.Second
)

// One replica: an address and a connection of its own.
type replica struct {
	address string
	conn    *grpc.ClientConn
	stub    pb.DecisionServiceClient
	health  healthpb.HealthClient
}

type entry struct {
	r               *replica
	ejected         bool
	ejectedAt       time.Time
	why             string
	strikes         int // consecutive failed probes
	nextProbe       time.Time
	probing         bool
	pushedBackUntil time.Time
	refusals        int // overload refusals since its last answer
	answered        uint64
}

// Where the next attempt goes, and when it may be sent.
type pick struct {
	r         *replica
	notBefore time.Time
}

// Retries and hedges may add `ratio` of the first attempts after a reserve.
type budget struct {
	mu            sync.Mutex
	ratio, max, n float64
}

func (b *budget) deposit() {
	b.mu.Lock()
	b.n = minF(b.max, b.n+b.ratio)
	b.mu.Unlock()
}

func (b *budget) withdraw() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n < 1 {
		return false
	}
	b.n--
	return true
}

func minF(a, b float64) float64 {
	if a < b {
		return a
	}
	return b
}

// The fleet: a connection per replica, ejection until a probe answers,
// pushback holds, the retry budget, names resolved again.
type pool struct {
	opts   Options
	creds  credentials.TransportCredentials
	budget budget
	host   string // a name to resolve again ("" for addresses)

	mu      sync.Mutex
	entries []*entry
	next    int
	closed  bool

	stop chan struct{}
	done sync.WaitGroup
}

func newPool(opts Options) (*pool, error) {
	p := &pool{opts: opts, stop: make(chan struct{}),
		budget: budget{ratio: opts.RetryBudgetRatio, max: opts.RetryBudgetReserve,
			n: opts.RetryBudgetReserve}}
	if opts.TLS != nil {
		p.creds = credentials.NewTLS(opts.TLS)
	}
	if err := p.resolve(true); err != nil {
		return nil, err
	}
	p.done.Add(1)
	go p.probeLoop()
	return p, nil
}

func (p *pool) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	close(p.stop)
	p.done.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.entries {
		e.r.conn.Close()
	}
}

func (p *pool) dial(address string) (*replica, error) {
	// Round robin over the replica's one address: unlike pick_first it
	// reconnects on its own, so a replica that comes back is connected
	// before the pool's next probe. No client-side health watch
	// (healthCheckConfig): behind an L7 proxy it reaches one backend, whose
	// death would mark the proxy, and every call through it, unavailable.
	opts := []grpc.DialOption{
		grpc.WithDefaultServiceConfig(`{"loadBalancingConfig": [{"round_robin": {}}]}`),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(p.opts.MaxMessageBytes),
			grpc.MaxCallSendMsgSize(p.opts.MaxMessageBytes)),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: p.opts.KeepaliveTime,
			Timeout: p.opts.KeepaliveTimeout, PermitWithoutStream: true}),
		// A replica that comes back is connected again within half a second.
		grpc.WithConnectParams(grpc.ConnectParams{MinConnectTimeout: time.Second,
			Backoff: backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6,
				MaxDelay: 500 * time.Millisecond}}),
		// Deadlines, not gRPC's retries, decide when to try another replica.
		grpc.WithDisableRetry(),
	}
	if p.creds != nil {
		opts = append(opts, grpc.WithTransportCredentials(p.creds))
	} else {
		opts = append(opts, grpc.WithInsecure())
	}
	conn, err := grpc.Dial("passthrough:///"+address, opts...)
	if err != nil {
		return nil, &Error{Code: 3, Field: "target", Message: address + ": " + err.Error()}
	}
	return &replica{address: address, conn: conn, stub: pb.NewDecisionServiceClient(conn),
		health: healthpb.NewHealthClient(conn)}, nil
}

// resolve turns the target into replicas; known addresses keep their
// connection and state, ones gone from DNS are closed.
func (p *pool) resolve(first bool) error {
	target := strings.TrimSpace(p.opts.Target)
	if target == "" {
		return &Error{Code: 3, Field: "target", Message: "is empty"}
	}
	var addresses []string
	// "dns:///name:port" and "name:port" are alike: names are looked up
	// here, again every ResolveInterval; IP addresses are used as they are.
	for _, prefix := range []string{"dns:///", "dns:"} {
		if strings.HasPrefix(target, prefix) {
			target = strings.TrimPrefix(target, prefix)
			break
		}
	}
	for _, item := range strings.Split(target, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		host, port, err := net.SplitHostPort(item)
		if err != nil || port == "" {
			return &Error{Code: 3, Field: "target",
				Message: fmt.Sprintf("%q is not host:port", item)}
		}
		if net.ParseIP(host) != nil {
			addresses = append(addresses, net.JoinHostPort(host, port))
			continue
		}
		p.host = host
		ips, err := net.LookupHost(host)
		if err != nil {
			continue // not yet: looked up again every ResolveInterval
		}
		for _, ip := range ips {
			addresses = append(addresses, net.JoinHostPort(ip, port))
		}
	}
	p.mu.Lock()
	known := map[string]*entry{}
	for _, e := range p.entries {
		known[e.r.address] = e
	}
	p.mu.Unlock()
	var fresh []*entry
	for _, a := range addresses {
		if e, ok := known[a]; ok {
			fresh = append(fresh, e)
			delete(known, a)
			continue
		}
		r, err := p.dial(a)
		if err != nil {
			return err
		}
		fresh = append(fresh, &entry{r: r})
	}
	if first && len(fresh) == 0 && p.host == "" {
		return &Error{Code: 3, Field: "target", Message: "names no replica"}
	}
	p.mu.Lock()
	p.entries = fresh
	if p.next >= len(fresh) {
		p.next = 0
	}
	p.mu.Unlock()
	for _, gone := range known {
		gone.r.conn.Close()
	}
	return nil
}

func (p *pool) find(r *replica) *entry {
	for _, e := range p.entries {
		if e.r == r {
			return e
		}
	}
	return nil
}

func contains(busy []*replica, r *replica) bool {
	for _, b := range busy {
		if b == r {
			return true
		}
	}
	return false
}

// nextReplica picks where an attempt goes, skipping `busy`: round robin over
// admitted replicas that are not failing to connect; else the one whose
// pushback ends first; else the longest ejected. Nil when all are busy.
func (p *pool) nextReplica(busy []*replica) pick {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.entries)
	for k := 0; k < n; k++ {
		e := p.entries[(p.next+k)%n]
		if e.ejected || contains(busy, e.r) || e.pushedBackUntil.After(now) ||
			e.r.conn.GetState() == connectivity.TransientFailure {
			continue
		}
		p.next = (p.next + k + 1) % n
		return pick{r: e.r}
	}
	var best *entry
	for _, e := range p.entries {
		if contains(busy, e.r) || e.ejected || !e.pushedBackUntil.After(now) {
			continue
		}
		if best == nil || e.pushedBackUntil.Before(best.pushedBackUntil) {
			best = e
		}
	}
	if best != nil {
		return pick{r: best.r, notBefore: best.pushedBackUntil}
	}
	for _, e := range p.entries {
		if contains(busy, e.r) {
			continue
		}
		if best == nil || (e.ejected && best.ejected && e.ejectedAt.Before(best.ejectedAt)) ||
			(!e.ejected && best.ejected) {
			best = e
		}
	}
	if best != nil {
		return pick{r: best.r}
	}
	return pick{}
}

// answered re-admits a replica that gave an answer.
func (p *pool) answered(r *replica) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.find(r); e != nil {
		e.answered++
		e.ejected, e.strikes, e.refusals = false, 0, 0
	}
}

// eject avoids a replica until a health probe answers SERVING.
func (p *pool) eject(r *replica, why string) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.find(r)
	if e == nil || e.ejected {
		return
	}
	e.ejected, e.ejectedAt, e.why = true, now, why
	e.nextProbe = now.Add(p.opts.BatchDeadline)
}

// pushBack holds a replica that refused for overload: no attempt before the
// hint, doubled with each refusal in a row, up to a second.
func (p *pool) pushBack(r *replica, after time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.find(r)
	if e == nil {
		return
	}
	shift := e.refusals
	if shift > 10 {
		shift = 10
	}
	hold := after << shift
	if hold > maxProbeBackoff {
		hold = maxProbeBackoff
	}
	if hold < after {
		hold = after
	}
	e.refusals++
	if until := time.Now().Add(hold); until.After(e.pushedBackUntil) {
		e.pushedBackUntil = until
	}
}

func (p *pool) states() []ReplicaState {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]ReplicaState, 0, len(p.entries))
	for _, e := range p.entries {
		s := ReplicaState{Address: e.r.address, Ejected: e.ejected, Answered: e.answered}
		if e.ejected {
			s.Why = e.why
		}
		out = append(out, s)
	}
	return out
}

func (p *pool) probe(e *entry) {
	ctx, cancel := context.WithTimeout(context.Background(), p.opts.BatchDeadline)
	// A connection still being made is given the probe's whole deadline.
	resp, err := e.r.health.Check(ctx, &healthpb.HealthCheckRequest{Service: healthService},
		grpc.WaitForReady(true))
	cancel()
	serving := err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	e.probing = false
	if serving {
		e.ejected, e.strikes = false, 0
		return
	}
	if err == nil { // up, not serving yet (loading): it will be soon
		e.nextProbe = now.Add(p.opts.BatchDeadline)
		return
	}
	e.strikes++
	shift := e.strikes
	if shift > 6 {
		shift = 6
	}
	wait := p.opts.BatchDeadline << shift
	if wait > maxProbeBackoff {
		wait = maxProbeBackoff
	}
	e.nextProbe = now.Add(wait)
}

func (p *pool) probeLoop() {
	defer p.done.Done()
	tick := time.NewTicker(probeTick)
	defer tick.Stop()
	nextResolve := time.Now().Add(p.opts.ResolveInterval)
	var probes sync.WaitGroup
	defer probes.Wait()
	for {
		select {
		case <-p.stop:
			return
		case now := <-tick.C:
			p.mu.Lock()
			for _, e := range p.entries {
				if e.ejected && !e.probing && !e.nextProbe.After(now) {
					e.probing = true
					probes.Add(1)
					go func(e *entry) {
						defer probes.Done()
						p.probe(e)
					}(e)
				}
			}
			p.mu.Unlock()
			if p.host != "" && !now.Before(nextResolve) {
				_ = p.resolve(false) // a failed lookup keeps the replicas known
				nextResolve = time.Now().Add(p.opts.ResolveInterval)
			}
		}
	}
}

// waitForReady returns once some replica answers a health check SERVING.
func (p *pool) waitForReady(ctx context.Context) error {
	var last []string
	for {
		p.mu.Lock()
		entries := append([]*entry(nil), p.entries...)
		p.mu.Unlock()
		last = last[:0]
		for _, e := range entries {
			c, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			resp, err := e.r.health.Check(c, &healthpb.HealthCheckRequest{Service: healthService})
			cancel()
			if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
				p.answered(e.r)
				return nil
			}
			why := "not serving"
			if err != nil {
				why = fromRPC(err).Message
			}
			last = append(last, e.r.address+": "+why)
		}
		select {
		case <-ctx.Done():
			return &Error{Code: 14, Message: "no replica ready (" + strings.Join(last, "; ") + ")"}
		case <-time.After(50 * time.Millisecond):
		}
	}
}
