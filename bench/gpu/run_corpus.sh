#!/usr/bin/env bash
# The naive-kernel corpus (bench/corpus) on a GPU host, in one go:
#   MODE=eval      `regrapht eval` of every task of one split (one task per process), merged into
#                  one report with per-family rows: $OUT/corpus-<split>-<strategy>-b<budget>/
#   MODE=appliers  every deterministic applier's rewrites of every corpus kernel (both splits),
#                  each checked and timed: $OUT/appliers/appliers.md (+ .json, one .json per task)
#   MODE=both      the two, one after the other
# MODE=appliers and MODE=both first prove the naive kernels themselves right: each runs once and is
# compared with NumPy (bench/corpus/check_references.py -> $OUT/references.md).
# The eval runs through `regrapht eval --ray` (docs/scale.md); the applier jobs run JOBS at a time,
# spread round-robin over the host's GPUs; each GPU has its own cache dir,
# so its own GPU lock (the jobs of one GPU never time kernels at the same moment), while model
# generation and nvcc use the host's cores. Without a GPU (or without pycuda) everything still runs
# end to end and every report says there is no CUDA device (a dry run of the pipeline).
#
# Env: OUT (required), SPLIT=test|train|all (eval; default test), STRATEGY (default mcgs),
# BUDGET (12), SEED (0), JOBS (4 per GPU), MODEL_THREADS (4 per job), JOB_TIMEOUT (s, 240),
# TIME_LIMIT (s, 2/3 of JOB_TIMEOUT: eval --time-limit per kernel),
# SUITE_TIMEOUT (s, 480: stops starting and waiting for jobs, then merges what finished), REF_TIMEOUT
# (s, 300: the NumPy check of the naive kernels),
# REGRAPHT_MODEL (the GGUF; else the embedded one if installed), NO_MODEL=1 (the search without the
# model: appliers only, `eval --no-model`; the report's no_model key says so), TASKS (task directories to use
# instead of a whole split), WHEELS (a folder of the host's wheels: pycuda, llama-cpp-python, ...;
# default .gpu/wheels in the checkout), SITE (install target, /tmp/site), GPU_IDS (devices to use, e.g. "0";
# default all).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT}
MODE=${MODE:-eval}
SPLIT=${SPLIT:-test}
STRATEGY=${STRATEGY:-mcgs}
BUDGET=${BUDGET:-12}
SEED=${SEED:-0}
MODEL_THREADS=${MODEL_THREADS:-4}
JOB_TIMEOUT=${JOB_TIMEOUT:-240}
# The search of a kernel stops at TIME_LIMIT and keeps its best verified version (the report says
# time_limited), so a slow task still reports before JOB_TIMEOUT kills its job.
TIME_LIMIT=${TIME_LIMIT:-$(( JOB_TIMEOUT * 2 / 3 ))}
SUITE_TIMEOUT=${SUITE_TIMEOUT:-480}
SITE=${SITE:-/tmp/site}
RUN=${RUN_DIR:-$(mktemp -d /tmp/corpus-run.XXXXXX)}
case "$MODE" in eval|appliers|both) ;; *) echo "run_corpus: MODE must be eval, appliers or both" >&2; exit 2 ;; esac
mkdir -p "$OUT" "$RUN/logs"

# shellcheck source=bench/gpu/host_env.sh
. bench/gpu/host_env.sh
host_python_env
if [ "$GPUS" -ge 1 ] 2>/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/gpu.txt" 2>&1
else
    GPUS=1
    echo "no CUDA device (nvidia-smi found none): dry run, kernels are compiled but not run" | tee "$OUT/gpu.txt"
fi
JOBS=${JOBS:-$(( 4 * GPUS ))}

if [ -n "${TASKS:-}" ]; then
    eval_tasks=$TASKS
elif [ "$SPLIT" = all ]; then
    eval_tasks=$(ls -d bench/corpus/test/*/ bench/corpus/train/*/)
else
    eval_tasks=$(ls -d bench/corpus/"$SPLIT"/*/) || { echo "run_corpus: no split $SPLIT" >&2; exit 2; }
fi
USE_MODEL=0  # regrapht takes the model from $REGRAPHT_MODEL, else the embedded GGUF
if [ "$MODE" != appliers ] && [ "$STRATEGY" != rules ] && [ "${NO_MODEL:-0}" != 1 ]; then
    USE_MODEL=1
    if [ -z "${REGRAPHT_MODEL:-}" ] && ! python3 -c 'import sys; from regrapht.model.locate import embedded_model_path; sys.exit(embedded_model_path() is None)'; then
        echo "run_corpus: strategy $STRATEGY needs a model: set REGRAPHT_MODEL to a GGUF file" >&2
        exit 2
    fi
fi

jobs_file="$RUN/jobs.txt"
: > "$jobs_file.plain"
if [ "$MODE" != eval ]; then
    for task in ${TASKS:-$(ls -d bench/corpus/test/*/ bench/corpus/train/*/)}; do
        echo "appliers ${task%/}" >> "$jobs_file.plain"
    done
fi
# the applier jobs for bench/ray_jobs.py (NAME LOG COMMAND...); each job's GPU and cache dir come from Ray
while read -r _kind task; do
    name="$(basename "$(dirname "$task")")-$(basename "$task")"
    echo "appliers-$name $RUN/logs/appliers-$name.log python3 bench/verify_appliers.py run $task --out $RUN/appliers"
done < "$jobs_file.plain" > "$jobs_file"
# the jobs inherit the head's environment: one cache dir per GPU under this one
XDG_CACHE_HOME=/tmp/corpus-cache XDG_DATA_HOME="$RUN/data-$STRATEGY" RAY_LOG="$RUN/ray-start.log" ray_head_start || exit 2
share=$(python3 -c "print(min(1.0, $GPUS / $JOBS))")

start=$(date +%s)
if [ "$MODE" != eval ]; then
    CUDA_VISIBLE_DEVICES=0 timeout "${REF_TIMEOUT:-300}" python3 bench/corpus/check_references.py --out "$OUT/references.md" \
        ${TASKS:-} > "$RUN/logs/references.log" 2>&1
    echo "references exit=$?" | tee -a "$RUN/status.txt"
    tail -n 1 "$RUN/logs/references.log"
fi
if [ "$MODE" != appliers ]; then
    # the eval: one Ray job per kernel (a local Ray on this host unless RAY_ADDRESS names a
    # cluster), GPUS/JOBS of a GPU each (JOBS at once: four per GPU by default, their timing
    # serialised by the per-GPU lock), retried when a worker dies, killed past JOB_TIMEOUT
    if [ "$USE_MODEL" = 1 ]; then model=(--model-threads "$MODEL_THREADS"); else model=(--no-model); fi
    # shellcheck disable=SC2086
    timeout "$SUITE_TIMEOUT" python3 -m regrapht --log-level INFO eval $eval_tasks \
        --strategy "$STRATEGY" --budget "$BUDGET" --seed "$SEED" --time-limit "$TIME_LIMIT" \
        --out "$RUN/runs/eval-$STRATEGY-all" "${model[@]}" --ray "$RAY_ADDRESS" \
        --job-timeout "$JOB_TIMEOUT" --gpus-per-job "$share" > "$RUN/logs/eval-all.log" 2>&1
    echo "eval all exit=$?" >> "$RUN/status.txt"
fi
[ -s "$jobs_file" ] && timeout "$SUITE_TIMEOUT" python3 bench/ray_jobs.py "$jobs_file" --store "$RUN/store" \
    --status "$RUN/status.txt" --ray "$RAY_ADDRESS" --gpus-per-job "$share" --job-timeout "$JOB_TIMEOUT" \
    2> "$RUN/logs/ray-driver.log"
ray_head_stop
echo "wall $(( $(date +%s) - start )) s for $(wc -l < "$jobs_file") jobs ($JOBS at a time on $GPUS GPU(s))" \
    | tee -a "$RUN/status.txt"

if [ "$MODE" != appliers ]; then
    python3 bench/merge_eval.py "$RUN/runs" "$RUN/merged" > "$RUN/summary.md" 2>&1
    dest="$OUT/corpus-$SPLIT-$STRATEGY-b$BUDGET"
    mkdir -p "$dest"
    cp -r "$RUN/merged/$STRATEGY/." "$dest/" 2>/dev/null
    cp "$RUN/summary.md" "$dest/summary.md"
    # A task whose job wrote no report (bad spec, killed by a time limit) is listed, not dropped.
    for task in $eval_tasks; do
        name=$(basename "${task%/}")
        grep -q "\"task\": \"$name\"" "$RUN/runs/eval-$STRATEGY-all/report.json" 2>/dev/null && continue
        echo "- $name: no report ($(tail -n 1 "$RUN/logs/eval-all.log" 2>/dev/null || echo 'not started'))"
    done > "$dest/not_run.md"
    [ -s "$dest/not_run.md" ] && { echo "tasks without a report:"; cat "$dest/not_run.md"; } | tee -a "$dest/summary.md"
    cat "$dest/report.md" 2>/dev/null || cat "$RUN/summary.md"
fi
if [ "$MODE" != eval ]; then
    mkdir -p "$OUT/appliers"
    cp "$RUN"/appliers/*.json "$OUT/appliers/" 2>/dev/null
    python3 bench/verify_appliers.py merge "$OUT/appliers" > /dev/null && sed -n '1,30p' "$OUT/appliers/appliers.md"
fi
cp "$RUN/status.txt" "$OUT/status.txt" 2>/dev/null
tar czf "$OUT/corpus-logs.tgz" -C "$RUN" logs status.txt jobs.txt
