"""Launch-configuration appliers: block-size tuning and grid-stride loops.

Both change only how many threads run where, so they are safe exactly when the kernel derives
its work from `blockDim`/`gridDim` (never from a hard-coded block size) and shares nothing
between threads; the grid expression is rewritten consistently with the new block so that
coverage of the index space is unchanged.
"""

from __future__ import annotations

import re

from regrapht.search.appliers.common import (
    ApplierInput,
    KernelApplier,
    Rewrite,
    block_dims,
    ceil_expr,
    ceil_parts,
    elementwise_1d,
    grid_stride_header,
    has_launch_bounds,
    indent,
    with_body,
)
from regrapht.search.source import KernelText
from regrapht.spec.launch import LaunchConfig

BLOCKS_1D = (256, 512, 128, 1024)
BLOCKS_2D = ((32, 8), (32, 4), (32, 16), (64, 4), (16, 16))
# Grid-stride kernels need only enough blocks to fill the device; 4096 blocks of 256 threads
# fill any current GPU (132 SMs x 2048 threads on an H200 is 1056 such blocks) several times.
GRID_STRIDE_MAX_BLOCKS = 4096


class BlockSizeTuning(KernelApplier):
    technique = "launch_configuration"

    def rewrite(self, given: ApplierInput, kernel: KernelText, body: str) -> list[Rewrite]:
        if has_launch_bounds(kernel, given.source) or re.search(r"__shared__|__syncthreads|__shfl|warpSize", body):
            return []
        if "blockDim" not in body:
            return []  # the kernel may hard-code its block size
        dims = block_dims(given.launch)
        if dims is None or dims[2] != 1:
            return []
        grid = list(given.launch.grid)
        rewrites = []
        if dims[1] == 1 and "blockDim.y" not in body:
            parts = ceil_parts(grid[0]) if grid else None
            if parts is None or parts[1] != dims[0]:
                return []
            for b in BLOCKS_1D:
                if b == dims[0]:
                    continue
                launch = LaunchConfig((ceil_expr(parts[0], b), *grid[1:]), (str(b),), given.launch.shared_bytes)
                rewrites.append(Rewrite(given.source, launch, f"block {dims[0]} -> {b}"))
            return rewrites
        if len(grid) < 2:
            return []
        px, py = ceil_parts(grid[0]), ceil_parts(grid[1])
        if px is None or py is None or px[1] != dims[0] or py[1] != dims[1]:
            return []
        for bx, by in BLOCKS_2D:
            if (bx, by) == (dims[0], dims[1]):
                continue
            launch = LaunchConfig(
                (ceil_expr(px[0], bx), ceil_expr(py[0], by), *grid[2:]), (str(bx), str(by)),
                given.launch.shared_bytes,
            )
            rewrites.append(Rewrite(given.source, launch, f"block {dims[0]}x{dims[1]} -> {bx}x{by}"))
        return rewrites


class GridStrideLoop(KernelApplier):
    technique = "grid_stride_loop"

    def rewrite(self, given: ApplierInput, kernel: KernelText, body: str) -> list[Rewrite]:
        found = elementwise_1d(given, body)
        if found is None:
            return []
        form, block, extent = found
        if re.search(rf"\b{form.index}\s*(=|\+=|-=|\+\+|--)", form.inner):
            return []  # the statements change the index themselves
        new_body = (
            f"\n    {grid_stride_header(form.index, form.index_type, form.bound)}\n"
            f"{indent(_statements(form.inner), '        ')}\n"
            "    }\n"
        )
        rewrites = []
        for b in (block, 256):
            grid = f"min({ceil_expr(extent, b)}, {GRID_STRIDE_MAX_BLOCKS * 256 // b})"
            launch = LaunchConfig((grid, *given.launch.grid[1:]), (str(b),), given.launch.shared_bytes)
            rewrites.append(Rewrite(with_body(given, kernel, new_body), launch, f"grid-stride loop, grid {grid}"))
            if b == 256:
                break
        return rewrites


def _statements(inner: str) -> str:
    """Whitespace-collapsed statements laid out one per line with 4-space block indentation."""
    lines: list[str] = []
    current = ""
    parens = 0
    blocks: list[bool] = []  # per open brace: a block (True) or an initializer list (False)
    for ch in inner:
        if ch == "(":
            parens += 1
        elif ch == ")":
            parens -= 1
        if ch == "{":
            is_block = not current.rstrip().endswith("=") and parens == 0
            blocks.append(is_block)
            if is_block:
                lines.append("    " * (len(blocks) - 1) + (current.strip() + " {").strip())
                current = ""
                continue
        elif ch == "}" and blocks and blocks.pop():
            if current.strip():
                lines.append("    " * (len(blocks) + 1) + current.strip())
            lines.append("    " * len(blocks) + "}")
            current = ""
            continue
        current += ch
        if ch == ";" and parens == 0 and not (blocks and not blocks[-1]):
            lines.append("    " * sum(1 for b in blocks if b) + current.strip())
            current = ""
    if current.strip():
        lines.append(current.strip())
    return "\n".join(lines)
