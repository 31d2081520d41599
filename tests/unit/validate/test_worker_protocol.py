"""The typed GPU worker protocol: every request and reply survives the wire (msgpack) unchanged,
a reply the request cannot have is a `Failed`, and the real worker process (here without a
device) answers typed requests through `GpuWorker.request`."""

from __future__ import annotations

import msgpack
import pytest

from regrapht.validate.worker import GpuWorker
from regrapht.validate.worker_protocol import (
    Check,
    CheckVerdict,
    DeviceInfo,
    Exit,
    Failed,
    Hello,
    HelloReply,
    InputPlan,
    ModuleRef,
    Peaks,
    PeaksReply,
    Prepare,
    Prepared,
    Reply,
    Request,
    Time,
    Timed,
    Trial,
    UnknownRequest,
    WorkspacePlan,
    reply_from_wire,
    reply_to_wire,
    request_from_wire,
    to_wire,
)

KERNEL = {"name": "scale", "args": [["x", "buffer"], ["n", "scalar"]], "scalars": {"n": 8},
          "scalar_dtypes": {"n": "int32"}, "buffers": [], "grid": [1, 1, 1], "block": [8, 1, 1],
          "shared_bytes": 0, "rtol": 1e-5, "atol": 1e-6}
WORKSPACE = WorkspacePlan("w1", ModuleRef(b"original", "scale"), b"checker",
                          (InputPlan("seed 1", KERNEL, 1), InputPlan("seed 2", KERNEL, 2)))
DEVICE = DeviceInfo("NVIDIA H200", (9, 0), 50 << 20, 132, 141 << 30, 12080)
REQUESTS: list[Request] = [
    Hello(), Exit(), Prepare(WORKSPACE),
    Check(WORKSPACE, ModuleRef(b"candidate", "scale"), (Trial("seed 1", KERNEL, "seed 1"), Trial("seed 1", KERNEL, "again", 2))),
    Time(WORKSPACE, "seed 1", ModuleRef(b"candidate", "scale"), KERNEL, 3, 20, 200, 150.0, None),
    Time(WORKSPACE, "seed 1", ModuleRef(b"candidate", "scale"), KERNEL, 3, 20, 200, 150.0, 0.25),
    Peaks(ModuleRef(b"fma", "fma_peak")),
]


def over_the_wire(message: dict[str, object]) -> dict[str, object]:
    unpacked = msgpack.unpackb(msgpack.packb(message, use_bin_type=True), raw=False)
    assert isinstance(unpacked, dict)
    return unpacked


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: r.op)
def test_requests_survive_the_wire(request_: Request) -> None:
    assert request_from_wire(over_the_wire(to_wire(request_))) == request_


@pytest.mark.parametrize(("request_", "reply"), [
    (Hello(), HelloReply(DEVICE, "", 42)),
    (Hello(), HelloReply(None, "pycuda is not installed", 42)),
    (REQUESTS[2], Prepared(3)),
    (REQUESTS[3], CheckVerdict("ok", trials=2, workspace_created=True, references_run=1, workspaces=1)),
    (REQUESTS[3], CheckVerdict("wrong", "y[0]: 3.0 != 2.0 (seed 1)")),
    (REQUESTS[3], CheckVerdict("original_failed", "original: illegal address (seed 1)")),
    (REQUESTS[4], Timed("ok", (0.5, 0.25))),
    (REQUESTS[4], Timed("wrong", reason="wrote outside its buffers (while timed)")),
    (REQUESTS[6], PeaksReply(4000.0, 60000.0, DEVICE)),
    (REQUESTS[3], Failed("fatal", "timing: launch failed")),
    (REQUESTS[3], Failed("no_device", "no CUDA device present")),
])
def test_replies_survive_the_wire(request_: Request, reply: Reply) -> None:
    assert reply_from_wire(request_, over_the_wire(reply_to_wire(reply))) == reply


def test_a_reply_the_request_cannot_have_is_a_failure_and_bad_requests_are_named() -> None:
    odd = reply_from_wire(REQUESTS[4], {"status": "original_failed", "reason": "?"})
    assert odd == Failed("error", "unexpected worker reply 'original_failed' to time: ?")
    with pytest.raises(UnknownRequest, match="unknown op 'launch'"):
        request_from_wire({"op": "launch"})
    with pytest.raises(KeyError):
        request_from_wire({"op": "check", "workspace": WORKSPACE.to_wire()})


def test_the_worker_process_answers_typed_requests_without_a_device() -> None:
    # A CPU-only machine: the real worker starts, says why it has no device, and refuses work.
    worker = GpuWorker(env={"CUDA_VISIBLE_DEVICES": "", "PATH": "/usr/bin:/bin"})
    try:
        hello = worker.request(Hello(), timeout_s=120)
        assert isinstance(hello, HelloReply) and hello.device is None and hello.reason and hello.pid
        check = worker.request(REQUESTS[3], timeout_s=60)
        assert isinstance(check, Failed) and check.status == "no_device"
        garbage = worker.call({"op": "launch"}, timeout_s=60)
        assert isinstance(garbage, dict) and garbage["status"] == "error" and "unknown op 'launch'" in garbage["reason"]
    finally:
        worker.close()
