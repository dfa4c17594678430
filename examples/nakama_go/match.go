// Package match is what a Nakama Go runtime module does with utilityd: the
// match handler's MatchLoop, called by Nakama at the match's tick rate,
// decides every NPC of the match in one call with a deadline of one tick,
// and keeps each NPC's last action when a tick gets no answer. Nakama
// itself is not needed to run it: Run ticks the loop as Nakama's match
// goroutine would.
//
// In a real module the Client is made once in InitModule (it outlives
// matches, and its connections are shared) and the match keeps only its
// NPCs; see docs/GAME_SERVERS.md, "Nakama".
package match

import (
	"context"
	"fmt"
	"time"

	utilityd "github.com/utilityd/utilityd/client_sdk/go"
	pb "github.com/utilityd/utilityd/client_sdk/go/proto/utilitydv1"
)

// NPC is one non-player character of the match and what it remembers.
type NPC struct {
	ID     string
	Set    string // its behaviour set
	Action string // what it does now (kept when a tick gets no answer)
	// Fresh is the tick of its last decision.
	Fresh int
	needs map[string]float32
}

// Match is a match's state, as Nakama's MatchInit would return it.
type Match struct {
	Client *utilityd.Client
	NPCs   []*NPC
	Tick   time.Duration
	// Errors counts ticks that got no answer (the game went on with the
	// NPCs' last actions).
	Errors int
}

// NewMatch makes a match of foragers (eat_hide_wander) and villagers
// (villager_needs).
func NewMatch(client *utilityd.Client, foragers, villagers int, tick time.Duration) *Match {
	m := &Match{Client: client, Tick: tick}
	for i := 0; i < foragers; i++ {
		m.NPCs = append(m.NPCs, &NPC{ID: fmt.Sprintf("forager-%d", i), Set: "eat_hide_wander",
			Fresh: -1, needs: map[string]float32{"hunger": float32(i%10) / 10,
				"danger": float32(i%3) / 10, "food_distance": float32(i % 20), "idle_time": 0}})
	}
	for i := 0; i < villagers; i++ {
		m.NPCs = append(m.NPCs, &NPC{ID: fmt.Sprintf("villager-%d", i), Set: "villager_needs",
			Fresh: -1, needs: map[string]float32{"hunger": 0.5, "tiredness": float32(i%10) / 10,
				"loneliness": 0.3, "boredom": 0.2, "food_distance": 5, "bed_distance": 3,
				"friend_distance": 8, "toy_distance": 2}})
	}
	return m
}

// Loop is one MatchLoop call: the NPCs' needs move, every NPC is decided
// in one batch with a deadline of one tick, and the answers applied.
func (m *Match) Loop(ctx context.Context, tick int) {
	batch := &pb.DecideRequest{Agents: make([]*pb.AgentSnapshot, 0, len(m.NPCs))}
	for _, n := range m.NPCs {
		n.needs["hunger"] = clamp(n.needs["hunger"] + 0.01)
		if _, ok := n.needs["idle_time"]; ok {
			n.needs["idle_time"] = float32(tick % 20)
		}
		named := make(map[string]float32, len(n.needs))
		for k, v := range n.needs {
			named[k] = v
		}
		batch.Agents = append(batch.Agents, &pb.AgentSnapshot{AgentId: n.ID,
			BehaviourSet: n.Set, NamedFactors: named, CurrentAction: n.Action,
			Seed: uint64(tick)})
	}
	ctx, cancel := context.WithTimeout(ctx, m.Tick)
	defer cancel()
	resp, err := m.Client.Decide(ctx, batch)
	if err != nil {
		m.Errors++ // the NPCs keep their last actions this tick
		return
	}
	for i, d := range resp.GetDecisions() {
		if d.GetError() != nil {
			continue
		}
		n := m.NPCs[i]
		n.Action, n.Fresh = d.GetAction(), tick
		if n.Action == "eat" {
			n.needs["hunger"] = clamp(n.needs["hunger"] - 0.2)
		}
	}
}

// Run ticks the loop `ticks` times at the match's rate, as Nakama's match
// goroutine calls MatchLoop; before each tick, at(tick) lets a test act.
func (m *Match) Run(ctx context.Context, ticks int, at func(tick int)) {
	timer := time.NewTicker(m.Tick)
	defer timer.Stop()
	for t := 0; t < ticks; t++ {
		if at != nil {
			at(t)
		}
		m.Loop(ctx, t)
		select {
		case <-timer.C:
		case <-ctx.Done():
			return
		}
	}
}

func clamp(v float32) float32 {
	if v < 0 {
		return 0
	}
	if v > 1 {
		return 1
	}
	return v
}
