"""`__restrict__` (and `const` where the ABI allows) on the kernel's pointer parameters.

`__restrict__` on a parameter is a top-level qualifier: it does not change the parameter's type
or the kernel's mangled name, so it never breaks the launch site or the spec. A `const` on the
pointee does change the C++ type, so it is added only to `extern "C"` kernels (looked up by
plain name) and only on pointers the body never writes through.
"""

from __future__ import annotations

import re

from regrapht.search.appliers.common import ApplierInput, KernelApplier, Rewrite, writes_to
from regrapht.search.source import KernelText, split_top_level
from regrapht.spec.launch import LaunchConfig


class RestrictPointers(KernelApplier):
    technique = "restrict_const"

    def rewrite(self, given: ApplierInput, kernel: KernelText, body: str) -> list[Rewrite]:
        params_text = given.source[kernel.params_start : kernel.params_end]
        parts = split_top_level(params_text)
        extern_c = 'extern "C"' in given.source[max(0, kernel.start - 40) : kernel.body_start]
        changed = False
        new_parts = []
        for part, param in zip(parts, kernel.params, strict=False):
            if not param.is_pointer or part.count("*") != 1:
                new_parts.append(part)
                continue
            text = part
            if "__restrict__" not in text:
                text = re.sub(r"\*\s*", "*__restrict__ ", text, count=1)
                changed = True
            if extern_c and "const" not in text.split("*")[0] and not writes_to(body, param.name):
                text = "const " + text
                changed = True
            new_parts.append(text)
        if not changed or len(parts) != len(kernel.params):
            return []
        source = given.source[: kernel.params_start] + ", ".join(new_parts) + given.source[kernel.params_end :]
        return [Rewrite(source, given.launch, "__restrict__ on pointer parameters")]


def with_restricted_pointers(source: str, kernel: str, launch: LaunchConfig) -> str:
    """`source` with `__restrict__` on `kernel`'s pointer parameters, for rewrites that repeat a
    kernel's statements for several outputs: each output's stores fall between the next one's
    loads, and without it the compiler must reload every read after each store. Only for
    rewrites whose kernel never writes an array it reads (or whose outputs alias nothing)."""
    restricted = RestrictPointers().apply(ApplierInput(source, kernel, launch))
    return restricted[0].source if restricted else source
