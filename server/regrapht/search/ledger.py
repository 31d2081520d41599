"""`CandidateLedger`: every candidate one search judged, and what the search builds on.

One verdict per distinct (source, launch), the budget they spend (one unit per candidate
judged: evaluated by the evaluator or rejected before it), the counters of the CLI contract,
the fastest verified candidate (what the search builds on), every verified faster one (what the
answer is chosen from: search/answer.py) and the step that produced each code state (its
technique, note and measured speedup, and the code it rewrote), and a `CandidateRecord` of every
candidate judged (the run's history the editor's report shows). No evaluator, model or progress
here: `SearchRun` judges, the ledger records.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from regrapht.search.answer import choose_answer
from regrapht.spec.launch import LaunchConfig
from regrapht.validate.types import Candidate, Evaluation

FAILED = -1.0
COMPILED = ("faster", "slower", "wrong", "crashed", "timeout", "unverified")  # the outcomes of a compiled candidate


def reward_of(evaluation: Evaluation) -> float:
    """The paper's reward: -1 wrong or not compiled; speedup-1 correct but slower; speedup faster.

    `unverified` (compiled, no device to check it on) scores 0: neither proven good nor bad, so
    that a compile-only search still explores chains of techniques.
    """
    if evaluation.outcome == "faster" and evaluation.speedup is not None:
        return evaluation.speedup
    if evaluation.outcome == "slower" and evaluation.speedup is not None:
        return evaluation.speedup - 1.0
    if evaluation.outcome == "unverified":
        return 0.0
    return FAILED


@dataclass
class Counters:
    generated: int = 0
    compiled: int = 0
    correct: int = 0
    faster: int = 0


@dataclass(frozen=True)
class Judged:
    candidate: Candidate
    evaluation: Evaluation
    reward: float
    note: str


@dataclass(frozen=True)
class CandidateRecord:
    """One judged candidate as the run's history shows it (the report's table and chart): its
    technique path, the applier's note (its parameters), the verdict and why, the speedup and
    median time when measured, the seconds compiling, checking and timing it took, and its code."""

    index: int  # 1-based, in the order judged
    techniques: tuple[str, ...]
    note: str
    outcome: str
    reason: str
    speedup: float | None
    time_ms: float | None
    compile_s: float | None
    check_s: float | None
    time_s: float | None
    source: str

    def to_json(self, *, source: bool = False) -> dict[str, object]:
        data: dict[str, object] = {
            "index": self.index, "techniques": list(self.techniques), "note": self.note, "outcome": self.outcome,
            "reason": self.reason, "speedup": self.speedup, "time_ms": self.time_ms, "compile_s": self.compile_s,
            "check_s": self.check_s, "time_s": self.time_s,
        }
        if source:
            data["source"] = self.source
        return data


def _seconds(details: dict[str, object], key: str) -> float | None:
    value = details.get(key)
    return float(value) if isinstance(value, int | float) else None


def candidate_record(index: int, candidate: Candidate, evaluation: Evaluation, note: str) -> CandidateRecord:
    return CandidateRecord(
        index=index, techniques=candidate.techniques, note=note, outcome=evaluation.outcome,
        reason=evaluation.reason, speedup=evaluation.speedup,
        time_ms=evaluation.timing.median_ms if evaluation.timing is not None else None,
        compile_s=_seconds(evaluation.details, "compile_s"), check_s=_seconds(evaluation.details, "check_s"),
        time_s=_seconds(evaluation.details, "time_s"), source=candidate.source,
    )


@dataclass(frozen=True)
class StepRecord:
    """One step of the path that produced a candidate, for the hover card."""

    technique: str
    note: str
    speedup: float | None


@dataclass
class CandidateLedger:
    budget: int
    clock: Callable[[], float] = time.monotonic
    started: float | None = None  # clock() when the search began (for `first_faster_s`)
    counters: Counters = field(default_factory=Counters)
    evaluated: int = 0  # budget spent
    best: Judged | None = None  # the fastest verified candidate: what the search builds on
    verified_faster: list[Judged] = field(default_factory=list)  # every verified faster candidate, in order
    history: dict[Candidate, StepRecord] = field(default_factory=dict)
    parents: dict[Candidate, Candidate] = field(default_factory=dict)  # step result -> the code it rewrote
    first_faster_s: float | None = None  # seconds from `started` to the first verified faster candidate
    judged: list[CandidateRecord] = field(default_factory=list)  # every candidate judged, in order
    _verdicts: dict[tuple[str, LaunchConfig], Evaluation] = field(default_factory=dict)

    def spent(self) -> bool:
        return self.evaluated >= self.budget

    def room(self) -> int:
        """Candidates the budget still pays for."""
        return self.budget - self.evaluated

    def verdict(self, source: str, launch: LaunchConfig) -> Evaluation | None:
        """What the code `source` under `launch` was judged (None: not judged yet)."""
        return self._verdicts.get((source, launch))

    def evaluation_of(self, candidate: Candidate) -> Evaluation | None:
        return self._verdicts.get((candidate.source, candidate.launch))

    def record(self, candidate: Candidate, evaluation: Evaluation, note: str) -> None:
        """One candidate judged: one unit of budget, its verdict, the counters and the best."""
        self.evaluated += 1
        self.counters.generated += 1
        self._verdicts[(candidate.source, candidate.launch)] = evaluation
        self.judged.append(candidate_record(self.evaluated, candidate, evaluation, note))
        if evaluation.outcome in COMPILED:
            self.counters.compiled += 1
        if evaluation.verified:
            self.counters.correct += 1
        if evaluation.outcome == "faster":
            self.counters.faster += 1
            self.verified_faster.append(Judged(candidate, evaluation, reward_of(evaluation), note))
            if self.best is None or (evaluation.speedup or 0.0) > (self.best.evaluation.speedup or 0.0):
                self.best = Judged(candidate, evaluation, reward_of(evaluation), "")
                if self.first_faster_s is None and self.started is not None:
                    self.first_faster_s = self.clock() - self.started

    def speedup_of(self, state: Candidate) -> float:
        """The measured speedup of a code state over the original (1.0 for the original or unknown)."""
        evaluation = self.evaluation_of(state)
        if evaluation is not None and evaluation.outcome == "faster" and evaluation.speedup is not None:
            return evaluation.speedup
        return 1.0

    def remember(self, state: Candidate, winner: Judged, technique: str) -> None:
        """`winner` came from `state` by `technique` (the first step that produced it is kept)."""
        if winner.candidate not in self.history:
            self.history[winner.candidate] = StepRecord(technique, winner.note, winner.evaluation.speedup)
            self.parents[winner.candidate] = state

    def verified_chains(self, original: Candidate) -> list[list[Candidate]]:
        """Maximal technique chains from `original` whose every step was verified correct and
        measured on the GPU (a failed step is never a parent, so none is in a chain), each from
        the first step to the last; a chain that is the start of another is left out."""
        verified = {c for c in self.history if (e := self.evaluation_of(c)) is not None and e.verified}
        has_child = {self.parents[c] for c in verified}
        chains: list[list[Candidate]] = []
        for leaf in sorted(verified - has_child, key=lambda c: (len(c.techniques), c.techniques, c.source)):
            chain = [leaf]
            while chain[-1] in self.parents and self.parents[chain[-1]] in verified:
                chain.append(self.parents[chain[-1]])
            if self.parents.get(chain[-1]) == original:
                chains.append(chain[::-1])
        return chains

    def answer(self) -> Judged | None:
        """What the search offers: the simplest verified faster candidate within the timing
        noise of the fastest (`search/answer.py`, the one rule for every strategy)."""
        return choose_answer(self.verified_faster)

    def path_of(self, candidate: Candidate) -> list[StepRecord]:
        """The steps that produced `candidate`, each with the speedup measured after it."""
        steps: list[StepRecord] = []
        for i in range(1, len(candidate.techniques) + 1):
            prefix = candidate.techniques[:i]
            match = next((r for c, r in self.history.items() if c.techniques == prefix and
                          (i < len(candidate.techniques) or c == candidate)), None)
            if match is None and i == len(candidate.techniques):  # a variant that did not win its step
                judged = next((j for j in self.verified_faster if j.candidate == candidate), None)
                if judged is not None:
                    match = StepRecord(prefix[-1], judged.note, judged.evaluation.speedup)
            steps.append(match or StepRecord(prefix[-1], "", None))
        return steps
