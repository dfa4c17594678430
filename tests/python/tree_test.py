"""A game server in Python drives seed 001's guard tree (guard_tree.yaml)
over a DecideStream, tick by tick, with leaves that take many ticks: moving
closes the distance a few metres per tick, a fireball takes two ticks and a
staff strike one, the player steps in and out of sight. Halfway the replica
serving the stream is killed (SIGKILL) and the game continues on another
replica with the tree state it holds: no reset, the running leaf continues,
and every tick's leaves, halts and root status equal those of the same game
played on one replica from start to end (the statelessness promise).

Run by ctest:  /usr/bin/python3 tree_test.py UTILITYD_BINARY STUBS_DIR
"""
import os
import queue
import shutil
import signal
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

TICKS = 60
SECONDS_PER_TICK = 0.25


class Replica:
    def __init__(self, workdir, name):
        port_file = os.path.join(workdir, name + ".port")
        self.process = subprocess.Popen(
            [UTILITYD, "--grpc_address=127.0.0.1:0", "--port_file=" + port_file,
             "--http_address=127.0.0.1:0", "--config_dir=examples/behaviour_sets"],
            stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while not (os.path.exists(port_file) and open(port_file).read().strip()):
            if time.time() > deadline or self.process.poll() is not None:
                raise RuntimeError("utilityd did not start")
            time.sleep(0.02)
        with open(port_file) as f:
            self.address = "127.0.0.1:" + f.read().split()[0]
        self.channel = grpc.insecure_channel(self.address)
        grpc.channel_ready_future(self.channel).result(timeout=20)
        self.stub = rpc.DecisionServiceStub(self.channel)

    def stream(self):
        return Stream(self.stub)

    def stop(self, sig=signal.SIGTERM):
        self.channel.close()
        if self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(timeout=20)


class Stream:
    """One DecideStream, used in lock step: send a request, read its answer."""

    def __init__(self, stub):
        self.requests = queue.Queue()
        self.responses = stub.DecideStream(iter(self.requests.get, None))

    def decide(self, request):
        self.requests.put(request)
        return next(self.responses)

    def close(self):
        self.requests.put(None)


class Game:
    """The world: the guard's position relative to the player, its leaves'
    progress. The game runs leaves; utilityd says which."""

    def __init__(self):
        self.tick = 0
        self.distance = 30.0
        self.state = b""
        self.running = {}  # leaf node id -> (action, ticks it has run)
        self.outcomes = []
        self.log = []

    def visible(self):
        # In sight for ticks 4..40 and 48..; out of sight in between.
        return 1.0 if 4 <= self.tick < 40 or self.tick >= 48 else 0.0

    def snapshot(self):
        return pb.AgentSnapshot(
            agent_id="guard-1", behaviour_set="guard_tree",
            named_factors={"player_visible": self.visible(),
                           "player_distance": self.distance,
                           "health": 70.0, "mana": 80.0},
            targets=[pb.TargetSnapshot(
                target_id="player",
                named_factors={"distance": self.distance, "health": 100.0})],
            seed=7, game_time=self.tick * SECONDS_PER_TICK,
            tree_state=self.state, leaf_outcomes=self.outcomes)

    def apply(self, decision):
        """Takes the tick's answer; runs the leaves for one tick of game
        time and works out their outcomes for the next request."""
        assert not decision.HasField("error"), decision.error
        self.log.append((
            tuple((l.action, l.target_id, l.started) for l in decision.run_leaves),
            tuple(l.action for l in decision.halted_leaves),
            decision.tree_status, decision.tree_reset))
        self.state = decision.tree_state
        for leaf in decision.halted_leaves:
            self.running.pop(leaf.node, None)
        self.outcomes = []
        for leaf in decision.run_leaves:
            action, ticks = self.running.get(leaf.node, (leaf.action, 0))
            if leaf.started:
                ticks = 0
            ticks += 1
            status = bs.NODE_STATUS_RUNNING
            if action == "move_to_player":
                self.distance = max(2.0, self.distance - 4.0)
                if self.distance <= 6.0:
                    status = bs.NODE_STATUS_SUCCESS
            elif action == "fireball" and ticks >= 2:
                status = bs.NODE_STATUS_SUCCESS
            elif action in ("staff_strike", "drink_potion"):
                status = bs.NODE_STATUS_SUCCESS
            elif action == "patrol":
                self.distance = min(30.0, self.distance + 3.0)
            if status == bs.NODE_STATUS_RUNNING:
                self.running[leaf.node] = (action, ticks)
            else:
                self.running.pop(leaf.node, None)
            self.outcomes.append(pb.LeafOutcome(leaf=leaf.node, status=status))
        self.tick += 1


class TreeOverTheWireTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp()
        cls.a = Replica(cls.dir, "a")
        cls.b = Replica(cls.dir, "b")

    @classmethod
    def tearDownClass(cls):
        cls.a.stop(signal.SIGKILL)
        cls.b.stop()
        shutil.rmtree(cls.dir)

    def play(self, streams_by_tick):
        game = Game()
        for tick in range(TICKS):
            stream = streams_by_tick(tick, game)
            response = stream.decide(pb.DecideRequest(
                request_id=tick, agents=[game.snapshot()]))
            self.assertEqual(response.request_id, tick)
            game.apply(response.decisions[0])
        return game

    def test_a_killed_replica_costs_the_tree_nothing(self):
        reference_stream = self.b.stream()
        reference = self.play(lambda tick, game: reference_stream)
        reference_stream.close()

        first = self.a.stream()
        second = None
        killed_at = None

        def route(tick, game):
            # From halfway on, kill the replica while a leaf is in progress.
            nonlocal second, killed_at
            if second is None and (tick < TICKS // 2 or not game.running):
                return first
            if second is None:
                killed_at = tick
                self.a.process.send_signal(signal.SIGKILL)
                self.a.process.wait(timeout=20)
                second = self.b.stream()
            return second

        game = self.play(route)
        second.close()
        self.assertIsNotNone(killed_at, "the replica was killed mid-run")

        self.assertEqual(game.log, reference.log)
        self.assertTrue(all(reset == "" for *_, reset in game.log),
                        "no tick restarted the tree")
        # The tick after the switch resumed what was running: a leaf that
        # continues, not one started afresh.
        resumed = game.log[killed_at][0]
        self.assertTrue(resumed and not resumed[0][2],
                        "the leaf running at the kill continues: %r" % (resumed,))
        # The game exercised the tree: approach, attacks, an abort when the
        # player left sight, patrol again.
        actions = [leaf[0] for run, *_ in game.log for leaf in run]
        for action in ("patrol", "move_to_player", "fireball"):
            self.assertIn(action, actions)
        halted = [h for _, halts, *_ in game.log for h in halts]
        self.assertIn("patrol", halted, "seeing the player aborts the patrol")
        self.assertTrue(set(halted) & {"fireball", "staff_strike"},
                        "losing sight aborts an attack: %r" % halted)

    def test_bad_state_and_outcomes_cost_only_that_agent(self):
        stub = self.b.stub
        good = Game().snapshot()
        bad_state = Game().snapshot()
        bad_state.tree_state = b"\x01garbage-state"
        bad_leaf = Game().snapshot()
        bad_leaf.leaf_outcomes.append(pb.LeafOutcome(leaf=999,
                                                     status=bs.NODE_STATUS_SUCCESS))
        flat = pb.AgentSnapshot(agent_id="f", behaviour_set="eat_hide_wander",
                                named_factors={"hunger": 0.9, "danger": 0.1,
                                               "food_distance": 3,
                                               "idle_time": 1})
        r = stub.Decide(pb.DecideRequest(agents=[good, bad_state, bad_leaf, flat]))
        self.assertEqual(r.decisions[0].action, "patrol")
        self.assertEqual(r.decisions[0].tree_reset, "")
        self.assertEqual(r.decisions[1].action, "patrol")
        self.assertIn(r.decisions[1].tree_reset, ("other_set", "corrupt", "malformed"))
        self.assertTrue(r.decisions[2].HasField("error"))
        self.assertIn("leaf_outcomes[0].leaf", r.decisions[2].error.message)
        self.assertEqual(r.decisions[3].action, "eat")
        self.assertEqual(r.decisions[3].tree_status, bs.NODE_STATUS_UNSPECIFIED)

    def test_a_target_that_leaves_mid_attack(self):
        game = Game()
        game.tick, game.distance = 10, 8.0  # in sight, in range: attack
        first = self.b.stub.Decide(pb.DecideRequest(agents=[game.snapshot()]))
        attack = first.decisions[0].run_leaves[0]
        self.assertEqual(attack.target_id, "player")
        later = game.snapshot()
        later.tree_state = first.decisions[0].tree_state
        del later.targets[:]  # the player is gone from the target list
        d = self.b.stub.Decide(pb.DecideRequest(agents=[later])).decisions[0]
        self.assertFalse(d.HasField("error"), d.error)
        self.assertEqual(d.tree_reset, "")
        self.assertEqual([l.node for l in d.halted_leaves], [attack.node],
                         "the attack on a target that left is stopped")


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
