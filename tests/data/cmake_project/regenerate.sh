#!/bin/sh
# Regenerate build/compile_commands.json with the real CMake (needs nvcc), then make its paths
# relative to build/ (and copy the response files it names) so that the checked-in database works wherever the repository is.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake -S "$here" -B "$tmp" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
mkdir -p "$here/build"
rewrite() { sed -e "s#$tmp#.#g" -e "s#$here/#../#g" "$1"; }
rewrite "$tmp/compile_commands.json" > "$here/build/compile_commands.json"
# CMake puts the include dirs in a response file the database names (--options-file)
for rsp in $(cd "$tmp" && find CMakeFiles -name '*.rsp'); do
    mkdir -p "$here/build/$(dirname "$rsp")"
    rewrite "$tmp/$rsp" > "$here/build/$rsp"
done
