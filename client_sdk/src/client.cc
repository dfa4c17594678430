#include "utilityd/client/client.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <tuple>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "calls.h"
#include "replicas.h"
#include "utilityd/client/compact.h"

namespace utilityd::client {
namespace {

bool IsStaleRevision(const v1::Decision& d) {
  return d.has_error() && d.error().reason() == v1::ERROR_REASON_STALE_REVISION;
}

}  // namespace

absl::Status FromGrpcStatus(const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

absl::StatusOr<std::string> ResolveTarget(absl::string_view target) {
  if (target.empty()) return absl::InvalidArgumentError("target: is empty");
  if (absl::StrContains(target, ":///") || absl::StartsWith(target, "ipv4:") ||
      absl::StartsWith(target, "ipv6:") || absl::StartsWith(target, "unix:")) {
    return std::string(target);
  }
  if (!absl::StrContains(target, ',')) return std::string(target);
  // A list: gRPC's ipv4:/ipv6: schemes take comma-separated IP addresses.
  std::vector<std::string> parts = absl::StrSplit(target, ',');
  bool v6 = false;
  for (std::string& p : parts) {
    p = std::string(absl::StripAsciiWhitespace(p));
    v6 = v6 || absl::StartsWith(p, "[");
    const bool ip = !p.empty() && (absl::ascii_isdigit(p[0]) || p[0] == '[');
    if (!ip) {
      return absl::InvalidArgumentError(
          absl::StrCat("target: \"", p,
                       "\" in a list must be an IP address and port; for "
                       "host names use one dns:///name:port target"));
    }
  }
  return absl::StrCat(v6 ? "ipv6:" : "ipv4:", absl::StrJoin(parts, ","));
}

// --- Client ------------------------------------------------------------------

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentials(
    const ClientOptions& options) {
  if (options.credentials != nullptr) return options.credentials;
  if (options.tls_ca.empty()) {
    if (!options.tls_cert.empty() || !options.tls_key.empty()) {
      return absl::InvalidArgumentError(
          "tls_cert and tls_key need tls_ca (the CA that signed the server)");
    }
    return grpc::InsecureChannelCredentials();
  }
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return absl::InvalidArgumentError(
        "tls_cert and tls_key: give both, or neither");
  }
  grpc::SslCredentialsOptions ssl;
  for (auto [field, path, out] :
       {std::tuple{"tls_ca", &options.tls_ca, &ssl.pem_root_certs},
        std::tuple{"tls_cert", &options.tls_cert, &ssl.pem_cert_chain},
        std::tuple{"tls_key", &options.tls_key, &ssl.pem_private_key}}) {
    if (path->empty()) continue;
    std::ifstream in(*path);
    if (!in) {
      return absl::NotFoundError(absl::StrCat(field, ": cannot read ", *path));
    }
    std::stringstream text;
    text << in.rdbuf();
    *out = text.str();
  }
  return grpc::SslCredentials(ssl);
}

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(
    const ClientOptions& options) {
  absl::StatusOr<std::shared_ptr<internal::ReplicaPool>> pool =
      internal::ReplicaPool::Create(options);
  if (!pool.ok()) return pool.status();
  std::unique_ptr<Client> client(new Client());
  client->options_ = options;
  client->pool_ = *std::move(pool);
  return client;
}

Client::~Client() {
  if (pool_ == nullptr) return;
  pool_->Shutdown();
  // Cancelled hedges and probes end within their deadlines; the channels
  // then end here, not on a gRPC thread (see InFlight).
  (void)pool_->WaitIdle(absl::Seconds(10));
}

bool Client::WaitForReady(absl::Duration timeout) {
  return pool_->WaitForReady(timeout);
}

std::vector<ReplicaState> Client::Replicas() const { return pool_->States(); }

absl::StatusOr<v1::ListBehaviourSetsResponse> Client::ListBehaviourSets() {
  return internal::CallHedged<v1::ListBehaviourSetsResponse>(
      pool_, "ListBehaviourSets", v1::ListBehaviourSetsRequest(),
      [](v1::DecisionService::Stub& stub, grpc::ClientContext* c,
         const v1::ListBehaviourSetsRequest* q,
         v1::ListBehaviourSetsResponse* r, auto done) {
        stub.async()->ListBehaviourSets(c, q, r, std::move(done));
      });
}

absl::StatusOr<v1::GetBehaviourSetResponse> Client::GetBehaviourSet(
    absl::string_view name) {
  v1::GetBehaviourSetRequest request;
  request.set_name(std::string(name));
  return internal::CallHedged<v1::GetBehaviourSetResponse>(
      pool_, "GetBehaviourSet", request,
      [](v1::DecisionService::Stub& stub, grpc::ClientContext* c,
         const v1::GetBehaviourSetRequest* q, v1::GetBehaviourSetResponse* r,
         auto done) {
        stub.async()->GetBehaviourSet(c, q, r, std::move(done));
      });
}

absl::StatusOr<v1::DecideResponse> Client::SendDecide(
    const v1::DecideRequest& request, CallInfo* info) {
  return internal::CallHedged<v1::DecideResponse>(
      pool_, "Decide", request,
      [](v1::DecisionService::Stub& stub, grpc::ClientContext* c,
         const v1::DecideRequest* q, v1::DecideResponse* r,
         auto done) { stub.async()->Decide(c, q, r, std::move(done)); },
      info);
}

absl::StatusOr<std::shared_ptr<const SetSchema>> Client::Schema(
    absl::string_view set) {
  {
    utilityd::MutexLock lock(&schema_mu_);
    auto it = schemas_.find(set);
    if (it != schemas_.end()) return it->second;
  }
  absl::StatusOr<v1::GetBehaviourSetResponse> got = GetBehaviourSet(set);
  if (!got.ok()) return got.status();
  auto schema = std::make_shared<const SetSchema>(got->summary());
  utilityd::MutexLock lock(&schema_mu_);
  schemas_[std::string(set)] = schema;
  return schema;
}

void Client::InvalidateSchema(absl::string_view set) {
  utilityd::MutexLock lock(&schema_mu_);
  schemas_.erase(set);
}

void Client::PackRequest(v1::DecideRequest* request) {
  if (!options_.pack_named_factors) return;
  // Schemas looked up for this request (null: the set could not be had),
  // so a batch costs one cache lookup per set, not per agent.
  absl::flat_hash_map<std::string, std::shared_ptr<const SetSchema>> seen;
  for (v1::AgentSnapshot& agent : *request->mutable_agents()) {
    bool named = !agent.named_factors().empty();
    for (const auto& t : agent.targets()) named |= !t.named_factors().empty();
    if (!named || agent.behaviour_set().empty()) continue;
    auto [it, fresh] = seen.try_emplace(agent.behaviour_set());
    if (fresh) {
      absl::StatusOr<std::shared_ptr<const SetSchema>> schema =
          Schema(agent.behaviour_set());
      if (schema.ok()) it->second = *std::move(schema);
    }
    // Unknown set or unreachable server: send as is; the server answers.
    if (it->second == nullptr) continue;
    // Pack leaves the agent untouched when a name is unknown or missing;
    // the server then reports it with the agent's index and the set's names.
    (void)it->second->Pack(&agent);
  }
}

void Client::RepairStale(const v1::DecideRequest& original,
                         v1::DecideResponse* response) {
  // The refused answers: full decisions, or a compact response's FULL ones.
  std::vector<int> stale;
  std::vector<v1::Decision*> answers;
  auto consider = [&](int i, v1::Decision* d) {
    const bool sdk_packed = i >= 0 && i < original.agents_size() &&
                            original.agents(i).expected_revision().empty();
    if (sdk_packed && IsStaleRevision(*d)) {
      stale.push_back(i);
      answers.push_back(d);
    }
  };
  for (int i = 0; i < response->decisions_size(); ++i) {
    consider(i, response->mutable_decisions(i));
  }
  if (response->has_compact()) {  // never adds an empty compact message
    for (v1::IndexedDecision& x :
         *response->mutable_compact()->mutable_full()) {
      consider(x.agent(), x.mutable_decision());
    }
  }
  if (stale.empty()) return;
  // Asked again in the full form; a compact answer keeps them as FULL.
  v1::DecideRequest retry;
  retry.set_request_id(original.request_id());
  retry.set_explain(original.explain());
  for (int i : stale) {
    InvalidateSchema(original.agents(i).behaviour_set());
    *retry.add_agents() = original.agents(i);
  }
  PackRequest(&retry);
  absl::StatusOr<v1::DecideResponse> again = SendDecide(retry, nullptr);
  if (!again.ok() ||
      again->decisions_size() != static_cast<int>(stale.size())) {
    return;  // keep the FAILED_PRECONDITION answers
  }
  for (size_t k = 0; k < stale.size(); ++k) {
    answers[k]->Swap(again->mutable_decisions(static_cast<int>(k)));
  }
}

absl::StatusOr<v1::DecideResponse> Client::ExpandCompact(
    const v1::DecideRequest& request, const v1::DecideResponse& response) {
  const CompactReader reader(request, response);
  if (absl::Status s = reader.Check(); !s.ok()) return s;
  v1::DecideResponse expanded;
  expanded.set_request_id(response.request_id());
  for (int i = 0; i < reader.size(); ++i) {
    std::vector<std::string> actions;
    if (reader.full(i) == nullptr) {
      const std::string& set = request.agents(i).behaviour_set();
      absl::StatusOr<std::shared_ptr<const SetSchema>> schema = Schema(set);
      if (schema.ok() && (*schema)->revision() != reader.revision(i)) {
        InvalidateSchema(set);  // the server has reloaded it since
        schema = Schema(set);
      }
      if (!schema.ok()) return schema.status();
      if ((*schema)->revision() != reader.revision(i)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "agents[", i, "]: decided by revision ", reader.revision(i), " of ",
            set, "; the server now has ", (*schema)->revision()));
      }
      const auto& names = (*schema)->summary().actions();
      actions.assign(names.begin(), names.end());
    }
    absl::StatusOr<v1::Decision> d = reader.Expand(i, actions);
    if (!d.ok()) return d.status();
    *expanded.add_decisions() = *std::move(d);
  }
  return expanded;
}

absl::StatusOr<v1::DecideResponse> Client::Decide(
    const v1::DecideRequest& request, CallInfo* info) {
  v1::DecideRequest packed = request;
  PackRequest(&packed);
  absl::StatusOr<v1::DecideResponse> response = SendDecide(packed, info);
  if (response.ok()) RepairStale(request, &*response);
  return response;
}

std::unique_ptr<DecisionStream> Client::OpenStream(
    const StreamOptions& options) {
  return std::unique_ptr<DecisionStream>(new DecisionStream(
      std::make_shared<internal::StreamCore>(this, pool_, options)));
}

}  // namespace utilityd::client
