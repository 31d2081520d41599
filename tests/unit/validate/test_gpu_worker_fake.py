"""The GPU worker's session logic on a numpy stand-in for pycuda (fake_cuda.py): inputs kept on
the device and shared by candidates, the original run once per seed, guards/inputs/outputs
compared by the checker kernels, every bad-candidate class worded right, timing stops."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pytest
from spec_texts import xy_spec
from tests.unit.validate.fake_cuda import CHECKER, FakeCuda, fake_device

from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import parse_spec
from regrapht.spec.resolve import resolve
from regrapht.validate import gpu_worker
from regrapht.validate.checker import CHECK_ENTRIES, CHECK_KERNELS
from regrapht.validate.compiler import CompileCache, Compiler, find_demangler, find_nvcc
from regrapht.validate.evaluator import CheckSettings, CudaEvaluator
from regrapht.validate.gpu_lock import GpuLock
from regrapht.validate.types import Candidate
from regrapht.validate.worker_protocol import (
    Request,
    reply_from_wire,
    reply_to_wire,
    request_from_wire,
    to_wire,
)

SPEC = xy_spec("scale", grid="(n + 255) / 256", block=256, n="1000 + 3")


def scale(statement: str) -> Any:
    """A fake kernel over (x, y, n); `statement` is numpy code over x, y, n, state."""
    def body(cuda: FakeCuda, args: list[Any], state: dict[str, int]) -> None:
        n = int(args[2])
        x = cuda.array(args[0], n, np.float32)
        y_ptr = int(args[1])
        y = cuda.array(y_ptr, n, np.float32)
        state["launches"] = state.get("launches", 0) + 1
        exec(statement, {"np": np}, {"x": x, "y": y, "n": n, "state": state, "cuda": cuda, "y_ptr": y_ptr})
    return body


GOOD = "y[:] = 2 * x + 1"
CACHED = "cuda.first_alloc_of(4 * n)"  # cached copies have no guards: this is the pristine x of seed 11
CASES = {
    "good": (GOOD, None),
    "wrong_value": ("y[:] = 2 * x + np.float32(1.001)", "y[0]: "),
    "unwritten": ("y[:] = 2 * x + 1; y.view(np.uint8)[4 * 7:4 * 8] = 0xFF", "y[7] was not written"),
    "nan": ("y[:] = 2 * x + 1; y[5] = np.nan", "y[5]: nan where the original has"),
    "writes_input": ("y[:] = 2 * x + 1; x[3] = 0", "wrote to input x[3]"),
    "out_of_bounds": ("y[:] = 2 * x + 1; cuda.array(y_ptr, n + 2, np.float32)[n + 1] = 0",
                      "wrote outside y: 4 bytes after its end"),
    "before_start": ("y[:] = 2 * x + 1; cuda.array(y_ptr - 8, 1, np.float32)[0] = 0",
                     "wrote outside y: 8 bytes before its start"),
    "stateful": ("if state['launches'] == 1: y[:] = 2 * x + 1", "was not written"),
    "launch_order": ("y[:] = 2 * x + (1 if state['launches'] <= 5 else 1.5)", "again, after the other trials"),
    # past the guards, into the worker's cached pristine x of seed 11 (the first allocation of n floats)
    "far_outside": (f"y[:] = 2 * x + 1; {CACHED}[:4] = 0",
                    "wrote outside its buffers, past the guard regions: the cached input x of seed 11 changed"),
}


def session_and_trials(seeds: tuple[int, ...] = (11, 12, 13)) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    kernel = parse_spec(SPEC, file="scale.regrapht.toml").kernel("scale")
    spec_size, odd = resolve(kernel).to_wire(), resolve(kernel, overrides={"n": 501}).to_wire()
    inputs = [{"key": f"seed {s}", "kernel": spec_size, "seed": s} for s in seeds]
    inputs.append({"key": "odd", "kernel": odd, "seed": 99})
    session = {"id": "session-" + "-".join(map(str, seeds)), "original": {"cubin": b"original", "entry": "scale"},
               "checker_cubin": b"checker", "inputs": inputs}
    trials = [{"input": i["key"], "candidate": i["kernel"], "label": i["key"], "candidate_runs": 1} for i in inputs]
    trials.append({**trials[0], "label": "seed 11 again, after the other trials", "candidate_runs": 2})
    return session, trials


@pytest.fixture
def cuda() -> FakeCuda:
    fake = FakeCuda()
    fake.modules[b"original"] = {"scale": scale(GOOD)}
    for name, (statement, _reason) in CASES.items():
        fake.modules[name.encode()] = {"*": scale(statement)}
    return fake


def roundtrip(request: dict[str, Any]) -> dict[str, Any]:
    """What the worker receives: the request after msgpack (bytes stay bytes, tuples become lists)."""
    unpacked = msgpack.unpackb(msgpack.packb(request, use_bin_type=True), raw=False)
    assert isinstance(unpacked, dict)
    return unpacked


# The worker's handlers behind the wire format, as `serve` runs them: map in, map out.
def handle(dev: Any, wire: dict[str, Any]) -> dict[str, Any]:
    return roundtrip(reply_to_wire(gpu_worker.handle(dev, "", request_from_wire(wire))))


check = time_kernel = handle


def prepare(dev: Any, wire: dict[str, Any]) -> dict[str, Any]:
    """The prepare request for the workspace of `wire` (a check request)."""
    return handle(dev, {"op": "prepare", "workspace": wire["workspace"]})


def check_request(case: str, seeds: tuple[int, ...] = (11, 12, 13)) -> dict[str, Any]:
    session, trials = session_and_trials(seeds)
    return roundtrip({"op": "check", "workspace": session, "candidate": {"cubin": case.encode(), "entry": "scale"},
                      "trials": trials})


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_case_is_classified(cuda: FakeCuda, case: str) -> None:
    dev = fake_device(cuda)
    reply = check(dev, check_request(case))
    expected = CASES[case][1]
    if expected is None:
        assert reply["status"] == "ok", reply
    else:
        assert reply["status"] == "wrong", reply
        assert expected in reply["reason"], reply["reason"]
    # the next candidate of the session is checked normally: buffers and guards are restored
    after = check(dev, check_request("good"))
    assert after["status"] == "ok", after
    assert after["workspace_created"] is False
    assert check(dev, check_request("good"))["references_run"] == 0  # the original ran once per seed


def test_damaged_cached_inputs_are_made_again_and_blamed_on_the_candidate(cuda: FakeCuda) -> None:
    dev = fake_device(cuda)
    assert check(dev, check_request("good"))["status"] == "ok"
    reply = check(dev, check_request("far_outside"))
    assert reply["status"] == "wrong" and "cached input x of seed 11" in reply["reason"], reply
    # before the audit, every later candidate failed on seed 11 (the pristine x it reads was
    # damaged, the reference was not): now the set is made again, from its seed
    after = check(dev, check_request("good"))
    assert after["status"] == "ok" and after["references_run"] == 1, after
    # while timed: the same audit, the same verdict
    session, trials = session_and_trials()
    timing = roundtrip({"op": "time", "workspace": session, "input": "seed 11",
                        "module": {"cubin": b"far_outside", "entry": "scale"}, "kernel": trials[0]["candidate"],
                        "warmup": 1, "min_runs": 1, "max_runs": 1, "target_ms": 0.0})
    timed = time_kernel(dev, timing)
    assert timed["status"] == "wrong" and timed["reason"].endswith("changed (while timed)"), timed
    assert check(dev, check_request("good"))["status"] == "ok"


def test_session_inputs_and_references_are_made_once(cuda: FakeCuda) -> None:
    dev = fake_device(cuda)
    first = check(dev, check_request("good"))
    assert first["workspace_created"] and first["references_run"] == 4
    session = next(iter(dev.workspaces.values()))
    pristine = {k: cuda.array(v.pristine["x"], 8, np.float32).copy() for k, v in session.inputs.items()}
    assert len({p.tobytes() for p in pristine.values()}) == 4  # each seed its own inputs
    second = check(dev, check_request("wrong_value"))
    assert second["status"] == "wrong"
    assert len(session.inputs) == 4 and len(session.working) == 2  # spec size + odd size
    again = {k: cuda.array(v.pristine["x"], 8, np.float32) for k, v in session.inputs.items()}
    assert all(np.array_equal(pristine[k], again[k]) for k in pristine)


def test_prepared_inputs_are_the_ones_uploaded_and_touch_no_device(cuda: FakeCuda) -> None:
    plain, prepared = fake_device(cuda), fake_device(cuda)
    request = check_request("good")
    before = dict(cuda.memory)
    assert prepare(prepared, request) == {"status": "ok", "generated": 4}
    assert cuda.memory == before and not prepared.workspaces  # host work only: no allocation, no workspace
    assert prepare(prepared, request)["generated"] == 0  # already waiting
    assert check(plain, request)["status"] == check(prepared, request)["status"] == "ok"
    assert not prepared.host_inputs  # handed over to the device copies
    def firsts(dev: Any) -> dict[str, bytes]:
        inputs = next(iter(dev.workspaces.values())).inputs
        return {k: cuda.array(v.pristine["x"], 8, np.float32).tobytes() for k, v in inputs.items()}
    assert firsts(plain) == firsts(prepared)  # same seeds, same inputs, whoever generated them
    assert prepare(prepared, request)["generated"] == 0  # on the device already
    prepare(prepared, check_request("good", seeds=(5,)))
    assert {k[0] for k in prepared.host_inputs} == {"session-5"}  # one session's inputs kept at most


def test_sessions_are_evicted_past_the_budget(cuda: FakeCuda) -> None:
    dev = fake_device(cuda, budget=40_000)
    assert check(dev, check_request("good", seeds=(1,)))["status"] == "ok"
    assert check(dev, check_request("good", seeds=(2,)))["status"] == "ok"
    assert list(dev.workspaces) == ["session-2"]  # the older session's memory was given back
    live = sum(a.size for a in cuda.memory.values()) - dev.flush_size
    assert live == dev.workspaces["session-2"].nbytes + 8 * 8 * 2 * 2  # its buffers + two results areas


def test_timing_runs_at_least_min_runs_and_stops(cuda: FakeCuda) -> None:
    dev = fake_device(cuda)
    session, trials = session_and_trials()
    request = roundtrip({"op": "time", "workspace": session, "input": "seed 11",
                         "module": {"cubin": b"good", "entry": "scale"}, "kernel": trials[0]["candidate"],
                         "warmup": 3, "min_runs": 20, "max_runs": 45, "target_ms": 1e9})
    reply = time_kernel(dev, request)
    assert reply["status"] == "ok" and len(reply["times_ms"]) == 45
    request["target_ms"] = 0.0
    assert len(time_kernel(dev, request)["times_ms"]) == 20
    request["slow_ms"] = 0.0  # far slower than the original already: one batch is enough
    assert len(time_kernel(dev, request)["times_ms"]) == 10
    request["slow_ms"] = 1e9
    assert len(time_kernel(dev, request)["times_ms"]) == 20


class InProcessWorker:
    """The GpuWorker interface over the fake device: what the evaluator sends, the worker gets."""

    def __init__(self, cuda: FakeCuda) -> None:
        self.dev = fake_device(cuda)
        self.requests: list[dict[str, Any]] = []

    def info(self) -> dict[str, Any]:
        return {"status": "ok", "device": {"name": "Fake GPU", "cc": [9, 0]}, "reason": ""}

    def request(self, request: Request, *, timeout_s: float) -> Any:
        return reply_from_wire(request, self.call(to_wire(request), timeout_s=timeout_s))

    def call(self, request: dict[str, Any], *, timeout_s: float) -> dict[str, Any]:
        wire = roundtrip(request)
        self.requests.append(wire)
        return handle(self.dev, wire)


ORIGINAL = """
__global__ void scale(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}
"""


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_evaluator_and_worker_speak_the_same_session_protocol(cuda: FakeCuda, tmp_path: Path) -> None:
    nvcc = find_nvcc(os.environ)
    assert nvcc is not None
    compiler = Compiler(nvcc, cache=CompileCache(tmp_path), demangler=find_demangler(nvcc, os.environ))
    checker = compiler.compile(CHECK_KERNELS, arch="sm_90", file="regrapht_check.cu")
    assert checker.ok and checker.cubin is not None and set(checker.kernels) == set(CHECK_ENTRIES)
    cuda.modules[checker.cubin] = CHECKER
    # a distinct __device__ symbol per case: sources that differ only in comments give one cubin
    sources = {case: ORIGINAL + f"__device__ int marker_{case};\n" for case in ("good", "wrong_value", "stateful")}
    for case, text in sources.items():
        compiled = compiler.compile(text, arch="sm_90", file="candidate.cu")
        assert compiled.cubin is not None
        cuda.modules[compiled.cubin] = {"*": scale(CASES[case][0])}
    original = compiler.compile(ORIGINAL, arch="sm_90", file="scale.cu")
    assert original.cubin is not None
    cuda.modules[original.cubin] = {"*": scale(GOOD)}
    worker = InProcessWorker(cuda)
    spec = parse_spec(SPEC, file="scale.regrapht.toml")
    evaluator = CudaEvaluator(ORIGINAL, "scale", spec, arch=None, worker=worker,  # type: ignore[arg-type]
                              cache_dir=tmp_path, compiler=compiler, file="scale.cu",
                              settings=CheckSettings(odd_size_cap=700))
    launch = LaunchConfig(("ceil_div(n, 128)",), ("128",))
    good = evaluator.evaluate(Candidate(sources["good"], launch))
    assert good.verified and good.timing is not None and good.timing.runs >= 20, good
    assert good.details["session_seed"] == evaluator.session_seed
    wrong = evaluator.evaluate(Candidate(sources["wrong_value"], launch))
    assert wrong.outcome == "wrong" and wrong.reason.startswith("y[0]: "), wrong
    stateful = evaluator.evaluate(Candidate(sources["stateful"], launch))
    assert stateful.outcome == "wrong" and "not written" in stateful.reason, stateful
    checks = [r for r in worker.requests if r["op"] == "check"]
    assert len({r["workspace"]["id"] for r in worker.requests}) == 1 and len(worker.dev.workspaces) == 1
    assert [t["candidate_runs"] for t in checks[0]["trials"]] == [1, 1, 1, 1, 1, 2]
    other = CudaEvaluator(ORIGINAL, "scale", spec, arch=None, worker=None, cache_dir=tmp_path, compiler=compiler,
                          file="scale.cu")
    assert other.session_seed != evaluator.session_seed  # fresh random inputs per session


def test_the_evaluator_prepares_inputs_outside_the_gpu_lock(cuda: FakeCuda, tmp_path: Path) -> None:
    nvcc = find_nvcc(os.environ)
    if nvcc is None:
        pytest.skip("nvcc not on PATH")
    compiler = Compiler(nvcc, cache=CompileCache(tmp_path), demangler=find_demangler(nvcc, os.environ))
    checker = compiler.compile(CHECK_KERNELS, arch="sm_90", file="regrapht_check.cu")
    original = compiler.compile(ORIGINAL, arch="sm_90", file="scale.cu")
    assert checker.cubin is not None and original.cubin is not None
    cuda.modules[checker.cubin] = CHECKER
    cuda.modules[original.cubin] = {"*": scale(GOOD)}
    lock = GpuLock.in_dir(tmp_path)
    held: list[tuple[str, bool]] = []

    class LockWatchingWorker(InProcessWorker):
        def call(self, request: dict[str, Any], *, timeout_s: float) -> dict[str, Any]:
            held.append((request["op"], lock._depth > 0))
            return super().call(request, timeout_s=timeout_s)

    evaluator = CudaEvaluator(ORIGINAL, "scale", parse_spec(SPEC, file="scale.regrapht.toml"), arch=None,
                              worker=LockWatchingWorker(cuda), cache_dir=tmp_path,  # type: ignore[arg-type]
                              compiler=compiler, file="scale.cu", gpu_lock=lock,
                              settings=CheckSettings(odd_size_cap=700))
    assert evaluator.evaluate(Candidate(ORIGINAL, LaunchConfig(("ceil_div(n, 128)",), ("128",)))).verified
    evaluator.evaluate(Candidate(ORIGINAL + "// again\n", LaunchConfig(("ceil_div(n, 256)",), ("256",))))
    assert held[0] == ("prepare", False)
    assert [op for op, _ in held].count("prepare") == 1 and all(h for op, h in held if op != "prepare")


HALF_SPEC = xy_spec("scale", grid="(n + 255) / 256", block=256, n="1000 + 3", x_type="const half*").replace(
    'type = "float*"', 'type = "half*"')


def half_scale(statement: str) -> Any:
    """A fake kernel over (half x, half y, n)."""
    def body(cuda: FakeCuda, args: list[Any], state: dict[str, int]) -> None:
        n = int(args[2])
        x, y = cuda.array(args[0], n, np.float16), cuda.array(args[1], n, np.float16)
        exec(statement, {"np": np}, {"x": x, "y": y, "n": n})
    return body


@pytest.mark.parametrize(("case", "statement", "reason"), [
    ("good", "y[:] = 2 * x + np.float16(1)", None),
    ("wrong", "y[:] = 2 * x + np.float16(1.01)", "y[0]: "),
    ("unwritten", "y[:] = 2 * x + np.float16(1); y[7] = np.nan", "y[7]"),
])
def test_half_buffers_are_made_and_compared_as_half(case: str, statement: str, reason: str | None) -> None:
    # the half extension end to end on the worker: float16 inputs drawn, the original's outputs
    # kept, a candidate compared element by element with the half comparison kernel
    fake = FakeCuda()
    fake.modules[b"original"] = {"scale": half_scale("y[:] = 2 * x + np.float16(1)")}
    fake.modules[case.encode()] = {"*": half_scale(statement)}
    kernel = parse_spec(HALF_SPEC, file="scale.regrapht.toml").kernel("scale")
    wire = resolve(kernel).to_wire()
    assert [b["dtype"] for b in wire["buffers"]] == ["float16", "float16"]  # type: ignore[index]
    session = {"id": "half", "original": {"cubin": b"original", "entry": "scale"}, "checker_cubin": b"checker",
               "inputs": [{"key": "seed 11", "kernel": wire, "seed": 11}]}
    trials = [{"input": "seed 11", "candidate": wire, "label": "seed 11", "candidate_runs": 1}]
    reply = check(fake_device(fake), roundtrip({"op": "check", "workspace": session,
                                                "candidate": {"cubin": case.encode(), "entry": "scale"},
                                                "trials": trials}))
    if reason is None:
        assert reply["status"] == "ok", reply
    else:
        assert reply["status"] == "wrong" and reason in reply["reason"], reply
