#!/usr/bin/env bash
# The search ablation (issue 12) on the corpus TEST split, on a GPU host (2x H200 expected):
# per kernel and seed, every configuration below, through bench/ablation.py; then
# bench/merge_ablation.py prints the table (geomean roofline fraction per configuration, mean of
# the seeds with min/max) into $OUT/ablation.md.
#
#   PHASE=budget12  mcgs, greedy, random, rules, cot at budget 12, and mcgs --no-model at 12
#   PHASE=budgets   mcgs and rules at budgets 6 and 24
#   PHASE=all       both (default)
#
# Limits, all explicit (env): SEEDS ("0 1 2"), JOBS (8 at once: one job = one task and one seed,
# running every configuration of the phase), TIME_LIMIT (20 s per search without the model),
# MODEL_TIME_LIMIT (25 s per search with the model), JOB_TIMEOUT (s, 400: a job's hard stop),
# SUITE_TIMEOUT (s, 480: stops starting and waiting for jobs, then merges what finished; the
# table compares only kernels every configuration and seed finished), MODEL_THREADS (4 per job),
# TASKS (task directories instead of the whole test split, e.g. for a dry run).
# Expected time on the 2x H200 host (8 jobs at once; 23 tasks x 3 seeds = 69 jobs per phase):
#   budget12: per job 4 model searches (<= 25 s each) + mcgs --no-model (<= 20 s) + rules (seed 0
#             only: it uses no randomness) + ~4 s set-up and re-check per search: ~100-150 s,
#             so ~15-20 min for all 69 jobs;
#   budgets:  per job mcgs:6 and mcgs:24 (model) + rules:6 and rules:24 (seed 0): ~60-80 s, ~10 min.
# Within SUITE_TIMEOUT=480 (8 min) expect the first ~25-35 of the 69 (task, seed) jobs of
# budget12. Tasks run in a fixed order, so a shorter run compares fewer kernels, never different
# ones; the table says how many kernels it covers and how many searches hit their time limit.
# Needs: pycuda etc. (wheels as for run_corpus.sh), the GGUF at $REGRAPHT_MODEL (or the embedded one).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT}
PHASE=${PHASE:-all}
SEEDS=${SEEDS:-"0 1 2"}
TIME_LIMIT=${TIME_LIMIT:-20}
MODEL_TIME_LIMIT=${MODEL_TIME_LIMIT:-25}
JOB_TIMEOUT=${JOB_TIMEOUT:-400}
SUITE_TIMEOUT=${SUITE_TIMEOUT:-480}
MODEL_THREADS=${MODEL_THREADS:-4}
SITE=${SITE:-/tmp/site}
RUN=${RUN_DIR:-$(mktemp -d /tmp/ablation-run.XXXXXX)}
case "$PHASE" in
    budget12) CONFIGS="mcgs:12 greedy:12 random:12 rules:12 cot:12 mcgs:12:no-model" ;;
    budgets) CONFIGS="mcgs:6 rules:6 mcgs:24 rules:24" ;;
    all) CONFIGS="mcgs:12 greedy:12 random:12 rules:12 cot:12 mcgs:12:no-model mcgs:6 rules:6 mcgs:24 rules:24" ;;
    *) echo "run_ablation: PHASE must be budget12, budgets or all" >&2; exit 2 ;;
esac
mkdir -p "$OUT" "$RUN/rows" "$RUN/logs"

# shellcheck source=bench/gpu/host_env.sh
. bench/gpu/host_env.sh
host_python_env
if [ "$GPUS" -ge 1 ] 2>/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/gpu.txt" 2>&1
else
    GPUS=1
    echo "no CUDA device: dry run (nothing is verified, the table has no fractions)" | tee "$OUT/gpu.txt"
fi
JOBS=${JOBS:-8}

# one job per (task, seed), task-major: a cut-off run loses the last tasks, for every configuration
: > "$RUN/jobs.plain"
for task in ${TASKS:-bench/corpus/test/*/}; do
    for seed in $SEEDS; do echo "${task%/} $seed" >> "$RUN/jobs.plain"; done
done
awk -v gpus="$GPUS" '{ print (NR - 1) % gpus, $0 }' "$RUN/jobs.plain" > "$RUN/jobs.txt"

run_job() {  # gpu taskdir seed
    local gpu=$1 task=$2 seed=$3 name
    name="$(basename "$task")-s$seed"
    export CUDA_VISIBLE_DEVICES=$gpu XDG_CACHE_HOME=/tmp/ablation-cache-gpu$gpu ABLATION_DATA="$RUN/data"
    # shellcheck disable=SC2086
    timeout "$JOB_TIMEOUT" python3 bench/ablation.py "$task" --out "$RUN/rows" --configs $CONFIGS \
        --seeds "$seed" --time-limit "$TIME_LIMIT" --model-time-limit "$MODEL_TIME_LIMIT" \
        --model-threads "$MODEL_THREADS" > "$RUN/logs/$name.log" 2>&1
    echo "$name exit=$?" >> "$RUN/status.txt"
}
export -f run_job
export RUN CONFIGS TIME_LIMIT MODEL_TIME_LIMIT JOB_TIMEOUT MODEL_THREADS
start=$(date +%s)
timeout "$SUITE_TIMEOUT" xargs -P "$JOBS" -L 1 bash -c 'run_job "$@"' _ < "$RUN/jobs.txt"
echo "wall $(( $(date +%s) - start )) s for $(wc -l < "$RUN/jobs.txt") jobs ($JOBS at a time on $GPUS GPU(s)), phase $PHASE" \
    | tee -a "$RUN/status.txt"
python3 bench/merge_ablation.py "$RUN/rows" --json "$OUT/ablation.json" > "$OUT/ablation.md" 2>&1
cat "$OUT/ablation.md"
cp "$RUN/status.txt" "$OUT/status.txt" 2>/dev/null
tar czf "$OUT/ablation-rows.tgz" -C "$RUN" rows logs status.txt jobs.txt
