"""The parent side of the GPU worker process: start it, talk msgpack over pipes, survive it.

Owns the framing (4-byte big-endian length + msgpack map, both directions), request timeouts,
and classifying a dead or silent worker: no reply within the timeout -> the worker is killed
and the request fails as "timeout"; the process exits or the pipe breaks -> "crashed" with the
worker's last stderr lines. After a failure the next request starts a fresh worker, so a bad
candidate costs one process, never the caller. The child is `regrapht.validate.gpu_worker`;
tests pass another command (a fake runner) speaking the same protocol.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import msgpack

from regrapht.children import WORKER_MEMORY_BYTES, Child, python_module_env, size_text
from regrapht.validate.worker_protocol import Reply, Request, reply_from_wire, to_wire

_HEADER = struct.Struct(">I")
MAX_FRAME = 1 << 31


def default_command() -> list[str]:
    return [sys.executable, "-m", "regrapht.validate.gpu_worker"]


def worker_env(base: Mapping[str, str]) -> dict[str, str]:
    """The environment for the child: the parent's, with this package importable."""
    return python_module_env(base)


@dataclass(frozen=True)
class WorkerFailure:
    kind: Literal["timeout", "crashed"]
    reason: str


def encode_frame(message: Mapping[str, Any]) -> bytes:
    payload = msgpack.packb(message, use_bin_type=True)
    return _HEADER.pack(len(payload)) + payload


class GpuWorker:
    """One worker process at a time; `call` is serialised by an internal lock."""

    def __init__(
        self,
        command: Sequence[str] | None = None,
        *,
        env: Mapping[str, str] | None = None,
        start_timeout_s: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.command = list(command) if command is not None else default_command()
        self.env = worker_env(env if env is not None else os.environ)
        self.start_timeout_s = start_timeout_s
        self._clock = clock
        self._process: subprocess.Popen[bytes] | None = None
        self._child: Child | None = None
        self.memory_bytes = WORKER_MEMORY_BYTES
        self._stderr_tail: deque[str] = deque(maxlen=20)
        self._lock = threading.Lock()
        self._info: dict[str, Any] | None = None
        self.restarts = 0
        self._starts = 0

    # -- lifecycle -------------------------------------------------------------------------
    def _start(self) -> None:
        self._stderr_tail.clear()
        # own process group, private TMPDIR, stdin a pipe of ours (never the server's)
        self._child = Child(self.command, env=self.env, pipe_stdin=True, tmp_prefix="regrapht-gpu-worker-")
        self._process = self._child.process
        stderr = self._process.stderr
        assert stderr is not None
        tail = self._stderr_tail

        def drain() -> None:
            for raw in iter(stderr.readline, b""):
                tail.append(raw.decode("utf-8", "replace").rstrip())
            stderr.close()

        threading.Thread(target=drain, name="gpu-worker-stderr", daemon=True).start()

    def _kill(self) -> None:
        child, self._child, self._process = self._child, None, None
        if child is not None:
            child.end(close_stderr=False)  # the whole process group, then its TMPDIR

    def close(self, wait_s: float = 5.0) -> None:
        """Asks the worker to exit, waits up to `wait_s` for it (a tool it runs under, such as
        compute-sanitizer, writes its report then), and kills what is left."""
        with self._lock:
            if self._process is not None and self._process.poll() is None:
                self._send_quietly({"op": "exit"})
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._process.wait(timeout=wait_s)
            self._kill()

    def __enter__(self) -> GpuWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    # -- requests ---------------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        """The worker's `hello` reply: {"device": {...} | None, "reason": str}; cached."""
        if self._info is None:
            reply = self.call({"op": "hello"}, timeout_s=self.start_timeout_s)
            if isinstance(reply, WorkerFailure):
                return {"device": None, "reason": f"GPU worker failed to start: {reply.reason}"}
            self._info = reply
        return self._info

    def request(self, request: Request, *, timeout_s: float) -> Reply | WorkerFailure:
        """`call` with a typed request (worker_protocol.py) and its typed reply."""
        reply = self.call(to_wire(request), timeout_s=timeout_s)
        return reply if isinstance(reply, WorkerFailure) else reply_from_wire(request, reply)

    def call(self, request: Mapping[str, Any], *, timeout_s: float) -> dict[str, Any] | WorkerFailure:
        """Send one request and wait for its reply; a failure restarts the worker next time."""
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                if self._process is not None:
                    self._kill()
                if self._starts:
                    self.restarts += 1
                self._starts += 1
                self._start()
            process = self._process
            assert process is not None and process.stdin is not None and process.stdout is not None
            try:
                process.stdin.write(encode_frame(request))
                process.stdin.flush()
            except (BrokenPipeError, OSError):
                return self._crashed("the worker's input pipe broke")
            reply = self._read_frame(process, self._clock() + timeout_s)
            if isinstance(reply, WorkerFailure):
                return reply
            if reply.get("status") == "fatal":
                # the worker reported an unrecoverable device error and is exiting
                self._kill()
                return WorkerFailure("crashed", str(reply.get("reason", "device error")))
            return reply

    def _crashed(self, what: str) -> WorkerFailure:
        process = self._process
        code = process.poll() if process is not None else None
        self._kill()
        time.sleep(0.05)  # let the stderr reader catch the last lines
        tail = " | ".join(line for line in list(self._stderr_tail)[-4:] if line)
        detail = f"{what} (exit code {code})" if code is not None else what
        return WorkerFailure("crashed", f"{detail}: {tail}" if tail else detail)

    def _read_exactly(self, process: subprocess.Popen[bytes], size: int, deadline: float) -> bytes | WorkerFailure:
        assert process.stdout is not None
        fd = process.stdout.fileno()
        chunks: list[bytes] = []
        needed = size
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while needed:
                remaining = deadline - self._clock()
                if remaining <= 0:
                    self._kill()
                    return WorkerFailure("timeout", "no reply from the GPU worker in time; it was killed")
                if not selector.select(timeout=min(remaining, 1.0)):
                    if (over := self._over_memory()) is not None:
                        return over
                    continue
                chunk = os.read(fd, min(needed, 1 << 20))
                if not chunk:
                    return self._crashed("the GPU worker exited")
                chunks.append(chunk)
                needed -= len(chunk)
        return b"".join(chunks)

    def _over_memory(self) -> WorkerFailure | None:
        """Checked while waiting: CUDA reserves too much address space for an rlimit to work."""
        child = self._child
        if child is None or not self.memory_bytes or child.anon_rss_bytes() <= self.memory_bytes:
            return None
        self._kill()
        return WorkerFailure("crashed", f"the GPU worker used more than {size_text(self.memory_bytes)} of host "
                                        "memory; it was stopped")

    def _read_frame(self, process: subprocess.Popen[bytes], deadline: float) -> dict[str, Any] | WorkerFailure:
        header = self._read_exactly(process, _HEADER.size, deadline)
        if isinstance(header, WorkerFailure):
            return header
        (length,) = _HEADER.unpack(header)
        if length > MAX_FRAME:
            return self._crashed(f"the GPU worker sent a malformed frame ({length} bytes)")
        payload = self._read_exactly(process, length, deadline)
        if isinstance(payload, WorkerFailure):
            return payload
        try:
            reply = msgpack.unpackb(payload, raw=False)
        except (ValueError, msgpack.UnpackException):
            return self._crashed("the GPU worker sent an unreadable reply")
        if not isinstance(reply, dict):
            return self._crashed("the GPU worker sent a reply that is not a map")
        return reply

    def _send_quietly(self, request: Mapping[str, Any]) -> None:
        process = self._process
        if process is None or process.stdin is None:
            return
        try:
            process.stdin.write(encode_frame(request))
            process.stdin.flush()
        except (BrokenPipeError, OSError):
            return
