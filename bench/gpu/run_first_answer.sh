#!/usr/bin/env bash
# Time to the first verified faster suggestion over the whole corpus (both splits), on a GPU
# host: one process per GPU (kernels split round-robin), each running the kernels one after the
# other so that no other search shares its GPU (what one user's request sees). Each kernel stops
# at its first verified faster candidate, when its whole search ends without one (outcome "none":
# that kernel gets no suggestion at all), or after LIMIT s ("limit"). Output: $OUT/first-answer.md
# (p50/p95 over the kernels that get a suggestion at all, a kernel cut at the limit counted as
# slowest; kernels with none counted apart; a row per kernel) and $OUT/first-answer-gpu*.jsonl.
# Expected time on 2x H200: ~40 kernels with a suggestion x ~2-10 s, ~10 without one x ~10-30 s
# (budget 24, the model bounded by its 20 s per-search time budget) / 2 GPUs: ~3-5 min.
# Env: OUT (required), LIMIT (60), BUDGET (24), MODEL_THREADS (8), SUITE_TIMEOUT (480), SITE, WHEELS,
# TASKS (task directories instead of both splits), GPU_IDS (the CUDA device numbers to use, e.g. "1"
# while another job holds device 0; default every device).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT}
LIMIT=${LIMIT:-60}
BUDGET=${BUDGET:-24}
MODEL_THREADS=${MODEL_THREADS:-8}
SUITE_TIMEOUT=${SUITE_TIMEOUT:-480}
SITE=${SITE:-/tmp/site}
mkdir -p "$OUT"
# shellcheck source=bench/gpu/host_env.sh
. bench/gpu/host_env.sh
host_python_env
[ "$GPUS" -ge 1 ] 2>/dev/null || GPUS=1
read -r -a gpu_ids <<< "${GPU_IDS:-$(seq -s " " 0 $(( GPUS - 1 )))}"
GPUS=${#gpu_ids[@]}
# shellcheck disable=SC2086
mapfile -t tasks < <(ls -d ${TASKS:-bench/corpus/test/*/ bench/corpus/train/*/})
start=$(date +%s)
for (( gpu = 0; gpu < GPUS; gpu++ )); do
    mine=()
    for (( i = gpu; i < ${#tasks[@]}; i += GPUS )); do mine+=("${tasks[$i]%/}"); done
    rm -f "$OUT/first-answer-gpu$gpu.jsonl"
    CUDA_VISIBLE_DEVICES=${gpu_ids[$gpu]} XDG_CACHE_HOME=/tmp/first-answer-cache-gpu$gpu XDG_DATA_HOME=/tmp/first-answer-data \
        timeout "$SUITE_TIMEOUT" python3 bench/first_answer.py run "${mine[@]}" --out "$OUT/first-answer-gpu$gpu.jsonl" \
        --limit "$LIMIT" --budget "$BUDGET" --model-threads "$MODEL_THREADS" > "$OUT/first-answer-gpu$gpu.log" 2>&1 &
done
wait
echo "wall $(( $(date +%s) - start )) s on $GPUS GPU(s)"
python3 bench/first_answer.py summary "$OUT"/first-answer-gpu*.jsonl --md "$OUT/first-answer.md"
