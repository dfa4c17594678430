// Watches a config directory and reloads the ConfigStore when it changes,
// including a Kubernetes ConfigMap's atomic symlink swap (..data ->
// ..2026_11_30_...). Polls a cheap fingerprint of the directory (names, link
// targets, sizes, modification times, inodes) every interval; TriggerReload
// (SIGHUP) reloads at once. Loading happens on the watcher's thread, off the
// request path.
//
//   ConfigWatcher watcher(&store, absl::Seconds(2));
//   watcher.Start();
//   ...
//   watcher.TriggerReload();   // e.g. on SIGHUP
//   watcher.Stop();
#ifndef UTILITYD_SERVER_CONFIG_WATCHER_H_
#define UTILITYD_SERVER_CONFIG_WATCHER_H_

#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "server/src/config_store.h"
#include "utilityd/base/sync.h"

namespace utilityd::server {

// Returns a value that changes whenever a file in `dir` (or what a symlink
// in it points to) is added, removed, replaced or modified.
std::string DirectoryFingerprint(const std::string& dir);

class ConfigWatcher {
 public:
  ConfigWatcher(ConfigStore* store, absl::Duration poll_interval);
  ~ConfigWatcher();

  // Starts the watching thread. The fingerprint at Start is the baseline.
  void Start();
  // Stops and joins the thread. Idempotent.
  void Stop();
  // Asks for a reload now, changed or not. Thread-safe; returns at once.
  void TriggerReload();

 private:
  void Run();

  ConfigStore* const store_;
  const absl::Duration poll_interval_;
  utilityd::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool triggered_ ABSL_GUARDED_BY(mu_) = false;
  std::string fingerprint_;
  std::thread thread_;
};

}  // namespace utilityd::server

#endif  // UTILITYD_SERVER_CONFIG_WATCHER_H_
