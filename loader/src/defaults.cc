// The behaviour-set format's documented defaults written into a set's
// message (ApplyDefaults): an unset field means its default, never proto3's
// zero.
#include <optional>
#include <string>

#include "kind_fields.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/loader/subtrees.h"

namespace utilityd::loader {
namespace {

using internal::ForNodeParams;
using internal::KindField;

// Writes the documented default of every unset parameter of the curve's
// kind (CurveDefinition's initial values) into the message.
void DefaultCurve(v1::Curve* c) {
  const engine::CurveDefinition defaults;
  if (c->kind_case() == v1::Curve::KIND_NOT_SET) c->mutable_linear();
  const google::protobuf::FieldDescriptor* kind = KindField(*c);
  google::protobuf::Message* params =
      c->GetReflection()->MutableMessage(c, kind);
  const google::protobuf::Reflection* r = params->GetReflection();
  for (const engine::CurveParam& p :
       engine::CurveParams(*engine::FindCurveKind(kind->name()))) {
    const google::protobuf::FieldDescriptor* f =
        params->GetDescriptor()->FindFieldByName(p.name);
    if (p.number != nullptr && !r->HasField(*params, f)) {
      r->SetDouble(params, f, defaults.*p.number);
    }
  }
}

void DefaultFactors(google::protobuf::RepeatedPtrField<v1::Factor>* factors) {
  const engine::FactorDefinition d;
  for (v1::Factor& f : *factors) {
    if (!f.has_min()) f.set_min(d.min);
    if (!f.has_max()) f.set_max(d.max);
  }
}

const v1::Factor* FindFactor(
    const google::protobuf::RepeatedPtrField<v1::Factor>& factors,
    const std::string& name) {
  for (const v1::Factor& f : factors) {
    if (f.name() == name) return &f;
  }
  return nullptr;
}

// Writes the documented defaults of a consideration: weight, bookends from
// its factor, output range, curve parameters.
void DefaultConsideration(const v1::BehaviourSet& set, v1::Consideration* c) {
  const engine::ConsiderationDefinition defaults;
  if (!c->has_weight()) c->set_weight(defaults.weight);
  if (const v1::Factor* f =
          FindFactor(c->per_target() ? set.target_factors() : set.factors(),
                     c->factor())) {
    if (!c->range().has_min()) c->mutable_range()->set_min(f->min());
    if (!c->range().has_max()) c->mutable_range()->set_max(f->max());
  }
  if (!c->output().has_min()) c->mutable_output()->set_min(defaults.output_min);
  if (!c->output().has_max()) c->mutable_output()->set_max(defaults.output_max);
  DefaultCurve(c->mutable_curve());
}

// Writes the defaults of the numeric parameters the node leaves unset.
void DefaultNodeParams(v1::TreeNode* node) {
  const google::protobuf::FieldDescriptor* field = KindField(*node);
  if (field == nullptr ||
      field->type() != google::protobuf::FieldDescriptor::TYPE_MESSAGE) {
    return;
  }
  const std::optional<engine::NodeKind> k = engine::FindNodeKind(field->name());
  if (!k) return;
  google::protobuf::Message* kind =
      node->GetReflection()->MutableMessage(node, field);
  const google::protobuf::Reflection* r = kind->GetReflection();
  const engine::TreeNodeDefinition defaults;
  ForNodeParams(*kind, *k,
                [&](const google::protobuf::FieldDescriptor* f,
                    const engine::NodeParam& p) {
                  if (r->HasField(*kind, f)) return;
                  if (p.integer != nullptr)
                    r->SetInt32(kind, f, defaults.*p.integer);
                  if (p.number != nullptr)
                    r->SetDouble(kind, f, defaults.*p.number);
                });
}

// Writes the documented defaults of a tree node and its subtree.
void DefaultTree(const v1::BehaviourSet& set, v1::TreeNode* node,
                 bool utility_child) {
  const engine::TreeNodeDefinition d;
  if (utility_child && !node->has_weight() &&
      (node->kind_case() != v1::TreeNode::kAction ||
       node->considerations_size() > 0)) {
    node->set_weight(d.weight);
  }
  for (v1::Consideration& c : *node->mutable_considerations()) {
    DefaultConsideration(set, &c);
  }
  DefaultNodeParams(node);
  switch (node->kind_case()) {
    case v1::TreeNode::kCondition: {
      v1::ConditionNode* c = node->mutable_condition();
      if (const v1::Factor* f = FindFactor(set.factors(), c->factor())) {
        if (!c->range().has_min()) c->mutable_range()->set_min(f->min());
        if (!c->range().has_max()) c->mutable_range()->set_max(f->max());
      }
      if (!c->has_threshold()) c->set_threshold(d.condition.threshold);
      DefaultCurve(c->mutable_curve());
      break;
    }
    case v1::TreeNode::kRunOnce:
      if (!node->run_once().has_then_skip()) {
        node->mutable_run_once()->set_then_skip(d.then_skip);
      }
      break;
    case v1::TreeNode::kUtility: {
      v1::UtilityNode* u = node->mutable_utility();
      if (u->rescore() == v1::RESCORE_UNSPECIFIED) {
        u->set_rescore(v1::RESCORE_ON_ENTER);
      }
      if (u->on_failure() == v1::ON_CHILD_FAILURE_UNSPECIFIED) {
        u->set_on_failure(v1::ON_CHILD_FAILURE_FAIL);
      }
      break;
    }
    default:
      break;
  }
  const bool utility = node->kind_case() == v1::TreeNode::kUtility;
  for (v1::TreeNode* child : ChildrenOf(node)) {
    DefaultTree(set, child, utility);
  }
}

}  // namespace

void ApplyDefaults(v1::BehaviourSet* set) {
  DefaultFactors(set->mutable_factors());
  DefaultFactors(set->mutable_target_factors());
  const engine::ActionDefinition action_defaults;
  const engine::ResourceUseDefinition use_defaults;
  for (v1::Action& a : *set->mutable_actions()) {
    if (!a.has_weight()) a.set_weight(action_defaults.weight);
    for (v1::ResourceUse& u : *a.mutable_uses()) {
      if (!u.has_amount()) u.set_amount(use_defaults.amount);
    }
    for (v1::Consideration& c : *a.mutable_considerations()) {
      DefaultConsideration(*set, &c);
    }
  }
  const engine::ResourceDefinition resource_defaults;
  for (v1::Resource& r : *set->mutable_resources()) {
    if (!r.has_capacity()) r.set_capacity(resource_defaults.capacity);
  }
  if (set->has_tree()) DefaultTree(*set, set->mutable_tree(), false);
  v1::Scoring* scoring = set->mutable_scoring();
  if (scoring->aggregation() == v1::AGGREGATION_UNSPECIFIED) {
    scoring->set_aggregation(v1::AGGREGATION_PRODUCT);
  }
  if (scoring->compensation() == v1::COMPENSATION_UNSPECIFIED) {
    scoring->set_compensation(scoring->aggregation() == v1::AGGREGATION_PRODUCT
                                  ? v1::COMPENSATION_PER_CONSIDERATION
                                  : v1::COMPENSATION_NONE);
  }
  v1::Selection* sel = set->mutable_selection();
  const engine::SelectionDefinition sel_defaults;
  switch (sel->strategy_case()) {
    case v1::Selection::STRATEGY_NOT_SET:
      sel->mutable_highest();
      break;
    case v1::Selection::kTopK:
      if (!sel->top_k().has_k())
        sel->mutable_top_k()->set_k(sel_defaults.top_k);
      break;
    case v1::Selection::kSoftmax:
      if (!sel->softmax().has_temperature()) {
        sel->mutable_softmax()->set_temperature(sel_defaults.temperature);
      }
      break;
    default:
      break;
  }
}

}  // namespace utilityd::loader
