#!/usr/bin/env bash
# Runs `regrapht optimize` on the bundled examples and bench/tasks with every strategy on the GPU
# host, writing one JSON log per (kernel, strategy) and an `eval` report per strategy to $OUT.
# Usage (from the repository root, on the GPU host):
#   REGRAPHT_MODEL=/path/SmolLM2-135M-Instruct.Q4_1.gguf OUT=/tmp/out bash bench/gpu/run_optimize_suite.sh
# Optional: BUDGET (default 24), SEED (0), STRATEGIES ("rules mcgs greedy random cot"),
# PYTHON (python3), SITE (/tmp/site, the project's wheels), MODEL_THREADS (16).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT to the output directory}
BUDGET=${BUDGET:-24}
SEED=${SEED:-0}
STRATEGIES=${STRATEGIES:-"rules mcgs greedy random cot"}
PYTHON=${PYTHON:-python3}
SITE=${SITE:-/tmp/site}
MODEL_THREADS=${MODEL_THREADS:-16}
export PYTHONPATH="$PWD/server:$SITE${PYTHONPATH:+:$PYTHONPATH}"
# Keep the user-local graph statistics and the compile cache inside $OUT for this run.
export XDG_DATA_HOME="$OUT/data" XDG_CACHE_HOME="$OUT/cache"
mkdir -p "$OUT/logs"
MODEL_ARGS=()
[ -n "${REGRAPHT_MODEL:-}" ] && MODEL_ARGS=(--model "$REGRAPHT_MODEL" --model-threads "$MODEL_THREADS")

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/gpu.txt" 2>&1

optimize_one() {  # file kernel spec strategy
    local file=$1 kernel=$2 spec=$3 strategy=$4 log="$OUT/logs/$(basename "${file%.cu}")-$2-$4"
    local extra=()
    [ "$strategy" != rules ] && extra=("${MODEL_ARGS[@]}")
    "$PYTHON" -m regrapht optimize "$file" --kernel "$kernel" --spec "$spec" --strategy "$strategy" \
        --budget "$BUDGET" --seed "$SEED" --json --progress "${extra[@]}" > "$log.json" 2> "$log.stderr"
    echo "$strategy $file $kernel exit=$? $(grep -o '"speedup": [0-9.]*' "$log.json" | head -1)" | tee -a "$OUT/summary.txt"
}

for strategy in $STRATEGIES; do
    for spec in examples/*.regrapht.toml bench/tasks/*/*.regrapht.toml; do
        file="${spec%.regrapht.toml}.cu"
        kernels=$("$PYTHON" -c 'import sys, tomllib; print(" ".join(k["name"] for k in tomllib.load(open(sys.argv[1], "rb"))["kernel"]))' "$spec")
        for kernel in $kernels; do
            optimize_one "$file" "$kernel" "$spec" "$strategy"
        done
    done
    extra=()
    [ "$strategy" != rules ] && extra=("${MODEL_ARGS[@]}")
    "$PYTHON" -m regrapht eval bench/tasks/*/ --strategy "$strategy" --budget "$BUDGET" --seed "$SEED" \
        --out "$OUT/eval-$strategy" "${extra[@]}" > "$OUT/eval-$strategy.log" 2>&1
    echo "eval $strategy exit=$?" | tee -a "$OUT/summary.txt"
done
