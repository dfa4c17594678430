// The SDK against the vectors the C++ SDK's tests read too
// (tests/vectors/client_sdk_vectors.json, made by Python's protobuf):
// decision ids, packing, block encoding and decoding, the tree tracker.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { SdkVectors } from "../gen/sdk_vectors.js";
import { AgentSnapshot, type AgentBlock, type DecisionBlock } from "../gen/utilityd/v1/decision_service.js";
import {
  type BlockColumns,
  decodeBlock,
  decodeResponse,
  encodeBlock,
  encodeRequest,
  rowErrors,
} from "../block.js";
import { decisionId, decisionIdHex } from "../ids.js";
import { PackError, SetSchema } from "../schema.js";
import { TreeTracker } from "../tree_tracker.js";

const vectors = SdkVectors.fromJSON(
  JSON.parse(readFileSync(new URL("../../../../tests/vectors/client_sdk_vectors.json", import.meta.url), "utf8")),
);

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

test("the vectors are there", () => {
  assert.ok(vectors.decisionIds.length >= 5);
  assert.ok(vectors.packing.length >= 4);
  assert.ok(vectors.blocks.length >= 2);
  assert.ok(vectors.answers.length >= 3);
  assert.ok(vectors.trees.length >= 1);
});

test("decision ids", () => {
  for (const c of vectors.decisionIds) {
    assert.equal(decisionIdHex(decisionId(c.base, c.index)), c.hex, `base ${c.base} index ${c.index}`);
  }
});

test("named factors pack in the set's order, or name what is wrong", () => {
  for (const c of vectors.packing) {
    const schema = new SetSchema(c.summary!);
    const snapshot = AgentSnapshot.fromPartial(c.given!);
    const before = AgentSnapshot.encode(snapshot).finish();
    if (c.error !== "") {
      assert.throws(() => schema.pack(snapshot), (e: unknown) => e instanceof PackError && e.message === c.error, c.name);
      assert.equal(hex(AgentSnapshot.encode(snapshot).finish()), hex(before), `${c.name}: left unchanged`);
      continue;
    }
    schema.pack(snapshot);
    assert.deepEqual(AgentSnapshot.toJSON(snapshot), AgentSnapshot.toJSON(c.packed!), c.name);
  }
});

// A block message's columns as typed arrays, the way a game server holds them.
function columnsOf(b: AgentBlock): BlockColumns {
  return {
    behaviourSet: b.behaviourSet,
    expectedRevision: b.expectedRevision,
    layout: b.layout,
    agentIds: BigUint64Array.from(b.agentIds),
    factors: Float32Array.from(b.factors),
    currentAction: Int32Array.from(b.currentAction),
    secondsSinceAction: Float32Array.from(b.secondsSinceAction),
    seeds: BigUint64Array.from(b.seeds),
    personality: Int32Array.from(b.personality),
    targetOffsets: Uint32Array.from(b.targetOffsets),
    targetFactors: Float32Array.from(b.targetFactors),
    targetIds: BigUint64Array.from(b.targetIds),
    currentTarget: Int32Array.from(b.currentTarget),
    explainRows: Uint32Array.from(b.explainRows),
    gameTime: b.gameTime,
    treeStateOffsets: Uint32Array.from(b.treeStateOffsets),
    treeStates: b.treeStates,
    outcomeOffsets: Uint32Array.from(b.outcomeOffsets),
    outcomeLeaves: Int32Array.from(b.outcomeLeaves),
    outcomeStatuses: Int32Array.from(b.outcomeStatuses),
    heldOffsets: Uint32Array.from(b.heldOffsets),
    heldResources: Uint32Array.from(b.heldResources),
    heldTargetIds: BigUint64Array.from(b.heldTargetIds),
    heldAmounts: Uint32Array.from(b.heldAmounts),
    fixedWidthIndices: b.fixedWidthIndices,
  };
}

test("blocks encode to the reference bytes, from typed arrays and from plain arrays", () => {
  for (const c of vectors.blocks) {
    const columns = columnsOf(c.block!);
    assert.equal(hex(encodeBlock(columns)), hex(c.wire), c.name);
    const plain: BlockColumns = { ...columns, factors: [...columns.factors], agentIds: [...columns.agentIds] };
    assert.equal(hex(encodeBlock(plain)), hex(c.wire), `${c.name} (plain arrays)`);
  }
});

test("a request's blocks follow its other fields as field 8", () => {
  const c = vectors.blocks[0];
  const bytes = encodeRequest({ requestId: 5n, blocks: [columnsOf(c.block!), columnsOf(c.block!)] });
  // request_id (field 1) then two length-delimited field-8 entries.
  const head = "0805";
  const len = c.wire.length.toString(16).padStart(2, "0");
  assert.equal(hex(bytes), head + "42" + len + hex(c.wire) + "42" + len + hex(c.wire));
});

function assertColumns(got: ReturnType<typeof decodeBlock>, want: DecisionBlock, name: string): void {
  const same = (g: ArrayLike<number | bigint>, w: ArrayLike<number | bigint>, col: string) =>
    assert.deepEqual(Array.from(g), Array.from(w), `${name}: ${col}`);
  // The indices: the fixed-width columns when the answer has them.
  const fixed = want.actionIndexFixed.length > 0;
  same(got.actionIndex, fixed ? want.actionIndexFixed : want.actionIndex, "actionIndex");
  same(got.targetIndex, fixed ? want.targetIndexFixed : want.targetIndex, "targetIndex");
  same(got.score, Float32Array.from(want.score), "score");
  assert.equal(hex(got.flags), hex(want.flags), `${name}: flags`);
  assert.equal(got.revision, want.revision);
  assert.equal(got.decisionIdBase, want.decisionIdBase);
  assert.equal(got.full.length, want.full.length);
  assert.deepEqual(got.error, want.error);
  same(got.treeStatus, want.treeStatus, "treeStatus");
  same(got.treeStateOffsets, want.treeStateOffsets, "treeStateOffsets");
  assert.equal(hex(got.treeStates), hex(want.treeStates));
  for (const col of ["runOffsets", "runNodes", "runActions", "runTargets", "haltedOffsets", "haltedNodes",
    "haltedActions", "haltedTargets", "grantOffsets", "grantResources", "grantTargetIds", "grantAmounts"] as const) {
    same(got[col], want[col], col);
  }
  assert.equal(hex(got.runStarted), hex(want.runStarted));
  assert.equal(hex(got.treeReset), hex(want.treeReset));
}

test("answers decode into typed arrays", () => {
  for (const c of vectors.answers) {
    const got = decodeBlock(c.wire);
    assertColumns(got, c.block!, c.name);
    assert.ok(got.actionIndex instanceof Int32Array && got.score instanceof Float32Array);
    if (c.block!.full.length > 0) {
      assert.deepEqual(rowErrors(got).map((e) => e.row), c.block!.full.map((x) => x.agent));
    }
  }
});

test("a response's blocks come out as columns, the rest as messages", () => {
  // request_id 9, a pool, two blocks, then another pool after them.
  const pool = Buffer.from("2a0a0a0874686520706f6f6c", "hex"); // pools { resource: "the pool" }
  const parts = [Buffer.from("0809", "hex"), pool];
  for (const c of vectors.answers.slice(0, 2)) {
    parts.push(Buffer.from([0x32, c.wire.length]), Buffer.from(c.wire));
  }
  parts.push(pool);
  const answer = decodeResponse(Buffer.concat(parts));
  assert.equal(answer.requestId, 9n);
  assert.equal(answer.pools.length, 2);
  assert.equal(answer.pools[1].resource, "the pool");
  assert.equal(answer.blocks.length, 2);
  vectors.answers.slice(0, 2).forEach((c, i) => assertColumns(answer.blocks[i], c.block!, c.name));
});

test("unpacked repeated columns read as packed ones", () => {
  // action_index as three separate sint32 fields: -1, 2, 300; score 0.5 once.
  const bytes = Buffer.from("0801" + "0804" + "08d804" + "1d0000003f", "hex");
  const got = decodeBlock(bytes);
  assert.deepEqual(Array.from(got.actionIndex), [-1, 2, 300]);
  assert.deepEqual(Array.from(got.score), [0.5]);
});

test("truncated answers are refused, not misread", () => {
  const wire = vectors.answers[0].wire;
  assert.throws(() => decodeBlock(wire.subarray(0, wire.length - 3)), RangeError);
});

test("the tree tracker", () => {
  for (const c of vectors.trees) {
    const trees = new TreeTracker();
    c.steps.forEach((s, k) => {
      const where = `${c.name}, step ${k}`;
      if (s.prepare !== undefined) {
        const snapshot = AgentSnapshot.fromPartial({ agentId: s.prepare.agentId });
        trees.prepare(snapshot);
        assert.equal(hex(snapshot.treeState), hex(s.prepare.expectState), where);
        assert.deepEqual(snapshot.leafOutcomes, s.prepare.expectOutcomes, where);
        assert.equal(trees.running(s.prepare.agentId).length, s.prepare.expectRunning, where);
      } else if (s.update !== undefined) {
        trees.update(s.update);
      } else if (s.report !== undefined) {
        trees.report(s.report.agentId, s.report.leaf, s.report.status);
      } else if (s.forget !== undefined) {
        trees.forget(s.forget);
      }
    });
  }
});
