"""Random edit ranges for the tests that compare incremental analysis with a fresh parse."""

from __future__ import annotations

import random

from regrapht.text import Position, Span


def random_span(text: str, rng: random.Random, max_extra_lines: int) -> Span:
    """A range in `text` starting anywhere and ending up to `max_extra_lines` lines later."""
    lines = text.split("\n")
    a_line = rng.randrange(len(lines))
    b_line = min(len(lines) - 1, a_line + rng.randrange(max_extra_lines + 1))
    a = Position(a_line, rng.randrange(len(lines[a_line]) + 1))
    b = Position(b_line, rng.randrange(len(lines[b_line]) + 1))
    return Span(min(a, b), max(a, b))
