#!/usr/bin/env bash
# Checks the product's files (every tracked source outside tests/): each is
# named by the README of its folder (the nearest one up the tree, the
# repository's own excepted; a .cc by itself or by its header of the same
# stem), and none is over LIMIT (1000) lines. Generated
# stubs (*.pb.go) are neither named nor counted.
#   scripts/check-files.sh [REPO] [LIMIT]   exits 1 and names each
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
limit=${2:-1000}
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$PWD" ]; then
  files=$(git ls-files)
else
  # Not a clone: what builds and generators leave (dist/, bin/, obj/,
  # src/gen/, all ignored by git) is not the product.
  files=$(find . -type f -not -path '*/node_modules/*' -not -path './build*' \
    -not -path '*/dist/*' -not -path '*/bin/*' -not -path '*/obj/*' \
    -not -path '*/src/gen/*' |
    sed 's#^\./##')
fi
files=$(grep -E '\.(cc|h|js|mjs|go|cs|ts|sh)$' <<<"$files" |
  grep -vE '^(tests|build[^/]*)/|(^|/)node_modules/|\.pb\.go$|\.d\.ts$' || true)
unnamed=() long=()
while IFS= read -r f; do
  [ -n "$f" ] || continue
  dir=$(dirname "$f")
  while [ "$dir" != "." ] && [ ! -f "$dir/README.md" ]; do dir=$(dirname "$dir"); done
  base=$(basename "$f")
  if [ "$dir" != "." ] && ! grep -qF "$base" "$dir/README.md" &&
    ! { [[ $base == *.cc ]] && grep -qF "${base%.cc}.h" "$dir/README.md"; }; then
    unnamed+=("$f (in $dir/README.md)")
  fi
  n=$(wc -l <"$f")
  [ "$n" -le "$limit" ] || long+=("$f: $n lines")
done <<<"$files"
status=0
if [ ${#unnamed[@]} -gt 0 ]; then
  echo "check-files: files their folder's README does not name:"
  printf '  %s\n' "${unnamed[@]}"
  status=1
fi
if [ ${#long[@]} -gt 0 ]; then
  echo "check-files: files over $limit lines:"
  printf '  %s\n' "${long[@]}"
  status=1
fi
[ $status -ne 0 ] || echo "check-files: every product file is named by its README and within $limit lines"
exit $status
