"""A flood against the real utilityd (docs/RELIABILITY.md, "Overload").

First the box's capacity: four streams, one batch in flight each, for a few
seconds. Then, for SECONDS, several client processes (flood.py) offer three
times that as open-loop unary calls of 256 agents with a 2 s deadline, and
one more holds streams; meanwhile the server's resident memory is sampled
and a health check is timed every 100 ms from this process. Then the load
stops and the server must answer promptly again.

Checked (unless MEASURE_ONLY=1, which only prints the figures, e.g. for the
server before shedding existed):
  - resident memory stays under RSS_LIMIT_MIB;
  - the accepted batches' p99 in the server (queue wait plus scoring, from
    its histograms) stays under P99_LIMIT_S;
  - /readyz (the readiness probe) answers within 100 ms, and every health
    check answers SERVING;
  - every shed is counted: utilityd_shed_total is at least the refusals
    the clients saw (RESOURCE_EXHAUSTED, stream OVERLOADED) and at most
    those plus the calls whose client deadline passed first, and every
    refusal carried a retry hint;
  - the server recovers: a call right after answers within 100 ms and the
    queue gauge is back to 0.

  /usr/bin/python3 overload_test.py UTILITYD STUBS [extra utilityd flags...]
Prints one JSON line of figures.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

UTILITYD, STUBS = sys.argv[1], sys.argv[2]
# 16 calls per connection, as a deployment that faces floods from many
# connections sets it: at the default 128, the calls in flight hold their
# 1,024-agent messages outside gRPC's memory quota and this flood peaks at
# 270-930 MiB (docs/RELIABILITY.md). A later flag given here wins.
EXTRA = ["--max_concurrent_streams=16"] + sys.argv[3:]
sys.path.insert(0, STUBS)
HERE = os.path.dirname(os.path.abspath(__file__))
SECONDS = float(os.environ.get("SECONDS_OF_FLOOD", "20"))
MEASURE_ONLY = os.environ.get("MEASURE_ONLY") == "1"
# Under AddressSanitizer: the functional checks only (memory and latency
# are the sanitizer's as much as utilityd's).
SANITIZED = os.environ.get("SANITIZED") == "1"
RSS_LIMIT_MIB = float(os.environ.get("RSS_LIMIT_MIB", "480"))
P99_LIMIT_S = float(os.environ.get("P99_LIMIT_S", "0.5"))
HEALTH_LIMIT_S = 0.1
CLIENTS = 3
# Batches large enough that the server, not the Python clients, is what
# runs out on two cores.
AGENTS = int(os.environ.get("AGENTS", "1024"))
STREAMS = 8

sys.path.insert(0, os.path.join(HERE, "..", "python"))
import grpc  # noqa: E402
from health import SERVING, wait_serving  # noqa: E402


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def metric(http, name):
    """Sum of a metric's samples (all label sets)."""
    text = urllib.request.urlopen("http://%s/metrics" % http, timeout=5).read().decode()
    total = 0.0
    for line in text.splitlines():
        if re.match(r"^%s(\{| )" % re.escape(name), line):
            total += float(line.rsplit(" ", 1)[1])
    return total


def buckets(http, name):
    """A histogram's cumulative bucket counts: {le: count}."""
    text = urllib.request.urlopen("http://%s/metrics" % http, timeout=5).read().decode()
    out = {}
    for line in text.splitlines():
        m = re.match(r'^%s_bucket\{.*le="([^"]+)".*\} (\S+)$' % re.escape(name), line)
        if m:
            le = float("inf") if m.group(1) == "+Inf" else float(m.group(1))
            out[le] = out.get(le, 0) + float(m.group(2))
    return out


def bucket_quantile(before, after, q):
    """The upper bound of the bucket holding quantile q of what was observed
    between two scrapes."""
    les = sorted(after)
    if not les:  # a server without the histogram
        return 0.0
    total = after[les[-1]] - before.get(les[-1], 0)
    if total <= 0:
        return 0.0
    for le in les:
        if after[le] - before.get(le, 0) >= q * total:
            return le
    return float("inf")


def percentile(values, p):
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


def flood(work, target, name, **kw):
    out = os.path.join(work, name + ".json")
    args = ["nice", "-n", "19", "/usr/bin/python3", os.path.join(HERE, "flood.py"),
            STUBS, target, out]
    for k, v in kw.items():
        args += ["--" + k, str(v)]
    return subprocess.Popen(args), out


def main():
    work = tempfile.mkdtemp()
    port_file = os.path.join(work, "ports")
    server = subprocess.Popen(
        [UTILITYD, "--grpc_address=127.0.0.1:0", "--http_address=127.0.0.1:0",
         "--port_file=" + port_file, "--config_dir=examples/behaviour_sets"] + EXTRA,
        stderr=open(os.path.join(work, "server.log"), "w"))
    failures = []
    try:
        deadline = time.time() + 20
        while not (os.path.exists(port_file) and
                   len(open(port_file).read().split()) == 2):
            if time.time() > deadline or server.poll() is not None:
                raise RuntimeError("utilityd did not start")
            time.sleep(0.02)
        grpc_port, http_port = open(port_file).read().split()
        target, http = "127.0.0.1:" + grpc_port, "127.0.0.1:" + http_port
        channel = grpc.insecure_channel(target)
        check = wait_serving(channel, deadline)
        idle_rss = rss_mib(server.pid)

        # Capacity: the same unary calls, 16 in flight at a time.
        proc, out = flood(work, target, "capacity", rate=0, loops=16,
                          seconds=4, connections=4, agents=AGENTS)
        proc.wait(timeout=60)
        cap = json.load(open(out))
        capacity = cap["codes"].get("OK", 0) / 4.0  # batches per second
        # FORCE_CAPACITY floods at three times a given capacity instead, to
        # reproduce a faster machine's flood (docs/RELIABILITY.md).
        capacity = float(os.environ.get("FORCE_CAPACITY", capacity))

        wait_before = buckets(http, "utilityd_queue_wait_seconds")
        batch_before = buckets(http, "utilityd_batch_duration_seconds")
        shed_before = metric(http, "utilityd_shed_total")
        expired_before = metric(http, "utilityd_expired_total")
        # The flood: 3x capacity as open-loop unary calls, and streams.
        rate = 3.0 * capacity / CLIENTS
        procs = [flood(work, target, "unary%d" % i, rate=rate, seconds=SECONDS,
                       connections=4, deadline=10, agents=AGENTS)
                 for i in range(CLIENTS)]
        procs.append(flood(work, target, "streams", rate=0, streams=STREAMS,
                           seconds=SECONDS, connections=2, agents=AGENTS))
        rss, health = [], []
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                rss.append(rss_mib(server.pid))
                time.sleep(0.25)

        sampler = threading.Thread(target=sample)
        sampler.start()
        health_errors = 0
        readyz = []
        end = time.time() + SECONDS
        while time.time() < end:
            t0 = time.monotonic()
            try:
                ok = check(b"", timeout=5) == SERVING
            except grpc.RpcError:
                ok = False
            health.append(time.monotonic() - t0)
            health_errors += 0 if ok else 1
            t1 = time.monotonic()
            try:
                ok = urllib.request.urlopen("http://%s/readyz" % http,
                                            timeout=5).status == 200
            except OSError:
                ok = False
            readyz.append(time.monotonic() - t1)
            health_errors += 0 if ok else 1
            time.sleep(max(0.0, 0.1 - (time.monotonic() - t0)))
        for p, _ in procs:
            p.wait(timeout=120)
        stop.set()
        sampler.join()

        results = [json.load(open(o)) for _, o in procs]
        codes = {}
        latencies, hints, refusals_without_hint = [], 0, 0
        for r in results[:CLIENTS]:
            latencies += r["latencies"]
            hints += len(r["hints"])
            for k, v in r["codes"].items():
                codes[k] = codes.get(k, 0) + v
        stream_codes = results[CLIENTS]["codes"]
        refused_unary = codes.get("RESOURCE_EXHAUSTED", 0)
        refused_stream = stream_codes.get("STREAM_ERROR_REASON_OVERLOADED", 0)
        refusals_without_hint = refused_unary - hints
        time.sleep(0.5)
        shed = metric(http, "utilityd_shed_total") - shed_before
        # In the server: the accepted batches' wait for a worker and their
        # scoring, each at its p99 (bucket bounds; their sum bounds the p99
        # of both together).
        server_p99 = (
            bucket_quantile(wait_before,
                            buckets(http, "utilityd_queue_wait_seconds"), 0.99) +
            bucket_quantile(batch_before,
                            buckets(http, "utilityd_batch_duration_seconds"), 0.99))
        expired = metric(http, "utilityd_expired_total") - expired_before

        # Recovery.
        t0 = time.monotonic()
        check(b"", timeout=2)
        recovery_health = time.monotonic() - t0
        queued_after = metric(http, "utilityd_queued_agents")

        figures = {
            "capacity_batches_per_s": round(capacity, 1),
            "offered_batches_per_s": round(3 * capacity, 1),
            "seconds": SECONDS,
            "unary": codes, "streams": stream_codes,
            "accepted_p50_s": round(percentile(latencies, 0.5), 4),
            "accepted_p99_s": round(percentile(latencies, 0.99), 4),
            "server_p99_s": server_p99,
            "health_max_s": round(max(health), 4),
            "health_p99_s": round(percentile(health, 0.99), 4),
            "readyz_max_s": round(max(readyz), 4),
            "readyz_p99_s": round(percentile(readyz, 0.99), 4),
            "health_errors": health_errors,
            "rss_idle_mib": round(idle_rss, 1),
            "rss_max_mib": round(max(rss), 1),
            "shed_metric": shed, "expired_metric": expired,
            "refused_seen": refused_unary + refused_stream,
            "deadline_seen": codes.get("DEADLINE_EXCEEDED", 0),
            "recovery_health_s": round(recovery_health, 4),
            "queued_after": queued_after,
        }
        print(json.dumps(figures))
        if not MEASURE_ONLY:
            def expect(cond, what):
                if not cond:
                    failures.append(what)
            expect(SANITIZED or max(rss) < RSS_LIMIT_MIB,
                   "resident memory %.0f MiB >= %.0f" % (max(rss), RSS_LIMIT_MIB))
            expect(SANITIZED or server_p99 <= P99_LIMIT_S,
                   "accepted batches' p99 in the server %.3f s > %.2f" %
                   (server_p99, P99_LIMIT_S))
            expect(SANITIZED or max(readyz) < HEALTH_LIMIT_S,
                   "/readyz took %.3f s" % max(readyz))
            expect(health_errors == 0,
                   "%d health checks not SERVING / not ready" % health_errors)
            expect(refused_unary + refused_stream > 0,
                   "nothing was shed at 3x capacity")
            # Every refusal the server counted reached its client, unless
            # the client had given up first (its deadline).
            expect(refused_unary + refused_stream <= shed <=
                   refused_unary + refused_stream + codes.get("DEADLINE_EXCEEDED", 0),
                   "utilityd_shed_total %d, refusals seen %d, deadlines %d" %
                   (shed, refused_unary + refused_stream,
                    codes.get("DEADLINE_EXCEEDED", 0)))
            expect(expired <= codes.get("DEADLINE_EXCEEDED", 0),
                   "utilityd_expired_total %d > DEADLINE_EXCEEDED seen %d" %
                   (expired, codes.get("DEADLINE_EXCEEDED", 0)))
            expect(refusals_without_hint == 0,
                   "%d refusals without grpc-retry-pushback-ms" %
                   refusals_without_hint)
            expect((SANITIZED or recovery_health < HEALTH_LIMIT_S) and
                   queued_after == 0,
                   "no recovery: health %.3f s, %d agents still queued" %
                   (recovery_health, queued_after))
            expect(codes.get("OK", 0) > 0 and stream_codes.get("OK", 0) > 0,
                   "nothing was accepted")
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        if failures:
            sys.stdout.write(open(os.path.join(work, "server.log")).read()[-3000:])
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAIL: " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
