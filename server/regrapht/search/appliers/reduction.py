"""Reductions into one address: warp shuffles + a block reduction + one atomic per block.

Matches a kernel whose every thread accumulates a private value and ends with one
`atomicAdd(P, acc)` where P is the same address for the whole block (`out`, `&out[0]`,
`&out[blockIdx.x]`). The per-thread part is kept; the final atomic becomes a shuffle reduction
within each warp, a shared array of warp sums, and one atomic per block. With no early `return`
every thread reaches the shuffles, and a block of a multiple of 32 threads keeps warps full.

When the per-thread part is the naive "each thread sums its own contiguous chunk" loop (which
makes a warp read 32 different cache lines per step), it is also replaced by a coalesced
grid-stride loop with 128-bit loads over the same index range [0, n).
"""

from __future__ import annotations

import re

from regrapht.search.appliers.common import (
    TID_RE,
    ApplierInput,
    Rewrite,
    block_dims,
    ceil_parts,
    elementwise_form,
    grid_stride_header,
    located,
    norm,
    pointer_params,
)
from regrapht.search.source import KernelText
from regrapht.validate.types import LaunchConfig

_ID = r"[A-Za-z_]\w*"
_SUMMABLE = ("float", "double", "int", "unsigned int", "long long", "unsigned long long")
# Enough blocks of 256 threads to fill a large GPU (an H200 holds 1056 at once) without
# leaving most of them idle at the end.
REDUCE_MAX_BLOCKS = 1024


class WarpShuffleReduction:
    technique = "warp_shuffle_reduction"
    also: tuple[str, ...] = ("memory_coalescing", "atomic_reduction")

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        found = located(given)
        if found is None:
            return []
        kernel, body = found
        text = norm(body)
        dims = block_dims(given.launch)
        if dims is None or dims[1:] != [1, 1] or dims[0] % 32 != 0:
            return []
        if re.search(r"\breturn\b|__syncthreads|__shfl|__shared__", text):
            return []
        atomic_only = self._atomic_per_element(given, kernel, body)
        if atomic_only is not None:
            return [atomic_only]
        final = re.search(rf"atomicAdd\( ?(&? ?{_ID}(?: ?\[ ?(?:0|blockIdx\.x) ?\])?) ?, ?({_ID}) ?\); ?$", text)
        if final is None:
            return []
        target, acc = final.group(1), final.group(2)
        target_name = re.match(rf"&? ?({_ID})", target)
        pointers = pointer_params(kernel)
        if target_name is None or target_name.group(1) not in pointers:
            return []
        decl = re.match(rf"(?:.*; )?({'|'.join(_SUMMABLE)}) {acc} = ", text)
        if decl is None or _depth(text, text.find(f" {acc} = ")) != 0 or _depth(text, final.start()) != 0:
            return []
        acc_type = decl.group(1)
        if pointers[target_name.group(1)] != acc_type:
            return []
        prefix = text[: final.start()].strip()
        block_reduce = _block_reduce(acc, acc_type, target)
        rewrites = []
        plain = "\n    " + prefix.replace("; ", ";\n    ").replace("{ ", "{\n    ") + "\n" + block_reduce
        rewrites.append(Rewrite(given.source[: kernel.body_start] + plain + given.source[kernel.body_end :],
                                given.launch, "warp-shuffle block reduction, one atomic per block"))
        coalesced = _coalesced_sum(text[: final.start()], acc, acc_type, pointers)
        if coalesced is not None:
            per_thread, bound = coalesced
            new_body = per_thread + block_reduce
            launch = LaunchConfig((f"min(({bound} + 1023) / 1024, {REDUCE_MAX_BLOCKS})",), ("256",),
                                  given.launch.shared_bytes)
            rewrites.insert(0, Rewrite(given.source[: kernel.body_start] + new_body + given.source[kernel.body_end :],
                                       launch, "coalesced grid-stride float4 loads + warp-shuffle block reduction"))
        return rewrites


    def _atomic_per_element(self, given: ApplierInput, kernel: KernelText, body: str) -> Rewrite | None:
        """`if (i < n) atomicAdd(P, expr);`: accumulate expr over a grid-stride loop instead."""
        form = elementwise_form(body)
        if form is None:
            return None
        m = re.fullmatch(rf"\{{? ?atomicAdd\( ?(&? ?{_ID}(?: ?\[ ?0 ?\])?) ?, ?([^;]+?) ?\); ?\}}?", form.inner.strip())
        if m is None or re.search(r"threadIdx|blockIdx|atomic|__shfl|\breturn\b", m.group(2)):
            return None
        target = m.group(1)
        name = re.match(rf"&? ?({_ID})", target)
        pointers = pointer_params(kernel)
        if name is None or pointers.get(name.group(1)) not in _SUMMABLE:
            return None
        acc_type = pointers[name.group(1)]
        parts = ceil_parts(given.launch.grid[0]) if given.launch.grid else None
        if parts is None:
            return None
        i = form.index
        code = (
            f"\n    // Each thread accumulates privately over a grid-stride loop (coalesced reads).\n"
            f"    {acc_type} partial = 0;\n"
            f"    {grid_stride_header(i, form.index_type, form.bound)}\n"
            f"        partial += {m.group(2)};\n    }}\n"
            + _block_reduce("partial", acc_type, target)
        )
        launch = LaunchConfig((f"min(({parts[0]} + 2047) / 2048, {REDUCE_MAX_BLOCKS})",), ("256",),
                              given.launch.shared_bytes)
        source = given.source[: kernel.body_start] + code + given.source[kernel.body_end :]
        return Rewrite(source, launch, "private grid-stride sums + warp-shuffle block reduction, one atomic per block")


class WarpPerRowReduction:
    """One thread per row summing `m[row * cols + j]` -> one warp per row with shuffles.

    A warp of the naive kernel reads 32 rows at once, 32 cache lines per step; a warp per row
    reads 32 consecutive elements per step (coalesced) and combines them with shuffles.
    """

    technique = "warp_shuffle_reduction"
    also: tuple[str, ...] = ("memory_coalescing",)

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        found = located(given)
        if found is None:
            return []
        kernel, body = found
        form = elementwise_form(body)
        dims = block_dims(given.launch)
        if form is None or dims is None or dims[1:] != [1, 1]:
            return []
        m = re.fullmatch(
            rf"(float|double|int) ({_ID}) = 0(?:\.0?f?|f)?; for \( ?int ({_ID}) = 0; \3 < ({_ID}); (?:\3\+\+|\+\+\3|\3 \+= 1) ?\) "
            rf"\{{? ?\2 \+= ({_ID})\[ ?(.+?) ?\]; ?\}}? ({_ID})\[ ?{form.index} ?\] = \2;",
            form.inner.strip(),
        )
        if m is None:
            return []
        acc_type, acc, j, cols, src, index, out = m.groups()
        if index.replace(" ", "") != f"{form.index}*{cols}+{j}":
            return []
        pointers = pointer_params(kernel)
        if pointers.get(src) != acc_type or pointers.get(out) != acc_type:
            return []
        row = form.index
        code = f"""
    // One warp per row: lanes read consecutive elements (coalesced), then combine by shuffles.
    const unsigned int lane = threadIdx.x & 31;
    const long long {row} = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if ({row} < {form.bound}) {{  // the same for the whole warp, so the shuffles see full warps
        {acc_type} {acc} = 0;
        for (int {j} = lane; {j} < {cols}; {j} += 32)
            {acc} += {src}[{row} * {cols} + {j}];
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1)
            {acc} += __shfl_down_sync(0xffffffffu, {acc}, offset);
        if (lane == 0)
            {out}[{row}] = {acc};
    }}
"""
        source = given.source[: kernel.body_start] + code + given.source[kernel.body_end :]
        rewrites = []
        for b in (256, 128, 512):
            warps = b // 32
            launch = LaunchConfig((f"({form.bound} + {warps - 1}) / {warps}",), (str(b),), given.launch.shared_bytes)
            rewrites.append(Rewrite(source, launch, f"one warp per row, block {b}"))
        return rewrites


def _depth(text: str, at: int) -> int:
    return text[:at].count("{") - text[:at].count("}")


def _block_reduce(acc: str, acc_type: str, target: str) -> str:
    return f"""
    // Reduce within each warp by shuffles, then the warp sums within the block, then one
    // atomic per block instead of one per thread.
    __shared__ {acc_type} warp_sums[32];
    const unsigned int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        {acc} += __shfl_down_sync(0xffffffffu, {acc}, offset);
    if (lane == 0)
        warp_sums[warp] = {acc};
    __syncthreads();
    if (warp == 0) {{
        {acc} = lane < (blockDim.x + 31) / 32 ? warp_sums[lane] : ({acc_type})0;
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1)
            {acc} += __shfl_down_sync(0xffffffffu, {acc}, offset);
        if (lane == 0)
            atomicAdd({target}, {acc});
    }}
"""


def _coalesced_sum(prefix: str, acc: str, acc_type: str, pointers: dict[str, str]) -> tuple[str, str] | None:
    """The naive chunked loop as a coalesced grid-stride loop: (code, the element count)."""
    m = re.fullmatch(
        rf"(?:const )?int ({_ID}) = \(?{TID_RE}\)?; {re.escape(acc_type)} {acc} = 0(?:\.0?f?|f|u)?; "
        rf"for \( ?int ({_ID}) = 0; \2 < ({_ID}); (?:\2\+\+|\+\+\2|\2 \+= 1) ?\) \{{ "
        rf"int ({_ID}) = \1 \* \3 \+ \2; if \( ?\4 < ({_ID}) ?\) \{{? ?{acc} \+= ({_ID})\[ ?\4 ?\]; ?\}}? \}}",
        prefix.strip(),
    )
    if m is None or acc_type != "float" or pointers.get(m.group(6)) != "float":
        return None
    src, n = m.group(6), m.group(5)
    code = f"""
    // Consecutive threads read consecutive 16-byte vectors (coalesced), striding over the grid.
    {acc_type} {acc} = 0.0f;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)blockDim.x * gridDim.x;
    const long long vectors = (reinterpret_cast<unsigned long long>({src}) & 15) == 0 ? (long long)({n}) / 4 : 0;
    const float4 *{src}4 = reinterpret_cast<const float4 *>({src});
    for (long long v = first; v < vectors; v += stride) {{
        float4 q = {src}4[v];
        {acc} += (q.x + q.y) + (q.z + q.w);
    }}
    for (long long {m.group(4)} = vectors * 4 + first; {m.group(4)} < ({n}); {m.group(4)} += stride)
        {acc} += {src}[{m.group(4)}];
"""
    return code, n
