"""Row operations with one thread per row -> one warp or one block per row, combined with CUB.

Matches (through `idioms.items.item_program`, not text) kernels where each thread owns a row
and loops over the row's elements at unit stride: row sums/maxima, multi-pass row operations
(softmax: max, sum of exponentials, normalise; layernorm: mean, variance, normalise; rmsnorm),
row-major GEMV (`y[row] = dot(A[row, :], x)`), argmax/argmin per row and plain per-row maps.
A warp of the original reads 32 different rows per step (32 cache lines for 32 useful
elements); a group per row reads consecutive elements (coalesced) and combines partial results
with `cub::WarpReduce` / `cub::BlockReduce`. Scans go to `scan.py`, CSR rows to `csr_rows.py`,
column layouts to `column_reduction.py`.

Launch: a group-stride loop over rows, so any grid is correct. The rewrites differ in the
group: 4-16 lanes of a warp for rows of at most 64 elements, a warp per row for rows up to 1024,
a block per row for longer ones (its size from the row length); with a known device, a warp-per-row launch that could not fill the GPU's resident
warps comes last.

Then the rest of a parameter grid (`Rewrite.params`: threads_per_row, rows_per_block), in
lexicographic order: groups of 4-32 lanes in blocks of 128-1024 threads, and a block of 128-1024
threads per row, as far as the row length makes them worth a try (lanes of a short row, no
sub-warp groups for rows over 1024) and the device and the kernel's `__launch_bounds__` allow.
"""

from __future__ import annotations

from regrapht.cuda.affine import Poly, atom_is_memory
from regrapht.idioms.items import ELEMENT, ItemProgram, item_program
from regrapht.idioms.normal_form import normal_form
from regrapht.idioms.syntax import depends_on, kernel_syntax
from regrapht.search.appliers.common import ApplierInput, Rewrite, body_change, edits
from regrapht.search.appliers.cooperative import (
    Group,
    cooperative_body,
    cub_change,
    extent_of,
    item_count,
    original_covers,
    resident_warps,
    template_instance,
    value_of,
)
from regrapht.search.appliers.grid import grid_order, thread_limit
from regrapht.search.source import find_kernel
from regrapht.spec.launch import LaunchConfig

WARP_BLOCK = 256  # threads per block of the warp-per-row launch (8 rows per block)


def row_layout(program: ItemProgram) -> bool:
    """Every element loop touches memory at unit stride in its element index (or gathers), and
    at least one of its arrays moves with the item (different rows, different addresses)."""

    item = program.item
    if item is None:
        return False
    moves = False
    for loop in program.loops:
        for access in loop.reads:
            index = access.index
            if index is None:
                return False
            if any(atom.startswith("~") and not atom_is_memory(atom) and depends_on(Poly.atom(atom), item.name)
                   for atom in index.atoms()):
                # A row chosen through a division or modulo of the item (`i = t / n`, `j = t % n`):
                # a matrix product's output element, which tiling serves, not a row per group.
                # (A row loaded from memory, `table[idx[i] * d + k]`, is a gathered row: fine.)
                return False
            step = index.coefficient(ELEMENT)
            if step.kind in ("constant", "runtime"):
                return False  # strided along the row: a column layout, not this applier's
            if depends_on(index, item.name) and step.kind == "unit":
                moves = True
    return moves or any(loop.writes for loop in program.loops)


GRID_BLOCKS = (128, 256, 512, 1024)  # threads per block of the grid's groups


def row_extent(given: ApplierInput, program: ItemProgram) -> int | None:
    """Elements of the longest element loop of a row, when the spec's constants fix it."""
    extents = [e for e in (extent_of(given, loop, program) for loop in program.loops) if e is not None]
    return max(extents) if extents else None


def groups_for(given: ApplierInput, program: ItemProgram, rows: str) -> list[Group]:
    """The groups to try, most promising first."""
    extent = row_extent(given, program)
    if extent is None:
        order = [Group("block", 256), Group("warp", WARP_BLOCK), Group("block", 512)]
    elif extent <= 16:
        # Short rows: a part of a warp per row, so that lanes are not left without elements.
        order = [Group("warp", WARP_BLOCK, 4), Group("warp", WARP_BLOCK, 8), Group("warp", WARP_BLOCK)]
    elif extent <= 64:
        order = [Group("warp", WARP_BLOCK, 16), Group("warp", WARP_BLOCK, 8), Group("warp", WARP_BLOCK)]
    elif extent <= 1024:
        order = [Group("warp", WARP_BLOCK), Group("block", 128), Group("block", 256)]
    else:
        size = 128
        while size < 1024 and size * 8 < extent:
            size *= 2
        order = [Group("block", size), Group("block", max(128, size // 2)), Group("warp", WARP_BLOCK)]
    count = value_of(rows, given)
    warps = resident_warps(given)
    if count is not None and warps is not None and count < warps // 4:
        # Too few rows to keep the device's warps busy one row each: blocks per row first.
        order = [g for g in order if g.kind == "block"] + [g for g in order if g.kind == "warp"]
    return order


def grid_groups(given: ApplierInput, program: ItemProgram, largest: int) -> list[Group]:
    """The parameter grid, in lexicographic order of `group_params`: 4-32 lanes of a warp per
    row (16 and 32 for rows over 1024 elements; no more lanes than a short row has, rounded up)
    in blocks of 128-1024 threads, and for rows longer than 64 elements a block per row, each
    block at most `largest` threads."""
    extent = row_extent(given, program)
    if extent is not None and extent <= 64:
        lanes: tuple[int, ...] = tuple(n for n in (4, 8, 16, 32) if n // 2 < max(extent, 4))
        per_row: tuple[int, ...] = ()
    elif extent is not None and extent > 1024:
        lanes, per_row = (16, 32), GRID_BLOCKS
    else:
        lanes, per_row = (8, 16, 32), GRID_BLOCKS
    groups = [Group("warp", block, n) for n in lanes for block in GRID_BLOCKS if block <= largest]
    groups += [Group("block", block) for block in per_row if block <= largest]
    return sorted(groups, key=group_params)


def group_params(group: Group) -> tuple[tuple[str, int], ...]:
    """A group's coordinates in the grid (the block is their product)."""
    return (("threads_per_row", group.size), ("rows_per_block", group.per_block))


class GroupPerRow:
    technique = "block_per_row"
    also: tuple[str, ...] = ("warp_shuffle_reduction", "memory_coalescing")

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        # Pointer walks (`p += n`) read as indexing, sums kept in `y[j]` as register sums (normal_form).
        kernel = kernel_syntax(normal_form(given.source, given.kernel), given.kernel)
        located = find_kernel(given.source, given.kernel)
        if kernel is None or located is None:
            return []
        program = item_program(kernel)
        if program is None or program.csr is not None or any(loop.scan for loop in program.loops):
            return []
        if not row_layout(program) or not original_covers(given, program):
            return []
        rows = item_count(given, program)
        if rows is None:
            return []
        instance = template_instance(given.kernel, program)

        def rewrite(group: Group) -> Rewrite | None:
            body = cooperative_body(program, group, instance)
            if body is None:
                return None
            blocks = rows if group.kind == "block" else f"({rows} + {group.per_block - 1}) / {group.per_block}"
            launch = LaunchConfig((blocks,), (str(group.block),), given.launch.shared_bytes)
            return Rewrite(given.source, launch,
                           group.describe("row") + ", CUB reductions", group_params(group), edits=edits(given.source, *cub_change(given.source), body_change(located, body)))

        first = [r for r in map(rewrite, groups_for(given, program, rows)) if r is not None]
        grid = [r for r in map(rewrite, grid_groups(given, program, thread_limit(given))) if r is not None]
        return grid_order(first, grid)
