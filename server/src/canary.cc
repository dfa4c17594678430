#include "server/src/canary.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/src/log.h"

namespace utilityd::server {
namespace {

bool InUnit(double x) { return x >= 0 && x <= 1; }

// The share file of `dir`: its number, or an error naming the file; NOT_FOUND
// when there is none.
absl::StatusOr<double> ReadShareFile(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "share").string();
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(path);
  std::stringstream text;
  text << in.rdbuf();
  double share = 0;
  const std::string s(absl::StripAsciiWhitespace(text.str()));
  if (!absl::SimpleAtod(s, &share) || !InUnit(share)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": must hold one number within 0..1, got \"", s, "\""));
  }
  return share;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Canary>> Canary::Start(
    const Options& options, const ConfigStore* live,
    prometheus::Registry* registry) {
  if (options.config_dir.empty()) return nullptr;
  for (const auto& [name, rate] :
       {std::pair<const char*, double>{"canary_share", options.share},
        {"canary_compare_sample", options.compare_sample},
        {"canary_log_flips", options.log_flips}}) {
    if (!InUnit(rate)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": must be within 0..1, got ", rate));
    }
  }
  std::unique_ptr<Canary> canary(new Canary(options, registry));
  absl::StatusOr<std::unique_ptr<ShadowEvaluator>> compare =
      ShadowEvaluator::Compare({.sample = options.compare_sample,
                                .queue_capacity = options.queue_capacity,
                                .log_flips = options.log_flips,
                                .name = "canary_compare",
                                .baseline_name = "canary",
                                .candidate_name = "live",
                                .candidate_key = "live",
                                .metrics = kCanaryCompareMetrics},
                               canary->store_.get(), live, registry);
  if (!compare.ok()) return compare.status();
  canary->compare_ = *std::move(compare);
  canary->store_->SetListener([c = canary.get()](const ReloadOutcome& outcome) {
    c->OnReload(outcome);
  });
  canary->Reload();
  canary->watcher_ = std::make_unique<ConfigWatcher>(canary->store_.get(),
                                                     options.reload_interval);
  canary->watcher_->Start();
  return canary;
}

Canary::Canary(const Options& options, prometheus::Registry* registry)
    : flag_share_(options.share),
      store_(std::make_unique<ConfigStore>(options.config_dir,
                                           /*optional=*/true)),
      share_gauge_(
          prometheus::BuildGauge()
              .Name(kCanaryShareMetric)
              .Help("Share (0..1) of agents the canary sets decide (0 when no "
                    "canary set is loaded).")
              .Register(*registry)
              .Add({})),
      sets_info_(*registry, kCanarySetInfoMetric,
                 "Canary behaviour sets served and their revisions (1).",
                 {"behaviour_set", "revision"}),
      reloads_(*registry, kCanaryReloadsMetric,
               "Canary config reload attempts, by result.", {"result"}) {
  share_ = flag_share_;
  reloads_.Add({"success"});
  reloads_.Add({"failure"});
}

Canary::~Canary() {
  if (watcher_ != nullptr) watcher_->Stop();
}

void Canary::Reload() { (void)store_->Reload(); }

Canary::Serving Canary::Current() const {
  Serving s{.generation = store_->Current()};
  utilityd::MutexLock lock(&mu_);
  s.share = s.generation != nullptr ? share_ : 0;
  return s;
}

void Canary::OnReload(const ReloadOutcome& outcome) {
  reloads_.Add({outcome.ok ? "success" : "failure"}).Increment();
  if (!outcome.ok) {
    Log(LogLevel::kError, "canary_config_rejected",
        {{"dir", store_->dir()}, {"error", outcome.error}});
  }
  double share = flag_share_;
  if (absl::StatusOr<double> file = ReadShareFile(store_->dir()); file.ok()) {
    share = *file;
  } else if (!absl::IsNotFound(file.status())) {
    // A bad file keeps the share in force, as a bad set keeps the sets.
    Log(LogLevel::kError, "canary_share_rejected",
        {{"error", file.status().message()}});
    utilityd::MutexLock lock(&mu_);
    share = share_;
  }
  const std::shared_ptr<const Generation> g = store_->Current();
  double before;
  {
    utilityd::MutexLock lock(&mu_);
    before = share_;
    share_ = share;
  }
  share_gauge_.Set(g != nullptr ? share : 0);
  sets_info_.Clear();
  if (g != nullptr) {
    for (const auto& [name, set] : g->catalog.sets()) {
      sets_info_.Add({name, set->revision()}).Set(1);
    }
  }
  if (outcome.changed || before != share) {
    Log(LogLevel::kInfo, g != nullptr ? "canary_serving" : "canary_off",
        {{"dir", store_->dir()},
         {"sets", g != nullptr ? g->catalog.sets().size() : 0},
         {"share", share}});
  }
}

}  // namespace utilityd::server
