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
  [metrics]="base"
  [client_sdk]="base proto"
  [server]="base engine proto loader codec replay metrics"
  [ctl]="base engine proto loader codec replay client_sdk"
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
[ $status -eq 0 ] && echo "check-layers: every layer includes only the layers below it"
exit $status
