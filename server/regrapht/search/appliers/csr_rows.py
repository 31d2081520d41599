"""CSR sparse rows (SpMV and per-row sparse dot products) with one thread per row -> a warp, or a
part of a warp, per row.

Matches (through `idioms.items.item_program`) kernels where each thread owns a row `i` and
loops `k` over `ptr[i] .. ptr[i + 1]` of a read-only row-pointer array, accumulating with an
associative operator (`sum += val[k] * x[col[k]]`, a maximum, ...). In the original, the lanes
of a warp walk 32 different rows: their `val`/`col` loads fall in 32 places and the loop runs as
long as the warp's longest row. With a group of lanes per row, the lanes read consecutive
nonzeros (coalesced) and `cub::WarpReduce` combines their partial sums ("CSR-vector").

Rows are short in many matrices, so besides a full warp per row the rewrites try 8 and 16 lanes
per row (`cub::WarpReduce` with a logical warp of that width). With the average row length
known from the spec (nonzeros / rows), the closest width comes first. Then the rest of a parameter
grid (`Rewrite.params`: threads_per_row, rows_per_block) in lexicographic order: 2-32 lanes per row
in blocks of 128, 256 and 512 threads (as far as the device and the kernel's `__launch_bounds__`
allow).
"""

from __future__ import annotations

from regrapht.idioms.items import ItemProgram, item_program
from regrapht.idioms.normal_form import normal_form
from regrapht.idioms.read_only import read_only_arrays, with_read_only_loads
from regrapht.idioms.syntax import kernel_syntax
from regrapht.search.appliers.common import ApplierInput, Rewrite, body_change, edits
from regrapht.search.appliers.cooperative import (
    Group,
    cooperative_body,
    cub_change,
    item_count,
    original_covers,
    template_instance,
    value_of,
)
from regrapht.search.appliers.grid import grid_order, thread_limit
from regrapht.search.appliers.row_ops import group_params
from regrapht.search.source import find_kernel
from regrapht.spec.launch import LaunchConfig

BLOCK = 256
GRID_LANES = (2, 4, 8, 16, 32)
GRID_BLOCKS = (128, 256, 512)


class CsrGroupPerRow:
    technique = "warp_per_row_csr"
    also: tuple[str, ...] = ("warp_shuffle_reduction", "memory_coalescing")

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        # Pointer walks (`p += n`) read as indexing, sums kept in `y[j]` as register sums (normal_form).
        source = normal_form(given.source, given.kernel)
        kernel = kernel_syntax(source, given.kernel)
        located = find_kernel(given.source, given.kernel)
        if kernel is None or located is None:
            return []
        program = item_program(kernel)
        if program is None or program.csr is None or any(loop.scan for loop in program.loops):
            return []
        if not original_covers(given, program):
            return []
        rows = item_count(given, program)
        if rows is None:
            return []
        # Without a known average row length, 8 lanes first: on the H200 it was the best or
        # within 7% of it for rows of 16-32 nonzeros, and far ahead of a warp for short rows.
        widths = [8, 16, 32, 4]
        average = self._average_row(given, program, rows)
        if average is not None:
            widths.sort(key=lambda lanes: abs(lanes - average))
        # The values, column indices and the gathered vector through the read-only path (the
        # row pointer stays a plain load: it delimits the row range the recogniser checked).
        read_only = read_only_arrays(source, given.kernel) - {program.csr.pointer}
        cached_kernel = kernel_syntax(with_read_only_loads(source, given.kernel, read_only), given.kernel) \
            if read_only else None
        cached = item_program(cached_kernel) if cached_kernel is not None else None
        loads = ", __ldg loads of " + ", ".join(sorted(read_only)) if cached is not None else ""
        instance = template_instance(given.kernel, program)

        def rewrite(group: Group) -> Rewrite | None:
            body = cooperative_body(cached or program, group, instance)
            if body is None:
                return None
            launch = LaunchConfig((f"({rows} + {group.per_block - 1}) / {group.per_block}",), (str(group.block),),
                                  given.launch.shared_bytes)
            return Rewrite(given.source, launch,
                           group.describe("CSR row") + ", cub::WarpReduce" + loads, group_params(group), edits=edits(given.source, *cub_change(given.source), body_change(located, body)))

        first = [r for r in (rewrite(Group("warp", BLOCK, lanes)) for lanes in widths) if r is not None]
        largest = thread_limit(given)
        grid = [r for r in (rewrite(Group("warp", block, lanes)) for lanes in GRID_LANES for block in GRID_BLOCKS
                            if block <= largest) if r is not None]
        return grid_order(first, grid)

    @staticmethod
    def _average_row(given: ApplierInput, program: ItemProgram, rows: str) -> float | None:
        """Nonzeros per row, from the element counts the spec fixes for the arrays the row loop
        reads at unit stride (the values and column indices)."""
        row_count = value_of(rows, given)
        counts = [given.constants[name] for loop in program.loops for name in loop.unit_stride
                  if name in given.constants]
        if not row_count or not counts:
            return None
        return max(counts) / row_count
