// The TypeScript SDK's driver for the client conformance suite
// (tests/conformance/conformance.py says the protocol): a fixed AI tick,
// B batches a tick over a stream or as unary decide calls, one JSON line
// per tick and per settled batch. Uses the SDK's public API only, built
// (client_sdk/typescript/dist) or installed (UTILITYD_SDK names it).
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
const sdk = await import(process.env.UTILITYD_SDK ?? join(here, "../../client_sdk/typescript/dist/index.js"));

const arg = (name, fallback) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a === undefined ? fallback : a.slice(name.length + 3);
};
const target = arg("target", "");
const agents = Number(arg("agents", 64));
const batches = Number(arg("batches", 4));
const tickMs = Number(arg("tick_ms", 100));
const ticks = Number(arg("ticks", 60));
const streamed = arg("mode", "stream") === "stream";
// false: the first batches go out before any replica was asked whether it
// serves (a game server that starts sending at once).
const waitReady = arg("wait_ready", "true") !== "false";

const emit = (o) => process.stdout.write(JSON.stringify(o) + "\n");
// Wall-clock milliseconds with sub-millisecond precision, as the C++ driver.
const origin = Date.now() - performance.now();
const now = () => origin + performance.now();

function batch(slot, tick) {
  const list = [];
  for (let a = slot; a < agents; a += batches) {
    list.push({
      agentId: `forager-${a}`,
      behaviourSet: "eat_hide_wander",
      namedFactors: {
        hunger: ((a * 7 + tick) % 100) / 100,
        danger: ((a * 3 + tick) % 50) / 100,
        food_distance: a % 25,
        idle_time: tick % 20,
      },
    });
  }
  return list;
}

const client = sdk.UtilitydClient.connect({ target, aiTickMs: tickMs });
try {
  if (waitReady) await client.waitForReady(10000);
  await client.schema("eat_hide_wander"); // warm, as a game server does at start
} catch (e) {
  process.stderr.write(`${e.message}\n`);
  process.exit(2);
}
const stream = streamed ? client.openStream({ maxInFlight: 1024 }) : undefined;
const settled = [];
const start = now();
let id = 0;
for (let t = 0; t < ticks; ++t) {
  const wait = start + t * tickMs - now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  emit({ tick: t, at: now() });
  for (let s = 0; s < batches; ++s) {
    const requestId = BigInt(++id);
    const sent = now();
    const input = { requestId, agents: batch(s, t) };
    const call = streamed ? stream.submit(input) : client.decide(input);
    const line = { batch: Number(requestId), tick: t, slot: s, sent };
    settled.push(
      call.then(
        (answer) => emit({ ...line, done: now(), ok: true, attempts: answer.info?.attempts ?? 0, replica: answer.info?.replica ?? "" }),
        (e) => emit({ ...line, done: now(), ok: false, attempts: e.info?.attempts ?? 0, replica: "", error: String(e.message) }),
      ),
    );
  }
}
await Promise.all(settled);
await stream?.close();
client.close();
emit({ end: true });
