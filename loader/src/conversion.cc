// A defaulted set's message converted into the engine's definitions
// (ToDefinition), field by field.
#include <algorithm>
#include <optional>
#include <vector>

#include "kind_fields.h"
#include "utilityd/loader/set_loader.h"
#include "utilityd/loader/subtrees.h"

namespace utilityd::loader {
namespace {

using internal::ForNodeParams;
using internal::KindField;

// The engine's curve from a defaulted message: the kind, then each of its
// parameters by name.
engine::CurveDefinition ToCurve(const v1::Curve& c) {
  engine::CurveDefinition d;  // linear with its defaults when no kind is set
  d.invert = c.invert();
  const google::protobuf::FieldDescriptor* kind = KindField(c);
  if (kind == nullptr) return d;
  d.kind = *engine::FindCurveKind(kind->name());
  const google::protobuf::Message& params =
      c.GetReflection()->GetMessage(c, kind);
  const google::protobuf::Reflection* r = params.GetReflection();
  for (const engine::CurveParam& p : engine::CurveParams(d.kind)) {
    const google::protobuf::FieldDescriptor* f =
        params.GetDescriptor()->FindFieldByName(p.name);
    if (p.number != nullptr) d.*p.number = r->GetDouble(params, f);
    if (p.flag != nullptr) d.*p.flag = r->GetBool(params, f);
    if (p.points == nullptr) continue;
    for (int i = 0; i < r->FieldSize(params, f); ++i) {
      const auto& point =
          static_cast<const v1::Point&>(r->GetRepeatedMessage(params, f, i));
      (d.*p.points).push_back({point.x(), point.y()});
    }
  }
  return d;
}

std::vector<engine::FactorDefinition> ToFactors(
    const google::protobuf::RepeatedPtrField<v1::Factor>& factors) {
  std::vector<engine::FactorDefinition> out;
  for (const v1::Factor& f : factors) {
    out.push_back({.name = f.name(),
                   .min = f.min(),
                   .max = f.max(),
                   .unit = f.unit(),
                   .description = f.description()});
  }
  return out;
}

engine::ConsiderationDefinition ToConsideration(const v1::Consideration& c) {
  engine::ConsiderationDefinition cd{.name = c.name(),
                                     .factor = c.factor(),
                                     .curve = ToCurve(c.curve()),
                                     .weight = c.weight(),
                                     .output_min = c.output().min(),
                                     .output_max = c.output().max(),
                                     .per_target = c.per_target(),
                                     .gate = c.gate()};
  if (c.range().has_min()) cd.range_min = c.range().min();
  if (c.range().has_max()) cd.range_max = c.range().max();
  return cd;
}

// Reads the numeric parameters of a defaulted node into `d`.
void ReadNodeParams(const v1::TreeNode& node, engine::TreeNodeDefinition& d) {
  const google::protobuf::FieldDescriptor* field = KindField(node);
  if (field->type() != google::protobuf::FieldDescriptor::TYPE_MESSAGE) return;
  const google::protobuf::Message& kind =
      node.GetReflection()->GetMessage(node, field);
  const google::protobuf::Reflection* r = kind.GetReflection();
  ForNodeParams(kind, d.kind,
                [&](const google::protobuf::FieldDescriptor* f,
                    const engine::NodeParam& p) {
                  if (p.integer != nullptr) d.*p.integer = r->GetInt32(kind, f);
                  if (p.number != nullptr) d.*p.number = r->GetDouble(kind, f);
                });
}

// becomes an empty sequence, which validation reports.
engine::TreeNodeDefinition ToTreeNode(const v1::TreeNode& node) {
  engine::TreeNodeDefinition d;
  d.name = node.name();
  d.failure_if = node.failure_if();
  d.success_if = node.success_if();
  d.skip_if = node.skip_if();
  d.while_holds = node.while_();
  d.post_success = node.on_success();
  d.post_failure = node.on_failure();
  d.post_always = node.post();
  d.post_halted = node.on_halted();
  if (node.has_weight()) d.weight = node.weight();
  d.rank = node.rank();
  for (const v1::Consideration& c : node.considerations()) {
    d.considerations.push_back(ToConsideration(c));
  }
  if (const google::protobuf::FieldDescriptor* kind = KindField(node)) {
    // Every field of the oneof is a kind the engine knows (set_loader_test).
    d.kind = engine::FindNodeKind(kind->name())
                 .value_or(engine::NodeKind::kSequence);
    ReadNodeParams(node, d);
  }
  switch (node.kind_case()) {
    case v1::TreeNode::kCondition: {
      const v1::ConditionNode& c = node.condition();
      d.condition.factor = c.factor();
      if (c.range().has_min()) d.condition.range_min = c.range().min();
      if (c.range().has_max()) d.condition.range_max = c.range().max();
      d.condition.curve = ToCurve(c.curve());
      d.condition.threshold = c.threshold();
      break;
    }
    case v1::TreeNode::kAction:
      d.action = node.action();
      break;
    case v1::TreeNode::kRunOnce:
      d.then_skip = node.run_once().then_skip();
      break;
    case v1::TreeNode::kScript:
      d.code = node.script();
      break;
    case v1::TreeNode::kScriptCondition:
      d.code = node.script_condition();
      break;
    case v1::TreeNode::kLoop: {
      const v1::LoopNode& l = node.loop();
      d.values.assign(l.values().begin(), l.values().end());
      d.variable = l.variable();
      switch (l.if_empty()) {
        case v1::NODE_STATUS_UNSPECIFIED:
        case v1::NODE_STATUS_SUCCESS:
          d.if_empty = engine::NodeStatus::kSuccess;
          break;
        case v1::NODE_STATUS_FAILURE:
          d.if_empty = engine::NodeStatus::kFailure;
          break;
        case v1::NODE_STATUS_SKIPPED:
          d.if_empty = engine::NodeStatus::kSkipped;
          break;
        default:  // running: refused by validation
          d.if_empty = engine::NodeStatus::kRunning;
          break;
      }
      break;
    }
    case v1::TreeNode::kSwitch:
      d.factor = node.switch_().factor();
      d.cases.assign(node.switch_().cases().begin(),
                     node.switch_().cases().end());
      break;
    case v1::TreeNode::kUtility:
      d.rescore = node.utility().rescore() == v1::RESCORE_EVERY_TICK
                      ? engine::Rescore::kEveryTick
                      : engine::Rescore::kOnEnter;
      d.on_failure =
          node.utility().on_failure() == v1::ON_CHILD_FAILURE_NEXT_BEST
              ? engine::OnChildFailure::kNextBest
              : engine::OnChildFailure::kFail;
      break;
    default:
      break;
  }
  for (const v1::TreeNode* child : ChildrenOf(node)) {
    d.children.push_back(ToTreeNode(*child));
  }
  return d;
}

}  // namespace

engine::SetDefinition ToDefinition(const v1::BehaviourSet& set) {
  engine::SetDefinition d;
  d.name = set.name();
  d.description = set.description();
  d.version = set.version();
  d.revision = set.revision();
  d.factors = ToFactors(set.factors());
  d.target_factors = ToFactors(set.target_factors());
  d.enums.assign(set.enums().begin(), set.enums().end());
  std::sort(d.enums.begin(), d.enums.end());  // a map's order is none
  for (const v1::Action& a : set.actions()) {
    engine::ActionDefinition ad{.name = a.name(),
                                .description = a.description(),
                                .weight = a.weight(),
                                .rank = a.rank(),
                                .cooldown_seconds = a.cooldown_seconds(),
                                .per_target = a.per_target()};
    for (const v1::Consideration& c : a.considerations()) {
      ad.considerations.push_back(ToConsideration(c));
    }
    for (const v1::ResourceUse& u : a.uses()) {
      ad.uses.push_back({.resource = u.resource(), .amount = u.amount()});
    }
    d.actions.push_back(std::move(ad));
  }
  for (const v1::Resource& r : set.resources()) {
    engine::ResourceDefinition rd{.name = r.name(),
                                  .description = r.description(),
                                  .per_target = r.per_target(),
                                  .capacity = r.capacity()};
    if (r.has_preemption_margin()) rd.preemption_margin = r.preemption_margin();
    d.resources.push_back(std::move(rd));
  }
  switch (set.scoring().aggregation()) {
    case v1::AGGREGATION_WEIGHTED_SUM:
      d.aggregation = engine::Aggregation::kWeightedSum;
      break;
    case v1::AGGREGATION_MIN:
      d.aggregation = engine::Aggregation::kMin;
      break;
    default:
      d.aggregation = engine::Aggregation::kProduct;
      break;
  }
  switch (set.scoring().compensation()) {
    case v1::COMPENSATION_NONE:
      d.compensation = engine::Compensation::kNone;
      break;
    case v1::COMPENSATION_PER_CONSIDERATION:
      d.compensation = engine::Compensation::kPerConsideration;
      break;
    case v1::COMPENSATION_ON_PRODUCT:
      d.compensation = engine::Compensation::kOnProduct;
      break;
    case v1::COMPENSATION_GEOMETRIC_MEAN:
      d.compensation = engine::Compensation::kGeometricMean;
      break;
    default:
      d.compensation = engine::Compensation::kDefault;
      break;
  }
  const v1::Selection& sel = set.selection();
  switch (sel.strategy_case()) {
    case v1::Selection::kWeightedRandom:
      d.selection.strategy = engine::Strategy::kWeightedRandom;
      break;
    case v1::Selection::kTopK:
      d.selection.strategy = engine::Strategy::kTopK;
      d.selection.top_k = sel.top_k().k();
      break;
    case v1::Selection::kSoftmax:
      d.selection.strategy = engine::Strategy::kSoftmax;
      d.selection.temperature = sel.softmax().temperature();
      break;
    default:
      d.selection.strategy = engine::Strategy::kHighest;
      break;
  }
  d.selection.commitment_bonus = sel.commitment_bonus();
  d.selection.min_score = sel.min_score();
  d.selection.fallback_action = sel.fallback_action();
  for (const v1::Personality& p : set.personalities()) {
    engine::PersonalityDefinition pd{.name = p.name(),
                                     .description = p.description()};
    // Map iteration order is unspecified; sort so compilation is stable.
    pd.action_weights.assign(p.action_weights().begin(),
                             p.action_weights().end());
    pd.consideration_weights.assign(p.consideration_weights().begin(),
                                    p.consideration_weights().end());
    std::sort(pd.action_weights.begin(), pd.action_weights.end());
    std::sort(pd.consideration_weights.begin(), pd.consideration_weights.end());
    d.personalities.push_back(std::move(pd));
  }
  if (set.has_tree()) d.tree = ToTreeNode(set.tree());
  return d;
}

}  // namespace utilityd::loader
