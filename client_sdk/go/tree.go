package utilityd

import (
	"google.golang.org/protobuf/proto"

	pb "github.com/utilityd/utilityd/client_sdk/go/proto/utilitydv1"
)

// TreeTracker keeps each agent's behaviour-tree state between ticks, so a
// game server only reports how its leaves went (docs/TREES.md):
//
//	trees.Prepare(snapshot)            // state and outcomes go in
//	... decide ...
//	trees.Update(decision)             // the new state is kept
//	trees.Report("guard-1", leaf, pb.NodeStatus_NODE_STATUS_SUCCESS)
//	trees.Forget("guard-1")            // the agent despawned
//
// Not safe for concurrent use: one per match loop, or guard it.
type TreeTracker struct {
	agents map[string]*treeAgent
}

type treeAgent struct {
	state    []byte
	running  []*pb.TreeLeaf
	outcomes []*pb.LeafOutcome
}

func (t *TreeTracker) agent(id string) *treeAgent {
	if t.agents == nil {
		t.agents = map[string]*treeAgent{}
	}
	a := t.agents[id]
	if a == nil {
		a = &treeAgent{}
		t.agents[id] = a
	}
	return a
}

// Prepare puts the agent's kept state and the outcomes reported since its
// last decision into its snapshot.
func (t *TreeTracker) Prepare(s *pb.AgentSnapshot) {
	s.LeafOutcomes = s.LeafOutcomes[:0]
	a := t.agents[s.GetAgentId()]
	if a == nil {
		s.TreeState = nil
		return
	}
	s.TreeState = a.state
	for _, o := range a.outcomes {
		s.LeafOutcomes = append(s.LeafOutcomes, proto.Clone(o).(*pb.LeafOutcome))
	}
}

// Update keeps a decision's tree state and the leaves it runs; a decision
// with an error changes nothing (the agent keeps its last state).
func (t *TreeTracker) Update(d *pb.Decision) {
	if d.GetError() != nil {
		return
	}
	a := t.agent(d.GetAgentId())
	a.state = append([]byte(nil), d.GetTreeState()...)
	a.running = append(a.running[:0], d.GetRunLeaves()...)
	a.outcomes = a.outcomes[:0]
}

// Report records how a leaf the game runs went (the last report of a leaf
// wins).
func (t *TreeTracker) Report(agentID string, leaf int32, status pb.NodeStatus) {
	a := t.agent(agentID)
	for _, o := range a.outcomes {
		if o.Leaf == leaf {
			o.Status = status
			return
		}
	}
	a.outcomes = append(a.outcomes, &pb.LeafOutcome{Leaf: leaf, Status: status})
}

// Running is the leaves the agent's last decision runs.
func (t *TreeTracker) Running(agentID string) []*pb.TreeLeaf {
	if a := t.agents[agentID]; a != nil {
		return a.running
	}
	return nil
}

// Forget drops an agent (it despawned).
func (t *TreeTracker) Forget(agentID string) { delete(t.agents, agentID) }

// Len is the number of agents kept.
func (t *TreeTracker) Len() int { return len(t.agents) }

// DecisionID is agent `index`'s decision id in a batch numbered from
// `first` (a compact answer's decision_id_base): SplitMix64's finaliser of
// first + index.
func DecisionID(first uint64, index int) uint64 {
	z := first + uint64(index)
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// DecisionIDHex is an id as the full form and the decision log write it:
// 16 lowercase hex digits.
func DecisionIDHex(id uint64) string {
	const digits = "0123456789abcdef"
	var out [16]byte
	for i := 15; i >= 0; i-- {
		out[i] = digits[id&15]
		id >>= 4
	}
	return string(out[:])
}
