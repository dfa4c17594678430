# The engine's suites that need nothing but the engine (and GoogleTest).
# Registered by tests/CMakeLists.txt in the whole project, and by
# engine/CMakeLists.txt when the engine is built alone (`cmake -S engine`),
# so that the engine-only build runs them too (engine_builds_with_abseil_only).
# Needs the target utilityd_testing and UTILITYD_REPO, the repository root.
set(dir ${UTILITYD_REPO}/tests/engine)
utilityd_cc_test(NAME curve_test SRCS ${dir}/curve_test.cc
  DEPS utilityd::engine utilityd_testing LABELS unit)
utilityd_cc_test(NAME curve_math_test SRCS ${dir}/curve_math_test.cc
  DEPS utilityd::engine utilityd_testing hwy::hwy LABELS unit)
utilityd_cc_test(NAME compiled_set_test SRCS ${dir}/compiled_set_test.cc
  DEPS utilityd::engine utilityd_testing LABELS unit)
utilityd_cc_test(NAME decide_test SRCS ${dir}/decide_test.cc
  DEPS utilityd::engine utilityd_testing LABELS unit)
utilityd_cc_test(NAME coordination_test SRCS ${dir}/coordination_test.cc
  DEPS utilityd::engine utilityd_testing LABELS unit)
utilityd_cc_test(NAME error_reason_test SRCS ${dir}/error_reason_test.cc
  DEPS utilityd::engine utilityd_testing LABELS unit)
utilityd_cc_test(NAME explain_test SRCS ${dir}/explain_test.cc
  DEPS utilityd::engine utilityd_testing LABELS unit)
