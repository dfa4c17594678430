#include "server/src/config_watcher.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/src/log.h"

namespace utilityd::server {

std::string DirectoryFingerprint(const std::string& dir) {
  std::vector<std::string> parts;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string path = entry.path().string();
    std::string part = entry.path().filename().string();
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      char target[4096];
      const ssize_t n = ::readlink(path.c_str(), target, sizeof(target));
      if (n > 0) absl::StrAppend(&part, "->", absl::string_view(target, n));
    }
    if (::stat(path.c_str(), &st) == 0) {  // follows links
      absl::StrAppend(&part, ":", st.st_ino, ":", st.st_size, ":",
                      st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec);
    }
    parts.push_back(std::move(part));
  }
  if (ec) return absl::StrCat("error:", ec.message());
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const std::string& p : parts) absl::StrAppend(&out, p, "\n");
  return out;
}

ConfigWatcher::ConfigWatcher(ConfigStore* store, absl::Duration poll_interval)
    : store_(store), poll_interval_(poll_interval) {}

ConfigWatcher::~ConfigWatcher() { Stop(); }

void ConfigWatcher::Start() {
  fingerprint_ = DirectoryFingerprint(store_->dir());
  thread_ = std::thread([this] { Run(); });
}

void ConfigWatcher::Stop() {
  {
    utilityd::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void ConfigWatcher::TriggerReload() {
  utilityd::MutexLock lock(&mu_);
  triggered_ = true;
}

void ConfigWatcher::Run() {
  while (true) {
    bool triggered = false;
    {
      utilityd::MutexLock lock(&mu_);
      auto wake = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return stop_ || triggered_;
      };
      mu_.AwaitWithTimeout(wake, poll_interval_);
      if (stop_) return;
      triggered = triggered_;
      triggered_ = false;
    }
    std::string now = DirectoryFingerprint(store_->dir());
    if (!triggered && now == fingerprint_) continue;
    fingerprint_ = std::move(now);
    Log(LogLevel::kInfo, "config_reload_started",
        {{"dir", store_->dir()}, {"reason", triggered ? "signal" : "change"}});
    (void)store_->Reload();  // the store's listener logs the outcome
  }
}

}  // namespace utilityd::server
