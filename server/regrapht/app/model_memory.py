"""The model's failure memory: per (model, kernel, kind of call), how its answers fared, kept
in the shared cache dir across searches and processes, so that the search stops asking the
model where it keeps failing for a kernel (issue 12: "a model that pays for its time").

One file per (model identity, kernel) under `<cache dir>/model-outcomes/`: for each kind of
model call ("rewrite", "choose", "cot") how many answers were judged (`asked`) and how many
were correct (`correct`). After `MODEL_FAILURE_LIMIT` answers of a kind with none correct,
searches of that kernel no longer make that kind of call (`skip_reason`), until the model or
the kernel changes: the model's identity is its file (name, size, a hash of its first and last
MiB), the kernel's is a hash of its name and the whole source text, so any edit of the file asks
the model afresh. An answer counts once it is judged: correct (compiled, matched the original),
or not (no code, a refused or failed call, a compile error, a wrong result); an answer that could
not be verified (no device) does not count either way. Writes merge with what other processes
wrote meanwhile (an exclusive `flock` around read-merge-write), so parallel searches lose no
counts. The engine sees only `regrapht.search.model_policy.ModelMemory`.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

# Answers of one kind with none correct after which the model is not asked that kind of call for
# the kernel again. 3: SmolLM2-135M's answers were correct 1 time in 320 in the last H200 ablation
# (bench/results/2026-11-30-h200x2-ablation-3f68cf5) and 0 of 51 in the one before; 3 answers
# cost ~27 s of CPU per kernel, and a model that can rewrite a kernel at all should show it within
# a few tries (a larger model, a new identity, gets its own tries).
MODEL_FAILURE_LIMIT = 3
OUTCOMES_DIR = "model-outcomes"
_HASHED_BYTES = 1 << 20


@dataclass(frozen=True)
class KindRecord:
    """How one kind of model call fared on one kernel: answers judged, answers correct."""

    asked: int = 0
    correct: int = 0

    def plus(self, other: KindRecord) -> KindRecord:
        return KindRecord(self.asked + other.asked, self.correct + other.correct)


def skip_reason(record: KindRecord, limit: int = MODEL_FAILURE_LIMIT) -> str | None:
    """Why the model should not be asked again (None: ask): `limit` answers, none correct."""
    if limit > 0 and record.correct == 0 and record.asked >= limit:
        return (f"{record.asked} earlier answers for this kernel, none correct (model failure memory; "
                "asked again when the model or the kernel changes)")
    return None


def model_identity(path: Path) -> str:
    """The model file's identity: name, size and a hash of its first and last MiB (the header
    and metadata, and tensor data), so a different or re-quantized model is a new identity."""
    size = path.stat().st_size
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        digest.update(handle.read(_HASHED_BYTES))
        handle.seek(max(0, size - _HASHED_BYTES))
        digest.update(handle.read(_HASHED_BYTES))
    return f"{path.name}:{size}:{digest.hexdigest()[:16]}"


def kernel_identity(source: str, kernel: str) -> str:
    return hashlib.sha256(f"{kernel}\0{source}".encode()).hexdigest()[:32]


class KernelModelMemory:
    """The failure memory of one (model, kernel): `regrapht.search.model_policy.ModelMemory`.

    Loaded when created; `record` writes each outcome through to the file at once (merged with
    other processes' counts) and keeps the merged counts. An unreadable file is logged and
    treated as empty (the memory only saves time; it never decides what is correct)."""

    def __init__(self, directory: Path, model: str, kernel: str, kernel_name: str,
                 limit: int = MODEL_FAILURE_LIMIT) -> None:
        self.path = directory / f"{hashlib.sha256(f'{model}|{kernel}'.encode()).hexdigest()[:32]}.json"
        self.model = model
        self.kernel = kernel
        self.kernel_name = kernel_name
        self.limit = limit
        self._records = self._read()

    def record_of(self, kind: str) -> KindRecord:
        return self._records.get(kind, KindRecord())

    def skip_reason(self, kind: str) -> str | None:
        return skip_reason(self.record_of(kind), self.limit)

    def record(self, kind: str, correct: bool) -> None:
        delta = KindRecord(1, int(correct))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path.with_suffix(".lock"), "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                records = self._read()
                records[kind] = records.get(kind, KindRecord()).plus(delta)
                self._write(records)
        except OSError as error:
            logger.warning("model failure memory %s not written: %s", self.path, error)
            records = dict(self._records)
            records[kind] = records.get(kind, KindRecord()).plus(delta)
        self._records = records

    def _read(self) -> dict[str, KindRecord]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            kinds = data["kinds"]
            return {str(kind): KindRecord(int(r["asked"]), int(r["correct"])) for kind, r in kinds.items()}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            logger.warning("model failure memory %s unreadable (%s); starting it afresh", self.path, error)
            return {}

    def _write(self, records: dict[str, KindRecord]) -> None:
        data = {"model": self.model, "kernel": self.kernel_name, "kernel_hash": self.kernel,
                "kinds": {kind: {"asked": r.asked, "correct": r.correct} for kind, r in sorted(records.items())}}
        partial = self.path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        partial.replace(self.path)


def open_model_memory(cache_dir: Path, model_path: Path, source: str, kernel: str) -> KernelModelMemory:
    """The failure memory of `model_path`'s model on `kernel` of `source`, in the shared cache dir."""
    return KernelModelMemory(cache_dir / OUTCOMES_DIR, model_identity(model_path), kernel_identity(source, kernel),
                             kernel)
