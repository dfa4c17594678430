// BatchDecider's admission (batch.h, "Admit"): each agent's fields read
// and checked, from its AgentInput or from a block's columns
// (DecideColumns), and its (agent, target) pairs listed; and the admitted
// agents' factor columns from a factor-major block.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "curves/curve_kernels.h"
#include "scoring/batch_pass.h"
#include "utilityd/engine/batch.h"
#include "utilityd/engine/error_reason.h"
#include "utilityd/engine/scoring_rules.h"

namespace utilityd::engine {
namespace {

// What an agent's answer says until it is decided. Copied from static
// storage: a temporary built per row made GCC store it to the stack and
// load it back in every iteration (a stalled store forward, 11 ns a row).
constexpr BatchDecision kUndecided{};

// The columns' shapes against `set` (DecideColumns), or the error naming
// the first that does not fit.
absl::Status CheckColumns(const CompiledBehaviourSet& set,
                          const AgentColumns& c) {
  auto refuse = [](absl::string_view field, auto&&... detail) {
    return FieldError(absl::StatusCode::kInvalidArgument,
                      field == "factors" || field == "target_factors"
                          ? ErrorReason::kFactorCount
                          : ErrorReason::kOutOfRange,
                      field, absl::StrCat(detail...));
  };
  if (c.factors == nullptr && c.rows > 0 && set.factor_count() > 0) {
    return refuse("factors", "is missing: ", c.rows, " rows x ",
                  set.factor_count(), " factors of ", set.name());
  }
  for (auto [field, size] : {std::pair<absl::string_view, size_t>{
                                 "current_action", c.current_action.size()},
                             {"current_target", c.current_target.size()},
                             {"personality", c.personality.size()},
                             {"seeds", c.seeds.size()}}) {
    if (size != 0 && size != c.rows) {
      return refuse(field, "has ", size, " values for ", c.rows,
                    " rows: one per row, or none");
    }
  }
  const size_t clocks = c.rows * static_cast<size_t>(set.action_count());
  if (!c.seconds_since_action.empty() &&
      c.seconds_since_action.size() != clocks) {
    return refuse("seconds_since_action", "has ", c.seconds_since_action.size(),
                  " values, expected ", clocks, " (", c.rows, " rows x ",
                  set.action_count(), " actions), or none");
  }
  const auto& off = c.target_offsets;
  if (off.empty()) {
    if (!c.target_factors.empty()) {
      return refuse("target_offsets",
                    "is empty, but target_factors is not: say which targets "
                    "are each row's");
    }
    return absl::OkStatus();
  }
  if (off.size() != c.rows + 1) {
    return refuse("target_offsets", "has ", off.size(), " values for ", c.rows,
                  " rows; it holds one per row and one more");
  }
  uint32_t falls = 0;  // a loop without an exit, which vectorises
  const uint32_t* o = off.data();
  for (size_t r = 0; r < c.rows; ++r) falls |= o[r] > o[r + 1];
  for (size_t r = 0; falls != 0 && r < c.rows; ++r) {
    if (off[r] > off[r + 1]) {
      return refuse(absl::StrCat("target_offsets[", r + 1, "]"), off[r + 1],
                    " is below the one before it, ", off[r]);
    }
  }
  const size_t values =
      static_cast<size_t>(off.back()) * set.target_factor_count();
  if (c.target_factors.size() != values) {
    return refuse("target_factors", "expected ", values, " values (",
                  off.back(), " targets x ", set.target_factor_count(),
                  " target factors of ", set.name(), "), got ",
                  c.target_factors.size());
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status BatchDecider::DecideColumns(const CompiledBehaviourSet& set,
                                         const AgentColumns& columns,
                                         absl::Span<BatchDecision> out,
                                         std::vector<absl::Status>* errors) {
  if (absl::Status s = CheckColumns(set, columns); !s.ok()) {
    if (errors != nullptr) errors->assign(columns.rows, absl::OkStatus());
    return s;
  }
  pass_->RunColumns(set, columns, out, errors);
  return absl::OkStatus();
}

namespace internal {

void BatchPass::Admit(const CompiledBehaviourSet& set,
                      absl::Span<const AgentInput> inputs,
                      absl::Span<BatchDecision> out,
                      std::vector<absl::Status>* errors, bool check) {
  // Each admitted agent's fields are read here, in the one pass over the
  // inputs, and its (agent, target) pairs listed (for a set with per-target
  // actions); Transpose reads only the rows listed.
  StartAdmit(set, inputs.size(), errors);
  const bool pairs = set.has_per_target_actions();
  size_t j = 0, p = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    out[i] = kUndecided;
    const AgentInput& in = inputs[i];
    if (check &&
        !(factor_major_ ? AgentFieldsFit(set, in) : AgentInputFits(set, in))) {
      absl::Status s =
          factor_major_ ? CheckAgentFields(set, in) : CheckAgentInput(set, in);
      if (!s.ok()) {
        if (errors != nullptr) (*errors)[i] = std::move(s);
        continue;
      }
    }
    agents_[j] = static_cast<uint32_t>(i);
    current_action_[j] = in.current_action;
    current_target_[j] = in.current_target;
    personality_[j] = in.personality;
    any_personality_ |= in.personality >= 0;
    any_cooldown_input_ |= !in.seconds_since_action.empty();
    agents_without_targets_ += in.targets.empty();
    rows_[j] = in.factors.data();
    pair_begin_[j] = static_cast<uint32_t>(p);
    if (pairs) {
      const size_t targets = in.targets.size();
      if (p + targets > pair_agent_.size()) GrowPairs(p + targets);
      for (size_t t = 0; t < targets; ++t, ++p) {
        pair_agent_[p] = static_cast<uint32_t>(j);
        pair_target_[p] = static_cast<uint32_t>(t);
        pair_rows_[p] = in.targets[t].factors.data();
      }
    }
    ++j;
  }
  EndAdmit(j, p);
}

// Admit's working arrays sized for up to `most` agents, and what it
// counts cleared.
void BatchPass::StartAdmit(const CompiledBehaviourSet& set, size_t most,
                           std::vector<absl::Status>* errors) {
  if (errors != nullptr) errors->assign(most, absl::OkStatus());
  vetoes_.assign(set.action_count(), 0);
  invalid_agents_ = 0;
  agents_.resize(most);
  current_action_.resize(most);
  current_target_.resize(most);
  personality_.resize(most);
  rows_.resize(most);
  pair_begin_.resize(most + 1);
  any_personality_ = any_cooldown_input_ = false;
  agents_without_targets_ = 0;
  pair_base_ = row_base_ = nullptr;
}

// The arrays cut to the `agents` admitted and their `pairs`.
void BatchPass::EndAdmit(size_t agents, size_t pairs) {
  pair_begin_[agents] = static_cast<uint32_t>(pairs);
  n_pairs_ = pairs;
  // Whether every agent has as many targets as every other.
  targets_each_ = 0;
  if (agents > 0 && pairs % agents == 0) {
    const auto each = static_cast<uint32_t>(pairs / agents);
    const uint32_t* begin = pair_begin_.data();
    uint32_t differ = 0;  // in a loop that vectorises
    for (size_t j = 0; j < agents; ++j) {
      differ |= begin[j] ^ (each * static_cast<uint32_t>(j));
    }
    if (differ == 0) targets_each_ = each;
  }
  for (auto* v : {&current_action_, &current_target_, &personality_}) {
    v->resize(agents);
  }
  agents_.resize(agents);
  rows_.resize(agents);
  pair_begin_.resize(agents + 1);
}

// DecideColumns' admission: each index column checked as a whole (a loop
// that vectorises), then every row admitted at once when all fit
// (AdmitWholeColumns), else row by row, those out of range answered with
// CheckAgentIndices' error.
UTILITYD_VECTOR_CLONES
void BatchPass::AdmitColumns(const CompiledBehaviourSet& set,
                             const AgentColumns& c,
                             absl::Span<BatchDecision> out,
                             std::vector<absl::Status>* errors) {
  const size_t n = c.rows;
  StartAdmit(set, n, errors);
  std::fill_n(out.data(), n, kUndecided);
  row_bad_.assign(n, 0);
  uint8_t* bad = row_bad_.data();
  // An index i in lo..hi-1 as (uint32)(i - lo) < hi - lo, in unsigned
  // arithmetic (no overflow at the int32 extremes).
  auto check = [&](absl::Span<const int32_t> column, int32_t lo, int32_t hi) {
    const int32_t* v = column.data();
    const uint32_t width = static_cast<uint32_t>(hi - lo);
    for (size_t r = 0; r < column.size(); ++r) {
      bad[r] |=
          static_cast<uint32_t>(v[r]) - static_cast<uint32_t>(lo) >= width;
    }
  };
  check(c.current_action, -1, set.action_count());
  check(c.personality, -1, set.personality_count());
  const uint32_t* off = c.target_offsets.data();
  if (!c.current_target.empty()) {
    // -2 .. (the row's targets) - 1.
    const int32_t* t = c.current_target.data();
    for (size_t r = 0; r < n; ++r) {
      const uint32_t targets = off != nullptr ? off[r + 1] - off[r] : 0;
      bad[r] |= static_cast<uint32_t>(t[r]) + 2u >= targets + 2u;
    }
  }
  uint8_t any_bad = 0;
  for (size_t r = 0; r < n; ++r) any_bad |= bad[r];
  any_cooldown_input_ = !c.seconds_since_action.empty();
  if (any_bad == 0) {
    AdmitWholeColumns(set, c);
    return;
  }
  const bool pairs = set.has_per_target_actions();
  const size_t ntf = static_cast<size_t>(set.target_factor_count());
  const size_t nf = static_cast<size_t>(set.factor_count());
  size_t j = 0, p = 0;
  for (size_t r = 0; r < n; ++r) {
    const uint32_t first = off != nullptr ? off[r] : 0;
    const uint32_t targets = off != nullptr ? off[r + 1] - first : 0;
    const int32_t action = c.current_action.empty() ? -1 : c.current_action[r];
    const int32_t target =
        c.current_target.empty() ? kAnyTarget : c.current_target[r];
    const int32_t personality = c.personality.empty() ? -1 : c.personality[r];
    if (bad[r] != 0) {
      if (errors != nullptr) {
        (*errors)[r] =
            CheckAgentIndices(set, action, personality, target, targets);
      }
      continue;
    }
    agents_[j] = static_cast<uint32_t>(r);
    rows_[j] = c.factors + r * nf;  // read when factors_by_row
    current_action_[j] = action;
    current_target_[j] = target;
    personality_[j] = personality;
    any_personality_ |= personality >= 0;
    agents_without_targets_ += targets == 0;
    pair_begin_[j] = static_cast<uint32_t>(p);
    if (pairs) {
      if (p + targets > pair_agent_.size()) GrowPairs(p + targets);
      for (uint32_t t = 0; t < targets; ++t, ++p) {
        pair_agent_[p] = static_cast<uint32_t>(j);
        pair_target_[p] = t;
        pair_rows_[p] = c.target_factors.data() + (first + t) * ntf;
      }
    }
    ++j;
  }
  EndAdmit(j, p);
}

// Every row of the columns admitted, in order: the index columns copied
// as they are, the pairs listed from the offsets, and the targets' factors
// read from their block in Transpose (pair_base_).
UTILITYD_VECTOR_CLONES
void BatchPass::AdmitWholeColumns(const CompiledBehaviourSet& set,
                                  const AgentColumns& c) {
  const size_t n = c.rows;
  if (c.factors_by_row) row_base_ = c.factors;
  uint32_t* agents = agents_.data();
  for (size_t r = 0; r < n; ++r) agents[r] = static_cast<uint32_t>(r);
  auto copy = [n](absl::Span<const int32_t> column, int32_t unset,
                  std::vector<int32_t>* to) {
    if (column.empty()) {
      std::fill_n(to->data(), n, unset);
    } else {
      std::copy_n(column.data(), n, to->data());
    }
  };
  copy(c.current_action, -1, &current_action_);
  copy(c.current_target, kAnyTarget, &current_target_);
  copy(c.personality, -1, &personality_);
  int32_t most = -1;
  const int32_t* personality = c.personality.data();
  for (size_t r = 0; r < c.personality.size(); ++r) {
    most = std::max(most, personality[r]);
  }
  any_personality_ = most >= 0;
  const uint32_t* off = c.target_offsets.data();
  if (off == nullptr || !set.has_per_target_actions()) {
    // No pairs; agents without targets counted all the same.
    std::fill_n(pair_begin_.data(), n, 0u);
    uint32_t empty = 0;
    for (size_t r = 0; r < n; ++r)
      empty += off == nullptr || off[r] == off[r + 1];
    agents_without_targets_ = empty;
    EndAdmit(n, 0);
    return;
  }
  const uint32_t first = off[0];
  const size_t pairs = off[n] - first;
  if (pairs + 4 > pair_agent_.size()) GrowPairs(pairs + 4);
  uint32_t empty = 0;
  uint32_t* pair_begin = pair_begin_.data();
  uint32_t* pair_agent = pair_agent_.data();
  uint32_t* pair_target = pair_target_.data();
  for (size_t r = 0; r < n; ++r) {  // vectorises
    pair_begin[r] = off[r] - first;
    empty += off[r] == off[r + 1];
  }
  // Each row's pairs: its agent and target numbers. A row of up to four
  // targets (the common case) is written as four whole entries, which
  // vectorises: its spare entries are overwritten by the rows after it,
  // the last row's land in the arrays' spare room (GrowPairs).
  for (size_t r = 0; r < n; ++r) {
    const uint32_t begin = pair_begin[r], count = off[r + 1] - off[r];
    uint32_t* agent = pair_agent + begin;
    uint32_t* target = pair_target + begin;
    if (count <= 4) {
      const uint32_t a = static_cast<uint32_t>(r);
      agent[0] = agent[1] = agent[2] = agent[3] = a;
      target[0] = 0;
      target[1] = 1;
      target[2] = 2;
      target[3] = 3;
      continue;
    }
    for (uint32_t t = 0; t < count; ++t) {
      agent[t] = static_cast<uint32_t>(r);
      target[t] = t;
    }
  }
  agents_without_targets_ = empty;
  pair_base_ = c.target_factors.data() +
               static_cast<size_t>(first) * set.target_factor_count();
  EndAdmit(n, pairs);
}

uint64_t BatchPass::Seed(size_t j) const {
  const uint32_t i = agents_[j];
  if (agent_columns_in_ == nullptr) return inputs_[i].seed;
  const auto& seeds = agent_columns_in_->seeds;
  return seeds.empty() ? 0 : seeds[i];
}

const float* BatchPass::Clocks(const CompiledBehaviourSet& set,
                               size_t j) const {
  const uint32_t i = agents_[j];
  if (agent_columns_in_ == nullptr) {
    const auto& clocks = inputs_[i].seconds_since_action;
    return clocks.empty() ? nullptr : clocks.data();
  }
  const auto& clocks = agent_columns_in_->seconds_since_action;
  return clocks.empty()
             ? nullptr
             : clocks.data() + static_cast<size_t>(i) * set.action_count();
}

// The pair arrays hold at least `count` pairs. They only grow, and n_pairs_
// says how many of them the batch uses: resizing them to each batch's
// count would zero what Admit then overwrites.
void BatchPass::GrowPairs(size_t count) {
  const size_t size = std::max(count, 2 * pair_agent_.size());
  pair_agent_.resize(size);
  pair_target_.resize(size);
  pair_rows_.resize(size);
}

// The admitted agents' factor columns from a factor-major block: the
// block's own columns when every row is an admitted agent in order, else
// gathered into agent_columns_; null without a block (rows transposed).
const float* BatchPass::FactorMajorAgents(int nf,
                                          const FactorMajorColumns* columns) {
  if (columns == nullptr) return nullptr;
  const size_t n_agents = agents_.size();
  auto row = [&](size_t j) -> size_t {
    const uint32_t i = agents_[j];
    return columns->row_of.empty() ? i
                                   : static_cast<size_t>(columns->row_of[i]);
  };
  bool whole = n_agents == columns->rows;
  if (columns->row_of.empty()) {
    // agents_ rises strictly from 0 or more: it is 0, 1, ... exactly when
    // its last is n_agents - 1.
    whole = whole && (n_agents == 0 || agents_.back() == n_agents - 1);
  } else {
    for (size_t j = 0; whole && j < n_agents; ++j) whole = row(j) == j;
  }
  if (whole) return columns->data;
  agent_columns_.resize(static_cast<size_t>(nf) * n_agents);
  for (int k = 0; k < nf; ++k) {
    const float* from = columns->data + k * columns->rows;
    float* to = agent_columns_.data() + k * n_agents;
    for (size_t j = 0; j < n_agents; ++j) to[j] = from[row(j)];
  }
  return agent_columns_.data();
}

}  // namespace internal
}  // namespace utilityd::engine
