#!/usr/bin/env bash
# The C# SDK installed and used as client_sdk/csharp/README.md ("Install")
# says, block by block: the .nupkg that `scripts/csharp-sdk.sh build` packed
# is added to a new console project in a folder outside the checkout, with
# a package cache of its own (so the package is the one just built, and its
# dependencies come from NuGet as a user's would); the README's program is
# built and run against a real utilityd, and prints what the README says.
#   csharp_package.sh BUILD_DIR   (UTILITYD_BINARY, UTILITYD_EXAMPLES set)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "$1")
outside=$(mktemp -d /tmp/utilityd_dotnet_server.XXXXXX)
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  rm -rf "$outside"
}
trap cleanup EXIT

# The fenced blocks of the install section, in order: block_N.LANG.
awk -v dir="$outside" '
  /^## / { inside = ($0 == "## Install") }
  inside && file != "" && /^```$/ { file = ""; next }
  inside && /^```[a-z]*$/ { n++; lang = substr($0, 4); if (lang == "") lang = "txt";
                            file = dir "/block_" n "." lang; next }
  file != "" { print > file }
' "$root/client_sdk/csharp/README.md"
for b in 1.sh 2.csharp 3.txt; do
  [ -f "$outside/block_$b" ] || { echo "README: no block_$b in Install" >&2; exit 1; }
done

export UTILITYD_PACKAGES=$build/dotnet/package
export NUGET_PACKAGES=$outside/nuget  # a cache of its own: the package just built
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 MSBUILDDISABLENODEREUSE=1
ls "$UTILITYD_PACKAGES"/Utilityd.Client.*.nupkg
cd "$outside"
bash -euo pipefail block_1.sh
cp block_2.csharp GameServer/Program.cs
# The game server's project references the package and nothing of the checkout.
! grep -q "$root" GameServer/GameServer.csproj
grep -q 'Include="Utilityd.Client"' GameServer/GameServer.csproj

ports=$outside/ports
"$UTILITYD_BINARY" --config_dir="$UTILITYD_EXAMPLES" --grpc_address=127.0.0.1:0 \
  --http_address=127.0.0.1:0 --port_file="$ports" --log_level=warning &
server=$!
for _ in $(seq 400); do [ -s "$ports" ] && break; sleep 0.025; done
port=$(head -1 "$ports")
cd GameServer
dotnet build -nologo -v quiet -p:UseSharedCompilation=false
dotnet run --no-build -- "127.0.0.1:$port" | tee "$outside/out.txt"
# What the README says it prints, with this run's port.
sed "s/127.0.0.1:50051/127.0.0.1:$port/" "$outside/block_3.txt" | diff - "$outside/out.txt"
echo "csharp_sdk_package: the README's program ran against the package"
