// BehaviorTree.CPP v4 XML -> a behaviour set's tree (docs/TREES.md,
// "BehaviorTree.CPP XML"): BT.CPP's built-in controls and decorators map
// to utilityd's node kinds, other leaves to actions (the game runs them)
// or to conditions on factors, as a mapping file says; what has no
// counterpart is refused with its element and line.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "ctl/bt_declare.h"
#include "ctl/bt_include.h"
#include "ctl/bt_mapping.h"
#include "ctl/bt_names.h"
#include "ctl/bt_xml.h"
#include "google/protobuf/util/json_util.h"
#include "tinyxml2.h"
#include "utilityd/base/shortest_number.h"
#include "utilityd/engine/definition.h"
#include "utilityd/loader/proto_writer.h"
#include "utilityd/loader/subtrees.h"

namespace utilityd::ctl {
namespace {

using engine::FactorComparison;
using tinyxml2::XMLElement;

class Importer {
 public:
  Importer(const BtImportOptions& opts, Mapping mapping, BtImport* out)
      : opts_(opts), map_(std::move(mapping)), out_(out) {}

  absl::Status Run(const tinyxml2::XMLDocument& doc) {
    const XMLElement* root = doc.RootElement();
    if (root == nullptr || std::string(root->Name()) != "root") {
      return Error(root, "the document's element must be <root>");
    }
    const char* format = root->Attribute("BTCPP_format");
    if (format != nullptr && std::string(format) != "4") {
      return Error(root, absl::StrCat("BTCPP_format=\"", format,
                                      "\": only format 4 is read (Groot2 "
                                      "converts format 3 files)"));
    }
    std::vector<const XMLElement*> trees;
    ReadRoot(root, &trees);
    if (trees.empty()) return Error(root, "no <BehaviorTree> to import");
    std::vector<std::string> ids;
    for (const XMLElement* t : trees) {
      const char* id = t->Attribute("ID");
      ids.push_back(id != nullptr       ? TreeId(t, id)
                    : trees.size() == 1 ? "MainTree"
                                        : "");
      if (ids.back().empty()) {
        return Error(t, "a <BehaviorTree> needs an ID when there are several");
      }
      if (std::count(ids.begin(), ids.end(), ids.back()) > 1) {
        return Error(
            t, absl::StrCat("a second <BehaviorTree ID=\"", ids.back(), "\">"));
      }
    }
    const char* declared = root->Attribute("main_tree_to_execute");
    std::string main = !opts_.main.empty()   ? AsIdentifier(opts_.main)
                       : declared != nullptr ? AsIdentifier(declared)
                       : ids.size() == 1     ? ids[0]
                                             : "";
    if (main.empty()) {
      // BT.CPP's createTree names it; here the one tree no other tree
      // uses as a <SubTree> is the one a set is made of.
      const std::vector<std::string> tops = TopTrees(trees, ids);
      if (tops.size() != 1) {
        return Error(
            root,
            absl::StrCat("several trees and no main_tree_to_execute: name one "
                         "with --main (",
                         tops.empty() ? "each is another's subtree: "
                                      : "used by no other tree: ",
                         absl::StrJoin(tops.empty() ? ids : tops, ", "), ")"));
      }
      main = tops[0];
      Mapped(root, absl::StrCat("no main_tree_to_execute: the main tree is ",
                                main, ", the only one no other tree uses"));
    }
    if (std::find(ids.begin(), ids.end(), main) == ids.end()) {
      return Error(root, absl::StrCat("no tree \"", main, "\" (",
                                      absl::StrJoin(ids, ", "), ")"));
    }
    out_->main = main;
    v1::BehaviourSet& set = out_->set;
    if (opts_.into != nullptr) {
      set = *opts_.into;  // all but its tree, which the XML replaces
      set.clear_tree();
      set.clear_subtrees();
    }
    if (!opts_.set.empty() || set.name().empty()) {
      set.set_name(opts_.set.empty() ? main : opts_.set);
    }
    for (size_t i = 0; i < trees.size(); ++i) {
      const XMLElement* only = trees[i]->FirstChildElement();
      if (only == nullptr || only->NextSiblingElement() != nullptr) {
        Unmapped(trees[i], "a <BehaviorTree> holds exactly one node");
        continue;
      }
      const char* description = trees[i]->Attribute("_description");
      if (ids[i] == main) {
        Convert(only, set.mutable_tree());
        if (description != nullptr) set.set_description(description);
        continue;
      }
      v1::Subtree* s = set.add_subtrees();
      s->set_name(ids[i]);
      if (description != nullptr) s->set_description(description);
      Convert(only, s->mutable_tree());
    }
    for (const XMLElement* use : uses_) {
      const std::string id = AsIdentifier(use->Attribute("ID"));
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) {
        Unmapped(use, absl::StrCat("<SubTree ID=\"", id,
                                   "\">: no <BehaviorTree> has that ID (",
                                   absl::StrJoin(ids, ", "), ")"));
      }
    }
    DeclareImported(map_, literal_ports_, actions_, &out_->set);
    if (set.has_tree()) Position(set.tree(), "tree");
    for (int i = 0; i < set.subtrees_size(); ++i) {
      Position(set.subtrees(i).tree(), absl::StrCat("subtrees[", i, "].tree"));
    }
    return absl::OkStatus();
  }

 private:
  // The file an element was read from: "" for the file imported, else an
  // included one's path.
  std::string FileOf(const XMLElement* e) const { return includes_.FileOf(e); }
  absl::Status Error(const XMLElement* e, const std::string& what) const {
    const std::string file = FileOf(e);
    return absl::InvalidArgumentError(
        absl::StrCat(file.empty() ? opts_.source : file, ":",
                     e != nullptr ? e->GetLineNum() : 1, ": ", what));
  }
  void Unmapped(const XMLElement* e, std::string why) {
    out_->unmapped.push_back(
        {e != nullptr ? e->GetLineNum() : 0, std::move(why), FileOf(e)});
  }
  void Mapped(const XMLElement* e, std::string what) {
    out_->mapped.push_back({e->GetLineNum(), std::move(what), FileOf(e)});
  }
  void Dropped(const XMLElement* e, std::string what) {
    out_->dropped.push_back({e->GetLineNum(), std::move(what), FileOf(e)});
  }

  // A tree's ID as utilityd names trees (AsIdentifier), with a note when
  // it had to change.
  std::string TreeId(const XMLElement* e, const char* raw) {
    const std::string id = AsIdentifier(raw);
    if (std::string_view(raw).find_first_of(" .") != std::string_view::npos) {
      // BehaviorTree.CPP refuses these too: not a name to carry over.
      Unmapped(e, absl::StrCat("tree ID \"", raw,
                               "\": spaces and periods are not allowed in "
                               "tree IDs (BehaviorTree.CPP refuses them too)"));
    } else if (id != raw) {
      Mapped(e, absl::StrCat("tree ID \"", raw, "\" -> ", id,
                             " (utilityd names are letters, digits, '_' "
                             "and '-')"));
    }
    return id;
  }
  // A node's name likewise.
  std::string NodeName(const XMLElement* e, const char* raw) {
    const std::string name = AsIdentifier(raw);
    if (name != raw) {
      Mapped(e, absl::StrCat("name \"", raw, "\" -> ", name,
                             " (utilityd names are letters, digits, '_' "
                             "and '-')"));
    }
    return name;
  }

  // The trees and node models of a <root>, and of the files it includes
  // (BT.CPP's <include path="...">, relative to the including file).
  void ReadRoot(const XMLElement* root, std::vector<const XMLElement*>* trees) {
    std::vector<const XMLElement*> top;
    const BtIncludes::Problem problem = [this](const XMLElement* e,
                                               std::string why) {
      Unmapped(e, std::move(why));
    };
    includes_.Expand(root, opts_.source, &top, problem);
    for (const std::string& file : opts_.also) {
      includes_.Register(file, &top, problem);
    }
    for (const XMLElement* e : top) {
      const std::string tag = e->Name();
      if (tag == "BehaviorTree") {
        trees->push_back(e);
      } else if (tag == "TreeNodesModel") {
        ReadModel(e);
      } else {
        Unmapped(e, absl::StrCat("<", tag, "> is not part of format 4"));
      }
    }
  }

  // <TreeNodesModel>: the category of each custom node, and its ports'
  // defaults.
  void ReadModel(const XMLElement* model) {
    for (const XMLElement* e = model->FirstChildElement(); e != nullptr;
         e = e->NextSiblingElement()) {
      const char* id = e->Attribute("ID");
      if (id == nullptr) continue;
      category_[id] = e->Name();
      for (const XMLElement* p = e->FirstChildElement(); p != nullptr;
           p = p->NextSiblingElement()) {
        const char* name = p->Attribute("name");
        const char* def = p->Attribute("default");
        if (name != nullptr && def != nullptr) defaults_[id][name] = def;
      }
    }
  }

  // The node's ports: its attributes but `ID`, `name` and those starting
  // with `_` (BT.CPP's own), then the model's defaults for the rest.
  std::map<std::string, std::string> Ports(const XMLElement* e,
                                           const std::string& id) const {
    std::map<std::string, std::string> ports;
    for (const tinyxml2::XMLAttribute* a = e->FirstAttribute(); a != nullptr;
         a = a->Next()) {
      const std::string n = a->Name();
      if (n == "ID" || n == "name" || absl::StartsWith(n, "_")) continue;
      ports[n] = a->Value();
    }
    auto it = defaults_.find(id);
    if (it != defaults_.end()) {
      for (const auto& [n, v] : it->second) ports.emplace(n, v);
    }
    return ports;
  }

  static std::string Get(const std::map<std::string, std::string>& ports,
                         const std::string& name) {
    auto it = ports.find(name);
    return it == ports.end() ? "" : it->second;
  }

  bool Int(const XMLElement* e, const std::map<std::string, std::string>& p,
           const std::string& port, int def, int* v) {
    const std::string s = Get(p, port);
    if (s.empty()) {
      *v = def;
      return true;
    }
    if (!absl::SimpleAtoi(s, v)) {
      Unmapped(e, absl::StrCat(port, "=\"", s,
                               "\" is not a number (a "
                               "blackboard entry cannot set it)"));
      return false;
    }
    return true;
  }

  // The BT.CPP nodes with a converter of their own, by ID.
  using Converter =
      void (Importer::*)(const XMLElement*, const std::string&,
                         const std::map<std::string, std::string>&,
                         const std::vector<const XMLElement*>&, v1::TreeNode*);
  static const std::map<std::string, Converter>& Converters() {
    static const auto* m = new std::map<std::string, Converter>{
        {"Script", &Importer::Script},
        {"SetBlackboard", &Importer::Script},
        {"Precondition", &Importer::Precondition},
        {"LoopInt", &Importer::Loop},
        {"LoopDouble", &Importer::Loop},
        {"LoopBool", &Importer::Loop},
    };
    return *m;
  }

  // Records the XML line of node `n` at field path `at`, and of the nodes
  // under it, when they come from the file imported.
  void Position(const v1::TreeNode& n, const std::string& at) {
    if (auto it = origin_.find(&n);
        it != origin_.end() && FileOf(it->second).empty()) {
      out_->positions[at] = {.line = it->second->GetLineNum()};
    }
    const std::vector<const v1::TreeNode*> kids = loader::ChildrenOf(n);
    for (size_t i = 0; i < kids.size(); ++i) {
      Position(*kids[i], loader::ChildFieldPath(at, n, i));
    }
  }

  // Converts `e` into `out`; then reads every child element the conversion
  // did not (those of a refused element), so that each element with no
  // counterpart is listed, however deep it lies.
  void Convert(const XMLElement* e, v1::TreeNode* out) {
    origin_.try_emplace(out, e);  // a Precondition keeps its own line
    visited_.insert(e);
    ConvertNode(e, out);
    ReadUnvisited(e);
  }

  void ReadUnvisited(const XMLElement* e) {
    for (const XMLElement* c = e->FirstChildElement(); c != nullptr;
         c = c->NextSiblingElement()) {
      if (visited_.contains(c)) continue;
      v1::TreeNode ignored;
      Convert(c, &ignored);
    }
  }

  void ConvertNode(const XMLElement* e, v1::TreeNode* out) {
    std::string tag = e->Name();
    std::string id = tag;
    if ((tag == "Action" || tag == "Condition" || tag == "Control" ||
         tag == "Decorator") &&
        e->Attribute("ID") != nullptr) {
      id = e->Attribute("ID");
      category_.emplace(id, tag);
    }
    if (const char* name = e->Attribute("name");
        name != nullptr && name != id) {
      out->set_name(NodeName(e, name));
    }
    Preconditions(e, out);
    std::vector<const XMLElement*> kids;
    for (const XMLElement* c = e->FirstChildElement(); c != nullptr;
         c = c->NextSiblingElement()) {
      kids.push_back(c);
    }
    const std::map<std::string, std::string> ports = Ports(e, id);
    if (auto u = Unsupported().find(id); u != Unsupported().end()) {
      Unmapped(e, absl::StrCat("<", id, ">: ", u->second));
      return;
    }
    if (auto c = Converters().find(id); c != Converters().end()) {
      (this->*c->second)(e, id, ports, kids, out);
      return;
    }
    if (id == "TryCatch" &&
        absl::AsciiStrToLower(Get(ports, "catch_on_halt")) == "true") {
      Unmapped(e,
               "TryCatch catch_on_halt=\"true\": a catch started and halted "
               "within the halt would run nothing the game could see");
      return;
    }
    if (auto k = ChildrenKinds().find(id); k != ChildrenKinds().end()) {
      Children(e, kids, Field(out, k->second), "children");
      return;
    }
    if (auto k = ChildKinds().find(id); k != ChildKinds().end()) {
      OneChild(e, kids, Field(out, k->second));
      return;
    }
    if (auto k = LeafKinds().find(id); k != LeafKinds().end()) {
      Field(out, k->second);
      NoChildren(e, kids);
      return;
    }
    if (Parametrised(e, id, ports, kids, out)) return;
    if (absl::StartsWith(id, "Switch") && id.size() == 7 && id[6] >= '2' &&
        id[6] <= '9') {
      Switch(e, id, ports, kids, out);
      return;
    }
    if (id == "SubTree") {
      SubTree(e, kids, out);
      return;
    }
    if (id == kUtility) {
      Utility(e, ports, kids, out);
      return;
    }
    if (id == kCooldown) {
      double s = 0;
      if (!absl::SimpleAtod(Get(ports, "seconds"), &s)) {
        Unmapped(e, "Cooldown needs seconds, a number");
        return;
      }
      out->mutable_cooldown()->set_seconds(s);
      OneChild(e, kids, out->mutable_cooldown());
      return;
    }
    const std::string category =
        category_.count(id) ? category_.at(id) : std::string();
    if (id == "ScriptCondition" || id == kFactorCondition ||
        category == "Condition" || map_.conditions.count(id) ||
        (e->Attribute("name") && map_.conditions.count(e->Attribute("name")))) {
      if (!kids.empty()) {
        Unmapped(e, "a condition has no children");
        return;
      }
      Condition(e, id, ports, out);
      return;
    }
    if (category == "Control" || category == "Decorator" || !kids.empty()) {
      Unmapped(e,
               absl::StrCat("<", id, "> is a custom ",
                            category.empty() ? "node with children"
                                             : absl::AsciiStrToLower(category),
                            ": utilityd runs only its own node kinds"));
      return;
    }
    Action(e, id, ports, out);
  }

  // BT.CPP's pre- and postconditions as the node's scripts, as written
  // (a script that does not scan is listed, with where and why).
  void Preconditions(const XMLElement* e, v1::TreeNode* out) {
    for (const tinyxml2::XMLAttribute* a = e->FirstAttribute(); a != nullptr;
         a = a->Next()) {
      const std::string name = a->Name();
      for (const ScriptAttr& s : ScriptAttrs()) {
        if (name == s.attr && ScriptOk(e, name, a->Value(), s.use)) {
          (out->*s.mutable_field)()->assign(
              std::string(absl::StripAsciiWhitespace(a->Value())));
        }
      }
    }
  }

  // BT.CPP's <Precondition if="C" else="S"> ticks its child only while C
  // holds as the child starts; otherwise it answers S. That is the child's
  // own precondition `!(C)` answering S: failure_if, success_if or skip_if.
  // BT.CPP checks it before the child's own preconditions; utilityd checks
  // failure_if, then success_if, then skip_if, so a child with one checked
  // before S's is refused (the two orders would differ).
  void Precondition(const XMLElement* e, const std::string&,
                    const std::map<std::string, std::string>& ports,
                    const std::vector<const XMLElement*>& kids,
                    v1::TreeNode* out) {
    for (const ScriptAttr& a : ScriptAttrs()) {
      if (!(out->*a.field)().empty()) {
        Unmapped(e, absl::StrCat("a <Precondition> with ", a.attr,
                                 " of its own: write it on the child"));
        return;
      }
    }
    const std::string cond(absl::StripAsciiWhitespace(Get(ports, "if")));
    std::string otherwise = Get(ports, "else");
    if (otherwise.empty()) otherwise = "FAILURE";
    const auto& attrs = ScriptAttrs();
    // failure_if, success_if or skip_if: the first three of ScriptAttrs.
    const std::optional<v1::NodeStatus> answer = AnsweredStatus(otherwise);
    const int at = !answer                              ? -1
                   : *answer == v1::NODE_STATUS_FAILURE ? 0
                   : *answer == v1::NODE_STATUS_SUCCESS ? 1
                                                        : 2;
    if (at < 0) {
      Unmapped(e, absl::StrCat("Precondition else=\"", otherwise,
                               "\": utilityd answers FAILURE, SUCCESS or "
                               "SKIPPED in place of a node"));
      return;
    }
    if (cond.empty()) {
      Unmapped(e, "Precondition needs if, a script");
      return;
    }
    if (kids.size() != 1) {
      Unmapped(
          e, absl::StrCat("<Precondition> needs one child, has ", kids.size()));
      return;
    }
    if (!ScriptOk(e, "if", cond, engine::ScriptUse::kCondition)) return;
    out->clear_name();  // the child's node takes the Precondition's place
    Convert(kids[0], out);
    for (int i = 0; i < at; ++i) {
      if (!(out->*attrs[i].field)().empty()) {
        Unmapped(e, absl::StrCat("Precondition else=\"", otherwise,
                                 "\" over a child with ", attrs[i].attr,
                                 ", which utilityd would check first"));
        return;
      }
    }
    std::string* field = (out->*attrs[at].mutable_field)();
    *field = field->empty() ? absl::StrCat("!(", cond, ")")
                            : absl::StrCat("!(", cond, ") || (", *field, ")");
    Mapped(e, absl::StrCat("<Precondition> as its child's ", attrs[at].attr,
                           "=\"", *field, "\""));
  }

  // LoopInt, LoopDouble and LoopBool over a queue written in the XML
  // ("1;2;3") as a `loop`; its `value` output "{key}" is the variable.
  void Loop(const XMLElement* e, const std::string& id,
            const std::map<std::string, std::string>& ports,
            const std::vector<const XMLElement*>& kids, v1::TreeNode* out) {
    const std::string queue = Get(ports, "queue");
    if (BlackboardKey(queue)) {
      Unmapped(e, absl::StrCat("<", id, " queue=\"", queue,
                               "\">: a queue on the blackboard, which the "
                               "game would fill; factors are numbers, not "
                               "lists. Write the values in the tree"));
      return;
    }
    v1::LoopNode* loop = out->mutable_loop();
    std::vector<double> values;
    if (std::optional<std::string> bad = LoopValues(id, queue, &values)) {
      Unmapped(e, absl::StrCat(id, " queue=\"", queue, "\": ", *bad));
      return;
    }
    loop->mutable_values()->Add(values.begin(), values.end());
    if (std::optional<std::string> key = BlackboardKey(Get(ports, "value"))) {
      loop->set_variable(AsIdentifier(*key));
    }
    const std::string empty = Get(ports, "if_empty");
    const std::optional<v1::NodeStatus> answer =
        AnsweredStatus(empty.empty() ? "SUCCESS" : empty);
    if (!answer) {
      Unmapped(e, absl::StrCat(id, " if_empty=\"", empty,
                               "\": SUCCESS, FAILURE or SKIPPED"));
      return;
    }
    if (*answer != v1::NODE_STATUS_SUCCESS) loop->set_if_empty(*answer);
    OneChild(e, kids, loop);
  }

  // Script and SetBlackboard as a `script` leaf.
  void Script(const XMLElement* e, const std::string& id,
              const std::map<std::string, std::string>& ports,
              const std::vector<const XMLElement*>& kids, v1::TreeNode* out) {
    if (!kids.empty()) {
      Unmapped(e, absl::StrCat("<", id, "> has no children"));
      return;
    }
    const std::string code =
        id == "Script" ? Get(ports, "code") : Assignment(e, ports);
    if (!code.empty() && ScriptOk(e, id == "Script" ? "code" : id, code,
                                  engine::ScriptUse::kStatements)) {
      out->set_script(std::string(absl::StripAsciiWhitespace(code)));
    }
  }

  // SetBlackboard as a script: `key := value`, the value a number, true,
  // false or "{entry}"; "" (listed) for anything else.
  std::string Assignment(const XMLElement* e,
                         const std::map<std::string, std::string>& ports) {
    std::string key = Get(ports, "output_key");
    if (std::optional<std::string> k = BlackboardKey(key)) key = *k;
    const std::string value(absl::StripAsciiWhitespace(Get(ports, "value")));
    std::string rhs = value;
    double number = 0;
    if (std::optional<std::string> entry = BlackboardKey(value)) {
      rhs = *entry;
    } else if (value != "true" && value != "false" &&
               !absl::SimpleAtod(value, &number)) {
      Unmapped(e, absl::StrCat("SetBlackboard value=\"", value,
                               "\": a tree's variables hold numbers and "
                               "booleans, not strings"));
      return "";
    }
    if (key.empty()) {
      Unmapped(e, "SetBlackboard needs output_key");
      return "";
    }
    return absl::StrCat(key, " := ", rhs);
  }

  // Whether `code` (attribute `attr` of `e`) scans as a script; if not, it
  // is listed with the script's line:column.
  bool ScriptOk(const XMLElement* e, const std::string& attr,
                const std::string& code, engine::ScriptUse use) {
    const absl::Status s = engine::ScanScript(code, use, nullptr);
    if (s.ok()) return true;
    Unmapped(e, absl::StrCat(attr, "=\"", code, "\" at ", s.message()));
    return false;
  }

  // The built-ins with numeric parameters (Parallel, Repeat,
  // RetryUntilSuccessful, Timeout, Delay, Sleep, RunOnce, ParallelAll);
  // false for another id.
  bool Parametrised(const XMLElement* e, const std::string& id,
                    const std::map<std::string, std::string>& ports,
                    const std::vector<const XMLElement*>& kids,
                    v1::TreeNode* out) {
    if (id == "Parallel") {
      int ok = kBtSuccessCount, bad = kBtFailureCount;
      if (!Int(e, ports, "success_count", kBtSuccessCount, &ok) ||
          !Int(e, ports, "failure_count", kBtFailureCount, &bad)) {
        return true;
      }
      v1::ParallelNode* p = out->mutable_parallel();
      if (ok != NodeDefaults().success_threshold) {
        p->set_success_threshold(ok);
      }
      if (bad != NodeDefaults().failure_threshold) {
        p->set_failure_threshold(bad);
      }
      Children(e, kids, p, "children");
      return true;
    }
    if (id == "ParallelAll") {
      int most = 1;
      if (!Int(e, ports, "max_failures", 1, &most)) return true;
      if (most != NodeDefaults().max_failures) {
        out->mutable_parallel_all()->set_max_failures(most);
      }
      Children(e, kids, out->mutable_parallel_all(), "children");
      return true;
    }
    if (id == "Repeat" || id == "RetryUntilSuccessful") {
      const bool repeat = id == "Repeat";
      int n = 1;
      if (!Int(e, ports, repeat ? "num_cycles" : "num_attempts", 1, &n)) {
        return true;
      }
      if (n < 0) {
        Unmapped(e, absl::StrCat(id, " for ever (", n,
                                 "): utilityd refuses "
                                 "endless loops; give a count"));
        return true;
      }
      if (repeat) {
        out->mutable_repeat()->set_times(n);
        OneChild(e, kids, out->mutable_repeat());
      } else {
        out->mutable_retry()->set_attempts(n);
        OneChild(e, kids, out->mutable_retry());
      }
      return true;
    }
    if (id == "Timeout" || id == "Delay") {
      const bool timeout = id == "Timeout";
      int ms = 0;
      if (!Int(e, ports, timeout ? "msec" : "delay_msec", 0, &ms)) return true;
      if (ms <= 0) {
        Unmapped(e, absl::StrCat(id, " of ", ms,
                                 " ms: utilityd's needs a "
                                 "time above 0"));
        return true;
      }
      v1::TimedNode* t =
          timeout ? out->mutable_timeout() : out->mutable_delay();
      t->set_seconds(ms / 1000.0);
      OneChild(e, kids, t);
      return true;
    }
    if (id == "Sleep") {
      int ms = 0;
      if (!Int(e, ports, "msec", -1, &ms)) return true;
      if (ms < 0) {
        Unmapped(e, "Sleep needs msec, 0 or more");
      } else if (ms == 0) {
        out->mutable_always_success();  // BT.CPP's Sleep of 0 succeeds at once
        Mapped(e, "Sleep of 0 ms -> always_success");
      } else {
        out->mutable_sleep()->set_seconds(ms / 1000.0);
      }
      NoChildren(e, kids);
      return true;
    }
    if (id == "RunOnce") {
      // BT.CPP's default is then_skip true; utilityd's, false.
      const std::string skip = absl::AsciiStrToLower(Get(ports, "then_skip"));
      if (!skip.empty() && skip != "true" && skip != "false") {
        Unmapped(e, absl::StrCat("then_skip=\"", skip, "\": true or false"));
        return true;
      }
      if (skip != "false") out->mutable_run_once()->set_then_skip(true);
      OneChild(e, kids, out->mutable_run_once());
      return true;
    }
    return false;
  }

  // The kind's message of `out` named `field` (a TreeNode oneof member).
  static google::protobuf::Message* Field(v1::TreeNode* out,
                                          const std::string& field) {
    const auto* f = v1::TreeNode::descriptor()->FindFieldByName(field);
    return out->GetReflection()->MutableMessage(out, f);
  }

  void Children(const XMLElement* e, const std::vector<const XMLElement*>& kids,
                google::protobuf::Message* m, const char* field) {
    if (kids.empty()) {
      Unmapped(e, absl::StrCat("<", e->Name(), "> has no children"));
      return;
    }
    const auto* f = m->GetDescriptor()->FindFieldByName(field);
    for (const XMLElement* k : kids) {
      Convert(k,
              static_cast<v1::TreeNode*>(m->GetReflection()->AddMessage(m, f)));
    }
  }

  void NoChildren(const XMLElement* e,
                  const std::vector<const XMLElement*>& kids) {
    if (kids.empty()) return;
    Unmapped(e, absl::StrCat("<", e->Name(), "> is a leaf, has ", kids.size(),
                             kids.size() == 1 ? " child" : " children"));
  }

  void OneChild(const XMLElement* e, const std::vector<const XMLElement*>& kids,
                google::protobuf::Message* m) {
    if (kids.size() != 1) {
      Unmapped(e, absl::StrCat("<", e->Name(), "> needs one child, has ",
                               kids.size()));
      return;
    }
    const auto* f = m->GetDescriptor()->FindFieldByName("child");
    Convert(kids[0], static_cast<v1::TreeNode*>(
                         m->GetReflection()->MutableMessage(m, f)));
  }

  void Switch(const XMLElement* e, const std::string& id,
              const std::map<std::string, std::string>& ports,
              const std::vector<const XMLElement*>& kids, v1::TreeNode* out) {
    const int n = id[6] - '0';
    const std::optional<std::string> key =
        BlackboardKey(Get(ports, "variable"));
    if (!key) {
      Unmapped(e,
               "variable must name a blackboard entry, \"{key}\": it "
               "becomes the factor switched on");
      return;
    }
    v1::SwitchNode* s = out->mutable_switch_();
    s->set_factor(*key);
    for (int i = 1; i <= n; ++i) {
      double v = 0;
      const std::string c = Get(ports, absl::StrCat("case_", i));
      if (!absl::SimpleAtod(c, &v)) {
        Unmapped(e, absl::StrCat("case_", i, "=\"", c,
                                 "\": utilityd "
                                 "switches on numbers (a factor's value)"));
        return;
      }
      s->add_cases(v);
    }
    if (static_cast<int>(kids.size()) != n + 1) {
      Unmapped(e, absl::StrCat(id, " needs ", n + 1, " children, has ",
                               kids.size()));
      return;
    }
    Children(e, kids, s, "children");
    Mapped(e, absl::StrCat(id, " on {", *key, "} -> switch on factor ", *key));
  }

  void SubTree(const XMLElement* e, const std::vector<const XMLElement*>& kids,
               v1::TreeNode* out) {
    const char* id = e->Attribute("ID");
    if (id == nullptr || !kids.empty()) {
      Unmapped(e, "a <SubTree> names its tree with ID and has no children");
      return;
    }
    v1::SubtreeNode* s = out->mutable_subtree();
    s->set_name(AsIdentifier(id));
    uses_.push_back(e);
    for (const auto& [port, value] : Ports(e, "")) {
      const std::optional<std::string> key = BlackboardKey(value);
      if (key) {  // "{=}": the entry of the port's own name
        if (*key != port && *key != "=") (*s->mutable_remap())[port] = *key;
        continue;
      }
      // A literal: a number, a boolean or an enum's name, which the
      // subtree's scripts read as that value.
      const std::optional<std::string> literal = Literal(value);
      if (!literal) {
        Unmapped(e, absl::StrCat(port, "=\"", value,
                                 "\": a literal port holds a number, true, "
                                 "false or an enum's name"));
        continue;
      }
      (*s->mutable_remap())[port] = *literal;
      literal_ports_.insert(port);
      Mapped(e, absl::StrCat(port, "=\"", value,
                             "\" -> the subtree's scripts "
                             "read ",
                             port, " as ", *literal));
    }
  }

  void Utility(const XMLElement* e, const std::map<std::string, std::string>& p,
               const std::vector<const XMLElement*>& kids, v1::TreeNode* out) {
    v1::UtilityNode* u = out->mutable_utility();
    const std::string rescore = Get(p, "rescore");
    const std::string fail = Get(p, "on_failure");
    if (rescore == "every_tick") u->set_rescore(v1::RESCORE_EVERY_TICK);
    if (rescore == "on_enter") u->set_rescore(v1::RESCORE_ON_ENTER);
    if (fail == "next_best") u->set_on_failure(v1::ON_CHILD_FAILURE_NEXT_BEST);
    if (fail == "fail") u->set_on_failure(v1::ON_CHILD_FAILURE_FAIL);
    if (kids.empty()) {
      Unmapped(e, "<Utility> has no children");
      return;
    }
    for (const XMLElement* k : kids) {
      v1::TreeNode* child = u->add_children();
      if (std::string(k->Name()) != kUtilityChoice) {
        Convert(k, child);
        continue;
      }
      // The scoring of a child that is not an action leaf.
      visited_.insert(k);
      const XMLElement* inner = k->FirstChildElement();
      if (inner == nullptr || inner->NextSiblingElement() != nullptr) {
        Unmapped(k, "<UtilityChoice> wraps one child");
        ReadUnvisited(k);
        continue;
      }
      Convert(inner, child);
      v1::TreeNode scoring;
      if (const char* json = k->Attribute("scoring")) {
        google::protobuf::util::JsonParseOptions o;
        if (!google::protobuf::util::JsonStringToMessage(json, &scoring, o)
                 .ok()) {
          Unmapped(k, "scoring is not the JSON utilityctl export-bt writes");
          continue;
        }
      }
      if (const char* name = k->Attribute("name")) {
        child->set_name(NodeName(k, name));
      }
      *child->mutable_considerations() = scoring.considerations();
      if (scoring.has_weight()) child->set_weight(scoring.weight());
      child->set_rank(scoring.rank());
    }
  }

  void Condition(const XMLElement* e, const std::string& id,
                 const std::map<std::string, std::string>& ports,
                 v1::TreeNode* out) {
    v1::ConditionNode* c = out->mutable_condition();
    const char* name = e->Attribute("name");
    std::string mapped;
    if (name != nullptr && map_.conditions.count(name)) {
      mapped = map_.conditions.at(name);
    } else if (map_.conditions.count(id)) {
      mapped = map_.conditions.at(id);
    } else if (id == "ScriptCondition") {
      mapped = Get(ports, "code");
    }
    if (!mapped.empty() || id == "ScriptCondition") {
      if (const std::optional<FactorComparison> cmp =
              engine::ParseFactorComparison(mapped)) {
        SetComparison(*cmp, c);
        Mapped(e, absl::StrCat(id, " -> holds when ",
                               engine::FactorComparisonText(*cmp)));
        return;
      }
      if (id == "ScriptCondition" || absl::StrContains(mapped, ' ')) {
        // Any other expression: a script_condition over factors and the
        // tree's variables.
        out->clear_condition();
        if (ScriptOk(e, id == "ScriptCondition" ? "code" : id, mapped,
                     engine::ScriptUse::kCondition)) {
          out->set_script_condition(
              std::string(absl::StripAsciiWhitespace(mapped)));
          Mapped(e, absl::StrCat(id, " -> script_condition \"",
                                 absl::StripAsciiWhitespace(mapped), "\""));
        }
        return;
      }
      Boolean(e, id, mapped, c, out);
      return;
    }
    if (id == kFactorCondition) {
      Factor(e, ports, c);
      return;
    }
    // A port that reads one blackboard entry names the factor; else the
    // node's ID does.
    std::vector<std::string> keys;
    for (const auto& [port, value] : ports) {
      if (BlackboardKey(value)) keys.push_back(*BlackboardKey(value));
    }
    if (keys.size() == 1 && ports.size() == 1) {
      Boolean(e, id, keys[0], c, out);
      return;
    }
    for (const auto& [port, value] : ports) {
      Dropped(e, absl::StrCat(id, " port ", port, "=\"", value,
                              "\": a condition reads one factor"));
    }
    Boolean(e, id, id, c, out);
  }

  void Boolean(const XMLElement* e, const std::string& id,
               const std::string& factor, v1::ConditionNode* c,
               v1::TreeNode* out) {
    c->set_factor(factor);
    if (out->name().empty()) out->set_name(id);
    Mapped(e, absl::StrCat(id, " -> holds when factor ", factor, " >= 0.5"));
  }

  // utilityd's FactorCondition, as ExportBt writes it.
  void Factor(const XMLElement* e,
              const std::map<std::string, std::string>& ports,
              v1::ConditionNode* c) {
    const std::optional<std::string> key = BlackboardKey(Get(ports, "factor"));
    if (!key) {
      Unmapped(e, "FactorCondition needs factor=\"{name}\"");
      return;
    }
    c->set_factor(*key);
    double v = 0;
    if (absl::SimpleAtod(Get(ports, "threshold"), &v)) c->set_threshold(v);
    if (absl::SimpleAtod(Get(ports, "range_min"), &v)) {
      c->mutable_range()->set_min(v);
    }
    if (absl::SimpleAtod(Get(ports, "range_max"), &v)) {
      c->mutable_range()->set_max(v);
    }
    const std::string curve = Get(ports, "curve");
    if (!curve.empty() &&
        !google::protobuf::util::JsonStringToMessage(curve, c->mutable_curve())
             .ok()) {
      Unmapped(e, "curve is not the JSON utilityctl export-bt writes");
    }
  }

  void Action(const XMLElement* e, const std::string& id,
              const std::map<std::string, std::string>& ports,
              v1::TreeNode* out) {
    const std::string action =
        map_.actions.count(id) ? map_.actions.at(id) : id;
    out->set_action(action);
    if (std::find(actions_.begin(), actions_.end(), action) == actions_.end()) {
      actions_.push_back(action);
      Mapped(e, absl::StrCat(id, " -> action ", action));
    }
    for (const auto& [port, value] : ports) {
      Dropped(e, absl::StrCat(id, " port ", port, "=\"", value,
                              "\": the game runs the action with its own "
                              "parameters"));
    }
  }

  const BtImportOptions& opts_;
  const Mapping map_;
  BtImport* out_;
  std::map<std::string, std::string> category_;
  absl::flat_hash_set<const XMLElement*> visited_;  // converted or read
  // The element each tree node was converted from (nodes keep their place
  // in the set as it grows: a repeated field's elements do not move).
  absl::flat_hash_map<const v1::TreeNode*, const XMLElement*> origin_;
  std::vector<const XMLElement*> uses_;  // <SubTree> elements
  std::map<std::string, std::map<std::string, std::string>> defaults_;
  std::vector<std::string> actions_;
  // Subtree ports a use gives a literal (a number, a boolean, an enum).
  absl::flat_hash_set<std::string> literal_ports_;
  BtIncludes includes_{opts_.source};  // the files <include>s name
};

}  // namespace

absl::StatusOr<BtImport> ImportBt(absl::string_view xml,
                                  const BtImportOptions& opts) {
  absl::StatusOr<Mapping> mapping =
      ReadMapping(opts.mapping, opts.mapping_source);
  if (!mapping.ok()) return mapping.status();
  tinyxml2::XMLDocument doc;
  if (doc.Parse(xml.data(), xml.size()) != tinyxml2::XML_SUCCESS) {
    return absl::InvalidArgumentError(
        absl::StrCat(opts.source, ":", doc.ErrorLineNum(),
                     ": not well-formed XML: ", doc.ErrorStr()));
  }
  BtImport out;
  Importer importer(opts, *std::move(mapping), &out);
  if (absl::Status s = importer.Run(doc); !s.ok()) return s;
  for (auto* notes : {&out.mapped, &out.dropped, &out.unmapped}) {
    std::stable_sort(
        notes->begin(), notes->end(), [](const BtNote& a, const BtNote& b) {
          return std::tie(a.file, a.line) < std::tie(b.file, b.line);
        });
  }
  return out;
}

std::string ImportedYaml(const BtImport& in, const std::string& source) {
  std::string out = absl::StrCat("# Imported from ", source,
                                 " (BehaviorTree.CPP format 4, tree \"",
                                 in.main, "\") by utilityctl import-bt.\n");
  auto list = [&](const char* title, const std::vector<BtNote>& notes) {
    if (notes.empty()) return;
    absl::StrAppend(&out, "#\n# ", title, "\n");
    for (const BtNote& n : notes) {
      absl::StrAppend(&out, "#   ",
                      n.file.empty() ? "line " : absl::StrCat(n.file, ":"),
                      n.line, ": ", n.text, "\n");
    }
  };
  list("Mapped (override with --map FILE; docs/TREES.md):", in.mapped);
  list("Left out:", in.dropped);
  return out + loader::WriteMessageYaml(in.set);
}

}  // namespace utilityd::ctl
