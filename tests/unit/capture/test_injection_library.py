"""The CUPTI injection library, built for real with g++ against the toolkit's headers, and run
on the CPU: without a driver (its error), and against the fake CUDA of tests/support/fake_cuda
through the whole `regrapht capture` sequence (program output and exit code passed through,
launches recorded per entry point, specs with the captured data, crash and refused profiling)."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from regrapht.capture.build import LIBRARY_NAME, ensure_library
from regrapht.capture.manifest import load_capture, read_recorded
from regrapht.capture.run import CaptureOptions, capture
from regrapht.spec.model import load_spec
from regrapht.spec.resolve import resolve

pytestmark = pytest.mark.nvcc


def test_builds_against_the_toolkit_headers_and_is_cached(capture_library: Path) -> None:
    assert capture_library.name == LIBRARY_NAME and capture_library.is_file()
    library = ctypes.CDLL(str(capture_library))
    assert hasattr(library, "InitializeInjection")
    built = capture_library.stat().st_mtime_ns
    again = ensure_library({k: v for k, v in os.environ.items() if k != "REGRAPHT_CAPTURE_LIBRARY"},
                           capture_library.parents[2])
    assert again == capture_library and again.stat().st_mtime_ns == built  # from the cache, not rebuilt


def test_without_a_driver_the_library_says_so(capture_library: Path, tmp_path: Path) -> None:
    if any(Path(d, "libcuda.so.1").exists() for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib")):
        pytest.skip("a CUDA driver is installed here")
    script = ("import ctypes,sys; lib=ctypes.CDLL(sys.argv[1]); print(lib.InitializeInjection())")
    env = {**os.environ, "REGRAPHT_CAPTURE_DIR": str(tmp_path), "LD_LIBRARY_PATH": ""}
    done = subprocess.run([sys.executable, "-c", script, str(capture_library)], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    status = json.loads((tmp_path / "status.json").read_text())
    assert status["state"] == "failed" and "libcuda.so.1" in status["error"]


def _capture(fake_cuda, capture_library: Path, out: Path, *, data: bool = True, extra: dict[str, str] | None = None,
             kernel: str | None = None):
    env = {**os.environ, "LD_LIBRARY_PATH": str(fake_cuda.folder), "REGRAPHT_CAPTURE_LIBRARY": str(capture_library),
           "REGRAPHT_CUPTI": str(fake_cuda.cupti), **(extra or {})}
    env.pop("CUDA_INJECTION64_PATH", None)
    sources = out.parent / "src"  # the program's sources: saxpy's declaration names its parameters
    sources.mkdir(exist_ok=True)
    (sources / "saxpy.cu").write_text("__global__ void saxpy(int n, float alpha, const float *x, float *y)\n"
                                      "{ int i = threadIdx.x; if (i < n) y[i] = alpha * x[i] + y[i]; }\n")
    options = CaptureOptions((str(fake_cuda.program),), out, kernel=kernel, launches=3, data=data, sources=sources)
    return capture(options, env, out.parent / "cache", problem=lambda: None)


def test_a_capture_through_the_fake_driver(fake_cuda, capture_library: Path, tmp_path: Path,
                                           capfd: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cap"
    outcome = _capture(fake_cuda, capture_library, out)
    assert capfd.readouterr().out == "program output\n"  # the program's own output, untouched
    assert outcome.exit_code == 0 and outcome.error is None
    recorded = read_recorded(out)
    apis = [(launch.mangled, launch.api) for launch in recorded.launches]
    # five saxpy launches, three recorded (--launches 3); the nested driver call inside the runtime's
    # launch is the same launch, recorded once, by the runtime's callback unless it has no parameters
    assert apis == [("_Z5saxpyifPKfPf", "cuLaunchKernel")] * 3 + [
        ("_Z5scaleIfLi4EEvPT_i", "__cudaLaunchKernel"), ("_Z5scaleIfLi4EEvPT_i", "cuLaunchKernel"),
        ("_Z3addPKiS0_Pii", "cudaLaunchKernel"), ("_Z4move6ParamsPf", "cuLaunchKernel")]
    assert recorded.seen == {"_Z5saxpyifPKfPf": 5, "_Z5scaleIfLi4EEvPT_i": 2, "_Z3addPKiS0_Pii": 1,
                             "_Z4move6ParamsPf": 1}
    move = recorded.launches[-1]
    assert move.error == "the launch call returned error 1 (CUDA_ERROR_FAKE)" and move.allocations[0].after is None
    first = recorded.launches[0]
    assert first.grid == (4, 1, 1) and first.block == (256, 1, 1) and first.param_info == "driver"
    assert [(p.offset, p.size) for p in first.params] == [(0, 4), (4, 4), (8, 8), (16, 8)]
    assert np.frombuffer(first.params[1].data, np.float32)[0] == np.float32(2.5)
    y = first.allocations[first.params[3].allocation]
    # bytes that changed: y[0] = 2.5 * 0 + 1 keeps its value (and so do bytes shared by old and new values)
    assert y.size == 4096 and y.written is not None and 0 < y.written.first < 8 and y.written.last == 3999
    x = first.allocations[first.params[2].allocation]
    assert x.written is not None and x.written.bytes == 0 and x.after is None

    manifest = load_capture(out)
    assert manifest.exit_code == 0 and manifest.program == str(fake_cuda.program)
    assert sorted(s.kernel for s in manifest.specs) == ["add", "saxpy", "scale<float, 4>"]
    # move(Params, float*) is a struct by value, but its launch call failed: no spec from it
    assert any(str(s["kernel"]) == "move" and "returned error 1" in str(s["reason"]) for s in manifest.skipped)
    saxpy = manifest.specs_for("saxpy")[0]
    assert saxpy.launches == (1, 2, 3) and saxpy.data
    kernel = load_spec(out / saxpy.file).kernel("saxpy")
    resolved = resolve(kernel)
    by_name = {b.name: b for b in resolved.buffers}
    assert [b.role for b in resolved.buffers] == ["in", "inout"]
    assert resolved.scalars == {"n": 1000, "alpha": 2.5}
    assert saxpy.source is not None and saxpy.source.endswith("saxpy.cu")
    xs = np.load(by_name["x"].init.path)
    ys = np.load(by_name["y"].init.path)
    expected = np.load(by_name["y"].expect)
    assert np.array_equal(xs[:4], np.float32([0, 0.5, 1, 1.5])) and np.all(ys == 1)
    n = 1000  # the replay of the capture on the host reproduces the captured output exactly
    replay = ys.copy()
    replay[:n] = np.float32(2.5) * xs[:n] + ys[:n]
    assert np.array_equal(replay, expected)
    add = load_spec(out / manifest.specs_for("add")[0].file).kernel("add")
    assert [a.role for a in add.args if a.is_pointer] == ["in", "in", "inout"]  # layout from the name (legacy path)
    scale = load_spec(out / manifest.specs_for("scale")[0].file).kernel("scale<float, 4>")
    assert scale.name == "scale<float, 4>" and scale.args[0].role == "inout"


def test_the_programs_exit_code_passes_through(fake_cuda, capture_library: Path, tmp_path: Path) -> None:
    outcome = _capture(fake_cuda, capture_library, tmp_path / "cap", extra={"FAKE_PROGRAM_EXIT": "7"})
    assert outcome.exit_code == 7 and outcome.program_code == 7
    assert load_capture(tmp_path / "cap").exit_code == 7


def test_a_crash_keeps_the_launches_so_far(fake_cuda, capture_library: Path, tmp_path: Path) -> None:
    out = tmp_path / "cap"
    outcome = _capture(fake_cuda, capture_library, out, extra={"FAKE_PROGRAM_CRASH": "1"})
    assert outcome.exit_code == 128 + 6  # SIGABRT, as the shell reports it
    recorded = read_recorded(out)
    assert [launch.phase for launch in recorded.launches] == ["enter"]
    assert any("stopped before it returned" in note for note in recorded.notes)
    manifest = load_capture(out)
    assert manifest.exit_code == 134 and any("exited with 134" in note for note in manifest.notes)
    spec = manifest.specs_for("saxpy")[0]  # written from what was seen: shape exact, data before the launch
    kernel = load_spec(out / spec.file).kernel("saxpy")
    assert [a.init.kind for a in kernel.args if a.is_pointer] == ["file", "file"]


def test_refused_profiling_is_a_clear_error(fake_cuda, capture_library: Path, tmp_path: Path) -> None:
    outcome = _capture(fake_cuda, capture_library, tmp_path / "cap", extra={"FAKE_CUPTI_DENY": "1"})
    assert outcome.program_code == 0 and outcome.exit_code == 1
    assert outcome.error is not None and "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES" in outcome.error
    assert "NVreg_RestrictProfilingToAdminUsers" in outcome.error


def test_the_kernel_filter_and_no_data(fake_cuda, capture_library: Path, tmp_path: Path) -> None:
    out = tmp_path / "cap"
    outcome = _capture(fake_cuda, capture_library, out, data=False, kernel="^_Z5sax|scale<")
    assert outcome.exit_code == 0
    recorded = read_recorded(out)
    assert {launch.mangled for launch in recorded.launches} == {"_Z5saxpyifPKfPf", "_Z5scaleIfLi4EEvPT_i"}
    assert not any((out / "data").iterdir())
    kernel = load_spec(out / load_capture(out).specs_for("saxpy")[0].file).kernel("saxpy")
    assert [(a.init.kind, a.role) for a in kernel.args if a.is_pointer] == [("uniform", "in"), ("uniform", "inout")]


def _cli(fake_cuda, capture_library: Path, tmp_path: Path, *args: str, extra: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LD_LIBRARY_PATH": str(fake_cuda.folder), "REGRAPHT_CAPTURE_LIBRARY": str(capture_library),
           "REGRAPHT_CUPTI": str(fake_cuda.cupti), **(extra or {})}
    env.pop("CUDA_INJECTION64_PATH", None)
    return subprocess.run([sys.executable, "-m", "regrapht", "capture", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_the_command_line_end_to_end(fake_cuda, capture_library: Path, tmp_path: Path) -> None:
    done = _cli(fake_cuda, capture_library, tmp_path, "--data", "--launches", "1", "--",
                str(fake_cuda.program), extra={"FAKE_PROGRAM_EXIT": "3"})
    assert done.returncode == 3  # the program's exit code
    assert done.stdout == "program output\n"  # the program's stdout, and only it
    assert "regrapht capture: 4 launches of 4 kernel(s) recorded from" in done.stderr
    out = tmp_path / ".regrapht" / "captures" / "fake_program"  # the default --out
    manifest = load_capture(out)
    assert manifest.exit_code == 3 and [len(s.launches) for s in manifest.specs_for("saxpy")] == [1]


@pytest.mark.parametrize(("extra", "message"), [
    ({"FAKE_NO_DEVICE": "1"}, "regrapht capture: error: no CUDA device is present"),
    ({"FAKE_CUINIT_FAIL": "1"}, "regrapht capture: error: the CUDA driver does not start (cuInit: CUDA_ERROR_FAKE)"),
])
def test_no_usable_gpu_is_said_before_the_program_runs(fake_cuda, capture_library: Path, tmp_path: Path,
                                                       extra: dict[str, str], message: str) -> None:
    done = _cli(fake_cuda, capture_library, tmp_path, "--", str(fake_cuda.program), extra=extra)
    assert done.returncode == 1 and done.stdout == ""  # the program did not run
    assert done.stderr.strip().splitlines()[-1].startswith(message), done.stderr


def test_a_cupti_that_cannot_load_is_a_clear_error(fake_cuda, capture_library: Path, tmp_path: Path) -> None:
    broken = tmp_path / "libcupti.so"
    broken.write_bytes(b"not a shared object")
    outcome = _capture(fake_cuda, capture_library, tmp_path / "cap", extra={"REGRAPHT_CUPTI": str(broken)})
    assert outcome.program_code == 0 and outcome.exit_code == 1
    assert outcome.error is not None and outcome.error.startswith("CUPTI could not capture: cannot load CUPTI: ")
    assert str(broken) in outcome.error
    missing = _capture(fake_cuda, capture_library, tmp_path / "cap2", extra={"REGRAPHT_CUPTI": str(tmp_path / "no.so")})
    assert missing.program_code is None and missing.exit_code == 1  # found missing before the program runs
    assert missing.error is not None and missing.error.startswith("libcupti.so not found")


def test_a_second_cuda_process_records_nothing(fake_cuda, capture_library: Path, tmp_path: Path) -> None:
    out = tmp_path / "cap"
    assert _capture(fake_cuda, capture_library, out, data=False).exit_code == 0
    before = (out / "launches.jsonl").read_bytes()
    # a CUDA program the captured one starts inherits the library: it finds the capture owned
    env = {**os.environ, "LD_LIBRARY_PATH": str(fake_cuda.folder), "CUDA_INJECTION64_PATH": str(capture_library),
           "REGRAPHT_CAPTURE_DIR": str(out), "REGRAPHT_CAPTURE_CUPTI": str(fake_cuda.cupti)}
    done = subprocess.run([str(fake_cuda.program)], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and done.stdout == "program output\n"
    assert (out / "launches.jsonl").read_bytes() == before
    assert (out / "owner.pid").read_text().strip().isdigit()
