#include "server/src/shadow.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/src/log.h"
#include "utilityd/base/status_macros.h"

namespace utilityd::server {
namespace {

// Flips kept with both breakdowns in the running report.
constexpr int kExamples = 5;

// Sets of a store's current generation by name.
replay::SetLookup Current(const ConfigStore* store) {
  return [store](absl::string_view name) {
    const std::shared_ptr<const Generation> g = store->Current();
    return g != nullptr ? g->catalog.Find(name) : nullptr;
  };
}

const char* ResultName(replay::Comparison::Result r) {
  switch (r) {
    case replay::Comparison::Result::kSame:
      return "same";
    case replay::Comparison::Result::kFlipped:
      return "flipped";
    case replay::Comparison::Result::kError:
      return "error";
    case replay::Comparison::Result::kSkipped:
      return "skipped";
  }
  return "error";
}

}  // namespace

absl::Status ShadowEvaluator::Check(const Options& options) {
  for (const auto& [name, rate] :
       {std::pair<const char*, double>{"shadow_sample", options.sample},
        {"shadow_log_flips", options.log_flips}}) {
    if (!(rate >= 0 && rate <= 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": must be within 0..1, got ", rate));
    }
  }
  if (options.queue_capacity < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(options.name, "_queue: must be >= 1"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ShadowEvaluator>> ShadowEvaluator::Start(
    const Options& options, const ConfigStore* live,
    prometheus::Registry* registry) {
  if (options.config_dir.empty()) return nullptr;
  UTILITYD_RETURN_IF_ERROR(Check(options));
  return std::unique_ptr<ShadowEvaluator>(
      new ShadowEvaluator(options, live, nullptr, registry));
}

absl::StatusOr<std::unique_ptr<ShadowEvaluator>> ShadowEvaluator::Compare(
    const Options& options, const ConfigStore* baseline,
    const ConfigStore* candidate, prometheus::Registry* registry) {
  UTILITYD_RETURN_IF_ERROR(Check(options));
  return std::unique_ptr<ShadowEvaluator>(
      new ShadowEvaluator(options, baseline, candidate, registry));
}

ShadowEvaluator::ShadowEvaluator(const Options& options,
                                 const ConfigStore* live,
                                 const ConfigStore* candidate,
                                 prometheus::Registry* registry)
    : name_(options.name),
      baseline_key_(options.baseline_name),
      candidate_key_(options.candidate_key),
      live_(live),
      owned_(candidate == nullptr
                 ? std::make_unique<ConfigStore>(options.config_dir)
                 : nullptr),
      store_(candidate != nullptr ? candidate : owned_.get()),
      sampled_(options.sample),
      log_flips_(options.log_flips),
      decisions_(*registry, options.metrics.decisions,
                 absl::StrCat("Sampled ", options.baseline_name,
                              " decisions decided again with the ",
                              options.candidate_name,
                              " sets, by whether they chose the same action "
                              "and target."),
                 {"behaviour_set", "result"}),
      score_change_(
          *registry, options.metrics.score_change,
          absl::StrCat("|", options.candidate_name, " winner's score - ",
                       options.baseline_name, " winner's score| of ", name_,
                       " decisions."),
          {"behaviour_set"},
          std::make_shared<const metrics::Buckets>(
              std::vector<double>{0.001, 0.005, 0.01, 0.05, 0.1, 0.2, 0.5, 1})),
      dropped_(prometheus::BuildCounter()
                   .Name(options.metrics.dropped)
                   .Help(absl::StrCat("Sampled decisions not decided again "
                                      "because the ",
                                      name_, " queue was full."))
                   .Register(*registry)
                   .Add({})) {
  auto make_replayer = [this] {
    return std::make_unique<replay::Replayer>(replay::ReplayOptions{
        .candidate = Current(store_),
        .baseline = Current(live_),
        .baseline_name = baseline_key_,
        .examples = kExamples,
        .on_compared = [this](const replay::Comparison& c) { Compared(c); }});
  };
  {
    utilityd::MutexLock lock(&replay_mu_);
    replayer_ = make_replayer();
  }
  queue_ = std::make_unique<DrainingQueue<std::string>>(
      options.queue_capacity,
      [this](std::deque<std::string>& batch) { Compare(batch); });
  if (owned_ == nullptr) return;  // others load and watch the sets
  // A changed candidate starts a new running report: it describes one
  // candidate, not a mix. (Counters keep counting; rates show the change.)
  owned_->SetListener([this, make_replayer](const ReloadOutcome& outcome) {
    if (!outcome.ok) {
      Log(LogLevel::kError, "shadow_config_rejected",
          {{"dir", store_->dir()}, {"error", outcome.error}});
      return;
    }
    if (!outcome.changed) return;
    Log(LogLevel::kInfo, "shadow_config_loaded",
        {{"dir", store_->dir()},
         {"sets", store_->Current()->catalog.sets().size()}});
    utilityd::MutexLock lock(&replay_mu_);
    replayer_ = make_replayer();
  });
  (void)owned_->Reload();
  watcher_ =
      std::make_unique<ConfigWatcher>(owned_.get(), options.reload_interval);
  watcher_->Start();
}

ShadowEvaluator::~ShadowEvaluator() {
  if (watcher_ != nullptr) watcher_->Stop();
  queue_->Stop();  // compares what is queued
}

void ShadowEvaluator::Offer(const loader::LoadedSet& set,
                            const v1::AgentSnapshot& snapshot,
                            const v1::Decision& out) {
  // Only sets the candidate directory holds are compared.
  const std::shared_ptr<const Generation> candidate = store_->Current();
  if (candidate == nullptr || candidate->catalog.Find(set.name()) == nullptr) {
    return;
  }
  // The entry crosses to the worker serialised: one buffer for the worker
  // to free, not a message's dozen allocations, each freed into this
  // thread's malloc arena under its lock while it serves requests. The
  // message is this thread's, used again.
  thread_local v1::DecisionLogEntry e;
  e.set_decision_id(out.decision_id());
  e.set_agent_id(snapshot.agent_id());
  e.set_behaviour_set(set.name());
  e.set_revision(set.revision());
  *e.mutable_snapshot() = snapshot;
  e.set_action(out.action());
  e.set_target_id(out.target_id());
  e.set_score(out.score());
  e.set_tree_status(out.tree_status());
  e.set_variant(out.variant());
  std::string bytes;
  e.SerializeToString(&bytes);
  if (!queue_->Offer(std::move(bytes))) dropped_.Increment();
}

// On the worker: a batch of live decisions decided again.
void ShadowEvaluator::Compare(std::deque<std::string>& batch) {
  utilityd::MutexLock lock(&replay_mu_);
  for (const std::string& bytes : batch) {
    v1::DecisionLogEntry* slot = replayer_->NewEntry();
    if (slot->ParseFromString(bytes)) replayer_->Add(slot);
  }
  replayer_->Flush();
}

// On the worker, with replay_mu_ held: metrics, and a sampled flip logged
// with both breakdowns.
void ShadowEvaluator::Compared(const replay::Comparison& c) {
  const std::string& set = c.entry->behaviour_set();
  // The set's metric handles, looked up once.
  auto [it, added] = handles_.try_emplace(set);
  SetHandles& h = it->second;
  if (added) {
    for (auto r : {replay::Comparison::Result::kSame,
                   replay::Comparison::Result::kFlipped,
                   replay::Comparison::Result::kError,
                   replay::Comparison::Result::kSkipped}) {
      h.results[static_cast<int>(r)] = &decisions_.Add({set, ResultName(r)});
    }
    h.score_change = &score_change_.Add({set});
  }
  h.results[static_cast<int>(c.result)]->Increment();
  if (c.scores_compared) h.score_change->Observe(c.score_change);
  if (c.result == replay::Comparison::Result::kError) {
    Log(LogLevel::kWarning, absl::StrCat(name_, "_error"),
        {{"behaviour_set", set},
         {"decision_id", c.entry->decision_id()},
         {"error", c.error}});
    return;
  }
  uint64_t id = 0;
  if (c.result != replay::Comparison::Result::kFlipped ||
      !absl::SimpleHexAtoi(c.entry->decision_id(), &id) || !log_flips_(id)) {
    return;
  }
  v1::ReplaySide live, candidate;
  if (auto s = Current(live_)(set); s != nullptr) {
    replay::ExplainSide(*s, c.entry->snapshot(), &live);
  }
  if (auto s = Current(store_)(set); s != nullptr) {
    replay::ExplainSide(*s, c.entry->snapshot(), &candidate);
  }
  Log(LogLevel::kInfo, absl::StrCat(name_, "_flip"),
      {{"behaviour_set", set},
       {"decision_id", c.entry->decision_id()},
       {"agent_id", c.entry->agent_id()},
       {baseline_key_, c.baseline_action},
       {candidate_key_, c.candidate_action},
       {absl::StrCat(baseline_key_, "_breakdown"), live.summary()},
       {absl::StrCat(candidate_key_, "_breakdown"), candidate.summary()}});
}

v1::ReplayReport ShadowEvaluator::Report() {
  utilityd::MutexLock lock(&replay_mu_);
  return replayer_->Report();
}

void ShadowEvaluator::WaitIdle() { queue_->WaitIdle(); }

}  // namespace utilityd::server
