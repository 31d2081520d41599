"""Launch-configuration appliers: block-size tuning and grid-stride loops.

Both change only how many threads run where. Block-size tuning is safe when the kernel derives
its work from `blockDim`/`gridDim` (never from a hard-coded block size) and shares nothing
between threads; the grid expression is rewritten consistently with the new block so that
coverage of the index space is unchanged. The grid-stride loop is built on the point-kernel
view (`idioms/pointwise.py`): every point of the guarded domain is visited once by a loop, and
the grid is sized from the device (`DeviceLimits`).
"""

from __future__ import annotations

from regrapht.idioms.pointwise import fresh
from regrapht.idioms.syntax import walk
from regrapht.search.appliers.common import (
    ApplierInput,
    DeviceLimits,
    KernelApplier,
    Rewrite,
    block_dims,
    body_edits,
    ceil_expr,
    ceil_parts,
    has_launch_bounds,
)
from regrapht.search.appliers.points import point_view, prelude
from regrapht.search.source import KernelText
from regrapht.spec.launch import LaunchConfig

# What threads of a block share (a block size they may depend on): such kernels keep theirs.
SHARING_WORDS = ("__shared__", "__syncthreads", "__shfl", "warpSize")
BLOCKS_1D = (256, 512, 128, 1024)
BLOCKS_2D = ((32, 8), (32, 4), (32, 16), (64, 4), (16, 16))
# Without a device to size it by, a grid-stride grid gives each thread this many points.
GRID_STRIDE_POINTS = 8


class BlockSizeTuning(KernelApplier):
    technique = "launch_configuration"

    def rewrite(self, given: ApplierInput, kernel: KernelText, body: str) -> list[Rewrite]:
        if has_launch_bounds(kernel, given.source) or any(word in body for word in SHARING_WORDS):
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


class GridStrideLoop:
    """A one-coordinate point kernel with light points (no loop in its work; atomics allowed:
    each point still runs once) -> a grid-stride loop over the points, with a grid that fills
    the device once."""

    technique = "grid_stride_loop"
    also: tuple[str, ...] = ()

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        found = point_view(given, atomics=True)
        if found is None:
            return []
        kernel, view = found
        if len(view.coordinates) != 1 or view.linear is not None or view.coordinates[0].axis != "x" or \
                len(given.launch.block) != 1:
            return []
        if any(n.type in ("for_statement", "while_statement", "do_statement") for w in view.work_nodes for n in walk(w)):
            return []  # heavy points (a row loop each): fewer threads would starve the device (H200: 0.1x)
        coordinate = view.coordinates[0]
        upper = view.bounds[coordinate.name].upper
        counter = fresh(view, coordinate.name)
        ctype = coordinate.type.replace("const ", "")
        body = (f"\n    for (long long {counter} = (long long)blockIdx.x * blockDim.x + threadIdx.x; "
                f"{counter} < (long long)({upper}); {counter} += (long long)blockDim.x * gridDim.x) {{\n"
                f"        {ctype} {coordinate.name} = ({ctype}){counter}; {prelude(view)}\n"
                f"        if ({view.guard}) {{\n            {view.work_with({})}\n        }}\n    }}\n")
        rewrites = []
        block = int(given.launch.block[0])
        for threads in dict.fromkeys((block, 256)):
            grid = _filling_grid(given.device, upper, threads)
            launch = LaunchConfig((grid,), (str(threads),), given.launch.shared_bytes)
            rewrites.append(Rewrite(given.source, launch, f"grid-stride loop, grid {grid}", edits=body_edits(given, kernel, body)))
        return rewrites


def _filling_grid(device: DeviceLimits | None, upper: str, threads: int) -> str:
    """As many blocks as the device keeps resident at once (never more than the points need);
    without a device, one block per GRID_STRIDE_POINTS points per thread."""
    needed = ceil_expr(upper, threads)
    if device is not None:
        return f"min({needed}, {device.resident_blocks(threads)})"
    return ceil_expr(upper, threads * GRID_STRIDE_POINTS)
