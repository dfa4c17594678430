"""utilityd from another language: Debian's python3-grpcio against the real
binary, with stubs generated from proto/ at build time.

Run by ctest:  /usr/bin/python3 service_test.py UTILITYD_BINARY STUBS_DIR
"""
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
from utilityd.v1 import decision_service_pb2 as pb  # noqa: E402
from utilityd.v1 import decision_service_pb2_grpc as rpc  # noqa: E402

# grpc.health.v1.Health/Check, called without generated stubs (a generated
# grpc.health package would clash with grpcio's own `grpc` package): an empty
# request; the response's field 1 (varint) is the status, SERVING = 1.
SERVING = b"\x08\x01"


class ServiceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp()
        port_file = os.path.join(cls.dir, "port")
        cls.server = subprocess.Popen(
            [UTILITYD, "--grpc_address=127.0.0.1:0", "--port_file=" + port_file,
             "--http_address=127.0.0.1:0", "--config_dir=examples/behaviour_sets"],
            stderr=open(os.path.join(cls.dir, "log"), "w"))
        deadline = time.time() + 20
        while not (os.path.exists(port_file) and open(port_file).read().strip()):
            if time.time() > deadline or cls.server.poll() is not None:
                raise RuntimeError("utilityd did not start")
            time.sleep(0.02)
        address = "127.0.0.1:" + open(port_file).read().split()[0]
        cls.channel = grpc.insecure_channel(address)
        cls.stub = rpc.DecisionServiceStub(cls.channel)
        check = cls.channel.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=lambda b: b, response_deserializer=lambda b: b)
        while True:
            try:
                if check(b"", timeout=2) == SERVING:
                    break
            except grpc.RpcError:
                pass
            if time.time() > deadline:
                raise RuntimeError("utilityd never became SERVING")
            time.sleep(0.02)

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
                         ["arena_mage", "eat_hide_wander", "guard_tree",
                          "villager_needs"])
        self.assertEqual(list(sets[1].factors),
                         ["hunger", "danger", "food_distance", "idle_time"])
        self.assertEqual(len(sets[1].revision), 16)

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

    def test_unknown_set_is_not_found(self):
        with self.assertRaises(grpc.RpcError) as caught:
            self.stub.GetBehaviourSet(pb.GetBehaviourSetRequest(name="arena"))
        self.assertEqual(caught.exception.code(), grpc.StatusCode.NOT_FOUND)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
