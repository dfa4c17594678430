// A generated catalog at MMO scale: packages of shared content and the
// archetypes composing them (docs/FORMAT.md, "Packages and archetypes"),
// and the same archetypes written flat, for bench/catalog_bench.cc and its
// test.
//
//   WriteCatalog({.packages = 40, .archetypes = 500}, "/tmp/c");
//   // /tmp/c/composed: pkg_00.yaml .. pkg_39.yaml, npc_000.yaml ..
//   // /tmp/c/flat:     npc_000.yaml .. (each the composed set, written out)
#ifndef UTILITYD_BENCH_CATALOG_GEN_H_
#define UTILITYD_BENCH_CATALOG_GEN_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace utilityd::bench {

struct CatalogShape {
  int packages = 40;
  int archetypes = 500;
  int uses_per_archetype = 6;  // distinct packages each archetype composes
  uint32_t seed = 2026;
};

// Writes `shape`'s catalog under `dir` (created): `composed/` holds the
// packages and the archetypes using them, `flat/` each archetype as the one
// set it composes to (loaded from `composed/` and written back as YAML, so
// the two load to the same revisions). Every third archetype gates its last
// use on its own flag `armed`; every archetype overrides one weight.
absl::Status WriteCatalog(const CatalogShape& shape, const std::string& dir);

// The package file's line WriteCatalog writes as `    weight: 1` for the
// first action of every package: the one-line edit a reload benchmark
// makes.
inline constexpr char kEditableLine[] = "    weight: 1\n";

}  // namespace utilityd::bench

#endif  // UTILITYD_BENCH_CATALOG_GEN_H_
