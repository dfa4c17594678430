// Fuzzes the behaviour-set loader: arbitrary text as YAML or JSON through
// parsing, defaults, validation and compilation; sets that load are then
// scored (their scenarios and one agent at mid-range factors) and explained.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "utilityd/codec/scenarios.h"
#include "utilityd/engine/decide.h"
#include "utilityd/engine/explain.h"
#include "utilityd/loader/set_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  auto set = utilityd::loader::LoadSetText(text, "fuzz.yaml");
  if (!set.ok()) return 0;
  (void)utilityd::codec::CheckScenarios(**set);
  const utilityd::engine::CompiledBehaviourSet& c = (*set)->compiled;
  std::vector<float> factors;
  for (const auto& f : c.factors()) factors.push_back((f.min + f.max) / 2);
  std::vector<float> target;
  for (const auto& f : c.target_factors()) target.push_back(f.max);
  const std::vector<utilityd::engine::TargetInput> targets = {{target},
                                                              {target}};
  utilityd::engine::Decision d;
  for (int p = -1; p < c.personality_count(); ++p) {
    if (utilityd::engine::Decide(c,
                                 {.factors = factors,
                                  .current_action = 0,
                                  .targets = targets,
                                  .seed = 1,
                                  .personality = p},
                                 utilityd::engine::ExplainLevel::kFull, &d)
            .ok()) {
      (void)utilityd::engine::FormatSummary(c, d, {"a", "b"});
    }
  }
  return 0;
}
