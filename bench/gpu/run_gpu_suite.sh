#!/usr/bin/env bash
# Runs the validation GPU suite, the example benches and the throughput benchmark on the GPU host.
# Usage (from the repository root, on the H200 host; the host's cp312 wheels of pycuda, pytools,
# platformdirs, siphash24, typing_extensions, mako and tree_sitter copied into .gpu/validate-wheels first):
#   bash bench/gpu/run_gpu_suite.sh            # logs to $OUT (or ./gpu-logs)
set -uo pipefail
OUT="${OUT:-$PWD/gpu-logs}"
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --target /tmp/site ${WHEELS:-.gpu/validate-wheels}/*.whl 2>&1 | tail -3
export PYTHONPATH=/tmp/site:$PWD/server:${PYTHONPATH:-}
export PYTHONUNBUFFERED=1 REGRAPHT_CACHE_DIR=/tmp/regrapht-cache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1
timeout 300 python3 -m pytest -p no:cacheprovider -m gpu tests/gpu -v -s -rs 2>&1 | tee "$OUT/gpu_suite.log"
suite=${PIPESTATUS[0]}
for k in saxpy:saxpy matmul:matmul transpose:transpose transpose:transpose_tiled histogram:histogram reduce_sum:reduce_sum; do
  f=${k%%:*}; n=${k##*:}
  python3 -c "import sys; from regrapht.commands import bench; import argparse; p = argparse.ArgumentParser(); s = p.add_subparsers(); bench.register(s); a = p.parse_args(sys.argv[1:]); sys.exit(a.handler(a))" bench examples/$f.cu --kernel $n --json 2>&1
done | tee "$OUT/bench_examples.log"
timeout 150 python3 bench/validation_throughput.py --out "$OUT" --cache-dir /tmp/regrapht-throughput 2>&1 | tee "$OUT/throughput.log"
throughput=${PIPESTATUS[0]}
echo "gpu suite exit: $suite; throughput exit: $throughput"
[ "$suite" -eq 0 ] && [ "$throughput" -eq 0 ]; exit $?
