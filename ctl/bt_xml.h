// BehaviorTree.CPP v4 XML to a behaviour set and back (utilityctl import-bt
// and export-bt; docs/TREES.md, "BehaviorTree.CPP XML").
//
//   absl::StatusOr<BtImport> in = ImportBt(xml, {.source = "patrol.xml"});
//   if (in.ok() && in->unmapped.empty()) out << ImportedYaml(*in);
//   absl::StatusOr<std::string> xml = ExportBt(set);  // for Groot2
//
// Internal to ctl/.
#ifndef UTILITYD_CTL_BT_XML_H_
#define UTILITYD_CTL_BT_XML_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "utilityd/loader/proto_reader.h"
#include "utilityd/v1/behaviour_set.pb.h"

namespace utilityd::ctl {

struct BtImportOptions {
  std::string source;  // the XML's file name, for messages
  std::string main;    // the tree to import (--main); default the file's
                       // main_tree_to_execute, or its only tree
  std::string set;     // the set's name (--set); default the main tree's ID
                       // (or the name of the set given with `into`)
  // --into: a set whose tree the import replaces, keeping the rest (factors,
  // actions and their considerations, scoring); what the tree reads that
  // it does not declare is added.
  const v1::BehaviourSet* into = nullptr;
  // More files whose trees are registered beside the file's, as BT.CPP's
  // factory registers several (subtrees defined in another file).
  std::vector<std::string> also;
  // The mapping file's YAML (--map; docs/TREES.md), and its name.
  std::string mapping;
  std::string mapping_source;
};

// Something the import says about an XML element: how it mapped, what it
// left out, or why it cannot be imported.
struct BtNote {
  int line = 0;
  std::string text;
  std::string file;  // "" for the file imported; else the included one's
};

struct BtImport {
  v1::BehaviourSet set;
  std::string main;              // the main tree's ID
  std::vector<BtNote> mapped;    // conditions and leaves: to what
  std::vector<BtNote> dropped;   // details utilityd does not carry
  std::vector<BtNote> unmapped;  // elements that cannot be imported
  // The XML line of each tree node's field path ("tree.sequence",
  // "subtrees[1].tree"), for the nodes of the file imported (not of its
  // includes): a problem the set's validation finds is placed there.
  loader::PositionMap positions;
};

// Reads BT.CPP v4 XML. An error (INVALID_ARGUMENT, "source:line: ...") for a
// document that is not XML, not format 4, has no tree to import or a bad
// mapping file; elements that cannot be imported are listed in `unmapped`
// (the set is then incomplete and must not be written).
[[nodiscard]] absl::StatusOr<BtImport> ImportBt(absl::string_view xml,
                                                const BtImportOptions& opts);

// The imported set as YAML, headed by comments: where it came from, how
// each condition and leaf mapped and what was left out, with XML lines.
[[nodiscard]] std::string ImportedYaml(const BtImport& in,
                                       const std::string& source);

// `set`'s tree and subtrees (as written, not expanded) as BT.CPP v4 XML with
// a <TreeNodesModel> declaring its actions and utilityd's own nodes
// (Utility, UtilityChoice, Cooldown, FactorCondition), which Groot2 draws.
// INVALID_ARGUMENT when the set has no tree.
[[nodiscard]] absl::StatusOr<std::string> ExportBt(const v1::BehaviourSet& set);

}  // namespace utilityd::ctl

#endif  // UTILITYD_CTL_BT_XML_H_
