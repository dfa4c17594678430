#!/usr/bin/env bash
# Checks that no function of the product code (every .cc and .h outside
# tests/) is over 100 lines, counted by universal-ctags from its first line
# to its closing brace.
#   scripts/check-function-length.sh [REPO] [LIMIT]   exits 1 and names each
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
limit=${2:-100}
command -v ctags-universal >/dev/null ||
  { echo "check-function-length: needs universal-ctags (scripts/install-deps.sh)" >&2; exit 2; }
# The tracked sources; without git (an exported tree), every source but the
# build trees' (generated code) and npm's.
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$PWD" ]; then
  files=$(git ls-files '*.cc' '*.h')
else
  files=$(find . \( -name '*.cc' -o -name '*.h' \) | sed 's#^\./##')
fi
long=$(grep -vE '^(tests|build[^/]*)/|(^|/)node_modules/' <<<"$files" |
  xargs ctags-universal -x --language-force=c++ --kinds-c++=f --fields=+ne \
    --_xformat='%F:%n %e %N' 2>/dev/null |
  awk -v limit="$limit" '{ split($1, at, ":"); n = $2 - at[2] + 1;
                           if (n > limit) print $1 ": " $3 " is " n " lines" }')
if [ -n "$long" ]; then
  echo "check-function-length: functions over $limit lines:"
  echo "$long"
  exit 1
fi
echo "check-function-length: no product function is over $limit lines"
