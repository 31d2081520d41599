"""Global-atomic histograms -> a shared-memory private histogram per block.

Matches a kernel whose only write to memory is `atomicAdd(&bins[expr], v)` on a pointer
parameter whose bin count is known: a constant element count from the spec, or 256 when the
bin index is a load of an `unsigned char`. Each block counts into shared bins (cheap shared
atomics), then adds its non-zero bins to the global ones. The per-element part is kept (and, in
the second rewrite, turned into a grid-stride loop so each block flushes its bins once for many
elements). Without an early `return` every thread reaches the barriers.

The byte histogram itself (`if (i < n) atomicAdd(&bins[data[i]], 1)` over `unsigned char` data
into 256 `unsigned int`/`int` bins) gets a dedicated rewrite first: a grid-stride loop over
16-byte `uint4` loads (only when `data` is 16-byte aligned; a scalar loop covers the rest and
the tail, so any n and any offset give the same counts), one shared sub-histogram per warp (a
warp's atomics then contend only with themselves), and a grid of a few blocks per SM whose bins
are summed over the warps and added to the global ones once per block.
"""

from __future__ import annotations

import re

from regrapht.search.appliers.common import (
    ApplierInput,
    KernelApplier,
    Rewrite,
    block_dims,
    ceil_parts,
    elementwise_form,
    grid_stride_header,
    norm,
    pointer_params,
)
from regrapht.search.source import KernelText
from regrapht.spec.launch import LaunchConfig

_ID = r"[A-Za-z_]\w*"
MAX_SHARED_BINS = 8192  # 32 KiB of 4-byte counters
HIST_MAX_BLOCKS = 1024
# (threads per block, blocks): 132 SMs on an H200, a few resident blocks each; the grid-stride
# loop covers any n, so the cap only trades flush work (256 atomics per block) for parallelism.
BYTE_HIST_LAUNCHES = ((256, 132 * 4), (512, 132 * 2), (1024, 132 * 2))


class SharedHistogram(KernelApplier):
    technique = "shared_memory_privatization"
    also: tuple[str, ...] = ("atomic_reduction",)

    def rewrite(self, given: ApplierInput, kernel: KernelText, body: str) -> list[Rewrite]:
        text = norm(body)
        dims = block_dims(given.launch)
        if dims is None or re.search(r"\breturn\b|__syncthreads|__shared__", text):
            return []
        atomics = re.findall(rf"atomicAdd\( ?& ?({_ID}) ?\[ ?(.+?) ?\] ?, ?(.+?) ?\);", text)
        if len(atomics) != 1 or len(re.findall(r"atomic\w*\(", text)) != 1:
            return []
        bins, index_expr, _ = atomics[0]
        pointers = pointer_params(kernel)
        if pointers.get(bins) not in ("unsigned int", "int", "unsigned long long"):
            return []
        if any(re.search(rf"\b{p}\s*\[[^;]*\]\s*=(?!=)", text) for p in pointers):
            return []  # other stores: not a plain histogram
        count = given.constants.get(bins)
        uchar_index = re.fullmatch(rf"({_ID}) ?\[ ?{_ID} ?\]", index_expr)
        if count is None and uchar_index and pointers.get(uchar_index.group(1)) == "unsigned char":
            count = 256
        if count is None or not 0 < count <= MAX_SHARED_BINS:
            return []
        element = pointers[bins]
        rewrites = self._byte_histogram(given, kernel, body, bins)
        original = given.source[kernel.body_start : kernel.body_end]
        privatised = re.sub(rf"atomicAdd\(\s*&\s*{bins}\s*\[", "atomicAdd(&local_bins[", original)
        rewrites.append(
            Rewrite(_splice(given, kernel, _wrap(privatised, bins, element, count)), given.launch,
                    f"shared-memory private histogram ({count} bins)"))
        form = elementwise_form(body)
        parts = ceil_parts(given.launch.grid[0]) if given.launch.grid else None
        if form is not None and dims[1:] == [1, 1] and parts is not None and parts[1] == dims[0]:
            inner = re.sub(rf"atomicAdd\( ?& ?{bins} ?\[", "atomicAdd(&local_bins[", form.inner)
            loop = f"\n    {grid_stride_header(form.index, form.index_type, form.bound)}\n        {inner}\n    }}\n"
            launch = LaunchConfig((f"min({parts[0]} + 255) / 256, {HIST_MAX_BLOCKS})".replace("min(", "min((", 1),),
                                  ("256",), given.launch.shared_bytes)
            rewrites.insert(len(rewrites) - 1, Rewrite(_splice(given, kernel, _wrap(loop, bins, element, count)), launch,
                                       f"shared-memory private histogram ({count} bins), grid-stride"))
        return rewrites

    def _byte_histogram(self, given: ApplierInput, kernel: KernelText, body: str, bins: str) -> list[Rewrite]:
        """The vectorized per-warp rewrite, or nothing when the kernel is not exactly the plain
        byte histogram (one guarded increment by 1 of `bins[data[i]]`)."""
        form = elementwise_form(body)
        if form is None or form.index_type not in ("int", "const int", "long long", "size_t", "unsigned int", "unsigned"):
            return []
        m = re.fullmatch(rf"\{{? ?atomicAdd\( ?& ?{bins} ?\[ ?({_ID}) ?\[ ?{form.index} ?\] ?\] ?, ?(1u?|1U) ?\); ?\}}?",
                         form.inner.strip())
        pointers = pointer_params(kernel)
        if m is None or pointers.get(m.group(1)) != "unsigned char" or pointers.get(bins) not in ("unsigned int", "int"):
            return []
        if given.constants.get(bins, 256) != 256:
            return []
        # The original must count each element exactly once: a 1-D launch whose grid is exactly
        # ceil(bound / block) (a larger block.y or grid.y would count elements several times,
        # a smaller grid only a prefix).
        dims = block_dims(given.launch)
        parts = ceil_parts(given.launch.grid[0]) if len(given.launch.grid) == 1 else None
        if dims is None or dims[1:] != [1, 1] or parts is None or parts != (form.bound, dims[0]):
            return []
        names = {p.name for p in kernel.params}
        if names & {"warp_bins", "mine", "data4", "first", "stride", "vectors", "q", "v", "b", "w", "i",
                    "total_", "sum", "word", "words"}:
            return []
        rewrites = []
        for threads, blocks in BYTE_HIST_LAUNCHES:
            code = _byte_histogram_body(m.group(1), bins, pointers[bins], form.bound, threads // 32)
            launch = LaunchConfig((f"min(({form.bound} + {threads * 16 - 1}) / {threads * 16}, {blocks})",),
                                  (str(threads),), given.launch.shared_bytes)
            rewrites.append(Rewrite(_splice(given, kernel, code), launch,
                                    f"uint4 loads, per-warp shared histograms, {blocks} blocks of {threads}"))
        return rewrites


def _byte_histogram_body(data: str, bins: str, element: str, bound: str, warps: int) -> str:
    # The loop counter is 64-bit so `+= stride` cannot overflow near INT_MAX; a negative bound
    # gives no iterations, like the original's `i < n`.
    count_word = "\n".join(
        f"            atomicAdd(&mine[(word >> {shift}) & 255u], ({element})1);" for shift in (0, 8, 16, 24)
    )
    return f"""
    // One private 256-bin histogram per warp in shared memory: a warp's atomics contend only
    // with its own lanes. Summed over the warps and added to the global bins once per block.
    __shared__ {element} warp_bins[{warps}][256];
    for (int b = threadIdx.x; b < {warps} * 256; b += blockDim.x)
        warp_bins[b / 256][b % 256] = 0;
    __syncthreads();
    {element} *mine = warp_bins[(threadIdx.x >> 5) % {warps}];  // in range even for another block size
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)blockDim.x * gridDim.x;
    const long long total_ = (long long)({bound});
    // 16 bytes per load when the data is 16-byte aligned (cudaMalloc's is); else all scalar.
    const long long vectors = (reinterpret_cast<unsigned long long>({data}) & 15) == 0 && total_ > 0 ? total_ / 16 : 0;
    const uint4 *data4 = reinterpret_cast<const uint4 *>({data});
    for (long long v = first; v < vectors; v += stride) {{
        const uint4 q = data4[v];
        const unsigned int words[4] = {{q.x, q.y, q.z, q.w}};
#pragma unroll
        for (int w = 0; w < 4; w++) {{
            const unsigned int word = words[w];
{count_word}
        }}
    }}
    for (long long i = vectors * 16 + first; i < total_; i += stride)
        atomicAdd(&mine[{data}[i]], ({element})1);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {{
        {element} sum = 0;
#pragma unroll
        for (int w = 0; w < {warps}; w++)
            sum += warp_bins[w][b];
        if (sum != 0)
            atomicAdd(&{bins}[b], sum);
    }}
"""


def _splice(given: ApplierInput, kernel: object, body: str) -> str:
    start = kernel.body_start  # type: ignore[attr-defined]
    end = kernel.body_end  # type: ignore[attr-defined]
    return given.source[:start] + body + given.source[end:]


def _wrap(per_element: str, bins: str, element: str, count: int) -> str:
    return f"""
    // Count into a private shared histogram, then add it to the global one once per block.
    __shared__ {element} local_bins[{count}];
    for (int b = threadIdx.y * blockDim.x + threadIdx.x; b < {count}; b += blockDim.x * blockDim.y)
        local_bins[b] = 0;
    __syncthreads();
{per_element.rstrip()}
    __syncthreads();
    for (int b = threadIdx.y * blockDim.x + threadIdx.x; b < {count}; b += blockDim.x * blockDim.y) {{
        if (local_bins[b] != 0)
            atomicAdd(&{bins}[b], local_bins[b]);
    }}
"""
