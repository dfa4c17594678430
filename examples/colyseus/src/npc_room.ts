// A Colyseus room whose NPCs are decided by utilityd every AI tick.
//
// Foragers (eat_hide_wander) live as an ECS would keep them: one typed array
// per component, the four factor components as views of one factor-major
// Float32Array, so each tick's block is handed over without an object per
// NPC. Guards (guard_tree, a behaviour tree) go as snapshots whose tree
// state the SDK's TreeTracker carries from tick to tick. Each AI tick sends
// one batch, with a deadline; while a call is in flight the next tick is
// skipped and counted, never queued; a failed call keeps every NPC's last
// action. The room state carries each NPC's action (and the decision id
// that chose it) to the clients.
import { type Client, Room } from "@colyseus/core";
import { MapSchema, Schema, type } from "@colyseus/schema";
import {
  type BlockColumns,
  decisionId,
  decisionIdHex,
  FactorLayout,
  NodeStatus,
  TreeTracker,
  UtilitydClient,
  type v1,
} from "@utilityd/client";

export class Npc extends Schema {
  @type("string") kind = "";
  /** The action the NPC is doing: its last decision's (kept when a call fails). */
  @type("string") action = "";
  @type("string") target = "";
  /** The decision that chose `action` (as in utilityd's decision log). */
  @type("string") decisionId = "";
  /** The AI tick of that decision. */
  @type("uint32") decidedTick = 0;
}

export class ArenaState extends Schema {
  @type({ map: Npc }) npcs = new MapSchema<Npc>();
  /** AI ticks so far (sent, skipped or failed). */
  @type("uint32") tick = 0;
  @type("uint32") skipped = 0;
  @type("uint32") failed = 0;
}

/** What `onCreate` takes (`gameServer.define("arena", NpcRoom, options)`). */
export interface NpcRoomOptions {
  /** utilityd: "host:port" or a list of replicas "ip:port,ip:port". */
  target: string;
  foragers?: number;
  guards?: number;
  /** AI ticks per second. Default 10. */
  aiHz?: number;
  /** Deadline of each call, ms. Default 250. */
  deadlineMs?: number;
  /** Deadline of the first connection, ms. Default 5000. */
  connectTimeoutMs?: number;
}

const FORAGER_FACTORS = ["hunger", "danger", "food_distance", "idle_time"];

export class NpcRoom extends Room<ArenaState> {
  private ai!: UtilitydClient;
  private deadlineMs = 250;
  private inFlight = false;
  private readonly trees = new TreeTracker();
  // Foragers as components; `factors` holds hunger, danger, food distance
  // and idle time, factor-major, in eat_hide_wander's factor order.
  private foragerIds = new BigUint64Array();
  private factors = new Float32Array();
  private current = new Int32Array();
  private foragerActions: string[] = [];
  private foragerRevision = "";
  // Guards: distance to the player and mana, by guard.
  private guards: Array<{ id: string; distance: number; mana: number; health: number }> = [];
  private guardFactors: string[] = [];
  private rng = 1;

  async onCreate(options: NpcRoomOptions): Promise<void> {
    this.setState(new ArenaState());
    this.deadlineMs = options.deadlineMs ?? 250;
    this.ai = UtilitydClient.connect({ target: options.target, deadlineMs: this.deadlineMs });
    // Within the join's own timeout: a room that waits longer turns
    // "utilityd is down" into the player's socket hang up.
    await this.ai.waitForReady(options.connectTimeoutMs ?? 1000);
    await this.spawn(options.foragers ?? 8, options.guards ?? 4);
    this.setSimulationInterval((ms) => this.step(ms / 1000), 50);
    this.clock.setInterval(() => void this.aiTick(), 1000 / (options.aiHz ?? 10));
  }

  onJoin(client: Client): void {
    client.send("welcome", { npcs: this.state.npcs.size });
  }

  onDispose(): void {
    this.ai?.close();
  }

  private random(): number {
    this.rng = (this.rng * 1103515245 + 12345) % 2147483648;
    return this.rng / 2147483648;
  }

  private async spawn(foragers: number, guards: number): Promise<void> {
    const schema = await this.ai.schema("eat_hide_wander");
    // The component arrays are laid out by the set's own factor order.
    const order = FORAGER_FACTORS.map((f) => schema.factorIndex(f));
    if (order.some((i) => i < 0) || schema.summary.factors.length !== FORAGER_FACTORS.length) {
      throw new Error(`eat_hide_wander's factors are ${schema.summary.factors.join(", ")}`);
    }
    this.foragerActions = schema.summary.actions;
    this.foragerRevision = schema.revision;
    this.foragerIds = new BigUint64Array(foragers);
    this.factors = new Float32Array(foragers * FORAGER_FACTORS.length);
    this.current = new Int32Array(foragers).fill(-1);
    for (let i = 0; i < foragers; ++i) {
      this.foragerIds[i] = BigInt(1000 + i);
      this.component("hunger")[i] = this.random();
      this.component("danger")[i] = this.random() * 0.5;
      this.component("food_distance")[i] = 25 * this.random();
      this.state.npcs.set(String(1000 + i), new Npc().assign({ kind: "forager" }));
    }
    this.guardFactors = (await this.ai.schema("guard_tree")).summary.factors;
    for (let i = 0; i < guards; ++i) {
      const id = `guard-${i}`;
      this.guards.push({ id, distance: 10 + 20 * this.random(), mana: 100, health: 100 });
      this.state.npcs.set(id, new Npc().assign({ kind: "guard" }));
    }
  }

  /** A forager component: a view into the factor-major block. */
  private component(name: string): Float32Array {
    const n = this.foragerIds.length;
    const f = FORAGER_FACTORS.indexOf(name);
    return this.factors.subarray(f * n, (f + 1) * n);
  }

  /** The world moves on: needs grow, what NPCs do changes them. */
  private step(dt: number): void {
    const hunger = this.component("hunger"), danger = this.component("danger");
    const food = this.component("food_distance"), idle = this.component("idle_time");
    for (let i = 0; i < this.foragerIds.length; ++i) {
      const doing = this.current[i] >= 0 ? this.foragerActions[this.current[i]] : "";
      hunger[i] = Math.min(1, Math.max(0, hunger[i] + (doing === "eat" ? -0.3 : 0.05) * dt));
      danger[i] = Math.min(1, Math.max(0, danger[i] + (this.random() - 0.5) * 0.4 * dt - (doing === "hide" ? 0.2 * dt : 0)));
      food[i] = Math.min(25, Math.max(0, food[i] + (doing === "eat" ? -5 : 0.5) * dt));
      idle[i] = doing === "wander" ? Math.min(20, idle[i] + dt) : 0;
    }
    for (const g of this.guards) {
      g.distance = Math.min(40, Math.max(0, g.distance + (this.random() - 0.5) * 4 * dt));
      g.mana = Math.min(100, g.mana + 5 * dt);
    }
  }

  /** One AI tick: one batch, one call in flight, a deadline; failures keep the last actions. */
  private async aiTick(): Promise<void> {
    const tick = ++this.state.tick;
    if (this.inFlight) {
      ++this.state.skipped;
      return;
    }
    this.inFlight = true;
    try {
      const block: BlockColumns = {
        behaviourSet: "eat_hide_wander",
        expectedRevision: this.foragerRevision,
        layout: FactorLayout.FACTOR_LAYOUT_COLUMNS,
        agentIds: this.foragerIds,
        factors: this.factors,
        currentAction: this.current,
      };
      const guards = this.guards.map((g) => {
        const snapshot = {
          agentId: g.id,
          behaviourSet: "guard_tree",
          gameTime: tick / 10,
          namedFactors: Object.fromEntries(
            this.guardFactors.map((f) => [
              f,
              { player_visible: g.distance < 25 ? 1 : 0, player_distance: g.distance, health: g.health, mana: g.mana }[f] ?? 0,
            ]),
          ),
          targets: [{ targetId: "player", namedFactors: { distance: g.distance, health: 100 } }],
        } as unknown as v1.AgentSnapshot;
        this.trees.prepare(snapshot);
        return snapshot;
      });
      const answer = await this.ai.decide({ agents: guards, blocks: [block] }, { deadlineMs: this.deadlineMs });
      this.applyForagers(answer.blocks[0], tick);
      answer.decisions.forEach((d, k) => this.applyGuard(this.guards[k].id, d, tick));
    } catch (e) {
      ++this.state.failed; // every NPC keeps its last action
    } finally {
      this.inFlight = false;
    }
  }

  private applyForagers(b: { actionIndex: Int32Array; decisionIdBase?: bigint; error?: v1.Error }, tick: number): void {
    if (b.error !== undefined) return;
    for (let i = 0; i < this.foragerIds.length; ++i) {
      const a = b.actionIndex[i];
      if (a < 0) continue; // a failed row keeps its action
      this.current[i] = a;
      const npc = this.state.npcs.get(String(this.foragerIds[i]))!;
      npc.action = this.foragerActions[a];
      npc.decisionId = decisionIdHex(decisionId(b.decisionIdBase ?? 0n, i));
      npc.decidedTick = tick;
    }
  }

  private applyGuard(id: string, d: v1.Decision, tick: number): void {
    if (d.error !== undefined) return;
    this.trees.update(d);
    const npc = this.state.npcs.get(id)!;
    npc.action = d.action;
    npc.target = d.targetId;
    npc.decisionId = d.decisionId;
    npc.decidedTick = tick;
    // The game runs each leaf for a tick; then it has worked.
    for (const leaf of d.runLeaves) {
      if (!leaf.started) this.trees.report(id, leaf.node, NodeStatus.NODE_STATUS_SUCCESS);
    }
    const guard = this.guards.find((g) => g.id === id)!;
    if (d.action === "move_to_player") guard.distance = Math.max(0, guard.distance - 3);
    if (d.action === "fireball") guard.mana = Math.max(0, guard.mana - 20);
  }
}
