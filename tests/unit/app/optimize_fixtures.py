"""A saxpy file, its optimized kernel and a BestVersion for the optimize-run tests."""

from __future__ import annotations

from pathlib import Path

from regrapht.search.ledger import StepRecord
from regrapht.search.pipeline import BestVersion
from regrapht.spec.launch import LaunchConfig

# The e2e tests optimize the same file.
SOURCE = (Path(__file__).resolve().parents[2] / "data" / "optimize" / "saxpy.cu").read_text()
NEW_KERNEL = """__global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"""
BEFORE = LaunchConfig(("(n + 255) / 256",), ("256",), "0")
KERNEL_TEXT = SOURCE[SOURCE.index("__global__") : SOURCE.index("}\n") + 1]


def best_version(source: str, launch: LaunchConfig, speedup: float = 3.1) -> BestVersion:
    steps = (StepRecord("restrict", "", 1.4), StepRecord("block_size", "", speedup))
    return BestVersion(0.1, speedup, ("restrict", "block_size"), launch, source, steps)


def optimized_source(source: str = SOURCE) -> str:
    start = source.index("__global__")
    end = source.index("}\n", start) + 1
    return source[:start] + NEW_KERNEL + source[end:]
