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

// One unary call by the contract: the first attempt on the next replica;
// when it has no answer within the attempt deadline, its replica is
// ejected and the call is raced on another (the first answer wins, the
// rest are cancelled); refusals for overload or unavailability are retried
// on another replica after the pushback; attempts stay within
// max_attempts and the retry budget, and the whole within the deadline.
// `start(stub, context, request, response, done)` starts the gRPC call.
template <typename Resp, typename Req, typename Start>
absl::StatusOr<Resp> CallHedged(const std::shared_ptr<ReplicaPool>& pool,
                                absl::string_view method, const Req& request,
                                Start start, CallInfo* info = nullptr) {
  struct Attempt {
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
  const ClientOptions& options = pool->options();
  auto race = std::make_shared<Race>();
  race->request = request;
  const absl::Time deadline = absl::Now() + options.deadline;
  absl::Time hedge_at = absl::InfiniteFuture();
  Pick queued;  // the next attempt, waiting for its replica's pushback
  std::vector<std::string> failures;
  absl::StatusCode last_code = absl::StatusCode::kUnavailable;
  int launched = 0;
  std::shared_ptr<Attempt> latest;

  auto launch = [&](std::shared_ptr<Replica> replica) {
    auto a = std::make_shared<Attempt>();
    a->replica = std::move(replica);
    a->context.set_deadline(ToChrono(deadline));
    {
      utilityd::MutexLock lock(&race->mu);
      race->attempts.push_back(a);
    }
    ++launched;
    latest = a;
    hedge_at = absl::Now() + pool->attempt_deadline();
    std::weak_ptr<ReplicaPool> weak = pool;
    start(*a->replica->stub, &a->context, &race->request, &a->response,
          [race, a, weak](grpc::Status s) {
            // A late answer still proves its replica alive.
            if (s.ok()) {
              if (auto p = weak.lock()) p->Answered(*a->replica);
            }
            utilityd::MutexLock lock(&race->mu);
            a->status = std::move(s);
            a->done = true;
          });
  };
  auto finish = [&](absl::StatusOr<Resp> result, const Attempt* winner) {
    utilityd::MutexLock lock(&race->mu);
    for (auto& a : race->attempts) {
      if (!a->done) a->context.TryCancel();
    }
    if (info != nullptr) {
      info->attempts = launched;
      info->replica = winner != nullptr ? winner->replica->address : "";
    }
    return result;
  };

  pool->budget().Deposit();
  Pick first = pool->Next({});
  if (first.replica == nullptr) {
    return absl::UnavailableError(
        absl::StrCat(method, ": no replica for target ", options.target));
  }
  queued = first;
  while (true) {
    const absl::Time now = absl::Now();
    if (queued.replica != nullptr && queued.not_before <= now) {
      launch(std::move(queued.replica));
      queued = {};
    }
    // Wait for an attempt to end, the next hedge, a pushback, the deadline.
    absl::Time wake = deadline;
    if (queued.replica != nullptr)
      wake = std::min(wake, queued.not_before);
    else
      wake = std::min(wake, hedge_at);
    std::vector<std::shared_ptr<Attempt>> ended;
    int outstanding = 0;
    {
      utilityd::MutexLock lock(&race->mu);
      auto any_ended = [&]() ABSL_SHARED_LOCKS_REQUIRED(race->mu) {
        for (auto& a : race->attempts) {
          if (a->done && !a->handled) return true;
        }
        return false;
      };
      race->mu.AwaitWithTimeout(
          any_ended, std::max(wake - absl::Now(), absl::ZeroDuration()));
      for (auto& a : race->attempts) {
        if (a->done && !a->handled) {
          a->handled = true;
          ended.push_back(a);
        } else if (!a->done) {
          ++outstanding;
        }
      }
    }
    bool retry = false;
    for (auto& a : ended) {
      if (a->status.ok()) return finish(std::move(a->response), a.get());
      const absl::Status s = FromGrpcStatus(a->status);
      if (s.code() == absl::StatusCode::kCancelled ||
          s.code() == absl::StatusCode::kDeadlineExceeded) {
        continue;  // the deadline's doing; settled below
      }
      int64_t pushback = -1;
      const auto& trailers = a->context.GetServerTrailingMetadata();
      if (auto it = trailers.find("grpc-retry-pushback-ms");
          it != trailers.end()) {
        if (!absl::SimpleAtoi(
                absl::string_view(it->second.data(), it->second.size()),
                &pushback)) {
          pushback = -1;
        }
      }
      last_code = s.code();
      failures.push_back(absl::StrCat(a->replica->address, ": ", s.message()));
      switch (OnFailure(*pool, *a->replica, s, pushback)) {
        case Next::kFinal:
          return finish(s, nullptr);
        case Next::kRetry:
          retry = true;
          break;
        case Next::kNothing:
          break;
      }
    }
    if (absl::Now() >= deadline) {
      return finish(Exhausted(method, absl::StatusCode::kDeadlineExceeded,
                              failures, options.deadline, true),
                    nullptr);
    }
    const bool missed =
        outstanding > 0 && latest != nullptr && absl::Now() >= hedge_at;
    if (missed) {
      pool->Eject(*latest->replica,
                  absl::StrCat("missed the attempt deadline of ",
                               absl::FormatDuration(pool->attempt_deadline())));
      failures.push_back(
          absl::StrCat(latest->replica->address, ": no answer within ",
                       absl::FormatDuration(pool->attempt_deadline())));
      hedge_at = absl::InfiniteFuture();
    }
    if ((retry || missed) && queued.replica == nullptr) {
      if (launched < options.max_attempts && pool->budget().Withdraw()) {
        std::vector<const Replica*> busy;
        {
          utilityd::MutexLock lock(&race->mu);
          for (auto& a : race->attempts) {
            if (!a->done) busy.push_back(a->replica.get());
          }
        }
        queued = pool->Next(busy);
      }
    }
    if (queued.replica == nullptr && outstanding == 0) {
      // Nothing in flight and nothing more to try.
      return finish(
          Exhausted(method, last_code, failures, options.deadline, false),
          nullptr);
    }
  }
}

// The state behind a DecisionStream: one DecideStream per replica that has
// been used, every batch with its attempts, and a worker thread that
// delivers answers, hedges batches past their attempt deadline and ends
// those past their deadline.
class StreamCore : public std::enable_shared_from_this<StreamCore> {
 public:
  StreamCore(Client* client, std::shared_ptr<ReplicaPool> pool,
             StreamOptions options);
  ~StreamCore();

  std::future<BatchResult> Submit(v1::DecideRequest request);
  void Close(absl::Duration timeout);
  int reconnects() const;
  int in_flight() const;

  // From a replica's stream (gRPC's callback threads).
  class Sub;
  void OnAnswer(Sub* sub, v1::DecideResponse response);
  void OnDone(Sub* sub, const grpc::Status& status);

 private:
  struct Attempt {
    Sub* sub;  // null once its stream ended
    std::shared_ptr<Replica> replica;
  };
  struct Batch {
    std::shared_ptr<const v1::DecideRequest> sent;  // packed
    v1::DecideRequest original;                     // as submitted
    std::promise<BatchResult> promise;
    absl::Time deadline;
    absl::Time hedge_at = absl::InfiniteFuture();
    absl::Time send_at = absl::InfiniteFuture();  // a retry after pushback
    std::vector<Attempt> attempts;
    int launched = 0;
    std::vector<std::string> failures;
    absl::StatusCode last_code = absl::StatusCode::kUnavailable;
  };
  struct Event {  // an answer, handled by the worker
    std::shared_ptr<Replica> replica;
    v1::DecideResponse response;
  };

  void Run();
  // Sends `id` to the next replica; false when none can take it.
  bool Dispatch(uint64_t id, Batch& b) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Another attempt of `b` if max_attempts and the budget allow.
  void Retry(uint64_t id, Batch& b) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Settle(uint64_t id, BatchResult result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void HandleAnswer(const std::shared_ptr<Replica>& replica,
                    v1::DecideResponse response)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Timers() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Client* const client_;
  const std::shared_ptr<ReplicaPool> pool_;
  const StreamOptions options_;
  mutable utilityd::Mutex mu_;
  std::map<uint64_t, Batch> pending_ ABSL_GUARDED_BY(mu_);
  // Open streams by replica; a stream stays listed until its OnDone.
  std::map<const Replica*, Sub*> subs_ ABSL_GUARDED_BY(mu_);
  int live_subs_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Event> events_ ABSL_GUARDED_BY(mu_);
  // Results to hand over outside the lock (RepairStale calls the service).
  std::vector<std::pair<Batch, BatchResult>> ready_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  int reconnects_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread worker_;
};

}  // namespace utilityd::client::internal

#endif  // UTILITYD_CLIENT_SRC_CALLS_H_
