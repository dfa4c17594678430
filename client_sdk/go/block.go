package utilityd

import (
	"fmt"

	"google.golang.org/grpc/codes"

	pb "github.com/utilityd/utilityd/client_sdk/go/proto/utilitydv1"
)

// BlockColumns is one block's input as the caller's own slices (an ECS
// chunk's components): rows = len(AgentIDs). Index spaces are the set's
// schema (Client.Schema): factors in Summary.Factors order, actions in
// Summary.Actions, personalities in Summary.Personalities, resources in
// Summary.Resources. An optional column left nil takes its default.
type BlockColumns struct {
	BehaviourSet string
	// The revision the indexes come from; a block whose set has another is
	// refused with FailedPrecondition. Empty: not checked.
	ExpectedRevision string
	AgentIDs         []uint64 // the game's entity ids
	// rows × factors: FACTOR_LAYOUT_ROWS, row r's factor f at r*factors+f;
	// FACTOR_LAYOUT_COLUMNS, at f*rows+r (a chunk's component arrays).
	Factors []float32
	Layout  pb.FactorLayout
	// Each row's running action index, -1 for none. Nil: none runs.
	CurrentAction []int32
	// Seconds since each action last ended, rows × actions, row-major; NaN
	// or +Inf: not recently. Nil: none ended recently.
	SecondsSinceAction []float32
	Seeds              []uint64 // nil: 0 for every row
	Personality        []int32  // index, -1 none; nil: none
	// Targets: row r's are numbers TargetOffsets[r] to TargetOffsets[r+1]
	// (rows + 1 offsets), TargetFactors target after target, TargetIDs one
	// per target (nil: numbered within the row), CurrentTarget a number
	// within the row's targets (-1 not given, -2 gone; nil: -1 each).
	TargetOffsets []uint32
	TargetFactors []float32
	TargetIDs     []uint64
	CurrentTarget []int32
	// Rows explained at the request's level (answered in the block's Full).
	ExplainRows []uint32
	// Behaviour trees: the tick's game time, each row's state (the last
	// answer's columns, CarryTreeState) and its leaves' outcomes.
	GameTime         float64
	TreeStateOffsets []uint32
	TreeStates       []byte
	OutcomeOffsets   []uint32
	OutcomeLeaves    []int32
	OutcomeStatuses  []pb.NodeStatus
	// Coordination: what each row holds (the last answer's grants,
	// CarryHeld).
	HeldOffsets   []uint32
	HeldResources []uint32
	HeldTargetIDs []uint64
	HeldAmounts   []uint32
	// Ask for the answer's indices in fixed-width columns
	// (AgentBlock.FixedWidthIndices, docs/SERVICE.md "Blocks"): fewer
	// instructions on the server for 6 more bytes a row. ReadBlock reads
	// either form.
	FixedWidthIndices bool
}

// WriteBlock copies `in` into `out`, reusing out's slices: a block message
// kept from tick to tick allocates nothing once its columns have grown to
// the chunk's size.
func WriteBlock(in *BlockColumns, out *pb.AgentBlock) {
	out.BehaviourSet = in.BehaviourSet
	out.ExpectedRevision = in.ExpectedRevision
	out.Layout = in.Layout
	out.AgentIds = append(out.AgentIds[:0], in.AgentIDs...)
	out.Factors = append(out.Factors[:0], in.Factors...)
	out.CurrentAction = append(out.CurrentAction[:0], in.CurrentAction...)
	out.SecondsSinceAction = append(out.SecondsSinceAction[:0], in.SecondsSinceAction...)
	out.Seeds = append(out.Seeds[:0], in.Seeds...)
	out.Personality = append(out.Personality[:0], in.Personality...)
	out.TargetOffsets = append(out.TargetOffsets[:0], in.TargetOffsets...)
	out.TargetFactors = append(out.TargetFactors[:0], in.TargetFactors...)
	out.TargetIds = append(out.TargetIds[:0], in.TargetIDs...)
	out.CurrentTarget = append(out.CurrentTarget[:0], in.CurrentTarget...)
	out.ExplainRows = append(out.ExplainRows[:0], in.ExplainRows...)
	out.GameTime = in.GameTime
	out.TreeStateOffsets = append(out.TreeStateOffsets[:0], in.TreeStateOffsets...)
	out.TreeStates = append(out.TreeStates[:0], in.TreeStates...)
	out.OutcomeOffsets = append(out.OutcomeOffsets[:0], in.OutcomeOffsets...)
	out.OutcomeLeaves = append(out.OutcomeLeaves[:0], in.OutcomeLeaves...)
	out.OutcomeStatuses = append(out.OutcomeStatuses[:0], in.OutcomeStatuses...)
	out.HeldOffsets = append(out.HeldOffsets[:0], in.HeldOffsets...)
	out.HeldResources = append(out.HeldResources[:0], in.HeldResources...)
	out.HeldTargetIds = append(out.HeldTargetIds[:0], in.HeldTargetIDs...)
	out.HeldAmounts = append(out.HeldAmounts[:0], in.HeldAmounts...)
	out.FixedWidthIndices = in.FixedWidthIndices
}

// CarryTreeState makes a tree block's answer state the next tick's input.
func CarryTreeState(answer *pb.DecisionBlock, next *BlockColumns) {
	next.TreeStateOffsets = append(next.TreeStateOffsets[:0], answer.GetTreeStateOffsets()...)
	next.TreeStates = append(next.TreeStates[:0], answer.GetTreeStates()...)
}

// CarryHeld makes what a coordinated block's answer granted each row what
// the row holds next tick.
func CarryHeld(answer *pb.DecisionBlock, next *BlockColumns) {
	next.HeldOffsets = append(next.HeldOffsets[:0], answer.GetGrantOffsets()...)
	next.HeldResources = append(next.HeldResources[:0], answer.GetGrantResources()...)
	next.HeldTargetIDs = append(next.HeldTargetIDs[:0], answer.GetGrantTargetIds()...)
	next.HeldAmounts = append(next.HeldAmounts[:0], answer.GetGrantAmounts()...)
}

// BlockAnswers are where one block's decisions go, each sized for the
// block's rows; a nil column is not written.
type BlockAnswers struct {
	ActionIndex []int32 // index in Summary.Actions; -1: not decided
	TargetIndex []int32 // number within the row's targets; -1: none
	Score       []float32
	Flags       []uint8 // sums of pb.CompactFlag
}

// RowError is a row that was not decided, and why.
type RowError struct {
	Row int
	Err *Error
}

// ReadBlock copies the decisions of `answer`, a block of `rows` rows, into
// `out` (its indices from the fixed-width columns or the varint ones,
// whichever the server answered in), and appends the rows that failed to
// `errs` (returned). The block's own error when the service refused it;
// InvalidArgument when the answer does not have `rows` rows or a column of
// out is not sized for it.
func ReadBlock(answer *pb.DecisionBlock, rows int, out BlockAnswers, errs []RowError) ([]RowError, error) {
	errs = errs[:0]
	if answer.GetError() != nil {
		return errs, errorOf(answer.GetError())
	}
	// The fixed-width index columns when the server answered in them (the
	// block asked), else the varint ones.
	actions, targets := answer.GetActionIndex(), answer.GetTargetIndex()
	if len(answer.GetActionIndexFixed()) > 0 || len(answer.GetTargetIndexFixed()) > 0 {
		actions, targets = answer.GetActionIndexFixed(), answer.GetTargetIndexFixed()
	}
	if len(actions) != rows || len(targets) != rows ||
		len(answer.GetScore()) != rows || len(answer.GetFlags()) != rows {
		return errs, &Error{Code: codes.InvalidArgument, Message: fmt.Sprintf(
			"DecisionBlock: expected %d rows in every column, got %d actions, %d targets, %d scores, %d flags",
			rows, len(actions), len(targets), len(answer.GetScore()), len(answer.GetFlags()))}
	}
	for _, c := range []struct {
		name string
		n    int
	}{{"ActionIndex", len(out.ActionIndex)}, {"TargetIndex", len(out.TargetIndex)},
		{"Score", len(out.Score)}, {"Flags", len(out.Flags)}} {
		if c.n != 0 && c.n != rows {
			return errs, &Error{Code: codes.InvalidArgument, Field: "BlockAnswers." + c.name,
				Message: fmt.Sprintf("sized for %d rows, the block has %d", c.n, rows)}
		}
	}
	copy(out.ActionIndex, actions)
	copy(out.TargetIndex, targets)
	copy(out.Score, answer.GetScore())
	copy(out.Flags, answer.GetFlags())
	for _, x := range answer.GetFull() {
		if e := x.GetDecision().GetError(); e != nil {
			errs = append(errs, RowError{Row: int(x.GetAgent()), Err: errorOf(e)})
		}
	}
	return errs, nil
}
