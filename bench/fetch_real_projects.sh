#!/usr/bin/env bash
# The two real CUDA code bases of bench/real_projects.py, with CMake's compile_commands.json:
# llama.cpp's ggml (llama-cpp-python 0.3.36's sdist) and LightGBM 4.6.0's sdist (MIT both), into
# DEST (default /tmp/regrapht-real). Needs PyPI, cmake and nvcc; only configures (no build).
#   bash bench/fetch_real_projects.sh [DEST]
set -euo pipefail
DEST=${1:-/tmp/regrapht-real}
PYTHON=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
mkdir -p "$DEST" && cd "$DEST"
"$PYTHON" -m pip download -q --no-deps --no-binary llama-cpp-python "llama-cpp-python==0.3.36" -d .
"$PYTHON" -m pip download -q --no-deps --no-binary lightgbm "lightgbm==4.6.0" -d .
tar -xzf llama_cpp_python-0.3.36.tar.gz llama_cpp_python-0.3.36/vendor/llama.cpp/ggml
tar -xzf lightgbm-4.6.0.tar.gz
GGML=llama_cpp_python-0.3.36/vendor/llama.cpp/ggml
touch "$GGML/ggml.pc.in"  # the sdist leaves out the pkg-config template CMake configures
# ggml's CUDA target fails to link-configure without cuBLAS (CUDA::cublas); the database is written anyway
# (the sdist has no tests/ or examples/: not configured)
cmake -S "$GGML" -B "$GGML/build" -DGGML_CUDA=ON -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DGGML_NATIVE=OFF -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF >/dev/null || true
# LightGBM asks for CMake 3.28 and configures with 3.25 too
sed -i 's/cmake_minimum_required(VERSION 3.28)/cmake_minimum_required(VERSION 3.25)/' lightgbm-4.6.0/CMakeLists.txt
cmake -S lightgbm-4.6.0 -B lightgbm-4.6.0/build -DUSE_CUDA=ON -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
ls "$DEST/$GGML/build/compile_commands.json" "$DEST/lightgbm-4.6.0/build/compile_commands.json"
