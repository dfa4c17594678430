// Loads behaviour sets from YAML or JSON files into validated, compiled form.
//
//   absl::StatusOr<Catalog> catalog = LoadCatalog({"examples/behaviour_sets"});
//   if (!catalog.ok()) {
//     // One line per problem, e.g.
//     // arena_mage.yaml:31:18: actions[2].considerations[0].factor: unknown
//     //   factor "helth" (did you mean "health"?)
//   }
//   std::shared_ptr<const LoadedSet> set = catalog->Find("arena_mage");
//
// Loading applies the documented defaults to every absent field, computes the
// revision (content hash of the result), validates everything at once, and
// compiles for the engine. Loaded sets are immutable and shared.
#ifndef UTILITYD_LOADER_SET_LOADER_H_
#define UTILITYD_LOADER_SET_LOADER_H_

#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/definition.h"
#include "utilityd/loader/packages.h"
#include "utilityd/v1/behaviour_set.pb.h"

namespace utilityd::loader {

// A validated behaviour set: its full definition (defaults made explicit,
// revision set) and the engine's compiled form.
struct LoadedSet {
  v1::BehaviourSet definition;
  engine::CompiledBehaviourSet compiled;
  std::string source;  // file it came from, or another label
  // The packages composed into it (docs/FORMAT.md, "Packages and
  // archetypes"), in the order its uses reach them; empty for a set that
  // uses none.
  std::vector<std::string> packages;
  // Of the text it was loaded from and its packages' texts (0: not loaded
  // from a text): a reload that finds them unchanged takes the set as it is,
  // without reading it again.
  size_t input_hash = 0;

  const std::string& name() const { return definition.name(); }
  const std::string& revision() const { return definition.revision(); }
};

// Sets every absent field that has a documented default to that default:
// weights, slopes, output ranges, bookends (from the factor), curve kind and
// parameters, aggregation, compensation and strategy. Idempotent.
void ApplyDefaults(v1::BehaviourSet* set);

// Returns the engine definition of a set whose defaults are applied.
[[nodiscard]] engine::SetDefinition ToDefinition(const v1::BehaviourSet& set);

// Returns the content hash of `set` (16 lowercase hex digits): FNV-1a 64 over
// its deterministic serialisation, ignoring the revision field.
[[nodiscard]] std::string ComputeRevision(const v1::BehaviourSet& set);

// Validates and compiles a set given as a message. Issues are prefixed with
// `source`, and with the line `positions` (when given) records for the
// issue's field path or its nearest ancestor: where a set converted from
// another format was written there. Returns INVALID_ARGUMENT listing every
// problem, one per line.
[[nodiscard]] absl::StatusOr<std::shared_ptr<const LoadedSet>> LoadSetProto(
    v1::BehaviourSet set, absl::string_view source,
    const PositionMap* positions = nullptr);

class Catalog;

// What a set is loaded among.
struct LoadContext {
  // The packages its uses name; none when null.
  const PackageIndex* packages = nullptr;
  // A catalog loaded before: a set whose content (revision) and source are
  // unchanged is taken from it as it is, not validated and compiled again.
  const Catalog* previous = nullptr;
  // The hash of the text being loaded, for LoadedSet::input_hash.
  size_t text_hash = 0;
};

// Parses YAML or JSON `text`, composes the packages it uses, then as
// LoadSetProto. Problems carry the file and line where the offending field
// was written (a package's, for a piece that came from one).
[[nodiscard]] absl::StatusOr<std::shared_ptr<const LoadedSet>> LoadSetText(
    absl::string_view text, absl::string_view source,
    const LoadContext& context = {});

// Reads and loads one file; the packages it uses are read from the files
// beside it. NOT_FOUND when it cannot be read; INVALID_ARGUMENT for a
// package file.
[[nodiscard]] absl::StatusOr<std::shared_ptr<const LoadedSet>> LoadSetFile(
    const std::string& path);

// A resource as the whole catalog declares it: every set declaring the name
// shares its pools, so one capacity and one preemption margin hold for every
// batch, whichever sets its agents use.
struct CatalogResource {
  bool per_target = false;
  // The smallest capacity and margin any set of the catalog declares.
  int32_t capacity = 1;
  float preemption_margin = std::numeric_limits<float>::infinity();
  // Sources of the sets declaring it, in name order.
  std::vector<std::string> declared_in;
};

// A package of the catalog and the sets that compose it.
struct CatalogPackage {
  std::shared_ptr<const PackageFile> file;
  // Names of the sets that use it, directly or through other packages.
  std::vector<std::string> used_by;
};

// Immutable name -> set map, with the packages and resources its sets
// declare.
class Catalog {
 public:
  // A catalog of already loaded sets (what-if scoring). INVALID_ARGUMENT
  // when two share a name.
  static absl::StatusOr<Catalog> Of(
      std::vector<std::shared_ptr<const LoadedSet>> sets);
  // Returns the named set, or nullptr.
  std::shared_ptr<const LoadedSet> Find(absl::string_view name) const;
  const std::map<std::string, std::shared_ptr<const LoadedSet>, std::less<>>&
  sets() const {
    return sets_;
  }
  // Returns the catalog-wide declaration of resource `name`, or nullptr when
  // no set declares it.
  const CatalogResource* FindResource(absl::string_view name) const;
  // The packages of the catalog's files, by name.
  const std::map<std::string, CatalogPackage, std::less<>>& packages() const {
    return packages_;
  }
  // Names of the sets this load validated and compiled: all of them, or with
  // a previous catalog, those whose content or file changed.
  const std::vector<std::string>& compiled() const { return compiled_; }

 private:
  friend absl::StatusOr<Catalog> LoadCatalog(const std::vector<std::string>&,
                                             const Catalog*);
  // Builds resources_ from the sets; one problem per resource that one set
  // declares per target and another batch-wide.
  std::vector<std::string> IndexResources();

  std::map<std::string, std::shared_ptr<const LoadedSet>, std::less<>> sets_;
  std::map<std::string, CatalogResource, std::less<>> resources_;
  std::map<std::string, CatalogPackage, std::less<>> packages_;
  std::vector<std::string> compiled_;
};

// Returns true for names LoadCatalog reads from a directory: *.yaml, *.yml,
// *.json, not hidden.
[[nodiscard]] bool IsBehaviourSetFileName(absl::string_view file_name);

// Returns the files named in `paths` plus the behaviour-set files in each
// directory named (sorted, not recursive, symlinks followed). NOT_FOUND for a
// path that does not exist.
[[nodiscard]] absl::StatusOr<std::vector<std::string>> ListSetFiles(
    const std::vector<std::string>& paths);

// One file's outcome among others: a package read, a set loaded, or the
// problems, one per line.
struct FileLoad {
  std::string file;
  std::shared_ptr<const PackageFile> package;  // a package file, read
  std::shared_ptr<const LoadedSet> set;        // a set file, loaded
  std::string error;                           // empty when fine
};

// Loads `files` (ListSetFiles' result) as a catalog does, each file's
// outcome on its own: the package files are read first, then every set is
// composed with them (LoadContext::previous from `previous`).
[[nodiscard]] std::vector<FileLoad> LoadFiles(
    const std::vector<std::string>& files, const Catalog* previous = nullptr);

// Loads every file given and every behaviour-set or package file in every
// directory given (not recursive; symlinked files are followed, so a
// Kubernetes ConfigMap mount works). Set and package names must be unique.
// With `previous`, sets whose content and file are unchanged are taken from
// it (Catalog::compiled names the others). Returns INVALID_ARGUMENT with
// every problem of every file, or NOT_FOUND for a missing path.
[[nodiscard]] absl::StatusOr<Catalog> LoadCatalog(
    const std::vector<std::string>& paths, const Catalog* previous = nullptr);

}  // namespace utilityd::loader

#endif  // UTILITYD_LOADER_SET_LOADER_H_
