"""utilityd from another language: Debian's python3-grpcio against the real
binary, with stubs generated from proto/ at build time.

Run by ctest:  /usr/bin/python3 service_test.py UTILITYD_BINARY STUBS_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

UTILITYD, STUBS = sys.argv[1], sys.argv[2]
sys.path.insert(0, STUBS)

import grpc  # noqa: E402
from utilityd.v1 import behaviour_set_pb2 as bs  # noqa: E402
from utilityd.v1 import decision_service_pb2 as pb  # noqa: E402
from utilityd.v1 import decision_service_pb2_grpc as rpc  # noqa: E402

from health import wait_serving  # noqa: E402

MASK = (1 << 64) - 1


def decision_id(base, position):
    """The compact form's decision id, written out from decision_service.proto."""
    z = (base + position) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return "%016x" % (z ^ (z >> 31))


def expand(request, compact, actions):
    """Full-form decisions from a compact answer, decoded here without the SDK:
    `actions` maps a set's name to its action names."""
    revisions = {r.behaviour_set: r.revision for r in compact.revisions}
    full = {x.agent: x.decision for x in compact.full}
    out = []
    for i, agent in enumerate(request.agents):
        flags = compact.flags[i]
        if flags & pb.COMPACT_FLAG_FULL:
            out.append(full[i])
            continue
        a, t = compact.action_index[i], compact.target_index[i]
        out.append(pb.Decision(
            agent_id=agent.agent_id,
            action=actions[agent.behaviour_set][a] if a >= 0 else "",
            action_index=a,
            target_id=agent.targets[t].target_id if t >= 0 else "",
            score=compact.score[i],
            switched=bool(flags & pb.COMPACT_FLAG_SWITCHED),
            fallback=bool(flags & pb.COMPACT_FLAG_FALLBACK),
            revision=revisions[agent.behaviour_set],
            decision_id=decision_id(compact.decision_id_base, i)))
    return out


class ServiceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp()
        port_file = os.path.join(cls.dir, "port")
        cls.server = subprocess.Popen(
            [UTILITYD, "--grpc_address=127.0.0.1:0", "--port_file=" + port_file,
             "--http_address=127.0.0.1:0", "--config_dir=examples/behaviour_sets",
             "--decision_log=" + os.path.join(cls.dir, "decisions.jsonl")],
            stderr=open(os.path.join(cls.dir, "log"), "w"))
        deadline = time.time() + 20
        while not (os.path.exists(port_file) and open(port_file).read().strip()):
            if time.time() > deadline or cls.server.poll() is not None:
                raise RuntimeError("utilityd did not start")
            time.sleep(0.02)
        address = "127.0.0.1:" + open(port_file).read().split()[0]
        cls.channel = grpc.insecure_channel(address)
        cls.stub = rpc.DecisionServiceStub(cls.channel)
        wait_serving(cls.channel, deadline)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        cls.server.terminate()
        assert cls.server.wait(timeout=20) == 0
        shutil.rmtree(cls.dir)

    def forager(self, hunger, danger, **kw):
        # Packed in the declared order that GetBehaviourSet reports.
        summary = self.stub.GetBehaviourSet(
            pb.GetBehaviourSetRequest(name="eat_hide_wander")).summary
        values = {"hunger": hunger, "danger": danger, "food_distance": 5,
                  "idle_time": 2}
        return pb.AgentSnapshot(
            agent_id="py", behaviour_set="eat_hide_wander",
            factors=[values[f] for f in summary.factors],
            expected_revision=summary.revision, **kw)

    def test_lists_sets_with_factor_order(self):
        sets = self.stub.ListBehaviourSets(pb.ListBehaviourSetsRequest()).behaviour_sets
        self.assertEqual([s.name for s in sets],
                         ["arena_goblin", "arena_mage", "eat_hide_wander",
                          "guard_tree", "villager_needs"])
        self.assertEqual(list(sets[2].factors),
                         ["hunger", "danger", "food_distance", "idle_time"])
        self.assertEqual(len(sets[2].revision), 16)

    def test_decides_with_full_explanation(self):
        response = self.stub.Decide(pb.DecideRequest(
            request_id=5, explain=pb.EXPLAIN_FULL,
            agents=[self.forager(0.8, 0.1), self.forager(0.8, 0.95)]))
        self.assertEqual(response.request_id, 5)
        eat, hide = response.decisions
        self.assertEqual((eat.action, hide.action), ("eat", "hide"))
        self.assertEqual(len(eat.decision_id), 16)
        self.assertIn("*eat", eat.explanation.summary)
        scores = {a.action: a for a in hide.explanation.actions}
        self.assertEqual(scores["eat"].vetoed, False)
        self.assertGreater(scores["hide"].score, scores["eat"].score)

    def test_named_factors_and_per_agent_errors(self):
        named = pb.AgentSnapshot(
            agent_id="named", behaviour_set="eat_hide_wander",
            named_factors={"hunger": 0.1, "danger": 0.05, "food_distance": 15,
                           "idle_time": 12})
        unknown = pb.AgentSnapshot(agent_id="x", behaviour_set="nope")
        short = pb.AgentSnapshot(agent_id="y", behaviour_set="eat_hide_wander",
                                 factors=[0.5])
        d = self.stub.Decide(pb.DecideRequest(agents=[named, unknown, short])).decisions
        self.assertEqual(d[0].action, "wander")
        self.assertEqual(d[1].error.code, pb.ERROR_CODE_NOT_FOUND)
        self.assertEqual(d[1].error.reason, pb.ERROR_REASON_UNKNOWN_SET)
        self.assertEqual(d[1].error.field, "agents[1].behaviour_set")
        self.assertEqual(d[2].error.code, pb.ERROR_CODE_INVALID_ARGUMENT)
        self.assertEqual(d[2].error.reason, pb.ERROR_REASON_FACTOR_COUNT)
        self.assertEqual(d[2].error.field, "agents[2].factors")

    def test_stream_answers_in_order(self):
        requests = [pb.DecideRequest(request_id=i, agents=[self.forager(0.8, 0.1)])
                    for i in range(1, 51)]
        responses = list(self.stub.DecideStream(iter(requests)))
        self.assertEqual([r.request_id for r in responses], list(range(1, 51)))
        self.assertTrue(all(r.decisions[0].action == "eat" for r in responses))

    def mages(self, count):
        summary = self.stub.GetBehaviourSet(
            pb.GetBehaviourSetRequest(name="arena_mage")).summary
        agents = []
        for i in range(count):
            values = {"health": (37 * i) % 100, "charges": i % 7,
                      "crystals": i % 5, "enemy_distance": (11 * i) % 30,
                      "enemies_visible": i % 4, "damage_taken": (13 * i) % 40,
                      "in_cover": i % 2, "has_potion": (i // 2) % 2,
                      "potion_at_shrine": (i // 3) % 2,
                      "shrine_distance": (7 * i) % 40}
            agents.append(pb.AgentSnapshot(
                agent_id="mage-%d" % i, behaviour_set="arena_mage",
                factors=[values[f] for f in summary.factors],
                current_action=["", "attack", "flee", "recharge"][i % 4],
                targets=[pb.TargetSnapshot(target_id="goblin-%d" % t,
                                           factors=[(5 * i + 9 * t) % 30, 10 + t])
                         for t in range(2)]))
        return agents

    def test_compact_and_full_forms_decode_to_the_same_decisions(self):
        sets = {s.name: list(s.actions) for s in
                self.stub.ListBehaviourSets(pb.ListBehaviourSetsRequest()).behaviour_sets}
        agents = self.mages(30)
        agents[4] = self.forager(0.8, 0.95)
        agents[9] = pb.AgentSnapshot(agent_id="lost", behaviour_set="nope")
        request = pb.DecideRequest(request_id=9, agents=agents)
        full = self.stub.Decide(request)
        request.form = pb.DECISION_FORM_COMPACT
        compact = self.stub.Decide(request)
        self.assertEqual(compact.request_id, 9)
        self.assertEqual(len(compact.decisions), 0)
        c = compact.compact
        self.assertEqual(len(c.action_index), 30)
        self.assertEqual(len(c.flags), 30)
        self.assertEqual([x.agent for x in c.full], [9])
        self.assertTrue(c.HasField("decision_id_base"))
        decoded = expand(request, c, sets)
        targets = 0
        for i, (a, b) in enumerate(zip(full.decisions, decoded)):
            self.assertEqual(len(a.decision_id), 0 if i == 9 else 16, i)
            a.ClearField("decision_id")  # two calls: two numberings
            b = pb.Decision.FromString(b.SerializeToString())
            b.ClearField("decision_id")
            self.assertEqual(a, b, "agent %d" % i)
            targets += bool(a.target_id)
        self.assertGreater(targets, 0)
        # At most 16 bytes per decision besides the failed agent's message.
        self.assertLessEqual(
            compact.ByteSize() - sum(x.ByteSize() + 3 for x in c.full), 16 * 29)
        self.assertLess(compact.ByteSize(), full.ByteSize() / 3)
        # The ids the formula gives are the ones the decision log holds.
        wanted = {decision_id(c.decision_id_base, i): agents[i].agent_id
                  for i in range(30) if i != 9}
        path = os.path.join(self.dir, "decisions.jsonl")
        deadline = time.time() + 10
        found = {}
        while time.time() < deadline and len(found) < len(wanted):
            with open(path) as log:
                for line in log:
                    if not line.endswith("\n"):
                        break  # the writer is mid-line: read it next time
                    entry = json.loads(line)
                    if entry.get("decision_id") in wanted:
                        found[entry["decision_id"]] = entry.get("agent_id")
            time.sleep(0.05)
        self.assertEqual(found, wanted)

    def test_compact_stream_and_refusal(self):
        requests = [pb.DecideRequest(request_id=i, form=pb.DECISION_FORM_COMPACT,
                                     agents=self.mages(8))
                    for i in range(1, 21)]
        responses = list(self.stub.DecideStream(iter(requests)))
        self.assertEqual([r.request_id for r in responses], list(range(1, 21)))
        self.assertTrue(all(len(r.compact.score) == 8 for r in responses))
        # Explanations need the full form: refused, naming the field.
        with self.assertRaises(grpc.RpcError) as caught:
            self.stub.Decide(pb.DecideRequest(
                form=pb.DECISION_FORM_COMPACT, explain=pb.EXPLAIN_FULL,
                agents=self.mages(1)))
        self.assertEqual(caught.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("form:", caught.exception.details())

    def test_sensitivity_names_the_values_that_change_each_decision(self):
        # Over gRPC from Python: every crossing, sent back with that one
        # value changed, gives the action it names; the float before it
        # keeps the decision.
        import math
        import struct

        def toward(x, y):  # the float32 next to x in the direction of y
            if x == 0.0:
                tiny = struct.unpack("<f", struct.pack("<I", 1))[0]
                return math.copysign(tiny, y)
            bits = struct.unpack("<I", struct.pack("<f", x))[0]
            bits += 1 if (y > x) == (x > 0) else -1  # away from 0: larger bits
            return struct.unpack("<f", struct.pack("<I", bits))[0]

        agents = self.mages(6)
        response = self.stub.Decide(pb.DecideRequest(agents=agents, sensitivity=True))
        summary = self.stub.GetBehaviourSet(
            pb.GetBehaviourSetRequest(name="arena_mage")).summary
        crossings = 0
        for agent, d in zip(agents, response.decisions):
            self.assertEqual([s.factor for s in d.sensitivity][:len(summary.factors)],
                             list(summary.factors))
            for s in d.sensitivity:
                for side in ("below", "above"):
                    if not s.HasField(side):
                        continue
                    c = getattr(s, side)
                    crossings += 1
                    self.assertAlmostEqual(c.change, c.value - s.value, places=4)
                    probes = []
                    for v in (c.value, toward(c.value, s.value)):
                        a = pb.AgentSnapshot()
                        a.CopyFrom(agent)
                        if s.target_id:
                            t = [t for t in a.targets if t.target_id == s.target_id][0]
                            t.factors[list(summary.target_factors).index(s.factor)] = v
                        else:
                            a.factors[list(summary.factors).index(s.factor)] = v
                        probes.append(a)
                    at, before = self.stub.Decide(pb.DecideRequest(agents=probes)).decisions
                    self.assertEqual((at.action, at.target_id), (c.action, c.target_id))
                    self.assertEqual((before.action, before.target_id),
                                     (d.action, d.target_id))
        self.assertGreater(crossings, 10)
        # Without asking: none. In the compact form: refused, naming the field.
        plain = self.stub.Decide(pb.DecideRequest(agents=agents)).decisions
        self.assertTrue(all(len(d.sensitivity) == 0 for d in plain))
        with self.assertRaises(grpc.RpcError) as caught:
            self.stub.Decide(pb.DecideRequest(
                form=pb.DECISION_FORM_COMPACT, sensitivity=True, agents=agents))
        self.assertEqual(caught.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("sensitivity:", caught.exception.details())

    def test_goblins_share_attack_tokens(self):
        # Coordination from Python: eight goblins next to one mage, two
        # tokens per mage; one goblin already holds one. The decisions are
        # the allocated ones and say who was denied what.
        summary = self.stub.GetBehaviourSet(
            pb.GetBehaviourSetRequest(name="arena_goblin")).summary
        goblins = []
        for i in range(8):
            goblins.append(pb.AgentSnapshot(
                agent_id="goblin-%d" % i, behaviour_set="arena_goblin",
                named_factors={"health": 28, "courage": 0.8},
                targets=[pb.TargetSnapshot(
                    target_id="mage-0",
                    named_factors={"distance": 1 + i, "mage_health": 80})]))
        goblins[7].held.add(resource="attack_token", target_id="mage-0")
        goblins[7].current_action = "attack"
        goblins[7].current_target = "mage-0"
        response = self.stub.Decide(pb.DecideRequest(agents=goblins))
        attackers = [d.agent_id for d in response.decisions if d.action == "attack"]
        self.assertEqual(attackers, ["goblin-0", "goblin-7"])
        self.assertTrue(response.decisions[7].coordination.granted[0].kept)
        denied = response.decisions[1].coordination.denied
        self.assertEqual((denied.action, denied.resource, denied.capacity),
                         ("attack", "attack_token", 2))
        self.assertEqual(list(denied.holders), ["goblin-0", "goblin-7"])
        self.assertEqual(response.decisions[1].coordination.uncoordinated_action,
                         "attack")
        self.assertIn(response.decisions[1].action, summary.actions)
        pool, = response.pools
        self.assertEqual((pool.resource, pool.target_id, pool.used, pool.remaining),
                         ("attack_token", "mage-0", 2, 0))

    def test_blocks_decide_as_snapshots_bit_for_bit(self):
        """Random blocks of every set the block form takes, in both layouts
        and with every optional column, against the same agents sent as
        snapshots: the same action, target, score (float32 bits) and flags."""
        import math
        import random
        import struct
        rng = random.Random(25)

        def f32(x):
            return struct.unpack("<f", struct.pack("<f", x))[0]

        compared = targeted = 0
        for name in ("arena_mage", "eat_hide_wander", "villager_needs"):
            got = self.stub.GetBehaviourSet(pb.GetBehaviourSetRequest(name=name))
            summary, definition = got.summary, got.behaviour_set
            ranges = {f.name: (f.min, f.max) for f in definition.factors}
            tranges = {f.name: (f.min, f.max) for f in definition.target_factors}
            actions, people = list(summary.actions), list(summary.personalities)
            for layout in (pb.FACTOR_LAYOUT_ROWS, pb.FACTOR_LAYOUT_COLUMNS):
                n, nf, na = 40, len(summary.factors), len(actions)
                rows = []
                for r in range(n):
                    values = [f32(rng.uniform(*ranges[f])) for f in summary.factors]
                    if r % 13 == 5:
                        values[rng.randrange(nf)] = rng.choice(
                            [math.nan, math.inf, -math.inf])
                    clocks = [rng.choice([math.nan, math.inf, f32(rng.uniform(0, 30))])
                              for _ in actions]
                    targets = [[f32(rng.uniform(*tranges[f]))
                                for f in summary.target_factors]
                               for _ in range(rng.randrange(4))]
                    rows.append(dict(
                        id=rng.getrandbits(64), factors=values, targets=targets,
                        tids=[rng.getrandbits(64) for _ in targets],
                        current_target=rng.randrange(-2, len(targets)),
                        current=rng.randrange(-1, na), clocks=clocks,
                        seed=rng.getrandbits(64),
                        person=rng.randrange(-1, len(people)) if people else -1))
                block = pb.AgentBlock(
                    behaviour_set=name, expected_revision=summary.revision,
                    layout=layout, agent_ids=[x["id"] for x in rows],
                    current_action=[x["current"] for x in rows],
                    seconds_since_action=[c for x in rows for c in x["clocks"]],
                    seeds=[x["seed"] for x in rows],
                    personality=[x["person"] for x in rows] if people else [],
                    target_offsets=[0] + [sum(len(x["targets"]) for x in rows[:r + 1])
                                          for r in range(n)],
                    target_factors=[v for x in rows for t in x["targets"] for v in t],
                    target_ids=[i for x in rows for i in x["tids"]],
                    current_target=[x["current_target"] for x in rows])
                if layout == pb.FACTOR_LAYOUT_ROWS:
                    block.factors.extend(v for x in rows for v in x["factors"])
                else:
                    block.factors.extend(rows[r]["factors"][f]
                                         for f in range(nf) for r in range(n))
                snapshots = [pb.AgentSnapshot(
                    agent_id=str(x["id"]), behaviour_set=name,
                    factors=x["factors"],
                    current_action=actions[x["current"]] if x["current"] >= 0 else "",
                    seconds_since_action={a: c for a, c in zip(actions, x["clocks"])
                                          if math.isfinite(c)},
                    seed=x["seed"],
                    personality=people[x["person"]] if x["person"] >= 0 else "",
                    targets=[pb.TargetSnapshot(target_id=str(i), factors=t)
                             for i, t in zip(x["tids"], x["targets"])],
                    current_target=(str(x["tids"][x["current_target"]])
                                    if x["current_target"] >= 0 else
                                    "gone" if x["current_target"] == -2 else ""))
                    for x in rows]
                by_block = self.stub.Decide(pb.DecideRequest(blocks=[block]))
                by_agent = self.stub.Decide(pb.DecideRequest(
                    agents=snapshots, form=pb.DECISION_FORM_COMPACT)).compact
                b = by_block.blocks[0]
                self.assertFalse(b.HasField("error"), b.error.message)
                self.assertEqual(b.revision, summary.revision)
                for col in ("action_index", "target_index", "flags"):
                    self.assertEqual(list(getattr(b, col)),
                                     list(getattr(by_agent, col)), (name, col))
                self.assertEqual([struct.pack("<f", v) for v in b.score],
                                 [struct.pack("<f", v) for v in by_agent.score],
                                 name)
                self.assertEqual(len(b.full), 0)
                compared += n
                targeted += sum(t >= 0 for t in b.target_index)
        self.assertEqual(compared, 240)
        self.assertGreater(targeted, 0)  # the mages chose targets

    def test_goblin_blocks_share_tokens_as_snapshots_do(self):
        """Thirty goblins around four mages for three ticks, as a block
        whose grant columns go back as its held columns (what CarryHeld
        does), and as snapshots whose held resources are their last
        Coordination.granted: the same allocation, score bits, DENIED flags
        and pools; each row's grants are its snapshot's."""
        import random
        import struct
        rng = random.Random(7)
        summary = self.stub.GetBehaviourSet(
            pb.GetBehaviourSetRequest(name="arena_goblin")).summary
        self.assertEqual(list(summary.resources), ["attack_token"])
        n, mages = 30, [9000 + k for k in range(4)]
        rows = []
        for r in range(n):
            seen = rng.sample(mages, rng.randrange(1, 4))
            rows.append(dict(health=rng.uniform(5, 30), courage=rng.random(),
                             targets=[(m, rng.uniform(0, 12), rng.uniform(20, 100))
                                      for m in seen]))
        held = pb.DecisionBlock(grant_offsets=[0] * (n + 1))  # nothing yet
        held_by = [[] for _ in range(n)]   # the snapshots' (resource, target)
        current = [-1] * n
        current_target = [-1] * n
        denied = kept = 0
        for tick in range(3):
            block = pb.AgentBlock(
                behaviour_set="arena_goblin", agent_ids=list(range(1, n + 1)),
                factors=[v for x in rows for v in (x["health"], x["courage"])],
                current_action=current, current_target=current_target,
                target_offsets=[0] + [sum(len(x["targets"]) for x in rows[:r + 1])
                                      for r in range(n)],
                target_factors=[v for x in rows for t in x["targets"]
                                for v in t[1:]],
                target_ids=[t[0] for x in rows for t in x["targets"]],
                held_offsets=held.grant_offsets,
                held_resources=held.grant_resources,
                held_target_ids=held.grant_target_ids,
                held_amounts=held.grant_amounts)
            snapshots = []
            for r, x in enumerate(rows):
                s = pb.AgentSnapshot(
                    agent_id=str(r + 1), behaviour_set="arena_goblin",
                    factors=[x["health"], x["courage"]],
                    current_action=(summary.actions[current[r]]
                                    if current[r] >= 0 else ""),
                    current_target=(str(x["targets"][current_target[r]][0])
                                    if current_target[r] >= 0 else ""),
                    targets=[pb.TargetSnapshot(target_id=str(t[0]), factors=t[1:])
                             for t in x["targets"]])
                for resource, target, amount in held_by[r]:
                    s.held.add(resource=resource, target_id=target, amount=amount)
                snapshots.append(s)
            by_block = self.stub.Decide(pb.DecideRequest(blocks=[block]))
            by_agent = self.stub.Decide(pb.DecideRequest(agents=snapshots))
            b = by_block.blocks[0]
            self.assertFalse(b.HasField("error"), b.error.message)
            self.assertEqual([p.SerializeToString() for p in by_block.pools],
                             [p.SerializeToString() for p in by_agent.pools])
            for r, d in enumerate(by_agent.decisions):
                self.assertFalse(d.HasField("error"), d.error.message)
                self.assertEqual(b.action_index[r], d.action_index, (tick, r))
                self.assertEqual(struct.pack("<f", b.score[r]),
                                 struct.pack("<f", d.score), (tick, r))
                target = b.target_index[r]
                self.assertEqual(str(rows[r]["targets"][target][0])
                                 if target >= 0 else "", d.target_id)
                self.assertEqual(bool(b.flags[r] & pb.COMPACT_FLAG_DENIED),
                                 d.coordination.HasField("denied"))
                grants = [(summary.resources[b.grant_resources[k]],
                           str(b.grant_target_ids[k]), b.grant_amounts[k])
                          for k in range(b.grant_offsets[r], b.grant_offsets[r + 1])]
                self.assertEqual(grants, [(g.resource, g.target_id, g.amount)
                                          for g in d.coordination.granted])
                denied += d.coordination.HasField("denied")
                kept += sum(g.kept for g in d.coordination.granted)
                held_by[r] = grants
            held = b
            current = list(b.action_index)
            current_target = list(b.target_index)
        self.assertGreater(denied, 0)
        self.assertGreater(kept, 0)

    def test_tree_blocks_tick_as_snapshots(self):
        """The guards' tree as a block for several ticks, its state columns
        sent back as they came and random outcomes for the leaves that ran,
        against the same guards as snapshots fed back from their decisions:
        the same leaves, statuses and state bytes."""
        import random
        rng = random.Random(29)
        got = self.stub.GetBehaviourSet(pb.GetBehaviourSetRequest(name="guard_tree"))
        summary, definition = got.summary, got.behaviour_set
        ranges = [(f.min, f.max) for f in definition.factors]
        n, last_block, last = 30, None, [pb.Decision() for _ in range(30)]
        leaves = 0
        for tick in range(8):
            factors = [[rng.uniform(lo, hi) for lo, hi in ranges] for _ in range(n)]
            targets = [[[rng.uniform(0, 40), rng.uniform(0, 100)]]
                       if rng.random() < 0.7 else [] for _ in range(n)]
            outcomes = [[(leaf.node, rng.choice([bs.NODE_STATUS_RUNNING,
                                                bs.NODE_STATUS_SUCCESS,
                                                bs.NODE_STATUS_FAILURE]))
                         for leaf in last[r].run_leaves] for r in range(n)]
            block = pb.AgentBlock(
                behaviour_set="guard_tree", agent_ids=list(range(n)),
                factors=[v for row in factors for v in row],
                target_offsets=[0] + [sum(len(t) for t in targets[:r + 1])
                                      for r in range(n)],
                target_factors=[v for row in targets for t in row for v in t],
                game_time=0.5 * tick,
                outcome_offsets=[0] + [sum(len(o) for o in outcomes[:r + 1])
                                       for r in range(n)],
                outcome_leaves=[leaf for o in outcomes for leaf, _ in o],
                outcome_statuses=[st for o in outcomes for _, st in o])
            if last_block is not None:
                block.tree_state_offsets.extend(last_block.tree_state_offsets)
                block.tree_states = last_block.tree_states
            snapshots = [pb.AgentSnapshot(
                agent_id=str(r), behaviour_set="guard_tree", factors=factors[r],
                targets=[pb.TargetSnapshot(target_id="0", factors=t)
                         for t in targets[r]],
                game_time=0.5 * tick, tree_state=last[r].tree_state,
                leaf_outcomes=[pb.LeafOutcome(leaf=leaf, status=st)
                               for leaf, st in outcomes[r]])
                for r in range(n)]
            b = self.stub.Decide(pb.DecideRequest(blocks=[block])).blocks[0]
            want = self.stub.Decide(pb.DecideRequest(agents=snapshots)).decisions
            self.assertFalse(b.HasField("error"), b.error.message)
            self.assertEqual(len(b.full), 0)
            for r, d in enumerate(want):
                self.assertEqual(b.action_index[r], d.action_index, (tick, r))
                self.assertEqual(b.tree_status[r], d.tree_status, (tick, r))
                so = b.tree_state_offsets
                self.assertEqual(b.tree_states[so[r]:so[r + 1]], d.tree_state)
                ro = b.run_offsets
                self.assertEqual(
                    [(b.run_nodes[k], b.run_actions[k], b.run_started[k] == 1)
                     for k in range(ro[r], ro[r + 1])],
                    [(x.node, x.action_index, x.started) for x in d.run_leaves])
                ho = b.halted_offsets
                self.assertEqual(list(b.halted_nodes[ho[r]:ho[r + 1]]),
                                 [x.node for x in d.halted_leaves])
                leaves += len(d.run_leaves)
            last_block, last = b, list(want)
        self.assertGreater(leaves, n * 4)

    def test_a_bad_block_row_costs_only_its_own_decision(self):
        summary = self.stub.GetBehaviourSet(
            pb.GetBehaviourSetRequest(name="eat_hide_wander")).summary
        values = {"hunger": 0.8, "danger": 0.1, "food_distance": 5, "idle_time": 2}
        row = [values[f] for f in summary.factors]
        eat = list(summary.actions).index("eat")
        good = pb.AgentBlock(behaviour_set="eat_hide_wander", agent_ids=[7, 8, 9],
                             factors=row * 3, current_action=[-1, 99, eat],
                             explain_rows=[2])
        # A factor column one row short, and a stale revision.
        short = pb.AgentBlock(behaviour_set="eat_hide_wander", agent_ids=[1, 2],
                              factors=row)
        stale = pb.AgentBlock(behaviour_set="eat_hide_wander", agent_ids=[3],
                              factors=row, expected_revision="0" * 16)
        response = self.stub.Decide(pb.DecideRequest(
            agents=[self.forager(0.8, 0.1)], blocks=[good, short, stale],
            explain=pb.EXPLAIN_FULL))
        self.assertEqual(response.decisions[0].action, "eat")
        g, s, st = response.blocks
        self.assertEqual(list(g.action_index), [eat, -1, eat])
        self.assertEqual(g.flags[1], pb.COMPACT_FLAG_FULL)
        # Row 1 failed; row 2 was named in explain_rows: its numbers and its
        # whole explained decision.
        self.assertEqual([x.agent for x in g.full], [1, 2])
        self.assertEqual(g.full[0].decision.error.field,
                         "blocks[0].rows[1].current_action")
        explained = g.full[1].decision
        self.assertEqual(explained.action, "eat")
        self.assertEqual(explained.agent_id, "9")
        self.assertIn("*eat", explained.explanation.summary)
        self.assertEqual(g.flags[2] & pb.COMPACT_FLAG_FULL, pb.COMPACT_FLAG_FULL)
        # A block naming no rows is numbers only, whatever the request's level.
        self.assertEqual([x.agent for x in s.full], [1])
        self.assertEqual(list(s.action_index), [eat, -1])
        self.assertEqual(s.full[0].decision.error.field, "blocks[1].rows[1].factors")
        self.assertEqual(st.error.reason, pb.ERROR_REASON_STALE_REVISION)
        self.assertEqual(st.error.field, "blocks[2].expected_revision")
        self.assertEqual(len(st.action_index), 0)
        # The service numbers snapshots first, then each block's rows.
        ids = {response.decisions[0].decision_id}
        for blk in (g, s):
            ids |= {decision_id(blk.decision_id_base, r)
                    for r in range(len(blk.action_index))}
        self.assertEqual(len(ids), 6)

    def test_unknown_set_is_not_found(self):
        with self.assertRaises(grpc.RpcError) as caught:
            self.stub.GetBehaviourSet(pb.GetBehaviourSetRequest(name="arena"))
        self.assertEqual(caught.exception.code(), grpc.StatusCode.NOT_FOUND)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
