"""The capture GPU tier (docs/capture.md): three multi-kernel programs of our own
(tests/data/capture/programs/, built with CMake) run under `regrapht capture --data` on the real
driver and CUPTI; every kernel they launch gets a spec; each spec is replayed on the GPU and checked
against the captured outputs (a spec whose captured output is changed is refused); and per program
`regrapht optimize --capture` finds a verified faster version of one of its kernels.

Set REGRAPHT_CAPTURE_RESULTS to a folder (e.g. bench/results/<date>-capture-gpu/) to keep a JSON
summary of the run there (captures, replays, speedups, machine, commit).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from regrapht.capture.manifest import Capture, load_capture, read_recorded
from regrapht.errors import InputError
from regrapht.spec.model import load_spec
from regrapht.spec.resolve import spec_launch
from regrapht.validate.opening import open_evaluator, read_source
from regrapht.validate.types import Candidate
from regrapht.validate.worker import GpuWorker

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "tests" / "data" / "capture" / "programs"
# program -> (arguments, the kernels it launches as specs name them, kernels to optimize in order)
CASES: dict[str, tuple[list[str], set[str], list[str]]] = {
    "image_pipeline": ([], {"to_gray", "blur3x3", "levels", "transpose_image", "threshold"},
                       ["transpose_image", "blur3x3", "to_gray"]),
    "iterative_solver": ([], {"jacobi_step", "relax", "residual", "reduce_sum"},
                         ["reduce_sum", "jacobi_step", "relax"]),
    "templated_reduction": ([], {"chunk_sum<float, 64>", "chunk_sum<int, 32>", "chunk_sum<double, 16>",
                                 "tree_sum<float, 256>"},
                            ["chunk_sum<float, 64>", "tree_sum<float, 256>", "chunk_sum<int, 32>"]),
}
SUMMARY: dict[str, Any] = {"programs": {}}


def _run(command: list[str], cwd: Path, timeout: float = 600, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False,
                          env=env or dict(os.environ))


@pytest.fixture(scope="module")
def device(gpu_worker: GpuWorker) -> GpuWorker:
    if shutil.which("g++") is None:
        pytest.skip("g++ is needed to build the capture library")
    return gpu_worker


@pytest.fixture(scope="module")
def built(device: GpuWorker, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The three programs, built with CMake (with nvcc directly where CMake is missing)."""
    build = tmp_path_factory.mktemp("capture-programs")
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not on PATH")
    cmake = shutil.which("cmake")
    if cmake is not None:
        configured = _run([cmake, "-S", str(PROGRAMS), "-B", str(build), f"-DCMAKE_CUDA_COMPILER={nvcc}",
                           "-DCMAKE_CUDA_ARCHITECTURES=90", "-DCMAKE_BUILD_TYPE=Release"], build)
        assert configured.returncode == 0, configured.stdout + configured.stderr
        made = _run([cmake, "--build", str(build), "-j", "8"], build)
        assert made.returncode == 0, made.stdout + made.stderr
        SUMMARY["build"] = "cmake"
        return build
    for name in CASES:  # the same compile CMake makes: one .cu per program, sm_90, the static runtime
        (build / name).mkdir()
        made = _run([nvcc, "-O3", "-arch=sm_90", str(PROGRAMS / name / f"{name}.cu"), "-o", str(build / name / name)],
                    build)
        assert made.returncode == 0, made.stderr
    SUMMARY["build"] = "nvcc (cmake not found)"
    return build


@pytest.fixture(scope="module")
def captures(built: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Capture]]:
    root = tmp_path_factory.mktemp("captures")
    found: dict[str, Capture] = {}
    for name, (arguments, _kernels, _targets) in CASES.items():
        out = root / name
        started = time.monotonic()
        done = _run([sys.executable, "-m", "regrapht", "capture", "--data", "--out", str(out), "--sources",
                     str(PROGRAMS / name), "--", str(built / name / name), *arguments], root)
        SUMMARY["programs"][name] = {"capture_rc": done.returncode, "capture_s": round(time.monotonic() - started, 1),
                                     "stdout": done.stdout[-2000:], "stderr": done.stderr[-4000:]}
        assert done.returncode == 0, done.stderr
        found[name] = load_capture(out)
    yield found
    results = os.environ.get("REGRAPHT_CAPTURE_RESULTS")
    if results:
        commit = _run(["git", "rev-parse", "--short", "HEAD"], ROOT).stdout.strip()
        SUMMARY.update(date=time.strftime("%Y-%m-%d %H:%M:%S"), commit=commit)
        Path(results).mkdir(parents=True, exist_ok=True)
        (Path(results) / "capture-gpu-summary.json").write_text(json.dumps(SUMMARY, indent=2) + "\n")


@pytest.mark.parametrize("program", sorted(CASES))
def test_every_launched_kernel_gets_a_spec(captures: dict[str, Capture], program: str) -> None:
    capture = captures[program]
    recorded = read_recorded(capture.directory)
    assert recorded.status.state == "capturing", recorded.status.error
    assert capture.exit_code == 0 and capture.data
    kernels = {s.kernel for s in capture.specs}
    SUMMARY["programs"][program]["specs"] = [{"kernel": s.kernel, "file": s.file, "launches": len(s.launches)}
                                             for s in capture.specs]
    SUMMARY["programs"][program]["apis"] = sorted({f"{launch.demangled}: {launch.api}" for launch in recorded.launches})
    assert kernels == CASES[program][1], capture.skipped
    assert not capture.skipped
    assert {launch.mangled for launch in recorded.launches} == {s.mangled for s in capture.specs}
    for launch in recorded.launches:
        assert launch.complete and launch.error is None, launch
        assert launch.param_info in ("driver", "kernel", "signature")
        assert all(a.before is not None for a in launch.allocations), [a.note for a in launch.allocations]
    if program == "image_pipeline":  # levels(float*, int, Levels): the struct by value as its bytes
        spec = load_spec(capture.directory / capture.specs_for("levels")[0].file).kernel("levels")
        adjust = spec.args[2]
        assert adjust.is_struct and adjust.raw == np.float32([8.0, 1.25]).tobytes() and adjust.align == 4
    if program == "iterative_solver":  # the three launch paths, each seen by CUPTI
        apis = {launch.demangled.split("(")[0]: launch.api for launch in recorded.launches}
        assert apis["relax"].startswith("cuLaunchKernel")
        assert apis["reduce_sum"].startswith(("cudaLaunchKernel", "__cudaLaunchKernel"))
        assert apis["jacobi_step"].startswith(("__cudaLaunchKernel", "cudaLaunchKernel", "cuLaunchKernel"))


@pytest.mark.parametrize("program", sorted(CASES))
def test_every_spec_replays_the_captured_outputs(captures: dict[str, Capture], device: GpuWorker, program: str,
                                                 tmp_path: Path) -> None:
    capture = captures[program]
    source = PROGRAMS / program / f"{program}.cu"
    text = read_source(source)
    replays = []
    for entry in capture.specs:
        spec = capture.directory / entry.file
        kernel = load_spec(spec).kernel(entry.kernel)
        assert any(a.expect is not None for a in kernel.args), f"{entry.kernel} has no captured output"
        evaluator = open_evaluator(source, entry.kernel, spec=spec, arch=None, env=os.environ,
                                   cache_dir=tmp_path / "cache", worker=device)
        # the original as the candidate: the check runs the original on the captured inputs, compares
        # its outputs with the captured ones, then the candidate's with both
        evaluation = evaluator.evaluate(Candidate(source=text, launch=spec_launch(kernel)))
        assert evaluation.verified, f"{entry.kernel}: {evaluation.outcome}: {evaluation.reason}"
        replays.append({"kernel": entry.kernel, "outcome": evaluation.outcome,
                        "time_ms": evaluation.timing.median_ms if evaluation.timing else None})
    SUMMARY["programs"][program]["replays"] = replays


def test_a_spec_that_does_not_reproduce_its_capture_is_refused(captures: dict[str, Capture], device: GpuWorker,
                                                              tmp_path: Path) -> None:
    capture = captures["image_pipeline"]
    entry = capture.specs_for("threshold")[0]
    spec = capture.directory / entry.file
    kernel = load_spec(spec).kernel("threshold")
    mask = next(a for a in kernel.args if a.expect is not None)
    assert mask.expect is not None and mask.expect.path is not None
    expected_path = spec.parent / mask.expect.path
    kept = expected_path.read_bytes()
    try:
        changed = np.load(expected_path)
        changed[12345] ^= 0xFF  # one pixel of the captured mask flipped
        np.save(expected_path, changed)
        source = PROGRAMS / "image_pipeline" / "image_pipeline.cu"
        evaluator = open_evaluator(source, "threshold", spec=spec, arch=None, env=os.environ,
                                   cache_dir=tmp_path / "cache", worker=device)
        with pytest.raises(InputError, match=r"does not reproduce the captured output \(mask\[12345\]"):
            evaluator.evaluate(Candidate(source=read_source(source), launch=spec_launch(kernel)))
    finally:
        expected_path.write_bytes(kept)


@pytest.mark.parametrize("program", sorted(CASES))
def test_capture_optimize_finds_a_verified_faster_version(captures: dict[str, Capture], program: str,
                                                          tmp_path: Path) -> None:
    capture = captures[program]
    source = PROGRAMS / program / f"{program}.cu"
    tried = []
    for kernel in CASES[program][2]:
        done = _run([sys.executable, "-m", "regrapht", "optimize", str(source), "--kernel", kernel, "--capture",
                     str(capture.directory), "--strategy", "rules", "--no-model", "--budget", "10", "--json"],
                    tmp_path)
        assert done.returncode in (0, 1), done.stderr
        result = json.loads(done.stdout)
        tried.append({"kernel": kernel, "baseline_ms": result["baseline"]["time_ms"],
                      "best": None if result["best"] is None else {k: result["best"][k] for k in
                                                                   ("speedup", "time_ms", "techniques")},
                      "reason": result.get("reason")})
        if result["best"] is not None:
            assert result["best"]["verified"] and result["best"]["speedup"] > 1
            break
    SUMMARY["programs"][program]["optimize"] = tried
    assert tried[-1]["best"] is not None, tried
