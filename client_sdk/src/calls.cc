#include "calls.h"

#include <deque>

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
    StartRead(&response_);
    StartCall();
  }

  const std::shared_ptr<Replica>& replica() const { return replica_; }

  void Send(std::shared_ptr<const v1::DecideRequest> request) {
    utilityd::MutexLock lock(&mu_);
    if (ending_) return;
    queue_.push_back(std::move(request));
    if (!writing_) {
      writing_ = true;
      StartWrite(queue_.front().get());
    }
  }
  // Half-closes once the queued writes are out; the server then ends it.
  void End() {
    utilityd::MutexLock lock(&mu_);
    ending_ = true;
    if (!writing_ && !writes_done_) {
      writes_done_ = true;
      StartWritesDone();
    }
  }
  void Cancel() { context_.TryCancel(); }

  void OnWriteDone(bool ok) override {
    utilityd::MutexLock lock(&mu_);
    queue_.pop_front();
    if (ok && !queue_.empty()) {
      StartWrite(queue_.front().get());
      return;
    }
    writing_ = false;
    if (ok && ending_ && !writes_done_) {
      writes_done_ = true;
      StartWritesDone();
    }
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;  // OnDone follows
    core_->OnAnswer(this, std::move(response_));
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
  std::deque<std::shared_ptr<const v1::DecideRequest>> queue_
      ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool ending_ ABSL_GUARDED_BY(mu_) = false;
  bool writes_done_ ABSL_GUARDED_BY(mu_) = false;
};

// --- the stream over the replicas -------------------------------------------

StreamCore::StreamCore(Client* client, std::shared_ptr<ReplicaPool> pool,
                       StreamOptions options)
    : client_(client), pool_(std::move(pool)), options_(options) {
  worker_ = std::thread([this] { Run(); });
}

StreamCore::~StreamCore() {
  if (worker_.joinable()) worker_.join();
}

int StreamCore::reconnects() const {
  utilityd::MutexLock lock(&mu_);
  return reconnects_;
}

int StreamCore::in_flight() const {
  utilityd::MutexLock lock(&mu_);
  return static_cast<int>(pending_.size() + ready_.size());
}

std::future<BatchResult> StreamCore::Submit(v1::DecideRequest request) {
  v1::DecideRequest original = request;
  client_->PackRequest(&request);
  utilityd::MutexLock lock(&mu_);
  auto room = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return closing_ || static_cast<int>(pending_.size() + ready_.size()) <
                           options_.max_in_flight;
  };
  mu_.Await(room);
  if (closing_) {
    std::promise<BatchResult> refused;
    refused.set_value({request.request_id(),
                       absl::FailedPreconditionError("stream is closed"),
                       {},
                       {}});
    return refused.get_future();
  }
  if (request.request_id() == 0) request.set_request_id(next_id_);
  next_id_ = std::max(next_id_, request.request_id() + 1);
  original.set_request_id(request.request_id());
  const uint64_t id = request.request_id();
  Batch& b = pending_[id];
  b.sent = std::make_shared<const v1::DecideRequest>(std::move(request));
  b.original = std::move(original);
  b.deadline = absl::Now() + pool_->options().deadline;
  std::future<BatchResult> future = b.promise.get_future();
  pool_->budget().Deposit();
  if (!Dispatch(id, b)) {
    Settle(id, {id,
                absl::UnavailableError("Decide: no replica for target " +
                                       pool_->options().target),
                {},
                {}});
  }
  return future;
}

bool StreamCore::Dispatch(uint64_t id, Batch& b) {
  (void)id;
  std::vector<const Replica*> busy;
  for (const Attempt& a : b.attempts) {
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
  sub->Send(b.sent);
  b.attempts.push_back({sub, pick.replica});
  ++b.launched;
  b.hedge_at = now + pool_->attempt_deadline();
  return true;
}

void StreamCore::Retry(uint64_t id, Batch& b) {
  // An attempt already waiting for its replica's pushback is the retry.
  if (b.send_at != absl::InfiniteFuture()) return;
  bool outstanding = false;
  for (const Attempt& a : b.attempts) outstanding |= a.sub != nullptr;
  if (b.launched < pool_->options().max_attempts &&
      pool_->budget().Withdraw() && Dispatch(id, b)) {
    return;
  }
  if (!outstanding) {
    Settle(id, {id,
                Exhausted("Decide", b.last_code, b.failures,
                          pool_->options().deadline, false),
                {},
                {b.launched, ""}});
  }
}

void StreamCore::Settle(uint64_t id, BatchResult result) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  it->second.promise.set_value(std::move(result));
  pending_.erase(it);
}

void StreamCore::OnAnswer(Sub* sub, v1::DecideResponse response) {
  utilityd::MutexLock lock(&mu_);
  events_.push_back({sub->replica(), std::move(response)});
}

void StreamCore::OnDone(Sub* sub, const grpc::Status& status) {
  utilityd::MutexLock lock(&mu_);
  const Replica* replica = sub->replica().get();
  if (auto it = subs_.find(replica); it != subs_.end() && it->second == sub) {
    subs_.erase(it);
  }
  --live_subs_;
  if (stopped_) return;
  ++reconnects_;
  const absl::Status s = status.ok()
                             ? absl::UnavailableError("the stream ended")
                             : FromGrpcStatus(status);
  pool_->Eject(*sub->replica(), s.message());
  for (auto& [id, b] : pending_) {
    bool was_here = false, other = false;
    for (Attempt& a : b.attempts) {
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
      if (b.launched >= pool_->options().max_attempts || !Dispatch(id, b)) {
        b.send_at = absl::InfiniteFuture();
        b.hedge_at = absl::InfiniteFuture();
        Retry(id, b);
      }
    }
  }
}

void StreamCore::HandleAnswer(const std::shared_ptr<Replica>& replica,
                              v1::DecideResponse response) {
  // A refusal for overload proves the replica alive but not available.
  if (!response.has_error() ||
      response.error().reason() != v1::ERROR_REASON_OVERLOADED) {
    pool_->Answered(*replica);
  }
  const uint64_t id = response.request_id();
  auto it = pending_.find(id);
  if (it == pending_.end()) return;  // answered already (a hedge's twin)
  Batch& b = it->second;
  for (Attempt& a : b.attempts) {
    if (a.replica == replica) a.sub = nullptr;
  }
  if (response.has_error()) {
    const v1::Error& e = response.error();
    const absl::Status s(static_cast<absl::StatusCode>(e.code()), e.message());
    const bool overloaded = e.reason() == v1::ERROR_REASON_OVERLOADED;
    if (overloaded) {
      b.last_code = s.code();
      b.failures.push_back(absl::StrCat(replica->address, ": ", s.message()));
      if (OnFailure(*pool_, *replica, s, e.retry_after_ms()) == Next::kRetry &&
          absl::Now() < b.deadline) {
        Retry(id, b);
        return;
      }
    }
    Settle(id, {id, s, {}, {b.launched, replica->address}});
    return;
  }
  BatchResult result{id,
                     absl::OkStatus(),
                     std::move(response),
                     {b.launched, replica->address}};
  ready_.emplace_back(std::move(b), std::move(result));
  pending_.erase(it);
}

void StreamCore::Timers() {
  const absl::Time now = absl::Now();
  std::vector<uint64_t> ids;
  for (auto& [id, b] : pending_) ids.push_back(id);
  for (uint64_t id : ids) {
    auto it = pending_.find(id);
    if (it == pending_.end()) continue;
    Batch& b = it->second;
    if (now >= b.deadline) {
      Settle(id, {id,
                  Exhausted("Decide", absl::StatusCode::kDeadlineExceeded,
                            b.failures, pool_->options().deadline, true),
                  {},
                  {b.launched, ""}});
      continue;
    }
    if (b.send_at <= now) {
      b.send_at = absl::InfiniteFuture();
      if (!Dispatch(id, b)) Retry(id, b);
      continue;
    }
    if (b.hedge_at <= now) {
      b.hedge_at = absl::InfiniteFuture();
      const Attempt* latest = nullptr;
      for (const Attempt& a : b.attempts) {
        if (a.sub != nullptr) latest = &a;
      }
      if (latest == nullptr) continue;
      const std::string why = absl::StrCat(
          "no answer within ", absl::FormatDuration(pool_->attempt_deadline()));
      pool_->Eject(*latest->replica, "missed the attempt deadline");
      b.failures.push_back(absl::StrCat(latest->replica->address, ": ", why));
      b.last_code = absl::StatusCode::kDeadlineExceeded;
      Retry(id, b);
    }
  }
}

void StreamCore::Run() {
  utilityd::MutexLock lock(&mu_);
  while (true) {
    absl::Time wake = absl::Now() + absl::Seconds(1);
    for (auto& [id, b] : pending_) {
      wake = std::min({wake, b.deadline, b.hedge_at, b.send_at});
    }
    auto work = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return stopped_ || !events_.empty() || !ready_.empty();
    };
    mu_.AwaitWithTimeout(work,
                         std::max(wake - absl::Now(), absl::ZeroDuration()));
    std::vector<Event> events;
    events.swap(events_);
    for (Event& e : events) HandleAnswer(e.replica, std::move(e.response));
    if (!stopped_) Timers();
    std::vector<std::pair<Batch, BatchResult>> ready;
    ready.swap(ready_);
    if (!ready.empty()) {
      mu_.Unlock();
      for (auto& [b, result] : ready) {
        // Agents refused for a stale revision are re-packed and asked
        // again (a unary call) before the batch's result is handed over.
        client_->RepairStale(b.original, &result.response);
        b.promise.set_value(std::move(result));
      }
      mu_.Lock();
    }
    if (stopped_ && events_.empty() && ready_.empty()) return;
  }
}

void StreamCore::Close(absl::Duration timeout) {
  std::map<uint64_t, Batch> abandoned;
  {
    utilityd::MutexLock lock(&mu_);
    if (closing_) return;
    closing_ = true;
    auto drained = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return pending_.empty() && ready_.empty();
    };
    const bool clean = mu_.AwaitWithTimeout(drained, timeout);
    stopped_ = true;
    abandoned.swap(pending_);
    for (auto& [replica, sub] : subs_) {
      if (clean) {
        sub->End();
      } else {
        sub->Cancel();
      }
    }
  }
  for (auto& [id, b] : abandoned) {
    b.promise.set_value(
        {id,
         absl::UnavailableError("stream closed before an answer arrived"),
         {},
         {b.launched, ""}});
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

void DecisionStream::Close(absl::Duration timeout) { core_->Close(timeout); }

int DecisionStream::reconnects() const { return core_->reconnects(); }

int DecisionStream::in_flight() const { return core_->in_flight(); }

}  // namespace utilityd::client
