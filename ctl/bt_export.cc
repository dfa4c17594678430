// A behaviour set's tree -> BehaviorTree.CPP v4 XML (docs/TREES.md,
// "BehaviorTree.CPP XML"): utilityd's kinds as BT.CPP's built-ins where
// they are the same, its own nodes (utility, cooldown, factor conditions)
// as custom node types declared in a TreeNodesModel.
#include <map>
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "ctl/bt_names.h"
#include "ctl/bt_xml.h"
#include "google/protobuf/util/json_util.h"
#include "tinyxml2.h"
#include "utilityd/base/shortest_number.h"
#include "utilityd/engine/definition.h"
#include "utilityd/loader/subtrees.h"

namespace utilityd::ctl {
namespace {

using engine::FactorComparison;

class Exporter {
 public:
  explicit Exporter(const v1::BehaviourSet& set) : set_(set) {}

  std::string Run() {
    tinyxml2::XMLPrinter p;
    p.PushHeader(false, true);
    p.OpenElement("root");
    p.PushAttribute("BTCPP_format", "4");
    p.PushAttribute("main_tree_to_execute", set_.name().c_str());
    Tree(p, set_.name(), set_.description(), set_.tree());
    for (const v1::Subtree& s : set_.subtrees()) {
      Tree(p, s.name(), s.description(), s.tree());
    }
    Model(p);
    p.CloseElement();
    return p.CStr();
  }

 private:
  void Tree(tinyxml2::XMLPrinter& p, const std::string& id,
            const std::string& description, const v1::TreeNode& body) {
    p.OpenElement("BehaviorTree");
    p.PushAttribute("ID", id.c_str());
    if (!description.empty()) {
      p.PushAttribute("_description", description.c_str());
    }
    Node(p, body);
    p.CloseElement();
  }

  static void Attr(tinyxml2::XMLPrinter& p, const char* name,
                   const std::string& value) {
    p.PushAttribute(name, value.c_str());
  }

  // XMLPrinter keeps an open element's name until it closes: names live
  // here.
  const char* Keep(const std::string& name) {
    return names_.insert(name).first->c_str();
  }

  void Open(tinyxml2::XMLPrinter& p, const std::string& tag,
            const v1::TreeNode& n) {
    p.OpenElement(Keep(tag));
    if (!n.name().empty() && n.kind_case() != v1::TreeNode::kCondition) {
      Attr(p, "name", n.name());
    }
    Guards(p, n);
  }

  // Pre- and postconditions, as BT.CPP's attributes.
  static void Guards(tinyxml2::XMLPrinter& p, const v1::TreeNode& n) {
    for (const ScriptAttr& a : ScriptAttrs()) {
      if (!(n.*a.field)().empty()) Attr(p, a.attr, (n.*a.field)());
    }
  }

  void Kids(tinyxml2::XMLPrinter& p, const v1::TreeNode& n) {
    for (const v1::TreeNode* c : loader::ChildrenOf(n)) Node(p, *c);
  }

  void Node(tinyxml2::XMLPrinter& p, const v1::TreeNode& n) {
    const google::protobuf::FieldDescriptor* f =
        n.GetReflection()->GetOneofFieldDescriptor(
            n, v1::TreeNode::descriptor()->FindOneofByName("kind"));
    const std::string kind = f == nullptr ? "" : f->name();
    for (const auto* kinds : {&ChildrenKinds(), &ChildKinds(), &LeafKinds()}) {
      for (const auto& [tag, k] : *kinds) {
        if (k != kind) continue;
        Open(p, tag, n);  // a kind without parameters: BT.CPP's name
        Kids(p, n);
        p.CloseElement();
        return;
      }
    }
    switch (n.kind_case()) {
      case v1::TreeNode::kParallel:
        Open(p, "Parallel", n);
        if (n.parallel().has_success_threshold()) {
          Attr(p, "success_count",
               absl::StrCat(n.parallel().success_threshold()));
        }
        if (n.parallel().has_failure_threshold()) {
          Attr(p, "failure_count",
               absl::StrCat(n.parallel().failure_threshold()));
        }
        break;
      case v1::TreeNode::kParallelAll:
        Open(p, "ParallelAll", n);
        Attr(p, "max_failures",
             absl::StrCat(n.parallel_all().has_max_failures()
                              ? n.parallel_all().max_failures()
                              : NodeDefaults().max_failures));
        break;
      case v1::TreeNode::kRepeat:
        Open(p, "Repeat", n);
        Attr(p, "num_cycles",
             absl::StrCat(n.repeat().has_times() ? n.repeat().times()
                                                 : NodeDefaults().times));
        break;
      case v1::TreeNode::kRetry:
        Open(p, "RetryUntilSuccessful", n);
        Attr(p, "num_attempts",
             absl::StrCat(n.retry().has_attempts() ? n.retry().attempts()
                                                   : NodeDefaults().attempts));
        break;
      case v1::TreeNode::kTimeout:
      case v1::TreeNode::kDelay:
      case v1::TreeNode::kSleep:
        Timed(p, n);
        break;
      case v1::TreeNode::kCooldown:
        Open(p, kCooldown, n);
        Attr(p, "seconds", ShortestNumber(n.cooldown().seconds()));
        used_.insert(kCooldown);
        break;
      case v1::TreeNode::kLoop:
        Loop(p, n);
        break;
      case v1::TreeNode::kRunOnce:
        Open(p, "RunOnce", n);
        Attr(p, "then_skip", n.run_once().then_skip() ? "true" : "false");
        break;
      case v1::TreeNode::kSwitch:
        Switch(p, n);
        break;
      case v1::TreeNode::kSubtree: {
        Open(p, "SubTree", n);
        Attr(p, "ID", n.subtree().name());
        std::map<std::string, std::string> remap(n.subtree().remap().begin(),
                                                 n.subtree().remap().end());
        for (const auto& [port, to] : remap) {
          Attr(p, port.c_str(), PortValue(to));
        }
        p.CloseElement();
        return;
      }
      case v1::TreeNode::kUtility:
        Utility(p, n);
        return;
      case v1::TreeNode::kCondition:
        Condition(p, n);
        return;
      case v1::TreeNode::kScript:
      case v1::TreeNode::kScriptCondition:
      case v1::TreeNode::kAction:
        Leaf(p, n);
        return;
      default:
        Open(p, kind.empty() ? "Sequence" : kind, n);
        break;
    }
    Kids(p, n);
    p.CloseElement();
  }

  // An action, script or script_condition leaf.
  void Leaf(tinyxml2::XMLPrinter& p, const v1::TreeNode& n) {
    if (n.has_action()) {
      Open(p, n.action(), n);
      actions_.insert(n.action());
    } else {
      Open(p, n.has_script() ? "Script" : "ScriptCondition", n);
      Attr(p, "code", n.has_script() ? n.script() : n.script_condition());
    }
    p.CloseElement();
  }

  void Switch(tinyxml2::XMLPrinter& p, const v1::TreeNode& n) {
    const v1::SwitchNode& s = n.switch_();
    Open(p, absl::StrCat("Switch", s.cases_size()), n);
    Attr(p, "variable", absl::StrCat("{", s.factor(), "}"));
    for (int i = 0; i < s.cases_size(); ++i) {
      Attr(p, absl::StrCat("case_", i + 1).c_str(), ShortestNumber(s.cases(i)));
    }
  }

  // A loop as LoopDouble: utilityd's values are numbers (an int's and a
  // bool's too).
  void Loop(tinyxml2::XMLPrinter& p, const v1::TreeNode& n) {
    const v1::LoopNode& l = n.loop();
    Open(p, "LoopDouble", n);
    std::vector<std::string> values;
    for (double v : l.values()) values.push_back(ShortestNumber(v));
    Attr(p, "queue", absl::StrJoin(values, ";"));
    if (!l.variable().empty()) {
      Attr(p, "value", absl::StrCat("{", l.variable(), "}"));
    }
    if (l.if_empty() == v1::NODE_STATUS_FAILURE ||
        l.if_empty() == v1::NODE_STATUS_SKIPPED) {
      Attr(p, "if_empty", AnsweredStatusName(l.if_empty()));
    }
  }

  // BT.CPP's timed nodes, their times in milliseconds.
  void Timed(tinyxml2::XMLPrinter& p, const v1::TreeNode& n) {
    const bool timeout = n.has_timeout(), delay = n.has_delay();
    Open(p, timeout ? "Timeout" : delay ? "Delay" : "Sleep", n);
    const double seconds = timeout ? n.timeout().seconds()
                           : delay ? n.delay().seconds()
                                   : n.sleep().seconds();
    Attr(p, delay ? "delay_msec" : "msec",
         ShortestNumber(std::round(seconds * 1000)));
  }

  void Utility(tinyxml2::XMLPrinter& p, const v1::TreeNode& n) {
    used_.insert(kUtility);
    Open(p, kUtility, n);
    const v1::UtilityNode& u = n.utility();
    if (u.rescore() != v1::RESCORE_UNSPECIFIED) {
      Attr(p, "rescore",
           u.rescore() == v1::RESCORE_EVERY_TICK ? "every_tick" : "on_enter");
    }
    if (u.on_failure() != v1::ON_CHILD_FAILURE_UNSPECIFIED) {
      Attr(p, "on_failure",
           u.on_failure() == v1::ON_CHILD_FAILURE_NEXT_BEST ? "next_best"
                                                            : "fail");
    }
    for (const v1::TreeNode& c : u.children()) {
      const bool scored =
          c.considerations_size() > 0 || c.has_weight() || c.rank() != 0;
      if (!scored) {
        Node(p, c);
        continue;
      }
      used_.insert(kUtilityChoice);
      p.OpenElement(kUtilityChoice);
      if (!c.name().empty()) Attr(p, "name", c.name());
      v1::TreeNode scoring;
      *scoring.mutable_considerations() = c.considerations();
      if (c.has_weight()) scoring.set_weight(c.weight());
      scoring.set_rank(c.rank());
      Attr(p, "scoring", OneLineJson(scoring));
      v1::TreeNode bare = c;
      bare.clear_name();
      bare.clear_considerations();
      bare.clear_weight();
      bare.clear_rank();
      Node(p, bare);
      p.CloseElement();
    }
    p.CloseElement();
  }

  void Condition(tinyxml2::XMLPrinter& p, const v1::TreeNode& n) {
    const v1::ConditionNode& c = n.condition();
    if (const std::optional<FactorComparison> cmp = AsComparison(c)) {
      p.OpenElement("ScriptCondition");
      if (!n.name().empty()) Attr(p, "name", n.name());
      Guards(p, n);
      Attr(p, "code", engine::FactorComparisonText(*cmp));
      p.CloseElement();
      return;
    }
    const bool plain = !c.has_range() && !c.has_curve() && !c.has_threshold();
    const bool own_id = plain && !n.name().empty() && IsXmlName(n.name()) &&
                        !ChildrenKinds().count(n.name()) &&
                        !ChildKinds().count(n.name()) &&
                        !Unsupported().count(n.name());
    const std::string id = own_id ? n.name() : kFactorCondition;
    conditions_.insert(id);
    p.OpenElement(Keep(id));
    if (!own_id && !n.name().empty()) Attr(p, "name", n.name());
    Guards(p, n);
    Attr(p, "factor", absl::StrCat("{", c.factor(), "}"));
    if (c.has_threshold()) Attr(p, "threshold", ShortestNumber(c.threshold()));
    if (c.range().has_min())
      Attr(p, "range_min", ShortestNumber(c.range().min()));
    if (c.range().has_max())
      Attr(p, "range_max", ShortestNumber(c.range().max()));
    if (c.has_curve()) {
      Attr(p, "curve", OneLineJson(c.curve()));
    }
    p.CloseElement();
  }

  // A message as one line of JSON with the format's field names (ctl's
  // ToJson indents, which an attribute should not).
  static std::string OneLineJson(const google::protobuf::Message& m) {
    std::string json;
    google::protobuf::util::JsonPrintOptions o;
    o.preserve_proto_field_names = true;
    (void)google::protobuf::util::MessageToJsonString(m, &json, o);
    return json;
  }

  static bool IsXmlName(const std::string& s) {
    if (s.empty() || !absl::ascii_isalpha(s[0])) return false;
    return std::all_of(s.begin(), s.end(), [](char ch) {
      return absl::ascii_isalnum(ch) || ch == '_' || ch == '-';
    });
  }

  static void Port(tinyxml2::XMLPrinter& p, const char* name,
                   const char* description) {
    p.OpenElement("input_port");
    p.PushAttribute("name", name);
    p.PushText(description);
    p.CloseElement();
  }

  void Model(tinyxml2::XMLPrinter& p) {
    p.OpenElement("TreeNodesModel");
    for (const std::string& a : actions_) {
      p.OpenElement("Action");
      Attr(p, "ID", a);
      p.CloseElement();
    }
    for (const std::string& c : conditions_) {
      p.OpenElement("Condition");
      Attr(p, "ID", c);
      Port(p, "factor", "the utilityd factor it reads");
      if (c == kFactorCondition) {
        Port(p, "threshold", "holds when the curve's output reaches it");
        Port(p, "range_min", "bookend");
        Port(p, "range_max", "bookend");
        Port(p, "curve", "the response curve, as JSON");
      }
      p.CloseElement();
    }
    if (used_.count(kUtility)) {
      p.OpenElement("Control");
      Attr(p, "ID", kUtility);
      Port(p, "rescore", "on_enter or every_tick");
      Port(p, "on_failure", "fail or next_best");
      p.CloseElement();
    }
    if (used_.count(kUtilityChoice)) {
      p.OpenElement("Decorator");
      Attr(p, "ID", kUtilityChoice);
      Port(p, "scoring", "considerations, weight and rank, as JSON");
      p.CloseElement();
    }
    if (used_.count(kCooldown)) {
      p.OpenElement("Decorator");
      Attr(p, "ID", kCooldown);
      Port(p, "seconds", "game seconds the child rests after it finishes");
      p.CloseElement();
    }
    p.CloseElement();
  }

  // A subtree port as BT.CPP writes it: a literal (a number, a boolean, an
  // enum's name) as it is, a factor as a blackboard entry.
  std::string PortValue(const std::string& to) const {
    absl::string_view v = to;
    if (absl::ConsumePrefix(&v, "(")) absl::ConsumeSuffix(&v, ")");
    double number = 0;
    if (absl::SimpleAtod(v, &number) || v == "true" || v == "false" ||
        set_.enums().contains(to)) {
      return std::string(v);
    }
    return absl::StrCat("{", to, "}");
  }

  const v1::BehaviourSet& set_;
  std::set<std::string> actions_;
  std::set<std::string> conditions_;
  std::set<std::string> used_;
  std::set<std::string> names_;
};

}  // namespace

absl::StatusOr<std::string> ExportBt(const v1::BehaviourSet& set) {
  if (!set.has_tree()) {
    return absl::InvalidArgumentError(
        absl::StrCat("set \"", set.name(), "\" has no tree to export"));
  }
  for (const v1::Subtree& s : set.subtrees()) {
    if (s.name() == set.name()) {
      return absl::InvalidArgumentError(
          absl::StrCat("subtree \"", s.name(),
                       "\" has the set's name, which the export "
                       "gives the main tree: rename one"));
    }
  }
  return Exporter(set).Run();
}

}  // namespace utilityd::ctl
