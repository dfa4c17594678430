#!/usr/bin/env bash
# Measures utilityd against the performance targets on this machine and
# prints one table: the engine in process (batch path, one-at-a-time path
# and the straightforward baseline), the service against the echo baseline
# side by side in the full, the compact and the columnar form (blocks of
# 256 and 1,024, the latter also with fixed-width answer indices), latency
# at half of the maximum throughput, unary latency unloaded, memory idle and per idle stream, the cost of the live feed's
# sampled full breakdowns, and the request path with and without shadow
# evaluation. Each service figure is the median of ROUNDS runs, utilityd,
# the echo server and utilityd with a shadow candidate alternating; each
# engine figure the median of 5 repetitions, with their range in brackets.
#
#   bench/compare.sh [BUILD_DIR]     (DURATION=10s WARMUP=2s ROUNDS=3)
#   SMOKE=1 bench/compare.sh build   (seconds; checks that it all runs)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
duration=${DURATION:-10s}
warmup=${WARMUP:-2s}
rounds=${ROUNDS:-3}
reps=5
min_time=0.5
if [ -n "${SMOKE:-}" ]; then
  duration=1s; warmup=0.3s; rounds=1; reps=1; min_time=0.01
fi
ctl="$build/ctl/utilityctl"
source bench/servers.sh

echo "== engine (one core, arena set, batches of 256)" >&2
"$build/bench/engine_bench" \
  --benchmark_filter='BM_EngineBatch|BM_EngineDecide/explain_none|BM_Baseline|BM_EngineColumns/(256|1024)|BM_EngineColumnsAsSent/1024' \
  --benchmark_repetitions=$reps --benchmark_min_time=$min_time \
  --benchmark_format=json > "$work/engine.json" 2>/dev/null

echo "== service, streaming, batches of 256 (max throughput, $rounds rounds)" >&2
start utilityd "$build/server/utilityd"
start echo "$build/bench/utilityd-echo"
# Shadow evaluation at its default 1% sample, with every set a candidate
# (the same sets: all the work, no flips).
start shadow "$build/server/utilityd" --shadow_config_dir=examples/behaviour_sets
load=(--batch 256 --streams 2 --in_flight 4 --connections 2)
for _ in $(seq "$rounds"); do
  bench utilityd max "${load[@]}"
  bench echo echo "${load[@]}"
  bench shadow shadowmax "${load[@]}"
done
echo "== the same in the compact form ($rounds rounds)" >&2
for _ in $(seq "$rounds"); do
  bench utilityd maxc "${load[@]}" --form compact
  bench echo echoc "${load[@]}" --form compact
done
echo "== the columnar form: one block of 256, then of 1,024 ($rounds rounds)" >&2
for _ in $(seq "$rounds"); do
  bench utilityd col256 "${load[@]}" --form columnar
  bench echo ecol256 "${load[@]}" --form columnar
  bench utilityd col1024 --batch 1024 --streams 2 --in_flight 4 --connections 2 \
    --form columnar
  bench echo ecol1024 --batch 1024 --streams 2 --in_flight 4 --connections 2 \
    --form columnar
  # The same block asking for fixed-width answer indices (both servers).
  bench utilityd col1024f --batch 1024 --streams 2 --in_flight 4 \
    --connections 2 --form columnar --fixed_width_indices
  bench echo ecol1024f --batch 1024 --streams 2 --in_flight 4 \
    --connections 2 --form columnar --fixed_width_indices
done
echo "== unary, one block of 1,024 per call, one caller, unloaded" >&2
bench utilityd unary1024 --unary --batch 1024 --streams 1 --in_flight 1 \
  --rate 100 --form columnar
half=$(python3 -c "
import json, statistics
r = [json.loads(l)['batches_per_second'] for l in open('$work/max.jsonl')]
print(round(statistics.median(r) / 2, 1))")
echo "== latency at half of the maximum ($half batches/s)" >&2
bench utilityd half "${load[@]}" --rate "$half"
bench shadow shadowhalf "${load[@]}" --rate "$half"
echo "== unary, one agent per call, unloaded" >&2
bench utilityd unary --unary --batch 1 --streams 1 --in_flight 1 --rate 200
echo "== unary, one agent per call, back to back (threads kept awake)" >&2
bench utilityd unarybb --unary --batch 1 --streams 1 --in_flight 1
echo "== memory" >&2
"$ctl" bench --target "127.0.0.1:$utilityd_grpc" --admin "127.0.0.1:$utilityd_http" \
  --idle_streams 1000 --duration 3s --format json > "$work/idle.json"
kill -TERM "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true
echo "== without the live feed's sampled breakdowns (--recent_sample=0)" >&2
start utilityd "$build/server/utilityd" --recent_sample=0
for _ in $(seq "$rounds"); do bench utilityd nofeed "${load[@]}"; done

python3 - "$work" <<'PY'
import json, statistics, sys
work = sys.argv[1]
def lines(name):
    return [json.loads(l) for l in open(f"{work}/{name}.jsonl")]
def med(rows, key):
    return statistics.median(r[key] for r in rows)
engine = json.load(open(f"{work}/engine.json"))["benchmarks"]
def engine_runs(name):
    # The repetitions themselves (run_type "iteration"), not the aggregates
    # Google Benchmark appends (whose names carry _mean, _median...).
    return [b["items_per_second"] for b in engine
            if b["name"] == name and b.get("run_type") == "iteration"]
def engine_rate(name):
    runs = engine_runs(name)
    return statistics.median(runs) if runs else float("nan")
def engine_spread(name):
    runs = engine_runs(name)
    return f"{min(runs)/1e6:.2f}-{max(runs)/1e6:.2f}" if runs else "?"
BATCH, SINGLE, BASE = ("BM_EngineBatch/explain_none/256",
                       "BM_EngineDecide/explain_none/256", "BM_Baseline/256")
batch, single, base = (engine_rate(n) for n in (BATCH, SINGLE, BASE))
# The engine on the block form's columns (DecideColumns, the path the
# service takes), 1,024 a block, one core, on blocks shaped as the load
# generator sends them (no targets): with the echo's rate, what transport
# plus engine would give (their times per decision added), which the
# service is held to. With two targets each (COL1KT) for comparison.
COL256, COL1K, COL1KT = ("BM_EngineColumns/256", "BM_EngineColumnsAsSent/1024",
                         "BM_EngineColumns/1024")
col_engine, col1k = engine_rate(COL256), engine_rate(COL1K)
(mx, echo, mxc, echoc, half, unary, unarybb, nofeed, shmx, shhalf, col256,
 ecol256, col1024, ecol1024, col1024f, ecol1024f, unary1024) = (
    lines(n) for n in ("max", "echo", "maxc", "echoc", "half", "unary",
                       "unarybb", "nofeed", "shadowmax", "shadowhalf",
                       "col256", "ecol256", "col1024", "ecol1024",
                       "col1024f", "ecol1024f", "unary1024"))
idle = json.load(open(f"{work}/idle.json"))
svc, eco, svcc, ecoc, nof, shd, c256, e256, c1k, e1k, c1kf, e1kf = (
    med(r, "decisions_per_second")
    for r in (mx, echo, mxc, echoc, nofeed, shmx, col256, ecol256, col1024,
              ecol1024, col1024f, ecol1024f))
# The set's factors, for the request's bytes per agent.
FACTORS = col256[0]["factors"]
def cores(rows):
    return f"{med(rows, 'server_cpu_cores'):.2f}"
rows = [
    ("engine batch path, decisions/s/core",
     f"{batch/1e6:.2f} M ({engine_spread(BATCH)})", ">= 25 M", batch >= 25e6),
    ("  one agent at a time (Decide)",
     f"{single/1e6:.2f} M ({engine_spread(SINGLE)})", "", None),
    ("  straightforward baseline",
     f"{base/1e6:.2f} M ({engine_spread(BASE)})", "", None),
    ("  batch path / baseline", f"{batch/base:.1f}x", ">= 20x",
     batch / base >= 20),
    ("  a block's columns, 256 (DecideColumns) / baseline",
     f"{col_engine/base:.1f}x ({col_engine/1e6:.2f} M)", ">= 20x",
     col_engine / base >= 20),
    ("service, streaming, decisions/s", f"{svc/1e6:.2f} M", ">= 1 M",
     svc >= 1e6),
    ("  echo baseline, decisions/s", f"{eco/1e6:.2f} M", "", None),
    ("  utilityd / echo", f"{svc/eco:.2f}", ">= 0.85", svc / eco >= 0.85),
    ("  server CPU at max (utilityd, echo)",
     f"{med(mx,'server_cpu_cores'):.2f}, {med(echo,'server_cpu_cores'):.2f} cores",
     "", None),
    ("  answer, bytes per decision", f"{mx[0]['answer_bytes']/256:.1f}", "",
     None),
    ("service, compact form, decisions/s", f"{svcc/1e6:.2f} M", "", None),
    ("  echo baseline, compact, decisions/s", f"{ecoc/1e6:.2f} M", "", None),
    ("  utilityd / echo, compact", f"{svcc/ecoc:.2f}", ">= 0.85",
     svcc / ecoc >= 0.85),
    ("  server CPU at max, compact (utilityd, echo)",
     f"{med(mxc,'server_cpu_cores'):.2f}, {med(echoc,'server_cpu_cores'):.2f} cores",
     "", None),
    ("  answer, compact, bytes per decision",
     f"{mxc[0]['answer_bytes']/256:.1f}", "<= 16", mxc[0]["answer_bytes"] <= 16 * 256),
    ("service, columnar, 256 a block, decisions/s", f"{c256/1e6:.2f} M", "",
     None),
    ("  echo baseline, columnar 256, decisions/s", f"{e256/1e6:.2f} M", "",
     None),
    ("  utilityd / echo, columnar 256", f"{c256/e256:.2f}", ">= 0.85",
     c256 / e256 >= 0.85),
    ("  columnar 256 / full form", f"{c256/svc:.1f}x", ">= 3x",
     c256 / svc >= 3),
    ("  server CPU (utilityd, echo)",
     f"{cores(col256)}, {cores(ecol256)} cores", "", None),
    ("  request, bytes per agent", f"{col256[0]['request_bytes']/256:.1f}",
     f"<= {4*FACTORS+10}",
     col256[0]["request_bytes"] <= (4 * FACTORS + 10) * 256),
    ("  answer, bytes per decision",
     f"{col256[0]['answer_bytes']/256:.1f}", "<= 8",
     col256[0]["answer_bytes"] <= 8 * 256),
    ("service, columnar, 1,024 a block, decisions/s", f"{c1k/1e6:.2f} M",
     "", None),
    ("  echo baseline, columnar 1,024, decisions/s", f"{e1k/1e6:.2f} M", "",
     None),
    ("  utilityd / echo, columnar 1,024", f"{c1k/e1k:.2f}", ">= 0.85",
     c1k / e1k >= 0.85),
    ("  server CPU (utilityd, echo)",
     f"{cores(col1024)}, {cores(ecol1024)} cores", "", None),
    ("  engine alone, the load's blocks (no targets), 1,024, decisions/s/core",
     f"{col1k/1e6:.2f} M ({engine_spread(COL1K)})", "", None),
    ("    the same with two targets each",
     f"{engine_rate(COL1KT)/1e6:.2f} M ({engine_spread(COL1KT)})", "", None),
    ("  transport + engine: 1/(1/echo + 1/engine)",
     f"{1/(1/e1k + 1/col1k)/1e6:.2f} M", "", None),
    ("  utilityd / (transport + engine)",
     f"{c1k*(1/e1k + 1/col1k):.2f}", ">= 0.9", c1k * (1/e1k + 1/col1k) >= 0.9),
    ("  with fixed-width indices: utilityd, echo",
     f"{c1kf/1e6:.2f} M, {e1kf/1e6:.2f} M", "", None),
    ("    utilityd / (transport + engine), fixed-width",
     f"{c1kf*(1/e1kf + 1/col1k):.2f}", ">= 0.9",
     c1kf * (1/e1kf + 1/col1k) >= 0.9),
    ("    server CPU (utilityd, echo); answer bytes per decision",
     f"{cores(col1024f)}, {cores(ecol1024f)} cores; "
     f"{col1024f[0]['answer_bytes']/1024:.1f}", "", None),
    ("  unary call of 1,024, unloaded, p50 / p99",
     f"{unary1024[0]['p50_ms']:.2f} / {unary1024[0]['p99_ms']:.2f} ms", "",
     None),
    ("p99 batch round trip at half of max", f"{half[0]['p99_ms']:.2f} ms",
     "<= 2 ms", half[0]["p99_ms"] <= 2),
    ("  p50 / p90 / p99.9 there",
     f"{half[0]['p50_ms']:.2f} / {half[0]['p90_ms']:.2f} / {half[0]['p999_ms']:.2f} ms",
     "", None),
    ("unary, one agent, unloaded, p50", f"{unary[0]['p50_ms']*1000:.0f} us",
     "<= 150 us", unary[0]["p50_ms"] <= 0.150),
    ("  back to back (no idle gaps), p50",
     f"{unarybb[0]['p50_ms']*1000:.0f} us", "", None),
    ("resident size, idle", f"{idle['server_rss_before_bytes']/2**20:.1f} MiB",
     "<= 64 MiB", idle["server_rss_before_bytes"] <= 64 * 2**20),
    ("per idle stream (1,000 open)", f"{idle['bytes_per_stream']/1024:.1f} KiB",
     "<= 16 KiB", idle["bytes_per_stream"] <= 16 * 1024),
    ("1% sampled full breakdowns (live feed): cost",
     f"{(1 - svc/nof)*100:.1f}%", "<= 10%", 1 - svc / nof <= 0.10),
    ("shadow evaluation (1% sampled), decisions/s",
     f"{shd/1e6:.2f} M (without {svc/1e6:.2f} M)", "", None),
    ("  its throughput cost", f"{(1 - shd/svc)*100:.1f}%", "<= 5%",
     1 - shd / svc <= 0.05),
    ("  p99 at half of max, with / without",
     f"{shhalf[0]['p99_ms']:.2f} / {half[0]['p99_ms']:.2f} ms", "", None),
]
print(f"{'figure':44} {'measured':>22}  {'target':>10}")
for name, value, target, ok in rows:
    mark = "" if ok is None else ("  met" if ok else "  MISSED")
    print(f"{name:44} {value:>22}  {target:>10}{mark}")
PY
