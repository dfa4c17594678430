// The SDK against the real utilityd on loopback: named factors packed by
// schema, blocks from typed arrays deciding as the same agents sent as
// snapshots (bit for bit), a tree driven by the tracker, errors by reason,
// a stream that loses its replica to kill -9 and still settles every batch
// exactly once on the other, and mutual TLS.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import {
  type BlockColumns,
  carryHeld,
  CompactFlag,
  decisionId,
  decisionIdHex,
  DecisionForm,
  ErrorReason,
  FactorLayout,
  NodeStatus,
  TreeTracker,
  UtilitydClient,
  UtilitydError,
} from "../index.js";
import { freePort, random, type Replica, startReplica } from "../testing.js";

let replica: Replica;
let client: UtilitydClient;

before(async () => {
  replica = await startReplica();
  client = UtilitydClient.connect({ target: `127.0.0.1:${replica.port}`, deadlineMs: 5000 });
  await client.waitForReady(10000);
});

after(async () => {
  client?.close();
  await replica?.stop();
});

test("named factors are packed by the set's schema", async () => {
  const schema = await client.schema("arena_mage");
  const named: { [name: string]: number } = {};
  for (const f of schema.summary.factors) named[f] = 0.5;
  const answer = await client.decide({
    explain: 2, // top
    agents: [{ agentId: "mage-1", behaviourSet: "arena_mage", namedFactors: named }],
  });
  const d = answer.decisions[0];
  assert.equal(d.error, undefined, d.error?.message);
  assert.equal(d.revision, schema.revision);
  assert.ok(schema.actionIndex(d.action) >= 0);
  assert.match(d.decisionId, /^[0-9a-f]{16}$/);
});

test("an agent that does not pack is refused alone, by reason", async () => {
  const answer = await client.decide({
    agents: [
      { agentId: "bad", behaviourSet: "arena_mage", namedFactors: { nonsense: 1 } },
      { agentId: "lost", behaviourSet: "no_such_set", factors: [1] },
      { agentId: "good", behaviourSet: "eat_hide_wander", namedFactors: { hunger: 0.9, danger: 0.1, food_distance: 3, idle_time: 1 } },
    ],
  });
  assert.equal(answer.decisions[0].error?.reason, ErrorReason.ERROR_REASON_UNKNOWN_FACTOR);
  assert.equal(answer.decisions[1].error?.reason, ErrorReason.ERROR_REASON_UNKNOWN_SET);
  assert.equal(answer.decisions[2].error, undefined);
});

test("blocks from typed arrays decide as the same agents sent as snapshots, bit for bit", async () => {
  const schema = await client.schema("arena_mage");
  const definition = (await client.getBehaviourSet("arena_mage")).behaviourSet!;
  const rng = random(26);
  const rows = 64, nf = schema.summary.factors.length, nt = schema.summary.targetFactors.length;
  const factors = new Float32Array(rows * nf); // factor-major, as an ECS chunk
  const ids = new BigUint64Array(rows);
  const current = new Int32Array(rows);
  const offsets = new Uint32Array(rows + 1);
  const targetFactors: number[] = [];
  const targetIds: bigint[] = [];
  for (let r = 0; r < rows; ++r) {
    ids[r] = BigInt(r) * 1000003n + 17n;
    current[r] = Math.floor(rng() * (schema.summary.actions.length + 1)) - 1;
    definition.factors.forEach((f, i) => (factors[i * rows + r] = (f.min ?? 0) + ((f.max ?? 1) - (f.min ?? 0)) * rng()));
    const targets = Math.floor(rng() * 3);
    for (let t = 0; t < targets; ++t) {
      targetIds.push(BigInt(900 + t));
      for (const f of definition.targetFactors) targetFactors.push((f.min ?? 0) + ((f.max ?? 1) - (f.min ?? 0)) * rng());
    }
    offsets[r + 1] = offsets[r] + targets;
  }
  const columns: BlockColumns = {
    behaviourSet: "arena_mage",
    expectedRevision: schema.revision,
    layout: FactorLayout.FACTOR_LAYOUT_COLUMNS,
    agentIds: ids,
    factors,
    currentAction: current,
    targetOffsets: offsets,
    targetFactors: Float32Array.from(targetFactors),
    targetIds: BigUint64Array.from(targetIds),
  };
  const byBlock = await client.decide({ blocks: [columns] });
  const snapshots = Array.from({ length: rows }, (_, r) => ({
    agentId: String(ids[r]),
    behaviourSet: "arena_mage",
    factors: Array.from({ length: nf }, (_, i) => factors[i * rows + r]),
    currentAction: current[r] >= 0 ? schema.summary.actions[current[r]] : "",
    targets: Array.from({ length: offsets[r + 1] - offsets[r] }, (_, t) => ({
      targetId: String(targetIds[offsets[r] + t]),
      factors: targetFactors.slice((offsets[r] + t) * nt, (offsets[r] + t + 1) * nt),
    })),
  }));
  const bySnapshot = await client.decide({ agents: snapshots, form: DecisionForm.DECISION_FORM_COMPACT });
  const b = byBlock.blocks[0];
  const c = bySnapshot.compact!;
  assert.equal(b.error, undefined, b.error?.message);
  assert.equal(b.actionIndex.length, rows);
  assert.deepEqual(Array.from(b.actionIndex), c.actionIndex);
  assert.deepEqual(Array.from(b.targetIndex), c.targetIndex);
  assert.deepEqual(Array.from(b.score), Array.from(Float32Array.from(c.score)));
  assert.deepEqual(Array.from(b.flags), Array.from(c.flags));
  assert.ok(b.targetIndex.some((t) => t >= 0), "the mages chose targets");
  assert.ok(b.flags.some((f) => (f & CompactFlag.COMPACT_FLAG_SWITCHED) !== 0));
  // Row ids follow the block's base.
  assert.match(decisionIdHex(decisionId(b.decisionIdBase!, 3)), /^[0-9a-f]{16}$/);
});

test("a block the service refuses names its column; the next block is decided", async () => {
  const good: BlockColumns = {
    behaviourSet: "eat_hide_wander",
    agentIds: BigUint64Array.of(1n, 2n),
    factors: Float32Array.of(0.9, 0.1, 3, 1, 0.2, 0.8, 20, 5),
  };
  const answer = await client.decide({ blocks: [{ ...good, seeds: BigUint64Array.of(1n, 2n, 3n) }, good] });
  assert.match(answer.blocks[0].error!.message, /^blocks\[0\]\.seeds: has 3 values for 2 rows/);
  assert.equal(answer.blocks[1].error, undefined);
  assert.equal(answer.blocks[1].actionIndex.length, 2);
});

test("the tree tracker drives a guard over the wire", async () => {
  const trees = new TreeTracker();
  const schema = await client.schema("guard_tree");
  let started = 0, resumed = 0;
  for (let tick = 0; tick < 6; ++tick) {
    const snapshot = {
      agentId: "guard-1",
      behaviourSet: "guard_tree",
      gameTime: tick,
      factors: schema.summary.factors.map((_, i) => (i === 0 ? 5 : 0.5)),
      treeState: Buffer.alloc(0),
      leafOutcomes: [],
    };
    trees.prepare(snapshot as never);
    const answer = await client.decide({ agents: [snapshot] });
    const d = answer.decisions[0];
    assert.equal(d.error, undefined, d.error?.message);
    trees.update(d);
    for (const leaf of d.runLeaves) {
      if (leaf.started) ++started;
      // Every other leaf finishes at once.
      if (tick % 2 === 1) trees.report("guard-1", leaf.node, NodeStatus.NODE_STATUS_SUCCESS);
    }
    if (d.treeReset === "" && tick > 0 && snapshot.treeState.length > 0) ++resumed;
  }
  assert.ok(started > 0, "leaves started");
  assert.ok(resumed > 0, "the tree resumed the state the tracker carried");
});

test("a stream loses its replica to kill -9 and every batch settles once, on the other", async () => {
  const a = await startReplica();
  const bPort = await freePort();
  const two = UtilitydClient.connect({ target: `127.0.0.1:${a.port},127.0.0.1:${bPort}`, deadlineMs: 5000 });
  const stream = two.openStream({ maxInFlight: 4 });
  const agents = Array.from({ length: 32 }, (_, i) => ({
    agentId: `forager-${i}`,
    behaviourSet: "eat_hide_wander",
    namedFactors: { hunger: (i % 10) / 10, danger: 0.2, food_distance: 5, idle_time: 1 },
  }));
  let b: Replica | undefined;
  const results = new Map<bigint, number>();
  const failed: string[] = [];
  try {
    const batches: Array<Promise<void>> = [];
    for (let k = 0; k < 60; ++k) {
      if (k === 20) {
        b = await startReplica(bPort);
        await a.stop("SIGKILL");
      }
      const id = BigInt(k + 1);
      // Caught at once, not at Promise.all: the loop may still be waiting
      // for the restart when a batch fails.
      batches.push(
        stream
          .submit({ requestId: id, agents })
          .then((answer) => {
            assert.equal(answer.requestId, id);
            assert.equal(answer.decisions.length, agents.length);
            assert.ok(answer.decisions.every((d) => d.error === undefined && d.action !== ""));
            results.set(id, (results.get(id) ?? 0) + 1);
          })
          .catch((e: unknown) => void failed.push(`batch ${id}: ${String(e)}`)),
      );
    }
    await Promise.all(batches);
    assert.deepEqual(failed, []);
    assert.equal(results.size, 60);
    assert.ok([...results.values()].every((n) => n === 1));
    // The stream was on the only replica there was: it had to reconnect.
    assert.ok(stream.reconnects >= 1, `reconnects ${stream.reconnects}`);
  } finally {
    await stream.close(1000);
    two.close();
    await a.stop();
    await b?.stop();
  }
});

test("a closed stream refuses new batches; a dead target fails a call once, naming its replica once", async () => {
  const stream = client.openStream();
  await stream.close();
  await assert.rejects(stream.submit({ agents: [] }), (e: unknown) => e instanceof UtilitydError && e.code === 9);
  const port = await freePort();
  const nobody = UtilitydClient.connect({ target: `127.0.0.1:${port}`, deadlineMs: 300 });
  await assert.rejects(nobody.decide({ agents: [] }), (e: unknown) => {
    assert.ok(e instanceof UtilitydError);
    assert.ok(e.code === 14 || e.code === 4, `code ${e.code}`);
    // One line: the method, the replica, its last word; not grpc-js's text twice.
    assert.equal(e.message.split(`127.0.0.1:${port}`).length, 2, e.message);
    assert.doesNotMatch(e.message, /Last error: No connection established/);
    return true;
  });
  // A readiness wait within a join timeout: it gives up on time, saying why.
  const started = Date.now();
  await assert.rejects(nobody.waitForReady(400), (e: unknown) =>
    e instanceof UtilitydError && e.code === 14 && e.message.includes(`127.0.0.1:${port}`));
  assert.ok(Date.now() - started < 1500, `waited ${Date.now() - started} ms`);
  nobody.close();
});

test("a field the message lacks is an error naming it; so is a malformed target", async () => {
  const agent = {
    agentId: "mage-1",
    behaviourSet: "eat_hide_wander",
    namedFactors: { hunger: 0.5, danger: 0.1, food_distance: 3, idle_time: 1 },
    targets: [{ id: "goblin-1", namedFactors: {} }],
  };
  await assert.rejects(client.decide({ agents: [agent as never] }), (e: unknown) =>
    e instanceof UtilitydError && e.code === 3 && e.field === "agents[0].targets[0].id" && /targetId/.test(e.message));
  await assert.rejects(client.openStream().submit({ agents: [], blocks: [{ behaviourSet: "x", agentIds: [], factors: [], targetId: [] } as never] }),
    (e: unknown) => e instanceof UtilitydError && e.field === "blocks[0].targetId");
  for (const target of ["", "localhost", "10.0.0.1:50051,:x"]) {
    assert.throws(() => UtilitydClient.connect({ target }), (e: unknown) => e instanceof UtilitydError && e.code === 3, target);
  }
});

test("the schema names personalities and actions by the indices blocks and compact answers use", async () => {
  const mage = await client.schema("arena_mage");
  assert.equal(mage.actionIndex(mage.summary.actions[1]), 1);
  assert.equal(mage.actionIndex("no such action"), -1);
  mage.summary.personalities.forEach((p, i) => assert.equal(mage.personalityIndex(p), i));
  assert.equal(mage.personalityIndex("no such personality"), -1);
});

test("mutual TLS: a client with the CA and its certificate decides; others are refused", async () => {
  const dir = mkdtempSync(join(tmpdir(), "utilityd-ts-tls-"));
  const sh = (cmd: string) => execFileSync("bash", ["-c", cmd], { cwd: dir, stdio: "ignore" });
  const ca = (name: string) =>
    sh(`openssl req -x509 -newkey rsa:2048 -nodes -keyout ${name}.key -out ${name}.pem -days 2 -subj "/CN=${name} test CA"`);
  const sign = (name: string, by: string, cn: string, ext = "") => {
    sh(`openssl req -newkey rsa:2048 -nodes -keyout ${name}.key -out ${name}.csr -subj "/CN=${cn}"`);
    sh(`openssl x509 -req -in ${name}.csr -CA ${by}.pem -CAkey ${by}.key -CAcreateserial -out ${name}.pem -days 2 ${ext}`);
  };
  ca("ca");
  ca("rogue");
  sh("printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > server.ext");
  sign("server", "ca", "localhost", "-extfile server.ext");
  sign("client", "ca", "game-server");
  const file = (name: string) => join(dir, name);
  const server = await startReplica(0, [
    `--tls_cert=${file("server.pem")}`,
    `--tls_key=${file("server.key")}`,
    `--tls_client_ca=${file("ca.pem")}`,
  ]);
  const agents = [{ agentId: "f", behaviourSet: "eat_hide_wander", factors: [0.9, 0.1, 3, 1] }];
  const clients: UtilitydClient[] = [];
  const connect = (options: Partial<Parameters<typeof UtilitydClient.connect>[0]>) => {
    const c = UtilitydClient.connect({ target: `127.0.0.1:${server.port}`, deadlineMs: 3000, ...options });
    clients.push(c);
    return c;
  };
  try {
    const good = connect({ tlsCaFile: file("ca.pem"), tlsCertFile: file("client.pem"), tlsKeyFile: file("client.key") });
    const answer = await good.decide({ agents });
    assert.equal(answer.decisions[0].error, undefined);
    // No client certificate: the server refuses the handshake.
    await assert.rejects(connect({ tlsCaFile: file("ca.pem") }).decide({ agents }), UtilitydError);
    // A client that trusts another CA refuses the server.
    await assert.rejects(
      connect({ tlsCaFile: file("rogue.pem"), tlsCertFile: file("client.pem"), tlsKeyFile: file("client.key") }).decide({ agents }),
      UtilitydError,
    );
    // Plaintext to a TLS port fails too.
    await assert.rejects(connect({}).decide({ agents }), UtilitydError);
    // Files that do not exist are named.
    assert.throws(() => connect({ tlsCaFile: file("nope.pem") }), /tlsCaFile: cannot read/);
  } finally {
    for (const c of clients) c.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a set whose factor order changes is re-packed and asked again (stale revision)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "utilityd-ts-sets-"));
  cpSync(join(process.env.UTILITYD_REPO ?? "", "examples/behaviour_sets"), dir, { recursive: true });
  const server = await startReplica(0, [`--config_dir=${dir}`, "--reload_interval=20ms"]);
  const c = UtilitydClient.connect({ target: `127.0.0.1:${server.port}`, deadlineMs: 5000 });
  const forager = (id: string, hunger: number, danger: number) => ({
    agentId: id,
    behaviourSet: "eat_hide_wander",
    namedFactors: { hunger, danger, food_distance: 2, idle_time: 1 },
  });
  try {
    const first = await c.decide({ agents: [forager("f0", 0.8, 0.1)] });
    assert.equal(first.decisions[0].action, "eat");
    const old = (await c.schema("eat_hide_wander")).revision;
    // Swap the first two factors: a stale client would send hunger as danger.
    const file = join(dir, "eat_hide_wander.yaml");
    const hunger = "  - {name: hunger, unit: need, description: 0 fed .. 1 starving.}\n";
    const danger = "  - {name: danger, unit: threat, description: 0 no predator .. 1 predator adjacent.}\n";
    const text = readFileSync(file, "utf8");
    assert.ok(text.includes(hunger + danger));
    writeFileSync(file, text.replace(hunger + danger, danger + hunger));
    const deadline = Date.now() + 10000;
    while ((await c.getBehaviourSet("eat_hide_wander")).summary!.revision === old) {
      assert.ok(Date.now() < deadline, "the server did not reload");
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal((await c.schema("eat_hide_wander")).revision, old, "still cached");
    const again = await c.decide({ agents: [forager("f0", 0.8, 0.1), forager("f1", 0.8, 0.95)] });
    assert.equal(again.decisions[0].error, undefined, again.decisions[0].error?.message);
    assert.deepEqual(again.decisions.map((d) => d.action), ["eat", "hide"]);
    assert.notEqual(again.decisions[0].revision, old);
    assert.equal((await c.schema("eat_hide_wander")).summary.factors[0], "danger");
  } finally {
    c.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("goblins as a block share two tokens a mage; grants carried back are kept", async () => {
  const schema = await client.schema("arena_goblin");
  assert.deepEqual(schema.summary.resources, ["attack_token"]);
  const rows = 6;
  // All healthy and brave, at distances 1..6 from mage 900.
  const columns: BlockColumns = {
    behaviourSet: "arena_goblin",
    agentIds: BigUint64Array.from({ length: rows }, (_, r) => BigInt(r + 1)),
    factors: Float32Array.from({ length: rows * 2 }, (_, i) => (i % 2 === 0 ? 28 : 0.9)),
    targetOffsets: Uint32Array.from({ length: rows + 1 }, (_, r) => r),
    targetFactors: Float32Array.from({ length: rows * 2 }, (_, i) => (i % 2 === 0 ? 1 + i / 2 : 80)),
    targetIds: BigUint64Array.from({ length: rows }, () => 900n),
  };
  const attack = schema.actionIndex("attack");
  const attackers = (b: { actionIndex: Int32Array }) =>
    Array.from(b.actionIndex).flatMap((a, r) => (a === attack ? [r] : []));
  const first = (await client.decide({ blocks: [columns] })).blocks[0];
  assert.equal(first.error, undefined, first.error?.message);
  assert.deepEqual(attackers(first), [0, 1], "the two closest attack");
  for (let r = 2; r < rows; ++r) assert.ok(first.flags[r] & CompactFlag.COMPACT_FLAG_DENIED, `row ${r} denied`);
  assert.deepEqual(Array.from(first.grantOffsets), [0, 1, 2, 2, 2, 2, 2]);
  assert.deepEqual(Array.from(first.grantTargetIds), [900n, 900n]);
  // Next tick the far ones come closer; the holders keep their tokens.
  const next: BlockColumns = {
    ...columns,
    currentAction: first.actionIndex,
    currentTarget: first.targetIndex,
    targetFactors: Float32Array.from({ length: rows * 2 }, (_, i) => (i % 2 === 0 ? 6 - i / 2 : 80)),
  };
  carryHeld(first, next);
  const second = (await client.decide({ blocks: [next] })).blocks[0];
  assert.deepEqual(attackers(second), [0, 1], "the holders keep attacking");
});

async function metricTotal(replica: Replica, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${replica.httpPort}/metrics`)).text();
  let total = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) total += Number(line.split(" ").pop());
  }
  return total;
}

test("a call a shedding replica refuses is retried on another (docs/RELIABILITY.md)", async () => {
  // A's queue holds 10 agents: it refuses every batch of 20 (OVERLOADED,
  // with a retry hint); B takes them.
  const a = await startReplica(0, ["--max_queued_agents=10"]);
  const b = await startReplica();
  const agents = Array.from({ length: 20 }, (_, i) => ({
    agentId: `forager-${i}`,
    behaviourSet: "eat_hide_wander",
    factors: [0.8, 0.05, 5, 2],
  }));
  try {
    for (const maxAttempts of [4, 1]) {
      const two = UtilitydClient.connect({
        target: `127.0.0.1:${a.port},127.0.0.1:${b.port}`,
        deadlineMs: 5000,
        maxAttempts,
      });
      await two.waitForReady(10000);
      const before = await metricTotal(a, "utilityd_shed_total");
      let ok = 0;
      let refused = 0;
      for (let i = 0; i < 20; ++i) {
        try {
          const answer = await two.decide({ agents });
          assert.equal(answer.decisions.length, 20);
          ++ok;
        } catch (e) {
          assert.ok(e instanceof UtilitydError, String(e));
          assert.equal(e.code, 8); // RESOURCE_EXHAUSTED
          ++refused;
        }
      }
      const shed = (await metricTotal(a, "utilityd_shed_total")) - before;
      two.close();
      assert.ok(shed > 0, `maxAttempts ${maxAttempts}: A shed nothing`);
      if (maxAttempts > 1) {
        assert.equal(ok, 20);
      } else {
        assert.equal(refused, shed);
      }
    }
  } finally {
    await a.stop();
    await b.stop();
  }
});
