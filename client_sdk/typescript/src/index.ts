/**
 * @utilityd/client: utilityd from TypeScript. See README.md.
 * @module
 */
export * from "./client.js";
export { type CallInfo, DecisionStream, type StreamOptions } from "./calls.js";
export type { ReplicaState } from "./replicas.js";
export * from "./block.js";
export * from "./schema.js";
export * from "./ids.js";
export * from "./errors.js";
export * from "./tree_tracker.js";
export * as v1 from "./gen/utilityd/v1/decision_service.js";
export { NodeStatus } from "./gen/utilityd/v1/behaviour_set.js";
export {
  AgentSnapshot,
  CompactFlag,
  DecisionForm,
  Explain,
  FactorLayout,
} from "./gen/utilityd/v1/decision_service.js";
export type { Decision, DecideResponse, BehaviourSetSummary } from "./gen/utilityd/v1/decision_service.js";
