package match

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	utilityd "github.com/utilityd/utilityd/client_sdk/go"
)

func startReplica(t *testing.T) (*exec.Cmd, string) {
	t.Helper()
	binary, sets := os.Getenv("UTILITYD_BINARY"), os.Getenv("UTILITYD_EXAMPLES")
	if binary == "" || sets == "" {
		t.Fatal("UTILITYD_BINARY and UTILITYD_EXAMPLES must name the server and the example sets")
	}
	ports := filepath.Join(t.TempDir(), "ports")
	cmd := exec.Command(binary, "--config_dir="+sets, "--grpc_address=127.0.0.1:0",
		"--http_address=127.0.0.1:0", "--port_file="+ports)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		cmd.Wait()
	})
	for i := 0; i < 400; i++ {
		if f, err := os.Open(ports); err == nil {
			line, _ := bufio.NewReader(f).ReadString('\n')
			f.Close()
			if port := strings.TrimSpace(line); port != "" {
				return cmd, "127.0.0.1:" + port
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("utilityd did not start")
	return nil, ""
}

// A match of 30 NPCs of two sets at 10 Hz against two replicas: one is
// frozen (SIGSTOP) for two seconds, then the other is killed. No NPC goes
// more than one tick without a fresh decision, and the match never stalls.
func TestMatchLoopRidesOutAFrozenAndAKilledReplica(t *testing.T) {
	a, addrA := startReplica(t)
	b, addrB := startReplica(t)
	const tick = 100 * time.Millisecond
	client, err := utilityd.Connect(utilityd.Options{Target: addrA + "," + addrB, AITick: tick})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx := context.Background()
	ready, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := client.WaitForReady(ready); err != nil {
		t.Fatal(err)
	}
	m := NewMatch(client, 20, 10, tick)
	last := make([]int, len(m.NPCs))
	worst := 0
	const ticks = 60
	start := time.Now()
	m.Run(ctx, ticks, func(tick int) {
		switch tick {
		case 10:
			a.Process.Signal(syscall.SIGSTOP)
		case 30:
			a.Process.Signal(syscall.SIGCONT)
		case 40:
			b.Process.Kill()
		}
		if tick == 0 {
			return
		}
		for i, n := range m.NPCs { // the ticks since each NPC's last decision
			if n.Fresh >= 0 {
				last[i] = n.Fresh
			}
			if gap := tick - 1 - last[i]; gap > worst {
				worst = gap
			}
		}
	})
	elapsed := time.Since(start)
	for i, n := range m.NPCs {
		if n.Fresh < ticks-2 {
			t.Errorf("%s: last decided at tick %d of %d", n.ID, n.Fresh, ticks)
		}
		if n.Action == "" {
			t.Errorf("%s never acted", m.NPCs[i].ID)
		}
	}
	if worst > 1 {
		t.Errorf("an NPC went %d ticks without a decision (at most 1)", worst)
	}
	if elapsed > time.Duration(ticks+5)*tick {
		t.Errorf("%d ticks took %s: the loop stalled", ticks, elapsed)
	}
	t.Logf("%d ticks, %d NPCs, %d ticks without an answer, worst gap %d, %s",
		ticks, len(m.NPCs), m.Errors, worst, elapsed)
}
