// The example room with real processes: two utilityd replicas on loopback
// (each with a decision log), the Colyseus server booted by
// @colyseus/testing, and two real Colyseus clients over WebSocket. The
// clients see every NPC acting on utilityd's decisions — the same actions
// the replicas logged for the snapshots the room sent, decision id by
// decision id — the guards' tree carried from tick to tick, and when one
// replica dies to kill -9 the room goes on deciding on the other with no
// NPC more than a tick without a fresh decision.
//
//   UTILITYD=build/server/utilityd UTILITYD_REPO=. node --test dist/test/room.test.js
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { boot, type ColyseusTestServer } from "@colyseus/testing";
import { binary, freePort, repo, type Replica, startReplica } from "@utilityd/client/testing";
import { type ArenaState, NpcRoom } from "../npc_room.js";

/** A replica whose decision log (JSON lines) is `log`. */
async function logged(log: string): Promise<Replica> {
  return startReplica(0, [`--decision_log=${log}`, "--decision_log_format=json"]);
}

/** Logged decisions by decision id. */
function readLog(path: string): Map<string, { agentId: string; action: string; behaviourSet: string; treeReset?: string }> {
  const entries = new Map();
  if (!existsSync(path)) return entries;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    const e = JSON.parse(line);
    entries.set(e.decisionId ?? e.decision_id, {
      agentId: e.agentId ?? e.agent_id,
      action: e.action ?? "",
      behaviourSet: e.behaviourSet ?? e.behaviour_set,
      treeReset: e.treeReset ?? e.tree_reset,
    });
  }
  return entries;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Seen {
  npc: string;
  decisionId: string;
  action: string;
  tick: number;
}

test("a Colyseus room's NPCs are decided by utilityd, through a replica's death", async () => {
  assert.ok(binary !== "" && repo !== "", "set UTILITYD and UTILITYD_REPO");
  const dir = mkdtempSync(join(tmpdir(), "utilityd-colyseus-"));
  const logs = { a: join(dir, "a.log"), b: join(dir, "b.log") };
  const a = await logged(logs.a);
  const b = await logged(logs.b);
  let colyseus: ColyseusTestServer | undefined;
  try {
    colyseus = await boot({ initializeGameServer: (server) => server.define("arena", NpcRoom) }, await freePort());
    const room = await colyseus.createRoom<ArenaState>("arena", {
      target: `127.0.0.1:${a.port},127.0.0.1:${b.port}`,
      foragers: 8,
      guards: 3,
      aiHz: 10,
      deadlineMs: 500,
    });
    const clients = [await colyseus.connectTo(room), await colyseus.connectTo(room)];
    for (const c of clients) c.onMessage("welcome", () => {});
    // What each client sees, as it sees it.
    const seen: Seen[][] = [[], []];
    clients.forEach((c, k) =>
      c.onStateChange((state: any) => {
        state.npcs.forEach((npc: { decisionId: string; action: string; decidedTick: number }, id: string) => {
          if (npc.decisionId !== "") seen[k].push({ npc: id, decisionId: npc.decisionId, action: npc.action, tick: npc.decidedTick });
        });
      }),
    );
    await sleep(2000);
    const killedAt = room.state.tick;
    await a.stop("SIGKILL");
    // From here every NPC's freshest decision is watched on the server's
    // state at every AI tick.
    let worstGap = 0;
    let emptyActions = 0;
    const watchUntil = Date.now() + 2500;
    while (Date.now() < watchUntil) {
      await sleep(100);
      room.state.npcs.forEach((npc) => {
        // A guard's tree may run no leaf for a tick (between leaves): that
        // is its decision; a forager always has an action.
        if (npc.kind === "forager" && npc.action === "") ++emptyActions;
        worstGap = Math.max(worstGap, room.state.tick - npc.decidedTick);
      });
    }
    const ticks = room.state.tick;
    const { failed, skipped } = room.state;
    await Promise.all(clients.map((c) => c.leave()));
    await b.stop("SIGTERM"); // its log is complete
    console.log(`ticks ${ticks} (kill at ${killedAt}), failed ${failed}, skipped ${skipped}, worst gap ${worstGap}`);

    // Both clients saw the NPCs act: every NPC, and the same decisions.
    for (const k of [0, 1]) {
      assert.equal(new Set(seen[k].map((s) => s.npc)).size, 11, `client ${k} saw every NPC decided`);
    }
    const ids = (k: number) => new Set(seen[k].map((s) => s.decisionId));
    const common = [...ids(0)].filter((id) => ids(1).has(id));
    assert.ok(common.length > 100, `the clients share ${common.length} decisions`);

    // What they saw is what the replicas logged for the room's snapshots.
    const logA = readLog(logs.a); // cut by kill -9: whatever it wrote
    const logB = readLog(logs.b);
    let matched = 0, afterKill = 0;
    for (const s of seen[0]) {
      const entry = logB.get(s.decisionId) ?? logA.get(s.decisionId);
      if (s.tick > killedAt + 1) {
        ++afterKill;
        assert.ok(logB.has(s.decisionId), `decision ${s.decisionId} of ${s.npc} after the kill is in B's log`);
      }
      if (entry === undefined) continue; // A's unwritten tail
      assert.equal(entry.agentId, s.npc);
      assert.equal(entry.action, s.action, `${s.npc}'s decision ${s.decisionId}`);
      ++matched;
    }
    assert.ok(matched > 50, `matched ${matched} observations with the logs`);
    // Both replicas decided: round robin, until A died.
    assert.ok(logA.size > 0 && logB.size > 0, `logged by A ${logA.size}, by B ${logB.size}`);
    assert.ok(afterKill > 0, "decisions after the kill were seen");

    // The guards' trees resumed their state tick after tick (the tracker
    // carried it), running leaves of guard_tree.
    const guardEntries = [...logB.values()].filter((e) => e.behaviourSet === "guard_tree");
    assert.ok(guardEntries.length > 20);
    assert.ok(guardEntries.filter((e) => (e.treeReset ?? "") === "").length > guardEntries.length / 2);
    const leafActions = new Set(guardEntries.map((e) => e.action));
    for (const action of leafActions) {
      assert.ok(["move_to_player", "fireball", "staff_strike", "drink_potion", "patrol", ""].includes(action), action);
    }

    // The kill cost at most the call in flight: no NPC went more than a
    // tick without a fresh decision, none without an action.
    assert.equal(emptyActions, 0);
    assert.ok(worstGap <= 2, `worst gap ${worstGap} ticks`);
    assert.ok(ticks - killedAt >= 15, "the room kept ticking");
  } finally {
    await colyseus?.shutdown();
    await a.stop("SIGKILL");
    await b.stop("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
});
