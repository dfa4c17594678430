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
#include "utilityd/client/compact.h"

namespace utilityd::client {
namespace {

std::chrono::system_clock::time_point DeadlineIn(absl::Duration d) {
  return std::chrono::system_clock::now() +
         std::chrono::microseconds(absl::ToInt64Microseconds(d));
}

bool IsStaleRevision(const v1::Decision& d) {
  return d.has_error() && d.error().reason() == v1::ERROR_REASON_STALE_REVISION;
}

// Packs one list of named values into `packed` in `index` order.
absl::Status PackValues(
    const google::protobuf::Map<std::string, float>& named,
    const absl::flat_hash_map<std::string, int>& index,
    const google::protobuf::RepeatedPtrField<std::string>& order,
    absl::string_view where, google::protobuf::RepeatedField<float>* packed) {
  std::vector<float> values(order.size(), 0.0f);
  std::vector<bool> seen(order.size(), false);
  for (const auto& [name, value] : named) {
    auto it = index.find(name);
    if (it == index.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "named_factors: unknown factor \"", name, "\""));
    }
    values[it->second] = value;
    seen[it->second] = true;
  }
  std::vector<std::string> missing;
  for (int i = 0; i < order.size(); ++i) {
    if (!seen[i]) missing.push_back(order[i]);
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, "named_factors: missing ", absl::StrJoin(missing, ", ")));
  }
  packed->Assign(values.begin(), values.end());
  return absl::OkStatus();
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

// --- SetSchema ---------------------------------------------------------------

SetSchema::SetSchema(v1::BehaviourSetSummary summary)
    : summary_(std::move(summary)) {
  for (int i = 0; i < summary_.factors_size(); ++i) {
    factors_[summary_.factors(i)] = i;
  }
  for (int i = 0; i < summary_.target_factors_size(); ++i) {
    target_factors_[summary_.target_factors(i)] = i;
  }
}

int SetSchema::FactorIndex(absl::string_view name) const {
  auto it = factors_.find(name);
  return it == factors_.end() ? -1 : it->second;
}

int SetSchema::TargetFactorIndex(absl::string_view name) const {
  auto it = target_factors_.find(name);
  return it == target_factors_.end() ? -1 : it->second;
}

absl::Status SetSchema::Pack(v1::AgentSnapshot* snapshot) const {
  // Pack everything aside first, so a failure leaves the snapshot untouched.
  const bool agent_named =
      !snapshot->named_factors().empty() && snapshot->factors().empty();
  google::protobuf::RepeatedField<float> agent_values;
  if (agent_named) {
    if (absl::Status s = PackValues(snapshot->named_factors(), factors_,
                                    summary_.factors(), "", &agent_values);
        !s.ok()) {
      return s;
    }
  }
  std::vector<std::pair<int, google::protobuf::RepeatedField<float>>> targets;
  for (int t = 0; t < snapshot->targets_size(); ++t) {
    const v1::TargetSnapshot& target = snapshot->targets(t);
    if (target.named_factors().empty() || !target.factors().empty()) continue;
    google::protobuf::RepeatedField<float> values;
    if (absl::Status s = PackValues(target.named_factors(), target_factors_,
                                    summary_.target_factors(),
                                    absl::StrCat("targets[", t, "]."), &values);
        !s.ok()) {
      return s;
    }
    targets.emplace_back(t, std::move(values));
  }
  if (!agent_named && targets.empty()) return absl::OkStatus();
  if (agent_named) {
    snapshot->mutable_factors()->Swap(&agent_values);
    snapshot->clear_named_factors();
  }
  for (auto& [t, values] : targets) {
    v1::TargetSnapshot* target = snapshot->mutable_targets(t);
    target->mutable_factors()->Swap(&values);
    target->clear_named_factors();
  }
  snapshot->set_expected_revision(revision());
  return absl::OkStatus();
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

std::string ServiceConfigJson(const ClientOptions& options) {
  // Balance over the target's addresses, and watch each replica's gRPC
  // health: a draining replica turns NOT_SERVING and gets no new calls.
  std::string config = absl::StrCat(
      R"({"loadBalancingConfig": [{")", options.load_balancing_policy,
      R"(": {}}], "healthCheckConfig": {"serviceName": ")",
      "utilityd.v1.DecisionService", R"("})");
  if (options.max_attempts > 1) {
    // gRPC's retries: the server's pushback (grpc-retry-pushback-ms)
    // overrides the backoff, and each attempt is a new pick of the
    // balancer. A replica that refuses for good sends a pushback of -1.
    absl::StrAppend(
        &config,
        R"(, "methodConfig": [{"name": [{"service": "utilityd.v1.DecisionService", "method": "Decide"}], )",
        R"("retryPolicy": {"maxAttempts": )", std::min(options.max_attempts, 5),
        R"(, "initialBackoff": "0.05s", "maxBackoff": "1s", "backoffMultiplier": 2, )",
        R"("retryableStatusCodes": ["RESOURCE_EXHAUSTED", "UNAVAILABLE"]}}], )",
        R"("retryThrottling": {"maxTokens": 100, "tokenRatio": 1})");
  }
  absl::StrAppend(&config, "}");
  return config;
}

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(
    const ClientOptions& options) {
  absl::StatusOr<std::string> target = ResolveTarget(options.target);
  if (!target.ok()) return target.status();
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      ChannelCredentials(options);
  if (!credentials.ok()) return credentials.status();
  grpc::ChannelArguments args;
  if (!options.tls_server_name.empty()) {
    args.SetSslTargetNameOverride(options.tls_server_name);
  }
  // Balance over the target's addresses, and watch each replica's gRPC
  // health: a draining replica turns NOT_SERVING and gets no new calls.
  args.SetServiceConfigJSON(ServiceConfigJson(options));
  args.SetMaxReceiveMessageSize(options.max_message_bytes);
  args.SetMaxSendMessageSize(options.max_message_bytes);
  if (options.keepalive_time > absl::ZeroDuration()) {
    args.SetInt(
        GRPC_ARG_KEEPALIVE_TIME_MS,
        static_cast<int>(absl::ToInt64Milliseconds(options.keepalive_time)));
    args.SetInt(
        GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
        static_cast<int>(absl::ToInt64Milliseconds(options.keepalive_timeout)));
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  }
  // Reconnect quickly after a replica restarts.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  std::unique_ptr<Client> client(new Client());
  client->options_ = options;
  client->channel_ = grpc::CreateCustomChannel(*target, *credentials, args);
  client->stub_ = v1::DecisionService::NewStub(client->channel_);
  return client;
}

absl::StatusOr<v1::ListBehaviourSetsResponse> Client::ListBehaviourSets() {
  grpc::ClientContext context;
  context.set_deadline(DeadlineIn(options_.deadline));
  v1::ListBehaviourSetsResponse response;
  grpc::Status s = stub_->ListBehaviourSets(
      &context, v1::ListBehaviourSetsRequest(), &response);
  if (!s.ok()) return FromGrpcStatus(s);
  return response;
}

absl::StatusOr<v1::GetBehaviourSetResponse> Client::GetBehaviourSet(
    absl::string_view name) {
  grpc::ClientContext context;
  context.set_deadline(DeadlineIn(options_.deadline));
  v1::GetBehaviourSetRequest request;
  request.set_name(std::string(name));
  v1::GetBehaviourSetResponse response;
  grpc::Status s = stub_->GetBehaviourSet(&context, request, &response);
  if (!s.ok()) return FromGrpcStatus(s);
  return response;
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
  grpc::ClientContext context;
  context.set_deadline(DeadlineIn(options_.deadline));
  v1::DecideResponse again;
  if (!stub_->Decide(&context, retry, &again).ok() ||
      again.decisions_size() != static_cast<int>(stale.size())) {
    return;  // keep the FAILED_PRECONDITION answers
  }
  for (size_t k = 0; k < stale.size(); ++k) {
    answers[k]->Swap(again.mutable_decisions(static_cast<int>(k)));
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
    const v1::DecideRequest& request) {
  v1::DecideRequest packed = request;
  PackRequest(&packed);
  grpc::ClientContext context;
  context.set_deadline(DeadlineIn(options_.deadline));
  v1::DecideResponse response;
  grpc::Status s = stub_->Decide(&context, packed, &response);
  if (!s.ok()) return FromGrpcStatus(s);
  RepairStale(request, &response);
  return response;
}

std::unique_ptr<DecisionStream> Client::OpenStream(
    const StreamOptions& options) {
  return std::unique_ptr<DecisionStream>(new DecisionStream(this, options));
}

// --- DecisionStream ----------------------------------------------------------

DecisionStream::DecisionStream(Client* client, StreamOptions options)
    : client_(client), options_(options) {
  reader_ = std::thread([this] { Run(); });
}

DecisionStream::~DecisionStream() {
  Close();
  if (reader_.joinable()) reader_.join();
}

int DecisionStream::reconnects() const {
  utilityd::MutexLock lock(&mu_);
  return reconnects_;
}

int DecisionStream::in_flight() const {
  utilityd::MutexLock lock(&mu_);
  return static_cast<int>(pending_.size());
}

std::future<BatchResult> DecisionStream::Submit(v1::DecideRequest request) {
  v1::DecideRequest original = request;
  client_->PackRequest(&request);
  std::future<BatchResult> future;
  {
    utilityd::MutexLock lock(&mu_);
    auto room = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return closing_ ||
             static_cast<int>(pending_.size()) < options_.max_in_flight;
    };
    mu_.Await(room);
    if (closing_) {
      std::promise<BatchResult> refused;
      refused.set_value({request.request_id(),
                         absl::FailedPreconditionError("stream is closed"),
                         {}});
      return refused.get_future();
    }
    if (request.request_id() == 0) request.set_request_id(next_id_);
    next_id_ = std::max(next_id_, request.request_id() + 1);
    original.set_request_id(request.request_id());
    const uint64_t id = request.request_id();
    Pending& p = pending_[id];
    p.sent = std::move(request);
    p.original = std::move(original);
    future = p.promise.get_future();
  }
  utilityd::MutexLock write_lock(&write_mu_);
  WriteUnsent();
  return future;
}

void DecisionStream::WriteUnsent() {
  if (stream_ == nullptr) return;  // the reader thread connects and sends
  std::vector<const v1::DecideRequest*> unsent;
  {
    utilityd::MutexLock lock(&mu_);
    for (auto& [id, p] : pending_) {
      if (!p.written) {
        p.written = true;
        unsent.push_back(&p.sent);  // stays valid: only the reader erases,
      }                             // and only after its answer arrives
    }
  }
  for (const v1::DecideRequest* r : unsent) {
    if (!stream_->Write(*r)) break;  // broken: the reader reconnects
  }
}

void DecisionStream::Run() {
  absl::Duration backoff = options_.initial_backoff;
  while (true) {
    std::shared_ptr<grpc::ClientContext> context;
    {
      utilityd::MutexLock ctx_lock(&ctx_mu_);
      utilityd::MutexLock lock(&mu_);
      if (stopped_ || (closing_ && pending_.empty())) break;
      for (auto& [id, p] : pending_)
        p.written = false;  // resend on this stream
      context = context_ = std::make_shared<grpc::ClientContext>();
      context->set_wait_for_ready(true);
    }
    // May block until a server is reachable; Close cancels the context.
    std::unique_ptr<
        grpc::ClientReaderWriter<v1::DecideRequest, v1::DecideResponse>>
        owned = client_->stub().DecideStream(context.get());
    auto* stream = owned.get();
    {
      utilityd::MutexLock write_lock(&write_mu_);
      stream_ = std::move(owned);
      WriteUnsent();
    }
    v1::DecideResponse response;
    while (stream->Read(&response)) {
      backoff = options_.initial_backoff;
      Pending done;
      {
        utilityd::MutexLock lock(&mu_);
        auto it = pending_.find(response.request_id());
        if (it == pending_.end()) continue;  // an answer already delivered
        done = std::move(it->second);
        pending_.erase(it);
      }
      BatchResult result{response.request_id(), absl::OkStatus(), {}};
      if (response.has_error()) {
        result.status =
            absl::Status(static_cast<absl::StatusCode>(response.error().code()),
                         response.error().message());
      } else {
        client_->RepairStale(done.original, &response);
        result.response = std::move(response);
      }
      done.promise.set_value(std::move(result));
      response.Clear();
    }
    (void)stream->Finish();  // the next attempt waits for a ready connection
    {
      utilityd::MutexLock write_lock(&write_mu_);
      stream_.reset();
    }
    {
      utilityd::MutexLock ctx_lock(&ctx_mu_);
      context_.reset();
    }
    utilityd::MutexLock lock(&mu_);
    if (stopped_ || (closing_ && pending_.empty())) break;
    ++reconnects_;
    auto stop = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopped_; };
    mu_.AwaitWithTimeout(stop, backoff);
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

void DecisionStream::Close(absl::Duration timeout) {
  bool drained;
  {
    utilityd::MutexLock lock(&mu_);
    if (closing_) return;
    closing_ = true;
    auto empty = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return pending_.empty();
    };
    drained = mu_.AwaitWithTimeout(empty, timeout);
  }
  bool ended_cleanly = false;
  if (drained) {
    // Every batch is answered, so no write is blocked: end the stream
    // cleanly and let the server finish it.
    utilityd::MutexLock write_lock(&write_mu_);
    if (stream_ != nullptr) ended_cleanly = stream_->WritesDone();
  }
  std::map<uint64_t, Pending> abandoned;
  {
    utilityd::MutexLock ctx_lock(&ctx_mu_);
    utilityd::MutexLock lock(&mu_);
    stopped_ = true;
    abandoned.swap(pending_);
    // Otherwise cancel: a pending read, a blocked write or a connection
    // attempt waiting for a server all return at once.
    if (context_ != nullptr && !ended_cleanly) context_->TryCancel();
  }
  for (auto& [id, p] : abandoned) {
    p.promise.set_value(
        {id,
         absl::UnavailableError("stream closed before an answer arrived"),
         {}});
  }
}

}  // namespace utilityd::client
