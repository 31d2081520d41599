"""Padding 2-D shared tiles by one column to remove bank conflicts: [32][32] -> [32][33].

Safe when the tile is only ever indexed as `tile[a][b]` (never flattened through a pointer or
measured with sizeof), since then the extra column is simply never read.
"""

from __future__ import annotations

import re

from regrapht.search.appliers.common import ApplierInput, KernelApplier, Rewrite
from regrapht.search.source import KernelText

_DECL = re.compile(r"__shared__\s+[\w ]+?\s+(\w+)\s*\[\s*(\d+)\s*\]\s*\[\s*(\d+)\s*\]\s*;")


class SharedMemoryPadding(KernelApplier):
    technique = "bank_conflict_padding"

    def rewrite(self, given: ApplierInput, kernel: KernelText, body: str) -> list[Rewrite]:
        source = given.source
        padded = []
        for decl in reversed(list(_DECL.finditer(body))):
            name, cols = decl.group(1), int(decl.group(3))
            if cols % 16 != 0:
                continue  # only power-of-two-ish widths conflict
            uses = re.findall(rf"\b{name}\b(\s*\[[^\]]*\]\s*\[)?", body[decl.end() :])
            if any(not u for u in uses) or f"sizeof({name}" in body:
                continue
            at = kernel.body_start + decl.start(3)
            end = kernel.body_start + decl.end(3)
            source = source[:at] + str(cols + 1) + source[end:]
            padded.append(name)
        if not padded:
            return []
        return [Rewrite(source, given.launch, f"padded shared {', '.join(padded)} by one column")]
