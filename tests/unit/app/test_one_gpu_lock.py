"""One GPU lock for both workflows: a validation on save and a running search of the same
server never time kernels at the same moment.

Both workflows run for real (nvcc compiles the original and the candidates; the evaluator
plans checks and timings) over one `GpuResources`, as `regrapht.lsp.server.create_server` wires
them; the GPU worker is a stand-in that records every check and timing, checks that the lock
file of the resources' cache dir is held while it "runs" (another open file description of it
cannot be locked), and takes a little time so that overlaps would show. Before the shared
resources, validation held `<folder>/.regrapht-cache/gpu.lock` and Optimize
`~/.cache/regrapht/gpu.lock`: this test fails on that code.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest

from regrapht.app.controller import OptimizeController
from regrapht.app.resources import GpuResources
from regrapht.app.validation import ValidationService
from regrapht.lsp.state import ServerState
from regrapht.settings import Settings
from regrapht.validate.worker import GpuWorker
from regrapht.validate.worker_protocol import Reply, Request, reply_from_wire, to_wire

from .test_controller import RecordingEditor

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
DEVICE = {"name": "Fake H200", "cc": [9, 0], "l2_bytes": 1 << 20, "sms": 132, "total_bytes": 1 << 34, "driver": 0}


@dataclass
class RecordingWorker:
    """The GpuWorker interface: device work takes `seconds`, is recorded, and must hold the lock."""

    lock_file: Path
    seconds: float = 0.02
    intervals: list[tuple[float, float, str, str]] = field(default_factory=list)  # start, end, op, thread
    unlocked: list[str] = field(default_factory=list)
    _guard: threading.Lock = field(default_factory=threading.Lock)

    def info(self) -> dict[str, Any]:
        return {"status": "ok", "device": DEVICE, "reason": ""}

    def request(self, request: Request, *, timeout_s: float) -> Reply:
        return reply_from_wire(request, self.call(to_wire(request), timeout_s=timeout_s))

    def call(self, request: dict[str, Any], *, timeout_s: float) -> dict[str, Any]:
        op = request["op"]
        if op == "prepare":
            return {"status": "ok", "generated": 0}
        if not self._lock_held():
            self.unlocked.append(op)
        started = time.monotonic()
        time.sleep(self.seconds)
        self.intervals.append((started, time.monotonic(), op, threading.current_thread().name))
        if op == "time":
            return {"status": "ok", "times_ms": [1.0] * 20}
        if op == "peaks":
            return {"status": "ok", "gbps": 4000.0, "gflops": 60000.0, "device": DEVICE}
        return {"status": "ok", "trials": 6, "workspace_created": False, "references_run": 0, "workspaces": 1}

    def _lock_held(self) -> bool:
        fd = os.open(self.lock_file, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # closing drops a lock this probe may have taken
        return False

    def close(self) -> None:
        pass


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
async def test_validation_and_search_never_time_kernels_at_the_same_moment(tmp_path: Path) -> None:
    folder = tmp_path / "workspace"
    folder.mkdir()
    for name in ("saxpy.cu", "saxpy.regrapht.toml"):
        shutil.copy(EXAMPLES / name, folder / name)
    source = folder / "saxpy.cu"
    env = {**os.environ, "REGRAPHT_CACHE_DIR": str(tmp_path / "cache"), "XDG_DATA_HOME": str(tmp_path / "data")}
    worker = RecordingWorker(tmp_path / "cache" / "gpu.lock")
    resources = GpuResources(env, tmp_path, make_worker=lambda environment: cast(GpuWorker, worker))
    state = ServerState()
    state.settings = Settings(search_strategy="rules", search_budget=8)
    state.loop = asyncio.get_running_loop()
    controller = OptimizeController(state, RecordingEditor(state), resources)
    validation = ValidationService(resources)
    document = state.open(source.as_uri(), source.read_text(), 1)

    await controller.start(state.snapshot(document, state.ensure_analysis(document), source), "saxpy")
    run = controller.registry.running((document.uri, "saxpy"))
    assert run is not None and run.task is not None
    validations = 0

    def validate_while_searching() -> None:  # what did_save does, in a worker thread
        nonlocal validations
        while not run.task.done() or validations == 0:  # type: ignore[union-attr]
            done = validation.run(source, document.text, ("saxpy",))
            assert done is not None and done[1].kernels[0].error is None, done
            validations += 1

    await asyncio.gather(run.task, asyncio.to_thread(validate_while_searching))

    by_thread = {thread for _start, _end, _op, thread in worker.intervals}
    assert "regrapht-optimize" in by_thread and len(by_thread) >= 2, by_thread  # both workflows used the GPU
    assert {op for _s, _e, op, _t in worker.intervals} >= {"check", "time"}
    assert worker.unlocked == []  # every check and timing held the one lock
    ordered = sorted(worker.intervals)
    overlaps = [(a, b) for a, b in zip(ordered, ordered[1:], strict=False) if b[0] < a[1]]
    assert overlaps == []
    assert not (folder / ".regrapht-cache").exists()  # no second cache dir (and lock) per workspace folder
