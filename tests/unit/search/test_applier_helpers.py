"""The appliers' shared helpers: launch expressions read with tokens, and edit composition."""

from __future__ import annotations

import random

import pytest

from regrapht.search.appliers.common import ceil_parts, int_literal
from regrapht.text import apply_edits, compose_edits, edit_of, edit_offsets


@pytest.mark.parametrize(("expr", "parts"), [
    ("(n + 255) / 256", ("n", 256)), ("(n+255)/256", ("n", 256)), ("ceil_div(n, 256)", ("n", 256)),
    ("ceil_div(f(a, b), 8)", ("f(a, b)", 8)), ("(n + 256 - 1) / 256", ("n", 256)),
    ("((n + 1) * 2 + 127) / 128", ("(n + 1) * 2", 128)), ("(N + BLOCK - 1) / BLOCK", None), ("n / 256", None),
    ("(n + 3) / 5", None), ("(a) * (b + 3) / 4", None), ("ceil_div(a, 4) + ceil_div(b, 4)", None),
])
def test_ceil_parts(expr: str, parts: tuple[str, int] | None) -> None:
    assert ceil_parts(expr) == parts


def test_int_literal() -> None:
    assert int_literal(" 256 ") == 256 and int_literal("32u") == 32
    assert int_literal("32uu") is None and int_literal("n") is None and int_literal("") is None


def test_composed_edits_do_what_the_two_steps_do() -> None:
    chooser = random.Random(7)

    def some_edits(text: str) -> list:
        points = sorted(chooser.sample(range(len(text) + 1), min(len(text) + 1, 2 * chooser.randint(0, 3))))
        return [edit_of(text, a, a if chooser.random() < 0.3 else b, chooser.choice(["", "x", "y\nz"]))
                for a, b in zip(points[::2], points[1::2], strict=False)]

    checked = 0
    for _ in range(2000):
        text = "".join(chooser.choice("ab\n") for _ in range(chooser.randint(0, 12)))
        first = some_edits(text)
        middle = apply_edits(text, first)
        then = some_edits(middle)
        composed = compose_edits(text, first, then)
        edit_offsets(text, composed)  # the composition never overlaps itself
        assert apply_edits(text, composed) == apply_edits(middle, then)
        checked += 1
    assert checked == 2000


def test_overlapping_edits_are_refused() -> None:
    with pytest.raises(ValueError, match="overlapping"):
        edit_offsets("abcdef", [edit_of("abcdef", 1, 3, "x"), edit_of("abcdef", 2, 4, "y")])
    with pytest.raises(ValueError, match="overlapping"):
        edit_offsets("abcdef", [edit_of("abcdef", 2, 2, "x"), edit_of("abcdef", 2, 2, "y")])
