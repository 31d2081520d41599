"""Test doubles for search: an evaluator judging by text, and a session with scripted steps."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from regrapht.search.appliers import ApplierInput, Rewrite
from regrapht.search.options import SearchOptions
from regrapht.search.request import OptimizeOptions, OptimizeRequest
from regrapht.search.run import FAILED, SearchRun, StepResult
from regrapht.validate.types import Candidate, Evaluation, Timing

BASE_MS = 1.0


def search_request(source: str, kernel: str, strategy: str, budget: int, seed: int = 0, *,
                   options: SearchOptions | None = None, time_limit_s: float | None = None) -> OptimizeRequest:
    """The request a search test runs: `source`'s `kernel` with the search options given."""
    return OptimizeRequest(kernel, source, strategy=strategy, budget=budget, seed=seed,
                           options=OptimizeOptions(search=options or SearchOptions(), time_limit_s=time_limit_s))


@dataclass
class FakeEvaluator:
    """`judge(candidate) -> speedup | None`: None = wrong; with `gpu_name=None`, "unverified"."""

    judge: Callable[[Candidate], float | None]
    gpu_name: str | None = "Fake GPU"
    arch: str = "sm_90"
    device: Mapping[str, Any] | None = None  # no device limits: the appliers' defaults
    seen: list[Candidate] = field(default_factory=list)

    @property
    def no_device_reason(self) -> str:
        return "" if self.gpu_name else "no CUDA device present"

    def hold_gpu(self) -> AbstractContextManager[object]:
        return nullcontext()

    def baseline(self) -> Timing | None:
        return Timing(BASE_MS, BASE_MS, BASE_MS, 20) if self.gpu_name else None

    def evaluate(self, candidate: Candidate) -> Evaluation:
        self.seen.append(candidate)
        if self.gpu_name is None:
            return Evaluation("unverified", "no CUDA device present")
        speedup = self.judge(candidate)
        if speedup is None:
            return Evaluation("wrong", "out[0] differs")
        timing = Timing(BASE_MS / speedup, BASE_MS / speedup, BASE_MS / speedup, 20)
        return Evaluation("faster" if speedup > 1.0 else "slower", "", timing, speedup)


@dataclass
class ScriptedSteps(SearchRun):
    """A session whose technique applications return scripted rewards (one evaluation each)."""

    rewards: dict[str, float] = field(default_factory=dict)
    applied: list[tuple[str, ...]] = field(default_factory=list)
    matching: list[str] = field(default_factory=list)  # techniques whose "applier" matches, in APPLIERS order

    def apply_technique(self, state: Candidate, previous: str, technique: str, *,
                        variants: int | None = None) -> StepResult:
        self.ledger.evaluated += 1
        path = (*state.techniques, technique)
        self.applied.append(path)
        reward = self.rewards.get(technique, 0.0)
        if reward <= FAILED:
            return StepResult(technique, None, FAILED, Evaluation("wrong"))
        new = Candidate(state.source + f"\n// {technique}", state.launch, path)
        return StepResult(technique, new, reward, Evaluation("faster", speedup=reward))

    def applicable(self, state: Candidate) -> list:  # type: ignore[type-arg]
        return [SimpleNamespace(technique=t, also=()) for t in self.matching]


@dataclass(frozen=True)
class Restrict:
    """A fake `restrict_const` applier: appends " restrict" to any code that lacks it."""

    technique: str = "restrict_const"
    also: tuple[str, ...] = ()

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        if "restrict" in given.source:
            return []
        return [Rewrite(given.source + " restrict", given.launch, "restrict")]
