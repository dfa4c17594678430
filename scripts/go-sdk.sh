#!/usr/bin/env bash
# Runs `go` on the Go SDK offline, against Debian's Go sources
# (/usr/share/gocode/src, from the golang-*-dev packages that
# scripts/install-deps.sh installs).
#
#   scripts/go-sdk.sh BUILD_DIR DIR go-args...
#
# The SDK's go.mod is what a user's module sees (grpc and protobuf at low
# minimum versions); the build adds a workspace, BUILD_DIR/go/*.work, that
# uses the SDK and the modules in `DIR` and replaces every module the
# dependency graph names with Debian's copy, or with an empty module where
# Debian has none (modules grpc's go.mod lists but the SDK never imports).
# No go.sum can be made offline, so none is kept.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "$1") dir=$(realpath "$2")
shift 2
src=/usr/share/gocode/src
work=$build/go
mkdir -p "$work/stubs"

requires() {  # the module paths a go.mod requires
  awk '/^require \(/ { r = 1; next } r && /^\)/ { r = 0 }
       r && NF { print $1 } /^require [^(]/ { print $2 }' "$1"
}
uses=("$root/client_sdk/go")
[ "$dir" != "$root/client_sdk/go" ] && uses+=("$dir")
declare -A seen
queue=()
for u in "${uses[@]}"; do
  for m in $(requires "$u/go.mod"); do queue+=("$m"); done
done
replaces=()
while ((${#queue[@]})); do
  m=${queue[0]}
  queue=("${queue[@]:1}")
  [[ -n ${seen[$m]:-} || $m == github.com/utilityd/* ]] && continue
  seen[$m]=1
  if [[ -f $src/$m/go.mod ]]; then
    replaces+=("replace $m => $src/$m")
    for r in $(requires "$src/$m/go.mod"); do queue+=("$r"); done
  else
    stub=$work/stubs/${m//\//_}
    if [ ! -f "$stub/go.mod" ]; then  # written whole: tests run this at once
      mkdir -p "$stub"
      tmp=$(mktemp "$stub/go.mod.XXXXXX")
      echo "module $m" > "$tmp"
      mv "$tmp" "$stub/go.mod"
    fi
    replaces+=("replace $m => $stub")
  fi
done
{
  echo "go 1.19"
  for u in "${uses[@]}"; do
    echo "use $u"
    # A used module required by another (a driver needs the SDK) is this one.
    echo "replace $(awk '/^module /{print $2}' "$u/go.mod") v0.0.0 => $u"
  done
  printf '%s\n' "${replaces[@]}"
} > "$work/go.work.$$"
# Each caller writes its own file and moves it into place whole (ctest runs
# several Go tests at once); callers with different DIRs get the workspaces
# they asked for under distinct names.
key=$(printf '%s\n' "${uses[@]}" | md5sum | cut -c1-12)
mv "$work/go.work.$$" "$work/$key.work"
export GOWORK=$work/$key.work

export GOPROXY=off GOSUMDB=off GOFLAGS=-mod=readonly
export GOCACHE=${GOCACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/utilityd/go-build}
export GOPATH=${GOPATH:-$work/gopath}
cd "$dir"
exec go "$@"
