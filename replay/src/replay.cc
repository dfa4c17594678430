#include "utilityd/replay/replay.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "utilityd/codec/batch.h"
#include "utilityd/codec/resolve.h"
#include "utilityd/codec/variants.h"
#include "utilityd/engine/batch.h"
#include "utilityd/engine/decide.h"

namespace utilityd::replay {
namespace {

// Entries decided together (the service's usual batch): each set's share
// of them is one batch.
constexpr size_t kBatch = 256;

// One candidate of a decision: its action (a key of the set's ActionTable),
// its target (index into the snapshot's targets, -1 for none), its score,
// whether it was vetoed, and its selection probability.
struct Candidate {
  int action;
  int target;
  float score;
  bool vetoed;
  double probability;
};

// One side's answer for one entry.
struct Outcome {
  bool ok = false;
  std::string error;
  int action = -1;  // ActionTable key; -1 for no action
  int target = -1;
  float score = 0;
  // Scored by a flat set (its score is comparable with the other side's).
  bool flat = false;
  // A random strategy: `candidates` carry the distribution.
  bool random = false;
  // Random strategies and logged breakdowns: every candidate (score, veto,
  // probability).
  std::vector<Candidate> candidates;
  // Vetoes known: per action key, whether the side has the action
  // (`present`) and whether some candidate of it was not vetoed (`open`).
  bool has_vetoes = false;
  std::vector<uint8_t> present, open;

  void Reset() {
    ok = flat = random = has_vetoes = false;
    error.clear();
    action = target = -1;
    score = 0;
    candidates.clear();
    present.clear();
    open.clear();
  }
  void Mark(int key, bool not_vetoed) {
    if (static_cast<size_t>(key) >= present.size()) {
      present.resize(key + 1, 0);
      open.resize(key + 1, 0);
    }
    present[key] = 1;
    open[key] |= not_vetoed ? 1 : 0;
  }
  // Every candidate of the action vetoed (false when the side lacks it).
  bool Vetoed(int key) const {
    return static_cast<size_t>(key) < present.size() && present[key] &&
           !open[key];
  }
  bool Open(int key) const {
    return static_cast<size_t>(key) < open.size() && open[key];
  }
};

// Action names of one set across both sides, numbered in first-seen order.
class ActionTable {
 public:
  int Key(absl::string_view name) {
    if (name.empty()) return -1;
    auto [it, added] = keys_.try_emplace(name, static_cast<int>(names_.size()));
    if (added) names_.emplace_back(name);
    return it->second;
  }
  const std::string& Name(int key) const {
    static const std::string kNone;
    return key < 0 ? kNone : names_[key];
  }
  int size() const { return static_cast<int>(names_.size()); }

 private:
  absl::flat_hash_map<std::string, int> keys_;
  std::vector<std::string> names_;
};

// The values of a Spread: count, sum and largest exactly, quantiles from
// every value up to kKept of them, then from a uniform sample of kKept (a
// replay of millions, or a server's shadow running for days, stays
// bounded). The sample is seeded: the same values give the same report.
class Samples {
 public:
  void Add(double v) {
    ++count_;
    sum_ += v;
    max_ = count_ == 1 ? v : std::max(max_, v);
    if (kept_.size() < kKept) {
      kept_.push_back(v);
      return;
    }
    const uint64_t slot = rng_() % count_;  // reservoir sampling
    if (slot < kKept) kept_[slot] = v;
  }
  void WriteTo(v1::Spread* out) const {
    out->set_count(count_);
    if (count_ == 0) return;
    std::vector<double> sorted = kept_;
    std::sort(sorted.begin(), sorted.end());
    auto rank = [&sorted](double q) {
      // Nearest rank: the smallest value with at least q of them at or
      // below it.
      const size_t n = sorted.size();
      size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
      return sorted[std::clamp<size_t>(k, 1, n) - 1];
    };
    out->set_p50(rank(0.5));
    out->set_p99(rank(0.99));
    out->set_max(max_);
    out->set_mean(sum_ / static_cast<double>(count_));
  }

 private:
  static constexpr size_t kKept = 1 << 16;
  int64_t count_ = 0;
  double sum_ = 0, max_ = 0;
  std::vector<double> kept_;
  std::mt19937_64 rng_{2026};
};

struct ActionCounts {
  int64_t baseline_wins = 0, candidate_wins = 0, changed = 0;
  int64_t newly_winning = 0, newly_vetoed = 0;
};

// What one set's entries came to.
struct SetTally {
  ActionTable actions;
  std::string baseline_revision, candidate_revision;
  int64_t decisions = 0, flipped = 0, errors = 0;
  double churn = 0;
  std::string first_error;
  std::vector<ActionCounts> counts;  // by action key
  std::map<std::pair<int, int>, std::pair<int64_t, int64_t>> transitions;

  ActionCounts& Counts(int key) {
    if (static_cast<size_t>(key) >= counts.size()) counts.resize(key + 1);
    return counts[key];
  }
};

struct Example {
  v1::DecisionLogEntry entry;
  double margin = 0;
};

// A target id's index among the snapshot's targets, or -1.
int TargetIndex(const v1::AgentSnapshot& s, absl::string_view id) {
  if (id.empty()) return -1;
  for (int t = 0; t < s.targets_size(); ++t) {
    if (s.targets(t).target_id() == id) return t;
  }
  return -1;
}

const char* kLogged = "logged";

}  // namespace

class Replayer::Impl {
 public:
  explicit Impl(ReplayOptions options) : options_(std::move(options)) {
    report_.set_baseline(!options_.baseline ? kLogged : options_.baseline_name);
  }

  // The pool's next entry: kept from earlier batches, so reading into it
  // reuses its memory (LogReader keeps its snapshot's).
  v1::DecisionLogEntry* NewEntry() {
    if (pool_.size() <= pending_count_) {
      pool_.push_back(std::make_unique<v1::DecisionLogEntry>());
    }
    slot_ = pool_[pending_count_].get();
    return slot_;
  }

  const v1::DecisionLogEntry* slot() const { return slot_; }

  // Takes slot_ (filled by the caller) unless it is skipped, in which case
  // the slot is used again.
  void Add() {
    v1::DecisionLogEntry& entry = *slot_;
    report_.set_entries_read(report_.entries_read() + 1);
    ++(*report_.mutable_variants())[codec::VariantName(entry.variant())];
    if (options_.variant.has_value() && entry.variant() != *options_.variant) {
      Skip("other_variant");
      return;
    }
    if (!entry.has_snapshot() || entry.factors_dropped()) {
      Skip("not_replayable");
      return;
    }
    std::shared_ptr<const loader::LoadedSet> candidate =
        options_.candidate(entry.behaviour_set());
    std::shared_ptr<const loader::LoadedSet> baseline =
        options_.baseline ? options_.baseline(entry.behaviour_set()) : nullptr;
    if (candidate == nullptr || (options_.baseline && baseline == nullptr)) {
      Skip("unknown_set");
      return;
    }
    // Without baseline sets, a random strategy's logged distribution is
    // known only from a logged breakdown.
    if (baseline == nullptr &&
        candidate->compiled.selection().strategy !=
            engine::Strategy::kHighest &&
        candidate->compiled.tree() == nullptr &&
        entry.explanation().actions().empty()) {
      Skip("revision_not_available");
      return;
    }
    // The candidate is another revision by design.
    entry.mutable_snapshot()->clear_expected_revision();
    Pending& p = pending_[entry.behaviour_set()];
    p.candidate = std::move(candidate);
    p.baseline = std::move(baseline);
    p.entries.push_back(slot_);
    slot_ = nullptr;
    if (++pending_count_ == kBatch) FlushAll();
  }

  // The report of everything added so far (pending entries are decided
  // first); adding may go on.
  void Flush() { FlushAll(); }

  v1::ReplayReport Report() {
    FlushAll();
    v1::ReplayReport r = report_;
    int64_t decisions = 0;
    double churn = 0;
    for (auto& [name, tally] : tallies_) {
      decisions += tally.decisions;
      churn += tally.churn;
      WriteSet(name, tally, r.add_sets());
    }
    r.set_replayed(decisions + r.errors());
    r.set_churn(decisions > 0 ? churn / static_cast<double>(decisions) : 0);
    winner_change_.WriteTo(r.mutable_winner_score_change());
    margins_.WriteTo(r.mutable_flip_margin());
    tv_.WriteTo(r.mutable_total_variation());
    for (Example& e : examples_) WriteExample(e, r.add_examples());
    return r;
  }

 private:
  struct Pending {
    std::shared_ptr<const loader::LoadedSet> candidate, baseline;
    std::vector<v1::DecisionLogEntry*> entries;  // in pool_
  };

  // Decides every pending entry; their messages are used again.
  void FlushAll() {
    for (auto& [name, p] : pending_) {
      if (!p.entries.empty()) Flush(p);
    }
    pending_count_ = 0;
    slot_ = nullptr;
  }

  // Per side: the engine's working memory, reused across batches.
  struct Side {
    engine::BatchDecider decider;
    std::vector<codec::AgentScratch> scratch;
    std::vector<engine::AgentInput> inputs;
    std::vector<int> entry_of;  // input -> entry
    std::vector<int> input_of;  // entry -> input, -1 when not resolved
    std::vector<engine::BatchDecision> out;
    std::vector<engine::Decision> traces;
    std::vector<absl::Status> errors;
    std::vector<Outcome> outcomes;
    std::vector<int> keys;  // set's action -> ActionTable key
  };

  void Skip(const std::string& reason) {
    ++(*report_.mutable_skipped())[reason];
    if (options_.on_compared) {
      options_.on_compared({.entry = slot_,
                            .result = Comparison::Result::kSkipped,
                            .error = reason});
    }
  }

  void Flush(Pending& p) {
    SetTally& tally = tallies_[p.candidate->name()];
    tally.candidate_revision = p.candidate->revision();
    const size_t n = p.entries.size();
    // The table numbers the baseline's actions first, in its order.
    for (const auto* set : {p.baseline.get(), p.candidate.get()}) {
      if (set == nullptr) continue;
      for (const auto& a : set->compiled.actions()) tally.actions.Key(a.name);
    }
    Decide(*p.candidate, p.entries, tally.actions, candidate_);
    if (p.baseline != nullptr) {
      tally.baseline_revision = p.baseline->revision();
      Decide(*p.baseline, p.entries, tally.actions, baseline_);
    } else {
      // The revision the first of the set's entries was logged with.
      if (tally.baseline_revision.empty()) {
        tally.baseline_revision =
            absl::StrCat(kLogged, " ", p.entries[0]->revision());
      }
      Logged(p.entries, tally.actions, baseline_);
    }
    for (size_t i = 0; i < n; ++i) {
      const v1::DecisionLogEntry& e = *p.entries[i];
      const Outcome& b = baseline_.outcomes[i];
      const Outcome& c = candidate_.outcomes[i];
      if (p.baseline != nullptr && b.ok &&
          p.baseline->revision() == e.revision() &&
          (tally.actions.Name(b.action) != e.action() ||
           TargetIndex(e.snapshot(), e.target_id()) != b.target)) {
        report_.set_baseline_mismatches(report_.baseline_mismatches() + 1);
      }
      if (!b.ok || !c.ok) {
        ++tally.errors;
        report_.set_errors(report_.errors() + 1);
        const std::string error = absl::StrCat(
            !c.ok ? "candidate: " : "baseline: ", !c.ok ? c.error : b.error);
        if (tally.first_error.empty()) {
          tally.first_error = absl::StrCat(e.decision_id(), ": ", error);
        }
        if (options_.on_compared) {
          options_.on_compared({.entry = &e,
                                .result = Comparison::Result::kError,
                                .error = error});
        }
        continue;
      }
      Compare(*p.candidate, i, e, b, c, tally);
    }
    p.entries.clear();
  }

  // Decides the entries' snapshots with `set` into side.outcomes.
  void Decide(const loader::LoadedSet& set,
              const std::vector<v1::DecisionLogEntry*>& entries,
              ActionTable& actions, Side& side) {
    const size_t n = entries.size();
    side.outcomes.resize(std::max(side.outcomes.size(), n));
    for (size_t i = 0; i < n; ++i) side.outcomes[i].Reset();
    if (set.compiled.tree() != nullptr) {
      DecideTree(set, entries, actions, side);
      return;
    }
    if (side.scratch.size() < n) side.scratch.resize(n);
    side.inputs.clear();
    side.entry_of.clear();
    side.input_of.assign(n, -1);
    for (size_t i = 0; i < n; ++i) {
      engine::AgentInput input;
      const absl::Status s = codec::ResolveAgent(set, entries[i]->snapshot(),
                                                 &side.scratch[i], &input);
      if (!s.ok()) {
        side.outcomes[i].error = std::string(s.message());
        continue;
      }
      side.input_of[i] = static_cast<int>(side.inputs.size());
      side.inputs.push_back(input);
      side.entry_of.push_back(static_cast<int>(i));
    }
    const size_t m = side.inputs.size();
    // Random strategies need every candidate's probability: a trace. The
    // highest strategy decides untraced, with the vetoes tracked.
    const bool random =
        set.compiled.selection().strategy != engine::Strategy::kHighest;
    side.out.resize(std::max(side.out.size(), m));
    if (random) side.traces.resize(std::max(side.traces.size(), m));
    side.decider.set_keep_candidates(!random);
    side.decider.Decide(
        set.compiled, side.inputs,
        random ? engine::ExplainLevel::kTop : engine::ExplainLevel::kNone,
        absl::MakeSpan(side.out.data(), m), &side.errors,
        random ? absl::MakeSpan(side.traces.data(), m)
               : absl::Span<engine::Decision>());
    // The table's key of each of the set's actions.
    side.keys.clear();
    for (const auto& a : set.compiled.actions()) {
      side.keys.push_back(actions.Key(a.name));
    }
    for (size_t k = 0; k < m; ++k) {
      Outcome& o = side.outcomes[side.entry_of[k]];
      if (!side.errors[k].ok()) {
        o.error = std::string(side.errors[k].message());
        continue;
      }
      const engine::BatchDecision& d = side.out[k];
      o.ok = o.flat = o.has_vetoes = true;
      o.random = random;
      o.action = d.action < 0 ? -1 : side.keys[d.action];
      o.target = d.target;
      o.score = d.score;
      if (!random) {
        o.present.assign(actions.size(), 0);
        o.open.assign(actions.size(), 0);
        for (int a = 0; a < set.compiled.action_count(); ++a) {
          o.present[side.keys[a]] = 1;
          o.open[side.keys[a]] = side.decider.ActionOpen(k, a) ? 1 : 0;
        }
        continue;
      }
      for (const engine::CandidateTrace& t : side.traces[k].candidates) {
        const bool vetoed = t.veto != engine::VetoReason::kNone;
        o.candidates.push_back({.action = side.keys[t.action],
                                .target = t.target,
                                .score = t.score,
                                .vetoed = vetoed,
                                .probability = t.probability});
        o.Mark(side.keys[t.action], !vetoed);
      }
    }
  }

  // A set with a tree: ticked as the service ticks it; the first leaf run
  // is the decision.
  void DecideTree(const loader::LoadedSet& set,
                  const std::vector<v1::DecisionLogEntry*>& entries,
                  ActionTable& actions, Side& side) {
    v1::DecideRequest request;
    for (const auto* e : entries) *request.add_agents() = e->snapshot();
    request.set_explain(v1::EXPLAIN_NONE);
    auto one = loader::Catalog::Of({std::shared_ptr<const loader::LoadedSet>(
        std::shared_ptr<const loader::LoadedSet>(), &set)});
    v1::DecideResponse response;
    codec::DecideBatch(*one, request, &response);
    for (int i = 0; i < response.decisions_size(); ++i) {
      const v1::Decision& d = response.decisions(i);
      Outcome& o = side.outcomes[i];
      if (d.has_error()) {
        o.error = d.error().message();
        continue;
      }
      o.ok = true;
      o.action = actions.Key(d.action());
      o.target = TargetIndex(entries[i]->snapshot(), d.target_id());
      o.score = d.score();
    }
  }

  // The logged decisions as the baseline, with the logged breakdown's
  // candidates when the entry was sampled.
  void Logged(const std::vector<v1::DecisionLogEntry*>& entries,
              ActionTable& actions, Side& side) {
    const size_t n = entries.size();
    side.outcomes.resize(std::max(side.outcomes.size(), n));
    for (size_t i = 0; i < n; ++i) {
      const v1::DecisionLogEntry& e = *entries[i];
      Outcome& o = side.outcomes[i];
      o.Reset();
      o.ok = true;
      // Coordination changed the decision: replay decides each snapshot
      // without its batch, so it compares with the agent's own decision.
      const v1::Coordination& c = e.coordination();
      if (!c.uncoordinated_action().empty()) {
        o.action = actions.Key(c.uncoordinated_action());
        o.target = TargetIndex(e.snapshot(), c.uncoordinated_target_id());
        o.score = c.uncoordinated_score();
      } else {
        o.action = actions.Key(e.action());
        o.target = TargetIndex(e.snapshot(), e.target_id());
        o.score = e.score();
      }
      o.flat = e.tree_status() == v1::NODE_STATUS_UNSPECIFIED;
      const v1::Explanation& x = e.explanation();
      if (x.actions().empty()) continue;
      o.has_vetoes = true;
      o.random = !x.strategy().empty() && x.strategy() != "highest";
      for (const v1::ActionScore& a : x.actions()) {
        o.candidates.push_back(
            {.action = actions.Key(a.action()),
             .target = TargetIndex(e.snapshot(), a.target_id()),
             .score = a.score(),
             .vetoed = a.vetoed(),
             .probability = a.probability()});
        o.Mark(o.candidates.back().action, !a.vetoed());
      }
    }
  }

  // The selection distribution of a side: its probabilities for a random
  // strategy (the chosen candidate when none was eligible), else all on the
  // chosen candidate.
  static void Distribution(
      const Outcome& o,
      std::vector<std::pair<std::pair<int, int>, double>>* mass) {
    mass->clear();
    if (o.random) {
      for (const Candidate& c : o.candidates) {
        if (c.probability > 0) {
          mass->push_back({{c.action, c.target}, c.probability});
        }
      }
    }
    if (mass->empty()) mass->push_back({{o.action, o.target}, 1.0});
  }

  static double TotalVariation(const Outcome& b, const Outcome& c) {
    std::vector<std::pair<std::pair<int, int>, double>> pb, pc;
    Distribution(b, &pb);
    Distribution(c, &pc);
    double sum = 0;
    for (const auto& [key, p] : pb) {
      double q = 0;
      for (const auto& [k2, p2] : pc) {
        if (k2 == key) q = p2;
      }
      sum += std::abs(p - q);
    }
    for (const auto& [key, q] : pc) {
      bool seen = false;
      for (const auto& [k2, p2] : pb) seen |= k2 == key;
      if (!seen) sum += q;
    }
    return 0.5 * sum;
  }

  // Compares entry `i` of a batch: `e`, the baseline's outcome `b` and the
  // candidate's `c`, decided by `candidate`.
  void Compare(const loader::LoadedSet& candidate, size_t i,
               const v1::DecisionLogEntry& e, const Outcome& b,
               const Outcome& c, SetTally& tally) {
    ++tally.decisions;
    const bool flipped = b.action != c.action || b.target != c.target;
    const bool random = b.random || c.random;
    if (random) {
      const double tv = TotalVariation(b, c);
      tally.churn += tv;
      tv_.Add(tv);
      report_.set_random_decisions(report_.random_decisions() + 1);
    } else {
      tally.churn += flipped ? 1 : 0;
    }
    if (b.flat && c.flat) winner_change_.Add(std::abs(c.score - b.score));
    if (options_.on_compared) {
      options_.on_compared({.entry = &e,
                            .result = flipped ? Comparison::Result::kFlipped
                                              : Comparison::Result::kSame,
                            .churn = random    ? TotalVariation(b, c)
                                     : flipped ? 1.0
                                               : 0.0,
                            .scores_compared = b.flat && c.flat,
                            .score_change = std::abs(c.score - b.score),
                            .baseline_action = tally.actions.Name(b.action),
                            .candidate_action = tally.actions.Name(c.action)});
    }
    auto& [count, target_changed] = tally.transitions[{b.action, c.action}];
    ++count;
    if (b.action >= 0) {
      ActionCounts& from = tally.Counts(b.action);
      ++from.baseline_wins;
      from.changed += flipped;
    }
    if (c.action >= 0) {
      ActionCounts& to = tally.Counts(c.action);
      ++to.candidate_wins;
      to.newly_winning += b.action != c.action;
    }
    if (b.has_vetoes && c.has_vetoes) {
      for (int a = 0; a < tally.actions.size(); ++a) {
        if (c.Vetoed(a) && b.Open(a)) ++tally.Counts(a).newly_vetoed;
      }
    }
    if (!flipped) return;
    ++tally.flipped;
    report_.set_flipped(report_.flipped() + 1);
    if (b.action == c.action) ++target_changed;
    double margin = c.score;
    if (!random && c.flat) {
      // The candidate's score of the baseline's choice, from its batch.
      const auto& names = candidate.compiled.actions();
      for (int a = 0; a < static_cast<int>(names.size()); ++a) {
        if (names[a].name == tally.actions.Name(b.action)) {
          margin -= candidate_.decider.CandidateScore(
              candidate.compiled, candidate_.input_of[i], a, b.target);
        }
      }
      margins_.Add(margin);
    }
    if (static_cast<int>(examples_.size()) < options_.examples) {
      examples_.push_back({.entry = e, .margin = margin});
    }
  }

  void WriteSet(const std::string& name, SetTally& t, v1::SetChurn* out) {
    out->set_behaviour_set(name);
    out->set_baseline_revision(t.baseline_revision);
    out->set_candidate_revision(t.candidate_revision);
    out->set_decisions(t.decisions);
    out->set_flipped(t.flipped);
    out->set_churn(t.decisions > 0 ? t.churn / static_cast<double>(t.decisions)
                                   : 0);
    out->set_errors(t.errors);
    out->set_first_error(t.first_error);
    for (int a = 0; a < t.actions.size(); ++a) {
      const ActionCounts& k = t.Counts(a);
      v1::ActionChurn* ac = out->add_actions();
      ac->set_action(t.actions.Name(a));
      ac->set_baseline_wins(k.baseline_wins);
      ac->set_candidate_wins(k.candidate_wins);
      ac->set_churn(k.baseline_wins > 0
                        ? static_cast<double>(k.changed) /
                              static_cast<double>(k.baseline_wins)
                        : 0);
      ac->set_newly_winning(k.newly_winning);
      ac->set_newly_vetoed(k.newly_vetoed);
    }
    for (const auto& [key, value] : t.transitions) {
      v1::Transition* tr = out->add_transitions();
      tr->set_from(t.actions.Name(key.first));
      tr->set_to(t.actions.Name(key.second));
      tr->set_count(value.first);
      tr->set_target_changed(value.second);
    }
  }

  void WriteExample(const Example& x, v1::ReplayExample* out) const {
    const v1::DecisionLogEntry& e = x.entry;
    out->set_decision_id(e.decision_id());
    out->set_agent_id(e.agent_id());
    out->set_behaviour_set(e.behaviour_set());
    out->set_margin(x.margin);
    out->set_variant(e.variant());
    // The sets may have been reloaded since (a server's shadow).
    if (auto c = options_.candidate(e.behaviour_set()); c != nullptr) {
      ExplainSide(*c, e.snapshot(), out->mutable_candidate());
    }
    if (options_.baseline) {
      if (auto b = options_.baseline(e.behaviour_set()); b != nullptr) {
        ExplainSide(*b, e.snapshot(), out->mutable_baseline());
      }
      return;
    }
    v1::ReplaySide* b = out->mutable_baseline();
    b->set_action(e.action());
    b->set_target_id(e.target_id());
    b->set_score(e.score());
    b->set_summary(e.explanation().summary());
  }

  const ReplayOptions options_;
  v1::ReplayReport report_;
  // Entries waiting to be decided are pool_[0, pending_count_).
  std::vector<std::unique_ptr<v1::DecisionLogEntry>> pool_;
  v1::DecisionLogEntry* slot_ = nullptr;  // NewEntry's, not yet added
  size_t pending_count_ = 0;
  std::map<std::string, Pending> pending_;
  std::map<std::string, SetTally> tallies_;
  Side candidate_, baseline_;
  Samples winner_change_, margins_, tv_;
  std::vector<Example> examples_;
};

Replayer::Replayer(ReplayOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
Replayer::~Replayer() = default;
v1::DecisionLogEntry* Replayer::NewEntry() { return impl_->NewEntry(); }
void Replayer::Add(v1::DecisionLogEntry* entry) {
  if (entry == nullptr || entry != impl_->slot()) {
    std::abort();  // a caller's bug: only NewEntry's entry may be added
  }
  impl_->Add();
}
void Replayer::Add(const v1::DecisionLogEntry& entry) {
  *impl_->NewEntry() = entry;
  impl_->Add();
}
v1::ReplayReport Replayer::Report() { return impl_->Report(); }
void Replayer::Flush() { impl_->Flush(); }

void ExplainSide(const loader::LoadedSet& set,
                 const v1::AgentSnapshot& snapshot, v1::ReplaySide* out) {
  v1::DecideRequest request;
  *request.add_agents() = snapshot;
  request.mutable_agents(0)->clear_expected_revision();
  request.set_explain(v1::EXPLAIN_FULL);
  // A catalog of the one set, which the caller keeps alive.
  auto one = loader::Catalog::Of({std::shared_ptr<const loader::LoadedSet>(
      std::shared_ptr<const loader::LoadedSet>(), &set)});
  v1::DecideResponse response;
  codec::DecideBatch(*one, request, &response);
  const v1::Decision& d = response.decisions(0);
  out->set_action(d.action());
  out->set_target_id(d.target_id());
  out->set_score(d.score());
  out->set_summary(d.has_error() ? d.error().message()
                                 : d.explanation().summary());
}

SetLookup InCatalog(const loader::Catalog& catalog) {
  return [&catalog](absl::string_view name) { return catalog.Find(name); };
}

}  // namespace utilityd::replay
