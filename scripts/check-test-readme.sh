#!/usr/bin/env bash
# Fails when tests/README.md leaves out a suite tests/CMakeLists.txt (or
# tests/engine/suites.cmake, which it includes) registers, or names one that no longer exists: each ctest suite name
# (utilityd_cc_test, add_test, the fuzz replays) must appear in the README's
# table in backticks, exactly or through a `prefix_*` row.
#
#   scripts/check-test-readme.sh [REPO_ROOT]
set -euo pipefail
set -f  # names like utilityctl_* are patterns, never file globs
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cmake_files=("$root/tests/CMakeLists.txt" "$root/tests/engine/suites.cmake")
readme=$root/tests/README.md

suites=$( {
  grep -ohE '(utilityd_cc_test|add_test)\(NAME [A-Za-z0-9_]+' "${cmake_files[@]}" |
    awk '{print $2}'
  grep -ohE '^ *utilityd_fuzz_replay\([a-z_]+' "${cmake_files[@]}" |
    sed 's/.*(/fuzz_replay_/'
} | sort -u)
named=$(grep -oE '`[A-Za-z0-9_*]+`' "$readme" | tr -d '`' | sort -u)

# Does README name $1 (exact, or `prefix_*`) match suite $2?
matches() {
  case $1 in
    *'*') [[ $2 == "${1%\*}"* ]] ;;
    *) [[ $2 == "$1" ]] ;;
  esac
}
# Is some name of $2 (a list) matched with $1 by `matches` ($3: which side)?
any() {
  local x
  for x in $2; do
    if [ "$3" = name ]; then matches "$x" "$1" && return 0
    else matches "$1" "$x" && return 0; fi
  done
  return 1
}

missing=0
for s in $suites; do
  any "$s" "$named" name ||
    { echo "tests/README.md: suite $s is not described" >&2; missing=1; }
done
# Rows naming a suite that is gone (names ending in _test, _e2e or starting
# with fuzz_replay_/utilityctl_ that no suite matches).
for n in $(grep -E '^\| `' "$readme" | grep -oE '^\| [^|]+' | grep -oE '`[A-Za-z0-9_*]+`' | tr -d '`'); do
  any "$n" "$suites" suite ||
    { echo "tests/README.md: names $n, which no suite registers" >&2; missing=1; }
done
[ $missing -eq 0 ] && echo "tests/README.md describes all $(wc -w <<<"$suites") suites"
exit $missing
