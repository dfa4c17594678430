package utilityd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	pb "github.com/utilityd/utilityd/client_sdk/go/proto/utilitydv1"
)

// A real utilityd on loopback: UTILITYD_BINARY and UTILITYD_EXAMPLES (the
// example sets) name them; ctest sets both.
func startServer(t testing.TB, flags ...string) string {
	t.Helper()
	binary, sets := os.Getenv("UTILITYD_BINARY"), os.Getenv("UTILITYD_EXAMPLES")
	if binary == "" || sets == "" {
		if testing.Short() {
			t.Skip("UTILITYD_BINARY and UTILITYD_EXAMPLES are not set")
		}
		t.Fatal("UTILITYD_BINARY and UTILITYD_EXAMPLES must name the server and the example sets")
	}
	ports := filepath.Join(t.TempDir(), "ports")
	cmd := exec.Command(binary, append([]string{"--config_dir=" + sets,
		"--grpc_address=127.0.0.1:0", "--http_address=127.0.0.1:0",
		"--port_file=" + ports}, flags...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	for i := 0; i < 400; i++ {
		if f, err := os.Open(ports); err == nil {
			line, _ := bufio.NewReader(f).ReadString('\n')
			f.Close()
			if port := strings.TrimSpace(line); port != "" {
				return "127.0.0.1:" + port
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("utilityd did not start")
	return ""
}

func forager(id string, hunger, danger float32) *pb.AgentSnapshot {
	return &pb.AgentSnapshot{AgentId: id, BehaviourSet: "eat_hide_wander",
		NamedFactors: map[string]float32{"hunger": hunger, "danger": danger,
			"food_distance": 5, "idle_time": 2}}
}

func connect(t testing.TB, target string) *Client {
	t.Helper()
	c, err := Connect(Options{Target: target})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.WaitForReady(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestMalformedTargetsAreInvalidArgument(t *testing.T) {
	for _, target := range []string{"", "127.0.0.1", "a:1,b"} {
		_, err := Connect(Options{Target: target})
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Connect(%q) = %v, want an InvalidArgument error", target, err)
		}
		var e *Error
		if errors.As(err, &e) && e.Field != "target" {
			t.Errorf("Connect(%q) names %q, not target", target, e.Field)
		}
	}
}

func TestPackNamesWhatIsWrongAndLeavesTheAgentAlone(t *testing.T) {
	s := newSchema(&pb.BehaviourSetSummary{Name: "s", Revision: "r1",
		Factors: []string{"a", "b"}, TargetFactors: []string{"d"}})
	a := &pb.AgentSnapshot{NamedFactors: map[string]float32{"b": 2, "a": 1},
		Targets: []*pb.TargetSnapshot{{TargetId: "t", NamedFactors: map[string]float32{"d": 3}}}}
	if err := s.Pack(a); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(a.Factors) != "[1 2]" || fmt.Sprint(a.Targets[0].Factors) != "[3]" ||
		a.NamedFactors != nil || a.ExpectedRevision != "r1" {
		t.Errorf("packed %v", a)
	}
	bad := &pb.AgentSnapshot{NamedFactors: map[string]float32{"a": 1, "c": 9}}
	if err := s.Pack(bad); err == nil || !strings.Contains(err.Error(), `unknown factor "c"`) {
		t.Errorf("Pack = %v", err)
	}
	if len(bad.NamedFactors) != 2 || bad.ExpectedRevision != "" {
		t.Errorf("a failed pack changed the agent: %v", bad)
	}
	missing := &pb.AgentSnapshot{NamedFactors: map[string]float32{"a": 1}}
	if err := s.Pack(missing); err == nil || !strings.Contains(err.Error(), "missing b") {
		t.Errorf("Pack = %v", err)
	}
}

func TestErrorsMatchTheServicesReasons(t *testing.T) {
	e := errorOf(&pb.Error{Code: pb.ErrorCode(codes.ResourceExhausted),
		Reason: pb.ErrorReason_ERROR_REASON_OVERLOADED, Message: "full"})
	if !errors.Is(e, ErrOverloaded) || errors.Is(e, ErrStaleRevision) {
		t.Errorf("%v: Is(ErrOverloaded) false or Is(ErrStaleRevision) true", e)
	}
	if errors.Is(&Error{Code: codes.Unavailable}, ErrDeadlineExceeded) ||
		!errors.Is(&Error{Code: codes.Unavailable}, ErrUnavailable) {
		t.Error("codes do not match their sentinels")
	}
}

func TestDecidesAndStreamsAgainstARealReplica(t *testing.T) {
	c := connect(t, startServer(t))
	ctx := context.Background()
	req := &pb.DecideRequest{Agents: []*pb.AgentSnapshot{forager("f1", 0.9, 0.05)}}
	var info CallInfo
	resp, err := c.Decide(ctx, req, WithInfo(&info))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Decisions[0].GetAction(); got != "eat" {
		t.Errorf("a hungry forager in no danger chose %q, want eat", got)
	}
	if info.Attempts != 1 || info.Replica == "" {
		t.Errorf("info = %+v", info)
	}
	if len(req.Agents[0].Factors) != 0 {
		t.Error("Decide packed the caller's request in place")
	}

	stream := c.OpenStream(StreamOptions{MaxInFlight: 4})
	const n = 50
	var results []<-chan Result
	for i := 0; i < n; i++ {
		done, err := stream.Submit(ctx, &pb.DecideRequest{
			Agents: []*pb.AgentSnapshot{forager(fmt.Sprint("f", i), 0.1, 0.9)}})
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, done)
	}
	seen := map[uint64]bool{}
	for i, done := range results {
		r := <-done
		if r.Err != nil {
			t.Fatalf("batch %d: %v", i, r.Err)
		}
		if seen[r.RequestID] {
			t.Fatalf("request id %d answered twice", r.RequestID)
		}
		seen[r.RequestID] = true
		if got := r.Response.Decisions[0].GetAgentId(); got != fmt.Sprint("f", i) {
			t.Errorf("batch %d answered for %q", i, got)
		}
	}
	stats := stream.Stats()
	if stats.Batches != n || stats.Answered != n || len(stats.Replicas) != 1 {
		t.Errorf("stats = %+v", stats)
	}
	stream.Close(ctx)
	if r := stream.Decide(ctx, req); !errors.Is(r.Err, &Error{Code: codes.FailedPrecondition}) {
		t.Errorf("a closed stream answered %v", r.Err)
	}
}

func TestAnUnknownSetIsTheAgentsErrorNotTheBatchs(t *testing.T) {
	c := connect(t, startServer(t))
	a := forager("x", 0.5, 0.5)
	a.BehaviourSet = "no_such_set"
	resp, err := c.Decide(context.Background(), &pb.DecideRequest{
		Agents: []*pb.AgentSnapshot{a, forager("ok", 0.9, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	if e := errorOf(resp.Decisions[0].GetError()); !errors.Is(e, ErrUnknownSet) {
		t.Errorf("agent 0: %v, want the unknown set", e)
	}
	if resp.Decisions[1].GetError() != nil {
		t.Errorf("agent 1 lost its decision: %v", resp.Decisions[1].GetError())
	}
}

// Every goroutine a client and its streams start has ended after Close.
func TestCloseLeavesNoGoroutineBehind(t *testing.T) {
	target := startServer(t)
	before := runtime.NumGoroutine()
	for i := 0; i < 3; i++ {
		c, err := Connect(Options{Target: target + ",127.0.0.1:1"}) // one down
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := c.Decide(ctx, &pb.DecideRequest{
			Agents: []*pb.AgentSnapshot{forager("f", 0.9, 0)}}); err != nil {
			t.Fatal(err)
		}
		s := c.OpenStream(StreamOptions{})
		if r := s.Decide(ctx, &pb.DecideRequest{
			Agents: []*pb.AgentSnapshot{forager("f", 0.9, 0)}}); r.Err != nil {
			t.Fatal(r.Err)
		}
		s.Close(ctx)
		c.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines before, %d after:\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}

// A host name is resolved by the SDK into one replica per address; a name
// that does not resolve (yet) names no replica and is not an error.
func TestANameIsResolvedIntoReplicas(t *testing.T) {
	target := startServer(t)
	_, port, _ := strings.Cut(target, ":")
	if later, err := Connect(Options{Target: "dns:///no-such-host.invalid:" + port}); err != nil {
		t.Errorf("an unresolved name: %v", err)
	} else {
		if n := len(later.Replicas()); n != 0 {
			t.Errorf("an unresolved name made %d replicas", n)
		}
		later.Close()
	}
	ips, err := net.LookupHost("localhost")
	if err != nil || len(ips) == 0 {
		t.Skip("localhost does not resolve here (no /etc/hosts)")
	}
	c, err := Connect(Options{Target: "dns:///localhost:" + port})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	found := false
	for _, r := range c.Replicas() {
		found = found || r.Address == target
	}
	if !found {
		t.Fatalf("replicas %+v do not include %s", c.Replicas(), target)
	}
	if _, err := c.Decide(context.Background(), &pb.DecideRequest{
		Agents: []*pb.AgentSnapshot{forager("f", 0.9, 0)}}); err != nil {
		t.Error(err)
	}
}
