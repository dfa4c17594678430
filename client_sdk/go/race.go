package utilityd

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
)

// What to do after an attempt failed.
type next int

const (
	nextRetry next = iota
	nextFinal
	nextNothing
)

// onFailure classifies a failed attempt on r and tells the pool: overload
// with a hint holds the replica back and retries elsewhere; a replica down
// or draining is ejected and the batch retried; anything else is final.
// retryAfterMs < 0: no hint.
func (p *pool) onFailure(r *replica, e *Error, retryAfterMs int64) next {
	switch e.Code {
	case codes.ResourceExhausted:
		if retryAfterMs < 0 {
			return nextFinal // no retry can help (a batch too large)
		}
		p.pushBack(r, time.Duration(retryAfterMs)*time.Millisecond)
		return nextRetry
	case codes.Unavailable:
		p.eject(r, e.Message)
		return nextRetry
	case codes.Canceled, codes.DeadlineExceeded:
		return nextNothing
	}
	return nextFinal
}

// exhausted is the error of a batch no attempt answered, each replica
// named once with what it said last.
func exhausted(method string, code codes.Code, failures []string, deadline time.Duration,
	timedOut bool, attempts int) *Error {
	what := method + ": no replica answered"
	if timedOut {
		what = fmt.Sprintf("%s: no answer within %s", method, deadline)
	}
	if len(failures) > 0 {
		what += " (" + strings.Join(onceEach(failures), "; ") + ")"
	}
	return &Error{Code: code, Message: what, Attempts: attempts}
}

// onceEach keeps each replica's last failure, in the order replicas failed.
func onceEach(failures []string) []string {
	last := map[string]int{}
	var order []string
	for i, f := range failures {
		replica := f
		if k := strings.Index(f, ": "); k >= 0 {
			replica = f[:k]
		}
		if _, ok := last[replica]; !ok {
			order = append(order, replica)
		}
		last[replica] = i
	}
	out := make([]string, 0, len(order))
	for _, r := range order {
		out = append(out, failures[last[r]])
	}
	return out
}

type attemptResult[T any] struct {
	r        *replica
	value    T
	err      error
	pushback int64
}

// race runs one unary call by the contract: the first attempt on the next
// replica; past the attempt deadline its replica is ejected and the call
// raced on another (the first answer wins, the rest are cancelled);
// refusals for overload or unavailability retried on another replica after
// the hint, within max attempts and the retry budget.
func race[T any](ctx context.Context, p *pool, method string,
	call func(ctx context.Context, r *replica, opts ...grpc.CallOption) (T, error)) (T, CallInfo, error) {
	var zero T
	ctx, cancelAll := context.WithTimeout(ctx, p.opts.Deadline)
	defer cancelAll() // ends every attempt still running
	results := make(chan attemptResult[T], p.opts.MaxAttempts)
	var busy []*replica
	var failures []string
	lastCode := codes.Unavailable
	launched, outstanding := 0, 0
	var latest *replica
	var hedgeAt time.Time // zero: no hedge due
	launch := func(r *replica) {
		launched++
		outstanding++
		busy = append(busy, r)
		latest = r
		hedgeAt = time.Now().Add(p.opts.BatchDeadline)
		go func() {
			var trailer metadata.MD
			v, err := call(ctx, r, grpc.Trailer(&trailer))
			results <- attemptResult[T]{r: r, value: v, err: err, pushback: pushbackOf(trailer)}
		}()
	}
	p.budget.deposit()
	first := p.nextReplica(nil)
	if first.r == nil {
		return zero, CallInfo{}, &Error{Code: codes.Unavailable,
			Message: method + ": no replica for target " + p.opts.Target}
	}
	var queued pick
	if first.notBefore.After(time.Now()) {
		queued = first
	} else {
		launch(first.r)
	}
	for {
		var wait, hedge <-chan time.Time
		if queued.r != nil {
			wait = time.After(time.Until(queued.notBefore))
		} else if !hedgeAt.IsZero() {
			hedge = time.After(time.Until(hedgeAt))
		}
		retry := false
		select {
		case res := <-results:
			outstanding--
			busy = remove(busy, res.r)
			if res.r == latest {
				hedgeAt = time.Time{}
			}
			if res.err == nil {
				p.answered(res.r)
				return res.value, CallInfo{Attempts: launched, Replica: res.r.address}, nil
			}
			e := fromRPC(res.err)
			if e.Code == codes.Canceled || e.Code == codes.DeadlineExceeded {
				break // the deadline's doing
			}
			lastCode = e.Code
			failures = append(failures, res.r.address+": "+e.Message)
			switch p.onFailure(res.r, e, res.pushback) {
			case nextFinal:
				e.Attempts = launched
				return zero, CallInfo{Attempts: launched, Replica: res.r.address}, e
			case nextRetry:
				retry = true
			}
		case <-hedge:
			hedgeAt = time.Time{}
			limit := p.opts.BatchDeadline.String()
			p.eject(latest, "missed the attempt deadline of "+limit)
			failures = append(failures, latest.address+": no answer within "+limit)
			retry = true
		case <-wait:
			launch(queued.r)
			queued = pick{}
			continue
		case <-ctx.Done():
			return zero, CallInfo{Attempts: launched},
				exhausted(method, codes.DeadlineExceeded, failures, p.opts.Deadline, true, launched)
		}
		if retry && queued.r == nil && launched < p.opts.MaxAttempts && p.budget.withdraw() {
			if pk := p.nextReplica(busy); pk.r != nil {
				if pk.notBefore.After(time.Now()) {
					queued = pk
				} else {
					launch(pk.r)
				}
			}
		}
		if queued.r == nil && outstanding == 0 {
			return zero, CallInfo{Attempts: launched},
				exhausted(method, lastCode, failures, p.opts.Deadline, false, launched)
		}
	}
}

func remove(rs []*replica, r *replica) []*replica {
	for i, x := range rs {
		if x == r {
			return append(rs[:i], rs[i+1:]...)
		}
	}
	return rs
}

func pushbackOf(md metadata.MD) int64 {
	v := md.Get("grpc-retry-pushback-ms")
	if len(v) == 0 {
		return -1
	}
	n, err := strconv.ParseInt(v[0], 10, 64)
	if err != nil {
		return -1
	}
	return n
}
