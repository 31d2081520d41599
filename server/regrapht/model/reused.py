"""`ReusedAnswers`: a `ModelBackend` that gives the same answer to the identical request again.

The ablation (bench/ablation.py) runs many searches of one kernel; where two of them send the
model the identical request (messages, answer prefill, grammar, token limit, temperature and
seed), the answer is the one llama.cpp gave the first time, not generated again. The search's
request seed is derived from the search's seed and the request (`ModelPolicy.seed_for`), so
this happens only for the identical question within one seed. The reused `Completion` carries
the seconds the first generation took (`Completion.seconds`): a search's model time budget
counts them, so a search behaves the same whichever search asked first. Cancelled answers are
never kept.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace

from regrapht.model.backend import (
    ChatMessage,
    Completion,
    MeasuresPrompts,
    ModelBackend,
    ModelFromFile,
    PromptSize,
)

RequestKey = tuple[tuple[tuple[str, str], ...], int, float, int, str, str | None]


class ReusedAnswers:
    """Wraps `model`; thread-safe. `hits`/`misses` count requests answered again / generated."""

    def __init__(self, model: ModelBackend, clock: Callable[[], float]) -> None:
        self.model = model
        self.name = model.name
        self.path = model.path if isinstance(model, ModelFromFile) else None  # for the model failure memory
        self.device = model.device
        self._clock = clock
        self._lock = threading.Lock()
        self._answers: dict[RequestKey, Completion] = {}
        self.hits = 0
        self.misses = 0

    def measure_prompt(self, messages: list[ChatMessage], *, prefill: str = "") -> PromptSize | None:
        """The wrapped model's count (None if it cannot count)."""
        if isinstance(self.model, MeasuresPrompts):
            return self.model.measure_prompt(messages, prefill=prefill)
        return None

    def complete(
        self,
        messages: list[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        seed: int,
        should_stop: Callable[[], bool] | None = None,
        on_token: Callable[[str], None] | None = None,
        prefill: str = "",
        grammar: str | None = None,
    ) -> Completion:
        key: RequestKey = (tuple((m.role, m.content) for m in messages), max_tokens, temperature, seed, prefill,
                           grammar)
        with self._lock:
            found = self._answers.get(key)
            if found is not None:
                self.hits += 1
                return found
            self.misses += 1
        started = self._clock()
        completion = self.model.complete(messages, max_tokens=max_tokens, temperature=temperature, seed=seed,
                                         should_stop=should_stop, on_token=on_token, prefill=prefill, grammar=grammar)
        if completion.finish_reason != "cancelled":
            with self._lock:
                self._answers.setdefault(key, replace(completion, seconds=self._clock() - started))
        return completion
