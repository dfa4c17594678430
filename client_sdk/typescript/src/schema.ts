/**
 * A behaviour set's schema: its factor order, so that agents written with
 * named factors travel packed (a float array in the set's order), and
 * columns can be laid out by name.
 * @module
 */
import type { AgentSnapshot, BehaviourSetSummary } from "./gen/utilityd/v1/decision_service.js";

/** Thrown by {@link SetSchema.pack}: names the unknown or missing factor. */
export class PackError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PackError";
  }
}

/** One set's summary, with its names indexed. */
export class SetSchema {
  /** As `GetBehaviourSet` returned it. */
  readonly summary: BehaviourSetSummary;
  private readonly factors = new Map<string, number>();
  private readonly targetFactors = new Map<string, number>();
  private readonly actions = new Map<string, number>();
  private readonly resources = new Map<string, number>();
  private readonly personalities = new Map<string, number>();

  constructor(summary: BehaviourSetSummary) {
    this.summary = summary;
    summary.factors.forEach((name, i) => this.factors.set(name, i));
    summary.targetFactors.forEach((name, i) => this.targetFactors.set(name, i));
    summary.actions.forEach((name, i) => this.actions.set(name, i));
    summary.resources.forEach((name, i) => this.resources.set(name, i));
    summary.personalities.forEach((name, i) => this.personalities.set(name, i));
  }

  get name(): string {
    return this.summary.name;
  }
  get revision(): string {
    return this.summary.revision;
  }
  /** Packed index of a factor, or -1. */
  factorIndex(name: string): number {
    return this.factors.get(name) ?? -1;
  }
  /** Packed index of a target factor, or -1. */
  targetFactorIndex(name: string): number {
    return this.targetFactors.get(name) ?? -1;
  }
  /** Index of an action, as compact answers and a block's `actionIndex` and `currentAction` columns hold it; -1 when none has that name. */
  actionIndex(name: string): number {
    return this.actions.get(name) ?? -1;
  }
  /** Index of a personality, as a block's `personality` column holds it; -1 when the set has none of that name. */
  personalityIndex(name: string): number {
    return this.personalities.get(name) ?? -1;
  }
  /** Index of a resource (as block held/grant columns use it), or -1. */
  resourceIndex(name: string): number {
    return this.resources.get(name) ?? -1;
  }

  /**
   * Moves `snapshot`'s named factors (and its targets') into packed order
   * and sets `expectedRevision`. Throws {@link PackError} naming an unknown
   * or missing factor, leaving `snapshot` unchanged. Agents that already
   * send packed factors are left alone. Returns whether it packed.
   */
  pack(snapshot: AgentSnapshot): boolean {
    const agentNamed = Object.keys(snapshot.namedFactors).length > 0 && snapshot.factors.length === 0;
    const agentValues = agentNamed
      ? packValues(snapshot.namedFactors, this.factors, this.summary.factors, "")
      : undefined;
    const targets: Array<[number, number[]]> = [];
    snapshot.targets.forEach((t, i) => {
      if (Object.keys(t.namedFactors).length === 0 || t.factors.length > 0) return;
      targets.push([i, packValues(t.namedFactors, this.targetFactors, this.summary.targetFactors, `targets[${i}].`)]);
    });
    if (agentValues === undefined && targets.length === 0) return false;
    if (agentValues !== undefined) {
      snapshot.factors = agentValues;
      snapshot.namedFactors = {};
    }
    for (const [i, values] of targets) {
      snapshot.targets[i].factors = values;
      snapshot.targets[i].namedFactors = {};
    }
    snapshot.expectedRevision = this.revision;
    return true;
  }
}

function packValues(
  named: { [name: string]: number },
  index: Map<string, number>,
  order: string[],
  where: string,
): number[] {
  const values = new Array<number>(order.length).fill(0);
  const seen = new Array<boolean>(order.length).fill(false);
  for (const [name, value] of Object.entries(named)) {
    const i = index.get(name);
    if (i === undefined) throw new PackError(`${where}named_factors: unknown factor "${name}"`);
    values[i] = value;
    seen[i] = true;
  }
  const missing = order.filter((_, i) => !seen[i]);
  if (missing.length > 0) throw new PackError(`${where}named_factors: missing ${missing.join(", ")}`);
  return values;
}
