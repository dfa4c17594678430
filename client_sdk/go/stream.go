package utilityd

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	pb "github.com/utilityd/utilityd/client_sdk/go/proto/utilitydv1"
)

// StreamOptions configure a Stream.
type StreamOptions struct {
	// Submit blocks while this many batches are unanswered (default 8).
	MaxInFlight int
}

// Result is the outcome of one streamed batch: exactly one per batch.
type Result struct {
	RequestID uint64
	Response  *pb.DecideResponse // nil when Err is set
	Err       error              // an *Error
	Info      CallInfo
}

// StreamStats counts what a stream did, for the game's own metrics.
type StreamStats struct {
	Batches, Answered, Failed int64
	DeadlineMisses            int64 // attempts past the attempt deadline
	Resent                    int64 // batches sent again after a stream broke
	OverloadRetries           int64
	Reconnects                int64    // replica streams that broke while open
	Replicas                  []string // replicas with an open DecideStream
}

// Stream is a long-lived stream of batches over every healthy replica (a
// DecideStream per replica, opened when first used; batches round robin).
// A batch unanswered within the attempt deadline, or whose replica's
// stream breaks, is sent again on another replica's stream; the first
// answer wins. Safe for concurrent use.
type Stream struct {
	c    *Client
	p    *pool
	room chan struct{} // one token per batch in flight

	mu      sync.Mutex
	pending map[uint64]*batch
	subs    map[*replica]*sub
	nextID  uint64
	closing bool
	stopped bool
	stats   StreamStats

	wake    chan struct{}
	workers sync.WaitGroup // the timer loop, every sub's goroutines, repairs
}

type attempt struct {
	sub *sub // nil once its stream ended or answered
	r   *replica
}

type batch struct {
	id       uint64
	sent     *pb.DecideRequest
	original *pb.DecideRequest // as submitted, when the SDK packed it
	done     chan Result
	deadline time.Time
	hedgeAt  time.Time // zero: none due
	sendAt   time.Time // zero: none due (a retry after pushback)
	attempts []attempt
	launched int
	failures []string
	lastCode codes.Code
}

// OpenStream opens a stream (replica streams are opened when first used).
func (c *Client) OpenStream(opts StreamOptions) *Stream {
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = 8
	}
	s := &Stream{c: c, p: c.pool, room: make(chan struct{}, opts.MaxInFlight),
		pending: map[uint64]*batch{}, subs: map[*replica]*sub{}, nextID: 1,
		wake: make(chan struct{}, 1)}
	s.workers.Add(1)
	go s.timers()
	return s
}

// Submit sends a batch and returns the channel its one result arrives on.
// It blocks while MaxInFlight batches are unanswered, or until ctx ends.
// A RequestId of 0 is assigned (ids must be unique per stream).
func (s *Stream) Submit(ctx context.Context, req *pb.DecideRequest) (<-chan Result, error) {
	select {
	case s.room <- struct{}{}:
	case <-ctx.Done():
		return nil, fromRPC(ctx.Err())
	}
	sent, err := s.c.pack(ctx, req)
	if err != nil {
		<-s.room
		return nil, err
	}
	if sent == req {
		sent = proto.Clone(req).(*pb.DecideRequest) // the stream owns what it may send again
	}
	b := &batch{sent: sent, done: make(chan Result, 1), lastCode: codes.Unavailable}
	if hasNamed(req) && !s.c.opts.NoPacking {
		b.original = req
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sent.RequestId == 0 {
		sent.RequestId = s.nextID
	}
	if sent.RequestId >= s.nextID {
		s.nextID = sent.RequestId + 1
	}
	b.id = sent.RequestId
	s.stats.Batches++
	if s.closing {
		s.settle(b, &Error{Code: codes.FailedPrecondition, Message: "stream is closed"})
		return b.done, nil
	}
	b.deadline = time.Now().Add(s.p.opts.Deadline)
	s.pending[b.id] = b
	s.p.budget.deposit()
	if !s.dispatch(b) {
		s.settle(b, &Error{Code: codes.Unavailable,
			Message: "Decide: no replica for target " + s.p.opts.Target})
	}
	return b.done, nil
}

// Decide submits a batch and waits for its result.
func (s *Stream) Decide(ctx context.Context, req *pb.DecideRequest) Result {
	done, err := s.Submit(ctx, req)
	if err != nil {
		return Result{RequestID: req.GetRequestId(), Err: err}
	}
	return <-done
}

// dispatch sends b to the next replica; false when none can take it.
func (s *Stream) dispatch(b *batch) bool {
	var busy []*replica
	for _, a := range b.attempts {
		if a.sub != nil {
			busy = append(busy, a.r)
		}
	}
	pk := s.p.nextReplica(busy)
	if pk.r == nil {
		return false
	}
	now := time.Now()
	if pk.notBefore.After(now) {
		b.sendAt = pk.notBefore // the timer loop sends it then
		s.kick()
		return true
	}
	sb := s.subs[pk.r]
	if sb == nil {
		sb = s.newSub(pk.r)
		s.subs[pk.r] = sb
	}
	sb.send(b.sent)
	b.attempts = append(b.attempts, attempt{sub: sb, r: pk.r})
	b.launched++
	b.hedgeAt = now.Add(s.p.opts.BatchDeadline)
	s.kick()
	return true
}

func (s *Stream) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// retry makes another attempt of b if max attempts and the budget allow.
func (s *Stream) retry(b *batch) {
	if !b.sendAt.IsZero() {
		return // an attempt waiting for its replica's pushback is the retry
	}
	outstanding := false
	for _, a := range b.attempts {
		outstanding = outstanding || a.sub != nil
	}
	if b.launched < s.p.opts.MaxAttempts && s.p.budget.withdraw() && s.dispatch(b) {
		return
	}
	if !outstanding {
		s.settle(b, exhausted("Decide", b.lastCode, b.failures, s.p.opts.Deadline, false, b.launched))
	}
}

// settle ends b with an error; deliver hands over a result.
func (s *Stream) settle(b *batch, err *Error) {
	err.Attempts = b.launched
	s.deliver(b, Result{RequestID: b.id, Err: err, Info: CallInfo{Attempts: b.launched}})
}

func (s *Stream) deliver(b *batch, r Result) {
	if _, ok := s.pending[b.id]; ok {
		delete(s.pending, b.id)
	}
	if r.Err == nil {
		s.stats.Answered++
	} else {
		s.stats.Failed++
	}
	b.done <- r
	<-s.room
}

func (s *Stream) onAnswer(sb *sub, resp *pb.DecideResponse) {
	r := sb.r
	// A refusal for overload, or a replica not serving, proves it alive but
	// not available.
	overloaded := resp.GetError().GetReason() == pb.ErrorReason_ERROR_REASON_OVERLOADED
	if !overloaded && resp.GetError().GetCode() != pb.ErrorCode_ERROR_CODE_UNAVAILABLE {
		s.p.answered(r)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.pending[resp.GetRequestId()]
	if b == nil {
		return // answered already (a hedge's twin)
	}
	for i := range b.attempts {
		if b.attempts[i].r == r {
			b.attempts[i].sub = nil
		}
	}
	if resp.GetError() != nil {
		e := errorOf(resp.GetError())
		if overloaded {
			b.lastCode = e.Code
			b.failures = append(b.failures, r.address+": "+e.Message)
			if s.p.onFailure(r, e, resp.GetError().GetRetryAfterMs()) == nextRetry &&
				time.Now().Before(b.deadline) {
				s.stats.OverloadRetries++
				s.retry(b)
				return
			}
		}
		if e.Code == codes.Unavailable && time.Now().Add(s.p.opts.BatchDeadline).Before(b.deadline) {
			// A replica not serving yet (loading its sets) or any more: the
			// batch was not decided. It goes again after an attempt
			// deadline, to another replica if one serves, uncharged.
			b.lastCode = e.Code
			b.failures = append(b.failures, r.address+": "+e.Message)
			s.p.eject(r, e.Message)
			b.sendAt = time.Now().Add(s.p.opts.BatchDeadline)
			b.hedgeAt = time.Time{}
			s.kick()
			return
		}
		e.Attempts = b.launched
		s.deliver(b, Result{RequestID: b.id, Err: e, Info: CallInfo{b.launched, r.address}})
		return
	}
	result := Result{RequestID: b.id, Response: resp, Info: CallInfo{b.launched, r.address}}
	if b.original == nil {
		s.deliver(b, result)
		return
	}
	// Agents refused for a stale revision are re-packed and asked again
	// (a unary call) before the result is handed over.
	delete(s.pending, b.id)
	s.workers.Add(1)
	go func() {
		defer s.workers.Done()
		s.c.repairStale(context.Background(), b.original, resp)
		s.mu.Lock()
		s.pending[b.id] = b
		s.deliver(b, result)
		s.mu.Unlock()
	}()
}

func (s *Stream) onDone(sb *sub, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.subs[sb.r] == sb {
		delete(s.subs, sb.r)
	}
	if s.stopped {
		return
	}
	s.stats.Reconnects++
	e := fromRPC(err)
	if err == nil {
		e = &Error{Code: codes.Unavailable, Message: "the stream ended"}
	}
	s.p.eject(sb.r, e.Message)
	for _, b := range s.pending {
		wasHere, other := false, false
		for i := range b.attempts {
			if b.attempts[i].sub == sb {
				b.attempts[i].sub = nil
				wasHere = true
			} else if b.attempts[i].sub != nil {
				other = true
			}
		}
		if !wasHere {
			continue
		}
		b.lastCode = e.Code
		b.failures = append(b.failures, sb.r.address+": "+e.Message)
		// Sent again at once, not charged to the retry budget: it may
		// never have reached the replica.
		if !other && b.sendAt.IsZero() {
			s.stats.Resent++
			if b.launched >= s.p.opts.MaxAttempts || !s.dispatch(b) {
				b.hedgeAt = time.Time{}
				s.retry(b)
			}
		}
	}
}

// timers hedges batches past their attempt deadline, sends those whose
// pushback has passed, and ends those past their deadline.
func (s *Stream) timers() {
	defer s.workers.Done()
	for {
		s.mu.Lock()
		if s.stopped {
			s.mu.Unlock()
			return
		}
		now := time.Now()
		wake := now.Add(time.Second)
		for _, b := range s.pending {
			switch {
			case !now.Before(b.deadline):
				s.settle(b, exhausted("Decide", codes.DeadlineExceeded, b.failures,
					s.p.opts.Deadline, true, b.launched))
				continue
			case !b.sendAt.IsZero() && !now.Before(b.sendAt):
				b.sendAt = time.Time{}
				if !s.dispatch(b) {
					s.retry(b)
				}
			case !b.hedgeAt.IsZero() && !now.Before(b.hedgeAt):
				b.hedgeAt = time.Time{}
				var latest *attempt
				for i := range b.attempts {
					if b.attempts[i].sub != nil {
						latest = &b.attempts[i]
					}
				}
				if latest != nil {
					s.stats.DeadlineMisses++
					limit := s.p.opts.BatchDeadline.String()
					s.p.eject(latest.r, "missed the attempt deadline")
					b.failures = append(b.failures, latest.r.address+": no answer within "+limit)
					b.lastCode = codes.DeadlineExceeded
					s.retry(b)
				}
			}
			if _, ok := s.pending[b.id]; !ok {
				continue
			}
			for _, t := range []time.Time{b.deadline, b.hedgeAt, b.sendAt} {
				if !t.IsZero() && t.Before(wake) {
					wake = t
				}
			}
		}
		s.mu.Unlock()
		timer := time.NewTimer(time.Until(wake))
		select {
		case <-s.wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// Stats returns the stream's counters and the replicas it is on.
func (s *Stream) Stats() StreamStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Replicas = nil
	for r := range s.subs {
		st.Replicas = append(st.Replicas, r.address)
	}
	return st
}

// InFlight is the number of batches sent and not yet answered.
func (s *Stream) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// Close waits until ctx ends for every batch's result, then ends the
// stream: batches still unanswered get Unavailable. Every goroutine the
// stream started has ended when Close returns. Idempotent.
func (s *Stream) Close(ctx context.Context) {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return
	}
	s.closing = true
	s.mu.Unlock()
	clean := true
	for clean {
		s.mu.Lock()
		n := len(s.pending)
		s.mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case <-ctx.Done():
			clean = false
		case <-time.After(2 * time.Millisecond):
		}
	}
	s.mu.Lock()
	s.stopped = true
	for _, b := range s.pending {
		s.settle(b, &Error{Code: codes.Unavailable, Message: "stream closed before an answer arrived"})
	}
	for _, sb := range s.subs {
		if clean {
			sb.end()
		} else {
			sb.cancel()
		}
	}
	subs := make([]*sub, 0, len(s.subs))
	for _, sb := range s.subs {
		subs = append(subs, sb)
	}
	s.mu.Unlock()
	s.kick()
	// A replica that does not end its stream within 2 s is cut off.
	timer := time.AfterFunc(2*time.Second, func() {
		for _, sb := range subs {
			sb.cancel()
		}
	})
	s.workers.Wait()
	timer.Stop()
}

// --- one replica's DecideStream --------------------------------------------

type sub struct {
	s      *Stream
	r      *replica
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	queue  []*pb.DecideRequest
	ending bool
	kickc  chan struct{}
}

func (s *Stream) newSub(r *replica) *sub {
	ctx, cancel := context.WithCancel(context.Background())
	sb := &sub{s: s, r: r, ctx: ctx, cancel: cancel, kickc: make(chan struct{}, 1)}
	s.workers.Add(1)
	go sb.run()
	return sb
}

func (sb *sub) send(req *pb.DecideRequest) {
	sb.mu.Lock()
	if !sb.ending {
		sb.queue = append(sb.queue, req)
	}
	sb.mu.Unlock()
	sb.kick()
}

// end half-closes once the queued writes are out; the server then ends it.
func (sb *sub) end() {
	sb.mu.Lock()
	sb.ending = true
	sb.mu.Unlock()
	sb.kick()
}

func (sb *sub) kick() {
	select {
	case sb.kickc <- struct{}{}:
	default:
	}
}

// run opens the stream (waiting for the replica while the attempt deadline
// moves batches elsewhere), reads answers on one goroutine and writes
// queued batches on this one.
func (sb *sub) run() {
	defer sb.s.workers.Done()
	defer sb.cancel()
	stream, err := sb.r.stub.DecideStream(sb.ctx, grpc.WaitForReady(true))
	if err != nil {
		sb.s.onDone(sb, err)
		return
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		for {
			resp, err := stream.Recv()
			if err != nil {
				sb.cancel() // stops the writer
				if errors.Is(err, io.EOF) {
					err = nil
				}
				sb.s.onDone(sb, err)
				return
			}
			sb.s.onAnswer(sb, resp)
		}
	}()
	closed := false
	for {
		select {
		case <-sb.ctx.Done():
			<-readDone
			return
		case <-sb.kickc:
		}
		sb.mu.Lock()
		queue, ending := sb.queue, sb.ending
		sb.queue = nil
		sb.mu.Unlock()
		for _, req := range queue {
			if stream.Send(req) != nil {
				break // the reader sees why
			}
		}
		if ending && !closed {
			closed = true
			_ = stream.CloseSend()
		}
	}
}
