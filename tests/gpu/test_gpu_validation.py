"""The differential check on a real GPU: every kind of bad candidate is classified right, the
worker survives crashes and hangs, and timing repeats within 3%."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from spec_texts import xy_spec

from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import parse_spec
from regrapht.validate.compiler import Compiler
from regrapht.validate.evaluator import CheckSettings, CudaEvaluator
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

SPEC = xy_spec("scale", grid="(n + 255) / 256", block=256, n="(1 << 22) + 3")

LAUNCH = LaunchConfig(("(n + 255) / 256",), ("256",))


def body(statement: str, prelude: str = "", params: str = "const float *x, float *y, int n") -> str:
    return f"""
{prelude}
__global__ void scale({params})
{{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    {statement}
}}
"""


# A candidate that skips its work on every call after the first (all threads of a previous
# launch have finished): the classic "cache the result across calls" cheat.
STATEFUL = body(
    "unsigned int total = gridDim.x * blockDim.x;\n"
    "    if (finished >= total) return;\n"
    "    if (i < n) y[i] = 2.0f * x[i] + 1.0f;\n"
    "    atomicAdd(&finished, 1u);",
    prelude="__device__ unsigned int finished = 0;",
)

# Right for the first three launches, wrong afterwards: depends on how often / in which order
# it is launched.
ORDER_DEPENDENT = body(
    "unsigned int total = gridDim.x * blockDim.x;\n"
    "    unsigned int launch = launches / total;\n"
    "    if (i < n) y[i] = 2.0f * x[i] + (launch < 3 ? 1.0f : 1.5f);\n"
    "    atomicAdd(&launches, 1u);",
    prelude="__device__ unsigned int launches = 0;",
)

CASES = {
    "wrong_value": (body("if (i < n) y[i] = 2.0f * x[i] + 1.001f;"), "wrong", "y["),
    "unwritten_element": (body("if (i < n && i != 1000) y[i] = 2.0f * x[i] + 1.0f;"), "wrong", "not written"),
    "writes_input": (body("if (i < n) { y[i] = 2.0f * x[i] + 1.0f; ((float *)x)[i] = 0.0f; }"), "wrong",
                     "wrote to input x"),
    "out_of_bounds_guard": (body("if (i <= n + 3) y[i] = 2.0f * x[i < n ? i : 0] + 1.0f;"), "wrong",
                            "wrote outside y"),
    "stateful_cheat": (STATEFUL, "wrong", ""),
    "launch_order": (ORDER_DEPENDENT, "wrong", ""),
    "hang": (body("if (i == 0) { while (((volatile const float *)x)[0] < 10.0f) { } }\n"
                  "    if (i < n) y[i] = 2.0f * x[i] + 1.0f;"),
             "timeout", ""),
    "illegal_address": (body("if (i < n) y[i + (1L << 36)] = 1.0f;"), "crashed", ""),
    "renamed": (ORIGINAL.replace("scale(", "scale2("), "rejected", "renaming"),
    "changed_params": (body("if (i < n) y[i] = 2.0f * x[i] + 1.0f;", params="const float *x, float *y, long n"),
                       "rejected", "parameter 3"),
    "compile_error": (body("y[i] = undefined_name;"), "compile_error", "undefined"),
}


@pytest.fixture(scope="module")
def evaluator(gpu_worker: GpuWorker, compiler: Compiler, cache_dir: Path) -> CudaEvaluator:
    settings = CheckSettings(check_timeout_s=20.0)
    return CudaEvaluator(ORIGINAL, "scale", parse_spec(SPEC, file="scale.regrapht.toml"), arch=None,
                         worker=gpu_worker, cache_dir=cache_dir, compiler=compiler, file="scale.cu",
                         settings=settings, env=os.environ)


def test_device_and_arch(evaluator: CudaEvaluator) -> None:
    assert evaluator.gpu_name
    assert evaluator.arch.startswith("sm_")


def test_correct_candidate_is_verified(evaluator: CudaEvaluator) -> None:
    candidate = Candidate(ORIGINAL, LaunchConfig(("ceil_div(n, 128)",), ("128",)))
    result = evaluator.evaluate(candidate)
    assert result.verified, result
    assert result.timing is not None and result.timing.runs >= 20
    assert result.speedup is not None and result.speedup > 0


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_candidates_are_classified(evaluator: CudaEvaluator, case: str) -> None:
    source, outcome, reason_part = CASES[case]
    result = evaluator.evaluate(Candidate(source, LAUNCH))
    print(f"{case}: {result.outcome}: {result.reason}")
    assert result.outcome == outcome, result
    assert reason_part in result.reason
    # the worker survives and the next candidate is checked normally
    after = evaluator.evaluate(Candidate(ORIGINAL, LAUNCH))
    assert after.verified, after


def test_device_fingerprints_match_their_host_twin(evaluator: CudaEvaluator, compiler: Compiler) -> None:
    # The worker's audit of its cached buffers relies on rg_hash_u8; checked here against the
    # host formula, on sizes with and without a partial last word, in this process's own context.
    import numpy as np

    from regrapht.validate.checker import CHECK_KERNELS, fingerprint
    from regrapht.validate.gpu_worker import Device, fingerprints_of

    compiled = compiler.compile(CHECK_KERNELS, arch=evaluator.arch, file="regrapht_check.cu")
    assert compiled.ok and compiled.cubin is not None
    dev = Device()
    try:
        checker = dev.checker(compiled.cubin)
        rng = np.random.default_rng(7)
        for size in (1, 3, 4, 5, 1023, (1 << 22) + 3):
            data = rng.integers(0, 256, size, dtype=np.uint8)
            changed = data.copy()
            changed[size // 2] ^= 1
            buffers = []
            for array in (data, changed):
                alloc = dev.alloc(size)
                dev.cuda.memcpy_htod(alloc, array)
                buffers.append(alloc)
            found = fingerprints_of(dev, checker, [("data", int(buffers[0]), size), ("changed", int(buffers[1]), size)])
            assert found == {"data": fingerprint(data.tobytes()), "changed": fingerprint(changed.tobytes())}, size
            assert found["data"] != found["changed"]
            for alloc in buffers:
                alloc.free()
    finally:
        dev.close()


def test_timing_repeats_within_3_percent(gpu_worker: GpuWorker, compiler: Compiler, cache_dir: Path) -> None:
    large = SPEC.replace('value = "(1 << 22) + 3"', 'value = "1 << 26"')
    evaluator = CudaEvaluator(ORIGINAL, "scale", parse_spec(large, file="scale.regrapht.toml"), arch=None,
                              worker=gpu_worker, cache_dir=cache_dir, compiler=compiler, file="scale.cu",
                              settings=CheckSettings(seeds=(1,), odd_size=False), env=os.environ)
    first = evaluator.evaluate(Candidate(ORIGINAL, LAUNCH))
    second = evaluator.evaluate(Candidate(ORIGINAL, LAUNCH))
    assert first.timing is not None and second.timing is not None
    ratio = first.timing.median_ms / second.timing.median_ms
    print(f"timing: {first.timing} vs {second.timing}: ratio {ratio:.4f}")
    assert abs(ratio - 1) < 0.03


def test_examples_bench_and_peaks(gpu_worker: GpuWorker, compiler: Compiler, cache_dir: Path) -> None:
    from regrapht.spec.model import load_spec
    from regrapht.validate.bench import bench, slow_kernel_message

    examples = Path(__file__).resolve().parents[2] / "examples"
    for name, kernel in (("saxpy", "saxpy"), ("matmul", "matmul"), ("transpose", "transpose_tiled"),
                         ("histogram", "histogram"), ("reduce_sum", "reduce_sum")):
        source = (examples / f"{name}.cu").read_text()
        ev = CudaEvaluator(source, kernel, load_spec(examples / f"{name}.regrapht.toml"), arch=None,
                           worker=gpu_worker, cache_dir=cache_dir, compiler=compiler, file=f"{name}.cu")
        report = bench(ev)
        print(report.to_json())
        print(slow_kernel_message(report))
        assert report.timing is not None and report.peaks is not None
        assert report.peaks.gbps > 500
        # the original passes its own check
        same = ev.evaluate(Candidate(source, LaunchConfig(tuple(map(str, ev.kernel.grid)),
                                                          tuple(map(str, ev.kernel.block)))))
        assert same.verified, (kernel, same)
