#include "replicas.h"

#include <arpa/inet.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/support/channel_arguments.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace utilityd::client::internal {
namespace {

// How long a probe of an ejected replica may take, and the longest wait
// between probes of a replica that keeps failing them.
constexpr absl::Duration kMaxProbeBackoff = absl::Seconds(1);
constexpr absl::Duration kProbeTick = absl::Milliseconds(20);

std::chrono::system_clock::time_point ChronoIn(absl::Duration d) {
  return std::chrono::system_clock::now() +
         std::chrono::microseconds(absl::ToInt64Microseconds(d));
}

// "host:port" or "[v6]:port" into its parts.
absl::Status SplitHostPort(absl::string_view item, std::string* host,
                           std::string* port) {
  item = absl::StripAsciiWhitespace(item);
  size_t colon = item.rfind(':');
  if (colon == absl::string_view::npos || colon + 1 == item.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("target: \"", item, "\" has no port (host:port)"));
  }
  absl::string_view h = item.substr(0, colon);
  if (absl::ConsumePrefix(&h, "[") && !absl::ConsumeSuffix(&h, "]")) {
    return absl::InvalidArgumentError(
        absl::StrCat("target: \"", item, "\": unclosed [ in an IPv6 address"));
  }
  int number = 0;
  if (!absl::SimpleAtoi(item.substr(colon + 1), &number) || number <= 0 ||
      number > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("target: \"", item, "\": port is not 1..65535"));
  }
  if (h.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("target: \"", item, "\" has no host"));
  }
  *host = std::string(h);
  *port = std::string(item.substr(colon + 1));
  return absl::OkStatus();
}

// The addresses `host` resolves to, as "ip:port" / "[ip]:port".
absl::StatusOr<std::vector<std::string>> Lookup(const std::string& host,
                                                const std::string& port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found);
      rc != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot resolve ", host, ": ", gai_strerror(rc)));
  }
  std::vector<std::string> out;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    if (a->ai_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr,
                text, sizeof text);
      out.push_back(absl::StrCat(text, ":", port));
    } else if (a->ai_family == AF_INET6) {
      inet_ntop(AF_INET6,
                &reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr, text,
                sizeof text);
      out.push_back(absl::StrCat("[", text, "]:", port));
    }
  }
  freeaddrinfo(found);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool IsIpLiteral(const std::string& host) {
  in6_addr v6;
  in_addr v4;
  return inet_pton(AF_INET, host.c_str(), &v4) == 1 ||
         inet_pton(AF_INET6, host.c_str(), &v6) == 1;
}

}  // namespace

void RetryBudget::Deposit() {
  utilityd::MutexLock lock(&mu_);
  tokens_ = std::min(max_, tokens_ + ratio_);
}

bool RetryBudget::Withdraw() {
  utilityd::MutexLock lock(&mu_);
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

absl::StatusOr<std::shared_ptr<ReplicaPool>> ReplicaPool::Create(
    const ClientOptions& options) {
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      ChannelCredentials(options);
  if (!credentials.ok()) return credentials.status();
  if (options.ai_tick <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("ai_tick: must be positive");
  }
  if (options.max_attempts < 1) {
    return absl::InvalidArgumentError("max_attempts: must be at least 1");
  }
  std::shared_ptr<ReplicaPool> pool(new ReplicaPool(options));
  pool->self_ = pool;
  pool->credentials_ = *std::move(credentials);
  if (absl::Status s = pool->Resolve(); !s.ok()) return s;
  pool->prober_ = std::thread([p = pool.get()] { p->ProbeLoop(); });
  return pool;
}

ReplicaPool::ReplicaPool(const ClientOptions& options)
    : options_(options),
      budget_(options.retry_budget_ratio, options.retry_budget_reserve) {}

ReplicaPool::~ReplicaPool() { Shutdown(); }

InFlight::Token::~Token() {
  if (owner_ == nullptr) return;
  utilityd::MutexLock lock(&owner_->mu_);
  --owner_->count_;
}

InFlight::Token InFlight::Enter(const std::shared_ptr<InFlight>& tracker) {
  utilityd::MutexLock lock(&tracker->mu_);
  ++tracker->count_;
  return Token(tracker);
}

bool InFlight::WaitIdle(absl::Duration timeout) {
  utilityd::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(
      [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return count_ == 0; },
      timeout);
}

void ReplicaPool::Shutdown() {
  {
    utilityd::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (prober_.joinable() && prober_.get_id() != std::this_thread::get_id()) {
    prober_.join();
  }
}

absl::Duration ReplicaPool::attempt_deadline() const {
  return options_.batch_deadline > absl::ZeroDuration()
             ? options_.batch_deadline
             : options_.ai_tick / 2;
}

std::shared_ptr<Replica> ReplicaPool::MakeReplica(
    const std::string& address, const std::string& grpc_target) const {
  grpc::ChannelArguments args;
  if (!options_.tls_server_name.empty()) {
    args.SetSslTargetNameOverride(options_.tls_server_name);
  }
  // Round robin over the replica's one address: unlike pick_first, it
  // reconnects on its own after a connection is lost, so a replica that
  // comes back is connected before the pool's next probe. No gRPC health
  // watch: behind an L7 proxy (nginx) the watch reaches one backend, whose
  // death would mark the proxy, and every call through it, unavailable
  // until the watch is retried; answers and the pool's probes judge.
  args.SetServiceConfigJSON(
      R"({"loadBalancingConfig": [{"round_robin": {}}]})");
  args.SetMaxReceiveMessageSize(options_.max_message_bytes);
  args.SetMaxSendMessageSize(options_.max_message_bytes);
  if (options_.keepalive_time > absl::ZeroDuration()) {
    args.SetInt(
        GRPC_ARG_KEEPALIVE_TIME_MS,
        static_cast<int>(absl::ToInt64Milliseconds(options_.keepalive_time)));
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                static_cast<int>(
                    absl::ToInt64Milliseconds(options_.keepalive_timeout)));
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  }
  // A replica that comes back (or a new one in a fixed list) is connected
  // again within a second.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 500);
  // Deadlines, not gRPC's retries, decide when to try another replica.
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  // Each replica its own connection, even to one address twice.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto r = std::make_shared<Replica>();
  r->address = address;
  r->channel = grpc::CreateCustomChannel(grpc_target, credentials_, args);
  r->stub = v1::DecisionService::NewStub(r->channel);
  r->health = grpc::health::v1::Health::NewStub(r->channel);
  r->channel->GetState(/*try_to_connect=*/true);
  return r;
}

absl::Status ReplicaPool::Resolve() {
  absl::string_view target = options_.target;
  if (target.empty()) return absl::InvalidArgumentError("target: is empty");
  std::vector<std::pair<std::string, std::string>> addresses;  // shown, grpc
  const bool dns = absl::ConsumePrefix(&target, "dns:///") ||
                   absl::ConsumePrefix(&target, "dns:");
  if (!dns &&
      (absl::StrContains(target, ":/") || absl::StartsWith(target, "unix:") ||
       absl::StartsWith(target, "unix-abstract:"))) {
    // Another scheme: one replica, resolved by gRPC.
    addresses.emplace_back(std::string(target), std::string(target));
  } else {
    absl::ConsumePrefix(&target, "ipv4:") ||
        absl::ConsumePrefix(&target, "ipv6:");
    for (absl::string_view item :
         absl::StrSplit(target, ',', absl::SkipWhitespace())) {
      std::string host, port;
      if (absl::Status s = SplitHostPort(item, &host, &port); !s.ok()) return s;
      absl::StatusOr<std::vector<std::string>> found = Lookup(host, port);
      if (!found.ok()) {
        // A name that does not resolve yet (a service being created) is
        // tried again every resolve_interval; only a malformed one fails.
        if (IsIpLiteral(host)) return found.status();
        host_ = host;
        port_ = port;
        continue;
      }
      if (!IsIpLiteral(host)) {
        host_ = host;
        port_ = port;
      }
      for (std::string& a : *found) {
        const bool v6 = absl::StartsWith(a, "[");
        addresses.emplace_back(a, absl::StrCat(v6 ? "ipv6:" : "ipv4:", a));
      }
    }
  }
  // New addresses get a channel (made outside the lock); known ones keep
  // theirs and their state. Only this thread and Create call Resolve.
  std::vector<std::shared_ptr<Replica>> known;
  {
    utilityd::MutexLock lock(&mu_);
    for (const Entry& e : entries_) known.push_back(e.replica);
  }
  std::vector<Entry> fresh;
  for (const auto& address : addresses) {
    // (Named, not a structured binding: clang 14 cannot capture those.)
    const std::string& shown = address.first;
    auto it = std::find_if(known.begin(), known.end(),
                           [&](auto& r) { return r->address == shown; });
    fresh.push_back({.replica = it != known.end()
                                    ? *it
                                    : MakeReplica(shown, address.second)});
  }
  utilityd::MutexLock lock(&mu_);
  for (Entry& e : fresh) {
    if (Entry* old = Find(*e.replica)) e = std::move(*old);
  }
  entries_ = std::move(fresh);  // replicas gone from DNS are dropped
  if (entries_.empty() && host_.empty()) {
    return absl::InvalidArgumentError("target: names no replica");
  }
  return absl::OkStatus();
}

ReplicaPool::Entry* ReplicaPool::Find(const Replica& r) {
  for (Entry& e : entries_) {
    if (e.replica.get() == &r) return &e;
  }
  return nullptr;
}

Pick ReplicaPool::Next(const std::vector<const Replica*>& busy) {
  const absl::Time now = absl::Now();
  utilityd::MutexLock lock(&mu_);
  const size_t n = entries_.size();
  auto is_busy = [&](const Entry& e) {
    return std::find(busy.begin(), busy.end(), e.replica.get()) != busy.end();
  };
  // Admitted, connected or connecting, not pushed back: round robin.
  for (size_t k = 0; k < n; ++k) {
    Entry& e = entries_[(next_ + k) % n];
    if (e.ejected || is_busy(e) || e.pushed_back_until > now) continue;
    if (e.replica->channel->GetState(true) == GRPC_CHANNEL_TRANSIENT_FAILURE) {
      continue;
    }
    next_ = (next_ + k + 1) % n;
    return {e.replica};
  }
  // None: the one whose pushback ends first, else the longest ejected.
  Entry* best = nullptr;
  for (Entry& e : entries_) {
    if (is_busy(e) || e.ejected || e.pushed_back_until <= now) continue;
    if (best == nullptr || e.pushed_back_until < best->pushed_back_until) {
      best = &e;
    }
  }
  if (best != nullptr) return {best->replica, best->pushed_back_until};
  for (Entry& e : entries_) {
    if (is_busy(e)) continue;
    if (best == nullptr ||
        (e.ejected && best->ejected && e.ejected_at < best->ejected_at) ||
        (!e.ejected && best->ejected)) {
      best = &e;
    }
  }
  if (best != nullptr) return {best->replica};
  return {};
}

void ReplicaPool::Answered(const Replica& r) {
  utilityd::MutexLock lock(&mu_);
  if (Entry* e = Find(r)) {
    ++e->answered;
    e->ejected = false;
    e->strikes = 0;
    e->refusals = 0;
  }
}

void ReplicaPool::Eject(const Replica& r, absl::string_view why) {
  const absl::Time now = absl::Now();
  utilityd::MutexLock lock(&mu_);
  Entry* e = Find(r);
  if (e == nullptr || e->ejected) return;
  e->ejected = true;
  e->ejected_at = now;
  e->why = std::string(why);
  e->next_probe = now + attempt_deadline();
}

void ReplicaPool::PushBack(const Replica& r, absl::Duration after) {
  utilityd::MutexLock lock(&mu_);
  if (Entry* e = Find(r)) {
    const absl::Duration hold = std::max(
        after,
        std::min(kMaxProbeBackoff, after * (1 << std::min(e->refusals, 10))));
    ++e->refusals;
    e->pushed_back_until = std::max(e->pushed_back_until, absl::Now() + hold);
  }
}

std::vector<ReplicaState> ReplicaPool::States() const {
  utilityd::MutexLock lock(&mu_);
  std::vector<ReplicaState> out;
  for (const Entry& e : entries_) {
    out.push_back(
        {e.replica->address, e.ejected, e.ejected ? e.why : "", e.answered});
  }
  return out;
}

void ReplicaPool::Probe(std::shared_ptr<Replica> replica) {
  struct Call {
    InFlight::Token token;  // first: released after the channel
    std::shared_ptr<Replica> replica;
    grpc::ClientContext context;
    grpc::health::v1::HealthCheckRequest request;
    grpc::health::v1::HealthCheckResponse response;
  };
  auto call = std::make_shared<Call>();
  call->token = Enter();
  call->replica = std::move(replica);
  call->context.set_deadline(ChronoIn(attempt_deadline()));
  // A channel still reconnecting is given the probe's whole deadline.
  call->context.set_wait_for_ready(true);
  call->request.set_service("utilityd.v1.DecisionService");
  std::weak_ptr<ReplicaPool> self = self_;
  call->replica->health->async()->Check(
      &call->context, &call->request, &call->response,
      [call, self](grpc::Status s) {
        if (auto pool = self.lock()) {
          pool->Probed(
              *call->replica,
              s.ok() && call->response.status() ==
                            grpc::health::v1::HealthCheckResponse::SERVING,
              s.ok());
        }
      });
}

void ReplicaPool::Probed(const Replica& r, bool serving, bool answered) {
  const absl::Time now = absl::Now();
  utilityd::MutexLock lock(&mu_);
  Entry* e = Find(r);
  if (e == nullptr) return;
  e->probing = false;
  if (serving) {
    e->ejected = false;
    e->strikes = 0;
    return;
  }
  if (answered) {  // up, not serving yet: it will be soon
    e->next_probe = now + attempt_deadline();
    return;
  }
  ++e->strikes;
  e->next_probe =
      now + std::min(kMaxProbeBackoff,
                     attempt_deadline() * (1 << std::min(e->strikes, 6)));
}

void ReplicaPool::ProbeLoop() {
  absl::Time next_resolve = absl::Now() + options_.resolve_interval;
  while (true) {
    std::vector<std::shared_ptr<Replica>> due;
    bool resolve = false;
    {
      utilityd::MutexLock lock(&mu_);
      auto stop = [this]()
                      ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_; };
      if (mu_.AwaitWithTimeout(stop, kProbeTick)) return;
      const absl::Time now = absl::Now();
      for (Entry& e : entries_) {
        if (e.ejected && !e.probing && e.next_probe <= now) {
          e.probing = true;
          due.push_back(e.replica);
        }
      }
      resolve = !host_.empty() &&
                options_.resolve_interval > absl::ZeroDuration() &&
                now >= next_resolve;
    }
    for (auto& r : due) Probe(std::move(r));
    if (resolve) {
      (void)Resolve();  // a failed lookup keeps the replicas known
      next_resolve = absl::Now() + options_.resolve_interval;
    }
  }
}

bool ReplicaPool::WaitForReady(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    std::vector<std::shared_ptr<Replica>> replicas;
    {
      utilityd::MutexLock lock(&mu_);
      for (Entry& e : entries_) replicas.push_back(e.replica);
    }
    for (auto& r : replicas) {
      grpc::ClientContext context;
      context.set_deadline(ChronoIn(
          std::min(deadline - absl::Now(),
                   std::max(attempt_deadline(), absl::Milliseconds(200)))));
      grpc::health::v1::HealthCheckRequest request;
      request.set_service("utilityd.v1.DecisionService");
      grpc::health::v1::HealthCheckResponse response;
      if (r->health->Check(&context, request, &response).ok() &&
          response.status() == grpc::health::v1::HealthCheckResponse::SERVING) {
        Answered(*r);
        return true;
      }
    }
    absl::SleepFor(std::min(absl::Milliseconds(50), deadline - absl::Now()));
  }
  return false;
}

}  // namespace utilityd::client::internal
