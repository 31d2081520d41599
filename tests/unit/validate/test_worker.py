"""The GPU worker protocol with fake runners: replies, timeouts, crashes and restarts."""

from __future__ import annotations

import sys
import textwrap
import threading
from pathlib import Path

import pytest

from regrapht.validate.gpu_lock import GpuLock, GpuLockTimeout
from regrapht.validate.worker import GpuWorker, WorkerFailure

FAKE = textwrap.dedent("""
    import os, struct, sys, time, msgpack
    out = os.fdopen(os.dup(1), "wb"); os.dup2(2, 1)
    inp = sys.stdin.buffer
    while True:
        head = inp.read(4)
        if len(head) < 4:
            break
        req = msgpack.unpackb(inp.read(struct.unpack(">I", head)[0]), raw=False)
        op = req["op"]
        if op == "hello":
            reply = {"status": "ok", "device": {"name": "Fake GPU", "cc": [9, 0]}, "reason": "", "pid": os.getpid()}
        elif op == "hang":
            time.sleep(3600)
        elif op == "crash":
            print("Segmentation fault (fake)", file=sys.stderr, flush=True)
            os._exit(139)
        elif op == "fatal":
            reply = {"status": "fatal", "reason": "an illegal memory access was encountered"}
        elif op == "garbage":
            out.write(b"\\x00\\x00\\x00\\x03abc"); out.flush(); continue
        elif op == "print":
            print("noise on stdout"); reply = {"status": "ok", "echo": req.get("value")}
        else:
            reply = {"status": "ok", "echo": req.get("value"), "pid": os.getpid()}
        data = msgpack.packb(reply, use_bin_type=True)
        out.write(struct.pack(">I", len(data)) + data); out.flush()
        if reply.get("status") == "fatal":
            os._exit(3)
""")


@pytest.fixture
def worker(tmp_path: Path):
    script = tmp_path / "fake_worker.py"
    script.write_text(FAKE)
    with GpuWorker([sys.executable, str(script)], start_timeout_s=30) as w:
        yield w


def test_round_trip_and_info(worker: GpuWorker) -> None:
    assert worker.info()["device"]["name"] == "Fake GPU"
    reply = worker.call({"op": "echo", "value": b"\x00" * 100_000}, timeout_s=30)
    assert not isinstance(reply, WorkerFailure) and reply["echo"] == b"\x00" * 100_000
    noisy = worker.call({"op": "print", "value": 3}, timeout_s=30)
    assert not isinstance(noisy, WorkerFailure) and noisy["echo"] == 3


def test_timeout_kills_the_worker_and_the_next_call_restarts(worker: GpuWorker) -> None:
    first = worker.call({"op": "echo", "value": 1}, timeout_s=30)
    assert not isinstance(first, WorkerFailure)
    result = worker.call({"op": "hang"}, timeout_s=1.0)
    assert isinstance(result, WorkerFailure) and result.kind == "timeout"
    after = worker.call({"op": "echo", "value": 2}, timeout_s=30)
    assert not isinstance(after, WorkerFailure) and after["echo"] == 2 and after["pid"] != first["pid"]


def test_crash_is_reported_with_stderr_and_survived(worker: GpuWorker) -> None:
    result = worker.call({"op": "crash"}, timeout_s=30)
    assert isinstance(result, WorkerFailure) and result.kind == "crashed"
    assert "exit" in result.reason
    assert not isinstance(worker.call({"op": "echo", "value": 1}, timeout_s=30), WorkerFailure)
    assert worker.restarts >= 1


def test_fatal_device_error_and_garbage_are_crashes(worker: GpuWorker) -> None:
    fatal = worker.call({"op": "fatal"}, timeout_s=30)
    assert isinstance(fatal, WorkerFailure) and fatal.kind == "crashed" and "illegal memory" in fatal.reason
    garbage = worker.call({"op": "garbage"}, timeout_s=30)
    assert isinstance(garbage, WorkerFailure) and garbage.kind == "crashed"
    assert not isinstance(worker.call({"op": "echo", "value": 1}, timeout_s=30), WorkerFailure)


def test_real_worker_without_pycuda_reports_no_device() -> None:
    with GpuWorker() as real:
        info = real.info()
    if info.get("device") is not None:
        pytest.skip("a CUDA device is present")
    assert info["reason"]


def test_gpu_lock_excludes_other_holders(tmp_path: Path) -> None:
    lock = GpuLock(tmp_path / "gpu.lock")
    other = GpuLock(tmp_path / "gpu.lock")  # another process's lock object on the same file
    with lock.hold(), lock.hold():  # re-entrant in one thread
        with pytest.raises(GpuLockTimeout), other.hold(timeout_s=0.2):
            pass
        blocked: list[bool] = []

        def try_other_thread() -> None:
            try:
                with lock.hold(timeout_s=0.2):
                    blocked.append(False)
            except GpuLockTimeout:
                blocked.append(True)

        thread = threading.Thread(target=try_other_thread)
        thread.start()
        thread.join()
        assert blocked == [True]
    with other.hold(timeout_s=1):
        pass
