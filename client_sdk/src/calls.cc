#include "calls.h"

namespace utilityd::client::internal {

Next OnFailure(ReplicaPool& pool, const Replica& r, const absl::Status& s,
               int64_t retry_after_ms) {
  switch (s.code()) {
    case absl::StatusCode::kResourceExhausted:
      // Shedding: a hint means "not now" (go elsewhere, come back after
      // it); none, or -1, means no retry can help (a batch too large).
      if (retry_after_ms < 0) return Next::kFinal;
      pool.PushBack(r, absl::Milliseconds(retry_after_ms));
      return Next::kRetry;
    case absl::StatusCode::kUnavailable:
      pool.Eject(r, s.message());
      return Next::kRetry;
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kDeadlineExceeded:
      return Next::kNothing;
    default:
      return Next::kFinal;
  }
}

int64_t PushbackOf(const grpc::ClientContext& context) {
  const auto& trailers = context.GetServerTrailingMetadata();
  const auto it = trailers.find("grpc-retry-pushback-ms");
  int64_t pushback = -1;
  if (it == trailers.end() ||
      !absl::SimpleAtoi(absl::string_view(it->second.data(), it->second.size()),
                        &pushback)) {
    return -1;
  }
  return pushback;
}

absl::Status Exhausted(absl::string_view method, absl::StatusCode code,
                       const std::vector<std::string>& failures,
                       absl::Duration deadline, bool timed_out) {
  std::string what = timed_out ? absl::StrCat(method, ": no answer within ",
                                              absl::FormatDuration(deadline))
                               : absl::StrCat(method, ": no replica answered");
  if (!failures.empty()) {
    absl::StrAppend(&what, " (", absl::StrJoin(failures, "; "), ")");
  }
  return absl::Status(code, what);
}

// --- a batch of the stream ---------------------------------------------------

// How long Borrow waits for a free batch's last write to be reported done
// before making a new batch (a write a stalled replica holds).
constexpr absl::Duration kWriteWait = absl::Milliseconds(5);

// One batch slot: the request and result a StreamBatch shows, and what the
// stream keeps to settle it. Reused from batch to batch: its messages and
// vectors keep their capacity.
class StreamCore::Slot : public StreamBatch {
 public:
  enum class State { kFree, kLent, kPending, kRepairing, kDone };
  struct Attempt {
    Sub* sub;  // null once its stream ended or answered
    std::shared_ptr<Replica> replica;
  };

  // Ready for a new batch (the stream's lock held).
  void Lend() {
    state = State::kLent;
    returned = false;
    request_.Clear();
    result_.request_id = 0;
    result_.status = absl::OkStatus();
    result_.response.Clear();
    result_.info.attempts = 0;
    result_.info.replica.clear();
    attempts.clear();
    failures.clear();
    launched = 0;
    last_code = absl::StatusCode::kUnavailable;
    hedge_at = send_at = absl::InfiniteFuture();
    has_original = false;
  }
  v1::DecideRequest& request() { return request_; }
  BatchResult& result() { return result_; }

  State state = State::kFree;
  bool returned = false;  // given back before its result came
  // Submit's batches are settled into a promise and returned.
  std::optional<std::promise<BatchResult>> promise;
  // The request as the caller wrote it, kept when the SDK packed named
  // factors (a stale revision is repaired from it).
  bool has_original = false;
  v1::DecideRequest original;
  uint64_t id = 0;
  absl::Time deadline;
  absl::Time hedge_at = absl::InfiniteFuture();
  absl::Time send_at = absl::InfiniteFuture();  // a retry after pushback
  std::vector<Attempt> attempts;
  int launched = 0;
  std::vector<std::string> failures;
  absl::StatusCode last_code = absl::StatusCode::kUnavailable;
  // Writes of `request` queued or in progress on replica streams; the
  // slot is reused only when none is left. A leaf lock: nothing else is
  // taken while it is held.
  void AddWrite() {
    utilityd::MutexLock lock(&writes_mu);
    ++writes;
  }
  void WriteEnded() {
    utilityd::MutexLock lock(&writes_mu);
    --writes;
  }
  bool Written() {
    utilityd::MutexLock lock(&writes_mu);
    return writes == 0;
  }
  // True once no write is left, false after `timeout`.
  bool AwaitWritten(absl::Duration timeout) {
    utilityd::MutexLock lock(&writes_mu);
    return writes_mu.AwaitWithTimeout(
        [this]() ABSL_SHARED_LOCKS_REQUIRED(writes_mu) { return writes == 0; },
        timeout);
  }
  utilityd::Mutex writes_mu;
  int writes ABSL_GUARDED_BY(writes_mu) = 0;
};

// --- one replica's DecideStream ---------------------------------------------

class StreamCore::Sub
    : public grpc::ClientBidiReactor<v1::DecideRequest, v1::DecideResponse> {
 public:
  Sub(std::shared_ptr<StreamCore> core, std::shared_ptr<Replica> replica)
      : token_(core->pool_->Enter()),
        core_(std::move(core)),
        replica_(std::move(replica)) {
    // A replica still connecting (or coming back) is waited for; the
    // attempt deadline moves the batch elsewhere meanwhile.
    context_.set_wait_for_ready(true);
    replica_->stub->async()->DecideStream(&context_, this);
    // The worker writes from outside the reactions, so the call is held
    // open until its read fails: without the hold gRPC may finish the call
    // (and free what StartWrite uses) while the worker, which has not yet
    // seen OnDone, starts a write on it.
    AddHold();
    StartRead(&response_);
    StartCall();
  }
  ~Sub() override {
    for (size_t i = head_; i < queue_.size(); ++i) queue_[i]->WriteEnded();
  }

  const std::shared_ptr<Replica>& replica() const { return replica_; }

  // Queues a write of `slot`'s request (counted in slot->writes until done).
  // A stream whose call has ended takes nothing: its OnDone, which follows,
  // sends the batch elsewhere.
  void Send(Slot* slot) {
    utilityd::MutexLock lock(&mu_);
    if (ending_ || ended_) return;
    slot->AddWrite();
    if (head_ == queue_.size()) {
      queue_.clear();  // keeps its capacity
      head_ = 0;
    }
    queue_.push_back(slot);
    if (!writing_) {
      writing_ = true;
      StartWrite(&queue_[head_]->request());
    }
  }
  // Half-closes once the queued writes are out; the server then ends it.
  void End() {
    utilityd::MutexLock lock(&mu_);
    ending_ = true;
    if (!writing_ && !writes_done_ && !ended_) {
      writes_done_ = true;
      StartWritesDone();
    }
  }
  void Cancel() { context_.TryCancel(); }

  void OnWriteDone(bool ok) override {
    utilityd::MutexLock lock(&mu_);
    queue_[head_++]->WriteEnded();
    if (ok && head_ < queue_.size()) {
      StartWrite(&queue_[head_]->request());
      return;
    }
    writing_ = false;
    if (ok && ending_ && !writes_done_) {
      writes_done_ = true;
      StartWritesDone();
    }
  }
  void OnReadDone(bool ok) override {
    if (!ok) {
      // The call has ended: no write starts after this, and the hold goes,
      // so the call finishes once the writes in progress are done and
      // OnDone follows.
      {
        utilityd::MutexLock lock(&mu_);
        ended_ = true;
      }
      RemoveHold();
      return;
    }
    core_->OnAnswer(this, &response_);
    response_.Clear();
    StartRead(&response_);
  }
  void OnDone(const grpc::Status& status) override {
    // The token goes last, after this stream's channel and the core (whose
    // pool may hold the last channels).
    InFlight::Token token = std::move(token_);
    std::shared_ptr<StreamCore> core = std::move(core_);
    core->OnDone(this, status);
    delete this;
  }

 private:
  InFlight::Token token_;  // first: released after the channel
  std::shared_ptr<StreamCore> core_;
  const std::shared_ptr<Replica> replica_;
  grpc::ClientContext context_;
  v1::DecideResponse response_;
  utilityd::Mutex mu_;
  // Slots to write, from head_ on (a vector reused, not a deque that
  // allocates as it moves).
  std::vector<Slot*> queue_ ABSL_GUARDED_BY(mu_);
  size_t head_ ABSL_GUARDED_BY(mu_) = 0;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool ending_ ABSL_GUARDED_BY(mu_) = false;
  bool writes_done_ ABSL_GUARDED_BY(mu_) = false;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;  // its read failed: no new writes
};

// --- the stream over the replicas -------------------------------------------

StreamCore::StreamCore(Client* client, std::shared_ptr<ReplicaPool> pool,
                       StreamOptions options)
    : client_(client), pool_(std::move(pool)), options_(options) {
  {
    utilityd::MutexLock lock(&mu_);
    to_send_.reserve(options_.max_in_flight);
    ready_.reserve(options_.max_in_flight);
  }
  worker_ = std::thread([this] { Run(); });
}

StreamCore::~StreamCore() {
  if (worker_.joinable()) worker_.join();
}

int StreamCore::reconnects() const {
  utilityd::MutexLock lock(&mu_);
  return static_cast<int>(stats_.reconnects);
}

int StreamCore::in_flight() const {
  utilityd::MutexLock lock(&mu_);
  int n = 0;
  for (const auto& slot : slots_) {
    n += slot->state == Slot::State::kPending ||
         slot->state == Slot::State::kRepairing;
  }
  return n;
}

StreamStats StreamCore::Stats() const {
  utilityd::MutexLock lock(&mu_);
  StreamStats stats = stats_;
  for (const auto& [replica, sub] : subs_) {
    stats.replicas.push_back(replica->address);
  }
  return stats;
}

bool StreamCore::Unanswered() const {
  if (!to_send_.empty() || !ready_.empty()) return true;
  for (const auto& slot : slots_) {
    if (slot->state == Slot::State::kPending ||
        slot->state == Slot::State::kRepairing) {
      return true;
    }
  }
  return false;
}

StreamBatch* StreamCore::Borrow() {
  utilityd::MutexLock lock(&mu_);
  auto room = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return closing_ || out_ < options_.max_in_flight;
  };
  Slot* slot = nullptr;
  while (slot == nullptr) {
    mu_.Await(room);
    // A free slot whose writes are done; else one still being written
    // (an answer can come before gRPC reports its write done), waited for
    // briefly rather than making a new slot; else a new one.
    Slot* writing = nullptr;
    for (const auto& s : slots_) {
      if (s->state != Slot::State::kFree) continue;
      if (s->Written()) {
        slot = s.get();
        break;
      }
      writing = s.get();
    }
    if (slot != nullptr) break;
    if (writing != nullptr) {
      mu_.Unlock();
      const bool written = writing->AwaitWritten(kWriteWait);
      mu_.Lock();
      if (written) continue;  // look again: it may have been taken
    }
    slots_.push_back(std::make_unique<Slot>());
    slot = slots_.back().get();
  }
  slot->Lend();
  ++out_;
  return slot;
}

void StreamCore::Send(StreamBatch* batch) {
  Slot& b = *static_cast<Slot*>(batch);
  v1::DecideRequest& request = b.request();
  // Named factors are packed here (a schema lookup may call the service,
  // so outside the lock); the request as written is kept for a repair.
  bool named = false;
  for (const v1::AgentSnapshot& a : request.agents()) {
    named |= !a.named_factors().empty();
    for (const auto& t : a.targets()) named |= !t.named_factors().empty();
  }
  if (named) {
    b.original = request;
    b.has_original = true;
    client_->PackRequest(&request);
  }
  utilityd::MutexLock lock(&mu_);
  if (b.state != Slot::State::kLent) return;  // not borrowed, or sent
  if (request.request_id() == 0) request.set_request_id(next_id_);
  next_id_ = std::max(next_id_, request.request_id() + 1);
  b.id = request.request_id();
  b.result().request_id = b.id;
  b.state = Slot::State::kPending;
  ++stats_.batches;
  if (closing_) {
    Settle(b, absl::FailedPreconditionError("stream is closed"));
    return;
  }
  b.deadline = absl::Now() + pool_->options().deadline;
  pool_->budget().Deposit();
  to_send_.push_back(&b);  // the worker writes it (serialising it there)
}

std::future<BatchResult> StreamCore::Submit(v1::DecideRequest request) {
  auto* b = static_cast<Slot*>(Borrow());
  b->request().Swap(&request);
  std::future<BatchResult> future;
  {
    utilityd::MutexLock lock(&mu_);
    b->promise.emplace();
    future = b->promise->get_future();
  }
  Send(b);
  return future;
}

const BatchResult& StreamCore::Wait(StreamBatch* batch) {
  Slot& b = *static_cast<Slot*>(batch);
  utilityd::MutexLock lock(&mu_);
  auto done = [&b]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return b.state != Slot::State::kPending &&
           b.state != Slot::State::kRepairing;
  };
  mu_.Await(done);
  return b.result();
}

bool StreamCore::Ready(const StreamBatch* batch) const {
  const Slot& b = *static_cast<const Slot*>(batch);
  utilityd::MutexLock lock(&mu_);
  return b.state == Slot::State::kDone;
}

void StreamCore::Return(StreamBatch* batch) {
  Slot& b = *static_cast<Slot*>(batch);
  utilityd::MutexLock lock(&mu_);
  if (b.state == Slot::State::kPending || b.state == Slot::State::kRepairing) {
    b.returned = true;  // freed when it settles
    return;
  }
  if (b.state == Slot::State::kFree) return;
  b.state = Slot::State::kFree;
  --out_;
}

StreamCore::Slot* StreamCore::Pending(uint64_t id) {
  for (const auto& slot : slots_) {
    if (slot->state == Slot::State::kPending && slot->id == id) {
      return slot.get();
    }
  }
  return nullptr;
}

bool StreamCore::Dispatch(Slot& b) {
  std::vector<const Replica*> busy;
  for (const Slot::Attempt& a : b.attempts) {
    if (a.sub != nullptr) busy.push_back(a.replica.get());
  }
  Pick pick = pool_->Next(busy);
  if (pick.replica == nullptr) return false;
  const absl::Time now = absl::Now();
  if (pick.not_before > now) {
    b.send_at = pick.not_before;  // the worker sends it then
    return true;
  }
  Sub*& sub = subs_[pick.replica.get()];
  if (sub == nullptr) {
    sub = new Sub(shared_from_this(), pick.replica);
    ++live_subs_;
  }
  sub->Send(&b);
  b.attempts.push_back({sub, pick.replica});
  ++b.launched;
  b.hedge_at = now + pool_->attempt_deadline();
  return true;
}

void StreamCore::Retry(Slot& b) {
  // An attempt already waiting for its replica's pushback is the retry.
  if (b.send_at != absl::InfiniteFuture()) return;
  bool outstanding = false;
  for (const Slot::Attempt& a : b.attempts) outstanding |= a.sub != nullptr;
  if (b.launched < pool_->options().max_attempts &&
      pool_->budget().Withdraw() && Dispatch(b)) {
    return;
  }
  if (!outstanding) {
    Settle(b, Exhausted("Decide", b.last_code, b.failures,
                        pool_->options().deadline, false));
  }
}

void StreamCore::Settle(Slot& b, absl::Status status, const Replica* by) {
  BatchResult& r = b.result();
  r.status = std::move(status);
  r.response.Clear();
  r.info.attempts = b.launched;
  r.info.replica.clear();
  if (by != nullptr) r.info.replica = by->address;
  Complete(b);
}

void StreamCore::Complete(Slot& b) {
  b.state = Slot::State::kDone;
  b.send_at = b.hedge_at = absl::InfiniteFuture();
  for (Slot::Attempt& a : b.attempts) a.sub = nullptr;
  ++(b.result().status.ok() ? stats_.answered : stats_.failed);
  if (b.promise.has_value()) {  // Submit's: handed over, then returned
    b.promise->set_value(std::move(b.result()));
    b.promise.reset();
    b.returned = true;
  }
  if (b.returned) {
    b.state = Slot::State::kFree;
    --out_;
  }
}

void StreamCore::OnAnswer(Sub* sub, v1::DecideResponse* response) {
  utilityd::MutexLock lock(&mu_);
  Event& e = events_.emplace_back();
  e.replica = sub->replica();
  e.response.Swap(response);
}

void StreamCore::OnDone(Sub* sub, const grpc::Status& status) {
  utilityd::MutexLock lock(&mu_);
  const Replica* replica = sub->replica().get();
  if (auto it = subs_.find(replica); it != subs_.end() && it->second == sub) {
    subs_.erase(it);
  }
  --live_subs_;
  if (stopped_) return;
  ++stats_.reconnects;
  const absl::Status s = status.ok()
                             ? absl::UnavailableError("the stream ended")
                             : FromGrpcStatus(status);
  pool_->Eject(*sub->replica(), s.message());
  for (const auto& slot : slots_) {
    Slot& b = *slot;
    if (b.state != Slot::State::kPending) continue;
    bool was_here = false, other = false;
    for (Slot::Attempt& a : b.attempts) {
      if (a.sub == sub) {
        a.sub = nullptr;
        was_here = true;
      } else {
        other |= a.sub != nullptr;
      }
    }
    if (!was_here) continue;
    b.last_code = s.code();
    b.failures.push_back(
        absl::StrCat(sub->replica()->address, ": ", s.message()));
    // Sent again at once: the batch may never have reached the replica,
    // so this resend is not charged to the retry budget.
    if (!other && b.send_at == absl::InfiniteFuture()) {
      ++stats_.resent;
      if (b.launched >= pool_->options().max_attempts || !Dispatch(b)) {
        b.send_at = absl::InfiniteFuture();
        b.hedge_at = absl::InfiniteFuture();
        Retry(b);
      }
    }
  }
}

void StreamCore::HandleAnswer(const std::shared_ptr<Replica>& replica,
                              v1::DecideResponse* response) {
  // A refusal for overload, or a replica not serving, proves it alive but
  // not available.
  if (!response->has_error() ||
      (response->error().reason() != v1::ERROR_REASON_OVERLOADED &&
       response->error().code() != v1::ERROR_CODE_UNAVAILABLE)) {
    pool_->Answered(*replica);
  }
  Slot* slot = Pending(response->request_id());
  if (slot == nullptr) return;  // answered already (a hedge's twin)
  Slot& b = *slot;
  for (Slot::Attempt& a : b.attempts) {
    if (a.replica == replica) a.sub = nullptr;
  }
  if (response->has_error()) {
    const v1::Error& e = response->error();
    const absl::Status s(static_cast<absl::StatusCode>(e.code()), e.message());
    if (e.reason() == v1::ERROR_REASON_OVERLOADED) {
      b.last_code = s.code();
      b.failures.push_back(absl::StrCat(replica->address, ": ", s.message()));
      if (OnFailure(*pool_, *replica, s, e.retry_after_ms()) == Next::kRetry &&
          absl::Now() < b.deadline) {
        ++stats_.overload_retries;
        Retry(b);
        return;
      }
    }
    if (s.code() == absl::StatusCode::kUnavailable &&
        absl::Now() + pool_->attempt_deadline() < b.deadline) {
      // A replica not serving yet (loading its sets) or any more: the
      // batch was not decided. It goes again after an attempt deadline,
      // to another replica if one serves, uncharged, until its deadline.
      b.last_code = s.code();
      b.failures.push_back(absl::StrCat(replica->address, ": ", s.message()));
      pool_->Eject(*replica, s.message());
      b.send_at = absl::Now() + pool_->attempt_deadline();
      b.hedge_at = absl::InfiniteFuture();
      return;
    }
    Settle(b, s, replica.get());
    return;
  }
  BatchResult& r = b.result();
  r.status = absl::OkStatus();
  r.response.Swap(response);
  r.info.attempts = b.launched;
  r.info.replica = replica->address;
  b.send_at = b.hedge_at = absl::InfiniteFuture();
  if (b.has_original) {
    b.state = Slot::State::kRepairing;  // the worker repairs, then completes
    ready_.push_back(&b);
  } else {
    Complete(b);
  }
}

void StreamCore::Timers() {
  const absl::Time now = absl::Now();
  for (const auto& slot : slots_) {
    Slot& b = *slot;
    if (b.state != Slot::State::kPending) continue;
    if (now >= b.deadline) {
      Settle(b, Exhausted("Decide", absl::StatusCode::kDeadlineExceeded,
                          b.failures, pool_->options().deadline, true));
      continue;
    }
    if (b.send_at <= now) {
      b.send_at = absl::InfiniteFuture();
      if (!Dispatch(b)) Retry(b);
      continue;
    }
    if (b.hedge_at <= now) {
      b.hedge_at = absl::InfiniteFuture();
      const Slot::Attempt* latest = nullptr;
      for (const Slot::Attempt& a : b.attempts) {
        if (a.sub != nullptr) latest = &a;
      }
      if (latest == nullptr) continue;
      ++stats_.deadline_misses;
      const std::string why = absl::StrCat(
          "no answer within ", absl::FormatDuration(pool_->attempt_deadline()));
      pool_->Eject(*latest->replica, "missed the attempt deadline");
      b.failures.push_back(absl::StrCat(latest->replica->address, ": ", why));
      b.last_code = absl::StatusCode::kDeadlineExceeded;
      Retry(b);
    }
  }
}

void StreamCore::Run() {
  utilityd::MutexLock lock(&mu_);
  std::vector<Event> events;  // swapped with events_, both keep capacity
  std::vector<Slot*> batches;
  while (true) {
    absl::Time wake = absl::Now() + absl::Seconds(1);
    for (const auto& slot : slots_) {
      if (slot->state != Slot::State::kPending) continue;
      wake = std::min({wake, slot->deadline, slot->hedge_at, slot->send_at});
    }
    auto work = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return stopped_ || !events_.empty() || !ready_.empty() ||
             !to_send_.empty();
    };
    mu_.AwaitWithTimeout(work,
                         std::max(wake - absl::Now(), absl::ZeroDuration()));
    batches.swap(to_send_);
    for (Slot* b : batches) {
      if (b->state == Slot::State::kPending && !Dispatch(*b)) {
        Settle(*b, absl::UnavailableError("Decide: no replica for target " +
                                          pool_->options().target));
      }
    }
    batches.clear();
    events.swap(events_);
    for (Event& e : events) HandleAnswer(e.replica, &e.response);
    events.clear();
    if (!stopped_) Timers();
    batches.swap(ready_);
    if (!batches.empty()) {
      mu_.Unlock();
      // Agents refused for a stale revision are re-packed and asked again
      // (a unary call) before the batch's result is handed over.
      for (Slot* b : batches) {
        client_->RepairStale(b->original, &b->result().response);
      }
      mu_.Lock();
      for (Slot* b : batches) Complete(*b);
      batches.clear();
    }
    if (stopped_ && events_.empty() && ready_.empty() && to_send_.empty()) {
      return;
    }
  }
}

void StreamCore::Close(absl::Duration timeout) {
  {
    utilityd::MutexLock lock(&mu_);
    if (closing_) return;
    closing_ = true;
    auto drained = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return !Unanswered();
    };
    const bool clean = mu_.AwaitWithTimeout(drained, timeout);
    stopped_ = true;
    to_send_.clear();
    for (const auto& slot : slots_) {
      if (slot->state == Slot::State::kPending) {
        Settle(*slot, absl::UnavailableError(
                          "stream closed before an answer arrived"));
      }
    }
    for (auto& [replica, sub] : subs_) {
      if (clean) {
        sub->End();
      } else {
        sub->Cancel();
      }
    }
  }
  if (worker_.joinable()) worker_.join();
  utilityd::MutexLock lock(&mu_);
  auto gone = [this]()
                  ABSL_SHARED_LOCKS_REQUIRED(mu_) { return live_subs_ == 0; };
  if (!mu_.AwaitWithTimeout(gone, absl::Seconds(2))) {
    for (auto& [replica, sub] : subs_) sub->Cancel();
    mu_.Await(gone);
  }
}

}  // namespace utilityd::client::internal

namespace utilityd::client {

DecisionStream::DecisionStream(std::shared_ptr<internal::StreamCore> core)
    : core_(std::move(core)) {}

DecisionStream::~DecisionStream() { core_->Close(absl::Seconds(10)); }

std::future<BatchResult> DecisionStream::Submit(v1::DecideRequest request) {
  return core_->Submit(std::move(request));
}

StreamBatch* DecisionStream::Borrow() { return core_->Borrow(); }

void DecisionStream::Send(StreamBatch* batch) { core_->Send(batch); }

const BatchResult& DecisionStream::Wait(StreamBatch* batch) {
  return core_->Wait(batch);
}

bool DecisionStream::Ready(const StreamBatch* batch) const {
  return core_->Ready(batch);
}

void DecisionStream::Return(StreamBatch* batch) { core_->Return(batch); }

void DecisionStream::Close(absl::Duration timeout) { core_->Close(timeout); }

int DecisionStream::reconnects() const { return core_->reconnects(); }

int DecisionStream::in_flight() const { return core_->in_flight(); }

StreamStats DecisionStream::Stats() const { return core_->Stats(); }

}  // namespace utilityd::client
