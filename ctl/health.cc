// utilityctl health: a server's gRPC health, for probes and scripts.
#include <algorithm>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "ctl/bench.h"
#include "ctl/cli.h"
#include "google/protobuf/util/json_util.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "utilityd/client/client.h"
#include "utilityd/loader/proto_reader.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/replay/log_reader.h"
#include "utilityd/replay/replay.h"
#include "utilityd/v1/decision_log.pb.h"

namespace utilityd::ctl {
namespace {

// --- health ------------------------------------------------------------------

// Asks a server's grpc.health.v1 service; exit 0 only when SERVING (for a
// container HEALTHCHECK or a script).
int Health(const Parsed& p, std::ostream& out, std::ostream& err) {
  const client::ClientOptions options =
      RemoteOptions(p, p.get("target", "localhost:50051"));
  absl::StatusOr<std::string> resolved = client::ResolveTarget(options.target);
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      client::ChannelCredentials(options);
  if (!resolved.ok() || !credentials.ok()) {
    err << (resolved.ok() ? credentials.status() : resolved.status()).message()
        << "\n";
    return kUsage;
  }
  grpc::ChannelArguments args;
  if (!options.tls_server_name.empty()) {
    args.SetSslTargetNameOverride(options.tls_server_name);
  }
  auto stub = grpc::health::v1::Health::NewStub(
      grpc::CreateCustomChannel(*resolved, *credentials, args));
  grpc::ClientContext context;
  absl::Duration timeout = absl::Seconds(3);
  if (p.has("timeout") && !absl::ParseDuration(p.get("timeout"), &timeout)) {
    err << "--timeout: expected a duration such as 3s\n";
    return kUsage;
  }
  context.set_deadline(
      std::chrono::system_clock::now() +
      std::chrono::milliseconds(absl::ToInt64Milliseconds(timeout)));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(p.get("service"));
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status s = stub->Check(&context, request, &response);
  if (!s.ok()) {
    return Failed(client::FromGrpcStatus(s), err);
  }
  out << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(
             response.status())
      << "\n";
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING
             ? kOk
             : kInvalid;
}

}  // namespace

Command HealthCommand() {
  return {
      .name = "health",
      .synopsis = "[--target HOST:PORT] [--service NAME] [--timeout 3s]",
      .description =
          "Checks a server's gRPC health. Prints SERVING or NOT_SERVING; "
          "exits 0 only\nwhen serving (for container health checks).",
      .options = WithTls(
          {{"target", "HOST:PORT", "server (default localhost:50051)"},
           {"service", "NAME",
            "service to ask about (default: the whole server)"},
           {"timeout", "DURATION", "give up after this long (default 3s)"}}),
      .run = Health};
}

}  // namespace utilityd::ctl
