"""The one GPU lock: serialises timing and on-GPU model generation, across threads and processes.

Owns a lock file in the cache dir held with `fcntl.flock` (exclusive) plus a process-wide
re-entrant thread lock, so two language servers, a CLI run and the search never time kernels
while another is using the GPU.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


class GpuLockTimeout(Exception):
    """The lock was not obtained within the given time."""


class GpuLock:
    def __init__(self, path: Path, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.path = path
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None
        self._clock = clock
        self._sleep = sleep

    @classmethod
    def in_dir(cls, cache_dir: Path) -> GpuLock:
        return cls(cache_dir / "gpu.lock")

    @contextmanager
    def hold(self, timeout_s: float | None = None) -> Iterator[None]:
        """Hold the lock for the `with` body; `GpuLockTimeout` if not obtained in `timeout_s`."""
        deadline = None if timeout_s is None else self._clock() + timeout_s
        if not self._thread_lock.acquire(timeout=-1 if timeout_s is None else timeout_s):
            raise GpuLockTimeout(f"GPU lock busy in this process for {timeout_s} s")
        try:
            if self._depth == 0:
                self._acquire_file(deadline)
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._release_file()
        finally:
            self._thread_lock.release()

    def _acquire_file(self, deadline: float | None) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if deadline is not None and self._clock() >= deadline:
                    os.close(fd)
                    raise GpuLockTimeout(f"GPU lock {self.path} held by another process") from None
                self._sleep(0.05)
        self._fd = fd

    def _release_file(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
