// Packages: reading them, and composing them into the sets that use them.
#include "utilityd/loader/packages.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string_view>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "utilityd/engine/compiled_set.h"
#include "utilityd/engine/identifier.h"
#include "yaml-cpp/yaml.h"

namespace utilityd::loader {
namespace {

using google::protobuf::RepeatedPtrField;

// Map keys in order, so issues and origins come out the same every time.
template <typename Map>
std::vector<std::string> SortedKeys(const Map& map) {
  std::vector<std::string> keys;
  for (const auto& [k, _] : map) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  return keys;
}

// A declaration (factor, resource) without its description: what must agree
// when two packages declare one name.
template <typename T>
std::string Substance(const T& declaration) {
  T copy = declaration;
  copy.clear_description();
  return copy.SerializeAsString();
}

}  // namespace

std::string PackageFile::Where(absl::string_view path) const {
  const TextPosition p = FindPosition(positions, path);
  return p.line > 0 ? absl::StrCat(source, ":", p.line) : source;
}

bool IsPackageText(absl::string_view text) {
  if (text.size() > ReadLimits{}.max_bytes) return false;
  // Block style, as designers write: a `package` key at the start of a line
  // (a top-level key; nested keys are indented). Anything else (flow style,
  // JSON) is parsed to look.
  bool block = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty() || line[0] == '#' || line[0] == ' ' || line == "---" ||
        line == "\r") {
      continue;
    }
    if (absl::StartsWith(line, "{") || absl::StartsWith(line, "[")) break;
    block = true;
    for (absl::string_view key : {"package:", "\"package\":", "'package':"}) {
      if (absl::StartsWith(line, key)) return true;
    }
  }
  if (block) return false;
  try {
    const YAML::Node doc = YAML::Load(std::string(text));
    return doc.IsMap() && doc["package"].IsDefined();
  } catch (const YAML::Exception&) {
    return false;
  }
}

absl::StatusOr<std::shared_ptr<const PackageFile>> ReadPackageText(
    absl::string_view text, absl::string_view source) {
  auto file = std::make_shared<PackageFile>();
  file->source = std::string(source);
  file->text_hash =
      std::hash<std::string_view>{}(std::string_view(text.data(), text.size()));
  std::vector<ReadIssue> issues;
  if (!ReadMessage(text, source, &file->package, &issues, {},
                   &file->positions)) {
    return absl::InvalidArgumentError(JoinIssues(issues));
  }
  const v1::Package& p = file->package;
  auto issue = [&](const std::string& path, std::string message) {
    const TextPosition at = FindPosition(file->positions, path);
    issues.push_back({.source = file->source,
                      .line = at.line,
                      .column = at.column,
                      .path = path,
                      .message = std::move(message)});
  };
  if (p.package().empty()) {
    issue("package", "is required");
  } else if (!engine::IsIdentifier(p.package())) {
    issue("package", absl::StrCat("\"", p.package(),
                                  "\": a letter, then letters, digits, '_' "
                                  "or '-' (at most 128)"));
  }
  auto unique = [&](absl::string_view list, const auto& items) {
    absl::flat_hash_map<std::string, int> first;
    for (int i = 0; i < items.size(); ++i) {
      const std::string at = absl::StrCat(list, "[", i, "]");
      if (items[i].name().empty()) {
        issue(at + ".name", "is required");
      } else if (auto [it, fresh] = first.emplace(items[i].name(), i); !fresh) {
        issue(
            at + ".name",
            absl::StrCat("\"", items[i].name(), "\" is also ",
                         file->Where(absl::StrCat(list, "[", it->second, "]")),
                         "; names are unique within a package"));
      }
    }
  };
  unique("factors", p.factors());
  unique("target_factors", p.target_factors());
  unique("actions", p.actions());
  unique("subtrees", p.subtrees());
  unique("resources", p.resources());
  if (!issues.empty()) return absl::InvalidArgumentError(JoinIssues(issues));
  return std::shared_ptr<const PackageFile>(std::move(file));
}

std::string AddPackageText(absl::string_view text, absl::string_view source,
                           PackageIndex* index,
                           std::shared_ptr<const PackageFile>* read) {
  absl::StatusOr<std::shared_ptr<const PackageFile>> p =
      ReadPackageText(text, source);
  if (!p.ok()) return std::string(p.status().message());
  if (read != nullptr) *read = *p;
  auto [it, fresh] = index->emplace((*p)->name(), *p);
  if (fresh) return "";
  return absl::StrCat((*p)->Where("package"), ": package: \"", (*p)->name(),
                      "\" is already defined at ",
                      it->second->Where("package"));
}

ReadIssue Composition::Locate(absl::string_view path, absl::string_view source,
                              const PositionMap* positions) const {
  ReadIssue r{.source = std::string(source), .path = std::string(path)};
  const size_t open = path.find('[');
  const size_t close = path.find(']');
  size_t index = 0;
  const PackageFile* from = nullptr;
  if (open != path.npos && close != path.npos && close > open &&
      absl::SimpleAtoi(path.substr(open + 1, close - open - 1), &index)) {
    const auto list = pieces_.find(path.substr(0, open));
    if (list != pieces_.end() && index < list->second.size()) {
      const Piece& piece = list->second[index];
      from = piece.package;
      r.path = absl::StrCat(list->first, "[", piece.index, "]",
                            path.substr(close + 1));
    }
  }
  if (from != nullptr) {
    r.source = from->source;
    positions = &from->positions;
    r.message = absl::StrCat(" (package \"", from->name(),
                             "\", composed into \"", set_name_, "\")");
  }
  if (positions != nullptr) {
    const TextPosition p = FindPosition(*positions, r.path);
    r.line = p.line;
    r.column = p.column;
  }
  return r;
}

// Composes one set; see ComposeSet.
class Composer {
 public:
  Composer(v1::BehaviourSet* set, absl::string_view source,
           const PositionMap* positions, const PackageIndex& packages,
           Composition* out, std::vector<ReadIssue>* issues)
      : set_(set),
        source_(source),
        positions_(positions),
        packages_(packages),
        out_(out),
        issues_(issues) {}

  bool Run() {
    const size_t before = issues_->size();
    out_->set_name_ = set_->name();
    std::vector<const PackageFile*> chain;
    Walk(set_->uses(), nullptr, {}, &chain);
    if (issues_->size() != before) return false;
    for (const PackageFile* p : order_) {
      out_->packages_.push_back(p->name());
      out_->held_.push_back(packages_.find(p->name())->second);
    }
    Merge("factors", &v1::Package::factors, set_->mutable_factors(), true);
    Merge("target_factors", &v1::Package::target_factors,
          set_->mutable_target_factors(), true);
    Merge("resources", &v1::Package::resources, set_->mutable_resources(),
          true);
    Merge("subtrees", &v1::Package::subtrees, set_->mutable_subtrees(), false);
    Merge("actions", &v1::Package::actions, set_->mutable_actions(), false);
    MergeEnums();
    if (issues_->size() != before) return false;
    for (const UseAt& u : uses_) Override(u);
    if (issues_->size() != before) return false;
    for (const UseAt& u : uses_) CheckGate(u);
    if (issues_->size() != before) return false;
    for (const PackageFile* p : order_) Gate(p);
    WriteOrigins();
    set_->clear_uses();
    return true;
  }

 private:
  using Piece = Composition::Piece;
  // One use, where it was written: in the set (owner null) or a package.
  struct UseAt {
    const v1::PackageUse* use;
    const PackageFile* owner;
    std::string path;  // "uses[0]"
    const PackageFile* used;
  };
  struct Reach {
    // The `when`s on the way to it that every use reaching it shares.
    std::vector<std::string> gates;
  };

  // Where the set (owner null) or a package was written.
  std::string SourceOf(const PackageFile* owner) const {
    return owner != nullptr ? owner->source : std::string(source_);
  }
  TextPosition PositionOf(const PackageFile* owner,
                          absl::string_view path) const {
    const PositionMap* positions =
        owner != nullptr ? &owner->positions : positions_;
    return positions == nullptr ? TextPosition{}
                                : FindPosition(*positions, path);
  }

  std::string Where(const PackageFile* owner, absl::string_view path) const {
    const TextPosition p = PositionOf(owner, path);
    return p.line > 0 ? absl::StrCat(SourceOf(owner), ":", p.line)
                      : SourceOf(owner);
  }

  void Issue(const PackageFile* owner, const std::string& path,
             std::string message) {
    const TextPosition at = PositionOf(owner, path);
    issues_->push_back({.source = SourceOf(owner),
                        .line = at.line,
                        .column = at.column,
                        .path = path,
                        .message = std::move(message)});
  }

  // Follows `uses` depth first: each package reached once, after the
  // package (or set) using it; `gates` are the `when`s on the way.
  void Walk(const RepeatedPtrField<v1::PackageUse>& uses,
            const PackageFile* owner, const std::vector<std::string>& gates,
            std::vector<const PackageFile*>* chain) {
    for (int u = 0; u < uses.size(); ++u) {
      const v1::PackageUse& use = uses[u];
      const std::string at = absl::StrCat("uses[", u, "]");
      if (use.package().empty()) {
        Issue(owner, at + ".package", "is required");
        continue;
      }
      const auto found = packages_.find(use.package());
      if (found == packages_.end()) {
        Issue(owner, at + ".package",
              engine::UnknownNameMessage("package", use.package(),
                                         SortedKeys(packages_)));
        continue;
      }
      const PackageFile* p = found->second.get();
      if (std::find(chain->begin(), chain->end(), p) != chain->end()) {
        std::vector<std::string> names;
        for (const PackageFile* c : *chain) names.push_back(c->name());
        names.push_back(p->name());
        Issue(owner, at + ".package",
              absl::StrCat("packages use each other in a cycle: ",
                           absl::StrJoin(names, " -> ")));
        continue;
      }
      std::vector<std::string> g = gates;
      if (!use.when().empty() &&
          std::find(g.begin(), g.end(), use.when()) == g.end()) {
        g.push_back(use.when());
      }
      uses_.push_back({&use, owner, at, p});
      auto [reach, fresh] = reached_.try_emplace(p);
      if (!fresh) {
        // Composed once: gated only by what gates every use of it (a
        // package used on its own and under a gated one is not gated).
        std::vector<std::string>& kept = reach->second.gates;
        kept.erase(std::remove_if(kept.begin(), kept.end(),
                                  [&](const std::string& x) {
                                    return std::find(g.begin(), g.end(), x) ==
                                           g.end();
                                  }),
                   kept.end());
        continue;
      }
      reach->second = {g};
      order_.push_back(p);
      chain->push_back(p);
      Walk(p->package.uses(), p, g, chain);
      chain->pop_back();
    }
  }

  // Where element `i` of composed list `list` was written.
  std::string PieceWhere(absl::string_view list, const Piece& piece) const {
    return Where(piece.package, absl::StrCat(list, "[", piece.index, "]"));
  }

  // Appends each reached package's `field` to `to`. Declarations (factors,
  // resources) of one name merge: the set's own wins, packages must agree.
  // Other pieces (actions, subtrees) must have names of their own.
  template <typename T>
  void Merge(const std::string& list,
             const RepeatedPtrField<T>& (v1::Package::*field)() const,
             RepeatedPtrField<T>* to, bool declaration) {
    std::vector<Piece>& pieces = out_->pieces_[list];
    absl::flat_hash_map<std::string, int> by_name;
    for (int i = 0; i < to->size(); ++i) {
      pieces.push_back({nullptr, i});
      by_name.emplace((*to)[i].name(), i);
    }
    for (const PackageFile* p : order_) {
      const RepeatedPtrField<T>& items = (p->package.*field)();
      for (int k = 0; k < items.size(); ++k) {
        const T& item = items[k];
        const std::string at = absl::StrCat(list, "[", k, "]");
        const auto seen = by_name.find(item.name());
        if (seen == by_name.end()) {
          by_name.emplace(item.name(), to->size());
          *to->Add() = item;
          pieces.push_back({p, k});
          continue;
        }
        const Piece& first = pieces[seen->second];
        if (declaration &&
            (first.package == nullptr ||
             Substance(item) == Substance((*to)[seen->second]))) {
          continue;  // the set's own declaration, or the same one
        }
        Issue(p, at + ".name",
              declaration
                  ? absl::StrCat("\"", item.name(),
                                 "\" is declared differently at ",
                                 PieceWhere(list, first), "; declare it in \"",
                                 set_->name(),
                                 "\" to choose (the set's own declaration "
                                 "wins)")
                  : absl::StrCat("\"", item.name(), "\" is also defined at ",
                                 PieceWhere(list, first), ", and \"",
                                 set_->name(), "\" composes both"));
      }
    }
  }

  void MergeEnums() {
    for (const PackageFile* p : order_) {
      for (const std::string& name : SortedKeys(p->package.enums())) {
        const int32_t value = p->package.enums().at(name);
        const auto seen = enum_from_.find(name);
        if (set_->enums().contains(name) && seen == enum_from_.end()) {
          continue;  // the set's own
        }
        if (seen != enum_from_.end()) {
          if (set_->enums().at(name) != value) {
            Issue(p, absl::StrCat("enums[\"", name, "\"]"),
                  absl::StrCat(name, " is ", value, " here but ",
                               set_->enums().at(name), " at ",
                               seen->second->Where(
                                   absl::StrCat("enums[\"", name, "\"]"))));
          }
          continue;
        }
        (*set_->mutable_enums())[name] = value;
        enum_from_[name] = p;
      }
    }
  }

  // The composed index of `package`'s action `name`, or -1.
  int FindAction(const PackageFile* package, absl::string_view name) const {
    const std::vector<Piece>& pieces = out_->pieces_.at("actions");
    for (size_t i = 0; i < pieces.size(); ++i) {
      if (pieces[i].package == package && set_->actions(i).name() == name) {
        return static_cast<int>(i);
      }
    }
    return -1;
  }

  void Override(const UseAt& u) {
    for (const std::string& name : SortedKeys(u.use->actions())) {
      const v1::ActionOverride& o = u.use->actions().at(name);
      const std::string at = absl::StrCat(u.path, ".actions[\"", name, "\"]");
      const int i = FindAction(u.used, name);
      if (i < 0) {
        std::vector<std::string> known;
        for (const v1::Action& a : u.used->package.actions()) {
          known.push_back(a.name());
        }
        Issue(u.owner, at,
              absl::StrCat(
                  "package \"", u.used->name(), "\" (", u.used->source,
                  ") has no ",
                  engine::UnknownNameMessage("action", name, known).substr(8)));
        continue;
      }
      v1::Action* a = set_->mutable_actions(i);
      std::vector<std::string>& changed = overridden_[i];
      if (o.has_weight()) {
        if (!(o.weight() >= 0) || !std::isfinite(o.weight())) {
          Issue(u.owner, at + ".weight",
                absl::StrCat("must be >= 0, got ", o.weight()));
        }
        a->set_weight(o.weight());
        changed.push_back("weight");
      }
      if (o.has_rank()) {
        a->set_rank(o.rank());
        changed.push_back("rank");
      }
      if (o.has_cooldown_seconds()) {
        if (!(o.cooldown_seconds() >= 0) ||
            !std::isfinite(o.cooldown_seconds())) {
          Issue(u.owner, at + ".cooldown_seconds",
                absl::StrCat("must be >= 0, got ", o.cooldown_seconds()));
        }
        a->set_cooldown_seconds(o.cooldown_seconds());
        changed.push_back("cooldown_seconds");
      }
      for (const std::string& c : SortedKeys(o.considerations())) {
        OverrideConsideration(u, at, a, c, o.considerations().at(c), &changed);
      }
    }
  }

  void OverrideConsideration(const UseAt& u, const std::string& action_at,
                             v1::Action* a, const std::string& name,
                             const v1::ConsiderationOverride& o,
                             std::vector<std::string>* changed) {
    const std::string at =
        absl::StrCat(action_at, ".considerations[\"", name, "\"]");
    std::vector<std::string> known;
    v1::Consideration* c = nullptr;
    for (v1::Consideration& k : *a->mutable_considerations()) {
      known.push_back(k.name());
      if (k.name() == name) c = &k;
    }
    if (c == nullptr) {
      Issue(
          u.owner, at,
          absl::StrCat("action \"", a->name(), "\" of package \"",
                       u.used->name(), "\" (", u.used->source, ") has no ",
                       engine::UnknownNameMessage("consideration", name, known)
                           .substr(8)));
      return;
    }
    if (o.has_weight()) {
      if (!(o.weight() >= 0 && o.weight() <= 1)) {
        Issue(u.owner, at + ".weight",
              absl::StrCat("must be in 0..1, got ", o.weight()));
      }
      c->set_weight(o.weight());
      changed->push_back(absl::StrCat("considerations.", name, ".weight"));
    }
    if (o.has_range()) {
      for (const auto& [bound, has, value] :
           {std::tuple{"min", o.range().has_min(), o.range().min()},
            std::tuple{"max", o.range().has_max(), o.range().max()}}) {
        if (!has) continue;
        if (!std::isfinite(value)) {
          Issue(u.owner, absl::StrCat(at, ".range.", bound),
                absl::StrCat("must be a finite number, got ", value));
        }
      }
      if (o.range().has_min()) c->mutable_range()->set_min(o.range().min());
      if (o.range().has_max()) c->mutable_range()->set_max(o.range().max());
      changed->push_back(absl::StrCat("considerations.", name, ".range"));
    }
  }

  // A use's gate reads a flag, under an aggregation where 0 vetoes.
  void CheckGate(const UseAt& u) {
    if (u.use->when().empty()) return;
    const std::string& flag = u.use->when();
    const std::string at = u.path + ".when";
    const auto f =
        std::find_if(set_->factors().begin(), set_->factors().end(),
                     [&](const v1::Factor& x) { return x.name() == flag; });
    if (f == set_->factors().end()) {
      std::vector<std::string> known;
      for (const v1::Factor& x : set_->factors()) known.push_back(x.name());
      Issue(u.owner, at, engine::UnknownNameMessage("factor", flag, known));
    } else if (f->kind() != v1::FACTOR_KIND_FLAG) {
      Issue(u.owner, at,
            absl::StrCat("\"", flag,
                         "\" is not a flag; a gate reads a factor of kind: "
                         "flag (0 or 1)"));
    } else if (set_->scoring().aggregation() == v1::AGGREGATION_WEIGHTED_SUM) {
      Issue(u.owner, at,
            absl::StrCat("\"", set_->name(),
                         "\" aggregates by weighted_sum, where a 0 does not "
                         "veto; a gate needs product or min"));
    }
  }

  // The gates of `package`'s actions: for each flag, a gate consideration
  // (not counted in the compensation's n, so a gated action scores as the
  // package writes it while the flag is set) that vetoes while it is 0.
  void Gate(const PackageFile* package) {
    const std::vector<Piece>& pieces = out_->pieces_.at("actions");
    for (const std::string& flag : reached_.at(package).gates) {
      for (size_t i = 0; i < pieces.size(); ++i) {
        if (pieces[i].package != package) continue;
        v1::Consideration* c = set_->mutable_actions(i)->add_considerations();
        c->set_name(absl::StrCat("when_", flag));
        c->set_factor(flag);
        c->mutable_range()->set_min(0);
        c->mutable_range()->set_max(1);
        c->mutable_curve()->mutable_step()->set_threshold(0.5);
        c->set_gate(true);
        overridden_[i].push_back(absl::StrCat("gate ", flag));
      }
    }
  }

  void WriteOrigins() {
    // Piece `piece` (of the set if `from` is null), written at `path`.
    auto add = [&](std::string piece, const PackageFile* from,
                   absl::string_view path) {
      v1::Origin* o = set_->add_origins();
      o->set_piece(std::move(piece));
      if (from != nullptr) o->set_package(from->name());
      o->set_file(SourceOf(from));
      o->set_line(PositionOf(from, path).line);
    };
    const auto each = [&](absl::string_view list, const auto& items) {
      const std::vector<Piece>& pieces = out_->pieces_.at(std::string(list));
      for (int i = 0; i < items.size(); ++i) {
        add(absl::StrCat(list, ".", items[i].name()), pieces[i].package,
            absl::StrCat(list, "[", pieces[i].index, "]"));
      }
    };
    each("factors", set_->factors());
    each("target_factors", set_->target_factors());
    each("resources", set_->resources());
    each("subtrees", set_->subtrees());
    const int first_action = set_->origins_size();
    each("actions", set_->actions());
    for (const auto& [i, changed] : overridden_) {
      for (const std::string& what : changed) {
        set_->mutable_origins(first_action + i)->add_overridden(what);
      }
    }
    for (const std::string& name : SortedKeys(set_->enums())) {
      const auto from = enum_from_.find(name);
      add(absl::StrCat("enums.", name),
          from != enum_from_.end() ? from->second : nullptr,
          absl::StrCat("enums[\"", name, "\"]"));
    }
  }

  v1::BehaviourSet* set_;
  absl::string_view source_;
  const PositionMap* positions_;
  const PackageIndex& packages_;
  Composition* out_;
  std::vector<ReadIssue>* issues_;
  std::vector<const PackageFile*> order_;
  absl::flat_hash_map<const PackageFile*, Reach> reached_;
  std::vector<UseAt> uses_;
  std::map<std::string, const PackageFile*> enum_from_;
  std::map<int, std::vector<std::string>> overridden_;  // by composed action
};

bool ComposeSet(v1::BehaviourSet* set, absl::string_view source,
                const PositionMap* positions, const PackageIndex& packages,
                Composition* composition, std::vector<ReadIssue>* issues) {
  if (set->uses().empty()) return true;
  return Composer(set, source, positions, packages, composition, issues).Run();
}

}  // namespace utilityd::loader
