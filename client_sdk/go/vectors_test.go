package utilityd

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"strconv"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/utilityd/utilityd/client_sdk/go/proto/utilitydv1"
)

// tests/vectors/client_sdk_vectors.json, which the C++ and TypeScript SDKs
// read too (its messages in the proto3 JSON form).
type vectors struct {
	DecisionIDs []struct {
		Base  string `json:"base"`
		Index int    `json:"index"`
		Hex   string `json:"hex"`
	} `json:"decisionIds"`
	Packing []struct {
		Name    string          `json:"name"`
		Summary json.RawMessage `json:"summary"`
		Given   json.RawMessage `json:"given"`
		Packed  json.RawMessage `json:"packed"`
		Error   string          `json:"error"`
	} `json:"packing"`
	Blocks []struct {
		Name  string          `json:"name"`
		Block json.RawMessage `json:"block"`
		Wire  string          `json:"wire"`
	} `json:"blocks"`
	Answers []struct {
		Name  string          `json:"name"`
		Block json.RawMessage `json:"block"`
		Wire  string          `json:"wire"`
	} `json:"answers"`
	Trees []struct {
		Name  string `json:"name"`
		Steps []struct {
			Prepare *struct {
				AgentID        string            `json:"agentId"`
				ExpectState    string            `json:"expectState"`
				ExpectOutcomes []json.RawMessage `json:"expectOutcomes"`
				ExpectRunning  int               `json:"expectRunning"`
			} `json:"prepare"`
			Update json.RawMessage `json:"update"`
			Report *struct {
				AgentID string `json:"agentId"`
				Leaf    int32  `json:"leaf"`
				Status  string `json:"status"`
			} `json:"report"`
			Forget *string `json:"forget"`
		} `json:"steps"`
	} `json:"trees"`
}

func load(t *testing.T) *vectors {
	t.Helper()
	data, err := os.ReadFile("../../tests/vectors/client_sdk_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.DecisionIDs) == 0 || len(v.Packing) == 0 || len(v.Blocks) == 0 ||
		len(v.Answers) == 0 || len(v.Trees) == 0 {
		t.Fatal("a section of the vectors is empty")
	}
	return &v
}

func parse(t *testing.T, raw json.RawMessage, m proto.Message) {
	t.Helper()
	if err := protojson.Unmarshal(raw, m); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
}

func TestVectorsDecisionIDs(t *testing.T) {
	for _, c := range load(t).DecisionIDs {
		base := uint64(0)
		if c.Base != "" {
			var err error
			if base, err = strconv.ParseUint(c.Base, 10, 64); err != nil {
				t.Fatal(err)
			}
		}
		if got := DecisionIDHex(DecisionID(base, c.Index)); got != c.Hex {
			t.Errorf("DecisionID(%d, %d) = %s, want %s", base, c.Index, got, c.Hex)
		}
	}
}

func TestVectorsPacking(t *testing.T) {
	for _, c := range load(t).Packing {
		summary, given, packed := &pb.BehaviourSetSummary{}, &pb.AgentSnapshot{}, &pb.AgentSnapshot{}
		parse(t, c.Summary, summary)
		parse(t, c.Given, given)
		a := proto.Clone(given).(*pb.AgentSnapshot)
		err := newSchema(summary).Pack(a)
		if c.Error != "" {
			if err == nil || err.Error() != c.Error {
				t.Errorf("%s: error %v, want %q", c.Name, err, c.Error)
			}
			if !proto.Equal(a, given) {
				t.Errorf("%s: a failed pack changed the agent", c.Name)
			}
			continue
		}
		parse(t, c.Packed, packed)
		if err != nil || !proto.Equal(a, packed) {
			t.Errorf("%s: %v\n got %v\nwant %v", c.Name, err, a, packed)
		}
	}
}

func TestVectorsBlocksEncodeToTheReferenceBytes(t *testing.T) {
	for _, c := range load(t).Blocks {
		b := &pb.AgentBlock{}
		parse(t, c.Block, b)
		in := &BlockColumns{BehaviourSet: b.BehaviourSet, ExpectedRevision: b.ExpectedRevision,
			AgentIDs: b.AgentIds, Factors: b.Factors, Layout: b.Layout,
			CurrentAction: b.CurrentAction, SecondsSinceAction: b.SecondsSinceAction,
			Seeds: b.Seeds, Personality: b.Personality, TargetOffsets: b.TargetOffsets,
			TargetFactors: b.TargetFactors, TargetIDs: b.TargetIds,
			CurrentTarget: b.CurrentTarget, ExplainRows: b.ExplainRows, GameTime: b.GameTime,
			TreeStateOffsets: b.TreeStateOffsets, TreeStates: b.TreeStates,
			OutcomeOffsets: b.OutcomeOffsets, OutcomeLeaves: b.OutcomeLeaves,
			OutcomeStatuses: b.OutcomeStatuses, HeldOffsets: b.HeldOffsets,
			HeldResources: b.HeldResources, HeldTargetIDs: b.HeldTargetIds,
			HeldAmounts: b.HeldAmounts, FixedWidthIndices: b.FixedWidthIndices}
		out := &pb.AgentBlock{}
		WriteBlock(in, out)
		wire, err := proto.MarshalOptions{Deterministic: true}.Marshal(out)
		want, _ := base64.StdEncoding.DecodeString(c.Wire)
		if err != nil || !bytes.Equal(wire, want) {
			t.Errorf("%s: %x, want %x", c.Name, wire, want)
		}
	}
}

func TestVectorsAnswersReadIntoTheCallersSlices(t *testing.T) {
	for _, c := range load(t).Answers {
		want := &pb.DecisionBlock{}
		parse(t, c.Block, want)
		wire, _ := base64.StdEncoding.DecodeString(c.Wire)
		answer := &pb.DecisionBlock{}
		if err := proto.Unmarshal(wire, answer); err != nil || !proto.Equal(answer, want) {
			t.Fatalf("%s: the wire does not parse to the block: %v", c.Name, err)
		}
		// The indices the reader must give: the fixed-width columns when
		// the answer has them.
		wantAction, wantTarget := want.ActionIndex, want.TargetIndex
		if len(want.ActionIndexFixed) > 0 {
			wantAction, wantTarget = want.ActionIndexFixed, want.TargetIndexFixed
		}
		rows := len(wantAction)
		out := BlockAnswers{ActionIndex: make([]int32, rows), TargetIndex: make([]int32, rows),
			Score: make([]float32, rows), Flags: make([]uint8, rows)}
		errs, err := ReadBlock(answer, rows, out, nil)
		if want.Error != nil {
			if err == nil || err.(*Error).Message != want.Error.Message {
				t.Errorf("%s: %v, want %q", c.Name, err, want.Error.Message)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for r := 0; r < rows; r++ {
			if out.ActionIndex[r] != wantAction[r] || out.TargetIndex[r] != wantTarget[r] ||
				out.Score[r] != want.Score[r] || out.Flags[r] != want.Flags[r] {
				t.Errorf("%s: row %d differs", c.Name, r)
			}
		}
		if len(errs) != len(want.Full) {
			t.Fatalf("%s: %d row errors, want %d", c.Name, len(errs), len(want.Full))
		}
		for k, e := range errs {
			if e.Row != int(want.Full[k].Agent) {
				t.Errorf("%s: error %d on row %d, want %d", c.Name, k, e.Row, want.Full[k].Agent)
			}
		}
	}
}

func TestVectorsTreeTracker(t *testing.T) {
	for _, c := range load(t).Trees {
		var trees TreeTracker
		for k, step := range c.Steps {
			switch {
			case step.Prepare != nil:
				p := step.Prepare
				s := &pb.AgentSnapshot{AgentId: p.AgentID}
				trees.Prepare(s)
				if got := base64.StdEncoding.EncodeToString(s.TreeState); got != p.ExpectState {
					t.Errorf("%s, step %d: state %q, want %q", c.Name, k, got, p.ExpectState)
				}
				if len(s.LeafOutcomes) != len(p.ExpectOutcomes) {
					t.Fatalf("%s, step %d: %d outcomes, want %d", c.Name, k,
						len(s.LeafOutcomes), len(p.ExpectOutcomes))
				}
				for o, raw := range p.ExpectOutcomes {
					want := &pb.LeafOutcome{}
					parse(t, raw, want)
					if !proto.Equal(s.LeafOutcomes[o], want) {
						t.Errorf("%s, step %d: outcome %d %v, want %v", c.Name, k, o,
							s.LeafOutcomes[o], want)
					}
				}
				if got := len(trees.Running(p.AgentID)); got != p.ExpectRunning {
					t.Errorf("%s, step %d: %d running, want %d", c.Name, k, got, p.ExpectRunning)
				}
			case step.Update != nil:
				d := &pb.Decision{}
				parse(t, step.Update, d)
				trees.Update(d)
			case step.Report != nil:
				trees.Report(step.Report.AgentID, step.Report.Leaf,
					pb.NodeStatus(pb.NodeStatus_value[step.Report.Status]))
			default:
				trees.Forget(*step.Forget)
			}
		}
	}
}
