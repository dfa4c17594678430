// utilityd from Node.js: the block form (docs/SERVICE.md, "Blocks") over
// gRPC with @grpc/grpc-js, its messages read from proto/ at run time by
// @grpc/proto-loader, against the real binary on loopback. Columns start as
// typed arrays, as a game server's ECS keeps them.
//
//   node tests/node/blocks_test.mjs UTILITYD_BINARY REPO_ROOT
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
// The seeded generator of the TypeScript SDK's test helpers (built by
// ctest's ts_sdk_build), so that a failure repeats.
import { random } from '../../client_sdk/typescript/dist/testing.js';

const [binary, repo] = process.argv.slice(2);
if (!binary || !repo) {
  console.error('usage: blocks_test.mjs UTILITYD_BINARY REPO_ROOT');
  process.exit(2);
}

const definition = protoLoader.loadSync('utilityd/v1/decision_service.proto', {
  includeDirs: [join(repo, 'proto')],
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
});
const v1 = grpc.loadPackageDefinition(definition).utilityd.v1;

let server, client, dir;

function call(method, request) {
  return new Promise((resolve, reject) =>
    client[method](request, { deadline: Date.now() + 10000 }, (err, res) =>
      err ? reject(err) : resolve(res)));
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'utilityd-node-'));
  const portFile = join(dir, 'ports');
  server = spawn(binary, [
    '--grpc_address=127.0.0.1:0', '--http_address=127.0.0.1:0',
    `--port_file=${portFile}`,
    `--config_dir=${join(repo, 'examples/behaviour_sets')}`,
  ], { stdio: ['ignore', 'ignore', 'inherit'] });
  const deadline = Date.now() + 20000;
  while (!(existsSync(portFile) && readFileSync(portFile, 'utf8').trim())) {
    if (Date.now() > deadline) throw new Error('utilityd did not start');
    await new Promise((r) => setTimeout(r, 20));
  }
  const port = readFileSync(portFile, 'utf8').split(/\s+/)[0];
  client = new v1.DecisionService(`127.0.0.1:${port}`,
                                  grpc.credentials.createInsecure());
  // Serving once the sets are loaded.
  for (;;) {
    try {
      const sets = (await call('ListBehaviourSets', {})).behaviour_sets;
      if (sets.length > 0) break;
    } catch (e) {
      if (Date.now() > deadline) throw e;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
});

after(() => {
  client?.close();
  server?.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

// Random rows of a set as the columns an ECS holds: factors factor-major,
// running actions, clocks, seeds, personalities, and targets as offsets.
function chunk(set, rows, seed) {
  const rnd = random(seed);
  const { summary, behaviour_set: def } = set;
  const nf = summary.factors.length, na = summary.actions.length;
  const ntf = summary.target_factors.length;
  const draw = (f) => f.min + (f.max - f.min) * (1.2 * rnd() - 0.1);
  const c = {
    ids: new BigUint64Array(rows),
    factors: new Float32Array(nf * rows),
    current: new Int32Array(rows),
    seconds: new Float32Array(na * rows),
    seeds: new BigUint64Array(rows),
    personality: new Int32Array(rows),
    offsets: new Uint32Array(rows + 1),
    targetFactors: [],
    targetIds: [],
    currentTarget: new Int32Array(rows),
  };
  for (let r = 0; r < rows; ++r) {
    c.ids[r] = 9000000000n + BigInt(r);
    for (let f = 0; f < nf; ++f) {
      c.factors[f * rows + r] = rnd() < 0.02 ? NaN : draw(def.factors[f]);
    }
    c.current[r] = Math.floor(rnd() * (na + 1)) - 1;
    for (let a = 0; a < na; ++a) {
      c.seconds[r * na + a] = rnd() < 0.3 ? NaN : 30 * rnd();
    }
    c.seeds[r] = BigInt(Math.floor(rnd() * 2 ** 32)) * 65536n + BigInt(r);
    c.personality[r] =
        Math.floor(rnd() * (summary.personalities.length + 1)) - 1;
    const targets = ntf > 0 ? Math.floor(rnd() * 4) : 0;
    for (let t = 0; t < targets; ++t) {
      c.targetIds.push(7000000000n + BigInt(c.targetIds.length));
      for (const f of def.target_factors) c.targetFactors.push(Math.fround(draw(f)));
    }
    c.offsets[r + 1] = c.offsets[r] + targets;
    c.currentTarget[r] = Math.floor(rnd() * (targets + 2)) - 2;
  }
  return c;
}

// The columns as one AgentBlock: each typed array handed over whole.
function block(set, c) {
  return {
    behaviour_set: set.summary.name,
    expected_revision: set.summary.revision,
    layout: 'FACTOR_LAYOUT_COLUMNS',
    agent_ids: Array.from(c.ids, String),
    factors: Array.from(c.factors),
    current_action: Array.from(c.current),
    seconds_since_action: Array.from(c.seconds),
    seeds: Array.from(c.seeds, String),
    personality: Array.from(c.personality),
    target_offsets: Array.from(c.offsets),
    target_factors: c.targetFactors,
    target_ids: c.targetIds.map(String),
    current_target: Array.from(c.currentTarget),
  };
}

// Row r of the columns as the snapshot that says the same.
function snapshot(set, c, r) {
  const { summary } = set;
  const rows = c.ids.length, nf = summary.factors.length;
  const na = summary.actions.length, ntf = summary.target_factors.length;
  const seconds = {};
  for (let a = 0; a < na; ++a) {
    const v = c.seconds[r * na + a];
    if (Number.isFinite(v)) seconds[summary.actions[a]] = v;
  }
  const targets = [];
  for (let t = c.offsets[r]; t < c.offsets[r + 1]; ++t) {
    targets.push({ target_id: String(c.targetIds[t]),
                   factors: c.targetFactors.slice(t * ntf, (t + 1) * ntf) });
  }
  const ct = c.currentTarget[r];
  return {
    agent_id: String(c.ids[r]),
    behaviour_set: summary.name,
    factors: Array.from({ length: nf }, (_, f) => c.factors[f * rows + r]),
    current_action: c.current[r] >= 0 ? summary.actions[c.current[r]] : '',
    seconds_since_action: seconds,
    seed: String(c.seeds[r]),
    personality: c.personality[r] >= 0 ? summary.personalities[c.personality[r]] : '',
    targets,
    current_target: ct >= 0 ? targets[ct].target_id : ct === -2 ? 'gone' : '',
  };
}

const float32Bits = (x) => new Uint32Array(new Float32Array([x]).buffer)[0];

test('blocks decide as snapshots, bit for bit, on every set the form takes',
  async () => {
    let targeted = 0;
    for (const name of ['arena_mage', 'eat_hide_wander', 'villager_needs']) {
      const set = await call('GetBehaviourSet', { name });
      const rows = 200;
      const c = chunk(set, rows, name.length);
      const byBlock = await call('Decide', { blocks: [block(set, c)] });
      const bySnapshot = await call('Decide', {
        form: 'DECISION_FORM_COMPACT',
        agents: Array.from({ length: rows }, (_, r) => snapshot(set, c, r)),
      });
      const got = byBlock.blocks[0], want = bySnapshot.compact;
      assert.equal(got.error, null, name);
      assert.equal(got.revision, set.summary.revision);
      assert.equal(got.action_index.length, rows);
      assert.deepEqual(got.action_index, want.action_index, name);
      assert.deepEqual(got.target_index, want.target_index, name);
      assert.deepEqual(got.score.map(float32Bits), want.score.map(float32Bits),
                       name);
      assert.deepEqual([...got.flags], [...want.flags], name);
      assert.ok(got.action_index.some((a) => a >= 0), name);
      targeted += got.target_index.filter((t) => t >= 0).length;
    }
    assert.ok(targeted > 0, 'the mages chose targets');
  });

test('a stream answers every block in order, each row numbered once',
  async () => {
    const set = await call('GetBehaviourSet', { name: 'arena_mage' });
    const c = chunk(set, 256, 7);
    const stream = client.DecideStream();
    const answers = [];
    const done = new Promise((resolve, reject) => {
      stream.on('data', (r) => answers.push(r));
      stream.on('end', resolve);
      stream.on('error', reject);
    });
    for (let i = 1; i <= 20; ++i) {
      stream.write({ request_id: String(i), blocks: [block(set, c)] });
    }
    stream.end();
    await done;
    assert.deepEqual(answers.map((a) => a.request_id),
                     Array.from({ length: 20 }, (_, i) => String(i + 1)));
    const bases = new Set();
    for (const a of answers) {
      assert.equal(a.blocks.length, 1);
      assert.equal(a.blocks[0].action_index.length, 256);
      assert.deepEqual(a.blocks[0].action_index, answers[0].blocks[0].action_index);
      bases.add(a.blocks[0].decision_id_base);
    }
    assert.equal(bases.size, 20, 'each batch has its own decision ids');
  });

test('a bad row costs only its own decision; a stale block only itself',
  async () => {
    const set = await call('GetBehaviourSet', { name: 'eat_hide_wander' });
    const c = chunk(set, 4, 3);
    const good = block(set, c);
    good.current_action = [-1, 99, -1, -1];
    const stale = { ...block(set, c), expected_revision: '0'.repeat(16) };
    const answer = await call('Decide', { blocks: [good, stale, block(set, c)] });
    const [g, s, again] = answer.blocks;
    assert.deepEqual(g.full.map((x) => x.agent), [1]);
    assert.equal(g.full[0].decision.error.field,
                 'blocks[0].rows[1].current_action');
    assert.equal(g.action_index[1], -1);
    assert.equal(g.flags[1], 4);  // COMPACT_FLAG_FULL
    for (const r of [0, 2, 3]) assert.ok(g.action_index[r] >= 0, `row ${r}`);
    assert.equal(s.error.reason, 'ERROR_REASON_STALE_REVISION');
    assert.equal(s.error.field, 'blocks[1].expected_revision');
    assert.equal(s.action_index.length, 0);
    assert.equal(again.action_index.length, 4);
  });
