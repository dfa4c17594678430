// The catalog: every behaviour set of a directory (or of files) loaded,
// by name, with the resources they declare.
#include <algorithm>
#include <filesystem>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd::loader {
namespace {

namespace fs = std::filesystem;

}  // namespace

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

absl::StatusOr<Catalog> LoadCatalog(const std::vector<std::string>& paths,
                                    const Catalog* previous) {
  absl::StatusOr<std::vector<std::string>> files = ListSetFiles(paths);
  if (!files.ok()) return files.status();
  Catalog catalog;
  std::vector<std::string> errors;
  for (FileLoad& f : LoadFiles(*files, previous)) {
    if (!f.error.empty()) {
      errors.push_back(std::move(f.error));
    } else if (f.package != nullptr) {
      catalog.packages_[f.package->name()].file = f.package;
    } else if (auto [it, fresh] = catalog.sets_.emplace(f.set->name(), f.set);
               !fresh) {
      errors.push_back(absl::StrCat(f.file, ": name: set \"", f.set->name(),
                                    "\" is already defined in ",
                                    it->second->source));
    } else if (previous == nullptr || previous->Find(f.set->name()) != f.set) {
      catalog.compiled_.push_back(f.set->name());
    }
  }
  for (const auto& [name, set] : catalog.sets_) {
    for (const std::string& p : set->packages) {
      catalog.packages_[p].used_by.push_back(name);
    }
  }
  if (errors.empty()) errors = catalog.IndexResources();
  if (!errors.empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
  }
  return catalog;
}

}  // namespace utilityd::loader
