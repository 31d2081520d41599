#!/usr/bin/env bash
# The language server's GPU paths on the GPU host, end to end over stdio, under 4 minutes:
#   1. tests/gpu/test_lsp_client.py + test_lsp_gpu.py (plain pytest; no pytest-lsp there):
#      background validation (V001 + card) and optimizeKernel (confirmed applyEdit, CLI check);
#   2. bench/lsp_during_search.py: hover latency while an Optimize search runs (rules, then
#      mcgs with $REGRAPHT_MODEL when it is set).
# Usage (from the repository root, on the GPU host):
#   REGRAPHT_MODEL=/path/model.gguf OUT=/tmp/out bash bench/gpu/run_lsp_gpu.sh
# Optional: PYTHON (python3), SITE (/tmp/site, the project's wheels), BUDGET (8), MODEL_THREADS (16).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT to the output directory}
PYTHON=${PYTHON:-python3}
SITE=${SITE:-/tmp/site}
BUDGET=${BUDGET:-8}
MODEL_THREADS=${MODEL_THREADS:-16}
export PYTHONPATH="$SITE:$PWD/server${PYTHONPATH:+:$PYTHONPATH}"
# Keep the user-local graph statistics and the compile cache inside $OUT for this run.
export XDG_DATA_HOME="$OUT/data" XDG_CACHE_HOME="$OUT/cache"
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$OUT/gpu.txt" 2>&1
"$PYTHON" -c 'import pygls, lsprotocol, cattrs, pycuda; print("pygls", pygls.__file__)' > "$OUT/imports.txt" 2>&1

# Plain pytest (the ini's pytest-asyncio options only warn there). The server logs of each test land in $OUT/pytest-tmp (--basetemp keeps them).
timeout 160 "$PYTHON" -m pytest -v -rs -p no:cacheprovider --basetemp="$OUT/pytest-tmp" \
    tests/gpu/test_lsp_client.py tests/gpu/test_lsp_gpu.py > "$OUT/lsp-gpu-tests.log" 2>&1
echo "lsp gpu tests exit=$?" | tee -a "$OUT/summary.txt"

timeout 25 "$PYTHON" bench/lsp_during_search.py --strategy rules --budget "$BUDGET" --time-limit 10 \
    --out "$OUT/lsp-during-search-rules.json" --server-log "$OUT/lsp-during-search-rules.server.log" \
    > "$OUT/lsp-during-search-rules.txt" 2>&1
echo "lsp during search (rules) exit=$?" | tee -a "$OUT/summary.txt"

if [ -n "${REGRAPHT_MODEL:-}" ]; then
    timeout 45 "$PYTHON" bench/lsp_during_search.py --strategy mcgs --budget "$BUDGET" --time-limit 25 \
        --model "$REGRAPHT_MODEL" --model-threads "$MODEL_THREADS" \
        --out "$OUT/lsp-during-search-mcgs.json" --server-log "$OUT/lsp-during-search-mcgs.server.log" \
        > "$OUT/lsp-during-search-mcgs.txt" 2>&1
    echo "lsp during search (mcgs) exit=$?" | tee -a "$OUT/summary.txt"
fi
cat "$OUT"/lsp-during-search-*.txt
tail -15 "$OUT/lsp-gpu-tests.log"
