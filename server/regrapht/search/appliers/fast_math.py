"""Single-precision arithmetic: f-suffixed literals and float math functions.

In a kernel that works on floats, an unsuffixed literal such as `1.0` promotes the whole
expression to double (64x slower on most GPUs). Suffixing literals and calling the float forms
of math functions keeps the arithmetic in float; the change in rounding is within the spec's
tolerance for float outputs, and the differential check decides. An adapter over the rules'
fixes (`rules/fixes.py`: R007's literal, R008's call) on the source model's facts: every double
literal and math call of the kernel, not only those the rules warn about.
"""

from __future__ import annotations

from regrapht.cuda.tokens import find_word
from regrapht.rules.fixes import float_call_edit, float_literal_edit
from regrapht.search.appliers.common import ApplierInput, Rewrite, kernel_model
from regrapht.text import Position, Span, TextEdit

# The math functions given their float form (`sqrt` -> `sqrtf`).
FUNCTIONS = frozenset({"sqrt", "exp", "log", "sin", "cos", "tan", "pow", "fabs", "floor", "ceil", "fmax", "fmin",
                       "tanh", "rsqrt", "exp2", "log2", "fmod", "erf"})
INTRINSICS = {"expf": "__expf", "logf": "__logf", "sinf": "__sinf", "cosf": "__cosf"}


class FastMath:
    technique = "fast_math"
    also: tuple[str, ...] = ()

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        found = kernel_model(given)
        if found is None:
            return []
        kernel, body, function = found.kernel, found.body, found.function
        params = given.source[kernel.params_start : kernel.params_end]
        if find_word(body, "double") >= 0 or find_word(params, "double") >= 0:
            return []  # the kernel means double
        if "float" not in given.source[kernel.start : kernel.end]:
            return []
        literals = [float_literal_edit(literal) for literal in function.float_literals]
        calls = [c for c in function.math_calls if c.name in FUNCTIONS]
        rewrites = []
        float_edits = (*literals, *(float_call_edit(c) for c in calls))
        if float_edits:
            rewrites.append(Rewrite(given.source, given.launch, "float literals and math functions", edits=float_edits))
        # The float functions that have a fast intrinsic: those just renamed and those written so.
        fast = [float_call_edit(c, INTRINSICS[c.float_name]) if c.float_name in INTRINSICS else float_call_edit(c)
                for c in calls]
        written = [TextEdit(Span(c.span.start, Position(c.span.start.line, c.span.start.character + len(c.name))),
                            INTRINSICS[c.name]) for c in function.calls if c.name in INTRINSICS]
        if any(c.float_name in INTRINSICS for c in calls) or written:
            rewrites.append(Rewrite(given.source, given.launch, "float intrinsics (__expf, __logf, ...)",
                                    edits=(*literals, *fast, *written)))
        return rewrites
