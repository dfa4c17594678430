#!/usr/bin/env bash
# Installs what utilityd needs on Debian 12, and nothing that is already
# there. Safe to run again: it only calls apt-get when a package is missing.
# Uses sudo when not root.
#
#   scripts/install-deps.sh [build|test|container]
#
#   build      the compiler and the libraries utilityd links: what building
#              the service and utilityctl needs (the Dockerfile's build stage)
#   test       build, plus what `make test` and the other test targets run:
#              GoogleTest, Google Benchmark, clang for the sanitizers and
#              fuzzers, Prometheus, nginx, Chromium and Node.js (the default)
#   container  test, plus podman, runc and debootstrap for
#              `make test-container`
set -euo pipefail

mode=${1:-test}
case "$mode" in
  build | test | container) ;;
  *)
    echo "install-deps: unknown mode '$mode' (build, test or container)" >&2
    exit 2
    ;;
esac

packages=(
  # toolchain
  g++ make cmake ninja-build pkg-config
  # libraries: gRPC and Protobuf, Abseil, YAML, the admin endpoint's HTTP
  # server (libmicrohttpd), the metrics (prometheus-cpp), utilityctl's HTTP
  # client (cpp-httplib) and XML parser (TinyXML-2, for BehaviorTree.CPP
  # trees) and Google Highway (the curves' SIMD maths)
  libabsl-dev libprotobuf-dev protobuf-compiler libgrpc++-dev
  protobuf-compiler-grpc libyaml-cpp-dev libmicrohttpd-dev prometheus-cpp-dev
  libcpp-httplib-dev libtinyxml2-dev libhwy-dev
)
if [ "$mode" != build ]; then
  packages+=(
    git
    # the make targets compile every build tree through ccache, its cache
    # outside the clone (the Makefile's CCACHE_DIR)
    ccache
    # tests and benchmarks; universal-ctags measures functions' length
    # (scripts/check-function-length.sh)
    libgtest-dev libgmock-dev libbenchmark-dev universal-ctags
    # utilityctl tune's linear program (COIN-OR CLP); optional in the
    # image's build, where tune says it is missing
    coinor-libclp-dev
    # the Python test proves the proto from another language; Prometheus
    # and YAML for the deploy tests
    python3-grpcio python3-protobuf prometheus python3-yaml
    # sanitizers and libFuzzer (make test-sanitize, make fuzz)
    clang-14 libclang-rt-14-dev
    # certificates for the TLS tests; the gRPC proxy the nginx test runs
    openssl nginx
    # the inspector's browser tests (driven by playwright-core from npm)
    chromium
    # the Go SDK (client_sdk/go), built offline against Debian's Go
    # sources by scripts/go-sdk.sh; golang-github-golang-protobuf-1-5-dev
    # must be named, or apt takes the 1.3 package grpc panics with
    golang-go golang-google-grpc-dev golang-google-protobuf-dev
    golang-github-golang-protobuf-1-5-dev protoc-gen-go protoc-gen-go-grpc
  )
fi
if [ "$mode" = container ]; then
  packages+=(
    # make test-container: podman with runc and netavark (container names
    # resolve through aardvark-dns; netavark sets up its networks with
    # iptables, only recommended by its package), podman-compose for the
    # compose file, debootstrap for the Debian 12 base images, curl for the
    # HTTP checks; catatonit, the pause process of the pods `podman kube
    # play` makes of deploy/k8s
    podman runc netavark aardvark-dns iptables podman-compose debootstrap curl
    catatonit
  )
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = "installed" ] || missing+=("$p")
done
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  sudo=(false)
fi
# Node.js runs the browser tests; these machines bring their own, a bare
# Debian gets its packaged one.
if [ "$mode" != build ]; then
  command -v node >/dev/null 2>&1 || missing+=(nodejs npm)
fi

if [ ${#missing[@]} -gt 0 ]; then
  if [ "${sudo[*]}" = false ]; then
    echo "install-deps: missing ${missing[*]}; run as root or install sudo" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ "$mode" = build ] && exit 0

# The browser tests run on Debian 12's own Node.js (18). playwright-core is
# pinned by tests/browser/package-lock.json to 1.61, the last release that
# supports Node 18; it drives Debian's Chromium and downloads no browser.
# axe-core (its accessibility audit) comes from the same lock file; the
# loop below checks for it, the newer of the two.
node_major_needed=18
node_version=$(node --version 2>/dev/null || echo none)
node_major=${node_version#v}
node_major=${node_major%%.*}
if ! [[ "$node_major" =~ ^[0-9]+$ ]] || [ "$node_major" -lt "$node_major_needed" ]; then
  echo "install-deps: the browser tests need Node.js $node_major_needed or newer" \
       "(found $node_version); Debian 12's nodejs package is 18" >&2
  exit 1
fi
# tests/node's gRPC client (@grpc/grpc-js, @grpc/proto-loader) likewise
# from its lock file; both support Node 18.
# The TypeScript SDK (tsc, ts-proto for Debian's protoc, @grpc/grpc-js) and
# the Colyseus example that uses it (Colyseus 0.16, the line that runs on
# Node 18), likewise; the SDK first, the example links it.
repo="$(dirname "$0")/.."
for dir_and_package in tests/browser:axe-core tests/node:@grpc/grpc-js \
    client_sdk/typescript:ts-proto examples/colyseus:@colyseus/core; do
  dir=${dir_and_package%%:*}
  package=${dir_and_package#*:}
  if [ ! -d "$repo/$dir/node_modules/$package" ]; then
    echo "install-deps: npm ci in $dir"
    npm ci --prefix "$repo/$dir" --no-audit --no-fund --silent
  fi
done
# The SDK's package test (tests/node/package_test.sh) installs its tarball
# into an empty folder with `npm install --offline`, as a game server
# would but from npm's cache: resolving versions needs the registry's
# metadata of each dependency, which `npm ci` never fetches. One install
# into a throwaway folder caches it (once: a marker in the cache says so).
sdk_deps=$(cd "$repo/client_sdk/typescript" && node -p '
  const p = require("./package.json");
  const d = { ...p.dependencies, typescript: p.devDependencies.typescript,
              "@types/node": p.devDependencies["@types/node"] };
  Object.entries(d).map(([k, v]) => k + "@" + v).join(" ")')
marker="${npm_config_cache:-$HOME/.npm}/utilityd-sdk-deps"
if [ "$(cat "$marker" 2>/dev/null)" != "$sdk_deps" ]; then
  echo "install-deps: caching the TypeScript SDK's dependencies for its package test"
  warm=$(mktemp -d)
  (cd "$warm" && npm init -y >/dev/null &&
    npm install --no-audit --no-fund --silent $sdk_deps) &&
    echo "$sdk_deps" > "$marker"
  rm -rf "$warm"
fi
