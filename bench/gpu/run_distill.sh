#!/usr/bin/env bash
# Distil reasoning-graph trajectories from the corpus TRAIN split on a GPU host (issue 12): a thin
# wrapper over `regrapht graph distill --ray` (one Ray job per task, kernel and seed, one GPU each,
# retried when a worker dies, killed past JOB_TIMEOUT; a local Ray on this host unless RAY_ADDRESS
# names a cluster), for each strategy in STRATEGIES; the per-strategy files are merged, duplicate
# chains (the same steps found by two strategies) dropped, into $OUT/distilled-h200.jsonl, and
# the graph is rebuilt from it plus the hand-written trajectories:
# $OUT/reasoning-graph.msgpack, $OUT/reasoning-graph.svg, $OUT/graph-stats.{txt,json}.
# To ship it: copy distilled-h200.jsonl to graph/trajectories/ and run the three commands of
# graph/README.md ("Distilled trajectories").
# Expected time on 2x H200 (defaults): 28 tasks, 4 searches each (mcgs and random, seeds 0 1,
# budget 16, <= TIME_LIMIT 20 s each, appliers only) ~ 90 s per task over 2 GPUs: ~20 min (the
# xargs version ran 8 jobs at once on 2 GPUs, sharing them; Ray gives each job its GPU).
# Env: OUT (required), STRATEGIES ("mcgs random"), SEEDS ("0 1"), BUDGET (16), TIME_LIMIT (20),
# JOB_TIMEOUT (240), MODEL (0: appliers only; 1: also the model, from $REGRAPHT_MODEL or the
# embedded GGUF), RAY_ADDRESS (a cluster; default a local Ray), SITE, WHEELS (with Ray's wheels).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT}
STRATEGIES=${STRATEGIES:-"mcgs random"}
SEEDS=${SEEDS:-"0 1"}
BUDGET=${BUDGET:-16}
TIME_LIMIT=${TIME_LIMIT:-20}
JOB_TIMEOUT=${JOB_TIMEOUT:-240}
MODEL=${MODEL:-0}
SITE=${SITE:-/tmp/site}
RUN=${RUN_DIR:-$(mktemp -d /tmp/distill-run.XXXXXX)}
mkdir -p "$OUT" "$RUN/traj"
# shellcheck source=bench/gpu/host_env.sh
. bench/gpu/host_env.sh
host_python_env
flags=()
[ "$MODEL" = 1 ] || flags=(--no-model)
RAY_LOG="$RUN/ray-start.log" ray_head_start || exit 2
start=$(date +%s)
for strategy in $STRATEGIES; do
    # shellcheck disable=SC2046,SC2086
    python3 -m regrapht --log-level INFO graph distill $(ls -d bench/corpus/train/*/) \
        -o "$RUN/traj/$strategy.jsonl" --strategy "$strategy" --budget "$BUDGET" --seeds $SEEDS \
        --time-limit "$TIME_LIMIT" "${flags[@]}" --ray "$RAY_ADDRESS" --job-timeout "$JOB_TIMEOUT" \
        2>&1 | tee -a "$RUN/distill.log"
    echo "$strategy exit=${PIPESTATUS[0]}" >> "$RUN/status.txt"
done
ray_head_stop
echo "wall $(( $(date +%s) - start )) s" | tee -a "$RUN/status.txt"
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
