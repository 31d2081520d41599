"""Elementwise kernels -> 128-bit vector loads and stores (float4 / int4) with a scalar tail.

Matches `i = <global id>; if (i < n) { straight-line statements }` where every pointer access is
`p[i]`. Each thread then handles four consecutive elements: when all four exist and every
pointer is 16-byte aligned it loads and stores them as one vector, otherwise (the tail, or an
offset pointer) it runs the original statements element by element, so the result is the same
for any n and any alignment.
"""

from __future__ import annotations

import re

from regrapht.search.appliers.common import (
    ApplierInput,
    KernelApplier,
    Rewrite,
    ceil_expr,
    elementwise_1d,
    pointer_params,
    with_body,
)
from regrapht.search.source import KernelText
from regrapht.spec.launch import LaunchConfig

_VECTOR = {"float": "float4", "int": "int4", "unsigned int": "uint4"}
_LANES = ("x", "y", "z", "w")


class VectorizedAccess(KernelApplier):
    technique = "vectorized_access"

    def rewrite(self, given: ApplierInput, kernel: KernelText, body: str) -> list[Rewrite]:
        found = elementwise_1d(given, body)
        if found is None:
            return []
        form, block, extent = found
        if re.search(r"\b(if|for|while|do|switch|goto|atomic\w*)\b", form.inner):
            return []  # straight-line code only: every lane does the same accesses
        pointers = pointer_params(kernel)
        index = form.index
        accessed: list[str] = []
        for name, element in pointers.items():
            uses = re.findall(rf"\b{re.escape(name)}\b(\s*\[\s*([^\]]*)\])?", form.inner)
            if not uses:
                continue
            if element not in _VECTOR or any(not whole or sub.strip() != index for whole, sub in uses):
                return []
            accessed.append(name)
        if not accessed or re.search(rf"\b{index}\b", _without_accesses(form.inner, accessed, index)):
            return []  # the index is used as a value, not only as the element position
        written = [p for p in accessed if re.search(rf"\b{p}\s*\[\s*{index}\s*\]\s*[-+*/]?=(?!=)", form.inner)]
        if not written:
            return []
        lane_code = []
        for lane in _LANES:
            code = form.inner
            for p in accessed:
                code = re.sub(rf"\b{p}\s*\[\s*{index}\s*\]", f"{p}_v.{lane}", code)
            lane_code.append("            { " + code.strip() + " }")
        loads = []
        for p in accessed:
            vec = _VECTOR[pointers[p]]
            if p in written and not _reads(form.inner, p, index):
                loads.append(f"            {vec} {p}_v;")
            else:
                loads.append(f"            {vec} {p}_v = reinterpret_cast<const {vec} *>({p})[{index}_v];")
        stores = [f"            reinterpret_cast<{_VECTOR[pointers[p]]} *>({p})[{index}_v] = {p}_v;" for p in written]
        aligned = " | ".join(f"reinterpret_cast<unsigned long long>({p})" for p in accessed)
        body_text = (
            "\n"
            f"    long long {index}_v = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    long long {index}_first = {index}_v * 4;\n"
            f"    if ({index}_first + 3 < (long long)({form.bound}) && (({aligned}) & 15) == 0) {{\n"
            + "\n".join(loads) + "\n"
            + "\n".join(lane_code) + "\n"
            + "\n".join(stores) + "\n"
            "    } else {\n"
            f"        for (long long {index}_s = {index}_first; {index}_s < {index}_first + 4 && {index}_s < (long long)({form.bound}); {index}_s++) {{\n"
            f"            {form.index_type.replace('const ', '')} {index} = ({form.index_type.replace('const ', '')}){index}_s;\n"
            f"            {form.inner.strip()}\n"
            "        }\n"
            "    }\n"
        )
        source = with_body(given, kernel, body_text)
        rewrites: list[Rewrite] = []
        for b in (block, 256, 128):
            if b % 32 != 0 and b != block:
                continue
            grid = ceil_expr(extent, 4 * b)
            launch = LaunchConfig((grid, *given.launch.grid[1:]), (str(b),), given.launch.shared_bytes)
            note = f"{_VECTOR[pointers[accessed[0]]]} loads/stores, block {b}"
            if all(r.launch != launch for r in rewrites):
                rewrites.append(Rewrite(source, launch, note))
        return rewrites


def _without_accesses(inner: str, pointers: list[str], index: str) -> str:
    for p in pointers:
        inner = re.sub(rf"\b{p}\s*\[\s*{index}\s*\]", "_", inner)
    return inner


def _reads(inner: str, pointer: str, index: str) -> bool:
    """Whether `pointer[index]` is read anywhere (compound assignment counts as a read)."""
    access = rf"\b{pointer}\s*\[\s*{index}\s*\]"
    without_plain_writes = re.sub(access + r"\s*=(?!=)", "_ =", inner)
    return bool(re.search(access, without_plain_writes))
