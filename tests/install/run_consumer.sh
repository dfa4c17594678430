#!/usr/bin/env bash
# Installs the build into a staging prefix, builds two outside projects
# against it with find_package(utilityd) — tests/install/consumer (every
# exported target, analysis with its CLP) and examples/sdk (the client SDK)
# — checks the installed binaries' help names no build-tree path, then runs
# the installed utilityd and the SDK example against it.
#   run_consumer.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
for project in tests/install/consumer examples/sdk; do
  name=$(basename "$project")
  cmake -S "$src/$project" -B "$work/$name" -G Ninja \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$work/$name" -j 2 >/dev/null
done
"$work/consumer/consumer" "$src/examples/behaviour_sets/arena_mage.yaml"

# The installed binaries name no path of the machine that built them.
for program in utilityd utilityd-sim; do
  "$prefix/bin/$program" --helpfull > "$work/$program.help" 2>&1 || true
  grep -q "Flags from $program:" "$work/$program.help"
  if grep -n -e "$(realpath "$src")" -e "$(realpath "$build")" -e "\.\./" \
      "$work/$program.help"; then
    echo "$program --helpfull shows build-tree paths" >&2
    exit 1
  fi
done

"$prefix/bin/utilityd" --config_dir="$src/examples/behaviour_sets" \
  --grpc_address=127.0.0.1:0 --http_address=127.0.0.1:0 \
  --port_file="$work/port" 2>"$work/utilityd.log" &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 200); do [ -s "$work/port" ] && break; sleep 0.05; done
"$work/sdk/sdk_example" "127.0.0.1:$(head -1 "$work/port")"
kill -TERM "$server"
wait "$server"
