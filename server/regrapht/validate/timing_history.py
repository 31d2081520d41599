"""`TimingHistory`: the measured times of each kernel, per file, GPU and code version, kept in
the cache dir, and the regression a new measurement shows against the last one.

Background validation (app/validation.py) records every fresh measurement here. A version is
the digest of the file's text; one JSON file per (file, kernel, GPU) keeps the last
`MAX_VERSIONS` versions, each with its median and p10/p90 times, when it was measured and its
text (so the editor can show the faster one). A kernel regressed when its median is at least
`MIN_RATIO` times the previous version's and its p10 lies above that version's p90: slower by
more than either measurement's spread, not by noise.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

MAX_VERSIONS = 8
MIN_RATIO = 1.05  # below this a slowdown is not reported, however tight the spread


@dataclass(frozen=True)
class Measured:
    digest: str  # sha256 of the file's text at the measurement
    median_ms: float
    p10_ms: float
    p90_ms: float
    at: float  # seconds since the epoch
    text: str  # the file's text then

    @property
    def clock(self) -> str:
        """When it was measured, as the user reads it: "10:02" (local time)."""
        return time.strftime("%H:%M", time.localtime(self.at))


@dataclass(frozen=True)
class Regression:
    kernel: str
    before: Measured  # the previous version's measurement
    now: Measured
    faster: Measured  # the fastest version kept (often `before`), for "show the faster version"

    @property
    def ratio(self) -> float:
        return self.now.median_ms / self.before.median_ms

    def message(self) -> str:
        return (f"{self.kernel} is {self.ratio:.1f}x slower than at {self.before.clock}: "
                f"{self.before.median_ms:.4g} -> {self.now.median_ms:.4g} ms (beyond both measurements' "
                f"spread); the version of {self.faster.clock} took {self.faster.median_ms:.4g} ms")


def regressed(before: Measured, now: Measured) -> bool:
    return now.median_ms >= before.median_ms * MIN_RATIO and now.p10_ms > before.p90_ms


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class TimingHistory:
    folder: Path  # <cache dir>/timings: one JSON file per (file, kernel), versions per GPU

    def _path(self, file: str, kernel: str) -> Path:
        key = hashlib.sha256("\0".join((file, kernel)).encode()).hexdigest()[:32]
        return self.folder / f"{key}.json"

    def _read(self, file: str, kernel: str) -> dict[str, list[Measured]]:
        """Every GPU's kept measurements, oldest first; none for an unreadable or foreign file."""
        try:
            data = json.loads(self._path(file, kernel).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        by_gpu = data.get("by_gpu") if isinstance(data, dict) else None
        found: dict[str, list[Measured]] = {}
        for gpu, rows in (by_gpu.items() if isinstance(by_gpu, dict) else ()):
            try:
                found[str(gpu)] = [Measured(str(r["digest"]), float(r["median_ms"]), float(r["p10_ms"]),
                                            float(r["p90_ms"]), float(r["at"]), str(r["text"])) for r in rows]
            except (KeyError, TypeError, ValueError):
                return {}  # another shape: start again rather than misread it
        return found

    def gpus(self, file: str, kernel: str) -> tuple[str, ...]:
        return tuple(self._read(file, kernel))

    def versions(self, file: str, kernel: str, gpu: str) -> list[Measured]:
        return self._read(file, kernel).get(gpu, [])

    def record(self, file: str, kernel: str, gpu: str, now: Measured) -> Regression | None:
        """Keep `now` (replacing an earlier measurement of the same text) and say whether it is a
        regression against the previous version of the file on that GPU."""
        by_gpu = self._read(file, kernel)
        versions = [v for v in by_gpu.get(gpu, []) if v.digest != now.digest]
        before = versions[-1] if versions else None
        by_gpu[gpu] = [*versions, now][-MAX_VERSIONS:]
        self.folder.mkdir(parents=True, exist_ok=True)
        handle, partial = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump({"file": file, "kernel": kernel,
                       "by_gpu": {g: [asdict(v) for v in kept] for g, kept in by_gpu.items()}}, out)
        os.replace(partial, self._path(file, kernel))
        if before is None or not regressed(before, now):
            return None
        return Regression(kernel, before, now, min(versions, key=lambda v: v.median_ms))

    def fastest(self, file: str, kernel: str, gpu: str) -> Measured | None:
        return min(self.versions(file, kernel, gpu), key=lambda v: v.median_ms, default=None)
