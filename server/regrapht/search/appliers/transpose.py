"""Naive transpose -> a tiled transpose through a padded shared tile.

Matches `x`/`y` from the 2-D global id, a guard `x < cols && y < rows`, and the one statement
`out[x * rows + y] = in[y * cols + x]`: reads are coalesced but writes stride by `rows`. The
tiled version reads a 32x32 tile coalesced, stores it to shared memory ([32][33], so the
transposed read hits 32 banks), and writes it coalesced; blocks of 32x8 threads do 4 rows each.
"""

from __future__ import annotations

import re

from regrapht.search.appliers.common import ApplierInput, KernelApplier, Rewrite, norm, pointer_params
from regrapht.search.source import KernelText
from regrapht.validate.types import LaunchConfig

_ID = r"[A-Za-z_]\w*"
_X = r"(?:blockIdx\.x \* blockDim\.x \+ threadIdx\.x|threadIdx\.x \+ blockIdx\.x \* blockDim\.x|blockDim\.x \* blockIdx\.x \+ threadIdx\.x)"
_Y = _X.replace(".x", ".y")


class TiledTranspose(KernelApplier):
    technique = "memory_coalescing"
    also: tuple[str, ...] = ("shared_memory_tiling", "bank_conflict_padding")

    def rewrite(self, given: ApplierInput, kernel: KernelText, body: str) -> list[Rewrite]:
        text = norm(body)
        m = re.fullmatch(
            rf"(?:const )?int ({_ID}) = \(?({_X}|{_Y})\)?; (?:const )?int ({_ID}) = \(?({_X}|{_Y})\)?; "
            rf"if \( ?\(?({_ID}) < ({_ID})\)? && \(?({_ID}) < ({_ID})\)? ?\) \{{? ?({_ID})\[ ?(.+?) ?\] = ({_ID})\[ ?(.+?) ?\]; ?\}}?",
            text,
        )
        if m is None:
            return []
        a, a_expr, b, b_expr = m.group(1), m.group(2), m.group(3), m.group(4)
        if ("blockIdx.x" in a_expr) == ("blockIdx.x" in b_expr):
            return []
        x, y = (a, b) if "blockIdx.x" in a_expr else (b, a)
        bounds = {m.group(5): m.group(6), m.group(7): m.group(8)}
        if set(bounds) != {x, y}:
            return []
        cols, rows = bounds[x], bounds[y]
        out, out_idx, src, src_idx = m.group(9), m.group(10), m.group(11), m.group(12)
        if out_idx.replace(" ", "") != f"{x}*{rows}+{y}" or src_idx.replace(" ", "") != f"{y}*{cols}+{x}":
            return []
        pointers = pointer_params(kernel)
        if out == src or pointers.get(out) is None or pointers.get(out) != pointers.get(src):
            return []
        element = pointers[out]
        new_body = f"""
    // Read a 32x32 tile with coalesced loads, transpose it through shared memory (one column of
    // padding so the column-wise reads hit 32 different banks), write it with coalesced stores.
    __shared__ {element} tile[32][33];
    int {x} = blockIdx.x * 32 + threadIdx.x;
    int {y} = blockIdx.y * 32 + threadIdx.y;
#pragma unroll
    for (int j = 0; j < 32; j += 8) {{
        if ({x} < {cols} && {y} + j < {rows})
            tile[threadIdx.y + j][threadIdx.x] = {src}[(long long)({y} + j) * {cols} + {x}];
    }}
    __syncthreads();
    {x} = blockIdx.y * 32 + threadIdx.x;
    {y} = blockIdx.x * 32 + threadIdx.y;
#pragma unroll
    for (int j = 0; j < 32; j += 8) {{
        if ({x} < {rows} && {y} + j < {cols})
            {out}[(long long)({y} + j) * {rows} + {x}] = tile[threadIdx.x][threadIdx.y + j];
    }}
"""
        source = given.source[: kernel.body_start] + new_body + given.source[kernel.body_end :]
        launch = LaunchConfig((f"({cols} + 31) / 32", f"({rows} + 31) / 32"), ("32", "8"), given.launch.shared_bytes)
        return [Rewrite(source, launch, "32x32 tiles through padded shared memory, 32x8 threads")]
