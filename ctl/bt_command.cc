// utilityctl import-bt and export-bt: BehaviorTree.CPP v4 XML to a
// behaviour set and back (ctl/bt_xml.h; docs/TREES.md).
#include <fstream>

#include "absl/strings/str_cat.h"
#include "ctl/bt_xml.h"
#include "ctl/cli.h"
#include "utilityd/engine/tree.h"
#include "utilityd/loader/proto_reader.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd::ctl {
namespace {

// Writes `text` to --out, or to `out` without it; false (after printing
// why) when the file cannot be written.
bool Emit(const Parsed& p, const std::string& text, std::ostream& out,
          std::ostream& err, const char* command) {
  if (!p.has("out")) {
    out << text;
    return true;
  }
  std::ofstream f(p.get("out"));
  f << text;
  if (!f.good()) {
    err << "utilityctl " << command << ": cannot write " << p.get("out")
        << "\n";
    return false;
  }
  return true;
}

int ImportBtRun(const Parsed& p, std::ostream& out, std::ostream& err) {
  if (p.positional.empty()) {
    err << "utilityctl import-bt: name an XML file\n";
    return kUsage;
  }
  const std::string& file = p.positional[0];
  BtImportOptions opts{.source = file,
                       .main = p.get("main"),
                       .set = p.get("set"),
                       .also = {p.positional.begin() + 1, p.positional.end()}};
  std::string xml;
  if (!ReadFile(file, &xml)) {
    err << "utilityctl import-bt: cannot read " << file << "\n";
    return kInvalid;
  }
  if (p.has("map")) {
    opts.mapping_source = p.get("map");
    if (!ReadFile(opts.mapping_source, &opts.mapping)) {
      err << "utilityctl import-bt: cannot read " << opts.mapping_source
          << "\n";
      return kInvalid;
    }
  }
  v1::BehaviourSet into;
  if (p.has("into")) {
    std::string text;
    if (!ReadFile(p.get("into"), &text)) {
      err << "utilityctl import-bt: cannot read " << p.get("into") << "\n";
      return kInvalid;
    }
    if (absl::Status s = loader::ReadMessageOrError(text, p.get("into"), &into);
        !s.ok()) {
      err << s.message() << "\n";
      return kInvalid;
    }
    opts.into = &into;
  }
  absl::StatusOr<BtImport> in = ImportBt(xml, opts);
  if (!in.ok()) {
    err << in.status().message() << "\n";
    return kInvalid;
  }
  if (!in->unmapped.empty()) {
    for (const BtNote& n : in->unmapped) {
      if (n.line > 0) {
        err << (n.file.empty() ? file : n.file) << ":" << n.line << ": ";
      }
      err << n.text << "\n";  // a file given beside names itself
    }
    err << "utilityctl import-bt: " << in->unmapped.size()
        << " element(s) cannot be imported; nothing written\n";
    return kInvalid;
  }
  absl::StatusOr<std::shared_ptr<const loader::LoadedSet>> loaded =
      loader::LoadSetProto(in->set, file, &in->positions);
  if (!loaded.ok()) {
    err << loaded.status().message() << "\n"
        << "utilityctl import-bt: the imported set does not validate; "
           "nothing written\n";
    return kInvalid;
  }
  if (!Emit(p, ImportedYaml(*in, file), out, err, "import-bt")) {
    return kInvalid;
  }
  if (p.has("out")) {
    out << "wrote " << p.get("out") << ": set \"" << in->set.name() << "\", "
        << (*loaded)->compiled.tree()->nodes.size() << " nodes, "
        << in->set.actions_size() << " actions, " << in->set.factors_size()
        << " factors, " << in->set.subtrees_size() << " subtrees\n";
  }
  return kOk;
}

int ExportBtRun(const Parsed& p, std::ostream& out, std::ostream& err) {
  if (p.positional.size() != 1) {
    err << "utilityctl export-bt: name one behaviour-set file\n";
    return kUsage;
  }
  const std::string& file = p.positional[0];
  absl::StatusOr<std::shared_ptr<const loader::LoadedSet>> loaded =
      loader::LoadSetFile(file);
  if (!loaded.ok()) {
    err << loaded.status().message() << "\n";
    return kInvalid;
  }
  // The set as written: its subtrees not expanded, its defaults not filled.
  std::string text;
  v1::BehaviourSet set;
  if (!ReadFile(file, &text) ||
      !loader::ReadMessageOrError(text, file, &set).ok()) {
    err << "utilityctl export-bt: cannot read " << file << "\n";
    return kInvalid;
  }
  absl::StatusOr<std::string> xml = ExportBt(set);
  if (!xml.ok()) {
    err << "utilityctl export-bt: " << file << ": " << xml.status().message()
        << "\n";
    return kInvalid;
  }
  return Emit(p, *xml, out, err, "export-bt") ? kOk : kInvalid;
}

}  // namespace

Command ImportBtCommand() {
  return {
      .name = "import-bt",
      .synopsis =
          "TREE.xml [MORE.xml...] [--main ID] [--set NAME] [--map FILE]\n"
          "                        [--into SET] [--out FILE]",
      .description =
          "Writes a behaviour set (YAML) holding a BehaviorTree.CPP v4 XML "
          "tree.\nIts controls and decorators become utilityd's node kinds, "
          "its other trees\nsubtrees (SubTree port remapping included); "
          "conditions read factors (the\nnode's ID, or the blackboard entry "
          "of its one port; ScriptCondition's\n`health < 30`), other leaves "
          "are actions the game runs; --into keeps a set's scoring around "
          "the new tree. MORE.xml's trees are\nregistered beside TREE.xml's, "
          "as BT.CPP's factory registers several files\n(the main tree is "
          "TREE.xml's). The YAML's header\nlists each mapping "
          "and what was left out, with XML lines; an element that\ncannot be "
          "imported is listed with its line and why, and nothing is "
          "written.\nSee docs/TREES.md, \"BehaviorTree.CPP XML\".",
      .options = {{"main", "ID",
                   "the tree to import (default: main_tree_to_execute)"},
                  {"set", "NAME", "the set's name (default: the tree's ID)"},
                  {"map", "FILE",
                   "a YAML mapping: conditions, actions, factor ranges"},
                  {"into", "SET",
                   "replace this set's tree, keeping its factors, actions "
                   "and scoring"},
                  {"out", "FILE", "write the YAML here (default: stdout)"}},
      .run = ImportBtRun};
}

Command ExportBtCommand() {
  return {
      .name = "export-bt",
      .synopsis = "SET.yaml [--out FILE]",
      .description =
          "Writes a behaviour set's tree as BehaviorTree.CPP v4 XML for "
          "Groot2: its\nsubtrees as <BehaviorTree>s, utilityd's own nodes "
          "(Utility, UtilityChoice,\nCooldown, FactorCondition) declared in "
          "<TreeNodesModel>. import-bt reads it\nback to the same tree. See "
          "docs/TREES.md, \"BehaviorTree.CPP XML\".",
      .options = {{"out", "FILE", "write the XML here (default: stdout)"}},
      .run = ExportBtRun};
}

}  // namespace utilityd::ctl
