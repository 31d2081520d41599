"""Copies through any 2-D/3-D index permutation (transposes, rotations) -> padded shared tiles.

Recognised on the source model (`idioms/permutation.py`): a point kernel whose one statement
stores an expression of one load, where the load's contiguous coordinate (`a`) differs from the
store's (`b`): one side is strided by a whole row. The rewrite gives each block a 32x32 tile of
(a, b), for every value of the remaining coordinate (3-D: grid z, strided by gridDim.z):
threads read with `a` following threadIdx.x (coalesced), keep the value in a [32][33] shared
tile (one column of padding so the transposed read hits 32 banks), and write with `b`
following threadIdx.x (coalesced). The kernel's own guard, declarations and index expressions
are reused with the coordinates re-bound, so any layout, flip or offset is handled alike; each
point is still computed exactly once. After that measured 32x32 tile with 32x8 threads comes a
grid of 32 and 64 tiles and blocks (`GRID_TILES`, `GRID_THREADS`), a thread stepping along a tile
row when the block is narrower than the tile.
"""

from __future__ import annotations

from regrapht.idioms.permutation import PermutationCopy, permutation_copy
from regrapht.idioms.pointwise import fresh
from regrapht.search.appliers.common import ApplierInput, Rewrite, body_edits
from regrapht.search.appliers.grid import grid_order, thread_limit
from regrapht.search.appliers.points import bind, ceil_div, prelude, recognised, tile_rows_read_as_points
from regrapht.search.source import KernelText
from regrapht.spec.launch import LaunchConfig

TILE = 32
ROWS = 8  # threads per tile column: each thread moves TILE / ROWS elements per phase
# The rest of the grid the search may tune, after the 32x32 tile with 32x8 threads: square tiles
# of 32 or 64 (a warp spans a whole row of sectors either way) x blocks of 32 or 64 threads along
# a tile row and 2..32 rows, so 1 to 64 elements per thread per phase.
GRID_TILES = (32, 64)
GRID_THREADS = ((32, 2), (32, 4), (32, 8), (32, 16), (32, 32), (64, 2), (64, 4), (64, 8))
# The 64-tile's shared array ([64][65]) fits the 48 KiB static limit only for elements of at most
# 8 bytes: it is offered for the element types whose size is known here.
ELEMENT_BYTES = {"char": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "short": 2, "unsigned short": 2,
                 "half": 2, "__half": 2, "__nv_bfloat16": 2, "int": 4, "unsigned": 4, "unsigned int": 4,
                 "float": 4, "long": 8, "unsigned long": 8, "long long": 8, "unsigned long long": 8,
                 "double": 8, "size_t": 8, "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4,
                 "uint32_t": 4, "int64_t": 8, "uint64_t": 8}
STATIC_SHARED = 48 * 1024
MAX_GRID_Z = 65535


class TiledPermutation:
    technique = "memory_coalescing"
    also: tuple[str, ...] = ("shared_memory_tiling", "bank_conflict_padding")

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        found = recognised(given, permutation_copy)
        if found is None:
            # a tile's rows walked in block-row steps: read with one thread per row
            rows = tile_rows_read_as_points(given)
            found = recognised(rows, permutation_copy) if rows is not None else None
            given = rows if rows is not None and found is not None else given
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
        size = ELEMENT_BYTES.get(" ".join(element.replace("const", "").split()))
        limit = thread_limit(given)
        first, *others = [_tiled(given, kernel, copy, a, b, rest, element, tile, threads)
                          for tile, threads in grid_points(size, limit)]
        return grid_order([first], others)


def grid_points(element_bytes: int | None, max_threads: int) -> list[tuple[int, tuple[int, int]]]:
    """(tile, block) to build: 32 with 32x8 threads first, then the rest of the grid; a block
    spans at most the tile and `max_threads` threads, and a tile's padded shared array fits the
    static limit (only the 32-tile for elements of unknown size)."""
    rest = [(tile, threads) for tile in GRID_TILES for threads in GRID_THREADS
            if (tile, threads) != (TILE, (TILE, ROWS)) and threads[0] <= tile and threads[1] <= tile
            and threads[0] * threads[1] <= max_threads
            and (tile == TILE or (element_bytes is not None and tile * (tile + 1) * element_bytes <= STATIC_SHARED))]
    return [(TILE, (TILE, ROWS)), *rest]


def _tiled(given: ApplierInput, kernel: KernelText, copy: PermutationCopy, a: str, b: str, rest: list[str],
           element: str, size: int, threads: tuple[int, int]) -> Rewrite:
    """The copy through a padded `size` x `size` tile by a block of `threads`: each thread moves
    size / threads[1] rows of the tile, and of each row size / threads[0] elements."""
    view = copy.kernel
    across, rows = threads
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
    # Along a tile row a block of `size` threads takes one element each (the measured 32x8 text);
    # a narrower one steps along the row as well.
    column = "threadIdx.x"
    row_loop, row_end, inner = "", "", ""
    if across < size:
        i = fresh(view, "i")
        column = f"threadIdx.x + {i}"
        row_loop = f"\n#pragma unroll\n        for (int {i} = 0; {i} < {size}; {i} += {across}) {{"
        row_end = "\n        }"
        inner = "    "
    load_bind = bind(view, {a: f"{a0} + {column}", b: f"{b0} + threadIdx.y + {j}", **third})
    store_bind = bind(view, {a: f"{a0} + threadIdx.y + {j}", b: f"{b0} + {column}", **third})
    body = f"""
    // {size}x{size} tile of ({a}, {b}): read with {a} contiguous, written with {b} contiguous,
    // through shared memory padded by one column (conflict-free transposed reads).
    __shared__ {element} {tile}[{size}][{size + 1}];
    const int {a0} = blockIdx.x * {size};
    const int {b0} = blockIdx.y * {size};
{head}#pragma unroll
    for (int {j} = 0; {j} < {size}; {j} += {rows}) {{{row_loop}
        {inner}{load_bind} {prelude(view)}
        {inner}if ({guard})
            {inner}{tile}[threadIdx.y + {j}][{column}] = {copy.value};{row_end}
    }}
    __syncthreads();
#pragma unroll
    for (int {j} = 0; {j} < {size}; {j} += {rows}) {{{row_loop}
        {inner}{store_bind} {prelude(view)}
        {inner}if ({guard})
            {inner}{copy.store.array}[{index_text}] = {tile}[{column}][threadIdx.y + {j}];{row_end}
    }}
{tail}"""
    launch = LaunchConfig(
        (ceil_div(view.bounds[a].upper, size), ceil_div(view.bounds[b].upper, size), grid_z)
        if rest else (ceil_div(view.bounds[a].upper, size), ceil_div(view.bounds[b].upper, size)),
        (str(across), str(rows)), given.launch.shared_bytes)
    note = f"{size}x{size} shared tiles of ({a}, {b}), padded, {across}x{rows} threads"
    return Rewrite(given.source, launch, note,
                   (("tile", size), ("items", size * size // (across * rows))), edits=body_edits(given, kernel, body))
