"""One game-server process of a flood (docs/RELIABILITY.md, "Overload"):
open-loop Decide calls of AGENTS agents at RATE calls per second over
CONNECTIONS connections for SECONDS, each answered or not; or STREAMS
DecideStream calls, each sending a batch as soon as the last is answered.
Calls go out on schedule whether or not earlier ones were answered (a
flood does not slow down for the server), up to MAX_IN_FLIGHT. The request
is serialised once and sent as bytes, so the client stays cheap next to
the server it floods.

  /usr/bin/python3 flood.py STUBS TARGET OUT.json --rate 200 --seconds 20
      [--connections 4] [--agents 256] [--streams 0] [--deadline 2]

Writes JSON: calls started, answered by code, the accepted calls'
latencies (seconds), the retry hints seen (ms).
"""
import argparse
import asyncio
import json
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("stubs")
    ap.add_argument("target")
    ap.add_argument("out")
    ap.add_argument("--rate", type=float, default=100)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--connections", type=int, default=4)
    ap.add_argument("--agents", type=int, default=256)
    ap.add_argument("--streams", type=int, default=0)
    ap.add_argument("--loops", type=int, default=0,
                    help="closed-loop unary callers (each waits for its "
                         "answer), besides --rate")
    ap.add_argument("--deadline", type=float, default=2.0)
    ap.add_argument("--max_in_flight", type=int, default=4000)
    ap.add_argument("--compact", action="store_true",
                    help="ask for the compact form of the answers")
    args = ap.parse_args()
    sys.path.insert(0, args.stubs)
    asyncio.run(flood(args))


async def flood(args):
    import grpc
    from utilityd.v1 import decision_service_pb2 as pb
    from utilityd.v1 import decision_service_pb2_grpc as rpc

    options = [("grpc.use_local_subchannel_pool", 1)]
    channels = [grpc.aio.insecure_channel(args.target, options=options +
                                          [("grpc.primary_user_agent",
                                            "flood-%d" % k)])
                for k in range(args.connections)]
    stub = rpc.DecisionServiceStub(channels[0])
    summary = (await stub.GetBehaviourSet(
        pb.GetBehaviourSetRequest(name="arena_goblin"))).summary
    req = pb.DecideRequest(request_id=1)
    if args.compact:
        req.form = pb.DECISION_FORM_COMPACT
    for i in range(args.agents):
        req.agents.add(agent_id="g%d" % i, behaviour_set="arena_goblin",
                       factors=[(7 * i + 3 * k) % 10 / 10.0
                                for k in range(len(summary.factors))],
                       expected_revision=summary.revision)
    payload = req.SerializeToString()
    calls = [c.unary_unary("/utilityd.v1.DecisionService/Decide",
                           request_serializer=None,
                           response_deserializer=None) for c in channels]
    codes, latencies, hints = {}, [], []
    in_flight = [0]
    started = [0]

    def done(code, latency, call_hint):
        codes[code] = codes.get(code, 0) + 1
        if code == "OK":
            latencies.append(latency)
        if call_hint is not None:
            hints.append(call_hint)

    async def one(k):
        t0 = time.monotonic()
        hint = None
        try:
            call = calls[k % len(calls)](payload, timeout=args.deadline)
            await call
            done("OK", time.monotonic() - t0, None)
        except grpc.aio.AioRpcError as e:
            for key, value in (e.trailing_metadata() or ()):
                if key == "grpc-retry-pushback-ms":
                    hint = int(value)
            done(e.code().name, time.monotonic() - t0, hint)
        finally:
            in_flight[0] -= 1

    async def stream(k):
        call = channels[k % len(channels)].stream_stream(
            "/utilityd.v1.DecisionService/DecideStream",
            request_serializer=None, response_deserializer=None)()
        end = time.monotonic() + args.seconds
        try:
            while time.monotonic() < end:
                t0 = time.monotonic()
                started[0] += 1
                await call.write(payload)
                raw = await call.read()
                # A refusal is a few hundred bytes; an answer of many
                # decisions is not worth parsing here.
                r = pb.DecideResponse.FromString(raw) if len(raw) < 4096 else None
                if r is not None and r.HasField("error"):
                    done("STREAM_" + pb.ErrorReason.Name(r.error.reason),
                         time.monotonic() - t0, None)
                    await asyncio.sleep(0.01)
                else:
                    done("OK", time.monotonic() - t0, None)
            await call.done_writing()
        except grpc.aio.AioRpcError as e:
            done("STREAM_BROKEN_" + e.code().name, 0, None)

    async def loop(k):
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            in_flight[0] += 1
            started[0] += 1
            await one(k)

    tasks = [asyncio.ensure_future(stream(k)) for k in range(args.streams)]
    tasks += [asyncio.ensure_future(loop(k)) for k in range(args.loops)]
    if args.rate > 0:
        interval = 1.0 / args.rate
        t_start = time.monotonic()
        k = 0
        while time.monotonic() - t_start < args.seconds:
            due = t_start + k * interval
            now = time.monotonic()
            if due > now:
                await asyncio.sleep(due - now)
            if in_flight[0] < args.max_in_flight:
                in_flight[0] += 1
                started[0] += 1
                tasks.append(asyncio.ensure_future(one(k)))
            else:
                codes["NOT_SENT"] = codes.get("NOT_SENT", 0) + 1
            k += 1
    await asyncio.gather(*tasks, return_exceptions=True)
    for c in channels:
        await c.close()
    with open(args.out, "w") as f:
        json.dump({"started": started[0], "codes": codes,
                   "latencies": latencies, "hints": hints}, f)


if __name__ == "__main__":
    main()
