#include "utilityd/loader/set_loader.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string_view>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "utilityd/loader/packages.h"
#include "utilityd/loader/proto_reader.h"
#include "utilityd/loader/subtrees.h"

namespace utilityd::loader {
namespace {

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

// A factor's kind holds: a flag's range is 0..1, a count's bounds are whole
// numbers, and the scenarios give each a value it can take.
void ValidateFactorKinds(const v1::BehaviourSet& set,
                         std::vector<engine::ValidationIssue>* issues) {
  const auto whole = [](double v) { return std::floor(v) == v; };
  // What is wrong with `v` for a factor of kind `kind`, or "".
  const auto wrong = [&](v1::FactorKind kind, double v) -> std::string {
    if (kind == v1::FACTOR_KIND_FLAG && v != 0 && v != 1) {
      return absl::StrCat("a flag is 0 or 1, got ", v);
    }
    if (kind == v1::FACTOR_KIND_COUNT && !whole(v)) {
      return absl::StrCat("a count is a whole number, got ", v);
    }
    return "";
  };
  absl::flat_hash_map<std::string, v1::FactorKind> kinds, target_kinds;
  for (const auto& [list, field, out] :
       {std::tuple{&set.factors(), "factors", &kinds},
        std::tuple{&set.target_factors(), "target_factors", &target_kinds}}) {
    for (int i = 0; i < list->size(); ++i) {
      const v1::Factor& f = list->Get(i);
      (*out)[f.name()] = f.kind();
      const std::string at = absl::StrCat(field, "[", i, "]");
      if (f.kind() == v1::FACTOR_KIND_FLAG && (f.min() != 0 || f.max() != 1)) {
        issues->push_back({at, absl::StrCat("a flag's range is 0..1, got ",
                                            f.min(), "..", f.max())});
      }
      for (double bound : {f.min(), f.max()}) {
        const std::string why = wrong(f.kind(), bound);
        if (f.kind() == v1::FACTOR_KIND_COUNT && !why.empty()) {
          issues->push_back({at, absl::StrCat("bounds: ", why)});
        }
      }
    }
  }
  const auto check =
      [&](const std::string& at,
          const google::protobuf::Map<std::string, double>& v,
          const absl::flat_hash_map<std::string, v1::FactorKind>& of) {
        for (const auto& [name, value] : v) {
          const auto k = of.find(name);
          if (k == of.end()) continue;  // ValidateScenarios names it
          const std::string why = wrong(k->second, value);
          if (!why.empty()) {
            issues->push_back({absl::StrCat(at, "[\"", name, "\"]"), why});
          }
        }
      };
  for (int i = 0; i < set.scenarios_size(); ++i) {
    const v1::Scenario& s = set.scenarios(i);
    const std::string at = absl::StrCat("scenarios[", i, "]");
    check(at + ".factors", s.factors(), kinds);
    for (int t = 0; t < s.targets_size(); ++t) {
      check(absl::StrCat(at, ".targets[", t, "].factors"),
            s.targets(t).factors(), target_kinds);
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

// The text hash of a set file combined with those of the packages it
// composes (by name, in `index`); 0 when one of them is missing.
size_t InputHash(size_t text_hash, const std::vector<std::string>& packages,
                 const PackageIndex* index) {
  size_t h = text_hash;
  for (const std::string& name : packages) {
    if (index == nullptr) return 0;
    const auto p = index->find(name);
    if (p == index->end()) return 0;
    h = (h ^ p->second->text_hash) * 0x100000001b3ull;
  }
  return h;
}

// Where a path of the loaded set was written: subtree expansions and
// composed packages followed back to the file and line.
ReadIssue Locate(const engine::ValidationIssue& issue, const SubtreeUses& uses,
                 const Composition& composition, absl::string_view source,
                 const PositionMap* positions) {
  ReadIssue r =
      composition.Locate(uses.SourcePath(issue.path), source, positions);
  r.message = absl::StrCat(issue.message, uses.Note(issue.path), r.message);
  return r;
}

absl::StatusOr<std::shared_ptr<const LoadedSet>> Load(
    v1::BehaviourSet set, absl::string_view source,
    const PositionMap* positions, const LoadContext& context) {
  Composition composition;
  if (!set.uses().empty()) {
    static const PackageIndex kNone;
    std::vector<ReadIssue> read;
    if (!ComposeSet(&set, source, positions,
                    context.packages != nullptr ? *context.packages : kNone,
                    &composition, &read)) {
      return absl::InvalidArgumentError(JoinIssues(read));
    }
  }
  SubtreeUses uses;
  std::vector<engine::ValidationIssue> issues;
  ExpandSubtrees(&set, &issues, &uses);
  engine::SetDefinition def;
  if (issues.empty()) {
    ApplyDefaults(&set);
    set.set_revision(ComputeRevision(set));
    if (context.previous != nullptr) {
      // Unchanged content: the set compiled before serves on.
      if (auto old = context.previous->Find(set.name());
          old != nullptr && old->revision() == set.revision() &&
          old->source == source) {
        return old;
      }
    }
    def = ToDefinition(set);
    issues = engine::Validate(def);
    ValidateScenarios(set, &issues);
    ValidateFactorKinds(set, &issues);
    ValidateAnalysisNotes(set, &issues);
  }
  if (!issues.empty()) {
    std::vector<std::string> lines;
    for (const engine::ValidationIssue& i : issues) {
      lines.push_back(
          Locate(i, uses, composition, source, positions).ToString());
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
  loaded->packages = composition.packages();
  if (context.text_hash != 0) {
    loaded->input_hash =
        InputHash(context.text_hash, loaded->packages, context.packages);
  }
  return std::shared_ptr<const LoadedSet>(std::move(loaded));
}

// Parses a set's YAML or JSON, recording where each field was written.
absl::Status Parse(absl::string_view text, absl::string_view source,
                   v1::BehaviourSet* set, PositionMap* positions) {
  std::vector<ReadIssue> issues;
  if (!ReadMessage(text, source, set, &issues, {}, positions)) {
    return absl::InvalidArgumentError(JoinIssues(issues));
  }
  return absl::OkStatus();
}

std::string ReadFile(const std::string& path, bool* ok) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  *ok = static_cast<bool>(in);
  return text.str();
}

}  // namespace

std::string ComputeRevision(const v1::BehaviourSet& set) {
  v1::BehaviourSet copy = set;
  copy.clear_revision();
  copy.clear_origins();
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
    v1::BehaviourSet set, absl::string_view source,
    const PositionMap* positions) {
  return Load(std::move(set), source, positions, {});
}

absl::StatusOr<std::shared_ptr<const LoadedSet>> LoadSetText(
    absl::string_view text, absl::string_view source,
    const LoadContext& context) {
  v1::BehaviourSet set;
  PositionMap positions;
  if (absl::Status s = Parse(text, source, &set, &positions); !s.ok()) return s;
  return Load(std::move(set), source, &positions, context);
}

absl::StatusOr<std::shared_ptr<const LoadedSet>> LoadSetFile(
    const std::string& path) {
  bool ok = false;
  const std::string text = ReadFile(path, &ok);
  if (!ok) return absl::NotFoundError(absl::StrCat(path, ": cannot be read"));
  if (IsPackageText(text)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        ": is a package, not a set: it is composed into the sets that "
        "use it (load its directory)"));
  }
  v1::BehaviourSet set;
  PositionMap positions;
  if (absl::Status s = Parse(text, path, &set, &positions); !s.ok()) return s;
  // A set that uses packages finds them beside it.
  PackageIndex packages;
  if (!set.uses().empty()) {
    std::vector<std::string> errors;
    const std::string dir = std::filesystem::path(path).parent_path().string();
    if (auto files = ListSetFiles({dir.empty() ? "." : dir}); files.ok()) {
      for (const std::string& f : *files) {
        const std::string other = ReadFile(f, &ok);
        if (!ok || !IsPackageText(other)) continue;
        if (std::string e = AddPackageText(other, f, &packages); !e.empty()) {
          errors.push_back(std::move(e));
        }
      }
    }
    if (!errors.empty()) {
      return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
    }
  }
  return Load(std::move(set), path, &positions, {.packages = &packages});
}

std::vector<FileLoad> LoadFiles(const std::vector<std::string>& files,
                                const Catalog* previous) {
  std::vector<FileLoad> out(files.size());
  std::vector<std::string> texts(files.size());
  PackageIndex packages;
  for (size_t i = 0; i < files.size(); ++i) {
    out[i].file = files[i];
    bool ok = false;
    texts[i] = ReadFile(files[i], &ok);
    if (!ok) {
      out[i].error = absl::StrCat(files[i], ": cannot be read");
      continue;
    }
    if (IsPackageText(texts[i])) {
      out[i].error =
          AddPackageText(texts[i], files[i], &packages, &out[i].package);
    }
  }
  // The previous catalog's sets by file, to take those whose text and
  // packages are unchanged without reading them again.
  absl::flat_hash_map<std::string, std::shared_ptr<const LoadedSet>> before;
  if (previous != nullptr) {
    for (const auto& [_, set] : previous->sets()) before[set->source] = set;
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (out[i].package != nullptr || !out[i].error.empty()) continue;
    const size_t text_hash = std::hash<std::string_view>{}(texts[i]);
    std::shared_ptr<const LoadedSet> set;
    if (const auto old = before.find(files[i]);
        old != before.end() && old->second->input_hash != 0 &&
        old->second->input_hash ==
            InputHash(text_hash, old->second->packages, &packages)) {
      set = old->second;  // its text and its packages' are unchanged
    } else {
      absl::StatusOr<std::shared_ptr<const LoadedSet>> loaded =
          LoadSetText(texts[i], files[i],
                      {.packages = &packages,
                       .previous = previous,
                       .text_hash = text_hash});
      if (!loaded.ok()) {
        out[i].error = std::string(loaded.status().message());
        continue;
      }
      set = *std::move(loaded);
    }
    if (auto p = packages.find(set->name()); p != packages.end()) {
      out[i].error = absl::StrCat(files[i], ": name: set \"", set->name(),
                                  "\" has the name of the package at ",
                                  p->second->Where("package"));
      continue;
    }
    out[i].set = std::move(set);
  }
  return out;
}

}  // namespace utilityd::loader
