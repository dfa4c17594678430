#!/usr/bin/env bash
# Checks that each layer includes headers only from the layers it may use
# (README.md, "Layout"): no folder includes a header from a folder above it.
#   scripts/check-layers.sh [REPO]     exits 1 and names each offending line
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

# The layer a header belongs to, from its include path.
layer_of() {
  case "$1" in
    utilityd/base/*) echo base ;;
    utilityd/engine/*) echo engine ;;
    utilityd/v1/* | grpc/health/*) echo proto ;;
    utilityd/loader/*) echo loader ;;
    utilityd/codec/*) echo codec ;;
    utilityd/replay/*) echo replay ;;
    utilityd/analysis/*) echo analysis ;;
    utilityd/metrics/*) echo metrics ;;
    utilityd/client/*) echo client_sdk ;;
    server/*) echo server ;;
    ctl/*) echo ctl ;;
    *) echo outside ;;  # Abseil, the standard library, gRPC, ...
  esac
}

# What each layer may include besides itself and outside libraries.
declare -A allowed=(
  [base]=""
  [engine]=""
  [loader]="base engine proto"
  [codec]="base engine proto loader"
  [replay]="base engine proto loader codec"
  [analysis]="base engine proto loader codec"
  [metrics]="base"
  [client_sdk]="base proto"
  [server]="base engine proto loader codec replay analysis metrics"
  [ctl]="base engine proto loader codec replay analysis client_sdk"
)

status=0
for layer in "${!allowed[@]}"; do
  [ -d "$layer" ] || { echo "check-layers: no folder $layer" >&2; exit 1; }
  while IFS=: read -r file line include; do
    header=$(sed -E 's/^#include "([^"]+)".*/\1/' <<<"$include")
    used=$(layer_of "$header")
    [ "$used" = outside ] || [ "$used" = "$layer" ] && continue
    if [[ " ${allowed[$layer]} " != *" $used "* ]]; then
      echo "$file:$line: $layer may not include $header ($used)"
      status=1
    fi
  done < <(grep -rn --include='*.h' --include='*.cc' '^#include "' "$layer" || true)
done
# The engine's rooms (engine/src/<room>/, each README says the same): what
# each may include of the others, by path relative to engine/src.
declare -A room_allowed=(
  [curves]=""
  [set]="curves coordination"
  [scoring]="curves set"
  [tree]="curves set scoring"
  [coordination]=""
  [sensitivity]="curves set scoring tree"
  [assembly]="set tree"
)
for room in "${!room_allowed[@]}"; do
  [ -d "engine/src/$room" ] || { echo "check-layers: no room engine/src/$room" >&2; exit 1; }
done
for dir in engine/src/*/; do
  room=$(basename "$dir")
  [ -n "${room_allowed[$room]+x}" ] ||
    { echo "check-layers: engine/src/$room is not a known room"; status=1; continue; }
  while IFS=: read -r file line include; do
    header=$(sed -E 's/^#(include|define HWY_TARGET_INCLUDE) "([^"]+)".*/\2/' <<<"$include")
    # A public header that is one room's API counts as that room (the rest:
    # the set, definitions, errors, random, are for every room).
    case "$header" in
      utilityd/engine/curve.h) used=curves ;;
      utilityd/engine/batch.h | utilityd/engine/decide.h | utilityd/engine/explain.h) used=scoring ;;
      utilityd/engine/tree.h) used=tree ;;
      utilityd/engine/coordination.h) used=coordination ;;
      utilityd/engine/sensitivity.h) used=sensitivity ;;
      *) used=${header%%/*} ;;
    esac
    [ "$used" = "$header" ] && { echo "$file:$line: $header: name the room (e.g. curves/$header)"; status=1; continue; }
    [ -n "${room_allowed[$used]+x}" ] || continue  # utilityd/, absl/, hwy/
    [ "$used" = "$room" ] && continue
    if [[ " ${room_allowed[$room]} " != *" $used "* ]]; then
      echo "$file:$line: engine room $room may not include $header ($used)"
      status=1
    fi
  done < <(grep -rnE --include='*.h' --include='*.cc' '^#(include|define HWY_TARGET_INCLUDE) "' "$dir" || true)
done
if compgen -G "engine/src/*.cc" >/dev/null || compgen -G "engine/src/*.h" >/dev/null; then
  echo "check-layers: engine/src holds files outside a room:" engine/src/*.{cc,h} 2>/dev/null
  status=1
fi

[ $status -eq 0 ] && echo "check-layers: every layer includes only the layers below it, every engine room only the rooms it may"
exit $status
