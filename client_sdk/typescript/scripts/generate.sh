#!/bin/sh
# Generates the message and service code from the repository's proto/ with
# Debian's protoc and ts-proto's plugin (from node_modules): nothing is
# downloaded. Output: src/gen (not committed; `npm run build` makes it),
# with the test vectors' schema (tests/vectors/sdk_vectors.proto).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
proto="$here/../../proto"
out="$here/src/gen"
rm -rf "$out"
mkdir -p "$out"
protoc \
  --plugin=protoc-gen-ts_proto="$here/node_modules/.bin/protoc-gen-ts_proto" \
  --ts_proto_out="$out" \
  --ts_proto_opt=outputServices=grpc-js,esModuleInterop=true,importSuffix=.js,forceLong=bigint,env=node,useDate=false \
  -I "$proto" -I "$here/../../tests/vectors" \
  $(cd "$proto" && find utilityd -name '*.proto' | sort) sdk_vectors.proto
