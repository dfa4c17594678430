#!/usr/bin/env bash
# Fails when tests/README.md leaves out a suite tests/CMakeLists.txt
# registers, or names one that no longer exists: each ctest suite name
# (utilityd_cc_test, add_test, the fuzz replays) must appear in the README's
# table in backticks, exactly or through a `prefix_*` row.
#
#   scripts/check-test-readme.sh [REPO_ROOT]
set -euo pipefail
set -f  # names like utilityctl_* are patterns, never file globs
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cmake_file=$root/tests/CMakeLists.txt
readme=$root/tests/README.md

suites=$( {
  grep -oE '(utilityd_cc_test|add_test)\(NAME [A-Za-z0-9_]+' "$cmake_file" |
    awk '{print $2}'
  grep -oE '^utilityd_fuzz_replay\([a-z_]+' "$cmake_file" |
    sed 's/.*(/fuzz_replay_/'
} | sort -u)
named=$(grep -oE '`[A-Za-z0-9_*]+`' "$readme" | tr -d '`' | sort -u)

missing=0
for s in $suites; do
  found=false
  for n in $named; do
    case $n in
      *'*') [[ $s == "${n%\*}"* ]] && found=true ;;
      *) [[ $s == "$n" ]] && found=true ;;
    esac
  done
  $found || { echo "tests/README.md: suite $s is not described" >&2; missing=1; }
done
# Rows naming a suite that is gone (names ending in _test, _e2e or starting
# with fuzz_replay_/utilityctl_ that no suite matches).
for n in $(grep -E '^\| `' "$readme" | grep -oE '^\| [^|]+' | grep -oE '`[A-Za-z0-9_*]+`' | tr -d '`'); do
  match=false
  for s in $suites; do
    case $n in
      *'*') [[ $s == "${n%\*}"* ]] && match=true ;;
      *) [[ $s == "$n" ]] && match=true ;;
    esac
  done
  $match || { echo "tests/README.md: names $n, which no suite registers" >&2; missing=1; }
done
[ $missing -eq 0 ] && echo "tests/README.md describes all $(wc -w <<<"$suites") suites"
exit $missing
