"""One optimize run: the session every strategy generates candidates and has them judged through.

`SearchRun` joins the parts of a search, each with one job - the `CandidateLedger` (verdicts,
budget, counters, the best, the steps: search/ledger.py), the `ApplierCache` (every applier's
rewrites of a code state: search/applier_cache.py) and the `ModelPolicy` (when and how the model
is asked: search/model_policy.py) - with the evaluator, the graph, cancellation and progress, so
that budget accounting (one unit per candidate judged: evaluated by the evaluator or rejected
before it), progress reports, cancellation, the "fastest verified so far" the search builds on
and the answer it offers are the same for all strategies. Applying one technique to one code
state (`apply_technique`) is here: the deterministic applier's rewrites and the model's rewrite
are all judged and the best one wins. The model is asked only for a technique no applier can do
here (unless `model_after_applier_gain`): a small model's answer rarely wins, takes seconds,
and must never delay a rewrite an applier can produce now.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Self

from regrapht.graph import ReasoningGraph
from regrapht.model.backend import ChatMessage, ModelBackend
from regrapht.search.applier_cache import ApplierCache, RewriteMemo
from regrapht.search.appliers import APPLIERS, Applier, DeviceLimits, Rewrite
from regrapht.search.evidence import NO_EVIDENCE, EvidenceView, KernelEvidence
from regrapht.search.ledger import FAILED, CandidateLedger, Judged, reward_of
from regrapht.search.model_policy import ModelMemory, ModelPolicy
from regrapht.search.options import SearchOptions
from regrapht.search.profile_evidence import NO_PROFILE, ProfileView, profile_view
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
from regrapht.search.request import KernelTarget, OptimizeRequest
from regrapht.search.source import find_kernel
from regrapht.spec.launch import LaunchConfig
from regrapht.techniques import find_technique
from regrapht.validate.types import BatchEvaluator, Candidate, Evaluation, Evaluator, Sanitizer

logger = logging.getLogger(__name__)


def searchable(technique: str, options: SearchOptions) -> bool:
    """Whether the search may write `technique`: always, unless it approximates and the options
    leave approximations out (a name without a record is the model's own: searchable)."""
    record = find_technique(technique)
    return options.allow_approximations or record is None or record.numerics != "approximates"


@dataclass(frozen=True)
class Progress:
    stage: str  # "generating" | "compiling" | "checking" | "timing" | "found" (a new best) | "done"
    message: str
    evaluated: int
    budget: int
    best_speedup: float | None


@dataclass(frozen=True)
class SearchTools:
    """The collaborators one search is wired to (the app layer wires them; tests pass doubles)."""

    evaluator: Evaluator
    model: ModelBackend | None = None  # None: appliers only
    graph: ReasoningGraph | None = None  # None: no graph (the `rules` and `cot` strategies need none)
    # what earlier searches of this kernel learnt of the model (it is not asked where it kept failing)
    model_memory: ModelMemory | None = None
    # the appliers' rewrites by code state, shared with other searches of this kernel, spec and device
    rewrite_memo: RewriteMemo | None = None
    appliers: tuple[Applier, ...] = APPLIERS  # in the `rules` order; tests pass their own
    # runs the answer under compute-sanitizer before it is offered (None: no such gate)
    sanitizer: Sanitizer | None = None
    # what the analyzer and nvcc proved about the kernel (search/evidence.py); none: nothing proven
    evidence: KernelEvidence | None = None


@dataclass(frozen=True)
class SearchHooks:
    """How the caller follows one search: cancel flag, progress, the finished session, the clock."""

    cancel: Callable[[], bool] | None = None  # checked between candidates
    progress: Callable[[Progress], None] | None = None
    on_finish: Callable[[SearchRun], None] | None = None  # `graph distill` reads its verified steps
    clock: Callable[[], float] = time.monotonic


@dataclass(frozen=True)
class StepResult:
    """What applying one technique to one state gave: the winner, or None if nothing worked."""

    technique: str
    state: Candidate | None
    reward: float
    evaluation: Evaluation | None
    note: str = ""


@dataclass
class SearchRun:
    kernel: str
    original: Candidate
    evaluator: Evaluator
    graph: ReasoningGraph | None
    rng: random.Random  # the strategy's randomness, seeded with the request's seed
    options: SearchOptions
    ledger: CandidateLedger
    applier_cache: ApplierCache
    model_policy: ModelPolicy
    cancel: Callable[[], bool] | None = None
    progress: Callable[[Progress], None] | None = None
    _offered: Judged | None = None  # what `answer` gave after the last verified faster candidate
    # the kernel's proven findings, read per code state (search/evidence.py)
    evidence: EvidenceView = field(default_factory=EvidenceView)
    # the techniques the request's Nsight Compute profile raises, on the code it measured
    # (search/profile_evidence.py)
    profile: ProfileView = NO_PROFILE

    @classmethod
    def open(cls, request: OptimizeRequest, target: KernelTarget, tools: SearchTools,
             hooks: SearchHooks | None = None, *, cancel: Callable[[], bool] | None = None,
             started: float | None = None) -> Self:
        """The session of `request` on `target` (`cancel`: `hooks.cancel` unless given, e.g.
        with a time limit; `started`: the clock when the search began)."""
        hooks = hooks or SearchHooks()
        cancel = hooks.cancel if cancel is None else cancel
        options = request.options.search
        appliers = tuple(a for a in tools.appliers if searchable(a.technique, options)
                         and all(searchable(t, options) for t in a.also))
        # a memo shared between searches holds every applier's rewrites: only for the whole list
        memo = {} if tools.rewrite_memo is None or appliers != tools.appliers else tools.rewrite_memo
        return cls(
            kernel=request.kernel, original=Candidate(request.source, target.launch, ()), evaluator=tools.evaluator,
            graph=tools.graph, rng=random.Random(request.seed), options=options,
            ledger=CandidateLedger(request.budget, hooks.clock, started),
            applier_cache=ApplierCache(request.kernel, target.constants, DeviceLimits.of(tools.evaluator.device),
                                       appliers, memo),
            model_policy=ModelPolicy(request.kernel, tools.model, options, tools.evaluator.hold_gpu, request.seed,
                                     tools.model_memory, cancel),
            cancel=cancel, progress=hooks.progress, evidence=EvidenceView(tools.evidence or NO_EVIDENCE),
            profile=profile_view(request.profile, request.source))

    # ---- budget, cancellation, progress ----------------------------------------------------
    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel()

    def exhausted(self) -> bool:
        return self.ledger.spent() or self.cancelled()

    def report(self, stage: str, message: str) -> None:
        if self.progress is not None:
            offered = self._offered.evaluation.speedup if self._offered is not None else None
            self.progress(Progress(stage, message, self.ledger.evaluated, self.ledger.budget, offered))

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
        room = self.ledger.room()
        for candidate, _note in items:
            key = (candidate.source, candidate.launch)
            if self.ledger.verdict(*key) is None and key not in seen:
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
            cached = self.ledger.verdict(*key)
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
        self.ledger.record(candidate, evaluation, note)
        # one line per candidate (CLI: --log-level INFO): where a run's time and budget went
        seconds = ", ".join(f"{k[:-2]} {evaluation.details[k]} s" for k in ("compile_s", "check_s", "time_s")
                            if k in evaluation.details)
        logger.info("%s [%d/%d] %s (%s): %s%s%s%s", self.kernel, self.ledger.evaluated, self.ledger.budget,
                    "+".join(candidate.techniques) or "original", note or "-", evaluation.outcome,
                    f" {evaluation.speedup:.2f}x" if evaluation.speedup is not None else "",
                    f" {evaluation.reason[:160]}" if evaluation.reason else "", f" ({seconds})" if seconds else "")
        if evaluation.outcome == "faster":
            offered = self.ledger.answer()
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
        if not searchable(technique, self.options):
            return StepResult(technique, None, FAILED, None, "left out: its rewrites approximate (allowFastMath is off)")
        rewrites = self.applier_rewrites(state, technique)
        limit = self.options.max_variants if variants is None else min(variants, self.options.max_variants)
        judged = self.judge_many([(Candidate(r.source, r.launch, (*state.techniques, technique)), r.note)
                                  for r in rewrites[:limit]])
        before = self.ledger.speedup_of(state)
        applier_gained = any(j.evaluation.outcome == "faster" and (j.evaluation.speedup or 0.0) > before for j in judged)
        if not rewrites and not self.model_may_write(state):
            # the model's turn comes once no applier candidate is pending (`model_may_write`)
            return StepResult(technique, None, FAILED, None, "no applier rewrite; the model is not asked now")
        if self.model_policy.usable() and not self.exhausted() and (
                not rewrites or self.options.model_after_applier_gain) and (
                not applier_gained or self.options.model_after_applier_gain):
            result = self.model_rewrite(state, previous, technique)
            if result is not None:
                judged.append(result)
        if not judged:
            return StepResult(technique, None, FAILED, None, "no rewrite")
        winner = max(judged, key=lambda j: j.reward)
        self.ledger.remember(state, winner, technique)
        self._record_graph(previous, technique, winner)
        if winner.reward <= FAILED:
            return StepResult(technique, None, FAILED, winner.evaluation, winner.note)
        return StepResult(technique, winner.candidate, winner.reward, winner.evaluation, winner.note)

    def judge_variant(self, state: Candidate, previous: str, technique: str, rewrite: Rewrite) -> Judged | None:
        """Judge one more applier variant of `technique` on `state` (a refinement); None if the
        budget is spent."""
        judged = self.judge(Candidate(rewrite.source, rewrite.launch, (*state.techniques, technique)), rewrite.note)
        if judged is not None:
            self.ledger.remember(state, judged, technique)
            self._record_graph(previous, technique, judged)
        return judged

    def _record_graph(self, previous: str, technique: str, judged: Judged) -> None:
        if self.graph is not None and judged.evaluation.verified:
            self.graph.record_outcome(previous, technique, judged.reward, judged.evaluation.speedup, self.evaluator.arch)

    def applier_rewrites(self, state: Candidate, technique: str) -> list[Rewrite]:
        """The rewrites of `technique`'s appliers for `state`."""
        return self.applier_cache.rewrites(state, technique)

    def applicable(self, state: Candidate) -> list[Applier]:
        """The deterministic appliers that have a rewrite for `state`."""
        return self.applier_cache.applicable(state)

    # ---- the model ---------------------------------------------------------------------------
    def applier_pending(self, state: Candidate) -> bool:
        """Whether the first rewrite of an applier that matches `state` has not been judged yet:
        it can be judged now, without the model."""
        return any(rewrites and self.ledger.verdict(rewrites[0].source, rewrites[0].launch) is None
                   for rewrites in self.applier_cache.by_applier(state))

    def model_may_write(self, state: Candidate) -> bool:
        """Whether the model may be asked to write a technique on `state` now: it is usable and
        every applier that matches `state` has had its rewrite judged (a small model's answer
        takes seconds and seldom wins: it never delays a candidate an applier can produce now)."""
        return self.model_policy.usable() and (self.options.model_after_applier_gain or not self.applier_pending(state))

    def choose_technique(self, state: Candidate, descriptions: Mapping[str, str]) -> str | None:
        """The technique the model picks among `descriptions` (name -> what it does) for this
        kernel: a few tokens under a GBNF grammar of the names that llama.cpp enforces; None if
        the model is not asked or answers something else."""
        policy = self.model_policy
        kernel = find_kernel(state.source, self.kernel)
        if (kernel is None or policy.model is None or not self.options.model_choice or len(descriptions) < 2
                or not policy.usable() or not policy.usable("choose") or self.cancelled()):
            return None
        names = sorted(descriptions)
        self.report("generating", "model: choosing a technique")
        completion = policy.call("choose", [choice_messages(kernel.text(state.source), descriptions)],
                                 max_tokens=24, temperature=0.0, seed=policy.seed_for("choose", names),
                                 grammar=choice_grammar(names))
        if completion is None:
            policy.score("choose", None, 1.0)
            return None
        answer = completion.text.strip()
        logger.info("%s model choice among %s: %r (%.1f s)", self.kernel, ", ".join(names), answer,
                    completion.seconds or 0.0)
        if answer not in descriptions:
            policy.score("choose", None, 1.0)
            return None
        policy.chosen = answer
        return answer

    def model_rewrite(self, state: Candidate, previous: str, technique: str) -> Judged | None:
        kernel = find_kernel(state.source, self.kernel)
        if kernel is None or self.model_policy.model is None:
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
        if self.model_policy.chosen == technique:
            self.model_policy.chosen = None
            self.model_policy.score("choose", judged.evaluation if judged is not None else None,
                                    self.ledger.speedup_of(state))
        return judged

    def cot_rewrite(self, state: Candidate) -> Judged | None:
        kernel = find_kernel(state.source, self.kernel)
        if kernel is None or self.model_policy.model is None:
            return None
        return self._ask([cot_messages(kernel.text(state.source), state.launch)], state, ("model_cot",),
                         "model: step by step", "cot")

    def _ask(self, prompts: list[list[ChatMessage]], state: Candidate, techniques: tuple[str, ...], note: str,
             kind: str, prefill: str = "") -> Judged | None:
        judged = self._answer(prompts, state, techniques, note, kind, prefill)
        if judged is None and self.cancelled():
            return None
        self.model_policy.score(kind, judged.evaluation if judged is not None else None, self.ledger.speedup_of(state))
        self.model_policy.give_up_check(kind)
        return judged

    def _answer(self, prompts: list[list[ChatMessage]], state: Candidate, techniques: tuple[str, ...], note: str,
                kind: str, prefill: str) -> Judged | None:
        kernel = find_kernel(state.source, self.kernel)
        kernel_chars = len(kernel.text(state.source)) if kernel is not None else 2000
        # Room for the whole kernel rewritten (about 3.5 characters per token) plus some slack.
        max_tokens = min(self.options.max_new_tokens, kernel_chars // 3 + 256)
        self.report("generating", note)
        policy = self.model_policy
        completion = policy.call(kind, prompts, max_tokens=max_tokens, temperature=self.options.temperature,
                                 seed=policy.seed_for(kind, [m.content for m in prompts[0]], prefill), prefill=prefill)
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
