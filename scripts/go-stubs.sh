#!/usr/bin/env bash
# The Go SDK's generated messages and stubs (client_sdk/go/proto/utilitydv1),
# from proto/ with Debian's protoc-gen-go and protoc-gen-go-grpc. They are
# kept in the repository, as Go modules are used from source;
# `scripts/go-stubs.sh --check` (ctest go_stubs_current) fails when they
# differ from what proto/ generates now.
#
#   scripts/go-stubs.sh [--check]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/client_sdk/go/proto/utilitydv1
module=github.com/utilityd/utilityd/client_sdk/go/proto/utilitydv1
protos=(utilityd/v1/behaviour_set.proto utilityd/v1/decision_service.proto)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
maps=()
for p in "${protos[@]}"; do maps+=("M$p=$module"); done
go_opts=(--go_opt=paths=source_relative)
grpc_opts=(--go-grpc_opt=paths=source_relative)
for m in "${maps[@]}"; do
  go_opts+=("--go_opt=$m")
  grpc_opts+=("--go-grpc_opt=$m")
done
protoc -I "$root/proto" --go_out="$work" "${go_opts[@]}" \
  --go-grpc_out="$work" "${grpc_opts[@]}" "${protos[@]}"
if [ "${1:-}" = --check ]; then
  if ! diff -r "$work/utilityd/v1" "$out" >/dev/null; then
    diff -r "$work/utilityd/v1" "$out" | head -20 >&2
    echo "client_sdk/go/proto/utilitydv1 is out of date: run scripts/go-stubs.sh" >&2
    exit 1
  fi
  echo "the Go stubs match proto/"
  exit 0
fi
mkdir -p "$out"
cp "$work"/utilityd/v1/*.go "$out/"
