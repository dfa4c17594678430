/**
 * The block form (docs/SERVICE.md, "Blocks"): a chunk of agents as typed
 * arrays, the way an ECS keeps components, with no object per agent on
 * either side. {@link BlockColumns} go in, {@link BlockAnswer} comes out.
 * @module
 */
import type { CallInfo } from "./calls.js";
import {
  type DeepPartial,
  DecideRequest,
  DecideResponse,
  Error as ErrorMessage,
  FactorLayout,
  IndexedDecision,
} from "./gen/utilityd/v1/decision_service.js";
import type { NodeStatus } from "./gen/utilityd/v1/behaviour_set.js";
import { ColumnReader, copyBytes, Reader, WIRE_I64, WIRE_LEN, Writer } from "./wire.js";

/**
 * One block's input: the agents of one set as columns. Optional columns
 * may be left out (every row takes the default; see `AgentBlock` in
 * decision_service.proto). Pass typed arrays; plain number arrays work too.
 */
export interface BlockColumns {
  behaviourSet: string;
  /** Sent as `expected_revision` when given. */
  expectedRevision?: string;
  /** The game's entity ids, one per row. */
  agentIds: BigUint64Array | readonly bigint[];
  /** rows x factors values in the set's factor order, laid out by `layout`. */
  factors: Float32Array | readonly number[];
  /** Rows (agent-major, the default) or columns (factor-major, as ECS chunks). */
  layout?: FactorLayout;
  /** Action index per row, -1 none. */
  currentAction?: Int32Array | readonly number[];
  /** rows x actions, row-major; NaN or +Infinity: not recently. */
  secondsSinceAction?: Float32Array | readonly number[];
  seeds?: BigUint64Array | readonly bigint[];
  /** Personality index per row, -1 none. */
  personality?: Int32Array | readonly number[];
  /** Targets: rows + 1 offsets into the block's targets. */
  targetOffsets?: Uint32Array | readonly number[];
  /** Each target's factors in the set's target factor order. */
  targetFactors?: Float32Array | readonly number[];
  /** The game's entity id of each target. */
  targetIds?: BigUint64Array | readonly bigint[];
  /** Running target's number within the row's targets; -1 not given, -2 gone. */
  currentTarget?: Int32Array | readonly number[];
  /** Rows to explain at the request's explain level. */
  explainRows?: Uint32Array | readonly number[];
  /** Trees: the tick's game time for every row. */
  gameTime?: number;
  /** Trees: each row's state (rows + 1 offsets into treeStates); see {@link carryTreeState}. */
  treeStateOffsets?: Uint32Array | readonly number[];
  treeStates?: Uint8Array;
  /** Trees: how the leaves the last tick ran went (rows + 1 offsets). */
  outcomeOffsets?: Uint32Array | readonly number[];
  outcomeLeaves?: Int32Array | readonly number[];
  outcomeStatuses?: Int32Array | readonly NodeStatus[];
  /** Coordination: what each row holds (rows + 1 offsets); see {@link carryHeld}. */
  heldOffsets?: Uint32Array | readonly number[];
  heldResources?: Uint32Array | readonly number[];
  heldTargetIds?: BigUint64Array | readonly bigint[];
  heldAmounts?: Uint32Array | readonly number[];
  /**
   * Ask for the answer's indices in fixed-width columns (`fixed_width_indices`,
   * docs/SERVICE.md "Blocks"): fewer instructions on the server for 6 more
   * bytes a row. {@link decodeBlock} reads either form.
   */
  fixedWidthIndices?: boolean;
}

const NONE: readonly never[] = [];

/** Writes `c` as an `AgentBlock` message body (fields in number order). */
export function writeBlock(c: BlockColumns, w: Writer): void {
  w.string(1, c.behaviourSet);
  w.string(2, c.expectedRevision ?? "");
  w.enumValue(3, c.layout ?? FactorLayout.FACTOR_LAYOUT_ROWS);
  w.fixed64s(4, c.agentIds);
  w.floats(5, c.factors);
  w.sint32s(6, c.currentAction ?? NONE);
  w.floats(7, c.secondsSinceAction ?? NONE);
  w.fixed64s(8, c.seeds ?? NONE);
  w.sint32s(9, c.personality ?? NONE);
  w.uint32s(10, c.targetOffsets ?? NONE);
  w.floats(11, c.targetFactors ?? NONE);
  w.fixed64s(12, c.targetIds ?? NONE);
  w.sint32s(13, c.currentTarget ?? NONE);
  w.uint32s(14, c.explainRows ?? NONE);
  w.double(15, c.gameTime ?? 0);
  w.uint32s(16, c.treeStateOffsets ?? NONE);
  w.bytes(17, c.treeStates ?? new Uint8Array());
  w.uint32s(18, c.outcomeOffsets ?? NONE);
  w.sint32s(19, c.outcomeLeaves ?? NONE);
  w.uint32s(20, c.outcomeStatuses ?? NONE);
  w.uint32s(21, c.heldOffsets ?? NONE);
  w.uint32s(22, c.heldResources ?? NONE);
  w.fixed64s(23, c.heldTargetIds ?? NONE);
  w.uint32s(24, c.heldAmounts ?? NONE);
  w.bool(25, c.fixedWidthIndices ?? false);
}

/** `c` as the bytes of an `AgentBlock` message. */
export function encodeBlock(c: BlockColumns): Uint8Array {
  const w = new Writer(64 + c.factors.length * 4 + c.agentIds.length * 8);
  writeBlock(c, w);
  return w.finish().slice();
}

/** A request: everything `DecideRequest` has, blocks as columns. */
export type DecideInput = DeepPartial<Omit<DecideRequest, "blocks">> & { blocks?: BlockColumns[] };

/** `input` as the bytes of a `DecideRequest` (the blocks appended, field 8). */
export function encodeRequest(input: DecideInput): Uint8Array {
  const { blocks, ...rest } = input;
  const head = DecideRequest.encode(DecideRequest.fromPartial({ ...rest, blocks: [] })).finish();
  if (blocks === undefined || blocks.length === 0) return head;
  const w = new Writer(head.length + 1024);
  w.raw(head);
  for (const b of blocks) w.message(8, (body) => writeBlock(b, body));
  return w.finish().slice();
}

/** One block's answer, as columns (`DecisionBlock`); entry r is row r's. */
export interface BlockAnswer {
  actionIndex: Int32Array;
  targetIndex: Int32Array;
  score: Float32Array;
  /** Sums of CompactFlag values (SWITCHED 1, FALLBACK 2, FULL 4, DENIED 8). */
  flags: Uint8Array;
  revision: string;
  /** Row r's decision id is decisionId(decisionIdBase, r). */
  decisionIdBase?: bigint;
  /** Failed rows' errors and explained rows' decisions, in row order. */
  full: IndexedDecision[];
  /** Set when the whole block was refused; the columns are then empty. */
  error?: ErrorMessage;
  treeStatus: Int32Array;
  treeStateOffsets: Uint32Array;
  treeStates: Uint8Array;
  runOffsets: Uint32Array;
  runNodes: Int32Array;
  runActions: Int32Array;
  runTargets: Int32Array;
  runStarted: Uint8Array;
  haltedOffsets: Uint32Array;
  haltedNodes: Int32Array;
  haltedActions: Int32Array;
  haltedTargets: Int32Array;
  treeReset: Uint8Array;
  grantOffsets: Uint32Array;
  grantResources: Uint32Array;
  grantTargetIds: BigUint64Array;
  grantAmounts: Uint32Array;
}

/** A `DecideResponse` whose blocks are {@link BlockAnswer}s. */
export type Answer = Omit<DecideResponse, "blocks"> & {
  blocks: BlockAnswer[];
  /** How the batch went: its attempts and the replica that answered. */
  info?: CallInfo;
};

/**
 * Reads a `DecisionBlock` message from `bytes[start, end)`, its indices from
 * the fixed-width columns or the varint ones, whichever the server wrote.
 */
export function decodeBlock(bytes: Uint8Array, start = 0, end = bytes.length): BlockAnswer {
  const r = new Reader(bytes, start, end);
  const i32 = () => new ColumnReader<Int32Array>("sint32");
  const u32 = () => new ColumnReader<Uint32Array>("uint32");
  const cols = {
    action: i32(), target: i32(), score: new ColumnReader<Float32Array>("float"),
    treeStatus: new ColumnReader<Uint32Array>("uint32"), treeStateOffsets: u32(),
    runOffsets: u32(), runNodes: i32(), runActions: i32(), runTargets: i32(),
    haltedOffsets: u32(), haltedNodes: i32(), haltedActions: i32(), haltedTargets: i32(),
    grantOffsets: u32(), grantResources: u32(), grantTargetIds: new ColumnReader<BigUint64Array>("fixed64"),
    grantAmounts: u32(),
    // The same indices, when the block asked for them fixed-width.
    actionFixed: new ColumnReader<Int32Array>("sfixed32"),
    targetFixed: new ColumnReader<Int32Array>("sfixed32"),
  };
  const byField: { [field: number]: ColumnReader<Int32Array | Uint32Array | Float32Array | BigUint64Array> } = {
    1: cols.action, 2: cols.target, 3: cols.score, 9: cols.treeStatus, 10: cols.treeStateOffsets,
    12: cols.runOffsets, 13: cols.runNodes, 14: cols.runActions, 15: cols.runTargets,
    17: cols.haltedOffsets, 18: cols.haltedNodes, 19: cols.haltedActions, 20: cols.haltedTargets,
    22: cols.grantOffsets, 23: cols.grantResources, 24: cols.grantTargetIds, 25: cols.grantAmounts,
    27: cols.actionFixed, 28: cols.targetFixed,
  };
  const out: Partial<BlockAnswer> & { full: IndexedDecision[] } = { full: [], revision: "" };
  const empty: Uint8Array = new Uint8Array();
  let flags = empty, treeStates = empty, runStarted = empty, treeReset = empty;
  while (!r.done()) {
    const tag = r.varint32() >>> 0;
    const field = tag >>> 3, wire = tag & 7;
    const column = byField[field];
    if (column !== undefined) {
      column.read(r, wire);
      continue;
    }
    if (wire === WIRE_LEN && (field === 4 || field === 5 || field === 7 || field === 8 || field === 11 || field === 16 || field === 21)) {
      const [s, e] = r.span();
      switch (field) {
        case 4: flags = copyBytes(bytes, s, e); break;
        case 5: out.revision = new TextDecoder().decode(bytes.subarray(s, e)); break;
        case 7: out.full.push(IndexedDecision.decode(bytes.subarray(s, e))); break;
        case 8: out.error = ErrorMessage.decode(bytes.subarray(s, e)); break;
        case 11: treeStates = copyBytes(bytes, s, e); break;
        case 16: runStarted = copyBytes(bytes, s, e); break;
        case 21: treeReset = copyBytes(bytes, s, e); break;
      }
      continue;
    }
    if (field === 6 && wire === WIRE_I64) {
      out.decisionIdBase = r.fixed64();
      continue;
    }
    r.skip(wire);
  }
  const treeStatus = cols.treeStatus.result();
  // The fixed-width index columns when the server answered in them.
  const actionFixed = cols.actionFixed.result(), targetFixed = cols.targetFixed.result();
  const fixed = actionFixed.length > 0 || targetFixed.length > 0;
  return {
    ...out,
    actionIndex: fixed ? actionFixed : cols.action.result(),
    targetIndex: fixed ? targetFixed : cols.target.result(),
    score: cols.score.result(),
    flags,
    revision: out.revision ?? "",
    treeStatus: new Int32Array(treeStatus.buffer, treeStatus.byteOffset, treeStatus.length),
    treeStateOffsets: cols.treeStateOffsets.result(),
    treeStates,
    runOffsets: cols.runOffsets.result(),
    runNodes: cols.runNodes.result(),
    runActions: cols.runActions.result(),
    runTargets: cols.runTargets.result(),
    runStarted,
    haltedOffsets: cols.haltedOffsets.result(),
    haltedNodes: cols.haltedNodes.result(),
    haltedActions: cols.haltedActions.result(),
    haltedTargets: cols.haltedTargets.result(),
    treeReset,
    grantOffsets: cols.grantOffsets.result(),
    grantResources: cols.grantResources.result(),
    grantTargetIds: cols.grantTargetIds.result(),
    grantAmounts: cols.grantAmounts.result(),
  } as BlockAnswer;
}

/**
 * Reads a `DecideResponse`: its blocks as {@link BlockAnswer}s (typed
 * arrays), everything else through the generated code.
 */
export function decodeResponse(bytes: Uint8Array): Answer {
  const r = new Reader(bytes);
  const blocks: BlockAnswer[] = [];
  let rest: Writer | undefined;
  let copied = 0;  // bytes before this offset are in `rest` (or none)
  while (!r.done()) {
    const at = r.pos;
    const tag = r.varint32() >>> 0;
    if (tag >>> 3 === 6 && (tag & 7) === WIRE_LEN) {
      const [s, e] = r.span();
      rest ??= new Writer(bytes.length);
      rest.raw(bytes.subarray(copied, at));
      copied = r.pos;
      blocks.push(decodeBlock(bytes, s, e));
      continue;
    }
    r.skip(tag & 7);
  }
  let head = bytes;
  if (rest !== undefined) {
    rest.raw(bytes.subarray(copied));
    head = rest.finish();
  }
  const response = DecideResponse.decode(head);
  return { ...response, blocks };
}

/** A row that was not decided, and why. */
export interface RowError {
  row: number;
  error: ErrorMessage;
}

/** The rows of `answer` that failed, with their errors, in row order. */
export function rowErrors(answer: BlockAnswer): RowError[] {
  return answer.full.filter((x) => x.decision?.error !== undefined).map((x) => ({ row: x.agent, error: x.decision!.error! }));
}

/** A tree block's next tick: `answer`'s state columns, unchanged. */
export function carryTreeState(answer: BlockAnswer, next: BlockColumns): void {
  next.treeStateOffsets = answer.treeStateOffsets;
  next.treeStates = answer.treeStates;
}

/** A coordinated block's next tick: what `answer` granted each row is what it holds. */
export function carryHeld(answer: BlockAnswer, next: BlockColumns): void {
  next.heldOffsets = answer.grantOffsets;
  next.heldResources = answer.grantResources;
  next.heldTargetIds = answer.grantTargetIds;
  next.heldAmounts = answer.grantAmounts;
}
