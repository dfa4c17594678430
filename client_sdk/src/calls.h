// How the SDK sends a batch (internal): unary calls raced across replicas
// (CallHedged) and the stream over every replica (StreamCore), both by the
// contract in docs/CLIENTS.md.
#ifndef UTILITYD_CLIENT_SRC_CALLS_H_
#define UTILITYD_CLIENT_SRC_CALLS_H_

#include <grpcpp/client_context.h>
#include <grpcpp/support/client_callback.h>

#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "replicas.h"
#include "utilityd/base/sync.h"
#include "utilityd/client/client.h"

namespace utilityd::client::internal {

inline std::chrono::system_clock::time_point ToChrono(absl::Time t) {
  return absl::ToChronoTime(t);
}

// What to do after an attempt failed.
enum class Next { kRetry, kFinal, kNothing };

// Classifies a failed attempt on `r` and reports it to the pool: overload
// with a retry hint pushes the replica back and retries elsewhere; a
// replica that is down or draining is ejected and the batch retried; a
// refusal of the request itself is final. `retry_after` < 0 means no hint.
Next OnFailure(ReplicaPool& pool, const Replica& r, const absl::Status& s,
               int64_t retry_after_ms);

// The failure of a batch no attempt answered, naming each replica once.
absl::Status Exhausted(absl::string_view method, absl::StatusCode code,
                       const std::vector<std::string>& failures,
                       absl::Duration deadline, bool timed_out);

// The pushback a refused attempt's trailers carry, -1 when none.
int64_t PushbackOf(const grpc::ClientContext& context);

// One unary call by the contract: the first attempt on the next replica;
// when it has no answer within the attempt deadline, its replica is
// ejected and the call is raced on another (the first answer wins, the
// rest are cancelled); refusals for overload or unavailability are retried
// on another replica after the pushback; attempts stay within
// max_attempts and the retry budget, and the whole within the deadline.
// `start(stub, context, request, response, done)` starts the gRPC call.
template <typename Resp, typename Req, typename Start>
class UnaryRace {
 public:
  UnaryRace(std::shared_ptr<ReplicaPool> pool, absl::string_view method,
            const Req& request, Start start, CallInfo* info)
      : pool_(std::move(pool)),
        method_(method),
        start_(std::move(start)),
        info_(info),
        race_(std::make_shared<Race>()),
        deadline_(absl::Now() + pool_->options().deadline) {
    race_->request = request;
  }

  absl::StatusOr<Resp> Run() {
    pool_->budget().Deposit();
    queued_ = pool_->Next({});
    if (queued_.replica == nullptr) {
      return absl::UnavailableError(absl::StrCat(
          method_, ": no replica for target ", pool_->options().target));
    }
    while (true) {
      if (queued_.replica != nullptr && queued_.not_before <= absl::Now()) {
        Launch(std::move(queued_.replica));
        queued_ = {};
      }
      int outstanding = 0;
      bool retry = false;
      for (auto& a : Ended(&outstanding)) {
        if (a->status.ok()) return Finish(std::move(a->response), a.get());
        if (std::optional<absl::Status> final = Failed(*a, &retry)) {
          return Finish(*final, nullptr);
        }
      }
      if (absl::Now() >= deadline_) {
        return Finish(Exhausted(method_, absl::StatusCode::kDeadlineExceeded,
                                failures_, pool_->options().deadline, true),
                      nullptr);
      }
      const bool missed = outstanding > 0 && absl::Now() >= hedge_at_;
      if (missed) Missed();
      if ((retry || missed) && queued_.replica == nullptr &&
          launched_ < pool_->options().max_attempts &&
          pool_->budget().Withdraw()) {
        queued_ = pool_->Next(Busy());
      }
      if (queued_.replica == nullptr && outstanding == 0) {
        // Nothing in flight and nothing more to try.
        return Finish(Exhausted(method_, last_code_, failures_,
                                pool_->options().deadline, false),
                      nullptr);
      }
    }
  }

 private:
  struct Attempt {
    InFlight::Token token;  // first: released after the channel
    std::shared_ptr<Replica> replica;
    grpc::ClientContext context;
    Resp response;
    grpc::Status status;
    bool done = false;
    bool handled = false;
  };
  struct Race {
    utilityd::Mutex mu;
    Req request;
    std::vector<std::shared_ptr<Attempt>> attempts ABSL_GUARDED_BY(mu);
  };

  void Launch(std::shared_ptr<Replica> replica) {
    auto a = std::make_shared<Attempt>();
    a->token = pool_->Enter();
    a->replica = std::move(replica);
    a->context.set_deadline(ToChrono(deadline_));
    {
      utilityd::MutexLock lock(&race_->mu);
      race_->attempts.push_back(a);
    }
    ++launched_;
    latest_ = a;
    hedge_at_ = absl::Now() + pool_->attempt_deadline();
    std::weak_ptr<ReplicaPool> weak = pool_;
    start_(*a->replica->stub, &a->context, &race_->request, &a->response,
           [race = race_, a, weak](grpc::Status s) {
             // A late answer still proves its replica alive.
             if (s.ok()) {
               if (auto p = weak.lock()) p->Answered(*a->replica);
             }
             utilityd::MutexLock lock(&race->mu);
             a->status = std::move(s);
             a->done = true;
           });
  }

  // Waits for an attempt to end, the next hedge, a pushback or the
  // deadline; returns the attempts that ended since last asked.
  std::vector<std::shared_ptr<Attempt>> Ended(int* outstanding) {
    absl::Time wake = deadline_;
    wake = std::min(
        wake, queued_.replica != nullptr ? queued_.not_before : hedge_at_);
    std::vector<std::shared_ptr<Attempt>> ended;
    utilityd::MutexLock lock(&race_->mu);
    auto any_ended = [&]() ABSL_SHARED_LOCKS_REQUIRED(race_->mu) {
      for (auto& a : race_->attempts) {
        if (a->done && !a->handled) return true;
      }
      return false;
    };
    race_->mu.AwaitWithTimeout(
        any_ended, std::max(wake - absl::Now(), absl::ZeroDuration()));
    for (auto& a : race_->attempts) {
      if (a->done && !a->handled) {
        a->handled = true;
        ended.push_back(a);
      } else if (!a->done) {
        ++*outstanding;
      }
    }
    return ended;
  }

  // A failed attempt: the call's final status, or none (and whether to
  // retry).
  std::optional<absl::Status> Failed(Attempt& a, bool* retry) {
    const absl::Status s = FromGrpcStatus(a.status);
    if (s.code() == absl::StatusCode::kCancelled ||
        s.code() == absl::StatusCode::kDeadlineExceeded) {
      return std::nullopt;  // the deadline's doing; settled by Run
    }
    last_code_ = s.code();
    failures_.push_back(absl::StrCat(a.replica->address, ": ", s.message()));
    switch (OnFailure(*pool_, *a.replica, s, PushbackOf(a.context))) {
      case Next::kFinal:
        return s;
      case Next::kRetry:
        *retry = true;
        break;
      case Next::kNothing:
        break;
    }
    return std::nullopt;
  }

  // The latest attempt missed the attempt deadline.
  void Missed() {
    const std::string limit = absl::FormatDuration(pool_->attempt_deadline());
    pool_->Eject(*latest_->replica,
                 absl::StrCat("missed the attempt deadline of ", limit));
    failures_.push_back(
        absl::StrCat(latest_->replica->address, ": no answer within ", limit));
    hedge_at_ = absl::InfiniteFuture();
  }

  std::vector<const Replica*> Busy() {
    std::vector<const Replica*> busy;
    utilityd::MutexLock lock(&race_->mu);
    for (auto& a : race_->attempts) {
      if (!a->done) busy.push_back(a->replica.get());
    }
    return busy;
  }

  absl::StatusOr<Resp> Finish(absl::StatusOr<Resp> result,
                              const Attempt* winner) {
    utilityd::MutexLock lock(&race_->mu);
    for (auto& a : race_->attempts) {
      if (!a->done) a->context.TryCancel();
    }
    if (info_ != nullptr) {
      info_->attempts = launched_;
      info_->replica = winner != nullptr ? winner->replica->address : "";
    }
    return result;
  }

  const std::shared_ptr<ReplicaPool> pool_;
  const std::string method_;
  Start start_;
  CallInfo* const info_;
  const std::shared_ptr<Race> race_;
  const absl::Time deadline_;
  absl::Time hedge_at_ = absl::InfiniteFuture();
  Pick queued_;  // the next attempt, waiting for its replica's pushback
  std::vector<std::string> failures_;
  absl::StatusCode last_code_ = absl::StatusCode::kUnavailable;
  int launched_ = 0;
  std::shared_ptr<Attempt> latest_;
};

template <typename Resp, typename Req, typename Start>
absl::StatusOr<Resp> CallHedged(const std::shared_ptr<ReplicaPool>& pool,
                                absl::string_view method, const Req& request,
                                Start start, CallInfo* info = nullptr) {
  return UnaryRace<Resp, Req, Start>(pool, method, request, std::move(start),
                                     info)
      .Run();
}

// The state behind a DecisionStream: one DecideStream per replica that has
// been used, the stream's batches (slots reused from one batch to the
// next, so a warm stream allocates nothing on the caller's thread), and a
// worker thread that sends new batches (serialising them off the caller's
// thread), delivers answers, hedges batches past their attempt deadline
// and ends those past their deadline.
class StreamCore : public std::enable_shared_from_this<StreamCore> {
 public:
  StreamCore(Client* client, std::shared_ptr<ReplicaPool> pool,
             StreamOptions options);
  ~StreamCore();

  std::future<BatchResult> Submit(v1::DecideRequest request);
  StreamBatch* Borrow();
  void Send(StreamBatch* batch);
  const BatchResult& Wait(StreamBatch* batch);
  bool Ready(const StreamBatch* batch) const;
  void Return(StreamBatch* batch);
  void Close(absl::Duration timeout);
  int reconnects() const;
  int in_flight() const;
  StreamStats Stats() const;

  // From a replica's stream (gRPC's callback threads).
  class Sub;
  class Slot;
  void OnAnswer(Sub* sub, v1::DecideResponse* response);
  void OnDone(Sub* sub, const grpc::Status& status);

 private:
  struct Event {  // an answer, handled by the worker
    std::shared_ptr<Replica> replica;
    v1::DecideResponse response;
  };

  void Run();
  // Sends `b` to the next replica; false when none can take it.
  bool Dispatch(Slot& b) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Another attempt of `b` if max_attempts and the budget allow.
  void Retry(Slot& b) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Ends `b` without an answer: `status`, refused by `by` or none.
  void Settle(Slot& b, absl::Status status, const Replica* by = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Hands `b`'s result over (Submit's promise, or Wait).
  void Complete(Slot& b) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void HandleAnswer(const std::shared_ptr<Replica>& replica,
                    v1::DecideResponse* response)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Timers() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The sent batch `id`, or null.
  Slot* Pending(uint64_t id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool Unanswered() const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  Client* const client_;
  const std::shared_ptr<ReplicaPool> pool_;
  const StreamOptions options_;
  mutable utilityd::Mutex mu_;
  // Every batch slot the stream has made; `out_` of them lent or sent.
  std::vector<std::unique_ptr<Slot>> slots_ ABSL_GUARDED_BY(mu_);
  int out_ ABSL_GUARDED_BY(mu_) = 0;
  // Sent by the caller, to be dispatched by the worker.
  std::vector<Slot*> to_send_ ABSL_GUARDED_BY(mu_);
  // Answered batches to repair (stale revisions) outside the lock.
  std::vector<Slot*> ready_ ABSL_GUARDED_BY(mu_);
  // Open streams by replica; a stream stays listed until its OnDone.
  std::map<const Replica*, Sub*> subs_ ABSL_GUARDED_BY(mu_);
  int live_subs_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Event> events_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  StreamStats stats_ ABSL_GUARDED_BY(mu_);
  std::thread worker_;
};

}  // namespace utilityd::client::internal

#endif  // UTILITYD_CLIENT_SRC_CALLS_H_
