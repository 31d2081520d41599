#!/usr/bin/env bash
# The search ablation (issue 12) on the corpus TEST split, on a GPU host (2x H200 expected): one
# job per task runs every configuration and seed (bench/ablation.py) on one evaluator with one
# measurement cache, so a candidate is compiled, checked and timed once per task whichever
# configuration finds it; then bench/merge_ablation.py prints the table into $OUT/ablation.md.
#
# Configurations (CONFIGS to override): mcgs, greedy, random, rules, cot at budget 12,
# mcgs --no-model at 12, mcgs and rules at 6 and 24; SEEDS ("0 1 2").
# Limits, all explicit (env): JOBS (8 tasks at once, spread round-robin over the GPUs; each GPU
# has its own cache dir, so its own GPU lock), MODEL_THREADS (4 per job: 8 x 4 = the host's 32
# cores), MODEL_TIME_BUDGET (s of model calls per search, 8: checked before each call, so at most
# one ~8 s SmolLM2 rewrite after the first), TIME_LIMIT (s, 60: a per-search safety stop, not
# expected to be reached), JOB_TIMEOUT (s, 480: a task's hard stop), SUITE_TIMEOUT (s, 520: the
# deadline of every job: none starts or runs past it, then what finished is merged; the table
# compares only kernels every configuration and seed finished), TASKS (task directories instead of the test split).
#
# Expected time on the 2x H200 host (23 tasks, 8 at once: 3 waves). Per task: 30 (configuration,
# seed) searches, 24 of them run (rules once). Model: asked only where no applier rewrite of the
# code state is waiting, at most one ~9 s SmolLM2 call per search with MODEL_TIME_BUDGET=8, and
# identical requests answered once: a simulation with the real appliers on 6 train kernels
# (fake timings, a scripted 9 s model) generated 7-18 answers per task for all configurations
# and seeds (cot 3, mcgs 0-9, random/greedy 0-6), ~110 s per task on 4 threads. Candidates:
# ~30-60 distinct per task (the cache answers the rest), ~1 s each to compile with 8 jobs sharing
# the cores and ~0.3 s to check and time: ~40-60 s. So ~150-170 s per task, 3 waves: ~7.5-8.5 min
# plus ~30 s of set-up. SUITE_TIMEOUT=520 keeps the command under 10 min; tasks start in a fixed
# order and the table compares only kernels every configuration and seed finished, so a cut-off
# run compares fewer kernels, never different ones. Shorter: SEEDS="0 1" (~2/3 of the time).
# Dry run without a GPU (this script on a machine without a CUDA device, e.g. a developer's):
#   OUT=/tmp/ablation-dry TASKS="bench/corpus/train/axpby_int bench/corpus/train/transpose_i32" \
#     SEEDS="0 1" NO_MODEL=1 bash bench/gpu/run_ablation.sh
# compiles every candidate and reports them "unverified" (no fractions in the table); the table's
# header says how many candidates were judged and how many reused. NO_MODEL=1 drops the configurations that need
# the model (a dry run with the model works too, it is only slower on a small machine).
# Needs: pycuda etc. (wheels as for run_corpus.sh), the GGUF at $REGRAPHT_MODEL (or the embedded one).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT}
SEEDS=${SEEDS:-"0 1 2"}
TIME_LIMIT=${TIME_LIMIT:-60}
MODEL_TIME_BUDGET=${MODEL_TIME_BUDGET:-8}
JOB_TIMEOUT=${JOB_TIMEOUT:-480}
SUITE_TIMEOUT=${SUITE_TIMEOUT:-520}
MODEL_THREADS=${MODEL_THREADS:-4}
SITE=${SITE:-/tmp/site}
RUN=${RUN_DIR:-$(mktemp -d /tmp/ablation-run.XXXXXX)}
CONFIGS=${CONFIGS:-"mcgs:12 greedy:12 random:12 rules:12 cot:12 mcgs:12:no-model mcgs:6 rules:6 mcgs:24 rules:24"}
if [ "${NO_MODEL:-0}" = 1 ]; then
    CONFIGS=$(for c in $CONFIGS; do case "$c" in rules:*|*:no-model) echo "$c" ;; esac; done | tr '\n' ' ')
fi
mkdir -p "$OUT" "$RUN/rows" "$RUN/logs"

# shellcheck source=bench/gpu/host_env.sh
. bench/gpu/host_env.sh
host_python_env
if [ "$GPUS" -ge 1 ] 2>/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/gpu.txt" 2>&1
else
    GPUS=1
    echo "no CUDA device: dry run (candidates are compiled, nothing is verified, the table has no fractions)" \
        | tee "$OUT/gpu.txt"
fi
JOBS=${JOBS:-8}

: > "$RUN/jobs.plain"
for task in ${TASKS:-bench/corpus/test/*/}; do echo "${task%/}" >> "$RUN/jobs.plain"; done
awk -v gpus="$GPUS" '{ print (NR - 1) % gpus, $0 }' "$RUN/jobs.plain" > "$RUN/jobs.txt"
echo "$(wc -l < "$RUN/jobs.txt") tasks x configurations [$CONFIGS] x seeds [$SEEDS], $JOBS jobs at once on $GPUS GPU(s)" \
    | tee "$RUN/status.txt"

run_job() {  # gpu taskdir
    local gpu=$1 task=$2 name left
    name=$(basename "$task")
    # every job ends by the suite's deadline: none is left running when the table is merged
    left=$(( DEADLINE - $(date +%s) ))
    if [ "$left" -lt 20 ]; then echo "$name not started (suite deadline)" >> "$RUN/status.txt"; return; fi
    [ "$left" -lt "$JOB_TIMEOUT" ] || left=$JOB_TIMEOUT
    export CUDA_VISIBLE_DEVICES=$gpu XDG_CACHE_HOME=/tmp/ablation-cache-gpu$gpu ABLATION_DATA="$RUN/data"
    # shellcheck disable=SC2086
    timeout "$left" python3 bench/ablation.py "$task" --out "$RUN/rows" --configs $CONFIGS \
        --seeds $SEEDS --time-limit "$TIME_LIMIT" --model-time-budget "$MODEL_TIME_BUDGET" \
        --model-threads "$MODEL_THREADS" > "$RUN/logs/$name.log" 2>&1
    echo "$name exit=$? $(date +%s)" >> "$RUN/status.txt"
}
export -f run_job
start=$(date +%s)
DEADLINE=$(( start + SUITE_TIMEOUT ))
export RUN CONFIGS SEEDS TIME_LIMIT MODEL_TIME_BUDGET JOB_TIMEOUT MODEL_THREADS DEADLINE
xargs -P "$JOBS" -L 1 bash -c 'run_job "$@"' _ < "$RUN/jobs.txt"
echo "wall $(( $(date +%s) - start )) s for $(wc -l < "$RUN/jobs.txt") tasks ($JOBS at a time on $GPUS GPU(s))" \
    | tee -a "$RUN/status.txt"
python3 bench/merge_ablation.py "$RUN/rows" --json "$OUT/ablation.json" > "$OUT/ablation.md" 2>&1
cat "$OUT/ablation.md"
cp "$RUN/status.txt" "$OUT/status.txt" 2>/dev/null
tar czf "$OUT/ablation-rows.tgz" -C "$RUN" rows logs status.txt jobs.txt
