// SetSchema (client.h): a set's factor, action and personality positions
// from its summary, and named factors packed into them.
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "utilityd/client/client.h"

namespace utilityd::client {
namespace {

// Packs one list of named values into `packed` in `index` order.
absl::Status PackValues(
    const google::protobuf::Map<std::string, float>& named,
    const absl::flat_hash_map<std::string, int>& index,
    const google::protobuf::RepeatedPtrField<std::string>& order,
    absl::string_view where, google::protobuf::RepeatedField<float>* packed) {
  std::vector<float> values(order.size(), 0.0f);
  std::vector<bool> seen(order.size(), false);
  for (const auto& [name, value] : named) {
    auto it = index.find(name);
    if (it == index.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "named_factors: unknown factor \"", name, "\""));
    }
    values[it->second] = value;
    seen[it->second] = true;
  }
  std::vector<std::string> missing;
  for (int i = 0; i < order.size(); ++i) {
    if (!seen[i]) missing.push_back(order[i]);
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, "named_factors: missing ", absl::StrJoin(missing, ", ")));
  }
  packed->Assign(values.begin(), values.end());
  return absl::OkStatus();
}

}  // namespace

SetSchema::SetSchema(v1::BehaviourSetSummary summary)
    : summary_(std::move(summary)) {
  for (int i = 0; i < summary_.factors_size(); ++i) {
    factors_[summary_.factors(i)] = i;
  }
  for (int i = 0; i < summary_.target_factors_size(); ++i) {
    target_factors_[summary_.target_factors(i)] = i;
  }
  for (int i = 0; i < summary_.personalities_size(); ++i) {
    personalities_[summary_.personalities(i)] = i;
  }
  for (int i = 0; i < summary_.actions_size(); ++i) {
    actions_[summary_.actions(i)] = i;
  }
}

namespace {
int IndexIn(const absl::flat_hash_map<std::string, int>& index,
            absl::string_view name) {
  auto it = index.find(name);
  return it == index.end() ? -1 : it->second;
}
}  // namespace

int SetSchema::FactorIndex(absl::string_view name) const {
  return IndexIn(factors_, name);
}
int SetSchema::TargetFactorIndex(absl::string_view name) const {
  return IndexIn(target_factors_, name);
}
int SetSchema::PersonalityIndex(absl::string_view name) const {
  return IndexIn(personalities_, name);
}
int SetSchema::ActionIndex(absl::string_view name) const {
  return IndexIn(actions_, name);
}

absl::Status SetSchema::Pack(v1::AgentSnapshot* snapshot) const {
  // Pack everything aside first, so a failure leaves the snapshot untouched.
  const bool agent_named =
      !snapshot->named_factors().empty() && snapshot->factors().empty();
  google::protobuf::RepeatedField<float> agent_values;
  if (agent_named) {
    if (absl::Status s = PackValues(snapshot->named_factors(), factors_,
                                    summary_.factors(), "", &agent_values);
        !s.ok()) {
      return s;
    }
  }
  std::vector<std::pair<int, google::protobuf::RepeatedField<float>>> targets;
  for (int t = 0; t < snapshot->targets_size(); ++t) {
    const v1::TargetSnapshot& target = snapshot->targets(t);
    if (target.named_factors().empty() || !target.factors().empty()) continue;
    google::protobuf::RepeatedField<float> values;
    if (absl::Status s = PackValues(target.named_factors(), target_factors_,
                                    summary_.target_factors(),
                                    absl::StrCat("targets[", t, "]."), &values);
        !s.ok()) {
      return s;
    }
    targets.emplace_back(t, std::move(values));
  }
  if (!agent_named && targets.empty()) return absl::OkStatus();
  if (agent_named) {
    snapshot->mutable_factors()->Swap(&agent_values);
    snapshot->clear_named_factors();
  }
  for (auto& [t, values] : targets) {
    v1::TargetSnapshot* target = snapshot->mutable_targets(t);
    target->mutable_factors()->Swap(&values);
    target->clear_named_factors();
  }
  snapshot->set_expected_revision(revision());
  return absl::OkStatus();
}

}  // namespace utilityd::client
