#!/usr/bin/env bash
# The whole optimize evaluation on a GPU host in one go: every strategy on every bench task
# (`regrapht eval`, one task per process) and on every example kernel (`regrapht optimize`),
# run in parallel as Ray jobs (bench/ray_jobs.py) over the host's GPUs. GPU work stays serialised per GPU by its GPU lock
# (one cache dir per GPU); model generation and nvcc use the host's cores. Each strategy keeps its own graph overlay so the
# strategies do not learn from each other. Results: one tarball, $OUT/final.tgz.
# SUITE_TIMEOUT (s) stops starting and waiting for jobs, then merges what finished.
# Needs: wheels installed at $SITE (default /tmp/site), the GGUF at $REGRAPHT_MODEL.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT}
SITE=${SITE:-/tmp/site}
TASK_BUDGET=${TASK_BUDGET:-12}
EXAMPLE_BUDGET=${EXAMPLE_BUDGET:-8}
JOBS=${JOBS:-}                     # default 4 per GPU: 4 jobs x 4 model threads fill 16 cores
JOB_TIMEOUT=${JOB_TIMEOUT:-300}
STRATEGIES=${STRATEGIES:-"rules mcgs greedy random cot"}
TASKS=${TASKS:-1}                  # 0: example kernels only
EXAMPLES=${EXAMPLES:-1}            # 0: bench tasks only
MODEL_THREADS=${MODEL_THREADS:-4}  # per job
RUN=${RUN_DIR:-/tmp/final}
export PYTHONPATH="$PWD/server:$SITE${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
mkdir -p "$RUN/runs" "$RUN/logs"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$RUN/gpu.txt" 2>&1
# Jobs are spread over the host's GPUs round-robin; each GPU has its own cache dir, so its own
# GPU lock: the jobs of one GPU never time kernels at the same moment.
GPUS=${GPUS:-$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)}
[ "$GPUS" -ge 1 ] 2>/dev/null || GPUS=1

jobs_file="$RUN/jobs.txt"
: > "$jobs_file.plain"
# Task-major order: a run cut short by SUITE_TIMEOUT loses whole tasks, so the strategies it
# did finish are still compared on the same tasks.
for task in bench/tasks/*/; do  # tasks first: they carry the product's bar
    [ "$TASKS" = 1 ] || break
    for strategy in $STRATEGIES; do
        echo "eval $strategy $task" >> "$jobs_file.plain"
    done
done
for spec in examples/*.regrapht.toml; do
    [ "$EXAMPLES" = 1 ] || break
    for kernel in $(python3 -c 'import sys, tomllib; print(" ".join(k["name"] for k in tomllib.load(open(sys.argv[1], "rb"))["kernel"]))' "$spec"); do
        for strategy in $STRATEGIES; do
            echo "optimize $strategy ${spec%.regrapht.toml}.cu $kernel" >> "$jobs_file.plain"
        done
    done
done
JOBS=${JOBS:-$(( 4 * GPUS ))}
# one bench/ray_jobs.py line per job (NAME LOG COMMAND...): Ray gives each job a GPU share and
# that GPU's cache dir (so its GPU lock); each strategy keeps its own graph overlay (XDG_DATA_HOME)
while read -r kind strategy target kernel; do
    model=""
    [ "$strategy" != rules ] && model="--model $REGRAPHT_MODEL --model-threads $MODEL_THREADS"
    if [ "$kind" = eval ]; then
        name="eval-$strategy-$(basename "$target")"
        echo "$name $RUN/logs/$name.log env XDG_DATA_HOME=$RUN/data-$strategy python3 -m regrapht --log-level INFO" \
            "eval $target --strategy $strategy --budget $TASK_BUDGET --out $RUN/runs/$name $model"
    else
        name="optimize-$strategy-$(basename "${target%.cu}")-$kernel"
        echo "$name $RUN/logs/$name.log sh -c 'XDG_DATA_HOME=$RUN/data-$strategy python3 -m regrapht --log-level INFO" \
            "optimize $target --kernel $kernel --strategy $strategy --budget $EXAMPLE_BUDGET --json $model" \
            "> $RUN/runs/$name.json'"
    fi
done < "$jobs_file.plain" > "$jobs_file"
# shellcheck source=bench/gpu/host_env.sh
. bench/gpu/host_env.sh
XDG_CACHE_HOME=/tmp/final-cache RAY_LOG="$RUN/ray-start.log" ray_head_start || exit 2
start=$(date +%s)
timeout "${SUITE_TIMEOUT:-100000}" python3 bench/ray_jobs.py "$jobs_file" --store "$RUN/store" \
    --status "$RUN/status.txt" --ray "$RAY_ADDRESS" --gpus-per-job "$(python3 -c "print(min(1.0, $GPUS / $JOBS))")" \
    --job-timeout "$JOB_TIMEOUT" 2> "$RUN/logs/ray-driver.log"
ray_head_stop  # also stops jobs still running when SUITE_TIMEOUT hit
echo "wall $(( $(date +%s) - start )) s for $(wc -l < "$jobs_file") jobs" | tee -a "$RUN/status.txt"
python3 bench/merge_eval.py "$RUN/runs" "$RUN/merged" > "$RUN/summary.md" 2>&1
cat "$RUN/summary.md"
tar czf "$OUT/final.tgz" -C "$RUN" .
