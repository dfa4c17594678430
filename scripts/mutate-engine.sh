#!/usr/bin/env bash
# Mutation check of the property tests (docs/ANALYSIS.md, "How the claims
# are checked"): each mutation below changes one rule or trait of the
# engine, the tree is rebuilt, and the suite that guards that rule must
# fail. Tree rules and traits are guarded by the analysis's random-tree and
# random-set tests (what `analyse` claims against what the engine does);
# scoring rules, which the analysis reads from the engine and so follows,
# by batch_test's independent reference scorer.
#
#   scripts/mutate-engine.sh [build dir]      (default: build)
#   ONLY=regex scripts/mutate-engine.sh       the mutations so named
#
# Every file is restored afterwards, also on Ctrl-C. Takes about a minute
# a mutation on 2 cores. Exit 1 when a mutation survives.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[[ -f $build/build.ninja ]] || { echo "configure $build first (make build)" >&2; exit 2; }

backup=$(mktemp -d)
declare -A saved=()
restore_all() { for f in "${!saved[@]}"; do cp "${saved[$f]}" "$f"; done; }
trap restore_all EXIT INT TERM

# name @ file @ perl substitution @ test binary @ gtest filter
mutations=(
  "reactive sequences resume like plain ones@engine/src/tree/composite_kinds.h@s/for \(uint32_t i = !kReactive && s.running \? s.index : 0;/for (uint32_t i = s.running ? s.index : 0;/@analysis_test@TreeAnalysisTest.*:AnalysisTest.Random*"
  "plain sequences said to be reactive@engine/src/tree/composite_kinds.h@s/kReactive \? NodeOrder::kReactive : NodeOrder::kResumes/NodeOrder::kReactive/@analysis_test@TreeAnalysisTest.*:AnalysisTest.Random*"
  "sequence_with_memory said to resume@engine/src/tree/composite_kinds.h@s/NodeOrder::kKeepsPlace;/NodeOrder::kResumes;/@analysis_test@TreeAnalysisTest.*:AnalysisTest.Random*"
  "keep_running_until_failure said to decide in a tick@engine/src/tree/decorator_kinds.h@s/(kName = \"keep_running_until_failure\";\n\s*static constexpr bool kAnswersRunning = )true/\${1}false/@analysis_test@TreeAnalysisTest.*:AnalysisTest.Random*"
  "delay said to enter its child with it@engine/src/tree/decorator_kinds.h@s/(kName = \"delay\";)/\$1 static constexpr bool kChildEnteredWithIt = true;/@analysis_test@TreeAnalysisTest.*:AnalysisTest.Random*"
  "a loop of 0 answers the other status@engine/src/tree/decorator_kinds.h@s/if \(n.count == 0\) return kAgain;/if (n.count == 0) return kAgain == S::kSuccess ? S::kFailure : S::kSuccess;/@analysis_test@TreeAnalysisTest.*:AnalysisTest.Random*"
  "flips said never to answer their failure mapping@engine/src/tree/decorator_kinds.h@s/return s == S::kRunning \|\| s == kOnSuccess \|\| s == kOnFailure;/return s == S::kRunning || s == kOnSuccess;/@analysis_test@TreeAnalysisTest.*:AnalysisTest.Random*"
  "failure_if answers success@engine/src/tree/tree_tick.cc@s/if \(holds\(n.failure_if\)\) return S::kFailure;/if (holds(n.failure_if)) return S::kSuccess;/@analysis_test@TreeAnalysisTest.*:AnalysisTest.Random*"
  "weight without its neutral part@engine/include/utilityd/engine/scoring_rules.h@s/return output \* weight \+ \(1\.0f - weight\);/return output * weight;/@batch_test@*"
  "compensation modifier halved@engine/include/utilityd/engine/scoring_rules.h@s/return s \+ \(1\.0f - s\) \* modifier \* s;/return s + (1.0f - s) * 0.5f * modifier * s;/@batch_test@*"
)

survived=0 ran=0
for m in "${mutations[@]}"; do
  IFS="@" read -r name file subst binary filter <<<"$m"
  [[ -z ${ONLY:-} || $name =~ $ONLY ]] || continue
  ran=$((ran + 1))
  if [[ -z ${saved[$file]:-} ]]; then
    saved[$file]="$backup/$(echo "$file" | tr / _)"
    cp "$file" "${saved[$file]}"
  fi
  cp "${saved[$file]}" "$file"
  perl -0pi -e "$subst" "$file"
  if cmp -s "$file" "${saved[$file]}"; then
    echo "MUTATION NOT APPLIED: $name ($file): the pattern no longer matches" >&2
    exit 2
  fi
  if ! ninja -C "$build" -j2 "tests/$binary" >/dev/null 2>&1; then
    echo "caught (does not compile): $name"
  elif "$build/tests/$binary" --gtest_filter="$filter" >/dev/null 2>&1; then
    echo "SURVIVED: $name"
    survived=$((survived + 1))
  else
    echo "caught: $name"
  fi
  cp "${saved[$file]}" "$file"
done
restore_all
ninja -C "$build" -j2 >/dev/null
echo "$((ran - survived)) of $ran mutations caught"
[[ $survived -eq 0 ]]
