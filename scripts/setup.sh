#!/usr/bin/env bash
# Installs everything ReGraphT needs into ./.venv (server, model, dev tools) and builds the VS Code
# extension, then runs the product's main job on a bundled example.
#   bash scripts/setup.sh             install + analyze and optimize examples/saxpy.cu
#   bash scripts/setup.sh --no-demo   install only (used by scripts/test.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

demo=1
[ "${1:-}" = "--no-demo" ] && demo=0

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
python -m pip install -q --upgrade pip

# llama-cpp-python compiles llama.cpp from source (about 15 minutes on 2 cores; pip caches the
# wheel). Prebuilt wheels beside the checkout (the project's shared/wheels) are used when present.
find_links=()
for dir in shared/wheels/gpu-cp312 ../shared/wheels/gpu-cp312; do
    [ -d "$dir" ] && find_links+=(--find-links "$dir")
done
extras="dev"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    extras="dev,gpu"  # pycuda, for differential checks and timing on a local GPU
fi
python -m pip install -q "${find_links[@]}" -e ".[$extras]"

# The VS Code extension (TypeScript, bundled with esbuild, packaged as a .vsix).
if command -v npm >/dev/null 2>&1; then
    npm ci --no-audit --no-fund --loglevel=error
    npm run --silent build
fi

if [ "$demo" = 1 ]; then
    echo "== regrapht analyze examples/saxpy.cu"
    regrapht analyze examples/saxpy.cu
    echo "== regrapht optimize examples/saxpy.cu --kernel saxpy (verified on the GPU when one is present)"
    status=0
    regrapht optimize examples/saxpy.cu --kernel saxpy --budget 12 || status=$?
    # Exit 1 means the search ran but found nothing verified faster (e.g. no CUDA device here).
    [ "$status" -le 1 ] || exit "$status"
fi
