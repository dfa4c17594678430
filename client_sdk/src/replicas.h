// The SDK's view of the fleet (internal): one channel per replica, the
// replicas a batch may go to next, ejection of a replica that missed a
// deadline until a health probe answers, pushback, and the retry budget.
// docs/CLIENTS.md is the contract this implements.
#ifndef UTILITYD_CLIENT_SRC_REPLICAS_H_
#define UTILITYD_CLIENT_SRC_REPLICAS_H_

#include <grpcpp/channel.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "utilityd/base/sync.h"
#include "utilityd/client/client.h"
#include "utilityd/v1/decision_service.grpc.pb.h"

namespace utilityd::client::internal {

// One replica: an address and a channel of its own.
struct Replica {
  std::string address;  // as errors and results name it
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::DecisionService::Stub> stub;
  std::unique_ptr<grpc::health::v1::Health::Stub> health;
};

// The gRPC operations in flight whose callbacks hold a channel. gRPC 1.51
// must not see the last reference to a channel dropped on one of its
// callback threads: the channel's teardown then joins that very thread and
// frees a completion queue it is still using (an abort in
// grpc_cq_internal_unref). So every such operation holds a Token, declared
// before (destroyed after) whatever holds its channel, and the client, when
// destroyed, waits for the tokens: its channels then end on the caller's
// thread.
class InFlight {
 public:
  class Token {
   public:
    Token() = default;
    Token(Token&&) = default;
    Token& operator=(Token&&) = default;
    ~Token();

   private:
    friend class InFlight;
    explicit Token(std::shared_ptr<InFlight> owner)
        : owner_(std::move(owner)) {}
    std::shared_ptr<InFlight> owner_;
  };
  // Counts one operation until its token is destroyed. The tracker must be
  // owned by a shared_ptr (the token keeps it alive).
  static Token Enter(const std::shared_ptr<InFlight>& tracker);
  // Waits until no token is held; false after `timeout`.
  bool WaitIdle(absl::Duration timeout);

 private:
  utilityd::Mutex mu_;
  int count_ ABSL_GUARDED_BY(mu_) = 0;
};

// Retries and hedges may add at most `ratio` of the first attempts, after a
// reserve of `reserve` spent in a burst: when the whole fleet is slow or
// shedding, retries stop instead of multiplying its load.
class RetryBudget {
 public:
  RetryBudget(double ratio, double reserve)
      : ratio_(ratio), max_(reserve), tokens_(reserve) {}
  // One first attempt.
  void Deposit();
  // One retry or hedge; false when the budget is spent.
  bool Withdraw();

 private:
  const double ratio_;
  const double max_;
  utilityd::Mutex mu_;
  double tokens_ ABSL_GUARDED_BY(mu_);
};

// Where the next attempt goes, and when it may be sent (after a replica's
// pushback).
struct Pick {
  std::shared_ptr<Replica> replica;
  absl::Time not_before = absl::InfinitePast();
};

class ReplicaPool {
 public:
  // Resolves options.target into replicas and starts the probe thread.
  static absl::StatusOr<std::shared_ptr<ReplicaPool>> Create(
      const ClientOptions& options);
  ~ReplicaPool();

  // Stops probing and re-resolving (idempotent). Calls in flight finish.
  void Shutdown();

  // The replica for an attempt, skipping `busy` (replicas that already have
  // an unanswered attempt of this batch): round robin over the admitted
  // replicas whose channel is not failing; when there is none, a pushed-back
  // one (with its not_before), then an ejected one (the longest ejected,
  // which may have come back). Null when every replica is in `busy`.
  Pick Next(const std::vector<const Replica*>& busy);

  // An answer came from `r`: re-admits it if it was ejected.
  void Answered(const Replica& r);
  // `r` missed a deadline or lost its connection: ejected until a health
  // probe answers SERVING (probes back off while it keeps failing).
  void Eject(const Replica& r, absl::string_view why);
  // `r` refused for overload: no new attempt before `after`, or longer
  // when it keeps refusing (the hold doubles from the hint with each
  // refusal in a row, up to a second, until it answers again), so a
  // replica that is always full costs a retry a second, not one a hint.
  void PushBack(const Replica& r, absl::Duration after);

  RetryBudget& budget() { return budget_; }
  // A token for an operation about to start (see InFlight).
  InFlight::Token Enter() { return InFlight::Enter(in_flight_); }
  // After Shutdown: waits until no callback holds a channel.
  bool WaitIdle(absl::Duration timeout) {
    return in_flight_->WaitIdle(timeout);
  }
  const ClientOptions& options() const { return options_; }
  // The attempt deadline: options.batch_deadline, or half the AI tick.
  absl::Duration attempt_deadline() const;

  // Replicas now, with their state (tests, utilityctl).
  std::vector<ReplicaState> States() const;
  // True once some replica answers a health check SERVING within `timeout`.
  bool WaitForReady(absl::Duration timeout);

 private:
  struct Entry {
    std::shared_ptr<Replica> replica;
    bool ejected = false;
    absl::Time ejected_at = absl::InfinitePast();
    std::string why;
    int strikes = 0;  // consecutive failed probes
    absl::Time next_probe = absl::InfinitePast();
    bool probing = false;
    absl::Time pushed_back_until = absl::InfinitePast();
    int refusals = 0;  // overload refusals since its last answer
    uint64_t answered = 0;
  };
  explicit ReplicaPool(const ClientOptions& options);
  absl::Status Resolve() ABSL_LOCKS_EXCLUDED(mu_);
  std::shared_ptr<Replica> MakeReplica(const std::string& address,
                                       const std::string& grpc_target) const;
  Entry* Find(const Replica& r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ProbeLoop();
  void Probe(std::shared_ptr<Replica> replica);
  // A probe's outcome: SERVING, or an answer that is not (the replica is
  // up, loading or draining: probed again after an attempt deadline), or
  // none (backing off).
  void Probed(const Replica& r, bool serving, bool answered);

  const ClientOptions options_;
  std::weak_ptr<ReplicaPool> self_;
  std::shared_ptr<grpc::ChannelCredentials> credentials_;
  // A host name to re-resolve (empty: a fixed list or a non-DNS target).
  std::string host_;
  std::string port_;
  RetryBudget budget_;
  const std::shared_ptr<InFlight> in_flight_ = std::make_shared<InFlight>();
  mutable utilityd::Mutex mu_;
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
  size_t next_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread prober_;
};

}  // namespace utilityd::client::internal

#endif  // UTILITYD_CLIENT_SRC_REPLICAS_H_
