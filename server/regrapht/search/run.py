"""One optimize run's shared state: the budget, the evaluation cache, counters and the best.

Every strategy generates candidates and has them evaluated through a `SearchRun`, so that budget
accounting (one unit per candidate judged: evaluated by the evaluator or rejected before it),
token counts, progress reports, cancellation, the "fastest verified so far" the search builds on
and the answer it offers (`answer`: search/answer.py) are the same for all of them. Applying one technique to one code state (`apply_technique`) is also here: the
deterministic applier's rewrites and the model's rewrite are all judged and the best one wins.
The model is asked only for a technique no applier can do here (unless
`model_after_applier_gain`): a small model's answer rarely wins, takes seconds, and must never
delay a rewrite an applier can produce now. Each kind of model call ("rewrite", "choose", "cot")
is scored in `model_use` by what its answers became; after `model_give_up` rewrites in a row
without a correct candidate the search stops asking the model for this kernel.
"""

from __future__ import annotations

import hashlib
import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from typing import Protocol

from regrapht.errors import InputError, ModelLoadError
from regrapht.graph import ReasoningGraph
from regrapht.model.backend import ChatMessage, Completion, MeasuresPrompts, ModelBackend
from regrapht.search.answer import choose_answer
from regrapht.search.appliers import (
    APPLIERS,
    Applier,
    ApplierInput,
    DeviceLimits,
    Rewrite,
    plain_source,
    rewrites_of,
)
from regrapht.search.options import SearchOptions
from regrapht.search.prompt import (
    answer_prefill,
    choice_grammar,
    choice_messages,
    choose_example,
    cot_messages,
    extract_code,
    extract_launch,
    rewrite_messages,
    splice_answer,
)
from regrapht.search.source import find_kernel
from regrapht.spec.launch import LaunchConfig
from regrapht.validate.types import BatchEvaluator, Candidate, Evaluation, Evaluator

FAILED = -1.0
# every applier's rewrites of a code state, by (source, launch), in APPLIERS order
RewriteMemo = dict[tuple[str, LaunchConfig], list[list[Rewrite]]]
logger = logging.getLogger(__name__)


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


@dataclass(frozen=True)
class Progress:
    stage: str  # "generating" | "compiling" | "checking" | "timing" | "found" (a new best) | "done"
    message: str
    evaluated: int
    budget: int
    best_speedup: float | None


@dataclass
class Counters:
    generated: int = 0
    compiled: int = 0
    correct: int = 0
    faster: int = 0


class ModelMemory(Protocol):
    """What earlier searches of this kernel learnt of the model, per kind of call (kept by the
    app layer: `regrapht.app.model_memory`)."""

    def skip_reason(self, kind: str) -> str | None:
        """Why the model should not be asked this kind of call for this kernel (None: ask it)."""
        ...

    def record(self, kind: str, correct: bool) -> None:
        """One answer of `kind` was judged: correct (compiled and matched the original) or not."""
        ...


@dataclass
class ModelUse:
    """How one kind of model call fared in one search: calls, time, and what the answers became
    (a candidate to judge, compiled, correct, correct and faster than the code it rewrote)."""

    calls: int = 0
    seconds: float = 0.0
    answered: int = 0
    compiled: int = 0
    correct: int = 0
    faster: int = 0
    failed: int = 0  # calls that could not be made: prompt over the context, model crashed or timed out
    failures_in_row: int = 0
    gave_up: bool = False
    skipped: str = ""  # why this kind of call was not made at all (the model failure memory)

    def score(self, evaluation: Evaluation | None, before: float) -> None:
        """Count one answer's fate (`evaluation` None: it gave nothing to judge)."""
        if evaluation is not None and evaluation.outcome != "rejected":
            self.answered += 1
            if evaluation.outcome in _COMPILED:
                self.compiled += 1
        if evaluation is not None and evaluation.verified:
            self.correct += 1
            self.failures_in_row = 0
        else:
            self.failures_in_row += 1
        if (evaluation is not None and evaluation.outcome == "faster" and evaluation.speedup is not None
                and evaluation.speedup > before):
            self.faster += 1

    def to_json(self) -> dict[str, object]:
        return {"calls": self.calls, "seconds": round(self.seconds, 3), "answered": self.answered,
                "compiled": self.compiled, "correct": self.correct, "faster": self.faster,
                "failed": self.failed, "gave_up": self.gave_up, "skipped": self.skipped or None}


_COMPILED = ("faster", "slower", "wrong", "crashed", "timeout", "unverified")


@dataclass(frozen=True)
class Judged:
    candidate: Candidate
    evaluation: Evaluation
    reward: float
    note: str


@dataclass(frozen=True)
class StepResult:
    """What applying one technique to one state gave: the winner, or None if nothing worked."""

    technique: str
    state: Candidate | None
    reward: float
    evaluation: Evaluation | None
    note: str = ""


@dataclass(frozen=True)
class StepRecord:
    """One step of the path that produced a candidate, for the hover card."""

    technique: str
    note: str
    speedup: float | None


@dataclass
class SearchRun:
    kernel: str
    original: Candidate
    evaluator: Evaluator
    model: ModelBackend | None
    graph: ReasoningGraph | None
    budget: int
    rng: random.Random
    options: SearchOptions
    constants: Mapping[str, int] = field(default_factory=dict)
    cancel: Callable[[], bool] | None = None
    progress: Callable[[Progress], None] | None = None
    counters: Counters = field(default_factory=Counters)
    appliers: tuple[Applier, ...] = APPLIERS  # in the `rules` order; tests pass their own
    prompt_tokens: int = 0
    completion_tokens: int = 0
    evaluated: int = 0
    best: Judged | None = None  # the fastest verified candidate: what the search builds on
    verified_faster: list[Judged] = field(default_factory=list)  # every verified faster candidate, in order
    _offered: Judged | None = None  # what `answer` gave after the last verified faster candidate
    history: dict[Candidate, StepRecord] = field(default_factory=dict)
    parents: dict[Candidate, Candidate] = field(default_factory=dict)  # step result -> the code it rewrote
    _cache: dict[tuple[str, LaunchConfig], Evaluation] = field(default_factory=dict)
    _model_calls: int = 0
    model_use: dict[str, ModelUse] = field(default_factory=dict)
    clock: Callable[[], float] = time.monotonic
    started: float | None = None  # clock() when the search began (set by optimize)
    seed: int = 0  # the search's seed (`rng` is seeded with it): model requests' seeds derive from it
    first_faster_s: float | None = None  # seconds from `started` to the first verified faster candidate
    _chosen: str | None = None  # the technique the last "choose" call picked, until it is written
    _failures_logged: set[tuple[str, str]] = field(default_factory=set)  # (kind, reason) already logged
    model_memory: ModelMemory | None = None  # earlier searches' outcomes of the model on this kernel
    # every applier's rewrites by code state (`rewrites_by_applier`); searches of one kernel with
    # the same constants and device may share one (bench/replay_ablation.py does)
    rewrite_memo: RewriteMemo = field(default_factory=dict)

    # ---- budget, cancellation, progress ----------------------------------------------------
    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel()

    def exhausted(self) -> bool:
        return self.evaluated >= self.budget or self.cancelled()

    def report(self, stage: str, message: str) -> None:
        if self.progress is not None:
            offered = self._offered.evaluation.speedup if self._offered is not None else None
            self.progress(Progress(stage, message, self.evaluated, self.budget, offered))

    # ---- judging -----------------------------------------------------------------------------
    def judge(self, candidate: Candidate, note: str = "") -> Judged | None:
        """Evaluate `candidate` (once per distinct source + launch); None if the budget is spent."""
        judged = self.judge_many([(candidate, note)])
        return judged[0] if judged else None

    def judge_many(self, items: Sequence[tuple[Candidate, str]]) -> list[Judged]:
        """Evaluate candidates in order, as `judge` would one by one, stopping where the budget
        is spent (the result is then shorter than `items`); the ones not judged before are
        compiled in parallel where the evaluator can (`BatchEvaluator`)."""
        fresh: list[Candidate] = []
        seen: set[tuple[str, LaunchConfig]] = set()
        room = self.budget - self.evaluated
        for candidate, _note in items:
            key = (candidate.source, candidate.launch)
            if key not in self._cache and key not in seen:
                if len(fresh) >= room:
                    break
                seen.add(key)
                fresh.append(candidate)
        evaluations: dict[tuple[str, LaunchConfig], Evaluation] = {}
        if len(fresh) > 1 and isinstance(self.evaluator, BatchEvaluator) and not self.cancelled():
            self.report("compiling", f"{len(fresh)} candidates")
            for candidate, evaluation in zip(fresh, self.evaluator.evaluate_many(fresh), strict=True):
                evaluations[candidate.source, candidate.launch] = evaluation
        judged: list[Judged] = []
        for candidate, note in items:
            key = (candidate.source, candidate.launch)
            cached = self._cache.get(key)
            if cached is None:
                if self.exhausted():
                    break
                batched = evaluations.get(key)
                if batched is None:
                    self.report("compiling", f"{'+'.join(candidate.techniques) or 'original'}: {note}".rstrip(": "))
                    batched = self.evaluator.evaluate(candidate)
                self._record(candidate, batched, note)
                cached = batched
            judged.append(Judged(candidate, cached, reward_of(cached), note))
        return judged

    def reject(self, candidate: Candidate, reason: str) -> Judged | None:
        """Count a model answer refused before compiling (it still costs one unit of budget)."""
        if self.exhausted():
            return None
        evaluation = Evaluation("rejected", reason)
        self._record(candidate, evaluation, "model answer")
        return Judged(candidate, evaluation, FAILED, reason)

    def _record(self, candidate: Candidate, evaluation: Evaluation, note: str) -> None:
        self.evaluated += 1
        # one line per candidate (CLI: --log-level INFO): where a run's time and budget went
        seconds = ", ".join(f"{k[:-2]} {evaluation.details[k]} s" for k in ("compile_s", "check_s", "time_s")
                            if k in evaluation.details)
        logger.info("%s [%d/%d] %s (%s): %s%s%s%s", self.kernel, self.evaluated, self.budget,
                    "+".join(candidate.techniques) or "original", note or "-", evaluation.outcome,
                    f" {evaluation.speedup:.2f}x" if evaluation.speedup is not None else "",
                    f" {evaluation.reason[:160]}" if evaluation.reason else "", f" ({seconds})" if seconds else "")
        self.counters.generated += 1
        self._cache[(candidate.source, candidate.launch)] = evaluation
        if evaluation.outcome in _COMPILED:
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
            offered = self.answer()
            if offered is not None and (self._offered is None or offered.candidate != self._offered.candidate):
                self._offered = offered
                # shown at once (what the search would offer now, by the answer rule): the user may
                # take this one while the search goes on
                self.report("found", f"verified {offered.evaluation.speedup:.2f}x faster: "
                            f"{'+'.join(offered.candidate.techniques) or 'original'}")
        stage = "timing" if evaluation.verified else "checking"
        speed = f" {evaluation.speedup:.2f}x" if evaluation.speedup is not None else ""
        self.report(stage, f"{evaluation.outcome}{speed}")

    # ---- applying a technique ----------------------------------------------------------------
    def apply_technique(self, state: Candidate, previous: str, technique: str, *,
                        variants: int | None = None) -> StepResult:
        """Apply `technique` to `state`: the applier's first `variants` rewrites (default
        `max_variants`) and, where the module docstring says so, one model rewrite are judged;
        the one with the highest reward is the step's result."""
        rewrites = self.applier_rewrites(state, technique)
        limit = self.options.max_variants if variants is None else min(variants, self.options.max_variants)
        judged = self.judge_many([(Candidate(r.source, r.launch, (*state.techniques, technique)), r.note)
                                  for r in rewrites[:limit]])
        before = self.speedup_of(state)
        applier_gained = any(j.evaluation.outcome == "faster" and (j.evaluation.speedup or 0.0) > before for j in judged)
        if not rewrites and not self.model_may_write(state):
            # the model's turn comes once no applier candidate is pending (`model_may_write`)
            return StepResult(technique, None, FAILED, None, "no applier rewrite; the model is not asked now")
        if self.model_usable() and not self.exhausted() and (
                not rewrites or self.options.model_after_applier_gain) and (
                not applier_gained or self.options.model_after_applier_gain):
            result = self.model_rewrite(state, previous, technique)
            if result is not None:
                judged.append(result)
        if not judged:
            return StepResult(technique, None, FAILED, None, "no rewrite")
        winner = max(judged, key=lambda j: j.reward)
        self._remember(state, winner, technique)
        self._record_graph(previous, technique, winner)
        if winner.reward <= FAILED:
            return StepResult(technique, None, FAILED, winner.evaluation, winner.note)
        return StepResult(technique, winner.candidate, winner.reward, winner.evaluation, winner.note)

    def judge_variant(self, state: Candidate, previous: str, technique: str, rewrite: Rewrite) -> Judged | None:
        """Judge one more applier variant of `technique` on `state` (a refinement); None if the
        budget is spent."""
        judged = self.judge(Candidate(rewrite.source, rewrite.launch, (*state.techniques, technique)), rewrite.note)
        if judged is not None:
            self._remember(state, judged, technique)
            self._record_graph(previous, technique, judged)
        return judged

    def _record_graph(self, previous: str, technique: str, judged: Judged) -> None:
        if self.graph is not None and judged.evaluation.verified:
            self.graph.record_outcome(previous, technique, judged.reward, judged.evaluation.speedup, self.evaluator.arch)

    def speedup_of(self, state: Candidate) -> float:
        """The measured speedup of a code state over the original (1.0 for the original or unknown)."""
        evaluation = self._cache.get((state.source, state.launch))
        if evaluation is not None and evaluation.outcome == "faster" and evaluation.speedup is not None:
            return evaluation.speedup
        return 1.0

    def _remember(self, state: Candidate, winner: Judged, technique: str) -> None:
        if winner.candidate not in self.history:
            self.history[winner.candidate] = StepRecord(technique, winner.note, winner.evaluation.speedup)
            self.parents[winner.candidate] = state

    def evaluation_of(self, candidate: Candidate) -> Evaluation | None:
        return self._cache.get((candidate.source, candidate.launch))

    def verified_chains(self) -> list[list[Candidate]]:
        """Maximal technique chains from the original whose every step was verified correct and
        measured on the GPU (a failed step is never a parent, so none is in a chain), each from
        the first step to the last; a chain that is the start of another is left out."""
        verified = {c for c in self.history if (e := self.evaluation_of(c)) is not None and e.verified}
        has_child = {self.parents[c] for c in verified}
        chains: list[list[Candidate]] = []
        for leaf in sorted(verified - has_child, key=lambda c: (len(c.techniques), c.techniques, c.source)):
            chain = [leaf]
            while chain[-1] in self.parents and self.parents[chain[-1]] in verified:
                chain.append(self.parents[chain[-1]])
            if self.parents.get(chain[-1]) == self.original:
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

    def applier_rewrites(self, state: Candidate, technique: str) -> list[Rewrite]:
        """The rewrites of `technique`'s appliers for `state`."""
        return [r for applier, rewrites in zip(self.appliers, self.rewrites_by_applier(state), strict=True)
                if technique == applier.technique or technique in applier.also for r in rewrites]

    def applicable(self, state: Candidate) -> list[Applier]:
        """The deterministic appliers that have a rewrite for `state`."""
        return [a for a, rewrites in zip(self.appliers, self.rewrites_by_applier(state), strict=True) if rewrites]

    def rewrites_by_applier(self, state: Candidate) -> list[list[Rewrite]]:
        """Every applier's rewrites of `state`, in APPLIERS order; computed once per state (the
        graph strategies ask which appliers match, then for the chosen technique's rewrites)."""
        key = (state.source, state.launch)
        found = self.rewrite_memo.get(key)
        if found is None:
            given = ApplierInput(state.source, self.kernel, state.launch, self.constants,
                                 DeviceLimits.of(self.evaluator.device))
            plain = plain_source(given)  # written plainly once for every applier of this state
            found = [rewrites_of(applier, given, plain) for applier in self.appliers]
            self.rewrite_memo[key] = found
        return found

    # ---- the model ---------------------------------------------------------------------------
    def model_usable(self, kind: str = "rewrite") -> bool:
        """Whether the search may still make a `kind` model call ("rewrite": write a technique):
        there is a model, it has not kept failing in this search (`model_give_up`) or in earlier
        searches of this kernel (the model failure memory), and its time budget is not spent."""
        use = self.model_use.get(kind)
        budget = self.options.model_time_budget_s
        return (self.model is not None and not (use is not None and use.gave_up)
                and (budget is None or self.model_seconds() < budget) and not self._remembered_failing(kind))

    def _remembered_failing(self, kind: str) -> bool:
        """Whether earlier searches of this kernel found the model failing at `kind` (logged and
        reported in `model_calls` once)."""
        reason = self.model_memory.skip_reason(kind) if self.model_memory is not None else None
        if reason is None:
            return False
        use = self._use(kind)
        if not use.skipped:
            use.skipped = reason
            logger.info("%s: not asking the model (%s): %s", self.kernel, kind, reason)
        return True

    def _score(self, kind: str, evaluation: Evaluation | None, before: float) -> None:
        """Count one answer's fate in this search's `model_use` and in the failure memory (an
        answer that could not be verified, for want of a device, tells neither)."""
        self._use(kind).score(evaluation, before)
        if self.model_memory is not None and not (evaluation is not None and evaluation.outcome == "unverified"):
            self.model_memory.record(kind, evaluation is not None and evaluation.verified)

    def model_seconds(self) -> float:
        """Seconds this search has spent waiting for the model, all kinds of calls."""
        return sum(use.seconds for use in self.model_use.values())

    def applier_pending(self, state: Candidate) -> bool:
        """Whether the first rewrite of an applier that matches `state` has not been judged yet:
        it can be judged now, without the model."""
        return any(rewrites and (rewrites[0].source, rewrites[0].launch) not in self._cache
                   for rewrites in self.rewrites_by_applier(state))

    def model_may_write(self, state: Candidate) -> bool:
        """Whether the model may be asked to write a technique on `state` now: it is usable and
        every applier that matches `state` has had its rewrite judged (a small model's answer
        takes seconds and seldom wins: it never delays a candidate an applier can produce now)."""
        return self.model_usable() and (self.options.model_after_applier_gain or not self.applier_pending(state))

    def _use(self, kind: str) -> ModelUse:
        return self.model_use.setdefault(kind, ModelUse())

    def choose_technique(self, state: Candidate, descriptions: Mapping[str, str]) -> str | None:
        """The technique the model picks among `descriptions` (name -> what it does) for this
        kernel: a few tokens under a GBNF grammar of the names that llama.cpp enforces; None if
        the model is not asked or answers something else."""
        kernel = find_kernel(state.source, self.kernel)
        if (kernel is None or self.model is None or not self.options.model_choice or len(descriptions) < 2
                or not self.model_usable() or not self.model_usable("choose") or self.cancelled()):
            return None
        names = sorted(descriptions)
        self.report("generating", "model: choosing a technique")
        completion = self._call_model("choose", [choice_messages(kernel.text(state.source), descriptions)],
                                      max_tokens=24, temperature=0.0, seed=self.model_seed("choose", names),
                                      grammar=choice_grammar(names))
        if completion is None:
            self._score("choose", None, 1.0)
            return None
        answer = completion.text.strip()
        logger.info("%s model choice among %s: %r (%.1f s)", self.kernel, ", ".join(names), answer,
                    completion.seconds or 0.0)
        if answer not in descriptions:
            self._score("choose", None, 1.0)
            return None
        self._chosen = answer
        return answer

    def model_seed(self, kind: str, *request: object) -> int:
        """The sampling seed of a model request: a function of the search's seed and the request
        (not of how much randomness the strategy drew before), so the identical question in two
        searches of one seed gets the identical answer (model/reused.py)."""
        digest = hashlib.sha256(repr((self.seed, kind, request)).encode("utf-8")).digest()
        return int.from_bytes(digest[:4], "big") % 2**31

    def _model_lock(self) -> AbstractContextManager[object]:
        assert self.model is not None
        return self.evaluator.hold_gpu() if self.model.device != "cpu" else nullcontext()

    def model_rewrite(self, state: Candidate, previous: str, technique: str) -> Judged | None:
        kernel = find_kernel(state.source, self.kernel)
        if kernel is None or self.model is None:
            return None
        description = ""
        example = None
        if self.graph is not None:
            description = self.graph.description(technique) if self.graph.has_technique(technique) else ""
            example = choose_example(self.graph.examples(previous, technique)) or choose_example(
                e for u in self.graph.predecessors(technique) for e in self.graph.examples(u, technique)
            )
        # the fullest prompt first; without the example if that does not fit the model's context
        prompts = [rewrite_messages(technique, description, example, kernel.text(state.source), state.launch)]
        if example is not None:
            prompts.append(rewrite_messages(technique, description, None, kernel.text(state.source), state.launch))
        prefill = answer_prefill(kernel.header(state.source)) if self.options.prefill_header else ""
        judged = self._ask(prompts, state, (*state.techniques, technique), f"model: {technique}", "rewrite", prefill)
        if self._chosen == technique:
            self._chosen = None
            self._score("choose", judged.evaluation if judged is not None else None, self.speedup_of(state))
        return judged

    def cot_rewrite(self, state: Candidate) -> Judged | None:
        kernel = find_kernel(state.source, self.kernel)
        if kernel is None or self.model is None:
            return None
        return self._ask([cot_messages(kernel.text(state.source), state.launch)], state, ("model_cot",),
                         "model: step by step", "cot")

    def _ask(self, prompts: list[list[ChatMessage]], state: Candidate, techniques: tuple[str, ...], note: str,
             kind: str, prefill: str = "") -> Judged | None:
        judged = self._answer(prompts, state, techniques, note, kind, prefill)
        if judged is None and self.cancelled():
            return None
        use = self._use(kind)
        self._score(kind, judged.evaluation if judged is not None else None, self.speedup_of(state))
        give_up = self.options.model_give_up
        if kind == "rewrite" and give_up > 0 and use.failures_in_row >= give_up and not use.gave_up:
            use.gave_up = True
            logger.info("%s: %d model rewrites in a row gave no correct candidate; not asking the model again",
                        self.kernel, use.failures_in_row)
        return judged

    def _answer(self, prompts: list[list[ChatMessage]], state: Candidate, techniques: tuple[str, ...], note: str,
                kind: str, prefill: str) -> Judged | None:
        kernel = find_kernel(state.source, self.kernel)
        kernel_chars = len(kernel.text(state.source)) if kernel is not None else 2000
        # Room for the whole kernel rewritten (about 3.5 characters per token) plus some slack.
        max_tokens = min(self.options.max_new_tokens, kernel_chars // 3 + 256)
        self.report("generating", note)
        self._model_calls += 1
        completion = self._call_model(kind, prompts, max_tokens=max_tokens, temperature=self.options.temperature,
                                      seed=self.model_seed(kind, [m.content for m in prompts[0]], prefill),
                                      prefill=prefill)
        if completion is None or completion.finish_reason == "cancelled":
            return None
        code = extract_code(completion.text)
        launch = extract_launch(completion.text, state.launch)
        if code is None:
            return self.reject(Candidate(state.source, launch, techniques), "no code block in the answer")
        spliced = splice_answer(state.source, self.kernel, code)
        if spliced.source is None:
            return self.reject(Candidate(state.source + "\n// rejected\n", launch, techniques), spliced.reason)
        return self.judge(Candidate(spliced.source, launch, techniques), note)

    def _call_model(self, kind: str, prompts: Sequence[list[ChatMessage]], *, max_tokens: int, temperature: float,
                    seed: int, prefill: str = "", grammar: str | None = None) -> Completion | None:
        """One model call of `kind` with the first of `prompts` (the fullest first, then trimmed
        ones) whose tokens and an answer of `max_tokens` fit the model's context (counted before
        anything is sent, where the backend can count). None when the call cannot be made: no
        prompt fits, or the model failed (crashed, timed out, refused the prompt). That is a
        failed call of its kind (`ModelUse.failed`), logged once, and the search goes on without
        it: a model call never costs the search what it has verified. `Completion.seconds` is
        set to the seconds the call counts against the model time budget."""
        assert self.model is not None
        use = self._use(kind)
        use.calls += 1
        started = time.perf_counter()
        failure = ""
        completion: Completion | None = None
        try:
            messages = self._fitting(prompts, prefill, max_tokens)
            if isinstance(messages, str):
                failure = messages
            else:
                with self._model_lock():
                    completion = self.model.complete(messages, max_tokens=max_tokens, temperature=temperature,
                                                     seed=seed, should_stop=self.cancel, prefill=prefill,
                                                     grammar=grammar)
        except ModelLoadError:
            raise  # the model file itself is unusable: the user's setting to fix, not one failed call
        except InputError as error:  # a failed call: the worker crashed, hung or refused the prompt
            failure = str(error)
        elapsed = time.perf_counter() - started
        if completion is None:
            use.seconds += elapsed
            use.failed += 1
            if (kind, failure) not in self._failures_logged:
                self._failures_logged.add((kind, failure))
                logger.warning("%s: a model %s call could not be made (the search goes on without it): %s",
                               self.kernel, kind, failure)
            return None
        seconds = completion.seconds if completion.seconds is not None else elapsed
        use.seconds += seconds
        self.prompt_tokens += completion.prompt_tokens
        self.completion_tokens += completion.completion_tokens
        logger.info("%s model %s: %d prompt + %d completion tokens in %.1f s (%s)", self.kernel, kind,
                    completion.prompt_tokens, completion.completion_tokens, elapsed, completion.finish_reason)
        return replace(completion, seconds=seconds)

    def _fitting(self, prompts: Sequence[list[ChatMessage]], prefill: str, max_tokens: int) -> list[ChatMessage] | str:
        """The first prompt that leaves `max_tokens` for the answer in the model's context (the
        first one if the backend cannot count), else why none does."""
        if not isinstance(self.model, MeasuresPrompts):
            return prompts[0]
        sizes = []
        for messages in prompts:
            size = self.model.measure_prompt(messages, prefill=prefill)
            if size is None or size.room() >= max_tokens:
                return messages
            sizes.append(size)
        smallest = min(sizes, key=lambda size: size.tokens)
        return (f"a prompt of {smallest.tokens} tokens (the shortest of {len(sizes)}) leaves no room for an answer of "
                f"{max_tokens} tokens in the model context of {smallest.context}; not sent")
