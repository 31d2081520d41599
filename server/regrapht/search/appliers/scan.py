"""Prefix sums: row-wise scans -> a group per row with `cub::BlockScan`/`cub::WarpScan`; a
whole-array scan run by one thread -> a single-pass scan with decoupled look-back.

Matches (through `idioms.items`) loops that keep a running sum and write it per element
(`acc += x[j]; y[j] = acc;` inclusive, `y[j] = acc; acc += x[j];` exclusive):

- one thread per row (`item_program`): each row's elements are scanned by a whole block (or a
  warp, for short rows) in tiles of the group's size, carrying the tile totals
  (`cooperative.py`);
- one thread for the whole array (`single_program`, guarded by `threadIdx.x == 0 &&
  blockIdx.x == 0` or launched on one thread): tiles of 256 x 8 elements, each scanned with
  `cub::BlockScan` (eight striped, coalesced sub-tiles); tiles are taken in order from an atomic
  ticket, and each tile's block publishes its total, then looks back over the tiles before it
  for their totals or inclusive prefixes (Merrill and Garland's decoupled look-back), so the
  whole scan reads the input once, in one launch. Statements after the loop (`*total = acc`)
  run once, in the block of the last tile.

The look-back needs per-tile state and a ticket counter that outlive a block: they are
`__device__` variables of the rewritten file (one set per kernel): a flag per tile (30-bit launch
epoch, 2-bit state) and the tile's total and inclusive prefix, each written before its flag
(with a fence) and never overwritten within a launch. The last block of each launch resets the
ticket and advances the epoch, so no launch has to clear them. Launches of the same kernel must
not overlap in time (different streams).
Sums in a different order round differently: float scans compare within the spec's tolerance.

Parameter grids (after the earlier variants, unchanged): the single pass, block size x items per
thread x `cub::BlockScan` algorithm, tiles never smaller than the first variant's; row scans,
block tiles of each block size x items per thread, then a block or a warp per row of each size.
Every grid point declares `__launch_bounds__(its block)` (`grid.bounded_grid_order`): unbounded,
the raking scans of 8-byte values at 1024 threads took 80-96 registers a thread, more than the
64 a 1024-thread block can have, and could not launch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.idioms.access import accesses
from regrapht.idioms.block_sim import block_computes_scan, prefix_of_totals
from regrapht.idioms.items import (
    ELEMENT,
    Accumulator,
    ItemLoop,
    ItemProgram,
    ItemStatement,
    Step,
    item_program,
    single_program,
)
from regrapht.idioms.pointer_walks import indexed_pointer_walks
from regrapht.idioms.scans import (
    ChunkedScan,
    RecurrenceScan,
    chunk_ranges,
    chunked_block_scan,
    recurrence_scan,
)
from regrapht.idioms.spelling import plain_spelling
from regrapht.idioms.syntax import (
    KernelSyntax,
    call_args,
    condition_of,
    depends_on,
    identifiers_in,
    kernel_syntax,
    text,
    unparen,
    walk,
)
from regrapht.idioms.threads import ItemIndex
from regrapht.idioms.walk_loops import indexed_walk_loops
from regrapht.search.appliers.common import ApplierInput, Rewrite, body_change, edits
from regrapht.search.appliers.cooperative import (
    PREFIX,
    Group,
    cooperative_body,
    cub_change,
    extent_of,
    indent_code,
    item_count,
    original_covers,
    plain_type,
    resident_blocks,
    runs_once,
    value_of,
)
from regrapht.search.appliers.grid import bounded_grid_order, thread_limit
from regrapht.search.appliers.lookback import (
    SCAN_ALGORITHMS,
    SCAN_BLOCK,
    SCANNABLE,
    ScanOp,
    ScanPlan,
    items_per_thread,
    row_tiles_body,
    single_pass_body,
    state_globals,
)
from regrapht.search.source import KernelText, find_kernel
from regrapht.spec.expr import names_in
from regrapht.spec.launch import LaunchConfig


class ParallelScan:
    technique = "block_scan"
    also: tuple[str, ...] = ("memory_coalescing",)

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        kernel = kernel_syntax(given.source, given.kernel)
        located = find_kernel(given.source, given.kernel)
        if kernel is None or located is None or any(n.startswith(PREFIX) for n in identifiers_in(kernel.function)):
            return []
        program = item_program(kernel)
        if program is not None:
            return self._rows(given, program, located) or self._prefix_per_item(given, program, located, kernel)
        single = single_program(kernel)
        if single is not None:
            return self._whole(given, single, located, kernel)
        recurrence = recurrence_scan(kernel)
        if recurrence is not None:
            return self._recurrence(given, recurrence, located)
        chunked = chunked_block_scan(kernel)
        if chunked is not None:
            return self._chunked(given, chunked, located)
        block = self._one_block(given, kernel, located)
        if block:
            return block
        # Pointer walks written as indexing, read again (the new source has no walks left).
        for indexed in (plain_spelling(given.source, given.kernel), indexed_pointer_walks(given.source, given.kernel),
                        indexed_walk_loops(kernel)):
            if indexed is not None and indexed != given.source:
                rewrites = self.apply(replace(given, source=indexed))
                return [replace(r, note=r.note + " (read in plain form: walks indexed, macros expanded...)")
                        for r in rewrites]
        return []

    # ------------------------------------------------------------------------------ row scans
    def _rows(self, given: ApplierInput, program: ItemProgram, located: KernelText) -> list[Rewrite]:
        if program.csr is not None or not any(loop.scan for loop in program.loops):
            return []
        if not original_covers(given, program):
            return []
        rows = item_count(given, program)
        if rows is None:
            return []
        extents = [e for e in (extent_of(given, loop, program) for loop in program.loops) if e is not None]
        extent = max(extents) if extents else None
        if extent is not None and extent <= 256:
            groups = [Group("warp", 256), Group("block", 128)]
        elif extent is not None and extent >= 4096:
            groups = [Group("block", 1024), Group("block", 512)]
        else:
            groups = [Group("block", 256), Group("block", 1024)]
        current = self._row_tiles(given, program, located, rows, extent)
        for group in groups:
            current += self._group_per_row(given, program, located, rows, group)
        # The grid: block tiles of every block size and items per thread the row length is worth,
        # then a warp per row (rows under 4096 long) or a block per row of every size.
        grid = self._row_tiles(given, program, located, rows, extent, grid=True)
        limit = thread_limit(given)  # the device's, and the kernel's __launch_bounds__
        others = [Group("block", t) for t in GRID_THREADS if t <= limit]
        if extent is None or extent < 4096:
            others += [Group("warp", t) for t in GRID_THREADS if t < 1024]
        for group in others:
            grid += self._group_per_row(given, program, located, rows, group)
        return bounded_grid_order(given, current, grid)

    @staticmethod
    def _group_per_row(given: ApplierInput, program: ItemProgram, located: KernelText, rows: str,
                       group: Group) -> list[Rewrite]:
        body = cooperative_body(program, group)
        if body is None:
            return []
        grid = rows if group.kind == "block" else f"({rows} + {group.per_block - 1}) / {group.per_block}"
        # cub::BlockScan's default algorithm is raking (code 1); a warp scan has none (0)
        params = (("group", 1 if group.kind == "block" else 2), ("items", 1), ("algorithm", 1 if group.kind == "block" else 0))
        return [Rewrite(given.source,
                        LaunchConfig((grid,), (str(group.block),), given.launch.shared_bytes),
                        group.describe("row") + ", tiles scanned by CUB with a carry", params, edits=edits(given.source, *cub_change(given.source), body_change(located, body)))]

    def _row_tiles(self, given: ApplierInput, program: ItemProgram, located: KernelText, rows: str,
                   extent: int | None, grid: bool = False) -> list[Rewrite]:
        """A block per row scanning tiles of 256 x items (items per thread from the row length
        and the value size) when the row program is declarations, the scan loop, and statements
        after it that only use the row's total. `grid`: instead, the tiles of every block size
        x items per thread (a quarter, half or all of 64 bytes per thread) that fit in shared
        memory and are not more than twice the row."""
        loops = program.loops
        item = program.item
        if len(loops) != 1 or loops[0].scan is None or item is None or not _reads_at_position(loops[0]):
            return []
        if extent is not None and extent < 2 * SCAN_BLOCK:
            return []  # short rows: a warp (or part of one) per row serves them better
        loop = loops[0]
        position = program.steps.index(loop)
        before, after = program.steps[:position], program.steps[position + 1:]
        if any(not isinstance(s, ItemStatement) or s.writes or s.node.type != "declaration" for s in before):
            return []
        if any(not isinstance(s, ItemStatement) for s in after):
            return []
        size = SCANNABLE.get(resolved_type(loop.scan.type if loop.scan else "", program.kernel, given.kernel))
        if size is None:
            return []
        items = items_per_thread(size, given.device)
        while extent is not None and items > 1 and SCAN_BLOCK * items // 2 >= extent:
            items //= 2  # one tile covers the row: no idle lanes beyond it
        shapes = [(SCAN_BLOCK, items)]
        if grid:
            shared = given.device.shared_bytes_per_block if given.device is not None else 48 * 1024
            limit = thread_limit(given)  # the device's, and the kernel's __launch_bounds__
            shapes = [(block, n) for block in GRID_THREADS for n in (16 // size, 32 // size, 64 // size)
                      if block <= limit and block * n * size + 4096 <= shared and
                      (extent is None or block * n // 2 < extent)]
        plan = _loop_plan(loop, before, after, given.kernel.split("<")[0])
        kept = "\n".join(text(d) for d in program.kept_prelude)
        rewrites = []
        for block, n in shapes:
            body = row_tiles_body(plan, n, item.name, plain_type(item.type), " ".join(item.bound.split()), kept, block)
            launch = LaunchConfig((rows,), (str(block),), given.launch.shared_bytes)
            rewrites.append(Rewrite(given.source, launch,
                                    f"one {block}-thread block per row, tiles of {block}x{n} by cub::BlockScan "
                                    "(warp-striped loads, cub::BlockExchange), carry between tiles",
                                    (("group", 0), ("items", n), ("algorithm", 0)), edits=edits(given.source, *cub_change(given.source), body_change(located, body))))
        return rewrites

    # ------------------------------------------------------------------------------ whole array
    def _whole(self, given: ApplierInput, program: ItemProgram, located: KernelText,
               kernel: KernelSyntax) -> list[Rewrite]:
        loops = program.loops
        if len(loops) != 1 or loops[0].scan is None or not runs_once(given, program.single):
            return []
        loop = loops[0]
        position = program.steps.index(loop)
        before, after = program.steps[:position], program.steps[position + 1:]
        if any(isinstance(s, ItemStatement) and s.writes for s in before):
            return []
        if not _reads_at_position(loop):
            return []
        assert loop.scan is not None
        count = self._count(given, program, loop)
        if count is None:
            return []
        plan = _loop_plan(loop, before, after, given.kernel.split("<")[0])
        return self._single_pass(given, located, kernel, plan, count, "single-pass scan")

    def _prefix_per_item(self, given: ApplierInput, program: ItemProgram, located: KernelText,
                         kernel: KernelSyntax) -> list[Rewrite]:
        """Thread i sums elements 0..i (or 0..i-1) itself and writes the result at i: the
        inclusive (exclusive) scan, computed by the single-pass scan instead (O(n) work)."""
        plan = _prefix_plan(program, given.kernel)
        what = "per-element prefix sums -> single-pass scan"
        if plan is None:
            # the running minimum or maximum of a prefix (`for (j = L; j <= i; ++j) m = fminf(m, x[j])`)
            plan = _prefix_extreme_plan(program, given.kernel)
            what = f"per-element prefix {'minima' if plan is not None and plan.op.name == 'min' else 'maxima'} " \
                   f"-> single-pass {plan.op.name if plan is not None else ''}-scan"
        if plan is None or not original_covers(given, program):
            return []
        count = item_count(given, program)
        if count is None:
            return []
        if plan.op.name != "sum":
            # positions from the loop's first one: the scan's count is the items past it
            count = f"({count}) - ({plan.lower})"
        return self._single_pass(given, located, kernel, plan, count, what)

    def _recurrence(self, given: ApplierInput, found: RecurrenceScan, located: KernelText) -> list[Rewrite]:
        if not runs_once(given, found.single):
            return []
        plan = _recurrence_plan(found, given.kernel.split("<")[0])
        if plan is None:
            return []
        scalars = set(found.kernel.scalars)
        if not (names_in(plan.end) <= scalars and names_in(plan.lower) <= scalars):
            return []
        count = f"({plan.end}) - ({plan.lower})"
        return self._single_pass(given, located, found.kernel, plan, count, "recurrence -> single-pass scan")

    def _chunked(self, given: ApplierInput, found: ChunkedScan, located: KernelText) -> list[Rewrite]:
        """One block scanning [0, N) in per-thread chunks: N is the scalar for which the chunks,
        evaluated for the launch's block size, tile [0, N) in thread order."""
        launch = given.launch
        if any(value_of(x, given) != 1 for x in (*launch.grid, *launch.block[1:])):
            return []
        threads = value_of(launch.block[0], given) if launch.block else None
        if threads is None or not 1 <= threads <= 1024:
            return []
        count = next((name for name, param in found.kernel.scalars.items()
                      if plain_type(param.base_type) in INDEX_TYPES and _tiles(found, given, name, threads)), None)
        if count is None or not _combines_totals(found, given, threads, count):
            return []
        plan = _loop_plan(found.loop, (), (), given.kernel.split("<")[0])
        value_type = plain_type(found.value_type)
        plan = replace(plan, head=f"{value_type} {found.accumulator} = ({value_type})0;", lower="0", end=count)
        return self._single_pass(given, located, found.kernel, plan, count, "chunked one-block scan -> single pass")

    def _one_block(self, given: ApplierInput, kernel: KernelSyntax, located: KernelText) -> list[Rewrite]:
        """A one-block kernel with one input array, one output array and one count that, run on
        random inputs (`block_sim.block_computes_scan`: one warp's worth of threads, then the
        launch's block where that stays within its step budget), writes the scan of the input:
        whatever its phases (chunks scanned in place then offset, totals through shared or
        global memory), the single-pass scan of the input replaces it."""
        launch = given.launch
        if any(value_of(x, given) != 1 for x in (*launch.grid, *launch.block[1:])):
            return []
        threads = value_of(launch.block[0], given) if launch.block else None
        pointers = list(kernel.pointers.values())
        scalars = list(kernel.scalars.values())
        if threads is None or not 1 <= threads <= 1024 or len(pointers) != 2 or len(scalars) != 1:
            return []
        sources = [q for q in pointers if q.is_const]
        targets = [q for q in pointers if not q.is_const]
        count = scalars[0]
        if len(sources) != 1 or len(targets) != 1 or plain_type(count.base_type) not in INDEX_TYPES or \
                plain_type(sources[0].base_type) != plain_type(targets[0].base_type):
            return []
        value_type = resolved_type(targets[0].base_type, kernel, given.kernel)
        if value_type not in SCANNABLE:
            return []
        known = dict(kernel.constants) | {k: v for k, v in given.constants.items() if k != count.name}
        shared_sizes: dict[str, int] = {}
        for node in walk(kernel.body):
            if node.type == "declaration" and any(text(c) == "__shared__" for c in node.children):
                for declarator in node.children_by_field_name("declarator"):
                    name, size = declarator.child_by_field_name("declarator"), declarator.child_by_field_name("size")
                    value = value_of(text(size), known) if size is not None else None
                    if name is None or value is None:
                        return []
                    shared_sizes[text(name)] = value
        statements = [s for s in kernel.statements() if s.type != "comment"]
        floats = value_type in ("float", "double")
        small = min(threads, 64)
        arrays = (statements, sources[0].name, targets[0].name, count.name)
        kind = block_computes_scan(*arrays, small, (1, 3, 65, 130, 301), known, shared_sizes, floats)
        if kind in ("inclusive", "exclusive") and threads > small:
            # The launch's own block, where affordable: it must not compute anything else.
            full = block_computes_scan(*arrays, threads, (threads + 5,), known, shared_sizes, floats, 60_000)
            if full not in (kind, "unknown"):
                return []
        elif threads > small:  # a block size written into the code: only the launch's own block runs it
            kind = block_computes_scan(*arrays, threads, (1, 37, threads + 5, 3 * threads + 1), known, shared_sizes,
                                       floats)
        if kind not in ("inclusive", "exclusive"):
            return []
        p = PREFIX
        t = plain_type(targets[0].base_type)
        var, run = f"{p}i_", f"{p}run_"
        plan = ScanPlan(given.kernel.split("<")[0], t, var, "long long", "0", count.name, run,
                        f"{t} {run} = ({t})0;", "", "", f"{sources[0].name}[{var}]",
                        f"{run} = {p}prefix_ + {p}scanned_[{p}k_];\n{targets[0].name}[{var}] = {run};",
                        kind == "exclusive", "")
        return self._single_pass(given, located, kernel, plan, count.name,
                                 f"one-block {kind} scan (phases run on samples) -> single pass")

    def _single_pass(self, given: ApplierInput, located: KernelText, kernel: KernelSyntax, plan: ScanPlan,
                     count: str, what: str) -> list[Rewrite]:
        size = SCANNABLE.get(resolved_type(plan.value_type, kernel, given.kernel))
        if size is None:
            return []
        items = items_per_thread(size, given.device)

        def variant(block: int, n: int, algorithm: int) -> Rewrite:
            tile = block * n
            grid = f"min(({count} + {tile - 1}) / {tile}, {self._grid_cap(given, block)})"
            how = "" if algorithm == 0 else f" ({SCAN_ALGORITHMS[algorithm].removeprefix('cub::')})"
            return Rewrite(given.source, LaunchConfig((grid,), (str(block),), given.launch.shared_bytes),
                           f"{what}: tiles of {block}x{n} by cub::BlockScan{how}, decoupled look-back",
                           (("group", 0), ("items", n), ("algorithm", algorithm)),
                           edits(given.source, *cub_change(given.source),
                                 (located.start, located.start, state_globals(plan.kernel)),
                                 body_change(located, single_pass_body(plan, n, block, algorithm))))

        # The grid: block size x items per thread (up to 64 bytes) x cub::BlockScan's algorithm,
        # tiles no smaller than the first variant's (the look-back state has MAX_TILES tiles, so a
        # smaller tile would cap the array length below what the first variant handles).
        shared = given.device.shared_bytes_per_block if given.device is not None else 48 * 1024
        limit = thread_limit(given)  # the device's, and the kernel's __launch_bounds__
        grid = [variant(block, n, algorithm) for block in GRID_THREADS for n in (1, 2, 4, 8, 16)
                if n <= 64 // size and block <= limit and block * n >= SCAN_BLOCK * items and
                block * n * size + 4096 <= shared for algorithm in range(len(SCAN_ALGORITHMS))]
        return bounded_grid_order(given, [variant(SCAN_BLOCK, items, 0)], grid)

    @staticmethod
    def _count(given: ApplierInput, program: ItemProgram, loop: ItemLoop) -> str | None:
        """Elements of the loop as a spec expression over the kernel's scalars."""
        scalars = set(program.kernel.scalars)
        upper, lower = loop.end, text(loop.lower)
        if names_in(upper) <= scalars and names_in(lower) <= scalars:
            return f"({' '.join(upper.split())}) - ({' '.join(lower.split())})"
        extent = extent_of(given, loop, program)
        return str(extent) if extent is not None else None

    @staticmethod
    def _grid_cap(given: ApplierInput, block: int = SCAN_BLOCK) -> int:
        """Blocks that take tiles: the device's resident blocks when known (more would only wait
        for tickets), else a size that fills any current GPU."""
        resident = resident_blocks(given, block)
        return resident if resident is not None else 65535


def resolved_type(value_type: str, kernel: KernelSyntax, name: str) -> str:
    """The element type with the kernel's template parameters replaced by the arguments of the
    instantiation the spec names (`scan<double>`): `T` -> `double`."""
    plain = plain_type(value_type)
    if "<" not in name or not kernel.template_parameters:
        return plain
    arguments = [" ".join(a.split()) for a in name[name.index("<") + 1: name.rindex(">")].split(",")]
    return dict(zip(kernel.template_parameters, arguments, strict=False)).get(plain, plain)


GRID_THREADS = (128, 256, 512, 1024)
INDEX_TYPES = frozenset({"int", "unsigned int", "unsigned", "long", "long long", "size_t", "unsigned long long",
                         "int64_t", "uint32_t", "int32_t", "uint64_t", "unsigned long"})
CHUNK_SAMPLES = (1, 2, 1000, 1025, 65537, 1000003)


def _tiles(found: ChunkedScan, given: ApplierInput, name: str, threads: int) -> bool:
    """Whether the threads' chunks are [0, N) in thread order, N the scalar `name`, for the
    spec's value of N and sampled others (empty chunks anywhere)."""
    known = dict(found.kernel.constants) | dict(given.constants)
    sizes = {s for s in (known.get(name), *CHUNK_SAMPLES) if s is not None}
    for size in sorted(sizes):
        ranges = chunk_ranges(found, known | {name: size}, threads)
        if ranges is None:
            return False
        covered = 0
        for low, high in ranges:
            if high <= low:
                continue
            if low != covered:
                return False
            covered = high
        if covered != size:
            return False
    return True


def _combines_totals(found: ChunkedScan, given: ApplierInput, threads: int, count: str) -> bool:
    """Whether the combine step gives every thread the sum of the totals of the threads before
    it: by its shape, or by running it for the launch's block on stand-in totals."""
    if found.simple_combine:
        return True
    known = {count: CHUNK_SAMPLES[-1]} | dict(found.kernel.constants) | dict(given.constants)
    sizes = {}
    for name, size in found.shared_sizes:
        value = value_of(text(size), known)
        if value is None or value <= 0:
            return False
        sizes[name] = value
    # A warp's worth first: a wrong combination shows there at a fraction of the cost.
    return all(prefix_of_totals(list(found.declarations), found.total, found.totals, found.stored_at,
                                list(found.combine), found.accumulator, size, known, sizes)
               for size in sorted({min(threads, 32), threads}))


def _reads_at_position(loop: ItemLoop) -> bool:
    """Every load of the scan loop is at the position plus a fixed offset that is not ahead of it
    (`x[j]`, `x[j - 1]`, `x[base + j]`): a read ahead (`x[j + 1]`) reads past the end of the
    array at the last position."""
    for access in loop.reads:
        if access.index is None or access.index.coefficient(ELEMENT).kind != "unit" or \
                access.index.coefficient(ELEMENT).value != 1:
            return False
        offset = access.index.without(ELEMENT)
        if offset.constant is not None and offset.constant > 0:
            return False
    return True


def _recurrence_plan(found: RecurrenceScan, kernel: str) -> ScanPlan | None:
    p = PREFIX
    run = f"{p}run_"
    value_type = plain_type(found.value_type)
    decls = "\n".join(text(d) for d in found.decls)
    head = "\n".join(text(h) for h in found.head) + f"\n{value_type} {run} = ({value_type})({found.start});"
    store_at = found.var
    position_decls = ""
    contribution = text(found.contribution)
    if found.exclusive:
        if found.decls:
            return None  # they would be evaluated at the end position too (reads past the end)
        store_at = f"{p}j_"
        position_decls = f"const {found.var_type} {found.var} = ({found.var_type})({store_at} + 1);"
        contribution = f"{found.var} < ({found.end}) ? ({contribution}) : ({value_type})0"
    element = f"{run} = {p}prefix_ + {p}scanned_[{p}k_];\n{found.output}[{store_at}] = {run};"
    return ScanPlan(kernel, value_type, store_at, found.var_type, found.lower, found.end, run, head.strip(),
                    position_decls, decls, contribution, element, found.exclusive, "")


def _loop_plan(loop: ItemLoop, before: tuple[ItemStatement | ItemLoop, ...],
               after: tuple[ItemStatement | ItemLoop, ...], kernel: str) -> ScanPlan:
    """The plan of a one-thread scan loop (`acc += e; y[i] = acc;` or the exclusive order)."""
    scan = loop.scan
    assert scan is not None
    x = scan.accumulator
    statements = list(loop.body)
    update_at = statements.index(scan.update)
    users_before = any(x in _names_of(s) for s in statements[:update_at])
    users_after = any(x in _names_of(s) for s in statements[update_at + 1:])
    exclusive = users_before and not users_after
    p = PREFIX
    # The element code starts with the sum before this element; the update makes it inclusive.
    before_value = f"{x} = {p}prefix_ + {p}scanned_[{p}k_]" + ("" if exclusive else f" - {p}values_[{p}k_]") + ";"
    after_value = f"{x} = {p}prefix_ + {p}scanned_[{p}k_]" + (f" + {p}values_[{p}k_]" if exclusive else "") + ";"
    code = "\n".join(after_value if i == update_at else text(s) for i, s in enumerate(statements))
    return ScanPlan(kernel, plain_type(scan.type), loop.var, plain_type(loop.var_type), text(loop.lower), loop.end, x,
                    "\n".join(text(s.node) for s in before), "",
                    "\n".join(text(s) for s in statements[:update_at] if s.type == "declaration"),
                    text(scan.contribution), before_value + "\n" + code, exclusive,
                    "\n".join(text(s.node) for s in after))


@dataclass(frozen=True)
class _PrefixLoop:
    """A thread per item i whose one loop folds f(j) over j in [L, i] (or [L, i)) into an
    accumulator with one operator, f not depending on i, the statements after it writing at i."""

    item: ItemIndex
    loop: ItemLoop
    accumulator: Accumulator
    value_type: str
    lower: int  # L
    exclusive: bool
    before: tuple[Step, ...]
    after: tuple[Step, ...]
    decls: list[Node]
    contribution: str  # f(j)


def _prefix_loop(program: ItemProgram, name: str, ops: tuple[str, ...], max_lower: int,
                 contribution_of: Callable[[Node, str], str | None]) -> _PrefixLoop | None:
    """The per-item prefix loop of `program` folding with one of `ops` from a constant lower bound
    in [0, max_lower], or None where the kernel is not one."""
    item = program.item
    if item is None or program.csr is not None or len(program.loops) != 1:
        return None
    loop = program.loops[0]
    if loop.scan is not None or loop.writes or len(loop.accumulators) != 1 or loop.accumulators[0].op not in ops:
        return None
    accumulator = loop.accumulators[0]
    value_type = plain_type(accumulator.type)
    if resolved_type(value_type, program.kernel, name) not in SCANNABLE:
        return None
    symbols = program.mapping.symbols if program.mapping is not None else None
    if symbols is None:
        return None
    lower = symbols.poly(loop.lower)
    if lower.constant is None or not 0 <= lower.constant <= max_lower:
        return None
    end = symbols.poly(loop.upper) + Poly.const(1 if loop.inclusive_upper else 0)
    index = Poly.atom(item.name)
    if end == index + Poly.const(1):
        exclusive = False
    elif end == index:
        exclusive = True
    else:
        return None
    position = program.steps.index(loop)
    before, after = program.steps[:position], program.steps[position + 1:]
    if any(not isinstance(s, ItemStatement) or s.writes or item.name in _names_of(s.node) for s in before):
        return None
    decls = [s for s in loop.body if s.type == "declaration"]
    updates = [s for s in loop.body if s.type != "declaration"]
    contribution = contribution_of(updates[0], accumulator.name) if len(updates) == 1 else None
    if contribution is None or any(item.name in _names_of(s) for s in loop.body):
        return None
    if any(a.index is None or depends_on(a.index, item.name) for a in loop.reads):
        return None
    for step in after:
        for access in accesses(step.node, symbols):
            if access.kind != "read" and access.index != index:
                return None
    return _PrefixLoop(item, loop, accumulator, value_type, lower.constant, exclusive, before, after, decls,
                       contribution)


def _prefix_plan(program: ItemProgram, name: str) -> ScanPlan | None:
    """The plan for `T s = init; for (j = 0; j <= i; ++j) s += f(j); out[i] = g(s);` (or
    `j < i`: exclusive), where f does not depend on the item i."""
    found = _prefix_loop(program, name, ("sum",), 0, _added)
    if found is None:
        return None
    item, loop, accumulator = found.item, found.loop, found.accumulator
    item_type = plain_type(item.type)
    code = f"{accumulator.name} = {PREFIX}prefix_ + {PREFIX}scanned_[{PREFIX}k_];\n" + \
        "\n".join(text(s.node) for s in found.after)
    return ScanPlan(name.split("<")[0], found.value_type, loop.var, plain_type(loop.var_type), "0",
                    " ".join(item.bound.split()), accumulator.name, "\n".join(text(s.node) for s in found.before),
                    f"const {item_type} {item.name} = ({item_type}){loop.var};", "\n".join(text(d) for d in found.decls),
                    found.contribution, code, found.exclusive, "")


def _prefix_extreme_plan(program: ItemProgram, name: str) -> ScanPlan | None:
    """The plan for `T m = s; for (j = L; j <= i; ++j) m = fminf(m, f(j)); out[i] = g(m);` (or
    `j < i`: exclusive; `max`/`fmax`/`fmaxf`/`min`/`fmin` or `if (f(j) < m) m = f(j);`), where s
    and f do not depend on the item i and L is a constant: a min- (max-) scan over the positions
    [L, n), item i at position i; the items before L, whose loop is empty, get g(s) once."""
    found = _prefix_loop(program, name, ("min", "max"), 64, _extreme_contribution)
    if found is None:
        return None
    item, loop, accumulator = found.item, found.loop, found.accumulator
    op = ScanOp(accumulator.op, accumulator.combine)
    item_type = plain_type(item.type)
    p = PREFIX
    lower_text = str(found.lower)
    bound = " ".join(item.bound.split())
    after_code = "\n".join(text(s.node) for s in found.after)
    code = f"{accumulator.name} = {op.apply(f'{p}prefix_', f'{p}scanned_[{p}k_]')};\n" + after_code
    # the items before L: their loop is empty, the accumulator keeps its start
    first = "" if found.lower == 0 else (
        f"for (long long {p}q_ = 0; {p}q_ < {lower_text} && {p}q_ < (long long)({bound}); ++{p}q_) {{\n"
        f"    const {item_type} {item.name} = ({item_type}){p}q_;\n{indent_code(after_code)}\n}}")
    # no item at all: the original writes nothing, and its statements before the loop (`m = x[0]`)
    # run in no thread; here they run in every thread, so not without an item
    head = f"if ((long long)({bound}) <= 0) return;\n" + "\n".join(text(s.node) for s in found.before)
    return ScanPlan(name.split("<")[0], found.value_type, loop.var, plain_type(loop.var_type), lower_text,
                    bound, accumulator.name, head,
                    f"const {item_type} {item.name} = ({item_type}){loop.var};", "\n".join(text(d) for d in found.decls),
                    found.contribution, code, found.exclusive, "", op, first)


def _extreme_contribution(statement: Node, accumulator: str) -> str | None:
    """e of `m = fminf(m, e);` (either argument order, any min/max function) or `if (e < m) m = e;`."""
    if statement.type == "if_statement":
        condition = unparen(condition_of(statement))
        if condition is None or condition.type != "binary_expression":
            return None
        left, right = unparen(condition.child_by_field_name("left")), unparen(condition.child_by_field_name("right"))
        if left is not None and right is not None:
            return text(left) if text(right) == accumulator else text(right) if text(left) == accumulator else None
        return None
    expression = unparen(statement.named_children[0]) if statement.type == "expression_statement" and \
        statement.named_children else None
    if expression is None or expression.type != "assignment_expression":
        return None
    right = unparen(expression.child_by_field_name("right"))
    if right is None or right.type != "call_expression" or len(call_args(right)) != 2:
        return None
    a, b = (unparen(x) for x in call_args(right))
    if a is not None and b is not None:
        return text(b) if text(a) == accumulator else text(a) if text(b) == accumulator else None
    return None


def _added(statement: Node, accumulator: str) -> str | None:
    """e of `acc += e;`, `acc = acc + e;`, `acc = e + acc;`."""
    expression = unparen(statement.named_children[0]) if statement.type == "expression_statement" and \
        statement.named_children else None
    if expression is None or expression.type != "assignment_expression" or \
            text(expression.child_by_field_name("left")) != accumulator:
        return None
    operator = text(expression.child_by_field_name("operator"))
    right = unparen(expression.child_by_field_name("right"))
    if right is None:
        return None
    if operator == "+=":
        return text(right)
    if operator == "=" and right.type == "binary_expression" and text(right.child_by_field_name("operator")) == "+":
        left_side, right_side = unparen(right.child_by_field_name("left")), unparen(right.child_by_field_name("right"))
        if left_side is not None and text(left_side) == accumulator and right_side is not None:
            return text(right_side)
        if right_side is not None and text(right_side) == accumulator and left_side is not None:
            return text(left_side)
    return None


def _names_of(node: object) -> set[str]:
    return identifiers_in(node) if isinstance(node, Node) else set()

