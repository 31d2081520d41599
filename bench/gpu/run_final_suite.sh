#!/usr/bin/env bash
# The whole optimize evaluation on a GPU host in one go: every strategy on every bench task
# (`regrapht eval`, one task per process) and on every example kernel (`regrapht optimize`),
# run in parallel. GPU work stays serialised by the GPU lock (shared cache dir); model
# generation and nvcc use the host's cores. Each strategy keeps its own graph overlay so the
# strategies do not learn from each other. Results: one tarball, $OUT/final.tgz.
# SUITE_TIMEOUT (s) stops starting and waiting for jobs, then merges what finished.
# Needs: wheels installed at $SITE (default /tmp/site), the GGUF at $REGRAPHT_MODEL.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT}
SITE=${SITE:-/tmp/site}
TASK_BUDGET=${TASK_BUDGET:-12}
EXAMPLE_BUDGET=${EXAMPLE_BUDGET:-8}
JOBS=${JOBS:-4}                    # 4 jobs x 4 model threads fill a 16-core host
JOB_TIMEOUT=${JOB_TIMEOUT:-300}
STRATEGIES=${STRATEGIES:-"rules mcgs greedy random cot"}
TASKS=${TASKS:-1}                  # 0: example kernels only
EXAMPLES=${EXAMPLES:-1}            # 0: bench tasks only
MODEL_THREADS=${MODEL_THREADS:-4}  # per job
RUN=${RUN_DIR:-/tmp/final}
export PYTHONPATH="$PWD/server:$SITE${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export XDG_CACHE_HOME=/tmp/final-cache  # one GPU lock and one compile cache for all jobs
mkdir -p "$RUN/runs" "$RUN/logs"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$RUN/gpu.txt" 2>&1

jobs_file="$RUN/jobs.txt"
: > "$jobs_file"
# Task-major order: a run cut short by SUITE_TIMEOUT loses whole tasks, so the strategies it
# did finish are still compared on the same tasks.
for task in bench/tasks/*/; do  # tasks first: they carry the product's bar
    [ "$TASKS" = 1 ] || break
    for strategy in $STRATEGIES; do
        echo "eval $strategy $task" >> "$jobs_file"
    done
done
for spec in examples/*.regrapht.toml; do
    [ "$EXAMPLES" = 1 ] || break
    for kernel in $(python3 -c 'import sys, tomllib; print(" ".join(k["name"] for k in tomllib.load(open(sys.argv[1], "rb"))["kernel"]))' "$spec"); do
        for strategy in $STRATEGIES; do
            echo "optimize $strategy ${spec%.regrapht.toml}.cu $kernel" >> "$jobs_file"
        done
    done
done

run_job() {  # kind strategy target [kernel]
    local kind=$1 strategy=$2 target=$3 kernel=${4:-}
    local name model=()
    [ "$strategy" != rules ] && model=(--model "$REGRAPHT_MODEL" --model-threads "$MODEL_THREADS")
    if [ "$kind" = eval ]; then
        name="eval-$strategy-$(basename "$target")"
        XDG_DATA_HOME="$RUN/data-$strategy" timeout "$JOB_TIMEOUT" python3 -m regrapht eval "$target" \
            --strategy "$strategy" --budget "$TASK_BUDGET" --out "$RUN/runs/$name" "${model[@]}" \
            > "$RUN/logs/$name.log" 2>&1
    else
        name="optimize-$strategy-$(basename "${target%.cu}")-$kernel"
        XDG_DATA_HOME="$RUN/data-$strategy" timeout "$JOB_TIMEOUT" python3 -m regrapht optimize "$target" \
            --kernel "$kernel" --strategy "$strategy" --budget "$EXAMPLE_BUDGET" --json "${model[@]}" \
            > "$RUN/runs/$name.json" 2> "$RUN/logs/$name.log"
    fi
    echo "$name exit=$?" >> "$RUN/status.txt"
}
export -f run_job
export RUN TASK_BUDGET EXAMPLE_BUDGET JOB_TIMEOUT REGRAPHT_MODEL MODEL_THREADS
start=$(date +%s)
timeout "${SUITE_TIMEOUT:-100000}" xargs -P "$JOBS" -L 1 bash -c 'run_job "$@"' _ < "$jobs_file"
echo "wall $(( $(date +%s) - start )) s for $(wc -l < "$jobs_file") jobs" | tee -a "$RUN/status.txt"
python3 bench/merge_eval.py "$RUN/runs" "$RUN/merged" > "$RUN/summary.md" 2>&1
cat "$RUN/summary.md"
tar czf "$OUT/final.tgz" -C "$RUN" .
