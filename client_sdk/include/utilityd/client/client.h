// The C++ client SDK game servers link to get decisions from utilityd.
//
// Example (compiled by tests/client_sdk/header_examples.cmake):
//   ClientOptions options;
//   options.target = "10.0.0.5:50051,10.0.0.6:50051";  // or dns:///name:port
//   options.ai_tick = absl::Milliseconds(100);          // the game's AI tick
//   absl::StatusOr<std::unique_ptr<Client>> connected =
//       Client::Connect(options);
//   if (!connected.ok()) return;
//
//   v1::DecideRequest batch;
//   v1::AgentSnapshot* mage = batch.add_agents();
//   mage->set_agent_id("mage-1");
//   mage->set_behaviour_set("arena_mage");
//   (*mage->mutable_named_factors())["health"] = 80;  // ... every factor
//   absl::StatusOr<v1::DecideResponse> r = (*connected)->Decide(batch);
//
//   // The main path: a stream with bounded batches in flight.
//   std::unique_ptr<DecisionStream> stream = (*connected)->OpenStream();
//   std::future<BatchResult> result = stream->Submit(batch);
//   BatchResult answered = result.get();  // .status, .response, .info
//
// Named factors are packed by the SDK into the set's declared order (looked
// up once per set revision with GetBehaviourSet), so no map travels on the
// wire; each packed agent carries expected_revision, and when the server's
// set has changed the SDK refreshes its schema, re-packs and re-sends those
// agents.
//
// Every batch (unary or streamed) has an attempt deadline, half the AI tick
// by default: a batch unanswered by then is sent again to another replica
// and the first answer wins; the replica that missed it gets no new batch
// until a health probe answers (docs/CLIENTS.md, the contract every SDK
// keeps). The SDK depends only on the generated stubs (and Abseil).
#ifndef UTILITYD_CLIENT_CLIENT_H_
#define UTILITYD_CLIENT_CLIENT_H_

#include <grpcpp/channel.h>
#include <grpcpp/security/credentials.h>

#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "utilityd/base/sync.h"
#include "utilityd/v1/decision_service.grpc.pb.h"

namespace utilityd::client {

struct ClientOptions {
  // Where the service is: "host:port"; a comma-separated list of
  // "host:port" (IP addresses or names); or "dns:///name:port". Names are
  // resolved by the SDK, every address they resolve to is a replica, and
  // they are resolved again every resolve_interval (a Kubernetes headless
  // Service). Other gRPC schemes (unix:...) are one replica.
  std::string target = "localhost:50051";
  // The game's AI tick: sets the attempt deadline (half of it) and the
  // probe pace of replicas that missed one.
  absl::Duration ai_tick = absl::Milliseconds(100);
  // How long one attempt of a batch may go unanswered before the batch is
  // sent again to another replica (the first answer wins) and the replica
  // that missed it is ejected until a health probe answers. Zero: half of
  // ai_tick.
  absl::Duration batch_deadline = absl::ZeroDuration();
  // How long a batch may take in all, attempts included (unary calls and
  // streamed batches); past it the batch settles with DEADLINE_EXCEEDED.
  absl::Duration deadline = absl::Seconds(2);
  // Attempts of one batch in all: hedges after a missed attempt deadline,
  // and retries after a refusal for overload (RESOURCE_EXHAUSTED with a
  // retry hint: its grpc-retry-pushback-ms trailer or retry_after_ms) or
  // a replica that is down or draining (UNAVAILABLE). Each goes to
  // another replica when there is one. 1 disables.
  int max_attempts = 3;
  // Retries and hedges together stay within this share of first attempts
  // (after a reserve for bursts): when the whole fleet is slow or
  // shedding, the SDK stops retrying instead of multiplying its load.
  double retry_budget_ratio = 0.2;
  double retry_budget_reserve = 10;
  // How often host names in the target are resolved again.
  absl::Duration resolve_interval = absl::Seconds(5);
  // Client keepalive: a ping after keepalive_time without reads on a
  // connection, busy or idle (GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS), and
  // the connection closed when no answer comes within keepalive_timeout;
  // zero disables. Keep at or above the server's
  // --min_client_ping_interval (10 s). Keepalive finds dead connections
  // within time + timeout; a frozen replica is left within one attempt
  // deadline, long before (docs/CLIENTS.md).
  absl::Duration keepalive_time = absl::Seconds(20);
  absl::Duration keepalive_timeout = absl::Seconds(10);
  int max_message_bytes = 16 << 20;
  // TLS: PEM files. `tls_ca` verifies the server (switches TLS on);
  // `tls_cert` and `tls_key` present a client certificate (mutual TLS).
  // `tls_server_name` overrides the name checked against the server's
  // certificate (default: the target's host).
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_server_name;
  // Channel credentials, overriding the TLS files; null means plaintext
  // unless tls_ca is set.
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  // Pack named_factors into packed order on the client (see above).
  bool pack_named_factors = true;
};

// One replica as the client sees it.
struct ReplicaState {
  std::string address;
  // No new batch goes to it until a health probe answers SERVING.
  bool ejected = false;
  std::string why;        // when ejected: the deadline it missed, the error
  uint64_t answered = 0;  // answers (batches and probes) it gave
};

// How one batch went: its attempts and the replica that answered.
struct CallInfo {
  int attempts = 0;
  std::string replica;  // empty when none answered
};

// The factor order of one revision of one set.
class SetSchema {
 public:
  explicit SetSchema(v1::BehaviourSetSummary summary);

  const std::string& name() const { return summary_.name(); }
  const std::string& revision() const { return summary_.revision(); }
  const v1::BehaviourSetSummary& summary() const { return summary_; }
  // Each returns the packed index of a name, or -1.
  int FactorIndex(absl::string_view name) const;
  int TargetFactorIndex(absl::string_view name) const;
  // The index a block's personality column holds for `name` (-1: none),
  // and an action's index in compact answers and block results.
  int PersonalityIndex(absl::string_view name) const;
  int ActionIndex(absl::string_view name) const;

  // Moves `snapshot`'s named factors (and its targets') into packed order and
  // sets expected_revision. INVALID_ARGUMENT naming an unknown or missing
  // factor, leaving `snapshot` unchanged. Agents that already use packed
  // factors are left alone.
  absl::Status Pack(v1::AgentSnapshot* snapshot) const;

 private:
  v1::BehaviourSetSummary summary_;
  absl::flat_hash_map<std::string, int> factors_;
  absl::flat_hash_map<std::string, int> target_factors_;
  absl::flat_hash_map<std::string, int> personalities_;
  absl::flat_hash_map<std::string, int> actions_;
};

// The outcome of one streamed batch: exactly one per submitted batch.
struct BatchResult {
  uint64_t request_id = 0;
  // OK with `response` holding one decision per agent (some may carry
  // per-agent errors), or why the whole batch failed.
  absl::Status status;
  v1::DecideResponse response;
  // Attempts it took and which replica answered.
  CallInfo info;
};

struct StreamOptions {
  // Submit and Borrow block while this many batches are out (submitted and
  // unanswered, or borrowed and not returned).
  int max_in_flight = 8;
};

// What a stream has done, for the game's own metrics. Counters only grow.
struct StreamStats {
  int64_t batches = 0;   // submitted or sent
  int64_t answered = 0;  // settled with an answer
  int64_t failed = 0;    // settled with an error
  // Attempts that missed the attempt deadline (each batch then raced on
  // another replica, whose replica ejected until a probe answers).
  int64_t deadline_misses = 0;
  // Batches sent again because their replica's stream broke.
  int64_t resent = 0;
  // Attempts after an overload refusal, on another replica.
  int64_t overload_retries = 0;
  // Replica streams that broke while open.
  int64_t reconnects = 0;
  // The replicas this stream has an open DecideStream to now.
  std::vector<std::string> replicas;
};

class Client;

namespace internal {
class ReplicaPool;
class StreamCore;
}  // namespace internal

// A batch a DecisionStream lends (Borrow) and reuses: its request, and once
// answered its result, live in the stream, so a warm stream allocates
// nothing on the game's thread (docs/CLIENTS.md, "The game thread").
class StreamBatch {
 public:
  StreamBatch(const StreamBatch&) = delete;
  StreamBatch& operator=(const StreamBatch&) = delete;

  // The request to fill, between Borrow and Send. Lent cleared, with the
  // capacity of its last use: blocks written with WriteBlock into
  // request().add_blocks() reuse theirs. request_id 0 is assigned.
  v1::DecideRequest& request() { return request_; }
  // After Send: the result (DecisionStream::Wait), valid until Return.
  const BatchResult& result() const { return result_; }

 protected:
  StreamBatch() = default;
  ~StreamBatch() = default;
  v1::DecideRequest request_;
  BatchResult result_;
};

// A long-lived stream of batches over every healthy replica (one
// DecideStream per replica, opened when first used; batches round robin).
// A batch unanswered within the attempt deadline, or whose replica's
// stream breaks, is sent again on another replica's stream. Thread-safe.
//
// Two ways to send. Submit takes a request and returns a future: simple,
// and it allocates (the future, a copy of the request). Borrow, Send, Wait
// and Return reuse the stream's own batches: for a game thread that sends
// blocks (or agents whose factors it packed itself), nothing is allocated
// on the caller's thread once each batch has been used once.
//
//   StreamBatch* b = stream->Borrow();
//   WriteBlock(columns, b->request().add_blocks());
//   stream->Send(b);
//   ...                               // the tick's other work
//   const BatchResult& r = stream->Wait(b);
//   ReadBlock(r.response.blocks(0), rows, answers);
//   stream->Return(b);
class DecisionStream {
 public:
  ~DecisionStream();

  // Sends a batch and returns its future result, exactly one per batch.
  // Blocks while max_in_flight batches are out (never on a slow replica).
  // Assigns request_id when it is 0 (ids must be unique per stream).
  std::future<BatchResult> Submit(v1::DecideRequest request);

  // Lends a batch to fill; blocks while max_in_flight batches are out.
  StreamBatch* Borrow();
  // Sends a borrowed batch; its request must not change until Return. On
  // a closed stream the batch is answered at once with FAILED_PRECONDITION.
  void Send(StreamBatch* batch);
  // Waits for a sent batch's result (exactly one per batch).
  const BatchResult& Wait(StreamBatch* batch);
  // True once a sent batch has its result.
  bool Ready(const StreamBatch* batch) const;
  // Gives a batch back (read, or never sent); an unanswered one is
  // returned once its result comes. The pointer is not used again.
  void Return(StreamBatch* batch);

  // Waits up to `timeout` for every submitted batch's result, then ends the
  // stream; batches still unanswered get UNAVAILABLE. Idempotent. Borrowed
  // batches are returned or dropped with the stream.
  void Close(absl::Duration timeout = absl::Seconds(10));

  // Number of replica streams that broke while open.
  int reconnects() const;
  // Batches sent and not yet answered.
  int in_flight() const;
  // Counters and the replicas the stream is on (allocates: for metrics,
  // not every batch).
  StreamStats Stats() const;

 private:
  friend class Client;
  explicit DecisionStream(std::shared_ptr<internal::StreamCore> core);
  std::shared_ptr<internal::StreamCore> core_;
};

class Client {
 public:
  // Creates the channel. Does not wait for a connection; INVALID_ARGUMENT for
  // a malformed target.
  static absl::StatusOr<std::unique_ptr<Client>> Connect(
      const ClientOptions& options);

  // Decides one batch (blocking, with the unary deadline). A request may ask
  // for the compact form (DECISION_FORM_COMPACT): read the answer with
  // CompactReader (compact.h) or ExpandCompact.
  // `info`, when given, says how the call went.
  absl::StatusOr<v1::DecideResponse> Decide(const v1::DecideRequest& request,
                                            CallInfo* info = nullptr);

  // Returns the full form of a compact `response` to `request`: the very
  // decisions a full-form request would have got (names from the sets'
  // schemas, which must still be at the revisions that decided).
  // FAILED_PRECONDITION when a set has changed since; INVALID_ARGUMENT for
  // a response that does not match the request.
  absl::StatusOr<v1::DecideResponse> ExpandCompact(
      const v1::DecideRequest& request, const v1::DecideResponse& response);
  absl::StatusOr<v1::ListBehaviourSetsResponse> ListBehaviourSets();
  absl::StatusOr<v1::GetBehaviourSetResponse> GetBehaviourSet(
      absl::string_view name);

  // Returns the cached schema of a set, fetching it on first use.
  absl::StatusOr<std::shared_ptr<const SetSchema>> Schema(
      absl::string_view set);
  // Drops the cached schema of a set (the next Schema call fetches it).
  void InvalidateSchema(absl::string_view set);

  // Opens a stream (the connection is made lazily).
  std::unique_ptr<DecisionStream> OpenStream(const StreamOptions& options = {});

  // Waits until some replica answers a health check SERVING; false after
  // `timeout`. Short waits suit a game framework's join or create hook:
  // the game can start and keep asking rather than fail its join.
  bool WaitForReady(absl::Duration timeout);

  // The replicas now (resolved from the target), with their state.
  std::vector<ReplicaState> Replicas() const;

  ~Client();

 private:
  friend class internal::StreamCore;
  Client() = default;
  // Packs named factors of every agent whose set schema is known or
  // fetchable; agents of unknown sets are left for the server to refuse.
  void PackRequest(v1::DecideRequest* request);
  // One Decide as the contract says (attempt deadline, hedge, retry).
  absl::StatusOr<v1::DecideResponse> SendDecide(
      const v1::DecideRequest& request, CallInfo* info);
  // Re-packs and re-decides agents the server refused for a stale revision,
  // merging the answers into `response` (in the compact form, the repaired
  // agents stay in `compact.full`, each with its own decision id).
  void RepairStale(const v1::DecideRequest& original,
                   v1::DecideResponse* response);

  ClientOptions options_;
  std::shared_ptr<internal::ReplicaPool> pool_;
  utilityd::Mutex schema_mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const SetSchema>> schemas_
      ABSL_GUARDED_BY(schema_mu_);
};

// Converts a grpc::Status into an absl::Status with the same code.
absl::Status FromGrpcStatus(const grpc::Status& status);

// Returns the channel credentials `options` ask for: `credentials` when
// set, TLS from the PEM files when tls_ca is set, else plaintext.
// NOT_FOUND for an unreadable file, INVALID_ARGUMENT for an incomplete set.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentials(
    const ClientOptions& options);

// Returns one gRPC target for a ClientOptions::target (for a single
// channel, e.g. `utilityctl health`): a list of "ip:port" becomes
// "ipv4:..." (or "ipv6:..."); anything else is used as given.
absl::StatusOr<std::string> ResolveTarget(absl::string_view target);

}  // namespace utilityd::client

#endif  // UTILITYD_CLIENT_CLIENT_H_
