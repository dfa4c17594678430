#include "bench/catalog_gen.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "utilityd/loader/proto_writer.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd::bench {
namespace {

namespace fs = std::filesystem;

constexpr int kFactorPool = 24;

// Factor `i` of the pool, declared alike by every package using it.
std::string FactorLine(int i) {
  return absl::StrFormat("  - {name: f%02d, min: 0, max: %d}\n", i,
                         10 * (i % 5 + 1));
}

// Consideration `j` of an action over factor `f`: the curve kinds in turn.
std::string Consideration(int j, int f, int variant) {
  static const char* const kCurves[] = {
      "{linear: {}}",
      "{polynomial: {exponent: 2}}",
      "{logistic: {steepness: 8, midpoint: 0.5}}",
      "{linear: {}, invert: true}",
      "{normal: {mean: 0.5, stddev: 0.2}}",
      "{smoothstep: {}}",
  };
  return absl::StrFormat(
      "      - {name: c%d, factor: f%02d, curve: %s, output: {min: %.2f}}\n", j,
      f, kCurves[(variant + j) % 6], 0.1 * ((variant + j) % 4));
}

std::string Package(int k) {
  std::string text = absl::StrFormat("package: pkg_%02d\nfactors:\n", k);
  int factors[3];
  for (int j = 0; j < 3; ++j) {
    factors[j] = (k * 3 + j) % kFactorPool;
    text += FactorLine(factors[j]);
  }
  text += "actions:\n";
  for (int a = 0; a < 3; ++a) {
    absl::StrAppendFormat(&text, "  - name: p%02d_a%d\n", k, a);
    text += a == 0 ? kEditableLine
                   : absl::StrFormat("    weight: %.2f\n", 0.6 + 0.1 * a);
    text += "    considerations:\n";
    for (int j = 0; j < 2; ++j) {
      text += Consideration(j, factors[(a + j) % 3], k + a);
    }
  }
  return text;
}

std::string Archetype(int i, const CatalogShape& shape, std::mt19937* rng) {
  std::vector<int> all(shape.packages);
  for (int k = 0; k < shape.packages; ++k) all[k] = k;
  std::shuffle(all.begin(), all.end(), *rng);
  const int n = std::min(shape.uses_per_archetype, shape.packages);
  std::string text = absl::StrFormat(
      "name: npc_%03d\nfactors:\n  - {name: armed, kind: flag}\nuses:\n", i);
  for (int u = 0; u < n; ++u) {
    absl::StrAppendFormat(&text, "  - package: pkg_%02d\n", all[u]);
    if (u == 0) {
      absl::StrAppendFormat(&text,
                            "    actions:\n      p%02d_a1: {weight: %.1f}\n",
                            all[u], 0.5 + 0.1 * (i % 5));
    }
    if (u == n - 1 && i % 3 == 0) text += "    when: armed\n";
  }
  absl::StrAppendFormat(&text, "actions:\n  - {name: idle, weight: 0.05}\n");
  return text;
}

absl::Status WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  return out ? absl::OkStatus()
             : absl::InternalError(
                   absl::StrCat(path.string(), ": not written"));
}

}  // namespace

absl::Status WriteCatalog(const CatalogShape& shape, const std::string& dir) {
  const fs::path composed = fs::path(dir) / "composed";
  const fs::path flat = fs::path(dir) / "flat";
  std::error_code ec;
  fs::create_directories(composed, ec);
  fs::create_directories(flat, ec);
  if (ec) return absl::InternalError(absl::StrCat(dir, ": ", ec.message()));
  for (int k = 0; k < shape.packages; ++k) {
    const absl::Status s =
        WriteText(composed / absl::StrFormat("pkg_%02d.yaml", k), Package(k));
    if (!s.ok()) return s;
  }
  std::mt19937 rng(shape.seed);
  for (int i = 0; i < shape.archetypes; ++i) {
    const absl::Status s =
        WriteText(composed / absl::StrFormat("npc_%03d.yaml", i),
                  Archetype(i, shape, &rng));
    if (!s.ok()) return s;
  }
  absl::StatusOr<loader::Catalog> catalog =
      loader::LoadCatalog({composed.string()});
  if (!catalog.ok()) return catalog.status();
  for (const auto& [name, set] : catalog->sets()) {
    v1::BehaviourSet plain = set->definition;
    plain.clear_revision();
    plain.clear_origins();
    const absl::Status s =
        WriteText(flat / (name + ".yaml"), loader::WriteMessageYaml(plain));
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace utilityd::bench
