// Helpers shared by the analysis tests: load a set from YAML text, analyse
// it, and look up what the analysis says about one subject.
#ifndef UTILITYD_TESTS_ANALYSIS_ANALYSIS_TESTING_H_
#define UTILITYD_TESTS_ANALYSIS_ANALYSIS_TESTING_H_

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "utilityd/analysis/analysis.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd::analysis::testing {

inline std::shared_ptr<const loader::LoadedSet> Load(const std::string& yaml) {
  auto set = loader::LoadSetText(yaml, "test.yaml");
  EXPECT_TRUE(set.ok()) << set.status().message() << "\n" << yaml;
  return set.ok() ? *set : nullptr;
}

inline v1::SetAnalysis Analysed(const loader::LoadedSet& set,
                                AnalysisOptions options = {}) {
  auto a = Analyse(set, options);
  EXPECT_TRUE(a.ok()) << a.status().message();
  return a.ok() ? *a : v1::SetAnalysis();
}

// The kinds of the findings about `subject`.
inline std::vector<std::string> Kinds(const v1::SetAnalysis& a,
                                      const std::string& subject) {
  std::vector<std::string> kinds;
  for (const v1::Finding& f : a.findings()) {
    if (f.subject() == subject) kinds.push_back(f.kind());
  }
  return kinds;
}

// The entry of `list` whose `name(entry)` is `wanted`; a test failure and
// an empty entry when there is none.
template <typename List, typename Name>
const typename List::value_type& Named(const List& list,
                                       const std::string& wanted, Name name) {
  for (const auto& x : list) {
    if (name(x) == wanted) return x;
  }
  ADD_FAILURE() << "nothing named " << wanted;
  static const typename List::value_type none;
  return none;
}

}  // namespace utilityd::analysis::testing

#endif  // UTILITYD_TESTS_ANALYSIS_ANALYSIS_TESTING_H_
