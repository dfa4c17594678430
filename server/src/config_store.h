// The behaviour sets a server answers with, as immutable generations that
// are swapped atomically. A request takes the current generation once and
// finishes on it, whatever reloads happen meanwhile.
//
//   ConfigStore store("/etc/utilityd/behaviour_sets");
//   absl::Status s = store.Reload();      // parse, validate, compile, swap
//   std::shared_ptr<const Generation> g = store.Current();  // null: none yet
#ifndef UTILITYD_SERVER_CONFIG_STORE_H_
#define UTILITYD_SERVER_CONFIG_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "utilityd/base/sync.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd::server {

// One loaded state of the config directory.
struct Generation {
  uint64_t number = 0;
  loader::Catalog catalog;
  absl::Time loaded_at;
  // When each set's current revision was first loaded by this process.
  absl::flat_hash_map<std::string, absl::Time> set_loaded_at;
};

struct ReloadOutcome {
  bool ok = false;
  bool changed = false;  // a new generation was installed
  absl::Time at;
  std::string error;  // the full validation error when !ok
  // Sets validated and compiled anew (new, or their content or file
  // changed: a package edit recompiles exactly the sets that compose it);
  // the others serve on as they were.
  std::vector<std::string> compiled;
};

class ConfigStore {
 public:
  // An `optional` store (a canary's) treats a missing directory, or one
  // without sets, as "no sets": Current() becomes null, not an error.
  explicit ConfigStore(std::string dir, bool optional = false);

  // Returns the current generation, or nullptr before the first good load.
  // Thread-safe and cheap (one shared_ptr copy under a lock).
  std::shared_ptr<const Generation> Current() const;

  // Loads every set of the directory off to the side. On success installs
  // a new generation (when anything changed) and returns OK; on failure
  // keeps the last good generation and returns the error. Serialised:
  // concurrent calls run one after another.
  absl::Status Reload();

  ReloadOutcome last_reload() const;
  const std::string& dir() const { return dir_; }

  // Called after each reload attempt, outside the store's lock.
  void SetListener(std::function<void(const ReloadOutcome&)> listener);

 private:
  const std::string dir_;
  const bool optional_;
  utilityd::Mutex reload_mu_;  // serialises Reload
  mutable utilityd::Mutex mu_;
  std::shared_ptr<const Generation> current_ ABSL_GUARDED_BY(mu_);
  ReloadOutcome last_ ABSL_GUARDED_BY(mu_);
  std::function<void(const ReloadOutcome&)> listener_ ABSL_GUARDED_BY(mu_);
};

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_CONFIG_STORE_H_
