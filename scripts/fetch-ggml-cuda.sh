#!/usr/bin/env bash
# Fetches llama.cpp's ggml-cuda kernels (MIT licence) for the real-world rule corpus: the
# llama-cpp-python source distribution of one pinned version, via pip, unpacked into
# tests/data/realworld/ggml-cuda/ (git-ignored; the labels in tests/data/realworld/labels.tsv
# name lines of this version). Idempotent; needs PyPI (CI and setup time only, never at run time).
#   bash scripts/fetch-ggml-cuda.sh [DEST]
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=0.3.36
DEST=${1:-tests/data/realworld/ggml-cuda}
if [ -f "$DEST/.version" ] && [ "$(cat "$DEST/.version")" = "$VERSION" ]; then
    exit 0
fi
PYTHON=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$PYTHON" -m pip download -q --no-deps --no-binary :all: "llama-cpp-python==$VERSION" -d "$WORK"
ARCHIVE=$(ls "$WORK"/llama_cpp_python-"$VERSION".tar.gz)
INNER="llama_cpp_python-$VERSION/vendor/llama.cpp/ggml/src/ggml-cuda"
tar -xzf "$ARCHIVE" -C "$WORK" "$INNER" "llama_cpp_python-$VERSION/vendor/llama.cpp/LICENSE"
rm -rf "$DEST"
mkdir -p "$(dirname "$DEST")"
mv "$WORK/$INNER" "$DEST"
cp "$WORK/llama_cpp_python-$VERSION/vendor/llama.cpp/LICENSE" "$DEST/LICENSE"
echo "$VERSION" > "$DEST/.version"
echo "ggml-cuda of llama-cpp-python $VERSION in $DEST ($(find "$DEST" -name '*.cu*' | wc -l) files)"
