"""Measurements shared by every search of one kernel: a candidate judged once is not judged again.

`MeasurementCache` maps (identity, exact source, launch) to the `Evaluation` a `CudaEvaluator`
gave it: compiled, checked against the original on that evaluator's fresh random inputs, and
timed. The identity names everything else the verdict depends on: the original source, the
kernel's spec, the architecture and the GPU (`measurement_identity`). The ablation
(bench/ablation.py) hands one cache to the evaluator every configuration and seed of a task
share, so a candidate two strategies both produce is compiled, checked and timed once and both
get the same timing: strategies are compared on what they find, not on timing noise.

Only verdicts that the identical text would get again are kept: faster, slower, wrong,
compile_error, rejected, unverified. A crash or a timeout may be the worker's fault, not the
candidate's, so it is judged afresh. Nothing is keyed by anything less than the exact source
and launch: a candidate that differs by one character is judged on its own.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, replace

from regrapht.spec.launch import LaunchConfig
from regrapht.validate.types import Candidate, Evaluation, Timing

REUSABLE_OUTCOMES = frozenset({"faster", "slower", "wrong", "compile_error", "rejected", "unverified"})


def measurement_identity(original_source: str, spec_text: str, arch: str, gpu_name: str | None) -> str:
    """What a verdict depends on besides the candidate: the original (its source), the spec of
    the kernel (sizes, dtypes, tolerances, launch), the architecture and the device."""
    digest = hashlib.sha256()
    for part in (original_source, spec_text, arch, gpu_name or "no device"):
        digest.update(part.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


def candidate_digest(source: str, launch: LaunchConfig) -> str:
    """A candidate's exact source and launch as one hex digest."""
    digest = hashlib.sha256(source.encode("utf-8"))
    for part in (*launch.grid, "\0", *launch.block, "\0", str(launch.shared_bytes)):
        digest.update(b"\0" + str(part).encode("utf-8"))
    return digest.hexdigest()


@dataclass(frozen=True)
class CacheStats:
    hits: int
    misses: int
    stored: int

    def to_json(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "stored": self.stored}


class MeasurementCache:
    """Evaluations by (identity, source, launch), and the original's timing by identity;
    thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._evaluations: dict[tuple[str, str, LaunchConfig], Evaluation] = {}
        self._baselines: dict[str, Timing] = {}
        self._hits = 0
        self._misses = 0

    def get(self, identity: str, candidate: Candidate) -> Evaluation | None:
        """The stored verdict of this exact candidate, marked `measurement_reused` in its details."""
        with self._lock:
            found = self._evaluations.get((identity, candidate.source, candidate.launch))
            if found is None:
                self._misses += 1
                return None
            self._hits += 1
        return replace(found, details={**found.details, "measurement_reused": True})

    def put(self, identity: str, candidate: Candidate, evaluation: Evaluation) -> None:
        if evaluation.outcome not in REUSABLE_OUTCOMES:
            return
        with self._lock:
            self._evaluations.setdefault((identity, candidate.source, candidate.launch), evaluation)

    def baseline(self, identity: str) -> Timing | None:
        with self._lock:
            return self._baselines.get(identity)

    def put_baseline(self, identity: str, timing: Timing) -> None:
        with self._lock:
            self._baselines.setdefault(identity, timing)

    def entries(self) -> list[dict[str, object]]:
        """Every stored verdict as JSON, keyed by `candidate_digest` (what an offline replay of a
        search looks candidates up by): outcome, speedup, median ms."""
        with self._lock:
            stored = list(self._evaluations.items())
        return [{"digest": candidate_digest(source, launch), "outcome": e.outcome, "speedup": e.speedup,
                 "median_ms": e.timing.median_ms if e.timing is not None else None}
                for (_identity, source, launch), e in stored]

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(self._hits, self._misses, len(self._evaluations))
