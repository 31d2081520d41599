"""The sanitizer gate on the device (compute-sanitizer, CUDA 13): a clean candidate passes all three
tools; a shared-memory race whose values the differential check cannot see (the racy read is
multiplied by zero) passes the check and is reported by racecheck; an out-of-bounds read is
reported by memcheck with the tool's own message."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from spec_texts import xy_spec

from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import parse_spec
from regrapht.validate.compiler import Compiler
from regrapht.validate.evaluator import CheckSettings, CudaEvaluator
from regrapht.validate.sanitizer import CudaSanitizer, find_sanitizer
from regrapht.validate.types import Candidate
from regrapht.validate.worker import GpuWorker

pytestmark = pytest.mark.gpu

ORIGINAL = """
__global__ void scale(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}
"""
SPEC = xy_spec("scale", grid="(n + 255) / 256", block=256, n="(1 << 20) + 3")
LAUNCH = LaunchConfig(("(n + 255) / 256",), ("256",))

CLEAN = ORIGINAL.replace("const float *x, float *y", "const float *__restrict__ x, float *__restrict__ y")
# each thread reads the slot a thread of another warp writes, with no barrier between: a race;
# the value read is multiplied by 0.0f (x is finite), so the results are right whatever it reads
RACY = """
__global__ void scale(const float *x, float *y, int n)
{
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.0f;
    float other = tile[(threadIdx.x + 32) % 256];
    if (i < n) y[i] = 2.0f * tile[threadIdx.x] + 1.0f + 0.0f * other;
}
"""
OUT_OF_BOUNDS = ORIGINAL.replace("y[i] = 2.0f * x[i] + 1.0f;", "y[i] = 2.0f * x[i] + 1.0f + 0.0f * x[i + (1L << 33)];")


@pytest.fixture
def sanitizer(gpu_worker: GpuWorker, compiler: Compiler, cache_dir: Path) -> tuple[CudaEvaluator, CudaSanitizer]:
    executable = find_sanitizer(os.environ)
    if executable is None:
        pytest.skip(f"compute-sanitizer not found ({shutil.which('nvcc')})")
    evaluator = CudaEvaluator(ORIGINAL, "scale", parse_spec(SPEC, file="scale.regrapht.toml"), arch=None,
                              worker=gpu_worker, cache_dir=cache_dir, compiler=compiler, file="scale.cu",
                              settings=CheckSettings(check_timeout_s=30.0), env=os.environ)
    return evaluator, CudaSanitizer(evaluator, executable, env=os.environ, gpu_lock=evaluator.gpu_lock)


def test_a_clean_candidate_passes_every_tool(sanitizer: tuple[CudaEvaluator, CudaSanitizer]) -> None:
    evaluator, gate = sanitizer
    assert evaluator.evaluate(Candidate(CLEAN, LAUNCH)).verified
    verdict = gate.sanitize(Candidate(CLEAN, LAUNCH))
    assert verdict.status == "clean" and verdict.tools == ("memcheck", "racecheck", "synccheck"), verdict


def test_a_race_the_check_cannot_see_is_reported_by_racecheck(sanitizer: tuple[CudaEvaluator, CudaSanitizer]) -> None:
    evaluator, gate = sanitizer
    checked = evaluator.evaluate(Candidate(RACY, LAUNCH))
    assert checked.verified, checked  # the differential check passes it: the values are right
    verdict = gate.sanitize(Candidate(RACY, LAUNCH))
    assert verdict.status == "dirty" and verdict.reason.startswith("racecheck: "), verdict
    assert "hazard" in verdict.reason.lower(), verdict


def test_an_out_of_bounds_read_is_reported_by_memcheck(sanitizer: tuple[CudaEvaluator, CudaSanitizer]) -> None:
    _evaluator, gate = sanitizer
    verdict = gate.sanitize(Candidate(OUT_OF_BOUNDS, LAUNCH))
    assert verdict.status == "dirty" and verdict.reason.startswith("memcheck: "), verdict
    assert "Invalid __global__ read" in verdict.reason, verdict
