"""The client conformance suite (docs/CLIENTS.md, "Conformance").

Runs every scenario of scenarios.json against one SDK's driver: starts real
utilityd replicas on loopback (one behind a TCP proxy when a scenario black-
holes it), starts the driver with the replicas as its target, injects the
scenario's fault when the driver reports the fault tick and heals it at the
heal tick, then reads the driver's per-batch lines and checks the
scenario's expectations. Prints one figures line per scenario and mode, and
a table at the end; exits 1 naming every expectation missed.

  /usr/bin/python3 conformance.py UTILITYD STUBS REPO -- DRIVER [ARGS...]

The driver protocol (what an SDK's driver implements), arguments
  --target=T --agents=N --batches=B --tick_ms=M --ticks=K --mode=stream|unary
and on stdout, one JSON object a line:
  {"tick": t, "at": ms}             when tick t starts (before its batches)
  {"batch": id, "tick": t, "slot": s, "sent": ms, "done": ms, "ok": bool,
   "attempts": n, "replica": "host:port", "error": "..."}
                                    when a batch settles (ms: Unix epoch)
  {"end": true}                     after the last batch settled
With --wait_ready=false the driver sends its first batches without a
readiness wait.
Each tick the driver submits B batches, slot s holding agents s, s+B, ...
(an agent is always in the same slot), with named factors of
eat_hide_wander. SCENARIOS=a,b runs only those; MODES=stream likewise.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
UTILITYD, STUBS, REPO = sys.argv[1], sys.argv[2], sys.argv[3]
DRIVER = sys.argv[sys.argv.index("--") + 1:]
sys.path.insert(0, STUBS)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import grpc  # noqa: E402
from health import wait_serving  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Replica:
    """One utilityd on a fixed loopback port (so a restart keeps it)."""

    def __init__(self, work, index, config_dir, flags):
        self.port = free_port()
        self.log = os.path.join(work, "replica%d.log" % index)
        self.args = [UTILITYD, "--grpc_address=127.0.0.1:%d" % self.port,
                     "--http_address=127.0.0.1:0", "--config_dir=" + config_dir,
                     "--reload_interval=1h", "--log_level=warning"] + flags
        self.proc = None

    def start(self, wait=True, serving=True):
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(self.args, stdout=log, stderr=log)
        if wait:
            # The port first: a gRPC channel that finds it closed backs off
            # for a second or more before it tries again.
            # Startup is not what is measured: generous for sanitizer builds
            # sharing the machine with other suites (a soak test, a flood).
            deadline = time.time() + 60
            while True:
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                    break
                except OSError:
                    if time.time() > deadline or self.proc.poll() is not None:
                        raise RuntimeError("utilityd did not listen: see " + self.log)
                    time.sleep(0.01)
            if not serving:
                return
            channel = grpc.insecure_channel("127.0.0.1:%d" % self.port)
            wait_serving(channel, time.time() + 60)
            channel.close()

    def signal(self, sig):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
        if self.proc:
            self.proc.wait()


class BlackHole:
    """A TCP proxy to a replica. Blocked: every byte either way is read and
    dropped, connections stay open. Unblocked: the connections that lost
    bytes are closed and new ones are forwarded again."""

    def __init__(self, upstream_port):
        self.upstream = upstream_port
        self.blocked = False
        self.conns = []
        self.lock = threading.Lock()
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.upstream))
            except OSError:
                client.close()
                continue
            pair = [client, server]
            with self.lock:
                self.conns.append(pair)
            threading.Thread(target=self.pump, args=(client, server, pair), daemon=True).start()
            threading.Thread(target=self.pump, args=(server, client, pair), daemon=True).start()

    def pump(self, src, dst, pair):
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            if not data:
                break
            if self.blocked:
                continue
            try:
                dst.sendall(data)
            except OSError:
                break
        for s in pair:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def block(self):
        self.blocked = True

    def unblock(self):
        with self.lock:
            conns, self.conns = self.conns, []
        for pair in conns:
            for s in pair:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        self.blocked = False

    def close(self):
        self.listener.close()
        self.unblock()


def percentile(values, q):
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def reorder_factors(config_dir):
    """eat_hide_wander with its first two factors swapped: a new revision
    whose factor order differs from every packed schema the SDK holds."""
    path = os.path.join(config_dir, "eat_hide_wander.yaml")
    lines = open(path).read().split("\n")
    i = next(k for k, line in enumerate(lines) if line.strip().startswith("- {name: hunger"))
    lines[i], lines[i + 1] = lines[i + 1], lines[i]
    open(path, "w").write("\n".join(lines))


def run(scenario, mode, work):
    config_dir = os.path.join(work, "sets")
    shutil.copytree(os.path.join(REPO, "examples", "behaviour_sets"), config_dir)
    # A replica 0 without sets listens, refuses every batch as not ready
    # (UNAVAILABLE) and answers health probes NOT_SERVING until its sets
    # arrive (heal "sets").
    no_sets = scenario.get("replica0_sets") == "none"
    first_dir = os.path.join(work, "sets0") if no_sets else config_dir
    if no_sets:
        os.mkdir(first_dir)
    replicas = []
    for i in range(scenario["replicas"]):
        flags = list(scenario["replica_flags"])
        if i == 0:
            flags += scenario.get("replica0_flags", [])
        replicas.append(Replica(work, i, first_dir if i == 0 else config_dir, flags))
    for i, r in enumerate(replicas):
        r.start(serving=not (no_sets and i == 0))
    proxy = BlackHole(replicas[0].port) if scenario["fault"] == "blackhole" else None
    addresses = ["127.0.0.1:%d" % r.port for r in replicas]
    if proxy:
        addresses[0] = "127.0.0.1:%d" % proxy.port
    if no_sets:
        # Every SDK starts its round robin at the first address, where the
        # driver's schema call goes: the replica without sets is last, so
        # batches reach it before anything has told the SDK it serves none.
        addresses = addresses[1:] + addresses[:1]
    args = DRIVER + ["--target=" + ",".join(addresses), "--agents=%d" % scenario["agents"],
                     "--batches=%d" % scenario["batches_per_tick"],
                     "--tick_ms=%d" % scenario["tick_ms"], "--ticks=%d" % scenario["ticks"],
                     "--mode=" + mode] + scenario.get("driver_flags", [])
    driver = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ticks, batches, ended = {}, [], False
    fault_at = heal_at = serving_again = None
    first = replicas[0]
    try:
        for line in driver.stdout:
            event = json.loads(line)
            if "end" in event:
                ended = True
                continue
            if "batch" in event:
                batches.append(event)
                continue
            t = event["tick"]
            ticks[t] = event["at"]
            if t == scenario["fault_tick"]:
                fault_at = time.time() * 1000
                kind = scenario["fault"]
                if kind in ("sigkill", "sigstop", "sigterm"):
                    first.signal({"sigkill": signal.SIGKILL, "sigstop": signal.SIGSTOP,
                                  "sigterm": signal.SIGTERM}[kind])
                elif kind == "blackhole":
                    proxy.block()
                elif kind == "reload":
                    reorder_factors(config_dir)
                    for r in replicas:
                        r.signal(signal.SIGHUP)
            if t == scenario["heal_tick"] and scenario.get("heal"):
                heal_at = time.time() * 1000
                heal = scenario["heal"]
                if heal == "restart":
                    # Measured from the new process's start: its own
                    # start-up is in the figure.
                    first.proc.wait()
                    serving_again = time.time() * 1000
                    first.start(wait=False)
                elif heal == "sigcont":
                    first.signal(signal.SIGCONT)
                    serving_again = time.time() * 1000
                elif heal == "unblock":
                    proxy.unblock()
                    serving_again = time.time() * 1000
                elif heal == "sets":
                    shutil.rmtree(first_dir)
                    shutil.copytree(config_dir, first_dir)
                    first.signal(signal.SIGHUP)
                    serving_again = time.time() * 1000
        driver.wait(timeout=60)
    finally:
        if driver.poll() is None:
            driver.kill()
        for r in replicas:
            r.stop()
        if proxy:
            proxy.close()
    stderr = driver.stderr.read()
    return measure(scenario, ticks, batches, ended, driver.returncode, stderr,
                   fault_at, heal_at, serving_again, addresses[0])


def measure(scenario, ticks, batches, ended, code, stderr, fault_at, heal_at,
            serving_again, first_address):
    tick_ms = scenario["tick_ms"]
    f = {"driver_exit": code, "ended": ended, "batches": len(batches)}
    ids = [b["batch"] for b in batches]
    f["duplicates"] = len(ids) - len(set(ids))
    expected = scenario["ticks"] * scenario["batches_per_tick"]
    f["unsettled"] = expected - len(set(ids))
    f["failed"] = sum(1 for b in batches if not b["ok"])
    f["errors"] = sorted({b.get("error", "")[:160] for b in batches if not b["ok"]})[:3]
    attempts = [b["attempts"] for b in batches]
    f["max_attempts_per_batch"] = max(attempts, default=0)
    f["attempts_per_batch_mean"] = round(sum(attempts) / max(1, len(attempts)), 3)
    # An agent (slot) has a fresh decision for tick t when t's batch
    # answered before tick t+1 began (tick_ms after it was sent).
    fresh = {(b["slot"], b["tick"]) for b in batches
             if b["ok"] and b["done"] - b["sent"] <= tick_ms}
    worst = missed = 0
    for slot in range(scenario["batches_per_tick"]):
        run_length = 0
        for t in range(scenario["ticks"]):
            if (slot, t) in fresh:
                run_length = 0
            else:
                run_length += 1
                missed += 1
                worst = max(worst, run_length)
    f["max_ticks_without_decision"] = worst
    f["agent_ticks_missed"] = missed * scenario["agents"] // scenario["batches_per_tick"]
    start = ticks.get(scenario["fault_tick"], float("inf"))
    heal = ticks.get(scenario["heal_tick"], float("inf"))
    after = heal + 10 * tick_ms if scenario.get("heal") else start + 10 * tick_ms
    ok = [b for b in batches if b["ok"]]
    latency = lambda bs: [b["done"] - b["sent"] for b in bs]  # noqa: E731
    f["p50_ms"] = round(percentile(latency(ok), 0.5), 1)
    f["p99_ms_before"] = round(percentile(latency([b for b in ok if b["sent"] < start]), 0.99), 1)
    f["p99_ms_during"] = round(percentile(latency([b for b in ok if start <= b["sent"] < after]), 0.99), 1)
    f["p99_ms_after"] = round(percentile(latency([b for b in ok if b["sent"] >= after]), 0.99), 1)
    if serving_again is not None:
        back = [b["sent"] for b in batches
                if b["ok"] and b.get("replica") == first_address and b["sent"] >= serving_again]
        f["rejoin_ms"] = round(min(back) - serving_again, 1) if back else None
    return f, stderr


def check(expect, f):
    missed = []
    if not f["ended"] or f["driver_exit"] != 0:
        missed.append("the driver did not finish (exit %s)" % f["driver_exit"])
    if expect["every_batch_settles_once"] and (f["duplicates"] or f["unsettled"]):
        missed.append("every batch settles once: %d unsettled, %d settled twice" %
                      (f["unsettled"], f["duplicates"]))
    if expect["all_ok"] and f["failed"]:
        missed.append("%d batches failed: %s" % (f["failed"], f["errors"]))
    for key in ("max_ticks_without_decision", "max_attempts_per_batch",
                "attempts_per_batch_mean", "p99_ms_during", "p99_ms_after"):
        bound = expect.get(key)
        if bound is not None and f[key] > bound:
            missed.append("%s %s > %s" % (key, f[key], bound))
    if expect.get("rejoin_ms") is not None:
        if f.get("rejoin_ms") is None or f["rejoin_ms"] > expect["rejoin_ms"]:
            missed.append("rejoin_ms %s > %s (the replica back got no traffic in time)" %
                          (f.get("rejoin_ms"), expect["rejoin_ms"]))
    return missed


def main():
    spec = json.load(open(os.path.join(HERE, "scenarios.json")))
    only = set(filter(None, os.environ.get("SCENARIOS", "").split(",")))
    modes_only = set(filter(None, os.environ.get("MODES", "").split(",")))
    failures, rows = [], []
    for s in spec["scenarios"]:
        if only and s["name"] not in only:
            continue
        scenario = dict(spec["defaults"])
        scenario.update({k: v for k, v in s.items() if k != "expect"})
        scenario["expect"] = dict(spec["defaults"]["expect"], **s.get("expect", {}))
        for mode in scenario["modes"]:
            if modes_only and mode not in modes_only:
                continue
            work = tempfile.mkdtemp(prefix="conformance-")
            try:
                f, stderr = run(scenario, mode, work)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            missed = check(scenario["expect"], f)
            print(json.dumps(dict(scenario=s["name"], mode=mode, **f)), flush=True)
            rows.append((s["name"], mode, f))
            for m in missed:
                failures.append("%s/%s: %s" % (s["name"], mode, m))
            if missed and stderr.strip():
                print("driver stderr (%s/%s):\n%s" % (s["name"], mode, stderr[-2000:]), flush=True)
    print("\n%-13s %-6s %6s %6s %8s %8s %8s %8s %7s" % (
        "scenario", "mode", "missed", "worst", "att/b", "p99 pre", "p99 dur", "p99 aft", "rejoin"))
    for name, mode, f in rows:
        print("%-13s %-6s %6d %6d %8.3f %8.1f %8.1f %8.1f %7s" % (
            name, mode, f["agent_ticks_missed"], f["max_ticks_without_decision"],
            f["attempts_per_batch_mean"], f["p99_ms_before"], f["p99_ms_during"],
            f["p99_ms_after"], f.get("rejoin_ms", "-")))
    for m in failures:
        print("FAIL " + m)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
