/**
 * Keeps each agent's behaviour-tree state between calls, so a game server
 * only reports how its leaves went (docs/TREES.md). The service keeps no
 * state: the tracker is the agent's memory.
 *
 * ```ts
 * const trees = new TreeTracker();
 * trees.prepare(snapshot);              // state and leaf outcomes in
 * const answer = await client.decide({ agents: [snapshot] });
 * trees.update(answer.decisions[0]);    // new state, leaves to run
 * // later, when a leaf the game runs ends:
 * trees.report("guard-1", leaf.node, NodeStatus.NODE_STATUS_SUCCESS);
 * ```
 * @module
 */
import type { AgentSnapshot, Decision, LeafOutcome, TreeLeaf } from "./gen/utilityd/v1/decision_service.js";
import type { NodeStatus } from "./gen/utilityd/v1/behaviour_set.js";

interface Agent {
  state: Buffer;
  running: TreeLeaf[];
  outcomes: LeafOutcome[];
}

/** Tree state and pending leaf outcomes per agent id. */
export class TreeTracker {
  private readonly agents = new Map<string, Agent>();

  /**
   * Writes the agent's state and the outcomes reported since its last
   * decision into `snapshot` (by its agentId). An agent not seen before
   * starts from its tree's root.
   */
  prepare(snapshot: AgentSnapshot): void {
    const agent = this.agents.get(snapshot.agentId);
    snapshot.leafOutcomes = agent === undefined ? [] : agent.outcomes.map((o) => ({ ...o }));
    snapshot.treeState = agent === undefined ? Buffer.alloc(0) : agent.state;
  }

  /**
   * Takes a decision: its new state and the leaves running. Reported
   * outcomes are cleared once a decision without an error took them; after
   * an error they are sent again with the same state.
   */
  update(decision: Decision): void {
    if (decision.error !== undefined) return;
    const agent = this.entry(decision.agentId);
    agent.state = decision.treeState;
    agent.running = decision.runLeaves;
    agent.outcomes = [];
  }

  /** Records how a leaf (TreeLeaf.node) of the agent went; a leaf not reported is still running. */
  report(agentId: string, leaf: number, status: NodeStatus): void {
    const agent = this.entry(agentId);
    const known = agent.outcomes.find((o) => o.leaf === leaf);
    if (known !== undefined) known.status = status;
    else agent.outcomes.push({ leaf, status });
  }

  /** The leaves the agent's last decision runs. */
  running(agentId: string): readonly TreeLeaf[] {
    return this.agents.get(agentId)?.running ?? [];
  }

  /** Drops an agent (despawned); its next decision starts its tree afresh. */
  forget(agentId: string): void {
    this.agents.delete(agentId);
  }

  get size(): number {
    return this.agents.size;
  }

  private entry(agentId: string): Agent {
    let agent = this.agents.get(agentId);
    if (agent === undefined) {
      agent = { state: Buffer.alloc(0), running: [], outcomes: [] };
      this.agents.set(agentId, agent);
    }
    return agent;
  }
}
