#include "server/src/service_metrics.h"

#include <prometheus/registry.h>

#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "server/src/config_store.h"
#include "utilityd/metrics/metrics.h"

namespace utilityd::server {
namespace {

// The exposition's lines, each histogram's sum apart: summed in another
// order, it may differ in its last digits.
struct Exposition {
  std::vector<std::string> lines;
  std::vector<double> sums;
};

Exposition Expose(prometheus::Registry& registry) {
  Exposition e;
  for (absl::string_view line :
       absl::StrSplit(metrics::TextExposition({&registry}), '\n')) {
    const size_t space = line.rfind(' ');
    if (absl::StrContains(line, "_sum{") && space != line.npos) {
      e.sums.push_back(std::stod(std::string(line.substr(space + 1))));
      e.lines.emplace_back(line.substr(0, space));
    } else {
      e.lines.emplace_back(line);
    }
  }
  return e;
}

// A block's rows counted at once (AddRows) leave every metric as counting
// them one by one would: decisions by action, no action, switches (not an
// agent's first decision), the score and margin histograms; failed rows
// are not counted, and rows map to their block rows.
TEST(DecisionTallyTest, ABlocksRowsCountAsOneByOne) {
  ConfigStore store("examples/behaviour_sets");
  ASSERT_TRUE(store.Reload().ok());
  const auto set = store.Current()->catalog.Find("arena_mage");
  ASSERT_NE(set, nullptr);
  const int actions = set->compiled.action_count();
  std::mt19937 rng(17);
  std::uniform_int_distribution<int> action(-1, actions - 1);
  std::uniform_real_distribution<float> score(0.0f, 1.2f);
  const size_t rows_in_block = 700;
  std::vector<int32_t> current(rows_in_block);
  for (int32_t& c : current) c = action(rng);
  std::vector<int> rows;
  std::vector<engine::BatchDecision> decisions;
  std::vector<absl::Status> errors;
  for (size_t r = 0; r < rows_in_block; r += 1 + r % 2) {
    rows.push_back(static_cast<int>(r));
    engine::BatchDecision d;
    d.action = action(rng);
    d.score = score(rng);
    d.runner_up_action = action(rng);
    d.runner_up_score = d.score * 0.75f;
    d.switched = rng() % 3 == 0;
    decisions.push_back(d);
    errors.push_back(r % 37 == 5 ? absl::InvalidArgumentError("bad")
                                 : absl::OkStatus());
  }

  prometheus::Registry bulk_registry, one_registry;
  ServiceMetrics bulk(&bulk_registry), one(&one_registry);
  DecisionTally in_bulk, by_one;
  in_bulk.AddRows(bulk.ForSet(*set, v1::VARIANT_LIVE), rows, current, decisions,
                  errors);
  in_bulk.Flush(bulk);
  const SetMetrics& m = one.ForSet(*set, v1::VARIANT_LIVE);
  int counted = 0;
  for (size_t g = 0; g < decisions.size(); ++g) {
    if (!errors[g].ok()) continue;
    engine::AgentInput in;
    in.current_action = current[static_cast<size_t>(rows[g])];
    by_one.Add(m, in, decisions[g]);
    ++counted;
  }
  by_one.Flush(one);
  ASSERT_GT(counted, 300);

  const Exposition a = Expose(bulk_registry), b = Expose(one_registry);
  EXPECT_EQ(a.lines, b.lines);
  ASSERT_EQ(a.sums.size(), b.sums.size());
  for (size_t k = 0; k < a.sums.size(); ++k) {
    EXPECT_NEAR(a.sums[k], b.sums[k], 1e-9 * (1 + std::abs(b.sums[k])));
  }
  // Not vacuous: the decisions were counted.
  bool seen = false;
  for (const std::string& line : a.lines) {
    seen |= absl::StartsWith(line, "utilityd_decisions_total{") &&
            !absl::EndsWith(line, " 0");
  }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace utilityd::server
