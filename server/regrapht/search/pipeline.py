"""The optimize pipeline: one kernel, one strategy, one budget -> the fastest verified version.

`optimize(OptimizeRequest, KernelTarget, SearchTools, SearchHooks)` measures the original, runs
the request's strategy in a `SearchRun`, and returns an
`OptimizeResult` whose `to_json()` is exactly the `regrapht optimize` contract
(docs/cli-contract.md) plus a few added keys. `best` is only ever a candidate that
compiled, passed the differential check and was measured faster on this machine's GPU: the
simplest one within the timing noise of the fastest (search/answer.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from regrapht.cuda.view import kernel_view
from regrapht.errors import InputError
from regrapht.search.answer import choose_answer
from regrapht.search.appliers import Rewrite
from regrapht.search.ledger import CandidateRecord, Counters, Judged, StepRecord
from regrapht.search.model_policy import ModelUse
from regrapht.search.options import STRATEGIES
from regrapht.search.profile_evidence import PRIOR_STRATEGIES, ProfileBoosts
from regrapht.search.request import KernelTarget, OptimizeRequest
from regrapht.search.run import SearchHooks, SearchRun, SearchTools
from regrapht.search.strategies import RUNNERS
from regrapht.spec.launch import LaunchConfig
from regrapht.techniques import Numerics, numerics_of
from regrapht.text import TextEdit, compose_edits
from regrapht.validate.types import Candidate, Evaluator, Sanitizer, Timing

__all__ = ["BestVersion", "KernelTarget", "OptimizeResult", "SearchHooks", "SearchTools", "optimize"]


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
    # What the path may do to floating-point results (regrapht/techniques.py `Numerics`):
    # "reorders" only where the kernel writes floating-point values.
    numerics: Numerics = "exact"
    # compute-sanitizer's word on it: "clean (memcheck, racecheck, synccheck)", "not run: <why>",
    # or "" where no sanitizer gate was wired
    sanitizer: str = ""
    checked: str = ""  # what the differential check compared: "4 seeds, odd size" ("" = not known)


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
    history: tuple[CandidateRecord, ...] = ()  # every candidate judged, in order (the editor's report)
    # what the request's Nsight Compute profile raised (search/profile_evidence.py); None: no profile
    profile: ProfileBoosts | None = None

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
                "numerics": self.best.numerics,
                "sanitizer": self.best.sanitizer,
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
            # the boosts the profile gave, and whether this strategy's choices read them
            "profile": None if self.profile is None else {**self.profile.to_json(),
                                                          "applied": self.strategy in PRIOR_STRATEGIES},
            # every candidate judged, in order: its technique path, parameters, verdict and times
            "judged": [record.to_json() for record in self.history],
        }


MAX_SANITIZED = 3  # answers tried under compute-sanitizer (each costs seconds per tool)


def sanitized_answer(session: SearchRun, sanitizer: Sanitizer, judged: Judged) -> tuple[Judged | None, str, str]:
    """The answer that passes compute-sanitizer: `judged`, or the next answer among the other
    verified faster candidates when a tool reports it (at most `MAX_SANITIZED` tried); with the
    sanitizer's word for the card and the title, and the last finding when none passed. A
    sanitizer that cannot run leaves the answer as it is, marked unsanitized."""
    refused: list[Candidate] = []
    finding = ""
    current: Judged | None = judged
    while current is not None and len(refused) < MAX_SANITIZED:
        session.report("sanitizing", f"compute-sanitizer on {' -> '.join(current.candidate.techniques) or 'the answer'}")
        verdict = sanitizer.sanitize(current.candidate)
        if verdict.status == "clean":
            return current, f"clean ({', '.join(verdict.tools)})", ""
        if verdict.status == "unavailable":
            session.report("sanitizing", f"compute-sanitizer not run: {verdict.reason}")
            return current, f"not run: {verdict.reason}", ""
        finding = verdict.reason
        session.report("sanitizing", f"rejected {' -> '.join(current.candidate.techniques)}: {finding}")
        refused.append(current.candidate)
        current = choose_answer([j for j in session.ledger.verified_faster if j.candidate not in refused])
    return None, "", finding


def path_numerics(techniques: tuple[str, ...], floating_outputs: bool) -> Numerics:
    """What a verified path may do to the kernel's results: a reordered sum is exact for integers."""
    found = numerics_of(techniques)
    return "exact" if found == "reorders" and not floating_outputs else found


def optimize(request: OptimizeRequest, target: KernelTarget, tools: SearchTools,
             hooks: SearchHooks | None = None) -> OptimizeResult:
    """Optimize `request.kernel` of `request.source` (module docstring) with the request's
    strategy, budget, seed, search options and time limit; `target`: what its spec says."""
    hooks = hooks or SearchHooks()
    strategy, budget, seed = request.strategy, request.budget, request.seed
    time_limit_s = request.options.time_limit_s
    evaluator, model, graph, clock = tools.evaluator, tools.model, tools.graph, hooks.clock
    if strategy not in STRATEGIES:
        raise InputError(f"unknown strategy {strategy!r} (one of {', '.join(STRATEGIES)})")
    if budget < 1:
        raise InputError(f"budget must be at least 1, got {budget}")
    if kernel_view(request.source, request.kernel) is None:
        raise InputError(f"no __global__ kernel {request.kernel!r} in the source")
    if time_limit_s is not None and time_limit_s <= 0:
        raise InputError(f"time limit must be positive, got {time_limit_s}")
    started = clock()
    timed_out = False
    cancel = hooks.cancel
    if time_limit_s is not None:
        user_cancel = cancel

        def cancel() -> bool:
            nonlocal timed_out
            # checked between candidates: a candidate being judged is finished first
            timed_out = timed_out or clock() - started > time_limit_s
            return timed_out or (user_cancel is not None and user_cancel())
    baseline: Timing | None = evaluator.baseline()
    session = SearchRun.open(request, target, tools, hooks, cancel=cancel, started=started)
    ledger = session.ledger
    if strategy == "cot" and model is None:
        reason = "strategy cot needs a model"
    else:
        RUNNERS[strategy](session, graph)
        reason = ""
    best: BestVersion | None = None
    judged = ledger.answer()  # the simplest verified candidate within the timing noise of the fastest
    sanitized = ""
    if tools.sanitizer is not None and judged is not None and not session.cancelled():
        judged, sanitized, refused = sanitized_answer(session, tools.sanitizer, judged)
        if judged is None:
            reason = f"every verified faster candidate tried failed compute-sanitizer ({refused})"
    if judged is not None and judged.evaluation.outcome == "faster" and judged.evaluation.timing is not None:
        best = BestVersion(
            time_ms=judged.evaluation.timing.median_ms, speedup=judged.evaluation.speedup or 0.0,
            techniques=judged.candidate.techniques, launch=judged.candidate.launch, source=judged.candidate.source,
            steps=tuple(ledger.path_of(judged.candidate)), edits=applier_edits(session, judged.candidate),
            numerics=path_numerics(judged.candidate.techniques, target.floating_outputs), sanitizer=sanitized,
            checked=str(judged.evaluation.details.get("checked", "")),
        )
    if best is None and not reason:
        reason = ("time limit reached before a faster verified version was found" if timed_out
                  else _why_nothing(evaluator, session))
    session.report("done", f"best {best.speedup:.2f}x" if best else reason)
    if hooks.on_finish is not None:
        hooks.on_finish(session)
    return OptimizeResult(
        kernel=request.kernel, gpu=evaluator.gpu_name, arch=evaluator.arch, strategy=strategy, budget=budget,
        baseline_ms=baseline.median_ms if baseline is not None else None, best=best,
        counters=ledger.counters, prompt_tokens=session.model_policy.prompt_tokens,
        completion_tokens=session.model_policy.completion_tokens, wall_s=clock() - started, reason=reason,
        model=model.name if model is not None else None,
        model_device=model.device if model is not None else None, seed=seed,
        cancelled=session.cancelled() and not timed_out, model_use=dict(session.model_policy.use),
        first_faster_s=ledger.first_faster_s, time_limited=timed_out, history=tuple(ledger.judged),
        profile=session.profile.boosts,
    )


def applier_edits(session: SearchRun, candidate: Candidate) -> tuple[TextEdit, ...] | None:
    """The edits of the searched text that give `candidate`, composed along its path when each
    step is a rewrite an applier made of the step before (memoized per state); None otherwise."""
    steps: list[Rewrite] = []
    current = candidate
    while current.techniques:
        parent = session.ledger.parents.get(current) or next(
            (c for c in (session.original, *session.ledger.history) if c.techniques == current.techniques[:-1]), None)
        if parent is None:
            return None
        rewrite = next((r for rewrites in session.applier_cache.by_applier(parent) for r in rewrites
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
    c = session.ledger.counters
    if evaluator.gpu_name is None:
        reason = evaluator.no_device_reason or "no CUDA device present"
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
