// utilityd's gRPC server: the DecisionService, gRPC health and (optionally)
// reflection on one port, the config store and its watcher, and graceful
// draining.
//
//   ServerOptions options;
//   options.config_dir = "/etc/utilityd/behaviour_sets";
//   absl::StatusOr<std::unique_ptr<UtilitydServer>> server =
//       UtilitydServer::Start(options);
//   // ... on SIGTERM:
//   (*server)->Drain(absl::Seconds(10));
//   (*server)->Wait();
#ifndef UTILITYD_SERVER_SERVER_H_
#define UTILITYD_SERVER_SERVER_H_

#include <grpcpp/server.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/src/admin_http.h"
#include "server/src/canary.h"
#include "server/src/config_store.h"
#include "server/src/config_watcher.h"
#include "server/src/decision_service.h"
#include "server/src/http_server.h"
#include "server/src/memory_returner.h"
#include "server/src/recent_decisions.h"
#include "server/src/service_metrics.h"
#include "server/src/shadow.h"
#include "utilityd/metrics/metrics.h"

namespace utilityd::server {

struct ServerOptions {
  std::string grpc_address = "0.0.0.0:50051";
  // HTTP admin endpoint (/metrics, /healthz, /readyz, /api/v1/status);
  // empty disables it.
  std::string http_address = "0.0.0.0:8080";
  std::string config_dir;
  // TLS: PEM files. With cert and key the gRPC port speaks TLS; adding a
  // client CA requires and verifies client certificates (mutual TLS).
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  ServiceOptions service;
  DecisionLog::Options decision_log;
  // Shadow evaluation (off unless shadow.config_dir is set).
  ShadowEvaluator::Options shadow;
  // Canary serving (off unless canary.config_dir is set).
  Canary::Options canary;
  int max_message_bytes = 16 << 20;
  // The inspector (its JSON API under /api/v1/ and its page) on the admin
  // endpoint; off leaves /metrics, the probes and /api/v1/status.
  bool inspector = true;
  // When set, the inspector's API needs "Authorization: Bearer <token>".
  std::string admin_token;
  // Without a token, the inspector answers only requests whose Host is a
  // loopback name or one of these (DNS rebinding); --admin_allowed_hosts.
  std::vector<std::string> admin_allowed_hosts;
  // Connection limits and timeout of the admin endpoint.
  HttpServer::Options http_limits;
  // Serve the inspector without a token on an address other hosts can reach.
  // Off by default: such an inspector refuses its page and API (403, naming
  // the flags) while metrics and probes stay open.
  bool inspector_insecure_no_token = false;
  // The live feed: the newest `recent_decisions` of a `recent_sample`
  // fraction of real decisions, the fraction lowered on a busy server so
  // that about `recent_max_per_second` enter a second (0: no limit).
  size_t recent_decisions = 500;
  double recent_sample = 0.01;
  double recent_max_per_second = 1000;
  bool reflection = false;
  absl::Duration reload_interval = absl::Seconds(2);
  // Server-initiated HTTP/2 keepalive pings; zero disables.
  absl::Duration keepalive_time = absl::Seconds(30);
  absl::Duration keepalive_timeout = absl::Seconds(10);
  // Shortest interval between client pings the server accepts.
  absl::Duration min_client_ping_interval = absl::Seconds(10);
  // Connections are closed after this age (plus grace), so clients
  // re-resolve and rebalance across replicas; zero disables.
  absl::Duration max_connection_age = absl::ZeroDuration();
  absl::Duration max_connection_age_grace = absl::Seconds(30);
  absl::Duration max_connection_idle = absl::ZeroDuration();
  // gRPC's resource quota: the memory its transports may use for buffers
  // and calls (reads slow down at the bound); 0: gRPC's default.
  // 128 MiB: at 256 a flood offered at 3,852 batches/s (3x a capacity
  // measured on this 2-core box) peaked at 858 MiB resident, at 128 at 352
  // MiB (docs/RELIABILITY.md, "Overload").
  int64_t max_memory_bytes = 128 << 20;
  // Concurrent calls per connection (HTTP/2 SETTINGS_MAX_CONCURRENT_
  // STREAMS); 0: gRPC's default.
  int max_concurrent_streams = 128;
  // The SIMD target curve columns run on: one of
  // engine::AvailableSimdTargets(), any case, or "best" (--simd_target).
  // Start sets it for the process (engine::UseSimdTarget).
  std::string simd_target = "best";

  // OK, or INVALID_ARGUMENT naming the flag of the first option out of
  // range: connection and queue limits, request limits, the message size,
  // the live feed's sample, an unknown SIMD target. Start checks it first.
  [[nodiscard]] absl::Status Validate() const;
};

class UtilitydServer {
 public:
  // Loads the config directory (a failure is logged and the server starts
  // NOT_SERVING, reloading until a good config appears), binds and starts
  // serving. INVALID_ARGUMENT or UNAVAILABLE when the address cannot be
  // bound.
  static absl::StatusOr<std::unique_ptr<UtilitydServer>> Start(
      const ServerOptions& options);
  ~UtilitydServer();

  // Ports actually bound (useful with port 0); http_port is 0 when the
  // admin endpoint is off.
  int port() const { return port_; }
  int http_port() const { return admin_ ? admin_->port() : 0; }
  prometheus::Registry& registry() { return registry_; }
  // Ready: sets loaded and not draining.
  bool ready() const;
  // The /api/v1/status document.
  std::string StatusJson() const;
  ConfigStore& store() { return *store_; }
  ConfigWatcher& watcher() { return *watcher_; }
  // Null unless a canary directory is set.
  Canary* canary() { return canary_.get(); }
  DecisionServiceImpl& service() { return *service_; }

  // Health NOT_SERVING, refuse new calls with UNAVAILABLE and end streams
  // after their in-flight batches; after `delay` (time for load balancers
  // to see NOT_SERVING) stop listening and shut down, cancelling whatever is
  // left after `grace`. Blocks for `delay`.
  void Drain(absl::Duration delay, absl::Duration grace);
  // Blocks until the server has shut down.
  void Wait();

 private:
  UtilitydServer() = default;
  void SetServing(bool serving);
  // Counts and logs a reload; serves once sets are loaded (unless draining).
  void OnReload(const ReloadOutcome& outcome);
  // Starts the HTTP admin endpoint (metrics, probes, the inspector).
  absl::Status StartAdmin(const ServerOptions& options);

  prometheus::Registry registry_;
  metrics::ProcessCollector process_;
  // Returns freed memory to the system after large requests.
  std::unique_ptr<MemoryReturner> memory_returner_;
  std::unique_ptr<ServiceMetrics> metrics_;
  // Declared before the service so it outlives it.
  std::unique_ptr<DecisionLog> decision_log_;
  std::unique_ptr<RecentDecisions> recent_;
  std::unique_ptr<AdminHttpServer> admin_;
  absl::Time started_ = absl::Now();
  std::unique_ptr<ConfigStore> store_;
  std::unique_ptr<ConfigWatcher> watcher_;
  // After the store it compares with, before the service that feeds it.
  std::unique_ptr<ShadowEvaluator> shadow_;
  std::unique_ptr<Canary> canary_;
  std::unique_ptr<DecisionServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_SERVER_H_
