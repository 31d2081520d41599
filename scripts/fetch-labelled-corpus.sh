#!/usr/bin/env bash
# Fetches the third-party code of the labelled trust set (issue 27; tests/data/realworld/trust/):
# ggml-cuda (llama-cpp-python 0.3.36, via scripts/fetch-ggml-cuda.sh, MIT), DeepSpeed 0.19.8's
# CUDA sources (Apache-2.0), LightGBM 4.7.0's CUDA learner (MIT), Theano 0.9.0's old CUDA
# back end (BSD-3-Clause; host-heavy code) and NVIDIA Warp 0.8.0's native CUDA files (NVIDIA
# Source Code License): fetched, never committed. Source distributions from PyPI by pinned version and
# checked sha256, unpacked under tests/data/realworld/ (git-ignored). Idempotent; needs PyPI
# (CI and set-up only, never at run time). tests/data/realworld/trust/manifest.tsv holds every
# file's sha256: the labels name lines of exactly those files.
#   bash scripts/fetch-labelled-corpus.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=tests/data/realworld
bash scripts/fetch-ggml-cuda.sh "$ROOT/ggml-cuda"
PYTHON=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}

# name version sha256 dest (then the archive paths to keep, relative to the unpacked top folder)
fetch() {
    local name=$1 version=$2 sha=$3 dest=$4
    shift 4
    if [ -f "$dest/.version" ] && [ "$(cat "$dest/.version")" = "$version" ]; then
        return 0
    fi
    local work
    work=$(mktemp -d)
    if [ "$name" = lightgbm ]; then
        # pip prepares the sdist's metadata, and LightGBM's scikit-build-core backend needs CMake
        # for that: a throw-away environment with both, without build isolation.
        "$PYTHON" -m venv "$work/env"
        "$work/env/bin/pip" install -q scikit-build-core cmake
        PATH="$work/env/bin:$PATH" "$work/env/bin/pip" download -q --no-build-isolation --no-deps \
            --no-binary :all: "$name==$version" -d "$work"
    else
        "$PYTHON" -m pip download -q --no-deps --no-binary :all: "$name==$version" -d "$work"
    fi
    local archive
    archive=$(ls "$work"/*-"$version".tar.gz)
    echo "$sha  $archive" | sha256sum -c --quiet
    local top
    top=$(basename "$archive" .tar.gz)
    tar -xzf "$archive" -C "$work"
    rm -rf "$dest"
    mkdir -p "$dest"
    for keep in "$@"; do
        (cd "$work/$top" && find "$keep" \( -name '*.cu' -o -name '*.cuh' \) -type f -print0 |
            xargs -0 -I{} cp --parents {} "$OLDPWD/$dest/")
    done
    cp "$work/$top"/LICENSE* "$dest/"
    echo "$version" > "$dest/.version"
    rm -rf "$work"
    echo "$name $version in $dest ($(find "$dest" -name '*.cu*' | wc -l) files)"
}

fetch deepspeed 0.19.8 9e491abd0827ea5c389dd702e15e11e13d83d904bac4a20d6c2a4cb37207a9af \
    "$ROOT/deepspeed" csrc deepspeed/inference/v2/kernels deepspeed/inference/v2/ragged/csrc
fetch lightgbm 4.7.0 f8e20f682c9aabd000bcf4a7ed8aa6f473c1adfecccae34ec24e823d156f4af0 \
    "$ROOT/lightgbm" src
fetch Theano 0.9.0 745d66716531f9063127274b40503fbc21f931f78b7b03e79e5523d50078bc17 \
    "$ROOT/theano" theano/sandbox/cuda
fetch warp-lang 0.8.0 713d2cc552cde1a6e739112c02cc11327d99715fa3d97fa9c2b382ff8be239aa \
    "$ROOT/warp" warp/native
