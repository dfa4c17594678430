#include "server/src/config_store.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace utilityd::server {

ConfigStore::ConfigStore(std::string dir, bool optional)
    : dir_(std::move(dir)), optional_(optional) {}

std::shared_ptr<const Generation> ConfigStore::Current() const {
  utilityd::MutexLock lock(&mu_);
  return current_;
}

ReloadOutcome ConfigStore::last_reload() const {
  utilityd::MutexLock lock(&mu_);
  return last_;
}

void ConfigStore::SetListener(
    std::function<void(const ReloadOutcome&)> listener) {
  utilityd::MutexLock lock(&mu_);
  listener_ = std::move(listener);
}

absl::Status ConfigStore::Reload() {
  utilityd::MutexLock serial(&reload_mu_);
  ReloadOutcome outcome;
  outcome.at = absl::Now();
  std::shared_ptr<const Generation> previous = Current();
  absl::StatusOr<loader::Catalog> catalog = loader::LoadCatalog(
      {dir_}, previous != nullptr ? &previous->catalog : nullptr);
  absl::Status status = catalog.status();
  const bool empty = status.ok() && catalog->sets().empty();
  if (empty) {
    status = absl::FailedPreconditionError(
        absl::StrCat(dir_, ": no behaviour sets (*.yaml, *.yml, *.json)"));
  }
  // An optional store's directory that is gone, or holds no sets (a
  // ConfigMap mount emptied of them), means "no sets": not a failed load.
  const bool none =
      optional_ && (empty || absl::IsNotFound(status) ||
                    (!status.ok() && !std::filesystem::exists(dir_)));
  if (none) {
    outcome.ok = true;
    outcome.changed = previous != nullptr;
    status = absl::OkStatus();
    utilityd::MutexLock lock(&mu_);
    current_ = nullptr;
  } else if (status.ok()) {
    outcome.ok = true;
    outcome.compiled = catalog->compiled();
    bool same = previous != nullptr &&
                previous->catalog.sets().size() == catalog->sets().size();
    for (const auto& [name, set] : catalog->sets()) {
      const auto old = previous ? previous->catalog.Find(name) : nullptr;
      same = same && old != nullptr && old->revision() == set->revision();
    }
    if (!same) {
      auto next = std::make_shared<Generation>();
      next->number = previous ? previous->number + 1 : 1;
      next->loaded_at = outcome.at;
      for (const auto& [name, set] : catalog->sets()) {
        const auto old = previous ? previous->catalog.Find(name) : nullptr;
        next->set_loaded_at[name] =
            old != nullptr && old->revision() == set->revision()
                ? previous->set_loaded_at.at(name)
                : outcome.at;
      }
      next->catalog = *std::move(catalog);
      outcome.changed = true;
      utilityd::MutexLock lock(&mu_);
      current_ = std::move(next);
    }
  } else {
    outcome.error = std::string(status.message());
  }
  std::function<void(const ReloadOutcome&)> listener;
  {
    utilityd::MutexLock lock(&mu_);
    last_ = outcome;
    listener = listener_;
  }
  if (listener) listener(outcome);
  return status;
}

}  // namespace utilityd::server
