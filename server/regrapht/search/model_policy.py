"""`ModelPolicy`: when one search may ask the model, and each call it makes.

A small model's answer rarely wins and takes seconds, so the policy decides per kind of call
("rewrite", "choose", "cot") whether to ask at all: there is a model, it has not failed
`model_give_up` rewrites in a row in this search, earlier searches of this kernel did not find
it failing (the model failure memory, `ModelMemory`), and the model time budget is not spent.
A call sends the fullest prompt that fits the model's context, under the GPU lock when the
model runs on the device, with a seed derived from the search's seed and the request; a call
that cannot be made is counted as failed and the search goes on without it. Each kind is scored
in `use` (`ModelUse`) by what its answers became. Judging an answer is `SearchRun`'s.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from typing import Protocol

from regrapht.errors import InputError, ModelLoadError
from regrapht.model.backend import ChatMessage, Completion, MeasuresPrompts, ModelBackend
from regrapht.search.ledger import COMPILED
from regrapht.search.options import SearchOptions
from regrapht.validate.types import Evaluation

logger = logging.getLogger(__name__)


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
            if evaluation.outcome in COMPILED:
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


@dataclass
class ModelPolicy:
    kernel: str  # for the log
    model: ModelBackend | None
    options: SearchOptions
    hold_gpu: Callable[[], AbstractContextManager[object]]  # the evaluator's GPU lock
    seed: int = 0  # the search's seed: model requests' seeds derive from it
    memory: ModelMemory | None = None  # earlier searches' outcomes of the model on this kernel
    cancel: Callable[[], bool] | None = None  # passed to the model: a long generation stops early
    use: dict[str, ModelUse] = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    chosen: str | None = None  # the technique the last "choose" call picked, until it is written
    _failures_logged: set[tuple[str, str]] = field(default_factory=set)  # (kind, reason) already logged

    def usable(self, kind: str = "rewrite") -> bool:
        """Whether the search may still make a `kind` model call ("rewrite": write a technique):
        there is a model, it has not kept failing in this search (`model_give_up`) or in earlier
        searches of this kernel (the model failure memory), and its time budget is not spent."""
        use = self.use.get(kind)
        budget = self.options.model_time_budget_s
        return (self.model is not None and not (use is not None and use.gave_up)
                and (budget is None or self.seconds() < budget) and not self._remembered_failing(kind))

    def _remembered_failing(self, kind: str) -> bool:
        """Whether earlier searches of this kernel found the model failing at `kind` (logged and
        reported in `model_calls` once)."""
        reason = self.memory.skip_reason(kind) if self.memory is not None else None
        if reason is None:
            return False
        use = self.use_of(kind)
        if not use.skipped:
            use.skipped = reason
            logger.info("%s: not asking the model (%s): %s", self.kernel, kind, reason)
        return True

    def score(self, kind: str, evaluation: Evaluation | None, before: float) -> None:
        """Count one answer's fate in this search's `use` and in the failure memory (an answer
        that could not be verified, for want of a device, tells neither)."""
        self.use_of(kind).score(evaluation, before)
        if self.memory is not None and not (evaluation is not None and evaluation.outcome == "unverified"):
            self.memory.record(kind, evaluation is not None and evaluation.verified)

    def give_up_check(self, kind: str) -> None:
        """After `model_give_up` rewrites in a row without a correct candidate, stop asking."""
        use = self.use_of(kind)
        give_up = self.options.model_give_up
        if kind == "rewrite" and give_up > 0 and use.failures_in_row >= give_up and not use.gave_up:
            use.gave_up = True
            logger.info("%s: %d model rewrites in a row gave no correct candidate; not asking the model again",
                        self.kernel, use.failures_in_row)

    def seconds(self) -> float:
        """Seconds this search has spent waiting for the model, all kinds of calls."""
        return sum(use.seconds for use in self.use.values())

    def use_of(self, kind: str) -> ModelUse:
        return self.use.setdefault(kind, ModelUse())

    def seed_for(self, kind: str, *request: object) -> int:
        """The sampling seed of a model request: a function of the search's seed and the request
        (not of how much randomness the strategy drew before), so the identical question in two
        searches of one seed gets the identical answer (model/reused.py)."""
        digest = hashlib.sha256(repr((self.seed, kind, request)).encode("utf-8")).digest()
        return int.from_bytes(digest[:4], "big") % 2**31

    def _lock(self) -> AbstractContextManager[object]:
        assert self.model is not None
        return self.hold_gpu() if self.model.device != "cpu" else nullcontext()

    def call(self, kind: str, prompts: Sequence[list[ChatMessage]], *, max_tokens: int, temperature: float,
             seed: int, prefill: str = "", grammar: str | None = None) -> Completion | None:
        """One model call of `kind` with the first of `prompts` (the fullest first, then trimmed
        ones) whose tokens and an answer of `max_tokens` fit the model's context (counted before
        anything is sent, where the backend can count). None when the call cannot be made: no
        prompt fits, or the model failed (crashed, timed out, refused the prompt). That is a
        failed call of its kind (`ModelUse.failed`), logged once, and the search goes on without
        it: a model call never costs the search what it has verified. `Completion.seconds` is
        set to the seconds the call counts against the model time budget."""
        assert self.model is not None
        use = self.use_of(kind)
        use.calls += 1
        started = time.perf_counter()
        failure = ""
        completion: Completion | None = None
        try:
            messages = self._fitting(prompts, prefill, max_tokens)
            if isinstance(messages, str):
                failure = messages
            else:
                with self._lock():
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
