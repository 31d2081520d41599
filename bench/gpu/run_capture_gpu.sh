#!/usr/bin/env bash
# The capture GPU tier (tests/gpu/test_capture_gpu.py, docs/capture.md) in one device call: builds
# the three programs of tests/data/capture/programs/ with CMake, captures each with
# `regrapht capture --data`, replays every spec against the captured outputs and optimizes one
# kernel per program (`--strategy rules --no-model --budget 10`). Writes $OUT/pytest.log,
# $OUT/junit.xml and $OUT/capture-gpu-summary.json (captures, replays, speedups, commit).
# Env: OUT (required), GPU_IDS (the device to use, default the first), SITE, WHEELS (host_env.sh),
# TIMEOUT (s, 560).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT}
SITE=${SITE:-/tmp/site}
mkdir -p "$OUT"
# shellcheck source=bench/gpu/host_env.sh
. bench/gpu/host_env.sh
host_python_env
[ "$GPUS" -ge 1 ] 2>/dev/null || { echo "no CUDA device"; exit 2; }
CUDA_VISIBLE_DEVICES=${GPU_LIST[0]} REGRAPHT_CAPTURE_RESULTS="$OUT" REGRAPHT_CACHE_DIR="$(mktemp -d /tmp/capture-gpu.XXXXXX)" \
    timeout "${TIMEOUT:-560}" python3 -m pytest -p no:cacheprovider -m gpu -rfEs -q --junitxml "$OUT/junit.xml" \
    tests/gpu/test_capture_gpu.py 2>&1 | tee "$OUT/pytest.log"
exit "${PIPESTATUS[0]}"
