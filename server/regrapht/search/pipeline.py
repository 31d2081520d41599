"""The optimize pipeline: one kernel, one strategy, one budget -> the fastest verified version.

`optimize` measures the original, runs the chosen strategy in a `SearchRun`, and returns an
`OptimizeResult` whose `to_json()` is exactly the `regrapht optimize` contract
(docs/cli-contract.md) plus a few added keys. `best` is only ever a candidate that
compiled, passed the differential check and was measured faster on this machine's GPU: the
simplest one within the timing noise of the fastest (search/answer.py).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from regrapht.errors import InputError
from regrapht.graph import ReasoningGraph
from regrapht.limits import DEFAULT_SEARCH_BUDGET
from regrapht.model.backend import ModelBackend
from regrapht.search.appliers import Rewrite
from regrapht.search.options import STRATEGIES, SearchOptions
from regrapht.search.run import Counters, ModelMemory, ModelUse, Progress, SearchRun, StepRecord
from regrapht.search.source import find_kernel
from regrapht.search.strategies import RUNNERS
from regrapht.spec.launch import LaunchConfig
from regrapht.text import TextEdit, compose_edits
from regrapht.validate.types import Candidate, Evaluator, Timing


@dataclass(frozen=True)
class KernelTarget:
    """What search needs from the kernel's spec: how it is launched now, and constants."""

    launch: LaunchConfig
    # Pointer element counts (and scalars) the spec fixes to integer literals, e.g. {"bins": 256}.
    constants: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class BestVersion:
    time_ms: float
    speedup: float
    techniques: tuple[str, ...]
    launch: LaunchConfig
    source: str
    steps: tuple[StepRecord, ...]  # the technique path with the speedup after each step
    # The edits of the searched text that give `source`, when every step of the path is an
    # applier's rewrite; None when a step is the model's text (the editor compares texts then).
    edits: tuple[TextEdit, ...] | None = None


@dataclass(frozen=True)
class OptimizeResult:
    kernel: str
    gpu: str | None
    arch: str
    strategy: str
    budget: int
    baseline_ms: float | None
    best: BestVersion | None
    counters: Counters
    prompt_tokens: int
    completion_tokens: int
    wall_s: float
    reason: str
    model: str | None
    model_device: str | None
    seed: int
    cancelled: bool = False
    # per kind of model call ("rewrite", "choose", "cot"): calls, seconds, and what the answers became
    model_use: Mapping[str, ModelUse] = field(default_factory=dict)
    first_faster_s: float | None = None  # seconds to the first verified faster candidate
    time_limited: bool = False  # stopped by `time_limit_s` (the best so far is kept)

    def to_json(self) -> dict[str, object]:
        best: dict[str, object] | None = None
        if self.best is not None:
            best = {
                "time_ms": self.best.time_ms,
                "speedup": self.best.speedup,
                "verified": True,
                "techniques": list(self.best.techniques),
                "launch": {"grid": list(self.best.launch.grid), "block": list(self.best.launch.block),
                           "shared_bytes": self.best.launch.shared_bytes},
                "source": self.best.source,
                "steps": [{"technique": s.technique, "note": s.note, "speedup": s.speedup} for s in self.best.steps],
            }
        return {
            "kernel": self.kernel,
            "gpu": self.gpu,
            "arch": self.arch,
            "strategy": self.strategy,
            "budget": self.budget,
            "baseline": {"time_ms": self.baseline_ms},
            "best": best,
            "candidates": {"generated": self.counters.generated, "compiled": self.counters.compiled,
                           "correct": self.counters.correct, "faster": self.counters.faster},
            "tokens": {"prompt": self.prompt_tokens, "completion": self.completion_tokens},
            "wall_s": round(self.wall_s, 3),
            "reason": self.reason,
            "model": self.model,
            "model_device": self.model_device,
            "seed": self.seed,
            "cancelled": self.cancelled,
            "model_calls": {kind: use.to_json() for kind, use in sorted(self.model_use.items())},
            "first_faster_s": None if self.first_faster_s is None else round(self.first_faster_s, 3),
            "time_limited": self.time_limited,
        }


def optimize(
    source: str,
    kernel: str,
    spec: KernelTarget,
    evaluator: Evaluator,
    model: ModelBackend | None,
    graph: ReasoningGraph | None,
    strategy: str = "mcgs",
    budget: int = DEFAULT_SEARCH_BUDGET,
    seed: int = 0,
    cancel: Callable[[], bool] | None = None,
    progress: Callable[[Progress], None] | None = None,
    *,
    options: SearchOptions | None = None,
    gpu_lock: Callable[[], AbstractContextManager[object]] | None = None,
    clock: Callable[[], float] = time.monotonic,
    on_finish: Callable[[SearchRun], None] | None = None,
    time_limit_s: float | None = None,
    model_memory: ModelMemory | None = None,
    rewrite_memo: dict[tuple[str, LaunchConfig], list[list[Rewrite]]] | None = None,
) -> OptimizeResult:
    """Optimize one kernel (module docstring); `on_finish` sees the finished search's session
    (`regrapht graph distill` reads its verified steps); `model_memory`: what earlier searches
    of this kernel learnt of the model (it is not asked where it kept failing); `rewrite_memo`:
    the appliers' rewrites by code state, shared with other searches of this kernel, spec and device."""
    if strategy not in STRATEGIES:
        raise InputError(f"unknown strategy {strategy!r} (one of {', '.join(STRATEGIES)})")
    if budget < 1:
        raise InputError(f"budget must be at least 1, got {budget}")
    if find_kernel(source, kernel) is None:
        raise InputError(f"no __global__ kernel {kernel!r} in the source")
    if time_limit_s is not None and time_limit_s <= 0:
        raise InputError(f"time limit must be positive, got {time_limit_s}")
    started = clock()
    timed_out = False
    if time_limit_s is not None:
        user_cancel = cancel

        def cancel() -> bool:
            nonlocal timed_out
            # checked between candidates: a candidate being judged is finished first
            timed_out = timed_out or clock() - started > time_limit_s
            return timed_out or (user_cancel is not None and user_cancel())
    options = options or SearchOptions()
    baseline: Timing | None = evaluator.baseline()
    session = SearchRun(
        kernel=kernel, original=Candidate(source, spec.launch, ()), evaluator=evaluator, model=model,
        graph=graph, budget=budget, rng=random.Random(seed), options=options, constants=spec.constants,
        cancel=cancel, progress=progress, gpu_lock=gpu_lock, clock=clock, started=started, seed=seed,
        model_memory=model_memory, rewrite_memo={} if rewrite_memo is None else rewrite_memo,
    )
    if strategy == "cot" and model is None:
        reason = "strategy cot needs a model"
    else:
        RUNNERS[strategy](session, graph)
        reason = ""
    best: BestVersion | None = None
    judged = session.answer()  # the simplest verified candidate within the timing noise of the fastest
    if judged is not None and judged.evaluation.outcome == "faster" and judged.evaluation.timing is not None:
        best = BestVersion(
            time_ms=judged.evaluation.timing.median_ms, speedup=judged.evaluation.speedup or 0.0,
            techniques=judged.candidate.techniques, launch=judged.candidate.launch, source=judged.candidate.source,
            steps=tuple(session.path_of(judged.candidate)), edits=applier_edits(session, judged.candidate),
        )
    if best is None and not reason:
        reason = ("time limit reached before a faster verified version was found" if timed_out
                  else _why_nothing(evaluator, session))
    session.report("done", f"best {best.speedup:.2f}x" if best else reason)
    if on_finish is not None:
        on_finish(session)
    return OptimizeResult(
        kernel=kernel, gpu=evaluator.gpu_name, arch=evaluator.arch, strategy=strategy, budget=budget,
        baseline_ms=baseline.median_ms if baseline is not None else None, best=best,
        counters=session.counters, prompt_tokens=session.prompt_tokens,
        completion_tokens=session.completion_tokens, wall_s=clock() - started, reason=reason,
        model=model.name if model is not None else None,
        model_device=model.device if model is not None else None, seed=seed,
        cancelled=session.cancelled() and not timed_out, model_use=dict(session.model_use),
        first_faster_s=session.first_faster_s, time_limited=timed_out,
    )


def applier_edits(session: SearchRun, candidate: Candidate) -> tuple[TextEdit, ...] | None:
    """The edits of the searched text that give `candidate`, composed along its path when each
    step is a rewrite an applier made of the step before (memoized per state); None otherwise."""
    steps: list[Rewrite] = []
    current = candidate
    while current.techniques:
        parent = session.parents.get(current) or next(
            (c for c in (session.original, *session.history) if c.techniques == current.techniques[:-1]), None)
        if parent is None:
            return None
        rewrite = next((r for rewrites in session.rewrites_by_applier(parent) for r in rewrites
                        if (r.source, r.launch) == (current.source, current.launch)), None)
        if rewrite is None or rewrite.base != parent.source:
            return None
        steps.append(rewrite)
        current = parent
    if current.source != session.original.source:
        return None
    edits: tuple[TextEdit, ...] = ()
    for rewrite in reversed(steps):
        edits = compose_edits(session.original.source, edits, rewrite.edits)
    return edits


def _why_nothing(evaluator: Evaluator, session: SearchRun) -> str:
    c = session.counters
    if evaluator.gpu_name is None:
        reason = getattr(evaluator, "no_device_reason", "") or "no CUDA device present"
        if c.compiled:
            return (f"{reason}: {c.compiled} candidate{'s were' if c.compiled != 1 else ' was'} compiled "
                    "but cannot be verified, so none is offered")
        tried = f"none of {c.generated} candidates compiled" if c.generated else "no candidate was made"
        return f"{reason}: {tried}, and none could be verified without a device"
    if session.cancelled():
        return "cancelled before a faster verified version was found"
    if c.generated == 0:
        return "no technique could be applied to this kernel"
    if c.correct == 0:
        return f"none of {c.generated} candidates passed the differential check"
    return f"no verified candidate was faster ({c.correct} correct of {c.generated})"
