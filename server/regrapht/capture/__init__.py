"""Capturing real kernel launches of a program and turning them into benchmark specs (docs/capture.md).

`build` compiles the CUPTI injection library (data/capture/regrapht_capture.cpp) with the local
C++ compiler and caches it; `run` starts the user's program with it loaded through
CUDA_INJECTION64_PATH; `manifest` reads what it wrote; `specs` writes one spec per kernel and
launch shape, with the captured buffers as `file(...)` inputs; `index` finds the captures of a
kernel for the CLI and the editor.
"""
