#!/usr/bin/env bash
# The C++ SDK installed and used as client_sdk/README.md ("Install the C++
# SDK") says, block by block:
#   1. the apt-get line names packages that exist and are installed here;
#   2. the client-only build, with every other package utilityd can use
#      made unfindable (so it provably needs only gRPC, Protobuf, Abseil),
#      installed under a prefix;
#   3. the README's CMakeLists.txt and main.cc written into a folder
#      outside the checkout, configured and built as the README says, with
#      the same packages unfindable (the client component asks for no
#      more), then run against a real utilityd;
#   4. examples/sdk built the same way against `--component client` of the
#      full build, and run.
#   sdk_install.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
src=$(realpath "$1") build=$(realpath "$2") work=$3
rm -rf "$work"
mkdir -p "$work"
work=$(realpath "$work")
outside=$(mktemp -d /tmp/utilityd_game_server.XXXXXX)
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  rm -rf "$outside"
}
trap cleanup EXIT

# The fenced blocks of the install section, in order: block_N.LANG.
awk -v dir="$work" '
  /^## / { inside = ($0 == "## Install the C++ SDK") }
  inside && /^```[a-z]+$/ { n++; lang = substr($0, 4); file = dir "/block_" n "." lang; next }
  inside && /^```$/ { file = ""; next }
  file != "" { print > file }
' "$src/client_sdk/README.md"
ls "$work"/block_* >/dev/null
expect() { [ -f "$work/block_$1.$2" ] || { echo "README: block $1 is not $2" >&2; exit 1; }; }
expect 1 sh; expect 2 sh; expect 3 cmake; expect 4 sh; expect 5 cpp

# 1. Every package named exists and is installed (install-deps.sh has them).
for p in $(sed -n 's/.*apt-get install -y //p' "$work/block_1.sh"); do
  dpkg -s "$p" >/dev/null 2>&1 || { echo "README names $p, not installed" >&2; exit 1; }
done

# Packages utilityd can use that the client must not need.
not_needed=()
for p in hwy yaml-cpp prometheus-cpp GTest benchmark tinyxml2; do
  not_needed+=("-DCMAKE_DISABLE_FIND_PACKAGE_$p=ON")
done
launcher=()
command -v ccache >/dev/null &&
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)

# Runs a README shell block in `dir`: the checkout and the prefix it names
# become this run's, and cmake configure lines get `extra` flags.
run_block() {
  local block=$1 dir=$2
  shift 2
  local line
  while IFS= read -r line; do
    line=${line//-S utilityd /-S $src }
    line=${line///opt\/utilityd/$work/prefix}
    if [[ $line == "cmake -S "* ]]; then
      line+=" $*"
    fi
    echo "+ $line"
    (cd "$dir" && eval "$line") >"$work/last.log" 2>&1 || {
      cat "$work/last.log" >&2
      exit 1
    }
  done < "$block"
}

# 2. The client alone.
run_block "$work/block_2.sh" "$work" "${not_needed[*]}" "${launcher[*]}"
[ -f "$work/prefix/lib/libutilityd_client.a" ]
if [ -e "$work/prefix/lib/libutilityd_engine.a" ]; then
  echo "the client-only build installed the engine" >&2
  exit 1
fi

# 3. The game server of the README, outside the checkout.
mkdir -p "$outside/game_server"
cp "$work/block_3.cmake" "$outside/game_server/CMakeLists.txt"
cp "$work/block_5.cpp" "$outside/game_server/main.cc"
run_block "$work/block_4.sh" "$outside" "${not_needed[*]}" "${launcher[*]}"

# 4. examples/sdk against the full build's client component.
cmake --install "$build" --prefix "$work/component" --component client >/dev/null
if [ -e "$work/component/bin/utilityd" ] ||
   [ -e "$work/component/lib/libutilityd_engine.a" ]; then
  echo "--component client installed more than the client" >&2
  exit 1
fi
cp -r "$src/examples/sdk" "$outside/sdk"
(cmake -S "$outside/sdk" -B "$outside/sdk-build" -G Ninja \
   -DCMAKE_PREFIX_PATH="$work/component" ${not_needed[*]} "${launcher[@]}" &&
 cmake --build "$outside/sdk-build") >"$work/last.log" 2>&1 || {
  cat "$work/last.log" >&2
  exit 1
}

# Both against a real replica.
"$build/server/utilityd" --config_dir="$src/examples/behaviour_sets" \
  --grpc_address=127.0.0.1:0 --http_address=127.0.0.1:0 \
  --port_file="$work/port" 2>"$work/utilityd.log" &
server=$!
for _ in $(seq 200); do [ -s "$work/port" ] && break; sleep 0.05; done
target="127.0.0.1:$(head -1 "$work/port")"
"$outside/game_server-build/game_server" "$target" | tee "$work/game_server.out"
grep -q "forager-1 -> " "$work/game_server.out"
"$outside/sdk-build/sdk_example" "$target"
kill -TERM "$server"
wait "$server"
server=""
echo "the C++ SDK installs and runs as client_sdk/README.md says"
