"""`#pragma unroll` on loops inside the kernel.

Unrolling never changes what a loop computes, only how it is scheduled, so the pragma is always
safe; a loop with a constant trip count is unrolled fully, any other counted loop by 4.
"""

from __future__ import annotations

import re

from regrapht.search.appliers.common import ApplierInput, KernelApplier, Rewrite
from regrapht.search.source import KernelText

_FOR = re.compile(r"for\s*\(\s*(?:int|unsigned|unsigned int|long long|size_t)?\s*\w+\s*=\s*[^;]*;\s*\w+\s*(<|<=)\s*([^;]+);")


class LoopUnrolling(KernelApplier):
    technique = "loop_unrolling"

    def rewrite(self, given: ApplierInput, kernel: KernelText, body: str) -> list[Rewrite]:
        inserts: list[tuple[int, str]] = []
        for loop in _FOR.finditer(body):
            line_start = body.rfind("\n", 0, loop.start()) + 1
            before = body[:line_start].rstrip()
            if before.endswith(")") and "#pragma" in before[before.rfind("\n") + 1 :]:
                continue  # already has a pragma
            if body[line_start : loop.start()].strip():
                continue  # something else on the line before the loop: leave it
            bound = loop.group(2).strip()
            pragma = "#pragma unroll" if re.fullmatch(r"\d+", bound) else "#pragma unroll 4"
            leading = body[line_start : loop.start()]
            inserts.append((kernel.body_start + line_start, f"{leading}{pragma}\n"))
        if not inserts:
            return []
        source = given.source
        for offset, text in sorted(inserts, reverse=True):
            source = source[:offset] + text + source[offset:]
        return [Rewrite(source, given.launch, f"#pragma unroll on {len(inserts)} loop(s)")]
