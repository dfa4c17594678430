// The C++ client SDK game servers link to get decisions from utilityd.
//
//   ClientOptions options;
//   options.target = "10.0.0.5:50051,10.0.0.6:50051";  // or
//   "dns:///utilityd:50051" absl::StatusOr<std::unique_ptr<Client>> client =
//   Client::Connect(options);
//
//   v1::DecideRequest batch;
//   v1::AgentSnapshot* mage = batch.add_agents();
//   mage->set_agent_id("mage-1");
//   mage->set_behaviour_set("arena_mage");
//   (*mage->mutable_named_factors())["health"] = 80;   // ... every factor
//   absl::StatusOr<v1::DecideResponse> r = (*client)->Decide(batch);
//
//   // The main path: a stream with bounded batches in flight.
//   std::unique_ptr<DecisionStream> stream = (*client)->OpenStream();
//   std::future<BatchResult> result = stream->Submit(batch);
//
// Named factors are packed by the SDK into the set's declared order (looked
// up once per set revision with GetBehaviourSet), so no map travels on the
// wire; each packed agent carries expected_revision, and when the server's
// set has changed the SDK refreshes its schema, re-packs and re-sends those
// agents. The SDK depends only on the generated stubs (and Abseil).
#ifndef UTILITYD_CLIENT_CLIENT_H_
#define UTILITYD_CLIENT_CLIENT_H_

#include <grpcpp/channel.h>
#include <grpcpp/security/credentials.h>

#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>

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
  // Where the service is: "host:port"; a comma-separated list of IP
  // "addr:port" (balanced); or any gRPC target, e.g. "dns:///utilityd:50051"
  // (every address the name resolves to is balanced).
  std::string target = "localhost:50051";
  // gRPC load-balancing policy across the target's addresses. Each
  // replica's gRPC health is watched: NOT_SERVING replicas (loading,
  // draining) get no new calls.
  std::string load_balancing_policy = "round_robin";
  // Deadline of unary calls (Decide, ListBehaviourSets, GetBehaviourSet).
  absl::Duration deadline = absl::Seconds(2);
  // A unary Decide refused because a replica is overloaded
  // (RESOURCE_EXHAUSTED, OVERLOADED) or unavailable (draining, down) is
  // tried again, up to this many attempts in all, within the deadline:
  // after the replica's retry hint (its grpc-retry-pushback-ms trailer)
  // or a jittered exponential backoff from 50 ms, each attempt on the next
  // replica of the round robin. gRPC's retry throttling stops retries
  // while more than half of the calls fail (the whole fleet is overloaded:
  // retrying would only add load). 1 disables retries. (Streams report an
  // overloaded batch as an Error with reason OVERLOADED and
  // retry_after_ms; docs/RELIABILITY.md, "Overload".)
  int max_attempts = 4;
  // Client keepalive pings on idle connections; zero disables. Keep at or
  // above the server's --min_client_ping_interval.
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

  // Moves `snapshot`'s named factors (and its targets') into packed order and
  // sets expected_revision. INVALID_ARGUMENT naming an unknown or missing
  // factor, leaving `snapshot` unchanged. Agents that already use packed
  // factors are left alone.
  absl::Status Pack(v1::AgentSnapshot* snapshot) const;

 private:
  v1::BehaviourSetSummary summary_;
  absl::flat_hash_map<std::string, int> factors_;
  absl::flat_hash_map<std::string, int> target_factors_;
};

// The outcome of one streamed batch: exactly one per submitted batch.
struct BatchResult {
  uint64_t request_id = 0;
  // OK with `response` holding one decision per agent (some may carry
  // per-agent errors), or why the whole batch failed.
  absl::Status status;
  v1::DecideResponse response;
};

struct StreamOptions {
  // Submit blocks while this many batches are unanswered.
  int max_in_flight = 8;
  // Reconnect backoff after a stream breaks: doubles from initial to max.
  absl::Duration initial_backoff = absl::Milliseconds(50);
  absl::Duration max_backoff = absl::Seconds(2);
};

class Client;

// A long-lived DecideStream that survives server restarts. Thread-safe.
class DecisionStream {
 public:
  ~DecisionStream();

  // Sends a batch and returns its future result. Blocks while max_in_flight
  // batches are unanswered. Assigns request_id when it is 0 (ids must be
  // unique per stream). After a broken stream the batches without an answer
  // are re-sent on a new stream, so every batch gets exactly one result.
  std::future<BatchResult> Submit(v1::DecideRequest request);

  // Waits up to `timeout` for every submitted batch's result, then ends the
  // stream; batches still unanswered get UNAVAILABLE. Idempotent.
  void Close(absl::Duration timeout = absl::Seconds(10));

  // Number of times the stream was re-established after breaking.
  int reconnects() const;
  // Batches submitted and not yet answered.
  int in_flight() const;

 private:
  friend class Client;
  struct Pending {
    v1::DecideRequest sent;      // what goes on the wire (packed)
    v1::DecideRequest original;  // as submitted, for re-packing
    std::promise<BatchResult> promise;
    bool written = false;
  };

  DecisionStream(Client* client, StreamOptions options);
  void Run();
  // Writes pending batches not yet written on the current stream, in order.
  void WriteUnsent() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);

  Client* const client_;
  const StreamOptions options_;
  // Lock order: ctx_mu_ and write_mu_ are never held together; mu_ may be
  // taken inside either. Writes may block (flow control, a server that is
  // down), so cancellation needs only ctx_mu_.
  utilityd::Mutex ctx_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  utilityd::Mutex write_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable utilityd::Mutex mu_;
  std::map<uint64_t, Pending> pending_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  int reconnects_ ABSL_GUARDED_BY(mu_) = 0;
  std::shared_ptr<grpc::ClientContext> context_ ABSL_GUARDED_BY(ctx_mu_);
  std::unique_ptr<
      grpc::ClientReaderWriter<v1::DecideRequest, v1::DecideResponse>>
      stream_ ABSL_GUARDED_BY(write_mu_);
  std::thread reader_;
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
  absl::StatusOr<v1::DecideResponse> Decide(const v1::DecideRequest& request);

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

  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }
  v1::DecisionService::Stub& stub() { return *stub_; }

 private:
  friend class DecisionStream;
  Client() = default;
  // Packs named factors of every agent whose set schema is known or
  // fetchable; agents of unknown sets are left for the server to refuse.
  void PackRequest(v1::DecideRequest* request);
  // Re-packs and re-decides agents the server refused for a stale revision,
  // merging the answers into `response` (in the compact form, the repaired
  // agents stay in `compact.full`, each with its own decision id).
  void RepairStale(const v1::DecideRequest& original,
                   v1::DecideResponse* response);

  ClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::DecisionService::Stub> stub_;
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

// The channel's service config for `options`: the balancing policy, health
// watching, and the retry policy of Decide.
std::string ServiceConfigJson(const ClientOptions& options);

// Returns the gRPC target for a ClientOptions::target: a list of "ip:port"
// becomes "ipv4:..." (or "ipv6:..."); anything else is used as given.
absl::StatusOr<std::string> ResolveTarget(absl::string_view target);

}  // namespace utilityd::client

#endif  // UTILITYD_CLIENT_CLIENT_H_
