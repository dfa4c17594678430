#!/usr/bin/env bash
# Builds and tests the C# SDK (client_sdk/csharp) with the machine's .NET
# SDK; packages come from NuGet (the project's registry) into the user's
# NuGet cache. Output goes to BUILD_DIR/dotnet, never into the sources.
#
#   scripts/csharp-sdk.sh BUILD_DIR build      restore, build every project, pack the SDK
#   scripts/csharp-sdk.sh BUILD_DIR test PROJ  dotnet test of a built test project
#   scripts/csharp-sdk.sh BUILD_DIR driver     the path of the conformance driver
#   scripts/csharp-sdk.sh BUILD_DIR package    the .nupkg installed into a new
#                                              project outside the checkout, run
#                                              against a real replica
#   scripts/csharp-sdk.sh BUILD_DIR bench ARGS the block benchmark (bench/block_sdks.sh)
#
# Without `dotnet` on PATH it says why and exits 77, which ctest reports as
# skipped (a stock Debian 12 machine has no .NET SDK: Debian packages none).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "$1")
what=$2
shift 2
if ! command -v dotnet >/dev/null 2>&1; then
  echo "csharp-sdk: skipped: dotnet is not on PATH (Debian 12 packages no .NET SDK;"
  echo "  install Microsoft's .NET 10 SDK to build and test client_sdk/csharp)"
  exit 77
fi
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
export UTILITYD_DOTNET_ARTIFACTS=$build/dotnet
export MSBUILDDISABLENODEREUSE=1  # no build server left running after ctest
config=Release
bin=$build/dotnet/bin

case $what in
  build)
    dotnet build "$root/client_sdk/csharp/utilityd.slnx" -c $config -nologo -v quiet -p:UseSharedCompilation=false
    dotnet pack "$root/client_sdk/csharp/Utilityd.Client" -c $config -nologo -v quiet --no-build \
      -o "$build/dotnet/package"
    ;;
  test)
    dotnet test "$root/$1" -c $config --no-build -nologo \
      --logger "console;verbosity=normal" "${@:2}"
    ;;
  driver)
    exec dotnet "$bin/driver_cs/release/conformance_driver_cs.dll" "$@"
    ;;
  package)
    exec "$root/tests/install/csharp_package.sh" "$build" "$@"
    ;;
  *)
    echo "csharp-sdk: unknown step $what" >&2
    exit 2
    ;;
esac
