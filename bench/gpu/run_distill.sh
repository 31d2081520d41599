#!/usr/bin/env bash
# Distil reasoning-graph trajectories from the corpus TRAIN split on a GPU host (issue 12):
# `regrapht graph distill` per task (one job per task, JOBS at a time, spread over the GPUs), for
# each strategy in STRATEGIES and each seed in SEEDS; the per-task files are merged, duplicate
# chains (the same steps found by two strategies) dropped, into $OUT/distilled-h200.jsonl, and
# the graph is rebuilt from it plus the hand-written trajectories:
# $OUT/reasoning-graph.msgpack, $OUT/reasoning-graph.svg, $OUT/graph-stats.{txt,json}.
# To ship it: copy distilled-h200.jsonl to graph/trajectories/ and run the three commands of
# graph/README.md ("Distilled trajectories").
# Expected time on 2x H200 (defaults): 28 tasks, 4 searches each (mcgs and random, seeds 0 1,
# budget 16, <= TIME_LIMIT 20 s each, appliers only) ~ 90 s per task, 8 at once: ~5-6 min.
# Env: OUT (required), STRATEGIES ("mcgs random"), SEEDS ("0 1"), BUDGET (16), TIME_LIMIT (20),
# JOBS (8), JOB_TIMEOUT (240), SUITE_TIMEOUT (480), MODEL (0: appliers only; 1: also the model,
# from $REGRAPHT_MODEL or the embedded GGUF), SITE, WHEELS.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT}
STRATEGIES=${STRATEGIES:-"mcgs random"}
SEEDS=${SEEDS:-"0 1"}
BUDGET=${BUDGET:-16}
TIME_LIMIT=${TIME_LIMIT:-20}
JOB_TIMEOUT=${JOB_TIMEOUT:-240}
SUITE_TIMEOUT=${SUITE_TIMEOUT:-480}
MODEL=${MODEL:-0}
SITE=${SITE:-/tmp/site}
RUN=${RUN_DIR:-$(mktemp -d /tmp/distill-run.XXXXXX)}
mkdir -p "$OUT" "$RUN/traj" "$RUN/logs"
# shellcheck source=bench/gpu/host_env.sh
. bench/gpu/host_env.sh
host_python_env
[ "$GPUS" -ge 1 ] 2>/dev/null || GPUS=1
JOBS=${JOBS:-8}
ls -d bench/corpus/train/*/ | awk -v gpus="$GPUS" '{ sub("/$", ""); print (NR - 1) % gpus, $0 }' > "$RUN/jobs.txt"

run_job() {  # gpu taskdir
    local gpu=$1 task=$2 name strategy flags=()
    name=$(basename "$task")
    [ "$MODEL" = 1 ] || flags=(--no-model)
    export CUDA_VISIBLE_DEVICES=$gpu XDG_CACHE_HOME=/tmp/distill-cache-gpu$gpu XDG_DATA_HOME="$RUN/data-$name"
    for strategy in $STRATEGIES; do
        # shellcheck disable=SC2086
        timeout "$JOB_TIMEOUT" python3 -m regrapht --log-level INFO graph distill "$task" \
            -o "$RUN/traj/$name-$strategy.jsonl" --strategy "$strategy" --budget "$BUDGET" --seeds $SEEDS \
            --time-limit "$TIME_LIMIT" "${flags[@]}" >> "$RUN/logs/$name.log" 2>&1
        echo "$name $strategy exit=$?" >> "$RUN/status.txt"
    done
}
export -f run_job
export RUN STRATEGIES SEEDS BUDGET TIME_LIMIT JOB_TIMEOUT MODEL
start=$(date +%s)
timeout "$SUITE_TIMEOUT" xargs -P "$JOBS" -L 1 bash -c 'run_job "$@"' _ < "$RUN/jobs.txt"
echo "wall $(( $(date +%s) - start )) s for $(wc -l < "$RUN/jobs.txt") tasks" | tee -a "$RUN/status.txt"
python3 - "$OUT/distilled-h200.jsonl" "$RUN"/traj/*.jsonl <<'PY'
import json, sys
from pathlib import Path
from regrapht.search.distill import unique, write_jsonl
records = [json.loads(line) for name in sorted(sys.argv[2:]) for line in Path(name).read_text().splitlines() if line.strip()]
write_jsonl(Path(sys.argv[1]), unique(records))
PY
echo "$(wc -l < "$OUT/distilled-h200.jsonl") distilled trajectories" | tee -a "$RUN/status.txt"
# shellcheck disable=SC2046
python3 -m regrapht graph build $(ls graph/trajectories/*.jsonl | grep -v '/distilled') \
    "$OUT/distilled-h200.jsonl" -o "$OUT/reasoning-graph.msgpack"
python3 -m regrapht graph export --svg --graph "$OUT/reasoning-graph.msgpack" -o "$OUT/reasoning-graph.svg"
python3 -m regrapht graph stats --graph "$OUT/reasoning-graph.msgpack" | tee "$OUT/graph-stats.txt"
python3 -m regrapht graph stats --graph "$OUT/reasoning-graph.msgpack" --json > "$OUT/graph-stats.json"
cp "$RUN/status.txt" "$OUT/status.txt"
tar czf "$OUT/distill-logs.tgz" -C "$RUN" logs status.txt jobs.txt
