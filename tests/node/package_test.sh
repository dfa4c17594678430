#!/bin/sh
# The TypeScript SDK as a game server gets it: `npm pack` of the built SDK,
# the tarball checked (compiled dist/, declared dependencies, no tests),
# installed with plain `npm install` into an empty folder outside the
# checkout (offline: the dependencies come from npm's cache, which
# scripts/install-deps.sh filled), then every `ts` block of the SDK's
# README and of docs/GAME_SERVERS.md compiled there under strict
# TypeScript and run against a real utilityd.
#
#   tests/node/package_test.sh UTILITYD REPO
set -eu
utilityd=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
repo=$(cd "$2" && pwd)
sdk="$repo/client_sdk/typescript"
work=$(mktemp -d "${TMPDIR:-/tmp}/utilityd-package-XXXXXX")
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL $*" >&2; exit 1; }

(cd "$sdk" && npm pack --silent --pack-destination "$work" >/dev/null)
tarball=$(ls "$work"/*.tgz)
contents=$(tar tzf "$tarball")
echo "$contents" | grep -qx 'package/dist/index.js' || fail "the tarball has no dist/index.js"
echo "$contents" | grep -qx 'package/dist/index.d.ts' || fail "the tarball has no type declarations"
echo "$contents" | grep -qx 'package/dist/testing.js' || fail "the tarball has no testing module"
if echo "$contents" | grep -q '^package/dist/test/\|sdk_vectors\|^package/src/'; then
  fail "the tarball ships tests or sources: $(echo "$contents" | grep '^package/dist/test/\|sdk_vectors\|^package/src/' | head -3)"
fi

# An empty folder outside the checkout: a game server's.
game="$work/game"
mkdir "$game"
cd "$game"
npm init -y >/dev/null
typescript=$(node -p "require('$sdk/package.json').devDependencies.typescript")
types=$(node -p "require('$sdk/package.json').devDependencies['@types/node']")
npm install --offline --no-audit --no-fund --silent "$tarball" \
  "typescript@$typescript" "@types/node@$types" ||
  fail "npm install of the tarball (offline, from npm's cache) failed"
node -e "import('@utilityd/client').then((m) => { if (!m.UtilitydClient) process.exit(1); })" ||
  fail "@utilityd/client does not import from the installed tarball"

# Every ts block, one program each.
mkdir examples
node - "$sdk/README.md" "$repo/docs/GAME_SERVERS.md" <<'EOF'
const fs = require("fs");
let n = 0;
for (const file of process.argv.slice(2)) {
  const text = fs.readFileSync(file, "utf8");
  const re = /```ts\n([\s\S]*?)```/g;
  let m;
  while ((m = re.exec(text)) !== null) {
    const line = text.slice(0, m.index).split("\n").length;
    const name = `example_${++n}.ts`;
    fs.writeFileSync(`examples/${name}`, `// ${file}:${line}\n${m[1]}export {};\n`);
  }
}
if (n < 5) { console.error(`only ${n} ts blocks found`); process.exit(1); }
console.log(`${n} ts blocks`);
EOF
cat > tsconfig.json <<'EOF'
{
  "compilerOptions": {
    "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext",
    "strict": true, "noUncheckedIndexedAccess": false, "outDir": "out",
    "types": ["node"], "skipLibCheck": false
  },
  "include": ["examples"]
}
EOF
echo '{"type": "module"}' > examples/package.json
npx tsc -p tsconfig.json || fail "the README examples do not compile under strict TypeScript"
cp examples/package.json out/

# A real replica for the examples.
ports="$work/ports"
"$utilityd" --grpc_address=127.0.0.1:0 --http_address=127.0.0.1:0 \
  --port_file="$ports" --config_dir="$repo/examples/behaviour_sets" \
  --log_level=warning &
pid=$!
i=0
while [ "$(cat "$ports" 2>/dev/null | wc -w)" -lt 2 ]; do
  i=$((i + 1)); [ $i -gt 400 ] && fail "utilityd did not start"
  sleep 0.05
done
export UTILITYD_TARGET="127.0.0.1:$(cut -d' ' -f1 "$ports" | head -1)"
for js in out/example_*.js; do
  src=$(head -1 "$js" | sed 's|^// ||')
  if ! out=$(timeout 60 node "$js" 2>&1); then
    fail "$src: $out"
  fi
  echo "$src: $(echo "$out" | tail -1)"
  case "$out" in *Error*|*error*) fail "$src printed an error: $out" ;; esac
done
echo "PASS the tarball installs into an empty folder and every example runs"
