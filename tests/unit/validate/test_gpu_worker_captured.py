"""The GPU worker with captured data (docs/capture.md), on the numpy stand-in for pycuda
(fake_cuda.py): `file(...)` inputs uploaded from their .npy files, the original's output compared
with the `expect` file when the reference is made (a spec that does not reproduce its capture is
"original_failed"), and candidates compared with the original and the capture."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pytest
from tests.unit.validate.fake_cuda import FakeCuda, fake_device

from regrapht.spec.model import load_spec
from regrapht.spec.resolve import resolve
from regrapht.validate import gpu_worker
from regrapht.validate.worker_protocol import reply_to_wire, request_from_wire

N = 1000
SPEC = """[[kernel]]
name = "scale"
grid = ["(n + 255) / 256"]
block = [256]

[[kernel.arg]]
name = "x"
type = "const float*"
count = "n"
init = "file(captures/x.npy)"

[[kernel.arg]]
name = "y"
type = "float*"
count = "n"
init = "file(captures/y.npy)"
role = "inout"
expect = "file(captures/y.after.npy)"

[[kernel.arg]]
name = "n"
type = "int"
value = "1000"
"""


def scale(offset: float) -> Any:
    def body(cuda: FakeCuda, args: list[Any], _state: dict[str, int]) -> None:
        n = int(args[2])
        x = cuda.array(args[0], n, np.float32)
        y = cuda.array(args[1], n, np.float32)
        y[:] = 2 * x + y + np.float32(offset)
    return body


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    (tmp_path / "captures").mkdir()
    x = np.linspace(-1, 1, N, dtype=np.float32)
    y = np.full(N, 0.5, dtype=np.float32)
    np.save(tmp_path / "captures" / "x.npy", x)
    np.save(tmp_path / "captures" / "y.npy", y)
    np.save(tmp_path / "captures" / "y.after.npy", 2 * x + y)
    path = tmp_path / "k.regrapht.toml"
    path.write_text(SPEC)
    return path


@pytest.fixture
def cuda() -> FakeCuda:
    fake = FakeCuda()
    fake.modules[b"original"] = {"scale": scale(0.0)}
    fake.modules[b"good"] = {"*": scale(0.0)}
    fake.modules[b"wrong"] = {"*": scale(0.01)}
    return fake


def check(dev: Any, spec: Path, candidate: str) -> dict[str, Any]:
    wire = resolve(load_spec(spec).kernel("scale")).to_wire()
    request = {"op": "check", "workspace": {"id": f"captured-{spec.stat().st_mtime_ns}",
                                            "original": {"cubin": b"original", "entry": "scale"},
                                            "checker_cubin": b"checker",
                                            "inputs": [{"key": "captured", "kernel": wire, "seed": 1}]},
               "candidate": {"cubin": candidate.encode(), "entry": "scale"},
               "trials": [{"input": "captured", "candidate": wire, "label": "captured", "candidate_runs": 2}]}
    request = msgpack.unpackb(msgpack.packb(request, use_bin_type=True), raw=False)
    reply = reply_to_wire(gpu_worker.handle(dev, "", request_from_wire(request)))
    unpacked = msgpack.unpackb(msgpack.packb(reply, use_bin_type=True), raw=False)
    assert isinstance(unpacked, dict)
    return unpacked


def test_captured_inputs_and_outputs(cuda: FakeCuda, spec: Path) -> None:
    dev = fake_device(cuda)
    assert check(dev, spec, "good")["status"] == "ok"
    workspace = next(iter(dev.workspaces.values()))
    inputs = workspace.inputs["captured"]
    assert np.array_equal(cuda.array(inputs.pristine["x"], N, np.float32), np.linspace(-1, 1, N, dtype=np.float32))
    assert set(inputs.expected) == {"y"}  # kept on the device beside the reference, and audited like it
    reply = check(dev, spec, "wrong")
    assert reply["status"] == "wrong" and reply["reason"].startswith("y[0]: "), reply


def test_a_spec_that_does_not_reproduce_its_capture(cuda: FakeCuda, spec: Path) -> None:
    after = spec.parent / "captures" / "y.after.npy"
    changed = np.load(after)
    changed[17] += 1.0
    np.save(after, changed)
    reply = check(fake_device(cuda), spec, "good")
    assert reply["status"] == "original_failed"
    assert "the original does not reproduce the captured output (y[17]: " in reply["reason"], reply


def test_a_candidate_is_also_held_to_the_capture(cuda: FakeCuda, spec: Path) -> None:
    # The capture is 0.9e-6 above the original's output and the candidate 0.9e-6 below it: each
    # within the tolerance (atol 1e-6 + rtol 1e-5 * |b|) of the original, but the candidate is 1.8e-6
    # from the capture, too far where the output is near 0.
    after = spec.parent / "captures" / "y.after.npy"
    np.save(after, np.load(after) + np.float32(0.9e-6))
    cuda.modules[b"low"] = {"*": scale(-0.9e-6)}
    dev = fake_device(cuda)
    assert check(dev, spec, "good")["status"] == "ok"
    reply = check(dev, spec, "low")
    assert reply["status"] == "wrong", reply
    assert reply["reason"].startswith("differs from the captured output: y["), reply
    assert "wrote outside" not in reply["reason"]


STRUCT_SPEC = """[[kernel]]
name = "shift"
grid = [4]
block = [256]

[[kernel.arg]]
name = "tag"
type = "char"
value = "7"

[[kernel.arg]]
name = "params"
type = "struct Affine"
bytes = "0000004000008040000000000000000000000000"
align = 16

[[kernel.arg]]
name = "y"
type = "float*"
count = "n"
init = "ones"
role = "inout"

[[kernel.arg]]
name = "n"
type = "int"
value = "1000"
"""


def affine(cuda: FakeCuda, args: list[Any], _state: dict[str, int]) -> None:
    """shift(char tag, Affine params, float *y, int n) with Affine {float a, b; ...} (20 bytes, align 16)
    reads its one packed parameter buffer: tag at 0, params at 16, y at 40, n at 48."""
    (packed,) = args
    raw = bytes(packed)
    assert raw[0] == 7 and len(raw) == 52
    a, b = np.frombuffer(raw[16:24], np.float32)
    y_ptr = int(np.frombuffer(raw[40:48], np.uint64)[0])
    n = int(np.frombuffer(raw[48:52], np.int32)[0])
    y = cuda.array(y_ptr, n, np.float32)
    y[:] = a * y + b


def test_a_struct_passed_by_value_is_its_bytes_in_the_parameter_buffer(tmp_path: Path) -> None:
    path = tmp_path / "s.regrapht.toml"
    path.write_text(STRUCT_SPEC)
    kernel = resolve(load_spec(path).kernel("shift"))
    wire = kernel.to_wire()
    assert wire["args"] == [["tag", "scalar"], ["params", "bytes"], ["y", "buffer"], ["n", "scalar"]]
    assert wire["structs"] == {"params": ["0000004000008040000000000000000000000000", 16]}
    fake = FakeCuda()
    fake.modules[b"original"] = {"shift": affine}
    fake.modules[b"good"] = {"*": affine}
    dev = fake_device(fake)
    request = {"op": "check", "workspace": {"id": "struct", "original": {"cubin": b"original", "entry": "shift"},
                                            "checker_cubin": b"checker",
                                            "inputs": [{"key": "s", "kernel": wire, "seed": 1}]},
               "candidate": {"cubin": b"good", "entry": "shift"},
               "trials": [{"input": "s", "candidate": wire, "label": "s", "candidate_runs": 1}]}
    request = msgpack.unpackb(msgpack.packb(request, use_bin_type=True), raw=False)
    reply = reply_to_wire(gpu_worker.handle(dev, "", request_from_wire(request)))
    assert reply["status"] == "ok", reply
    workspace = next(iter(dev.workspaces.values()))
    working = next(iter(workspace.working.values()))
    assert np.all(fake.array(working.ptrs["y"], 1000, np.float32) == 2 * 1 + 4)  # y = 2 y + 4 with y = 1
