#include "server/src/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <malloc.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "server/src/admin_api.h"
#include "server/src/log.h"
#include "utilityd/base/status_macros.h"
#include "utilityd/codec/variants.h"
#include "utilityd/engine/curve.h"

namespace utilityd::server {
namespace {

constexpr char kServiceName[] = "utilityd.v1.DecisionService";

int Millis(absl::Duration d) {
  return static_cast<int>(absl::ToInt64Milliseconds(d));
}

absl::StatusOr<std::string> ReadPem(const std::string& flag,
                                    const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(flag, ": cannot read ", path));
  }
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().find("-----BEGIN") == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", path, " is not a PEM file"));
  }
  return text.str();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(
    const ServerOptions& options) {
  if (options.tls_cert.empty() && options.tls_key.empty()) {
    if (!options.tls_client_ca.empty()) {
      return absl::InvalidArgumentError(
          "tls_client_ca: needs --tls_cert and --tls_key");
    }
    return grpc::InsecureServerCredentials();
  }
  if (options.tls_cert.empty() || options.tls_key.empty()) {
    return absl::InvalidArgumentError(
        "tls_cert and tls_key: give both, or neither for plaintext");
  }
  absl::StatusOr<std::string> cert = ReadPem("tls_cert", options.tls_cert);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPem("tls_key", options.tls_key);
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({*key, *cert});
  if (!options.tls_client_ca.empty()) {
    absl::StatusOr<std::string> ca =
        ReadPem("tls_client_ca", options.tls_client_ca);
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
    ssl.client_certificate_request =
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

// Message limits, keepalive and connection-age settings from `options`.
void SetChannelArguments(const ServerOptions& options,
                         grpc::ServerBuilder* builder) {
  // gRPC allows SO_REUSEPORT by default: a second utilityd on the same
  // port would silently share it. Fail with "address in use" instead.
  builder->AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder->SetMaxReceiveMessageSize(options.max_message_bytes);
  builder->SetMaxSendMessageSize(options.max_message_bytes);
  if (options.max_memory_bytes > 0) {
    grpc::ResourceQuota quota("utilityd");
    quota.Resize(static_cast<size_t>(options.max_memory_bytes));
    builder->SetResourceQuota(quota);
  }
  if (options.max_concurrent_streams > 0) {
    builder->AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                                options.max_concurrent_streams);
  }
  if (options.keepalive_time > absl::ZeroDuration()) {
    builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS,
                                Millis(options.keepalive_time));
    builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                                Millis(options.keepalive_timeout));
  }
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder->AddChannelArgument(
      GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
      Millis(options.min_client_ping_interval));
  builder->AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  if (options.max_connection_age > absl::ZeroDuration()) {
    builder->AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS,
                                Millis(options.max_connection_age));
    builder->AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
                                Millis(options.max_connection_age_grace));
  }
  if (options.max_connection_idle > absl::ZeroDuration()) {
    builder->AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS,
                                Millis(options.max_connection_idle));
  }
}

}  // namespace

absl::Status ServerOptions::Validate() const {
  if (http_limits.max_connections < 1 || http_limits.max_per_address < 1 ||
      http_limits.idle_timeout < absl::Seconds(1)) {
    return absl::InvalidArgumentError(
        "--http_max_connections and --http_max_connections_per_address must "
        "be >= 1 and --http_idle_timeout >= 1s");
  }
  if (service.queue.workers < 0 || service.queue.max_agents < 0 ||
      service.queue.max_bytes < 0 || max_memory_bytes < 0 ||
      max_concurrent_streams < 0) {
    return absl::InvalidArgumentError(
        "--workers, --max_queued_agents, --max_queued_bytes, "
        "--max_memory_bytes and --max_concurrent_streams must be >= 0");
  }
  if (service.max_agents_per_request < 1 ||
      service.max_targets_per_request < 0 ||
      service.max_pools_per_request < 0 ||
      service.max_holders_per_request < 0 || max_message_bytes < 1024) {
    return absl::InvalidArgumentError(
        "--max_agents_per_request must be >= 1, --max_targets_per_request, "
        "--max_pools_per_request and --max_holders_per_request >= 0, and "
        "--max_message_bytes >= 1024");
  }
  if (!(recent_sample >= 0 && recent_sample <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--recent_sample: expected 0..1, got ", recent_sample));
  }
  if (!(recent_max_per_second >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--recent_max_per_second: expected 0 or more, got ",
                     recent_max_per_second));
  }
  if (absl::Status s = engine::CheckSimdTarget(simd_target); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--simd_target: ", s.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<UtilitydServer>> UtilitydServer::Start(
    const ServerOptions& options) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  // Process-wide: every decision from here on runs on this target.
  if (absl::Status s = engine::UseSimdTarget(options.simd_target); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--simd_target: ", s.message()));
  }
  if (options.service.queue.max_agents > 0 &&
      options.service.queue.max_agents <
          options.service.max_agents_per_request) {
    Log(LogLevel::kWarning, "queue_below_request_limit",
        {{"max_queued_agents", options.service.queue.max_agents},
         {"max_agents_per_request", options.service.max_agents_per_request},
         {"effect",
          "batches larger than --max_queued_agents are always refused "
          "(OVERLOADED)"}});
  }
  // Every received batch is freed after decoding; with glibc's default
  // 128 KiB trim threshold the per-thread heaps shrank and regrew on almost
  // every batch (an madvise and a TLB flush each: 5% of the server's CPU
  // at full load). Keep up to 8 MiB of free heap instead.
  mallopt(M_TRIM_THRESHOLD, 8 << 20);
  std::unique_ptr<UtilitydServer> s(new UtilitydServer());
  s->metrics_ = std::make_unique<ServiceMetrics>(&s->registry_);
  absl::StatusOr<std::unique_ptr<DecisionLog>> log = DecisionLog::Open(
      options.decision_log, &s->metrics_->decision_log_written(),
      &s->metrics_->decision_log_dropped());
  if (!log.ok()) return log.status();
  s->decision_log_ = *std::move(log);
  s->store_ = std::make_unique<ConfigStore>(options.config_dir);
  s->memory_returner_ = std::make_unique<MemoryReturner>(absl::Seconds(1));
  if (options.inspector) {
    s->recent_ = std::make_unique<RecentDecisions>(
        options.recent_decisions, options.recent_sample,
        options.recent_max_per_second);
  }
  absl::StatusOr<std::unique_ptr<ShadowEvaluator>> shadow =
      ShadowEvaluator::Start(options.shadow, s->store_.get(), &s->registry_);
  if (!shadow.ok()) return shadow.status();
  s->shadow_ = *std::move(shadow);
  absl::StatusOr<std::unique_ptr<Canary>> canary =
      Canary::Start(options.canary, s->store_.get(), &s->registry_);
  if (!canary.ok()) return canary.status();
  s->canary_ = *std::move(canary);
  s->service_ = std::make_unique<DecisionServiceImpl>(
      s->store_.get(), options.service, s->metrics_.get(),
      s->decision_log_.get(), s->recent_.get(), s->shadow_.get(),
      s->canary_.get());

  // The sets are loaded before the port opens: a client whose stream was
  // waiting for this address (a replica restarting) is answered, not
  // refused as not ready, as soon as it connects. A load that fails still
  // opens the port, serving nothing and NOT_SERVING until a good reload.
  UtilitydServer* raw = s.get();
  s->store_->SetListener(
      [raw](const ReloadOutcome& outcome) { raw->OnReload(outcome); });
  (void)s->store_->Reload();

  grpc::EnableDefaultHealthCheckService(true);
  if (options.reflection)
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      ServerCredentials(options);
  if (!credentials.ok()) return credentials.status();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.grpc_address, *credentials, &s->port_);
  builder.RegisterService(s->service_.get());
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      interceptors;
  interceptors.push_back(s->metrics_->GrpcInterceptorFactory());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  SetChannelArguments(options, &builder);
  s->server_ = builder.BuildAndStart();
  if (s->server_ == nullptr || s->port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("grpc_address: cannot listen on ", options.grpc_address));
  }
  s->SetServing(s->store_->Current() != nullptr);
  s->watcher_ =
      std::make_unique<ConfigWatcher>(s->store_.get(), options.reload_interval);
  s->watcher_->Start();
  if (!options.http_address.empty()) {
    UTILITYD_RETURN_IF_ERROR(s->StartAdmin(options));
  }
  return s;
}

void UtilitydServer::OnReload(const ReloadOutcome& outcome) {
  metrics_->RecordReload(outcome, store_->Current().get());
  if (!outcome.ok) {
    Log(LogLevel::kError, "config_rejected",
        {{"dir", store_->dir()},
         {"serving", store_->Current() ? "last_good" : "none"},
         {"error", outcome.error}});
    return;
  }
  const auto g = store_->Current();
  Log(LogLevel::kInfo, "config_loaded",
      {{"dir", store_->dir()},
       {"generation", g->number},
       {"sets", g->catalog.sets().size()},
       {"changed", outcome.changed ? "true" : "false"},
       {"compiled", outcome.compiled.size()}});
  if (!service_->draining()) SetServing(true);
}

absl::Status UtilitydServer::StartAdmin(const ServerOptions& options) {
  absl::StatusOr<std::unique_ptr<AdminHttpServer>> admin =
      AdminHttpServer::Start(
          options.http_address, options.http_limits,
          {.metrics =
               [this] {
                 return metrics::TextExposition({&registry_, &process_});
               },
           .ready = [this] { return ready(); },
           .status_json = [this] { return StatusJson(); },
           .more_routes =
               [this, &options](HttpRouter& http) {
                 if (!options.inspector) return;
                 const std::string locked = InspectorLockReason(
                     options.http_address, !options.admin_token.empty(),
                     options.inspector_insecure_no_token);
                 if (!locked.empty()) {
                   Log(LogLevel::kWarning, "inspector_locked",
                       {{"reason", locked}});
                 } else if (options.admin_token.empty() &&
                            !IsLoopbackAddress(options.http_address)) {
                   Log(LogLevel::kWarning, "inspector_insecure",
                       {{"reason",
                         "--inspector_insecure_no_token: the inspector's API "
                         "and live feed are open to anyone who can reach " +
                             options.http_address}});
                 }
                 RegisterAdminApi(
                     http,
                     {.token = options.admin_token,
                      .locked = locked,
                      .allowed_hosts = options.admin_allowed_hosts},
                     service_.get(), recent_.get(), shadow_.get());
               }});
  if (!admin.ok()) return admin.status();
  admin_ = *std::move(admin);
  return absl::OkStatus();
}

bool UtilitydServer::ready() const {
  return store_->Current() != nullptr && !service_->draining();
}

std::string UtilitydServer::StatusJson() const {
  auto quote = [](const std::vector<std::string>& names) {
    std::vector<std::string> quoted;
    for (const std::string& t : names) quoted.push_back(JsonString(t));
    return absl::StrJoin(quoted, ",");
  };
  auto time = [](absl::Time t) {
    return JsonString(
        absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", t, absl::UTCTimeZone()));
  };
  const std::shared_ptr<const Generation> g = store_->Current();
  const ReloadOutcome last = store_->last_reload();
  std::string out = absl::StrCat(
      "{\"version\":", JsonString(UTILITYD_VERSION),
      ",\"simd_target\":", JsonString(engine::SimdTarget()),
      ",\"simd_targets\":[", quote(engine::AvailableSimdTargets()), "]",
      ",\"uptime_seconds\":", absl::ToInt64Seconds(absl::Now() - started_),
      ",\"ready\":", ready() ? "true" : "false",
      ",\"draining\":", service_->draining() ? "true" : "false",
      ",\"active_streams\":", service_->active_streams(),
      ",\"config_dir\":", JsonString(store_->dir()),
      ",\"generation\":", g ? g->number : 0, ",\"behaviour_sets\":[");
  if (g != nullptr) {
    bool first = true;
    for (const auto& [name, set] : g->catalog.sets()) {
      absl::StrAppend(&out, first ? "" : ",", "{\"name\":", JsonString(name),
                      ",\"revision\":", JsonString(set->revision()),
                      ",\"loaded_at\":", time(g->set_loaded_at.at(name)),
                      ",\"source\":", JsonString(set->source),
                      ",\"factors\":", set->compiled.factor_count(),
                      ",\"actions\":", set->compiled.action_count(), "}");
      first = false;
    }
  }
  absl::StrAppend(
      &out, "],\"last_reload\":{\"ok\":", last.ok ? "true" : "false",
      ",\"at\":", time(last.at),
      ",\"changed\":", last.changed ? "true" : "false", ",\"compiled\":[",
      quote(last.compiled), "]", ",\"error\":", JsonString(last.error), "}");
  if (canary_ != nullptr) {
    const Canary::Serving c = canary_->Current();
    const ReloadOutcome cl = canary_->store().last_reload();
    absl::StrAppend(&out, ",\"canary\":{\"config_dir\":",
                    JsonString(canary_->store().dir()), ",\"share\":", c.share,
                    ",\"behaviour_sets\":[");
    bool first = true;
    static const loader::Catalog kNone;
    const loader::Catalog& sets =
        c.generation != nullptr ? c.generation->catalog : kNone;
    for (const auto& [name, set] : sets.sets()) {
      const auto live = g != nullptr ? g->catalog.Find(name) : nullptr;
      absl::StrAppend(
          &out, first ? "" : ",", "{\"name\":", JsonString(name),
          ",\"revision\":", JsonString(set->revision()), ",\"served\":",
          live != nullptr && codec::SameColumns(*live, *set) ? "true" : "false",
          "}");
      first = false;
    }
    absl::StrAppend(&out,
                    "],\"last_reload\":{\"ok\":", cl.ok ? "true" : "false",
                    ",\"error\":", JsonString(cl.error), "}}");
  }
  absl::StrAppend(&out, "}");
  return out;
}

UtilitydServer::~UtilitydServer() {
  if (admin_) admin_->Stop();
  if (watcher_) watcher_->Stop();
  if (server_) {
    server_->Shutdown(std::chrono::system_clock::now());
    server_->Wait();
  }
}

void UtilitydServer::SetServing(bool serving) {
  if (server_ == nullptr) return;  // the first load: Start sets it after
  grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService();
  if (health == nullptr) return;
  health->SetServingStatus("", serving);
  health->SetServingStatus(kServiceName, serving);
}

void UtilitydServer::Drain(absl::Duration delay, absl::Duration grace) {
  Log(LogLevel::kInfo, "draining",
      {{"delay", absl::FormatDuration(delay)},
       {"grace", absl::FormatDuration(grace)},
       {"streams", service_->active_streams()}});
  SetServing(false);
  service_->StartDraining();
  watcher_->Stop();
  absl::SleepFor(delay);
  if (admin_) admin_->Stop();
  const auto deadline =
      std::chrono::system_clock::now() +
      std::chrono::milliseconds(absl::ToInt64Milliseconds(grace));
  server_->Shutdown(deadline);
}

void UtilitydServer::Wait() { server_->Wait(); }

}  // namespace utilityd::server
