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
    KernelApplier,
    Rewrite,
    block_dims,
    ceil_parts,
    elementwise_form,
    grid_stride_header,
    norm,
    pointer_params,
    with_body,
)
from regrapht.search.source import KernelText
from regrapht.spec.launch import LaunchConfig

_ID = r"[A-Za-z_]\w*"
_SUMMABLE = ("float", "double", "int", "unsigned int", "long long", "unsigned long long")
# Enough blocks of 256 threads to fill a large GPU (an H200 holds 1056 at once) without
# leaving most of them idle at the end.
REDUCE_MAX_BLOCKS = 1024
# Vectorized sums: 8 and 4 resident blocks of 256 threads on each of an H200's 132 SMs; the
# grid-stride loop covers any n, so the cap only trades per-block work for parallelism.
REDUCE_VECTOR_BLOCKS = (132 * 8, 132 * 4)
_VECTOR_NAMES = {"partial", "partial_b", "first", "stride", "total_", "vectors", "v", "p", "q", "warp_sums", "lane",
                 "warp", "offset", "e"}


class WarpShuffleReduction(KernelApplier):
    technique = "warp_shuffle_reduction"
    also: tuple[str, ...] = ("memory_coalescing", "atomic_reduction")

    def rewrite(self, given: ApplierInput, kernel: KernelText, body: str) -> list[Rewrite]:
        text = norm(body)
        dims = block_dims(given.launch)
        if dims is None or dims[1:] != [1, 1] or dims[0] % 32 != 0:
            return []
        if re.search(r"\breturn\b|__syncthreads|__shfl|__shared__", text):
            return []
        atomic_only = self._atomic_per_element(given, kernel, body)
        if atomic_only:
            return atomic_only
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
        rewrites.append(Rewrite(with_body(given, kernel, plain),
                                given.launch, "warp-shuffle block reduction, one atomic per block"))
        grid_parts = ceil_parts(given.launch.grid[0]) if len(given.launch.grid) == 1 else None
        coalesced = _coalesced_sum(text[: final.start()], acc, acc_type, pointers, {p.name for p in kernel.params},
                                   grid_parts, dims[0])
        if coalesced is not None:
            per_thread, bound = coalesced
            new_body = per_thread + block_reduce
            launch = LaunchConfig((f"min(({bound} + 1023) / 1024, {REDUCE_MAX_BLOCKS})",), ("256",),
                                  given.launch.shared_bytes)
            rewrites.insert(0, Rewrite(with_body(given, kernel, new_body),
                                       launch, "coalesced grid-stride float4 loads + warp-shuffle block reduction"))
        return rewrites


    def _atomic_per_element(self, given: ApplierInput, kernel: KernelText, body: str) -> list[Rewrite]:
        """`if (i < n) atomicAdd(P, expr);`: accumulate expr over a grid-stride loop instead; when
        expr is just `src[i]` of a float array, also float4 loads with two accumulators."""
        form = elementwise_form(body)
        if form is None:
            return []
        m = re.fullmatch(rf"\{{? ?atomicAdd\( ?(&? ?{_ID}(?: ?\[ ?0 ?\])?) ?, ?([^;]+?) ?\); ?\}}?", form.inner.strip())
        if m is None or re.search(r"threadIdx|blockIdx|atomic|__shfl|\breturn\b", m.group(2)):
            return []
        target = m.group(1)
        name = re.match(rf"&? ?({_ID})", target)
        pointers = pointer_params(kernel)
        if name is None or pointers.get(name.group(1)) not in _SUMMABLE:
            return []
        acc_type = pointers[name.group(1)]
        # The original adds each index in [0, bound) exactly once only when its 1-D grid is
        # exactly ceil(bound / block); then the grid-stride loop over [0, bound) is the same sum.
        parts = ceil_parts(given.launch.grid[0]) if len(given.launch.grid) == 1 else None
        block = block_dims(given.launch)
        if parts is None or block is None or parts != (form.bound, block[0]):
            return []
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
        source = with_body(given, kernel, code)
        rewrites = [Rewrite(source, launch, "private grid-stride sums + warp-shuffle block reduction, one atomic per block")]
        src = re.fullmatch(rf"({_ID}) ?\[ ?{form.index} ?\]", m.group(2))
        names = {p.name for p in kernel.params}
        if (src is None or acc_type != "float" or pointers.get(src.group(1)) != "float"
                or names & (_VECTOR_NAMES | {src.group(1) + "4"})):
            return rewrites
        vector_code = _vector_sum(src.group(1), form.bound, "partial") + _block_reduce("partial", "float", target)
        vector_source = with_body(given, kernel, vector_code)
        for blocks in REDUCE_VECTOR_BLOCKS:
            vector_launch = LaunchConfig((f"min(({form.bound} + 2047) / 2048, {blocks})",), ("256",),
                                         given.launch.shared_bytes)
            rewrites.insert(len(rewrites) - 1, Rewrite(vector_source, vector_launch,
                                                       f"float4 grid-stride sums, {blocks} blocks + warp-shuffle block reduction"))
        return rewrites


class WarpPerRowReduction(KernelApplier):
    """One thread per row summing `m[row * cols + j]` -> one warp per row with shuffles.

    A warp of the naive kernel reads 32 rows at once, 32 cache lines per step; a warp per row
    reads 32 consecutive elements per step (coalesced) and combines them with shuffles.
    """

    technique = "warp_shuffle_reduction"
    also: tuple[str, ...] = ("memory_coalescing",)

    def rewrite(self, given: ApplierInput, kernel: KernelText, body: str) -> list[Rewrite]:
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
        # The original writes exactly the rows [0, bound) only when its grid is ceil(bound / block).
        parts = ceil_parts(given.launch.grid[0]) if len(given.launch.grid) == 1 else None
        if parts is None or parts != (form.bound, dims[0]):
            return []
        names = {p.name for p in kernel.params}
        if names & {"lane", "offset", "row_ptr", "row4", "quads", "p", "q", f"{acc}_b", form.index, j}:
            return []
        row = form.index
        rewrites = []
        if acc_type == "float":
            vector = _row_sums(row, form.bound, acc_type, acc, j, cols, src, out, vector=True)
            for b in (256, 512):
                warps = b // 32
                launch = LaunchConfig((f"({form.bound} + {warps - 1}) / {warps}",), (str(b),), given.launch.shared_bytes)
                rewrites.append(Rewrite(with_body(given, kernel, vector), launch,
                                        f"one warp per row, float4 loads, block {b}"))
        scalar = with_body(given, kernel, _row_sums(row, form.bound, acc_type, acc, j, cols, src, out, vector=False))
        for b in (256, 128, 512):
            warps = b // 32
            launch = LaunchConfig((f"({form.bound} + {warps - 1}) / {warps}",), (str(b),), given.launch.shared_bytes)
            rewrites.append(Rewrite(scalar, launch, f"one warp per row, block {b}"))
        return rewrites


def _row_sums(row: str, bound: str, acc_type: str, acc: str, j: str, cols: str, src: str, out: str, *,
              vector: bool) -> str:
    """One warp per row; `vector` adds 16-byte loads (two in flight, two accumulators) when
    every row starts 16-byte aligned (cols a multiple of 4 and an aligned base)."""
    loads = f"""        for (int {j} = lane; {j} < {cols}; {j} += 32)
            {acc} += row_ptr[{j}];"""
    if vector:
        loads = f"""        if ((({cols}) & 3) == 0 && (reinterpret_cast<unsigned long long>({src}) & 15) == 0) {{
            const float4 *row4 = reinterpret_cast<const float4 *>(row_ptr);
            const int quads = ({cols}) / 4;
            int {j} = lane;
            for (; {j} + 32 < quads; {j} += 64) {{
                const float4 p = row4[{j}], q = row4[{j} + 32];
                {acc} += (p.x + p.y) + (p.z + p.w);
                {acc}_b += (q.x + q.y) + (q.z + q.w);
            }}
            if ({j} < quads) {{
                const float4 p = row4[{j}];
                {acc} += (p.x + p.y) + (p.z + p.w);
            }}
        }} else {{
    {loads.replace(chr(10), chr(10) + "    ")}
        }}
        {acc} += {acc}_b;"""
    return f"""
    // One warp per row: lanes read consecutive elements (coalesced), then combine by shuffles.
    const unsigned int lane = threadIdx.x & 31;
    const long long {row} = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if ({row} < {bound}) {{  // the same for the whole warp, so the shuffles see full warps
        {acc_type} {acc} = 0{", " + acc + "_b = 0" if vector else ""};
        const {acc_type} *row_ptr = {src} + {row} * ({cols});
{loads}
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1)
            {acc} += __shfl_down_sync(0xffffffffu, {acc}, offset);
        if (lane == 0)
            {out}[{row}] = {acc};
    }}
"""


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


def _vector_sum(src: str, bound: str, acc: str) -> str:
    """`float acc` = this thread's grid-stride share of src[0, bound): 16-byte loads (when src is
    16-byte aligned), two loads in flight per iteration into two accumulators, scalar tail."""
    return f"""
    // Consecutive threads read consecutive 16-byte vectors (coalesced), striding over the grid;
    // two independent loads and accumulators per iteration keep more bytes in flight.
    float {acc} = 0.0f, {acc}_b = 0.0f;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)blockDim.x * gridDim.x;
    const long long total_ = (long long)({bound});
    const long long vectors = (reinterpret_cast<unsigned long long>({src}) & 15) == 0 && total_ > 0 ? total_ / 4 : 0;
    const float4 *{src}4 = reinterpret_cast<const float4 *>({src});
    long long v = first;
    for (; v + stride < vectors; v += 2 * stride) {{
        const float4 p = {src}4[v], q = {src}4[v + stride];
        {acc} += (p.x + p.y) + (p.z + p.w);
        {acc}_b += (q.x + q.y) + (q.z + q.w);
    }}
    if (v < vectors) {{
        const float4 p = {src}4[v];
        {acc} += (p.x + p.y) + (p.z + p.w);
    }}
    for (long long e = vectors * 4 + first; e < total_; e += stride)
        {acc} += {src}[e];
    {acc} += {acc}_b;
"""


def _coalesced_sum(prefix: str, acc: str, acc_type: str, pointers: dict[str, str], names: set[str],
                   grid_parts: tuple[str, int] | None, block: int) -> tuple[str, str] | None:
    """The naive chunked loop as a coalesced grid-stride loop: (code, the element count)."""
    m = re.fullmatch(
        rf"(?:const )?int ({_ID}) = \(?{TID_RE}\)?; {re.escape(acc_type)} {acc} = 0(?:\.0?f?|f|u)?; "
        rf"for \( ?int ({_ID}) = 0; \2 < ({_ID}); (?:\2\+\+|\+\+\2|\2 \+= 1) ?\) \{{ "
        rf"int ({_ID}) = \1 \* \3 \+ \2; if \( ?\4 < ({_ID}) ?\) \{{? ?{acc} \+= ({_ID})\[ ?\4 ?\]; ?\}}? \}}",
        prefix.strip(),
    )
    if m is None or acc_type != "float" or pointers.get(m.group(6)) != "float":
        return None
    # The chunks cover [0, n) only when the grid has ceil(n / chunk) threads (rounded up to blocks).
    covering = {f"ceil_div({m.group(5)},{m.group(3)})", f"({m.group(5)}+{m.group(3)}-1)/{m.group(3)}"}
    if grid_parts is None or grid_parts[0].replace(" ", "") not in covering or grid_parts[1] != block:
        return None
    if names & (_VECTOR_NAMES | {acc + "_b", m.group(6) + "4"}):
        return None
    src, n = m.group(6), m.group(5)
    code = _vector_sum(src, n, acc)
    return code, n
