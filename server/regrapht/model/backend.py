"""The contract for text generation: what search asks of a model, whatever runs it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable


@dataclass(frozen=True)
class ChatMessage:
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # "stop", "length", "cancelled"
    # seconds the answer took when it was generated; set only for an answer given again
    # (model/reused.py), whose caller then counts the original time, not the instant reply
    seconds: float | None = None


class ModelBackend(Protocol):
    name: str  # model file name or a test double's name
    device: str  # "cpu" or "gpu (N layers)": reported by optimize

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
        """Generate the assistant's answer to `messages`. `prefill` is the start of that answer,
        which the model continues (it is part of the prompt, and `Completion.text` begins with
        it; `completion_tokens` counts only what the model generated). `grammar`, a GBNF
        grammar, restricts what the model may generate (llama.cpp enforces it token by token)."""
        ...


@dataclass(frozen=True)
class PromptSize:
    """How many tokens a prompt takes (chat template and answer prefill included) in a context
    of `context` tokens: a prompt fits with room for an answer of `context - tokens` tokens."""

    tokens: int
    context: int

    def room(self) -> int:
        return self.context - self.tokens


@runtime_checkable
class MeasuresPrompts(Protocol):
    """A backend that can count a prompt's tokens before it is sent (the real backends): search
    checks that a prompt and its answer fit the model's context, and trims or skips one that
    does not, instead of sending what the model must refuse."""

    def measure_prompt(self, messages: list[ChatMessage], *, prefill: str = "") -> PromptSize | None:
        """The prompt's size, or None when this backend cannot tell (then the call is made and
        a refusal is an `InputError` like any other failed call)."""
        ...


@runtime_checkable
class ModelFromFile(Protocol):
    """A backend that runs a GGUF file (the app layer keeps the model failure memory per file);
    test doubles are not one."""

    @property
    def path(self) -> Path | None: ...
