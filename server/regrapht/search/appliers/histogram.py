"""Global-atomic histograms -> a shared-memory private histogram per block.

Matches a kernel whose only write to memory is `atomicAdd(&bins[expr], v)` on a pointer
parameter whose bin count is known: a constant element count from the spec, or 256 when the
bin index is a load of an `unsigned char`. Each block counts into shared bins (cheap shared
atomics), then adds its non-zero bins to the global ones. The per-element part is kept (and, in
the second rewrite, turned into a grid-stride loop so each block flushes its bins once for many
elements). Without an early `return` every thread reaches the barriers.
"""

from __future__ import annotations

import re

from regrapht.search.appliers.common import (
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
from regrapht.validate.types import LaunchConfig

_ID = r"[A-Za-z_]\w*"
MAX_SHARED_BINS = 8192  # 32 KiB of 4-byte counters
HIST_MAX_BLOCKS = 1024


class SharedHistogram:
    technique = "shared_memory_privatization"
    also: tuple[str, ...] = ("atomic_reduction",)

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        found = located(given)
        if found is None:
            return []
        kernel, body = found
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
        original = given.source[kernel.body_start : kernel.body_end]
        privatised = re.sub(rf"atomicAdd\(\s*&\s*{bins}\s*\[", "atomicAdd(&local_bins[", original)
        rewrites = [
            Rewrite(_splice(given, kernel, _wrap(privatised, bins, element, count)), given.launch,
                    f"shared-memory private histogram ({count} bins)")
        ]
        form = elementwise_form(body)
        parts = ceil_parts(given.launch.grid[0]) if given.launch.grid else None
        if form is not None and dims[1:] == [1, 1] and parts is not None and parts[1] == dims[0]:
            inner = re.sub(rf"atomicAdd\( ?& ?{bins} ?\[", "atomicAdd(&local_bins[", form.inner)
            loop = f"\n    {grid_stride_header(form.index, form.index_type, form.bound)}\n        {inner}\n    }}\n"
            launch = LaunchConfig((f"min({parts[0]} + 255) / 256, {HIST_MAX_BLOCKS})".replace("min(", "min((", 1),),
                                  ("256",), given.launch.shared_bytes)
            rewrites.insert(0, Rewrite(_splice(given, kernel, _wrap(loop, bins, element, count)), launch,
                                       f"shared-memory private histogram ({count} bins), grid-stride"))
        return rewrites


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
