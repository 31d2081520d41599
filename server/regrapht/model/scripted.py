"""`ScriptedModel`: a `ModelBackend` test double that replays scripted answers.

For tests of anything that talks to a model (search, graph canonicalisation, the optimize
pipeline): answers come back in order, every prompt is recorded, tokens are counted with a
simple whitespace rule, and streaming and cancellation behave like the real backend.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from regrapht.model.backend import ChatMessage, Completion


def count_tokens(text: str) -> int:
    """A stand-in tokenizer: one token per whitespace-separated word."""
    return len(text.split())


@dataclass(frozen=True)
class ScriptedCall:
    messages: list[ChatMessage]
    max_tokens: int
    temperature: float
    seed: int
    prefill: str = ""
    grammar: str | None = None


@dataclass
class ScriptedModel:
    """Returns `answers` in order; raises IndexError when asked for more than scripted
    (a test that runs out of answers is a broken test, so it fails loudly)."""

    answers: list[str]
    name: str = "scripted"
    device: str = "cpu"
    calls: list[ScriptedCall] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @classmethod
    def of(cls, *answers: str) -> ScriptedModel:
        return cls(list(answers))

    @property
    def prompts(self) -> list[list[ChatMessage]]:
        return [call.messages for call in self.calls]

    @property
    def remaining(self) -> int:
        return len(self.answers) - len(self.calls)

    def extend(self, answers: Iterable[str]) -> None:
        self.answers.extend(answers)

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
        if self.remaining <= 0:
            raise IndexError(f"ScriptedModel ran out of answers after {len(self.calls)} calls")
        answer = self.answers[len(self.calls)]
        self.calls.append(ScriptedCall(list(messages), max_tokens, temperature, seed, prefill, grammar))
        # A scripted answer that starts with the prefill is the whole answer (scripts can be
        # written either way); otherwise it is what the model generated after the prefill.
        generated_part = answer[len(prefill):] if answer.startswith(prefill) else answer
        prompt_tokens = sum(count_tokens(m.content) for m in messages)
        # Stream word by word (keeping the separating whitespace) so that callers see
        # several `on_token` calls and can cancel between them, as with the real model.
        words = generated_part.split(" ")
        pieces = [w if i == 0 else " " + w for i, w in enumerate(words)] if generated_part else []
        emitted: list[str] = []
        finish = "stop"
        for piece in pieces:
            if should_stop is not None and should_stop():
                finish = "cancelled"
                break
            if count_tokens("".join(emitted) + piece) > max_tokens:
                finish = "length"
                break
            emitted.append(piece)
            if on_token is not None:
                on_token(piece)
        generated = "".join(emitted)
        completion_tokens = count_tokens(generated)
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        return Completion(prefill + generated, prompt_tokens, completion_tokens, finish)
