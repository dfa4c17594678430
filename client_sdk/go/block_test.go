package utilityd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	pb "github.com/utilityd/utilityd/client_sdk/go/proto/utilitydv1"
)

// A chunk of foragers (eat_hide_wander: hunger, danger, food_distance,
// idle_time), factor-major as an ECS keeps them.
type chunk struct {
	ids     []uint64
	factors []float32
	running []int32
}

func newChunk(rows int) *chunk {
	c := &chunk{ids: make([]uint64, rows), factors: make([]float32, 4*rows),
		running: make([]int32, rows)}
	for r := 0; r < rows; r++ {
		c.ids[r] = uint64(1000 + r)
		c.factors[0*rows+r] = float32(r%10) / 10
		c.factors[1*rows+r] = float32(r%7) / 10
		c.factors[2*rows+r] = float32(r % 25)
		c.factors[3*rows+r] = float32(r % 20)
		c.running[r] = int32(r%4) - 1
	}
	return c
}

func (c *chunk) columns() *BlockColumns {
	return &BlockColumns{BehaviourSet: "eat_hide_wander", AgentIDs: c.ids,
		Factors: c.factors, Layout: pb.FactorLayout_FACTOR_LAYOUT_COLUMNS,
		CurrentAction: c.running}
}

func TestBlocksDecideBitForBitAsSnapshots(t *testing.T) {
	c := connect(t, startServer(t))
	ctx := context.Background()
	schema, err := c.Schema(ctx, "eat_hide_wander")
	if err != nil {
		t.Fatal(err)
	}
	const rows = 300
	ch := newChunk(rows)
	block := &pb.AgentBlock{}
	columns := ch.columns()
	columns.FixedWidthIndices = true
	WriteBlock(columns, block)
	resp, err := c.Decide(ctx, &pb.DecideRequest{Blocks: []*pb.AgentBlock{block}})
	if err != nil {
		t.Fatal(err)
	}
	// The block asked for fixed-width indices: the server answered in
	// those columns only.
	if got := resp.Blocks[0]; len(got.ActionIndexFixed) != rows || len(got.ActionIndex) != 0 {
		t.Fatalf("indices: %d fixed-width, %d varint; want %d and 0",
			len(got.ActionIndexFixed), len(got.ActionIndex), rows)
	}
	out := BlockAnswers{ActionIndex: make([]int32, rows), Score: make([]float32, rows)}
	errs, err := ReadBlock(resp.Blocks[0], rows, out, nil)
	if err != nil || len(errs) > 0 {
		t.Fatal(err, errs)
	}
	req := &pb.DecideRequest{}
	for r := 0; r < rows; r++ {
		a := &pb.AgentSnapshot{AgentId: fmt.Sprint(ch.ids[r]), BehaviourSet: "eat_hide_wander",
			ExpectedRevision: schema.Revision()}
		for f := 0; f < 4; f++ {
			a.Factors = append(a.Factors, ch.factors[f*rows+r])
		}
		if ch.running[r] >= 0 {
			a.CurrentAction = schema.Summary.Actions[ch.running[r]]
		}
		req.Agents = append(req.Agents, a)
	}
	snap, err := c.Decide(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for r, d := range snap.Decisions {
		if got := schema.ActionIndex(d.GetAction()); got != int(out.ActionIndex[r]) ||
			math.Float32bits(d.GetScore()) != math.Float32bits(out.Score[r]) {
			t.Fatalf("row %d: block %d %v, snapshot %q %v", r, out.ActionIndex[r],
				out.Score[r], d.GetAction(), d.GetScore())
		}
	}
}

func TestReadBlockNamesAColumnOfTheWrongSize(t *testing.T) {
	answer := &pb.DecisionBlock{ActionIndex: []int32{0, 1}, TargetIndex: []int32{-1, -1},
		Score: []float32{1, 1}, Flags: []byte{0, 0}}
	_, err := ReadBlock(answer, 2, BlockAnswers{Score: make([]float32, 3)}, nil)
	var e *Error
	if !errors.As(err, &e) || e.Field != "BlockAnswers.Score" {
		t.Errorf("ReadBlock = %v, want an error naming BlockAnswers.Score", err)
	}
	if _, err := ReadBlock(answer, 3, BlockAnswers{}, nil); err == nil {
		t.Error("a 2-row answer read as 3 rows")
	}
}

// Writing a chunk into a kept block message and reading its answer back
// into the chunk's slices allocates nothing once warm, whatever the rows.
func TestBlocksAllocateNothingPerTickWhenWarm(t *testing.T) {
	for _, rows := range []int{64, 4096} {
		ch := newChunk(rows)
		block := &pb.AgentBlock{}
		answer := &pb.DecisionBlock{ActionIndex: make([]int32, rows),
			TargetIndex: make([]int32, rows), Score: make([]float32, rows),
			Flags: make([]byte, rows)}
		out := BlockAnswers{ActionIndex: make([]int32, rows), Score: make([]float32, rows)}
		in := ch.columns()
		var errs []RowError
		allocs := testing.AllocsPerRun(100, func() {
			WriteBlock(in, block)
			errs, _ = ReadBlock(answer, rows, out, errs)
		})
		if allocs != 0 {
			t.Errorf("%d rows: %v allocations a tick", rows, allocs)
		}
	}
}

// go test -bench Block1024 -benchmem: a 1,024-row block a batch over a
// stream to a real replica (UTILITYD_TARGET's, else one started here), one
// at a time; decisions/s and allocations per batch (bench/block_sdks.sh
// runs it beside the C++ SDK's).
func BenchmarkBlock1024(b *testing.B) {
	target := os.Getenv("UTILITYD_TARGET")
	if target == "" {
		target = startServer(b)
	}
	c := connect(b, target)
	ctx := context.Background()
	const rows = 1024
	ch := newChunk(rows)
	block := &pb.AgentBlock{}
	req := &pb.DecideRequest{Blocks: []*pb.AgentBlock{block}}
	out := BlockAnswers{ActionIndex: make([]int32, rows)}
	stream := c.OpenStream(StreamOptions{MaxInFlight: 1})
	defer stream.Close(ctx)
	var errs []RowError
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		WriteBlock(ch.columns(), block)
		req.RequestId = 0
		r := stream.Decide(ctx, req)
		if r.Err != nil {
			b.Fatal(r.Err)
		}
		if errs, r.Err = ReadBlock(r.Response.Blocks[0], rows, out, errs); r.Err != nil {
			b.Fatal(r.Err)
		}
	}
	b.ReportMetric(float64(b.N*rows)/time.Since(start).Seconds(), "decisions/s")
}
