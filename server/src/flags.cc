// utilityd's flags, and the one place they become ServerOptions
// (flags.h). Their ranges are checked by ServerOptions::Validate.
#include "server/src/flags.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace {
// The defaults of the flags below are the options structs' own.
const utilityd::server::ServerOptions& Defaults() {
  static const auto* defaults = new utilityd::server::ServerOptions();
  return *defaults;
}
}  // namespace

ABSL_FLAG(std::string, config_dir, UTILITYD_CONFIG_DIR_DEFAULT,
          "Directory of behaviour sets (*.yaml, *.yml, *.json) to serve. "
          "Watched for changes, including Kubernetes ConfigMap swaps.");
ABSL_FLAG(std::string, grpc_address, Defaults().grpc_address,
          "Address to serve gRPC on; port 0 picks a free port (see "
          "--port_file).");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate chain for TLS on the gRPC port (with --tls_key).");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert.");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA certificates: require client certificates signed by them "
          "(mutual TLS). Needs --tls_cert and --tls_key.");
ABSL_FLAG(std::string, http_address, Defaults().http_address,
          "Address of the HTTP admin endpoint (/metrics, /healthz, /readyz, "
          "/api/v1/status, the inspector); empty disables it. Port 0 picks a "
          "free port.");
ABSL_FLAG(int, http_max_connections, Defaults().http_limits.max_connections,
          "Connections the admin endpoint holds at once; more are closed as "
          "they arrive. Idle connections cost no thread.");
ABSL_FLAG(int, http_max_connections_per_address,
          Defaults().http_limits.max_per_address,
          "Connections the admin endpoint holds at once from one client "
          "address.");
ABSL_FLAG(absl::Duration, http_idle_timeout,
          Defaults().http_limits.idle_timeout,
          "The admin endpoint closes a connection that sends or reads "
          "nothing for this long, between requests or in the middle of "
          "one (a request header sent slowly, or not at all).");
ABSL_FLAG(int64_t, http_max_body_bytes,
          static_cast<int64_t>(Defaults().http_limits.max_body_bytes),
          "The admin endpoint refuses larger request bodies with 413 (the "
          "inspector's edited set and agents; parsing costs tens of times "
          "the body's size in memory).");
ABSL_FLAG(bool, inspector, Defaults().inspector,
          "Serve the inspector on the admin endpoint: its page at /ui/ and "
          "its JSON API under /api/v1/ (sets, decide, what-if, the live "
          "feed of recent decisions). false leaves /metrics, the probes and "
          "/api/v1/status.");
ABSL_FLAG(bool, inspector_insecure_no_token,
          Defaults().inspector_insecure_no_token,
          "Serve the inspector's page and API without a token on an "
          "--http_address other hosts can reach. Insecure: its live feed "
          "shows real agent ids and factor values. Without it (and without "
          "--admin_token) such an inspector answers 403; metrics and probes "
          "stay open.");
ABSL_FLAG(std::string, admin_token, "",
          "Bearer token the inspector's API requires (\"Authorization: "
          "Bearer <token>\"). Prefer --admin_token_file: flags show in ps.");
ABSL_FLAG(std::string, admin_token_file, "",
          "File holding the inspector's bearer token (surrounding "
          "whitespace is ignored), e.g. a mounted Kubernetes Secret.");
ABSL_FLAG(std::vector<std::string>, admin_allowed_hosts, {},
          "Without a token the inspector answers only requests whose Host "
          "header is a loopback name (localhost, 127.0.0.1, [::1]), against "
          "DNS rebinding; these names (comma-separated, with or without "
          "port) are answered too, e.g. the name an SSH tunnel or a proxy "
          "uses.");
ABSL_FLAG(int, recent_decisions, static_cast<int>(Defaults().recent_decisions),
          "Decisions the inspector's live feed keeps in memory.");
ABSL_FLAG(double, recent_sample, Defaults().recent_sample,
          "Fraction (0..1) of decisions that enter the live feed, chosen by "
          "decision id.");
ABSL_FLAG(double, recent_max_per_second, Defaults().recent_max_per_second,
          "At most about this many decisions a second enter the live feed: "
          "on a busy server --recent_sample is lowered, a second at a time, "
          "and rises back as traffic falls (0: no limit).");
ABSL_FLAG(std::string, decision_log, Defaults().decision_log.sink,
          "Decision log: off, stdout, or a file to append to (one entry per "
          "decision, with its snapshot; read it with `utilityctl log`, "
          "decide it again with `utilityctl replay`).");
ABSL_FLAG(std::string, decision_log_format, Defaults().decision_log.format,
          "Decision log form: json (a line per decision) or binary "
          "(length-delimited DecisionLogEntry messages, for volume); "
          "`utilityctl log` and `utilityctl replay` read both.");
ABSL_FLAG(double, decision_log_sample, Defaults().decision_log.sample,
          "Fraction (0..1) of logged decisions that carry the full score "
          "breakdown.");
ABSL_FLAG(int, decision_log_queue,
          static_cast<int>(Defaults().decision_log.queue_capacity),
          "Decision log lines that may wait for the writer; beyond it lines "
          "are dropped and counted (utilityd_decision_log_dropped_total), "
          "never blocking a decision.");
ABSL_FLAG(bool, decision_log_mask_ids, Defaults().decision_log.mask_agent_ids,
          "Log a keyed hash of each agent id instead of the id.");
ABSL_FLAG(std::string, decision_log_mask_salt, "",
          "Key of the agent-id hash (use the same on every replica to keep "
          "tokens stable; keep it secret).");
ABSL_FLAG(bool, decision_log_factors, Defaults().decision_log.factor_values,
          "Log factor values (false drops them, and the raw inputs of "
          "breakdowns).");
ABSL_FLAG(std::string, shadow_config_dir, "",
          "Candidate behaviour sets, loaded and hot-reloaded like the live "
          "ones but never served: a sampled share of live decisions is "
          "decided again with them off the request path and compared "
          "(utilityd_shadow_decisions_total, /api/v1/shadow; "
          "docs/REPLAY.md). Empty: off.");
ABSL_FLAG(double, shadow_sample, Defaults().shadow.sample,
          "Fraction (0..1) of live decisions, chosen by decision id, that "
          "shadow evaluation decides again.");
ABSL_FLAG(int, shadow_queue, static_cast<int>(Defaults().shadow.queue_capacity),
          "Sampled decisions that may wait for shadow evaluation; beyond it "
          "they are dropped and counted (utilityd_shadow_dropped_total), "
          "never blocking a decision.");
ABSL_FLAG(double, shadow_log_flips, Defaults().shadow.log_flips,
          "Fraction (0..1) of flipped shadow decisions written to the log "
          "with both breakdowns.");
ABSL_FLAG(std::string, canary_config_dir, "",
          "Candidate behaviour sets served to a sticky share of agents "
          "(--canary_share), chosen by agent id hash alike on every "
          "replica, validated and hot-reloaded like the live ones; a "
          "missing or empty directory serves none (docs/CANARY.md). Empty: "
          "off.");
ABSL_FLAG(double, canary_share, Defaults().canary.share,
          "Fraction (0..1) of agents the canary sets decide; a file `share` "
          "in --canary_config_dir overrides it. 1 promotes the canary.");
ABSL_FLAG(double, canary_compare_sample, Defaults().canary.compare_sample,
          "Fraction (0..1) of the canary's decisions, chosen by decision id, "
          "decided again with the live sets to measure its churn "
          "(utilityd_canary_compare_decisions_total).");
ABSL_FLAG(int, max_agents_per_request,
          Defaults().service.max_agents_per_request,
          "Batches with more agents are refused with RESOURCE_EXHAUSTED.");
ABSL_FLAG(int64_t, max_targets_per_request,
          Defaults().service.max_targets_per_request,
          "Requests with more targets (over every agent and block row) are "
          "refused with RESOURCE_EXHAUSTED. One agent may have at most 4096.");
ABSL_FLAG(int64_t, max_pools_per_request,
          Defaults().service.max_pools_per_request,
          "Requests listing more coordination pools are refused with "
          "RESOURCE_EXHAUSTED.");
ABSL_FLAG(int64_t, max_holders_per_request,
          Defaults().service.max_holders_per_request,
          "Requests with more holdings (pools' holders and agents' held "
          "resources) are refused with RESOURCE_EXHAUSTED.");
ABSL_FLAG(int, max_message_bytes, Defaults().max_message_bytes,
          "Largest request or response message, in bytes.");
ABSL_FLAG(int, workers, Defaults().service.queue.workers,
          "Threads that score batches; 0: one per CPU (docs/RELIABILITY.md).");
ABSL_FLAG(int, worker_nice, Defaults().service.queue.nice,
          "Niceness of the scoring threads above gRPC's (Linux), so that "
          "admission and health checks get the CPU first under load.");
ABSL_FLAG(int64_t, max_queued_agents, Defaults().service.queue.max_agents,
          "Agents waiting to be scored (and being scored), at most; a batch "
          "that would pass it is refused with RESOURCE_EXHAUSTED "
          "(OVERLOADED) and a retry hint. 0: unbounded.");
ABSL_FLAG(int64_t, max_queued_bytes, Defaults().service.queue.max_bytes,
          "Request bytes waiting to be scored, at most; as "
          "--max_queued_agents. 0: unbounded.");
ABSL_FLAG(int64_t, max_memory_bytes, Defaults().max_memory_bytes,
          "gRPC's resource quota: memory its transports may use; reads slow "
          "down at the bound. 0: gRPC's default.");
ABSL_FLAG(int, max_concurrent_streams, Defaults().max_concurrent_streams,
          "Concurrent calls per connection. 0: gRPC's default.");
ABSL_FLAG(bool, reflection, Defaults().reflection,
          "Serve gRPC server reflection.");
ABSL_FLAG(absl::Duration, reload_interval, Defaults().reload_interval,
          "How often the config directory is checked for changes.");
ABSL_FLAG(absl::Duration, keepalive_time, Defaults().keepalive_time,
          "Interval of server keepalive pings on idle connections; 0 "
          "disables.");
ABSL_FLAG(absl::Duration, keepalive_timeout, Defaults().keepalive_timeout,
          "How long a keepalive ping may go unanswered before the connection "
          "is closed.");
ABSL_FLAG(absl::Duration, min_client_ping_interval,
          Defaults().min_client_ping_interval,
          "Shortest interval between client keepalive pings the server "
          "accepts.");
ABSL_FLAG(absl::Duration, max_connection_age, Defaults().max_connection_age,
          "Close connections after this age so clients rebalance across "
          "replicas (e.g. 5m behind Kubernetes round robin); 0 disables.");
ABSL_FLAG(absl::Duration, max_connection_age_grace,
          Defaults().max_connection_age_grace,
          "Time an aged connection's open calls get to finish.");
ABSL_FLAG(absl::Duration, max_connection_idle, Defaults().max_connection_idle,
          "Close connections idle this long; 0 disables.");
ABSL_FLAG(absl::Duration, drain_delay, absl::ZeroDuration(),
          "On SIGTERM/SIGINT, how long to keep listening (health "
          "NOT_SERVING, new calls UNAVAILABLE) before shutting down, so load "
          "balancers and probes see the change; a few seconds behind "
          "Kubernetes.");
ABSL_FLAG(absl::Duration, drain_grace, absl::Seconds(10),
          "On SIGTERM/SIGINT, how long in-flight batches get to finish.");
ABSL_FLAG(std::string, port_file, "",
          "When set, the bound gRPC port and HTTP admin port are written to "
          "this file, one per line, once serving.");
ABSL_FLAG(std::string, simd_target, "best",
          "SIMD target of the scoring columns: best, or one this CPU has "
          "(AVX3, AVX2, SSE4, ...: /api/v1/status lists them), e.g. AVX2 to "
          "keep off AVX-512. Scores are the same bits on every target.");
ABSL_FLAG(bool, mutex_deadlock_detection, false,
          "Check every lock of Abseil's mutexes (this server's and gRPC's) "
          "for lock-order cycles, aborting on one. A debugging aid: "
          "Debian's Abseil is built with it on, which adds a global lock "
          "and a graph update to every acquisition.");
ABSL_FLAG(std::string, log_level, "info",
          "Minimum log level: debug, info, warning or error.");

namespace utilityd::server {
namespace {

// Shadow evaluation's and the canary's options.
void CandidateOptionsFromFlags(ServerOptions* options) {
  const size_t queue =
      static_cast<size_t>(std::max(0, absl::GetFlag(FLAGS_shadow_queue)));
  options->shadow = {.config_dir = absl::GetFlag(FLAGS_shadow_config_dir),
                     .sample = absl::GetFlag(FLAGS_shadow_sample),
                     .queue_capacity = queue,
                     .log_flips = absl::GetFlag(FLAGS_shadow_log_flips),
                     .reload_interval = absl::GetFlag(FLAGS_reload_interval)};
  options->canary = {
      .config_dir = absl::GetFlag(FLAGS_canary_config_dir),
      .share = absl::GetFlag(FLAGS_canary_share),
      .compare_sample = absl::GetFlag(FLAGS_canary_compare_sample),
      .log_flips = absl::GetFlag(FLAGS_shadow_log_flips),
      .queue_capacity = queue,
      .reload_interval = absl::GetFlag(FLAGS_reload_interval)};
}

// The admin endpoint's flags: its limits, the inspector and its token.
absl::Status AdminOptionsFromFlags(ServerOptions* out) {
  ServerOptions& options = *out;
  options.http_limits.max_connections =
      absl::GetFlag(FLAGS_http_max_connections);
  options.http_limits.max_per_address =
      absl::GetFlag(FLAGS_http_max_connections_per_address);
  options.http_limits.idle_timeout = absl::GetFlag(FLAGS_http_idle_timeout);
  options.http_limits.max_body_bytes = static_cast<size_t>(
      std::max<int64_t>(1, absl::GetFlag(FLAGS_http_max_body_bytes)));
  options.inspector = absl::GetFlag(FLAGS_inspector);
  options.inspector_insecure_no_token =
      absl::GetFlag(FLAGS_inspector_insecure_no_token);
  options.admin_token = absl::GetFlag(FLAGS_admin_token);
  options.admin_allowed_hosts = absl::GetFlag(FLAGS_admin_allowed_hosts);
  if (const std::string file = absl::GetFlag(FLAGS_admin_token_file);
      !file.empty()) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    options.admin_token = std::string(absl::StripAsciiWhitespace(text.str()));
    if (!in || options.admin_token.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--admin_token_file: cannot read a token from ", file));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ServerOptions> OptionsFromFlags() {
  ServerOptions options;
  options.config_dir = absl::GetFlag(FLAGS_config_dir);
  options.grpc_address = absl::GetFlag(FLAGS_grpc_address);
  options.http_address = absl::GetFlag(FLAGS_http_address);
  options.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key = absl::GetFlag(FLAGS_tls_key);
  options.tls_client_ca = absl::GetFlag(FLAGS_tls_client_ca);
  options.decision_log = {
      .sink = absl::GetFlag(FLAGS_decision_log),
      .format = absl::GetFlag(FLAGS_decision_log_format),
      .sample = absl::GetFlag(FLAGS_decision_log_sample),
      .queue_capacity = static_cast<size_t>(
          std::max(0, absl::GetFlag(FLAGS_decision_log_queue))),
      .mask_agent_ids = absl::GetFlag(FLAGS_decision_log_mask_ids),
      .mask_salt = absl::GetFlag(FLAGS_decision_log_mask_salt),
      .factor_values = absl::GetFlag(FLAGS_decision_log_factors)};
  CandidateOptionsFromFlags(&options);
  options.service.max_agents_per_request =
      absl::GetFlag(FLAGS_max_agents_per_request);
  options.service.max_targets_per_request =
      absl::GetFlag(FLAGS_max_targets_per_request);
  options.service.max_pools_per_request =
      absl::GetFlag(FLAGS_max_pools_per_request);
  options.service.max_holders_per_request =
      absl::GetFlag(FLAGS_max_holders_per_request);
  if (absl::Status s = AdminOptionsFromFlags(&options); !s.ok()) return s;
  options.recent_decisions =
      static_cast<size_t>(std::max(1, absl::GetFlag(FLAGS_recent_decisions)));
  options.recent_sample = absl::GetFlag(FLAGS_recent_sample);
  options.recent_max_per_second = absl::GetFlag(FLAGS_recent_max_per_second);
  options.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options.service.queue.workers = absl::GetFlag(FLAGS_workers);
  options.service.queue.max_agents = absl::GetFlag(FLAGS_max_queued_agents);
  options.service.queue.nice = absl::GetFlag(FLAGS_worker_nice);
  options.service.queue.max_bytes = absl::GetFlag(FLAGS_max_queued_bytes);
  options.max_memory_bytes = absl::GetFlag(FLAGS_max_memory_bytes);
  options.max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams);
  options.reflection = absl::GetFlag(FLAGS_reflection);
  options.reload_interval = absl::GetFlag(FLAGS_reload_interval);
  options.keepalive_time = absl::GetFlag(FLAGS_keepalive_time);
  options.keepalive_timeout = absl::GetFlag(FLAGS_keepalive_timeout);
  options.min_client_ping_interval =
      absl::GetFlag(FLAGS_min_client_ping_interval);
  options.max_connection_age = absl::GetFlag(FLAGS_max_connection_age);
  options.max_connection_age_grace =
      absl::GetFlag(FLAGS_max_connection_age_grace);
  options.max_connection_idle = absl::GetFlag(FLAGS_max_connection_idle);
  options.simd_target = absl::GetFlag(FLAGS_simd_target);
  return options;
}

ProcessFlags ProcessFlagsFromFlags() {
  return {
      .drain_delay = absl::GetFlag(FLAGS_drain_delay),
      .drain_grace = absl::GetFlag(FLAGS_drain_grace),
      .port_file = absl::GetFlag(FLAGS_port_file),
      .mutex_deadlock_detection = absl::GetFlag(FLAGS_mutex_deadlock_detection),
      .log_level = absl::GetFlag(FLAGS_log_level)};
}

}  // namespace utilityd::server
