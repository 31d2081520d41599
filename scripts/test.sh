#!/usr/bin/env bash
# Runs every test: lint + types, Python unit and end-to-end tests over both cores (real nvcc, real
# SmolLM2 GGUF, real LSP clients over stdio, headless Neovim), the extension's unit tests, the .vsix
# build, and the real-VS-Code smoke test. GPU tests run only where a CUDA device and pycuda exist.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh --no-demo
# shellcheck disable=SC1091
. .venv/bin/activate

# System tools the end-to-end tests drive (Neovim as a second LSP client). Needs root + apt.
if ! command -v nvim >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim >/dev/null
fi

echo "== ruff"
ruff check server tests bench
echo "== mypy"
mypy

echo "== real-world rule corpus (ggml-cuda, via pip download; its test skips if this fails)"
bash scripts/fetch-ggml-cuda.sh || echo "ggml-cuda not fetched: tests/unit/rules/test_realworld.py skips it"
echo "== the labelled trust set (issue 27: ggml-cuda, DeepSpeed, LightGBM, Theano, Warp; its tests skip if this fails)"
bash scripts/fetch-labelled-corpus.sh || echo "trust set not fetched: tests/unit/rules/test_trust_set.py skips its corpus tests"

# Two workers (the CI VM has 2 cores; PYTEST_WORKERS overrides it). --dist loadgroup keeps the
# modules marked xdist_group (an expensive module-scoped fixture) on one worker; --durations lists the
# 30 slowest tests, so a CI log says where its time went. The gpu tier runs
# after, in one process: its timing tests must not share the device with another test.
workers=${PYTEST_WORKERS:-2}
echo "== pytest ($workers workers), then the gpu tier (skips without a CUDA device)"
python -m pytest -q -ra -n "$workers" --dist loadgroup -m "not gpu" --durations=30
python -m pytest -q -ra -m gpu tests/gpu

echo "== extension: unit tests, package"
npm test
npm run --silent package

echo "== extension: real VS Code (code-server + headless Chromium)"
# the .vsix just packaged (vscode-e2e.sh would package it again)
REGRAPHT_VSIX="$PWD/client-vscode/dist/regrapht.vsix" bash scripts/vscode-e2e.sh
