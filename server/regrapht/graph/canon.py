"""Canonical technique names, so that steps meaning the same technique share one vertex.

The paper asks an LLM to relabel each step to an existing vertex name when it means the same
thing. Here: normalise to snake_case; then a synonym table; then, for names still unknown and
only if a model is given, a constrained question listing the existing names. The model's answer
is accepted only when it is exactly one of those names; otherwise the step keeps its own
normalised name (a new vertex). Canonical names and their synonyms are the technique records'
(regrapht/techniques.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from regrapht.model.backend import ChatMessage, ModelBackend
from regrapht.techniques import SYNONYMS  # alias (normalised) -> canonical name, from the records

RELABEL_SYSTEM = (
    "You map names of CUDA optimization techniques onto a fixed list. "
    "Reply with exactly one name copied from the list, or NONE. No other words."
)


def normalise(name: str) -> str:
    """snake_case: lowercase, every run of other characters becomes one underscore."""
    return re.sub(r"[^a-z0-9]+", "_", name.strip().lower()).strip("_")


def relabel_prompt(name: str, description: str, existing: list[str]) -> list[ChatMessage]:
    listing = "\n".join(f"- {t}" for t in existing)
    return [
        ChatMessage("system", RELABEL_SYSTEM),
        ChatMessage(
            "user",
            f"Techniques:\n{listing}\n\nNew step: {name}\nWhat it does: {description}\n\n"
            "If the new step is the same technique as one in the list, reply with that name. "
            "Otherwise reply NONE.",
        ),
    ]


@dataclass
class Canonicaliser:
    """Maps step names onto canonical vertex names; `known` grows as vertices are added."""

    known: set[str] = field(default_factory=set)
    model: ModelBackend | None = None
    synonyms: dict[str, str] = field(default_factory=lambda: dict(SYNONYMS))
    seed: int = 0
    relabels: list[tuple[str, str]] = field(default_factory=list)  # (asked, accepted) by the model

    def add_known(self, names: Iterable[str]) -> None:
        self.known.update(names)

    def canonical(self, name: str, description: str = "") -> str:
        own = normalise(name)
        if not own:
            return own
        if own in self.known:
            return own
        if own in self.synonyms:
            return self.synonyms[own]
        if self.model is not None and self.known:
            chosen = self._ask_model(self.model, own, description)
            if chosen is not None:
                self.relabels.append((own, chosen))
                return chosen
        return own

    def _ask_model(self, model: ModelBackend, name: str, description: str) -> str | None:
        existing = sorted(self.known)
        answer = model.complete(
            relabel_prompt(name, description, existing), max_tokens=16, temperature=0.0, seed=self.seed
        ).text
        # Only surrounding whitespace and quoting are forgiven; anything else is not "exactly".
        cleaned = answer.strip().strip("`'\"").strip()
        return cleaned if cleaned in self.known else None
