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
# Expected time on the 2x H200 host: ~6.5-7.5 min of jobs, ~8 min for the whole command (the
# estimate, from the last run's logs, bench/results/2026-11-30-h200x2-ablation-3f68cf5): that run
# spent ~3800 s of job time (8 lanes) and cut 6 tasks at its 515 s deadline. Since then:
# - the model failure memory (docs/search.md; <cache dir>/model-outcomes, emptied below so every run
#   starts fresh): after 3 answers of a kind (rewrite, choose, cot) with none correct, no search of
#   the kernel asks that kind again. Replaying the logged calls, keeping the first 3 per kind and
#   task: model time 1470 s -> ~1000 s (most tasks' answers were already few or reused);
# - applier matching parses a code state once for all appliers (idioms/spelling.py,
#   appliers.plain_source): on the 3-D/2-D stencils a rewritten state took ~14 s outside compiling
#   and timing (heat3d 356 s, jacobi2d 164 s of such gaps); now ~9x less;
# - tasks start longest first (bench/gpu/ablation_task_seconds.txt, the last run's job seconds).
# Per-task estimates then 54-290 s for the finished tasks; the cut ones extrapolated from their
# finished searches (by the smallest and the median share those searches took of a finished
# task): softmax_rows 210-330, transpose_f64 100-160, heat3d 70-110, spmv_csr 125-160, jacobi2d
# 220-235. Sum ~2800-3100 s of job time; longest-first on 8 lanes: ~370-420 s, plus ~30 s of
# set-up and a few seconds of merge. SUITE_TIMEOUT=520 leaves ~100 s for slower tasks and keeps
# the device call under 10 min; a task still running at the deadline is stopped, and the table
# compares only kernels every configuration and seed finished (status.txt names the others).
# The failure memory makes searches of one kernel depend on the order they run in (a later search
# does not ask the model where the earlier ones' answers were never correct): configurations run in
# CONFIGS order, seeds in SEEDS order, as in the product, where earlier searches' outcomes count.
# Shorter: SEEDS="0 1" (~2/3 of the time).
# Dry run without a GPU (this script on a machine without a CUDA device, e.g. a developer's):
#   OUT=/tmp/ablation-dry TASKS="bench/corpus/train/axpby_int bench/corpus/train/transpose_i32" \
#     SEEDS="0 1" NO_MODEL=1 bash bench/gpu/run_ablation.sh
# TASK_PARTS ("heat3d:2 jacobi2d:2"): run those tasks as that many jobs, the configurations dealt
# round-robin (each job its own evaluator and measurement cache, so a candidate two parts share is
# judged twice; the model failure memory is shared through the GPU's cache dir as before): for a
# task longer than the deadline in one job.
# compiles every candidate and reports them "unverified" (no fractions in the table); the table's
# header says how many candidates were judged and how many reused. NO_MODEL=1 drops the configurations that need
# the model (a dry run with the model works too, it is only slower on a small machine).
# Needs: pycuda etc. (wheels as for run_corpus.sh), the GGUF at $REGRAPHT_MODEL (or the embedded one).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT}
SEEDS=${SEEDS:-"0 1 2"}
ESTIMATES=${ESTIMATES:-bench/gpu/ablation_task_seconds.txt}
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

# the model failure memory starts empty: every run measures what the model does from scratch
rm -rf /tmp/ablation-cache/regrapht/gpu-*/model-outcomes

# longest tasks first (ESTIMATES: "task seconds" lines; a task not listed counts as longest), so
# the last wave is short tasks and the 8 lanes end together
: > "$RUN/jobs.plain"
for task in ${TASKS:-bench/corpus/test/*/}; do
    task=${task%/}
    seconds=$(awk -v name="$(basename "$task")" '$1 == name { print $2 }' "$ESTIMATES" 2>/dev/null)
    parts=1
    for split in ${TASK_PARTS:-}; do [ "${split%%:*}" = "$(basename "$task")" ] && parts=${split##*:}; done
    for part in $(seq 0 $(( parts - 1 ))); do
        echo "$(( ${seconds:-999999} / parts )) $task $part/$parts" >> "$RUN/jobs.plain"
    done
done
sort -k1,1nr -k2,2 "$RUN/jobs.plain" | awk -v gpus="$GPUS" '{ print (NR - 1) % gpus, $2, $3 }' > "$RUN/jobs.txt"
echo "$(wc -l < "$RUN/jobs.txt") tasks x configurations [$CONFIGS] x seeds [$SEEDS], $JOBS jobs at once on $GPUS GPU(s)" \
    | tee "$RUN/status.txt"

# one Ray job per task (or part): bench/ray_jobs.py on a GPU share each (JOBS per GPU), a hard
# stop at JOB_TIMEOUT; the suite's deadline stops the driver and the cluster (what finished is kept)
: > "$RUN/ray-jobs.txt"
while read -r _gpu task share; do
    part=${share%/*} parts=${share#*/}
    name=$(basename "$task")
    configs=$CONFIGS
    if [ "$parts" -gt 1 ]; then
        # this part's share of the configurations, dealt round-robin
        configs=$(echo $CONFIGS | tr ' ' '\n' | awk -v p="$part" -v n="$parts" '(NR - 1) % n == p' | tr '\n' ' ')
        name="$name-part$part"
    fi
    # shellcheck disable=SC2086
    echo "$name $RUN/logs/$name.log env ABLATION_DATA=$RUN/data python3 bench/ablation.py $task --out $RUN/rows" \
        "--configs $configs --seeds $SEEDS --time-limit $TIME_LIMIT --model-time-budget $MODEL_TIME_BUDGET" \
        "--model-threads $MODEL_THREADS $([ "$parts" -gt 1 ] && echo --part "part$part")" >> "$RUN/ray-jobs.txt"
done < "$RUN/jobs.txt"
# the jobs inherit the head's environment: one cache dir per GPU under this one
XDG_CACHE_HOME=/tmp/ablation-cache RAY_LOG="$RUN/ray-start.log" ray_head_start || exit 2
start=$(date +%s)
share=$(python3 -c "import sys; print(min(1.0, $GPUS / $JOBS) if $GPUS > 0 else 1.0 / $JOBS)")
timeout "$SUITE_TIMEOUT" python3 bench/ray_jobs.py "$RUN/ray-jobs.txt" --store "$RUN/store" \
    --status "$RUN/status.txt" --ray "$RAY_ADDRESS" --gpus-per-job "$share" --job-timeout "$JOB_TIMEOUT" \
    2> "$RUN/logs/ray-driver.log"
ray_head_stop
echo "wall $(( $(date +%s) - start )) s for $(wc -l < "$RUN/jobs.txt") tasks ($JOBS at a time on $GPUS GPU(s))" \
    | tee -a "$RUN/status.txt"
python3 bench/merge_ablation.py "$RUN/rows" --json "$OUT/ablation.json" > "$OUT/ablation.md" 2>&1
cat "$OUT/ablation.md"
cp "$RUN/status.txt" "$OUT/status.txt" 2>/dev/null
tar czf "$OUT/ablation-rows.tgz" -C "$RUN" rows logs status.txt jobs.txt
