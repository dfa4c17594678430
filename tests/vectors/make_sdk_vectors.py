#!/usr/bin/python3
"""Writes client_sdk_vectors.json, the vectors both client SDKs' tests read.

The expected values come from the specification, computed here with
Python's protobuf (Debian's python3-protobuf, a third implementation of
the wire format) and a direct SplitMix64: the C++ and TypeScript SDKs must
each agree with them. Run from the repository root after changing the
cases:

    /usr/bin/python3 tests/vectors/make_sdk_vectors.py
"""
import math
import os
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
out_dir = tempfile.mkdtemp()
subprocess.check_call(["protoc", "-I", os.path.join(root, "proto"), "-I", os.path.join(root, "tests/vectors"),
                       "--python_out", out_dir, "utilityd/v1/behaviour_set.proto",
                       "utilityd/v1/decision_service.proto", "sdk_vectors.proto"])
sys.path.insert(0, out_dir)
from google.protobuf import json_format  # noqa: E402
import sdk_vectors_pb2 as sv  # noqa: E402
from utilityd.v1 import behaviour_set_pb2 as bs  # noqa: E402
from utilityd.v1 import decision_service_pb2 as pb  # noqa: E402

MASK = (1 << 64) - 1


def splitmix64(z):
    z &= MASK
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & MASK
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & MASK
    return z ^ (z >> 31)


v = sv.SdkVectors()
for base, index in [(0, 0), (0, 1), (1, 0), (0x0123456789abcdef, 7), (MASK, 1), (MASK - 2, 5),
                    (1 << 63, 255)]:
    v.decision_ids.add(base=base, index=index, hex="%016x" % splitmix64((base + index) & MASK))

# Packing: the arena mage's order, a target set's order.
mage = pb.BehaviourSetSummary(name="mage", revision="r1", factors=["health", "mana", "distance"],
                              target_factors=["range", "threat"])


def pack_case(name, given, packed=None, error=""):
    c = v.packing.add(name=name, error=error)
    c.summary.CopyFrom(mage)
    c.given.CopyFrom(given)
    if packed is not None:
        c.packed.CopyFrom(packed)


pack_case("agent and targets named",
          pb.AgentSnapshot(agent_id="a", behaviour_set="mage",
                           named_factors={"mana": 0.5, "distance": 12.0, "health": 80.0},
                           targets=[pb.TargetSnapshot(target_id="t", named_factors={"threat": 0.25, "range": 3.0})]),
          pb.AgentSnapshot(agent_id="a", behaviour_set="mage", expected_revision="r1",
                           factors=[80.0, 0.5, 12.0],
                           targets=[pb.TargetSnapshot(target_id="t", factors=[3.0, 0.25])]))
pack_case("already packed: left alone",
          pb.AgentSnapshot(agent_id="b", behaviour_set="mage", factors=[1, 2, 3]),
          pb.AgentSnapshot(agent_id="b", behaviour_set="mage", factors=[1, 2, 3]))
pack_case("unknown factor",
          pb.AgentSnapshot(agent_id="c", behaviour_set="mage",
                           named_factors={"health": 1, "mana": 1, "distance": 1, "speed": 2}),
          error='named_factors: unknown factor "speed"')
pack_case("missing factors, in set order",
          pb.AgentSnapshot(agent_id="d", behaviour_set="mage", named_factors={"mana": 1}),
          error="named_factors: missing health, distance")
pack_case("a target's missing factor",
          pb.AgentSnapshot(agent_id="e", behaviour_set="mage", factors=[1, 2, 3],
                           targets=[pb.TargetSnapshot(target_id="t0", factors=[1, 2]),
                                    pb.TargetSnapshot(target_id="t1", named_factors={"range": 1})]),
          error="targets[1].named_factors: missing threat")

# Blocks as an SDK writes them.
nan, inf = float("nan"), float("inf")


def block_case(name, block):
    c = v.blocks.add(name=name)
    c.block.CopyFrom(block)
    c.wire = block.SerializeToString(deterministic=True)


block_case("rows, minimal", pb.AgentBlock(behaviour_set="mage", layout=pb.FACTOR_LAYOUT_ROWS,
                                          agent_ids=[1, 2], factors=[1, 2, 3, 4, 5, 6]))
block_case("every column", pb.AgentBlock(
    behaviour_set="arena_goblin", expected_revision="abc", layout=pb.FACTOR_LAYOUT_COLUMNS,
    agent_ids=[7, MASK, 1 << 40], factors=[0.5, -1.25, nan, inf, 3e38, 1e-40],
    current_action=[-1, 0, 300], seconds_since_action=[1.5, nan, inf, 0, 2, 3],
    seeds=[0, MASK, 12345678901234567], personality=[-1, 2, 0],
    target_offsets=[0, 2, 2, 3], target_factors=[1, 2, 3, 4, 5, 6], target_ids=[900, 901, 1 << 50],
    current_target=[1, -1, -2], explain_rows=[2, 0], game_time=12.75,
    tree_state_offsets=[0, 3, 3, 5], tree_states=b"\x01\x02\x03\xff\x00",
    outcome_offsets=[0, 1, 1, 2], outcome_leaves=[4, -3], outcome_statuses=[1, 2],
    held_offsets=[0, 1, 1, 2], held_resources=[0, 1], held_target_ids=[900, 0], held_amounts=[2, 1000000],
    fixed_width_indices=True))

# Answers as the service writes them.


def answer_case(name, block):
    c = v.answers.add(name=name)
    c.block.CopyFrom(block)
    c.wire = block.SerializeToString(deterministic=True)


answer_case("numbers and a failed row", pb.DecisionBlock(
    action_index=[2, -1, 0, 127, 128], target_index=[-1, -1, 3, 0, 1], score=[0.75, 0, 1, 1e-7, 0.5],
    flags=bytes([1, 4, 0, 3, 9]), revision="rev", decision_id_base=0xfedcba9876543210,
    full=[pb.IndexedDecision(agent=1, decision=pb.Decision(
        action_index=-1, error=pb.Error(code=3, message="blocks[0].rows[1].factors: short",
                                        reason=pb.ERROR_REASON_FACTOR_COUNT, field="factors")))]))
answer_case("tree and coordination columns", pb.DecisionBlock(
    action_index=[1, -1], target_index=[0, -1], score=[0, 0], flags=bytes([1, 0]), revision="t",
    tree_status=[1, 3], tree_state_offsets=[0, 2, 4], tree_states=b"\x09\x08\x07\x06",
    run_offsets=[0, 1, 1], run_nodes=[5], run_actions=[1], run_targets=[0], run_started=b"\x01",
    halted_offsets=[0, 0, 1], halted_nodes=[7], halted_actions=[2], halted_targets=[-1],
    tree_reset=b"\x00\x02", grant_offsets=[0, 1, 1], grant_resources=[0], grant_target_ids=[1 << 60],
    grant_amounts=[3]))
# A reader takes the fixed-width indices when the answer has them (the
# block asked); the varint columns are then empty.
answer_case("fixed-width indices and a failed row", pb.DecisionBlock(
    action_index_fixed=[2, -1, 0, 127, 128, 70000], target_index_fixed=[-1, -1, 3, 0, 1, -2],
    score=[0.75, 0, 1, 1e-7, 0.5, 0.25], flags=bytes([1, 4, 0, 3, 9, 0]), revision="rev",
    full=[pb.IndexedDecision(agent=1, decision=pb.Decision(
        action_index=-1, error=pb.Error(code=3, message="blocks[0].rows[1].factors: short",
                                        reason=pb.ERROR_REASON_FACTOR_COUNT, field="factors")))]))
answer_case("a refused block", pb.DecisionBlock(error=pb.Error(
    code=5, message="blocks[0].behaviour_set: unknown set", reason=pb.ERROR_REASON_UNKNOWN_SET,
    field="behaviour_set")))

# The tree tracker.
t = v.trees.add(name="state, outcomes, errors and forgetting")
s = t.steps
s.add().prepare.CopyFrom(sv.TreePrepare(agent_id="g1"))
s.add().update.CopyFrom(pb.Decision(agent_id="g1", tree_state=b"\x01\x02", run_leaves=[
    pb.TreeLeaf(node=4, action="move", action_index=0, started=True),
    pb.TreeLeaf(node=6, action="look", action_index=1, started=True)]))
s.add().report.CopyFrom(sv.TreeReport(agent_id="g1", leaf=4, status=bs.NODE_STATUS_RUNNING))
s.add().report.CopyFrom(sv.TreeReport(agent_id="g1", leaf=4, status=bs.NODE_STATUS_SUCCESS))
s.add().report.CopyFrom(sv.TreeReport(agent_id="g1", leaf=6, status=bs.NODE_STATUS_FAILURE))
s.add().prepare.CopyFrom(sv.TreePrepare(agent_id="g1", expect_state=b"\x01\x02", expect_running=2,
                                        expect_outcomes=[pb.LeafOutcome(leaf=4, status=bs.NODE_STATUS_SUCCESS),
                                                         pb.LeafOutcome(leaf=6, status=bs.NODE_STATUS_FAILURE)]))
# An error keeps the state and the outcomes, to be sent again.
s.add().update.CopyFrom(pb.Decision(agent_id="g1", error=pb.Error(code=14, message="down")))
s.add().prepare.CopyFrom(sv.TreePrepare(agent_id="g1", expect_state=b"\x01\x02", expect_running=2,
                                        expect_outcomes=[pb.LeafOutcome(leaf=4, status=bs.NODE_STATUS_SUCCESS),
                                                         pb.LeafOutcome(leaf=6, status=bs.NODE_STATUS_FAILURE)]))
s.add().update.CopyFrom(pb.Decision(agent_id="g1", tree_state=b"\x03", run_leaves=[
    pb.TreeLeaf(node=6, action="look", action_index=1)]))
s.add().prepare.CopyFrom(sv.TreePrepare(agent_id="g1", expect_state=b"\x03", expect_running=1))
s.add().prepare.CopyFrom(sv.TreePrepare(agent_id="g2"))
s.add().forget = "g1"
s.add().prepare.CopyFrom(sv.TreePrepare(agent_id="g1"))

text = json_format.MessageToJson(v, indent=1)
with open(os.path.join(root, "tests/vectors/client_sdk_vectors.json"), "w") as f:
    f.write(text + "\n")
print("wrote tests/vectors/client_sdk_vectors.json")
