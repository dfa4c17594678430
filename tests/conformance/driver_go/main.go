// The Go SDK's driver for the client conformance suite
// (tests/conformance/conformance.py says the protocol): a fixed AI tick,
// B batches a tick over a stream or as unary calls, one JSON line per tick
// and per settled batch.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	utilityd "github.com/utilityd/utilityd/client_sdk/go"
	pb "github.com/utilityd/utilityd/client_sdk/go/proto/utilitydv1"
)

var (
	target  = flag.String("target", "", "The replicas.")
	agents  = flag.Int("agents", 64, "Agents in all.")
	batches = flag.Int("batches", 4, "Batches a tick (an agent is always in one).")
	tickMs  = flag.Int("tick_ms", 100, "The AI tick.")
	ticks   = flag.Int("ticks", 60, "Ticks to run.")
	mode    = flag.String("mode", "stream", "stream or unary.")
	// false: the first batches go out before any replica was asked whether
	// it serves (a game server that starts sending at once).
	waitReady = flag.Bool("wait_ready", true, "Wait for a replica that serves first.")
)

var outMu sync.Mutex

func emit(v map[string]any) {
	line, _ := json.Marshal(v)
	outMu.Lock()
	os.Stdout.Write(append(line, '\n'))
	outMu.Unlock()
}

func nowMs() float64 { return float64(time.Now().UnixMicro()) / 1000 }

func batch(slot, tick int) *pb.DecideRequest {
	req := &pb.DecideRequest{}
	for a := slot; a < *agents; a += *batches {
		req.Agents = append(req.Agents, &pb.AgentSnapshot{
			AgentId:      fmt.Sprintf("forager-%d", a),
			BehaviourSet: "eat_hide_wander",
			NamedFactors: map[string]float32{
				"hunger":        float32((a*7+tick)%100) / 100,
				"danger":        float32((a*3+tick)%50) / 100,
				"food_distance": float32(a % 25),
				"idle_time":     float32(tick % 20),
			},
		})
	}
	return req
}

func report(id uint64, tick, slot int, sent float64, err error, info utilityd.CallInfo) {
	line := map[string]any{"batch": id, "tick": tick, "slot": slot, "sent": sent,
		"done": nowMs(), "ok": err == nil, "attempts": info.Attempts, "replica": info.Replica}
	if err != nil {
		line["error"] = err.Error()
	}
	emit(line)
}

func main() {
	flag.Parse()
	tick := time.Duration(*tickMs) * time.Millisecond
	client, err := utilityd.Connect(utilityd.Options{Target: *target, AITick: tick})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer client.Close()
	ctx := context.Background()
	ready, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if *waitReady {
		if err := client.WaitForReady(ready); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	// Warm the schema cache, as a game server does at start.
	if _, err := client.Schema(ctx, "eat_hide_wander"); err != nil {
		fmt.Fprintln(os.Stderr, "no schema for eat_hide_wander:", err)
		os.Exit(2)
	}
	var stream *utilityd.Stream
	if *mode == "stream" {
		stream = client.OpenStream(utilityd.StreamOptions{MaxInFlight: 1024})
	}
	var wg sync.WaitGroup
	start := time.Now()
	id := uint64(1)
	for t := 0; t < *ticks; t++ {
		time.Sleep(time.Until(start.Add(time.Duration(t) * tick)))
		emit(map[string]any{"tick": t, "at": nowMs()})
		for s := 0; s < *batches; s++ {
			req := batch(s, t)
			req.RequestId = id
			sent := nowMs()
			wg.Add(1)
			go func(id uint64, t, s int) {
				defer wg.Done()
				if stream != nil {
					r := stream.Decide(ctx, req)
					report(id, t, s, sent, r.Err, r.Info)
					return
				}
				var info utilityd.CallInfo
				_, err := client.Decide(ctx, req, utilityd.WithInfo(&info))
				report(id, t, s, sent, err, info)
			}(id, t, s)
			id++
		}
	}
	wg.Wait()
	if stream != nil {
		closing, cancel := context.WithTimeout(ctx, 10*time.Second)
		stream.Close(closing)
		cancel()
	}
	emit(map[string]any{"end": true})
}
