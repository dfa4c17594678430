// Where decisions come from: a config directory scored in process, or a
// utilityd server through the SDK; both answer with the same messages.
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "ctl/cli.h"
#include "utilityd/codec/batch.h"
#include "utilityd/codec/scenarios.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd::ctl {
namespace {

class OfflineSource final : public Source {
 public:
  explicit OfflineSource(loader::Catalog catalog)
      : catalog_(std::move(catalog)), loaded_at_(absl::Now()) {}
  absl::StatusOr<v1::DecideResponse> Decide(
      const v1::DecideRequest& request) override {
    if (absl::Status s = codec::CheckForm(request); !s.ok()) return s;
    v1::DecideResponse response;
    codec::DecideBatch(catalog_, request, &response);
    return response;
  }
  absl::StatusOr<v1::ListBehaviourSetsResponse> List() override {
    v1::ListBehaviourSetsResponse list;
    for (const auto& [name, set] : catalog_.sets()) {
      *list.add_behaviour_sets() = codec::Summarise(*set, loaded_at_);
    }
    return list;
  }
  absl::StatusOr<v1::GetBehaviourSetResponse> Get(
      const std::string& name) override {
    const auto set = catalog_.Find(name);
    if (set == nullptr) {
      std::vector<std::string> names;
      for (const auto& [n, _] : catalog_.sets()) names.push_back(n);
      return absl::NotFoundError(absl::StrCat(
          "name: ", engine::UnknownNameMessage("set", name, names)));
    }
    v1::GetBehaviourSetResponse got;
    *got.mutable_summary() = codec::Summarise(*set, loaded_at_);
    *got.mutable_behaviour_set() = set->definition;
    return got;
  }

 private:
  loader::Catalog catalog_;
  absl::Time loaded_at_;
};

class RemoteSource final : public Source {
 public:
  explicit RemoteSource(std::unique_ptr<client::Client> client)
      : client_(std::move(client)) {}
  absl::StatusOr<v1::DecideResponse> Decide(
      const v1::DecideRequest& request) override {
    return client_->Decide(request);
  }
  absl::StatusOr<v1::ListBehaviourSetsResponse> List() override {
    return client_->ListBehaviourSets();
  }
  absl::StatusOr<v1::GetBehaviourSetResponse> Get(
      const std::string& name) override {
    return client_->GetBehaviourSet(name);
  }

 private:
  std::unique_ptr<client::Client> client_;
};

}  // namespace

namespace {

// TLS flags of every command that talks to a server.
const std::vector<Option>& TlsOptions() {
  static const std::vector<Option> options = {
      {"tls_ca", "FILE", "PEM CA that signed the server (switches TLS on)"},
      {"tls_cert", "FILE", "PEM client certificate (mutual TLS)"},
      {"tls_key", "FILE", "PEM key of --tls_cert"},
      {"tls_server_name", "NAME", "name to check the server certificate for"},
  };
  return options;
}

}  // namespace

std::vector<Option> WithTls(std::vector<Option> options) {
  options.insert(options.end(), TlsOptions().begin(), TlsOptions().end());
  return options;
}

client::ClientOptions RemoteOptions(const Parsed& p,
                                    const std::string& target) {
  client::ClientOptions options;
  options.target = target;
  options.deadline = absl::Seconds(10);
  options.tls_ca = p.get("tls_ca");
  options.tls_cert = p.get("tls_cert");
  options.tls_key = p.get("tls_key");
  options.tls_server_name = p.get("tls_server_name");
  return options;
}

std::unique_ptr<Source> OpenSource(const Parsed& p, std::ostream& err) {
  if (p.has("target")) {
    absl::StatusOr<std::unique_ptr<client::Client>> c =
        client::Client::Connect(RemoteOptions(p, p.get("target")));
    if (!c.ok()) {
      err << c.status().message() << "\n";
      return nullptr;
    }
    return std::make_unique<RemoteSource>(*std::move(c));
  }
  const std::string dir = p.get("config_dir", "examples/behaviour_sets");
  absl::StatusOr<loader::Catalog> catalog = loader::LoadCatalog({dir});
  if (!catalog.ok()) {
    err << catalog.status().message() << "\n";
    return nullptr;
  }
  return std::make_unique<OfflineSource>(*std::move(catalog));
}

}  // namespace utilityd::ctl
