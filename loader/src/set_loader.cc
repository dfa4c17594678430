#include "utilityd/loader/set_loader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "utilityd/loader/proto_reader.h"
#include "utilityd/loader/subtrees.h"

namespace utilityd::loader {
namespace {

namespace fs = std::filesystem;

// The field of the curve's `kind` oneof that is set, or null. Every kind
// of the proto is registered in the engine under the field's name
// (set_loader_test checks it).
const google::protobuf::FieldDescriptor* KindField(const v1::Curve& c) {
  return c.GetReflection()->GetOneofFieldDescriptor(
      c, v1::Curve::descriptor()->FindOneofByName("kind"));
}

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

// Checks what the engine does not see: scenarios name real factors, actions,
// targets and personalities, and give every factor a value.
void ValidateScenarios(const v1::BehaviourSet& set,
                       std::vector<engine::ValidationIssue>* issues) {
  std::vector<std::string> factor_names, target_factor_names, action_names,
      personality_names;
  for (const auto& f : set.factors()) factor_names.push_back(f.name());
  for (const auto& f : set.target_factors()) {
    target_factor_names.push_back(f.name());
  }
  for (const auto& a : set.actions()) action_names.push_back(a.name());
  for (const auto& p : set.personalities())
    personality_names.push_back(p.name());
  auto unknown = [&](const std::string& path, absl::string_view what,
                     const std::string& name,
                     const std::vector<std::string>& known) {
    issues->push_back({path, engine::UnknownNameMessage(what, name, known)});
  };
  auto contains = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  auto check_values =
      [&](const std::string& path,
          const google::protobuf::Map<std::string, double>& values,
          const std::vector<std::string>& names, absl::string_view what) {
        for (const auto& [name, value] : values) {
          if (!contains(names, name)) {
            unknown(absl::StrCat(path, "[\"", name, "\"]"), what, name, names);
          }
        }
        std::vector<std::string> missing;
        for (const std::string& n : names) {
          if (!values.contains(n)) missing.push_back(n);
        }
        if (!missing.empty()) {
          issues->push_back({path, absl::StrCat("missing a value for ",
                                                absl::StrJoin(missing, ", "))});
        }
      };
  absl::flat_hash_set<std::string> seen;
  for (int i = 0; i < set.scenarios_size(); ++i) {
    const v1::Scenario& s = set.scenarios(i);
    const std::string at = absl::StrCat("scenarios[", i, "]");
    if (s.name().empty()) issues->push_back({at + ".name", "is required"});
    if (!s.name().empty() && !seen.insert(s.name()).second) {
      issues->push_back({at + ".name", absl::StrCat("duplicate scenario \"",
                                                    s.name(), "\"")});
    }
    check_values(at + ".factors", s.factors(), factor_names, "factor");
    absl::flat_hash_set<std::string> target_ids;
    for (int t = 0; t < s.targets_size(); ++t) {
      const std::string tat = absl::StrCat(at, ".targets[", t, "]");
      if (s.targets(t).id().empty())
        issues->push_back({tat + ".id", "is required"});
      target_ids.insert(s.targets(t).id());
      check_values(tat + ".factors", s.targets(t).factors(),
                   target_factor_names, "target factor");
    }
    for (const auto& [field, value] :
         {std::pair{".current_action", &s.current_action()},
          std::pair{".expected_action", &s.expected_action()}}) {
      if (!value->empty() && !contains(action_names, *value)) {
        unknown(at + field, "action", *value, action_names);
      }
    }
    for (const auto& [field, value] :
         {std::pair{".current_target", &s.current_target()},
          std::pair{".expected_target", &s.expected_target()}}) {
      if (!value->empty() && !target_ids.contains(*value)) {
        issues->push_back({at + field, absl::StrCat("unknown target \"", *value,
                                                    "\" (not in targets)")});
      }
    }
    for (const auto& [name, seconds] : s.seconds_since_action()) {
      const std::string path =
          absl::StrCat(at, ".seconds_since_action[\"", name, "\"]");
      if (!contains(action_names, name)) {
        unknown(path, "action", name, action_names);
      }
      if (!(seconds >= 0)) {
        issues->push_back({path, absl::StrCat("must be >= 0, got ", seconds)});
      }
    }
    if (!s.personality().empty() &&
        !contains(personality_names, s.personality())) {
      unknown(at + ".personality", "personality", s.personality(),
              personality_names);
    }
  }
}

// Each accepted analysis finding says what it is and why it is kept.
void ValidateAnalysisNotes(const v1::BehaviourSet& set,
                           std::vector<engine::ValidationIssue>* issues) {
  for (int i = 0; i < set.analysis().accept_size(); ++i) {
    const v1::AcceptedFinding& a = set.analysis().accept(i);
    const std::string at = absl::StrCat("analysis.accept[", i, "]");
    for (const auto& [field, value] :
         {std::pair{".kind", &a.kind()}, std::pair{".subject", &a.subject()},
          std::pair{".reason", &a.reason()}}) {
      if (value->empty()) issues->push_back({at + field, "is required"});
    }
  }
}

absl::StatusOr<std::shared_ptr<const LoadedSet>> Load(
    v1::BehaviourSet set, absl::string_view source,
    const PositionMap* positions) {
  SubtreeUses uses;
  std::vector<engine::ValidationIssue> issues;
  ExpandSubtrees(&set, &issues, &uses);
  engine::SetDefinition def;
  if (issues.empty()) {
    ApplyDefaults(&set);
    set.set_revision(ComputeRevision(set));
    def = ToDefinition(set);
    issues = engine::Validate(def);
    ValidateScenarios(set, &issues);
    ValidateAnalysisNotes(set, &issues);
  }
  if (!issues.empty()) {
    std::vector<std::string> lines;
    for (const engine::ValidationIssue& i : issues) {
      ReadIssue r{.source = std::string(source),
                  .path = uses.SourcePath(i.path),
                  .message = i.message + uses.Note(i.path)};
      if (positions != nullptr) {
        const TextPosition p = FindPosition(*positions, r.path);
        r.line = p.line;
        r.column = p.column;
      }
      lines.push_back(r.ToString());
    }
    return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
  }
  absl::StatusOr<engine::CompiledBehaviourSet> compiled = engine::Compile(def);
  if (!compiled.ok()) {  // Validate passed, so this is our bug.
    return absl::InternalError(
        absl::StrCat(source, ": ", compiled.status().message()));
  }
  auto loaded = std::make_shared<LoadedSet>();
  loaded->definition = std::move(set);
  loaded->compiled = *std::move(compiled);
  loaded->source = std::string(source);
  return std::shared_ptr<const LoadedSet>(std::move(loaded));
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

engine::ConsiderationDefinition ToConsideration(const v1::Consideration& c) {
  engine::ConsiderationDefinition cd{.name = c.name(),
                                     .factor = c.factor(),
                                     .curve = ToCurve(c.curve()),
                                     .weight = c.weight(),
                                     .output_min = c.output().min(),
                                     .output_max = c.output().max(),
                                     .per_target = c.per_target()};
  if (c.range().has_min()) cd.range_min = c.range().min();
  if (c.range().has_max()) cd.range_max = c.range().max();
  return cd;
}

// The field of the node's `kind` oneof that is set, or null.
const google::protobuf::FieldDescriptor* KindField(const v1::TreeNode& node) {
  return node.GetReflection()->GetOneofFieldDescriptor(
      node, v1::TreeNode::descriptor()->FindOneofByName("kind"));
}

// The numeric parameters of a node's kind (its NodeParams), by name in the
// kind's message: `visit(field, param)` for each that the message has.
template <typename Message, typename Visit>
void ForNodeParams(Message& kind, engine::NodeKind k, Visit visit) {
  const google::protobuf::Descriptor* d = kind.GetDescriptor();
  for (const engine::NodeParam& p : engine::NodeParams(k)) {
    const google::protobuf::FieldDescriptor* f = d->FindFieldByName(p.name);
    if (f != nullptr) visit(f, p);
  }
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

// The engine's tree node from a defaulted message. A node without a kind
// becomes an empty sequence, which validation reports.
engine::TreeNodeDefinition ToTreeNode(const v1::TreeNode& node) {
  engine::TreeNodeDefinition d;
  d.name = node.name();
  d.failure_if = node.failure_if();
  d.success_if = node.success_if();
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

engine::SetDefinition ToDefinition(const v1::BehaviourSet& set) {
  engine::SetDefinition d;
  d.name = set.name();
  d.description = set.description();
  d.version = set.version();
  d.revision = set.revision();
  d.factors = ToFactors(set.factors());
  d.target_factors = ToFactors(set.target_factors());
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

std::string ComputeRevision(const v1::BehaviourSet& set) {
  v1::BehaviourSet copy = set;
  copy.clear_revision();
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream raw(&bytes);
    google::protobuf::io::CodedOutputStream out(&raw);
    out.SetSerializationDeterministic(true);
    copy.SerializeToCodedStream(&out);
  }
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64 offset basis
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;  // FNV-1a 64 prime
  }
  return absl::StrFormat("%016x", h);
}

absl::StatusOr<std::shared_ptr<const LoadedSet>> LoadSetProto(
    v1::BehaviourSet set, absl::string_view source) {
  return Load(std::move(set), source, nullptr);
}

absl::StatusOr<std::shared_ptr<const LoadedSet>> LoadSetText(
    absl::string_view text, absl::string_view source) {
  v1::BehaviourSet set;
  std::vector<ReadIssue> issues;
  PositionMap positions;
  if (!ReadMessage(text, source, &set, &issues, {}, &positions)) {
    return absl::InvalidArgumentError(JoinIssues(issues));
  }
  return Load(std::move(set), source, &positions);
}

absl::StatusOr<std::shared_ptr<const LoadedSet>> LoadSetFile(
    const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot be read"));
  std::ostringstream text;
  text << in.rdbuf();
  return LoadSetText(text.str(), path);
}

std::shared_ptr<const LoadedSet> Catalog::Find(absl::string_view name) const {
  auto it = sets_.find(name);
  return it == sets_.end() ? nullptr : it->second;
}

bool IsBehaviourSetFileName(absl::string_view name) {
  if (name.empty() || name[0] == '.') return false;
  return absl::EndsWith(name, ".yaml") || absl::EndsWith(name, ".yml") ||
         absl::EndsWith(name, ".json");
}

absl::StatusOr<std::vector<std::string>> ListSetFiles(
    const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::directory_iterator(p, ec)) {
        const std::string name = entry.path().filename().string();
        if (IsBehaviourSetFileName(name) &&
            fs::is_regular_file(entry.path(), ec)) {
          found.push_back(entry.path().string());
        }
      }
      if (ec) return absl::NotFoundError(absl::StrCat(p, ": ", ec.message()));
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(p, ec)) {
      files.push_back(p);
    } else {
      return absl::NotFoundError(
          absl::StrCat(p, ": no such file or directory"));
    }
  }
  return files;
}

absl::StatusOr<Catalog> Catalog::Of(
    std::vector<std::shared_ptr<const LoadedSet>> sets) {
  Catalog catalog;
  for (auto& set : sets) {
    const std::string name = set->name();
    if (!catalog.sets_.emplace(name, std::move(set)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("name: set \"", name, "\" is given twice"));
    }
  }
  if (std::vector<std::string> errors = catalog.IndexResources();
      !errors.empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
  }
  return catalog;
}

const CatalogResource* Catalog::FindResource(absl::string_view name) const {
  const auto it = resources_.find(name);
  return it == resources_.end() ? nullptr : &it->second;
}

std::vector<std::string> Catalog::IndexResources() {
  std::vector<std::string> errors;
  resources_.clear();
  for (const auto& [_, set] : sets_) {
    for (const engine::CompiledResource& r : set->compiled.resources()) {
      auto [it, added] = resources_.try_emplace(r.name);
      CatalogResource& c = it->second;
      if (added) {
        c = {.per_target = r.per_target,
             .capacity = r.capacity,
             .preemption_margin = r.preemption_margin};
      } else if (c.per_target != r.per_target) {
        auto kind = [](bool per_target) {
          return per_target ? "per target" : "batch-wide (per_target: false)";
        };
        errors.push_back(absl::StrCat(
            set->source, ": resources: \"", r.name, "\" is ",
            kind(r.per_target), " here but ", kind(c.per_target), " in ",
            c.declared_in.front(),
            "; sets sharing a resource share its pools, so they must agree"));
        continue;
      } else {
        c.capacity = std::min(c.capacity, r.capacity);
        c.preemption_margin =
            std::min(c.preemption_margin, r.preemption_margin);
      }
      c.declared_in.push_back(set->source);
    }
  }
  return errors;
}

absl::StatusOr<Catalog> LoadCatalog(const std::vector<std::string>& paths) {
  absl::StatusOr<std::vector<std::string>> files = ListSetFiles(paths);
  if (!files.ok()) return files.status();
  Catalog catalog;
  std::vector<std::string> errors;
  for (const std::string& f : *files) {
    absl::StatusOr<std::shared_ptr<const LoadedSet>> set = LoadSetFile(f);
    if (!set.ok()) {
      errors.emplace_back(set.status().message());
      continue;
    }
    auto [it, inserted] = catalog.sets_.emplace((*set)->name(), *set);
    if (!inserted) {
      errors.push_back(absl::StrCat(f, ": name: set \"", (*set)->name(),
                                    "\" is already defined in ",
                                    it->second->source));
    }
  }
  if (errors.empty()) errors = catalog.IndexResources();
  if (!errors.empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
  }
  return catalog;
}

}  // namespace utilityd::loader
