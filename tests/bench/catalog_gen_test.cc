// The generated catalog catalog_bench measures: it loads, each archetype
// composes the packages it names, and its flat twin is the same set (one
// revision), so the bench compares like with like.
#include "bench/catalog_gen.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/temp_dir.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd::bench {
namespace {

using ::utilityd::testing::IsOk;

TEST(CatalogGenTest, ArchetypesComposeToTheirFlatTwins) {
  const testing::TempDir dir("utilityd_catalog_gen");
  ASSERT_THAT(
      WriteCatalog({.packages = 8, .archetypes = 30, .uses_per_archetype = 4},
                   dir.path().string()),
      IsOk());
  auto composed = loader::LoadCatalog({(dir.path() / "composed").string()});
  auto flat = loader::LoadCatalog({(dir.path() / "flat").string()});
  ASSERT_THAT(composed, IsOk());
  ASSERT_THAT(flat, IsOk());
  EXPECT_EQ(composed->sets().size(), 30u);
  EXPECT_EQ(composed->packages().size(), 8u);
  EXPECT_EQ(flat->sets().size(), 30u);
  int gated = 0;
  for (const auto& [name, set] : composed->sets()) {
    EXPECT_EQ(set->packages.size(), 4u) << name;
    // 4 packages of 3 actions, and the archetype's own idle.
    EXPECT_EQ(set->definition.actions_size(), 13) << name;
    EXPECT_EQ(flat->Find(name)->revision(), set->revision()) << name;
    for (const auto& a : set->definition.actions()) {
      for (const auto& c : a.considerations()) gated += c.factor() == "armed";
    }
  }
  EXPECT_EQ(gated, 10 * 3);  // every third archetype gates one package
  size_t users = 0;
  for (const auto& [name, p] : composed->packages()) users += p.used_by.size();
  EXPECT_EQ(users, 30u * 4);
}

}  // namespace
}  // namespace utilityd::bench
