"""Copies through any 2-D/3-D index permutation (transposes, rotations) -> padded shared tiles.

Recognised on the source model (`idioms/permutation.py`): a point kernel whose one statement
stores an expression of one load, where the load's contiguous coordinate (`a`) differs from the
store's (`b`): one side is strided by a whole row. The rewrite gives each block a 32x32 tile of
(a, b), for every value of the remaining coordinate (3-D: grid z, strided by gridDim.z):
threads read with `a` following threadIdx.x (coalesced), keep the value in a [32][33] shared
tile (one column of padding so the transposed read hits 32 banks), and write with `b`
following threadIdx.x (coalesced). The kernel's own guard, declarations and index expressions
are reused with the coordinates re-bound, so any layout, flip or offset is handled alike; each
point is still computed exactly once.
"""

from __future__ import annotations

from regrapht.idioms.permutation import permutation_copy
from regrapht.idioms.pointwise import fresh
from regrapht.search.appliers.common import ApplierInput, Rewrite, with_body
from regrapht.search.appliers.points import bind, ceil_div, prelude, recognised
from regrapht.spec.launch import LaunchConfig

TILE = 32
ROWS = 8  # threads per tile column: each thread moves TILE / ROWS elements per phase
MAX_GRID_Z = 65535


class TiledPermutation:
    technique = "memory_coalescing"
    also: tuple[str, ...] = ("shared_memory_tiling", "bank_conflict_padding")

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        found = recognised(given, permutation_copy)
        if found is None:
            return []
        kernel, copy = found
        view = copy.kernel
        if not copy.transposing or len(view.coordinates) > 3:
            return []
        a, b = copy.fast_in, copy.fast_out
        assert a is not None and b is not None
        rest = [c.name for c in view.coordinates if c.name not in (a, b)]
        element = view.pointers[copy.store.array]
        tile, j, c_loop = fresh(view, "tile"), fresh(view, "j"), fresh(view, "c")
        a0, b0 = fresh(view, "a0"), fresh(view, "b0")
        index_text = copy.store.index_text
        guard = view.guard
        head = ""
        tail = ""
        third: dict[str, str] = {}
        grid_z = "1"
        if rest:
            upper = view.bounds[rest[0]].upper
            head = f"for (int {c_loop} = blockIdx.z; {c_loop} < {upper}; {c_loop} += gridDim.z) {{\n"
            tail = "    __syncthreads();  // the tile is reused for the next slice\n}\n"
            third = {rest[0]: c_loop}
            grid_z = f"min({upper}, {MAX_GRID_Z})"
        load_bind = bind(view, {a: f"{a0} + threadIdx.x", b: f"{b0} + threadIdx.y + {j}", **third})
        store_bind = bind(view, {a: f"{a0} + threadIdx.y + {j}", b: f"{b0} + threadIdx.x", **third})
        body = f"""
    // {TILE}x{TILE} tile of ({a}, {b}): read with {a} contiguous, written with {b} contiguous,
    // through shared memory padded by one column (conflict-free transposed reads).
    __shared__ {element} {tile}[{TILE}][{TILE + 1}];
    const int {a0} = blockIdx.x * {TILE};
    const int {b0} = blockIdx.y * {TILE};
{head}#pragma unroll
    for (int {j} = 0; {j} < {TILE}; {j} += {ROWS}) {{
        {load_bind} {prelude(view)}
        if ({guard})
            {tile}[threadIdx.y + {j}][threadIdx.x] = {copy.value};
    }}
    __syncthreads();
#pragma unroll
    for (int {j} = 0; {j} < {TILE}; {j} += {ROWS}) {{
        {store_bind} {prelude(view)}
        if ({guard})
            {copy.store.array}[{index_text}] = {tile}[threadIdx.x][threadIdx.y + {j}];
    }}
{tail}"""
        launch = LaunchConfig(
            (ceil_div(view.bounds[a].upper, TILE), ceil_div(view.bounds[b].upper, TILE), grid_z)
            if rest else (ceil_div(view.bounds[a].upper, TILE), ceil_div(view.bounds[b].upper, TILE)),
            (str(TILE), str(ROWS)), given.launch.shared_bytes)
        note = f"{TILE}x{TILE} shared tiles of ({a}, {b}), padded, {TILE}x{ROWS} threads"
        return [Rewrite(with_body(given, kernel, body), launch, note)]
