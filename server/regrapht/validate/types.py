"""The contract between search and validation: a candidate, and what validating it found.

A `Candidate` is a whole new file text plus the launch configuration it asks for
(`regrapht.spec.launch`: expressions in the spec's language). The validation engine turns it
into an `Evaluation`; search turns an `Evaluation` into a reward. Nothing here imports pycuda: `Evaluator` implementations do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from regrapht.spec.launch import LaunchConfig

Outcome = Literal[
    "faster",  # compiled, correct, measured faster than the baseline
    "slower",  # compiled, correct, not faster
    "wrong",  # compiled, differential check failed (values, unwritten elements, wrote an input...)
    "compile_error",
    "crashed",  # illegal address, launch failure, out of memory: the worker died or reported it
    "timeout",  # hang: the worker was killed
    "unverified",  # compiled, but no device to run it on
    "rejected",  # violates the contract before compiling (renamed kernel, changed parameters)
]


@dataclass(frozen=True)
class Candidate:
    source: str  # the whole file text
    launch: LaunchConfig
    techniques: tuple[str, ...] = ()  # the technique path that produced it


@dataclass(frozen=True)
class Timing:
    median_ms: float
    p10_ms: float
    p90_ms: float
    runs: int


@dataclass(frozen=True)
class Evaluation:
    outcome: Outcome
    reason: str = ""  # human-readable, e.g. "out[17]: 3.0 != 2.0 (seed 2)"
    timing: Timing | None = None
    speedup: float | None = None  # baseline median / candidate median
    details: dict[str, object] = field(default_factory=dict)

    @property
    def verified(self) -> bool:
        return self.outcome in ("faster", "slower")


class Evaluator(Protocol):
    """Validates candidates of one kernel against its original (one spec, one device), and
    says what search needs of that device: its limits (for the appliers), why there is none,
    and the GPU lock for work beside the evaluator's own (on-GPU generation)."""

    @property
    def gpu_name(self) -> str | None: ...  # None without a device

    @property
    def arch(self) -> str: ...

    @property
    def device(self) -> Mapping[str, Any] | None:
        """The device as the GPU worker describes it (`worker_protocol.DeviceInfo.to_wire`:
        "sms", "max_threads_per_block"...); None without a device."""
        ...

    @property
    def no_device_reason(self) -> str:
        """Why there is no device (shown to the user); "" with one."""
        ...

    def hold_gpu(self) -> AbstractContextManager[object]:
        """The GPU lock, held while other work uses the device (a model generating on it)."""
        ...

    def baseline(self) -> Timing | None: ...

    def evaluate(self, candidate: Candidate) -> Evaluation: ...


@runtime_checkable
class BatchEvaluator(Evaluator, Protocol):
    """An evaluator that judges several candidates at once (compiling them in parallel)."""

    def evaluate_many(self, candidates: Sequence[Candidate]) -> list[Evaluation]: ...


SanitizerStatus = Literal["clean", "dirty", "unavailable"]


@dataclass(frozen=True)
class Sanitized:
    """What compute-sanitizer said of a candidate: clean under every tool, a finding (the tool
    and its first report), or that it could not run (missing, the device refused it)."""

    status: SanitizerStatus
    tools: tuple[str, ...] = ()  # the tools that ran (all of them when clean)
    reason: str = ""  # the finding, or why the sanitizer could not run


@runtime_checkable
class Sanitizer(Protocol):
    """Runs a verified candidate under compute-sanitizer before it is offered (validate/sanitizer.py)."""

    def sanitize(self, candidate: Candidate) -> Sanitized: ...
