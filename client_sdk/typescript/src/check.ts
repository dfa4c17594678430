/**
 * Request objects checked before they are encoded: a field the message
 * does not have (a target written `{id}` where the field is `targetId`) is
 * an error naming it and where it is, not a field dropped in silence.
 * @module
 */
import * as grpc from "@grpc/grpc-js";
import type { BlockColumns, DecideInput } from "./block.js";
import { UtilitydError } from "./errors.js";
import {
  AgentSnapshot,
  DecideRequest,
  HeldResource,
  LeafOutcome,
  ResourcePool,
  TargetSnapshot,
} from "./gen/utilityd/v1/decision_service.js";

/** A message's fields, and those that hold messages of their own. */
interface Shape {
  fields: ReadonlySet<string>;
  children: Record<string, Shape>;
}

function shape(fns: { fromPartial(o: object): object }, children: Record<string, Shape> = {}): Shape {
  return { fields: new Set(Object.keys(fns.fromPartial({}))), children };
}

// Every key of BlockColumns, checked complete by the compiler.
const BLOCK_FIELDS: { [K in keyof Required<BlockColumns>]: true } = {
  behaviourSet: true, expectedRevision: true, agentIds: true, factors: true, layout: true,
  currentAction: true, secondsSinceAction: true, seeds: true, personality: true,
  targetOffsets: true, targetFactors: true, targetIds: true, currentTarget: true,
  explainRows: true, gameTime: true, treeStateOffsets: true, treeStates: true,
  outcomeOffsets: true, outcomeLeaves: true, outcomeStatuses: true, heldOffsets: true,
  heldResources: true, heldTargetIds: true, heldAmounts: true, fixedWidthIndices: true,
};

const AGENT = shape(AgentSnapshot, {
  targets: shape(TargetSnapshot),
  leafOutcomes: shape(LeafOutcome),
  held: shape(HeldResource),
});
const BLOCK: Shape = { fields: new Set(Object.keys(BLOCK_FIELDS)), children: {} };
const REQUEST = shape(DecideRequest, { agents: AGENT, pools: shape(ResourcePool), blocks: BLOCK });

function check(value: unknown, s: Shape, where: string): void {
  if (value === null || typeof value !== "object") return;
  for (const [key, v] of Object.entries(value)) {
    if (!s.fields.has(key)) {
      const known = [...s.fields].join(", ");
      throw new UtilitydError(grpc.status.INVALID_ARGUMENT, `${where}${key}: no such field (the fields are ${known})`, undefined, where + key);
    }
    const child = s.children[key];
    if (child === undefined || v === undefined || v === null) continue;
    if (Array.isArray(v)) v.forEach((item, i) => check(item, child, `${where}${key}[${i}].`));
    else check(v, child, `${where}${key}.`);
  }
}

/** Throws {@link UtilitydError} (INVALID_ARGUMENT) naming the first field `input` has that its message lacks. */
export function checkFields(input: DecideInput): void {
  check(input, REQUEST, "");
}
