// Packages: content several behaviour sets share, and its composition into
// the sets (archetypes) that use it (docs/FORMAT.md, "Packages and
// archetypes").
//
//   PackageIndex packages;  // read from the catalog's package files
//   Composition where;
//   std::vector<ReadIssue> issues;
//   ComposeSet(&set, "goblin.yaml", &positions, packages, &where, &issues);
//   // set now holds the packages' pieces after its own, overridden and
//   // gated as its uses say, and no uses; an issue in the composed set is
//   // placed back where it was written:
//   ReadIssue at = where.Locate("actions[3].weight");
//   // -> survival.yaml:12:5: actions[0].weight (package "survival", ...)
#ifndef UTILITYD_LOADER_PACKAGES_H_
#define UTILITYD_LOADER_PACKAGES_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "utilityd/loader/proto_reader.h"
#include "utilityd/v1/behaviour_set.pb.h"

namespace utilityd::loader {

// A package as read from its file.
struct PackageFile {
  v1::Package package;
  std::string source;  // the file
  PositionMap positions;
  size_t text_hash = 0;  // of the file's text, to see it unchanged

  const std::string& name() const { return package.package(); }
  // "survival.yaml:12" for a path of the package ("actions[0]"), the line
  // left out when unknown.
  std::string Where(absl::string_view path) const;
};

// Packages by name.
using PackageIndex =
    std::map<std::string, std::shared_ptr<const PackageFile>, std::less<>>;

// Whether a document is a package: a mapping with a top-level `package`
// key. False for anything that does not parse (the set reader reports it).
[[nodiscard]] bool IsPackageText(absl::string_view text);

// Reads a package's text: INVALID_ARGUMENT with one problem per line (a
// missing or malformed name, names given twice within the package).
[[nodiscard]] absl::StatusOr<std::shared_ptr<const PackageFile>>
ReadPackageText(absl::string_view text, absl::string_view source);

// Reads `text` as a package (ReadPackageText) into `index`, and into `read`
// when given. Returns "" when added, else the problems, one per line (a
// package named twice among them).
std::string AddPackageText(absl::string_view text, absl::string_view source,
                           PackageIndex* index,
                           std::shared_ptr<const PackageFile>* read = nullptr);

// Where the pieces of a composed set were written, to place the issues of
// its validation (paths of the composed set) in the files that hold them.
class Composition {
 public:
  // Where a path of the composed set was written: in the set's own file
  // (`source`, `positions`) or in a package's, with the path as written
  // there and a note naming the package and the set.
  [[nodiscard]] ReadIssue Locate(absl::string_view path,
                                 absl::string_view source,
                                 const PositionMap* positions) const;
  // Every package composed, in the order the uses reach them.
  [[nodiscard]] const std::vector<std::string>& packages() const {
    return packages_;
  }

 private:
  friend class Composer;
  struct Piece {
    const PackageFile* package;  // null: the set's own
    int index;                   // in the list it was written in
  };
  std::string set_name_;
  // Per list ("factors", "actions", ...), each composed element's origin.
  std::map<std::string, std::vector<Piece>, std::less<>> pieces_;
  std::vector<std::string> packages_;
  // Keeps the packages alive while the composition points into them.
  std::vector<std::shared_ptr<const PackageFile>> held_;
};

// Composes the packages `set` uses into it: their factors, target factors,
// resources, enums, subtrees and actions join the set's own (after them, in
// the order the uses reach the packages, each package before those it uses),
// each use's overrides and gate applied, `origins` filled and `uses`
// cleared. A factor or resource the set declares itself is the set's; two
// packages declaring one differently, two pieces of one name (actions,
// subtrees), unknown packages (with did-you-mean), cycles and overrides of
// what a package does not have are issues naming both files and lines.
// Returns false when there were issues. A set without uses is unchanged.
bool ComposeSet(v1::BehaviourSet* set, absl::string_view source,
                const PositionMap* positions, const PackageIndex& packages,
                Composition* composition, std::vector<ReadIssue>* issues);

}  // namespace utilityd::loader

#endif  // UTILITYD_LOADER_PACKAGES_H_
