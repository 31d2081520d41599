#!/usr/bin/env bash
# `regrapht eval --ray` on a GPU host against the local path on the same jobs (issue 28): a local
# Ray head with the host's GPUs (`ray start --head`), the corpus split through
# `regrapht eval --ray 127.0.0.1:6379`, then the same tasks the local way (one `regrapht eval`
# per task, JOBS at a time, as run_corpus.sh did with xargs), and bench/compare_eval.py over the
# two reports: $OUT/ray/, $OUT/local/, $OUT/comparison.md, $OUT/times.txt.
# Env: OUT (required), PATH_TIMEOUT (s per path, 270), SPLIT (test), STRATEGY (rules), BUDGET (6), NO_MODEL (1), JOBS (4),
# GPUS_PER_JOB (0.25: four Ray jobs per GPU, like JOBS), JOB_TIMEOUT (240), RAY_WHEELS (a folder
# of Ray's cp312 wheels and its dependencies, installed into $SITE), SITE, WHEELS.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT}
SPLIT=${SPLIT:-test}
STRATEGY=${STRATEGY:-rules}
BUDGET=${BUDGET:-6}
JOBS=${JOBS:-4}
JOB_TIMEOUT=${JOB_TIMEOUT:-240}
SITE=${SITE:-/tmp/site}
mkdir -p "$OUT"
# shellcheck source=bench/gpu/host_env.sh
. bench/gpu/host_env.sh
host_python_env
flags=(--strategy "$STRATEGY" --budget "$BUDGET")
[ "${NO_MODEL:-1}" = 1 ] && flags+=(--no-model)
tasks=$(ls -d bench/corpus/"$SPLIT"/*/)
# the workers inherit the head's environment (PYTHONPATH, REGRAPHT_MODEL, the cache dir), not the driver's
XDG_CACHE_HOME=/tmp/ray-cache RAY_LOG="$OUT/ray-start.log" ray_head_start || exit 2
start=$(date +%s)
# shellcheck disable=SC2086
timeout "${PATH_TIMEOUT:-270}" python3 -m regrapht eval $tasks "${flags[@]}" --out "$OUT/ray" --ray "$RAY_ADDRESS" \
    --gpus-per-job "${GPUS_PER_JOB:-0.25}" --job-timeout "$JOB_TIMEOUT" > "$OUT/ray.log" 2>&1
echo "ray: exit $? wall $(( $(date +%s) - start )) s" | tee "$OUT/times.txt"
ray_head_stop
start=$(date +%s)
mkdir -p "$OUT/local-runs"
# shellcheck disable=SC2086
printf '%s\n' $tasks | XDG_CACHE_HOME=/tmp/local-cache timeout "${PATH_TIMEOUT:-270}" xargs -P "$JOBS" -I{} sh -c \
    'python3 -m regrapht eval "$1" '"${flags[*]}"' --out "$2/local-runs/$(basename "$1")" > /dev/null 2>&1' _ {} "$OUT"
echo "local: wall $(( $(date +%s) - start )) s ($JOBS at a time)" | tee -a "$OUT/times.txt"
python3 - "$OUT" <<'PY'
import json, sys
from pathlib import Path
from regrapht.evaluation.report import totals
out = Path(sys.argv[1])
rows = [row for report in sorted((out / "local-runs").glob("*/report.json"))
        for row in json.loads(report.read_text())["tasks"]]
(out / "local").mkdir(exist_ok=True)
(out / "local" / "report.json").write_text(json.dumps({"tasks": rows, "totals": totals(rows)}, indent=1))
PY
python3 bench/compare_eval.py "$OUT/local/report.json" "$OUT/ray/report.json" --names local ray \
    > "$OUT/comparison.md"
echo "compare: exit $?" | tee -a "$OUT/times.txt"
tail -n 8 "$OUT/comparison.md"
