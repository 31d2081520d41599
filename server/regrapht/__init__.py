"""ReGraphT: a language server that makes CUDA kernels faster, verified on the GPU."""

__version__ = "0.1.0"
