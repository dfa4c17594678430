package utilityd

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	pb "github.com/utilityd/utilityd/client_sdk/go/proto/utilitydv1"
)

// Client decides batches on a target's replicas. Safe for concurrent use.
type Client struct {
	opts    Options
	pool    *pool
	mu      sync.Mutex
	schemas map[string]*Schema
}

// Connect resolves the target into replicas and connects to each in the
// background: it does not wait for a connection (WaitForReady does). An
// *Error with Code InvalidArgument for a malformed target.
func Connect(opts Options) (*Client, error) {
	opts = opts.withDefaults()
	p, err := newPool(opts)
	if err != nil {
		return nil, err
	}
	return &Client{opts: opts, pool: p, schemas: map[string]*Schema{}}, nil
}

// Close stops probing and closes every connection; calls and streams still
// running end with an error. Idempotent.
func (c *Client) Close() error {
	c.pool.close()
	return nil
}

// WaitForReady returns nil once some replica answers a health check
// SERVING, or an error naming what each replica said when ctx ends. A game
// framework's join hook should wait a second at most.
func (c *Client) WaitForReady(ctx context.Context) error { return c.pool.waitForReady(ctx) }

// Replicas lists the target's replicas now, with their state.
func (c *Client) Replicas() []ReplicaState { return c.pool.states() }

// DecideOption adjusts one Decide call.
type DecideOption func(*decideOptions)

type decideOptions struct{ info *CallInfo }

// WithInfo fills `info` with how the call went.
func WithInfo(info *CallInfo) DecideOption {
	return func(o *decideOptions) { o.info = info }
}

// Decide decides one batch: named factors packed by the SDK (the request is
// not modified), the attempt deadline, hedging, retries (docs/CLIENTS.md).
// Agents refused because their set changed since the SDK packed them are
// packed again and asked again before Decide returns.
func (c *Client) Decide(ctx context.Context, req *pb.DecideRequest, opts ...DecideOption) (*pb.DecideResponse, error) {
	var o decideOptions
	for _, opt := range opts {
		opt(&o)
	}
	packed, err := c.pack(ctx, req)
	if err != nil {
		return nil, err
	}
	resp, info, err := c.send(ctx, packed)
	if o.info != nil {
		*o.info = info
	}
	if err != nil {
		return nil, err
	}
	c.repairStale(ctx, req, resp)
	return resp, nil
}

func (c *Client) send(ctx context.Context, req *pb.DecideRequest) (*pb.DecideResponse, CallInfo, error) {
	return race(ctx, c.pool, "Decide",
		func(ctx context.Context, r *replica, o ...grpc.CallOption) (*pb.DecideResponse, error) {
			return r.stub.Decide(ctx, req, o...)
		})
}

// ListBehaviourSets lists the served sets with their revisions.
func (c *Client) ListBehaviourSets(ctx context.Context) (*pb.ListBehaviourSetsResponse, error) {
	resp, _, err := race(ctx, c.pool, "ListBehaviourSets",
		func(ctx context.Context, r *replica, o ...grpc.CallOption) (*pb.ListBehaviourSetsResponse, error) {
			return r.stub.ListBehaviourSets(ctx, &pb.ListBehaviourSetsRequest{}, o...)
		})
	return resp, err
}

// GetBehaviourSet returns one set's definition and summary.
func (c *Client) GetBehaviourSet(ctx context.Context, name string) (*pb.GetBehaviourSetResponse, error) {
	resp, _, err := race(ctx, c.pool, "GetBehaviourSet",
		func(ctx context.Context, r *replica, o ...grpc.CallOption) (*pb.GetBehaviourSetResponse, error) {
			return r.stub.GetBehaviourSet(ctx, &pb.GetBehaviourSetRequest{Name: name}, o...)
		})
	return resp, err
}

// Schema is the factor order of one revision of one set.
type Schema struct {
	Summary       *pb.BehaviourSetSummary
	factors       map[string]int
	targetFactors map[string]int
	actions       map[string]int
	personalities map[string]int
}

func newSchema(s *pb.BehaviourSetSummary) *Schema {
	index := func(names []string) map[string]int {
		m := make(map[string]int, len(names))
		for i, n := range names {
			m[n] = i
		}
		return m
	}
	return &Schema{Summary: s, factors: index(s.GetFactors()),
		targetFactors: index(s.GetTargetFactors()), actions: index(s.GetActions()),
		personalities: index(s.GetPersonalities())}
}

// Revision is the set revision the indexes belong to.
func (s *Schema) Revision() string { return s.Summary.GetRevision() }

func lookup(m map[string]int, name string) int {
	if i, ok := m[name]; ok {
		return i
	}
	return -1
}

// FactorIndex, TargetFactorIndex, ActionIndex and PersonalityIndex give a
// name's index (the block columns' index spaces), or -1.
func (s *Schema) FactorIndex(name string) int       { return lookup(s.factors, name) }
func (s *Schema) TargetFactorIndex(name string) int { return lookup(s.targetFactors, name) }
func (s *Schema) ActionIndex(name string) int       { return lookup(s.actions, name) }
func (s *Schema) PersonalityIndex(name string) int  { return lookup(s.personalities, name) }

// Schema returns the cached schema of a set, fetching it on first use.
func (c *Client) Schema(ctx context.Context, set string) (*Schema, error) {
	c.mu.Lock()
	s := c.schemas[set]
	c.mu.Unlock()
	if s != nil {
		return s, nil
	}
	resp, err := c.GetBehaviourSet(ctx, set)
	if err != nil {
		return nil, err
	}
	s = newSchema(resp.GetSummary())
	c.mu.Lock()
	c.schemas[set] = s
	c.mu.Unlock()
	return s, nil
}

// InvalidateSchema drops a set's cached schema.
func (c *Client) InvalidateSchema(set string) {
	c.mu.Lock()
	delete(c.schemas, set)
	c.mu.Unlock()
}

// packValues orders named values by `index`; an error names what is wrong.
func packValues(named map[string]float32, index map[string]int, order []string, where string) ([]float32, error) {
	values := make([]float32, len(order))
	seen := make([]bool, len(order))
	for name, v := range named {
		i, ok := index[name]
		if !ok {
			return nil, fmt.Errorf("%snamed_factors: unknown factor %q", where, name)
		}
		values[i], seen[i] = v, true
	}
	var missing []string
	for i, ok := range seen {
		if !ok {
			missing = append(missing, order[i])
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%snamed_factors: missing %s", where, strings.Join(missing, ", "))
	}
	return values, nil
}

// Pack puts an agent's named factors (and its targets') into the set's
// order and stamps the revision; on an error the agent is left as it was.
func (s *Schema) Pack(a *pb.AgentSnapshot) error {
	named := len(a.GetNamedFactors()) > 0 && len(a.GetFactors()) == 0
	var values []float32
	var err error
	if named {
		if values, err = packValues(a.GetNamedFactors(), s.factors, s.Summary.GetFactors(), ""); err != nil {
			return err
		}
	}
	type packedTarget struct {
		t      int
		values []float32
	}
	var targets []packedTarget
	for t, target := range a.GetTargets() {
		if len(target.GetNamedFactors()) == 0 || len(target.GetFactors()) > 0 {
			continue
		}
		v, err := packValues(target.GetNamedFactors(), s.targetFactors,
			s.Summary.GetTargetFactors(), fmt.Sprintf("targets[%d].", t))
		if err != nil {
			return err
		}
		targets = append(targets, packedTarget{t, v})
	}
	if !named && len(targets) == 0 {
		return nil
	}
	if named {
		a.Factors, a.NamedFactors = values, nil
	}
	for _, pt := range targets {
		a.Targets[pt.t].Factors, a.Targets[pt.t].NamedFactors = pt.values, nil
	}
	a.ExpectedRevision = s.Revision()
	return nil
}

func hasNamed(req *pb.DecideRequest) bool {
	for _, a := range req.GetAgents() {
		if len(a.GetNamedFactors()) > 0 {
			return true
		}
		for _, t := range a.GetTargets() {
			if len(t.GetNamedFactors()) > 0 {
				return true
			}
		}
	}
	return false
}

// pack returns the request with named factors packed (a copy when any
// agent has them; req itself otherwise). Agents of sets that cannot be had,
// or that do not pack, are left for the server to answer.
func (c *Client) pack(ctx context.Context, req *pb.DecideRequest) (*pb.DecideRequest, error) {
	if c.opts.NoPacking || !hasNamed(req) {
		return req, nil
	}
	packed := proto.Clone(req).(*pb.DecideRequest)
	seen := map[string]*Schema{}
	for _, a := range packed.Agents {
		if len(a.GetNamedFactors()) == 0 && !targetsNamed(a) || a.GetBehaviourSet() == "" {
			continue
		}
		s, ok := seen[a.GetBehaviourSet()]
		if !ok {
			s, _ = c.Schema(ctx, a.GetBehaviourSet())
			seen[a.GetBehaviourSet()] = s
		}
		if s != nil {
			_ = s.Pack(a) // the server names what is wrong with the agent
		}
	}
	return packed, nil
}

func targetsNamed(a *pb.AgentSnapshot) bool {
	for _, t := range a.GetTargets() {
		if len(t.GetNamedFactors()) > 0 {
			return true
		}
	}
	return false
}

func isStale(d *pb.Decision) bool {
	return d.GetError() != nil && d.GetError().GetReason() == pb.ErrorReason_ERROR_REASON_STALE_REVISION
}

// repairStale re-packs and re-decides the agents the SDK packed that the
// server refused for a stale revision, and puts their answers in place.
func (c *Client) repairStale(ctx context.Context, original *pb.DecideRequest, resp *pb.DecideResponse) {
	var stale []int
	var answers []*pb.Decision
	consider := func(i int, d *pb.Decision) {
		if i >= 0 && i < len(original.GetAgents()) &&
			original.Agents[i].GetExpectedRevision() == "" && isStale(d) {
			stale = append(stale, i)
			answers = append(answers, d)
		}
	}
	for i, d := range resp.GetDecisions() {
		consider(i, d)
	}
	for _, x := range resp.GetCompact().GetFull() {
		consider(int(x.GetAgent()), x.GetDecision())
	}
	if len(stale) == 0 {
		return
	}
	retry := &pb.DecideRequest{RequestId: original.GetRequestId(), Explain: original.GetExplain()}
	for _, i := range stale {
		c.InvalidateSchema(original.Agents[i].GetBehaviourSet())
		retry.Agents = append(retry.Agents, original.Agents[i])
	}
	packed, err := c.pack(ctx, retry)
	if err != nil {
		return
	}
	again, _, err := c.send(ctx, packed)
	if err != nil || len(again.GetDecisions()) != len(stale) {
		return // keep the FAILED_PRECONDITION answers
	}
	for k := range stale {
		proto.Reset(answers[k])
		proto.Merge(answers[k], again.Decisions[k])
	}
}
