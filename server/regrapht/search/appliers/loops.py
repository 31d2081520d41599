"""`#pragma unroll` on loops inside the kernel.

Unrolling never changes what a loop computes, only how it is scheduled, so the pragma is always
safe; a loop with a constant trip count is unrolled fully, any other counted loop by 4. An
adapter over the rules' fix (`rules/fixes.py`, R015's pragma) on the source model's loops: a
`for` loop counting up to a bound (`i < n`, `i <= n`) that has no pragma and starts its line.
"""

from __future__ import annotations

from regrapht.cuda.model import Loop
from regrapht.cuda.tokens import is_digits, tokens
from regrapht.rules.fixes import unroll_edit
from regrapht.search.appliers.common import ApplierInput, Rewrite, kernel_model
from regrapht.text import Position, offset_of

COUNTER_TYPES = ("", "int", "unsigned", "unsigned int", "long long", "size_t")
UNROLL_FACTOR = 4


class LoopUnrolling:
    technique = "loop_unrolling"
    also: tuple[str, ...] = ()

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        found = kernel_model(given)
        if found is None:
            return []
        function = found.function
        edits = []
        for loop in function.loops:
            bound = _counted_bound(loop)
            if bound is None or loop.unrolled:
                continue
            start = loop.header_span.start
            line_start = offset_of(given.source, Position(start.line, 0))
            indent = given.source[line_start : offset_of(given.source, start)]
            if indent.strip():
                continue  # something else on the line before the loop: leave it
            edits.append(unroll_edit(loop, None if is_digits(bound) else UNROLL_FACTOR, indent))
        if not edits:
            return []
        return [Rewrite(given.source, given.launch, f"#pragma unroll on {len(edits)} loop(s)", edits=tuple(edits))]


def _counted_bound(loop: Loop) -> str | None:
    """The bound of `for (T i = a; i < BOUND; ...)` (or `<=`), T a plain integer type or none."""
    if loop.kind != "for":
        return None
    init = tokens(loop.init)
    equals = next((i for i, t in enumerate(init) if t.text == "="), -1)
    if equals < 1 or not init[equals - 1].is_name or " ".join(t.text for t in init[: equals - 1]) not in COUNTER_TYPES:
        return None
    condition = tokens(loop.condition)
    if len(condition) < 3 or not condition[0].is_name or condition[1].text not in ("<", "<="):
        return None
    return loop.condition[condition[2].start :].strip().rstrip(";").strip()
