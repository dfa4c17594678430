#include "utilityd/client/compact.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "utilityd/base/decision_id.h"

namespace utilityd::client {
namespace {

const std::string& Empty() {
  static const std::string* const kEmpty = new std::string();
  return *kEmpty;
}

}  // namespace

std::string CompactDecisionId(uint64_t base, int index) {
  const std::array<char, 16> hex = DecisionIdHex(DecisionId(base, index));
  return std::string(hex.data(), hex.size());
}

CompactReader::CompactReader(const v1::DecideRequest& request,
                             const v1::DecideResponse& response)
    : request_(request), compact_(response.compact()) {}

absl::Status CompactReader::Check() const {
  const int n = request_.agents_size();
  auto wrong = [&](absl::string_view field, int got) {
    return absl::InvalidArgumentError(
        absl::StrCat("compact.", field, ": expected ", n,
                     " entries (one per agent of the request), got ", got));
  };
  if (compact_.action_index_size() != n)
    return wrong("action_index", compact_.action_index_size());
  if (compact_.target_index_size() != n)
    return wrong("target_index", compact_.target_index_size());
  if (compact_.score_size() != n) return wrong("score", compact_.score_size());
  if (static_cast<int>(compact_.flags().size()) != n)
    return wrong("flags", static_cast<int>(compact_.flags().size()));
  int flagged = 0;
  for (int i = 0; i < n; ++i) {
    if (!(Flags(i) & v1::COMPACT_FLAG_FULL)) continue;
    ++flagged;
    if (full(i) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "compact.full: agent ", i, " has the FULL flag but no decision"));
    }
  }
  if (flagged != compact_.full_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("compact.full: ", compact_.full_size(), " decisions for ",
                     flagged, " agents flagged FULL"));
  }
  for (int i = 0; i < n; ++i) {
    const int t = compact_.target_index(i);
    if (t < -1 || t >= request_.agents(i).targets_size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("compact.target_index[", i, "]: ", t,
                       " is not a target of agents[", i, "]"));
    }
  }
  return absl::OkStatus();
}

const v1::Decision* CompactReader::full(int i) const {
  if (!(Flags(i) & v1::COMPACT_FLAG_FULL)) return nullptr;
  // In request order: a binary search by position.
  const auto& list = compact_.full();
  auto it = std::lower_bound(
      list.begin(), list.end(), i,
      [](const v1::IndexedDecision& x, int at) { return x.agent() < at; });
  return it != list.end() && it->agent() == i ? &it->decision() : nullptr;
}

const std::string& CompactReader::target_id(int i) const {
  const int t = compact_.target_index(i);
  return t >= 0 && t < request_.agents(i).targets_size()
             ? request_.agents(i).targets(t).target_id()
             : Empty();
}

const std::string& CompactReader::revision(int i) const {
  const std::string& set = request_.agents(i).behaviour_set();
  for (const v1::SetRevision& r : compact_.revisions()) {
    if (r.behaviour_set() == set) return r.revision();
  }
  return Empty();
}

std::string CompactReader::decision_id(int i) const {
  if (!compact_.has_decision_id_base()) return std::string();
  return CompactDecisionId(compact_.decision_id_base(), i);
}

absl::StatusOr<v1::Decision> CompactReader::Expand(
    int i, absl::Span<const std::string> actions) const {
  if (const v1::Decision* d = full(i)) return *d;
  v1::Decision d;
  d.set_agent_id(request_.agents(i).agent_id());
  const int action = action_index(i);
  if (action >= static_cast<int>(actions.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("compact.action_index[", i, "]: ", action, " but set ",
                     request_.agents(i).behaviour_set(), " has ",
                     actions.size(), " actions"));
  }
  d.set_action_index(action);
  if (action >= 0) d.set_action(actions[action]);
  d.set_target_id(target_id(i));
  d.set_score(score(i));
  d.set_switched(switched(i));
  d.set_fallback(fallback(i));
  d.set_revision(revision(i));
  d.set_decision_id(decision_id(i));
  return d;
}

}  // namespace utilityd::client
