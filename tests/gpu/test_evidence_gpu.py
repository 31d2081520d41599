"""GPU: the evidence-led search (docs/search.md change 19) on a float kernel promoted to double,
the GELU of issue 26 (double literals and `tanh()` on float data). nvcc confirms its f64
instructions (R007/R008), the proof names fast_math, and mcgs without the model reaches the float
version within budget 6, at least as fast as `rules` offers at that budget; the H200 run before
the change spent 12 candidates on vectorizing the double code (1.14x). The fake-timings version
is tests/unit/search/test_evidence_search.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from regrapht.app.optimize import run_optimize
from regrapht.app.resources import GpuResources
from regrapht.search.request import OptimizeOptions, OptimizeRequest
from regrapht.validate.worker import GpuWorker

pytestmark = pytest.mark.gpu

GELU = """// GELU (tanh form) of float data, written with double literals and tanh(): the arithmetic is f64.
__global__ void gelu_double(const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = 0.5 * v * (1.0 + tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
    }
}
"""
SPEC = """[[kernel]]
name = "gelu_double"
grid = ["(n + 255) / 256"]
block = [256]
rtol = 1e-4
atol = 1e-5

[[kernel.arg]]
name = "x"
type = "const float*"
count = "n"
init = "normal(0, 2)"

[[kernel.arg]]
name = "y"
type = "float*"
count = "n"
role = "out"

[[kernel.arg]]
name = "n"
type = "int"
value = "1 << 24"
"""


def optimize(tmp_path: Path, strategy: str, budget: int, seed: int = 0) -> tuple[float, tuple[str, ...], str]:
    source = tmp_path / "gelu_double.cu"
    source.write_text(GELU)
    (tmp_path / "gelu_double.regrapht.toml").write_text(SPEC)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    with GpuResources(env, tmp_path) as resources:
        request = OptimizeRequest("gelu_double", GELU, file=source, strategy=strategy, budget=budget, seed=seed,
                                  options=OptimizeOptions(use_model=False, model_memory=False))
        outcome = run_optimize(request, resources)
    result = outcome.result
    assert result is not None and result.best is not None, outcome.message
    return result.best.speedup, result.best.techniques, result.best.source


@pytest.mark.parametrize("seed", [0, 1])
def test_mcgs_reaches_the_float_gelu_within_budget_6(gpu_worker: GpuWorker, tmp_path: Path, seed: int) -> None:
    speedup, techniques, source = optimize(tmp_path, "mcgs", 6, seed)
    assert "fast_math" in techniques, (techniques, speedup)
    assert "tanh(" not in source.split("__global__", 1)[1]
    (tmp_path / "rules").mkdir()
    rules, _, _ = optimize(tmp_path / "rules", "rules", 6)
    # the float version is the bulk of the gain (2.4x on an H200); rules' answer at 6 is no better
    assert speedup >= 0.99 * rules, (speedup, rules)
    assert speedup > 1.5, speedup
