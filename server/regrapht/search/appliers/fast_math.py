"""Single-precision arithmetic: f-suffixed literals and float math functions.

In a kernel that works on floats, an unsuffixed literal such as `1.0` promotes the whole
expression to double (64x slower on most GPUs). Suffixing literals and calling the float forms
of math functions keeps the arithmetic in float; the change in rounding is within the spec's
tolerance for float outputs, and the differential check decides.
"""

from __future__ import annotations

import re

from regrapht.search.appliers.common import ApplierInput, KernelApplier, Rewrite, with_body
from regrapht.search.source import KernelText

_LITERAL = re.compile(r"(?<![\w.])(\d+\.\d*|\.\d+)([eE][-+]?\d+)?(?![\w.])")
_FUNCS = ("sqrt", "exp", "log", "sin", "cos", "tan", "pow", "fabs", "floor", "ceil", "fmax", "fmin",
          "tanh", "rsqrt", "exp2", "log2", "fmod", "erf")
_INTRINSICS = {"expf": "__expf", "logf": "__logf", "sinf": "__sinf", "cosf": "__cosf"}


class FastMath(KernelApplier):
    technique = "fast_math"

    def rewrite(self, given: ApplierInput, kernel: KernelText, body: str) -> list[Rewrite]:
        if re.search(r"\bdouble\b", body) or re.search(r"\bdouble\b", given.source[kernel.params_start : kernel.params_end]):
            return []  # the kernel means double
        if "float" not in given.source[kernel.start : kernel.end]:
            return []
        original = given.source[kernel.body_start : kernel.body_end]
        new = _LITERAL.sub(lambda m: m.group(0) + "f", _blank_safe(original, body))
        for func in _FUNCS:
            new = re.sub(rf"(?<![\w.]){func}\s*\(", f"{func}f(", new)
        rewrites = []
        if new != original:
            source = with_body(given, kernel, new)
            rewrites.append(Rewrite(source, given.launch, "float literals and math functions"))
        fast = new
        for func, intrinsic in _INTRINSICS.items():
            fast = re.sub(rf"(?<![\w.]){func}\s*\(", f"{intrinsic}(", fast)
        if fast != new:
            source = with_body(given, kernel, fast)
            rewrites.append(Rewrite(source, given.launch, "float intrinsics (__expf, __logf, ...)"))
        return rewrites


def _blank_safe(original: str, masked: str) -> str:
    """`original` with comments removed, so literals inside comments are never touched."""
    return "".join(o if m != " " or o in " \t\n" else " " for o, m in zip(original, masked, strict=True))
