"""Stencils and convolutions -> thread coarsening down a column with a register window
(2-D: several rows per thread; 3-D: 2.5-D blocking, a thread marches along z).

Recognised on the source model like the halo tile (`idioms/stencil.py`): a point kernel that
reads one array, the field, at its point shifted by constant or loop-bounded offsets and never
writes what it reads. On a GPU whose L1/L2 already serve the neighbours of a naive stencil, a
shared-memory tile mostly adds a load phase and a barrier; what costs is the number of load
instructions per output (nine for a 3x3 neighbourhood). Here each thread computes K points
down the slowest coordinate the field is tiled along (y of a 2-D field, z of a 3-D one, the row
of an HWC image) and keeps the window of rows those K points read in registers: each element
of the window is loaded once per thread, so a 3x3 neighbourhood costs 3 (K + 2) loads for K
points instead of 9 K, a 7-point 3-D stencil 5 K + 2 instead of 7 K. Threads of a warp stay
consecutive along the contiguous coordinate, so every load is coalesced.

The window is straight-line code: the K points are unrolled here, so every window subscript is
a constant once the compiler unrolls the kernel's own constant-range loops (which it does for
the small neighbourhood loops this idiom admits; the nvcc tests check that no window spills to
local memory). A window row is loaded just before the first point that reads it, which keeps
only a neighbourhood's height of rows live. Each element is loaded only where some read of
the kernel would touch it (the guard shifted by each read's offsets, and the bounds each read
runs under), so no load leaves the memory the kernel itself reads. The kernel's own statements
then run at each point, in their order, with the stencil reads redirected to the window: every
output is the same operations on the same values in the same order as before. A batch loop
around the whole work that no launch axis is free to take stays a loop around the coarsened
body (`idioms/kept_loops.py`, `points.kept_loop_rewrites`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from regrapht.cuda.affine import Poly
from regrapht.idioms.pointwise import FreshNames, PointKernel, expression_poly
from regrapht.idioms.stencil import NeighbourRead, Stencil, clamped_read, stencil
from regrapht.search.appliers.common import ApplierInput, Rewrite, body_edits
from regrapht.search.appliers.cooperative import value_of
from regrapht.search.appliers.grid import grid_order, thread_limit
from regrapht.search.appliers.points import (
    bind,
    ceil_div,
    kept_loop_rewrites,
    prelude,
    recognised_with_loops,
    template_pins,
)
from regrapht.search.appliers.qualifiers import with_restricted_pointers
from regrapht.search.appliers.stencil import field_address, reindent, slice_loop
from regrapht.spec.launch import LaunchConfig

# Points per thread offered, per number of tiled coordinates (the search times them all):
# 2-D fields march a short column (the grid stays large), 3-D fields a longer one along z.
# (points per thread, block) per number of tiled coordinates. Measured on an H200 (train): with
# a halo along the contiguous coordinate, 32-wide blocks lost to the naive kernels (the x halo of
# a 32-wide tile is half a row's sectors again: 2-D Jacobi 0.93x, 3-D heat 0.86x), so blocks are
# wide there; without one (HWC depthwise: channels fastest) 32x8 with 16 points ran 1.64x.
WIDE: dict[int, tuple[tuple[int, tuple[int, int]], ...]] = {
    2: ((4, (128, 2)), (8, (128, 2)), (2, (64, 4))),
    3: ((4, (64, 4)), (8, (128, 2)), (16, (64, 4)))}
NARROW: dict[int, tuple[tuple[int, tuple[int, int]], ...]] = {
    2: ((4, (32, 8)), (8, (32, 8))),
    3: ((16, (32, 8)), (8, (32, 8)), (4, (32, 8)))}
# The rest of the grid the search may tune, after the measured variants above: points per
# thread x the block (threads along the contiguous coordinate x threads along the next one).
# Blocks stay at most 256 threads: the kernel has no __launch_bounds__, so the compiler may give
# a 16-point window up to 255 registers a thread, which a 512-thread block could not launch with.
GRID_POINTS = (2, 4, 8, 16)
GRID_BLOCKS = ((32, 4), (32, 8), (64, 2), (64, 4), (128, 1), (128, 2), (256, 1))
MAX_GRID_YZ = 65535  # grid y/z limit: block rows beyond it are strided
MAX_WINDOW = 96  # window elements loaded per thread: beyond this the registers would spill
# Element types `__ldg` is declared for (the read-only path); others load plainly.
LDG_TYPES = frozenset({"float", "double", "int", "unsigned int", "unsigned", "char", "signed char",
                       "unsigned char", "short", "unsigned short", "long long", "unsigned long long"})


@dataclass(frozen=True)
class _Window:
    """The register window of one thread: rows along the marched coordinate (relative to the
    thread's first point), a box of offsets along each other tiled coordinate."""

    points: int  # K
    low: dict[str, int]  # per tiled coordinate: the smallest offset any read takes
    high: dict[str, int]
    slots: dict[int, list[tuple[int, ...]]]  # per row: the offsets (other coordinates) read


class RegisterColumnStencil:
    technique = "thread_coarsening"
    # The graph's steps towards a stencil tile or a register window lead here as well.
    also: tuple[str, ...] = ("shared_memory_tiling", "register_promotion")

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        found = recognised_with_loops(given, stencil)
        if found is None:
            return kept_loop_rewrites(given, self.apply)
        given, kernel, shape = found
        view = shape.kernel
        n = len(shape.tiled)
        if n not in WIDE or (n == 3 and shape.slices):
            return []  # 1-D: the marched coordinate would be the contiguous one (uncoalesced)
        element = view.pointers[shape.field].replace("const", "").strip()
        rewrites: list[Rewrite] = []
        contiguous_halo = shape.halo(shape.tiled[0]) != (0, 0)
        measured = (WIDE if contiguous_halo else NARROW)[n]
        first: list[Rewrite] = []
        for points, threads in grid_points(measured, given):
            window = _window(shape, points)
            if window is None:
                continue
            body, grid = _body(view, shape, element, window, threads)
            note = (f"{points} points per thread down {shape.tiled[-1]}, a register window of "
                    f"{sum(len(s) for s in window.slots.values())} loads of {shape.field}")
            launch = LaunchConfig(grid, tuple(str(t) for t in threads), given.launch.shared_bytes)
            if rewrites and not fills_device(given, launch):
                continue  # longer columns would leave SMs idle
            column = Rewrite(given.source, launch, note, (("points", points),),
                             body_edits(given, kernel, template_pins(given) + body))
            rewrites.append(with_restricted_pointers(column, given.kernel))
            if (points, threads) in measured:
                first.append(rewrites[-1])
        return grid_order(first, rewrites[len(first):])


def grid_points(measured: tuple[tuple[int, tuple[int, int]], ...],
                given: ApplierInput) -> list[tuple[int, tuple[int, int]]]:
    """(points per thread, block) to build: the measured ones first, in their order, then the
    rest of the grid (blocks within the device's and the kernel's `__launch_bounds__` limit)."""
    limit = thread_limit(given)
    rest = [(points, block) for points in GRID_POINTS for block in GRID_BLOCKS
            if (points, block) not in measured and block[0] * block[1] <= limit]
    return [*measured, *rest]


def _window(shape: Stencil, points: int) -> _Window | None:
    march = shape.tiled[-1]
    across = shape.tiled[:-1]
    low = {c: min(0, *(r.low[c] for r in shape.reads)) for c in shape.tiled}
    high = {c: max(0, *(r.high[c] for r in shape.reads)) for c in shape.tiled}
    slots: dict[int, list[tuple[int, ...]]] = {}
    for row in range(low[march], points + high[march]):
        needed: set[tuple[int, ...]] = set()
        for read in shape.reads:
            if not any(read.low[march] <= row - k <= read.high[march] for k in range(points)):
                continue
            offsets: list[tuple[int, ...]] = [()]
            for c in across:
                offsets = [o + (d,) for o in offsets for d in range(read.low[c], read.high[c] + 1)]
            needed.update(offsets)
        if needed:
            slots[row] = sorted(needed)
    if sum(len(s) for s in slots.values()) > MAX_WINDOW:
        return None
    return _Window(points, low, high, slots)


def _body(view: PointKernel, shape: Stencil, element: str, window: _Window,
          threads: tuple[int, int]) -> tuple[str, tuple[str, ...]]:
    tiled = shape.tiled
    march, across = tiled[-1], tiled[:-1]
    points = window.points
    name = FreshNames(view)  # a marched coordinate `t` must not share its start's name with `t0`
    win = name("win")
    start = name(f"{march}0")
    block_row = name("brow")
    at = {c: name(f"t{i}") for i, c in enumerate(across)}
    bounds = view.bounds
    # Launch: x along the contiguous coordinate; y along the next one (3-D and HWC) or the
    # marched rows (2-D); the marched coordinate of a 3-D field on z; a slice on z.
    grid = [ceil_div(bounds[tiled[0]].upper, threads[0])]
    lines = [f"    // {points} points per thread down {march}; each element of their neighbourhood is loaded once, "
             "into registers, where the kernel reads it."]
    lines.append(f"    const int {at[tiled[0]]} = blockIdx.x * {threads[0]} + threadIdx.x;")
    closers: list[str] = []
    if len(tiled) == 3:
        lines.append(f"    const int {at[tiled[1]]} = blockIdx.y * {threads[1]} + threadIdx.y;")
        grid.append(ceil_div(bounds[tiled[1]].upper, threads[1]))
        rows_total = ceil_div(bounds[march].upper, points)
        lines.append(f"    for (int {block_row} = blockIdx.z; {block_row} < {rows_total}; {block_row} += gridDim.z) {{")
        lines.append(f"        const int {start} = {block_row} * {points};")
        grid.append(f"min({rows_total}, {MAX_GRID_YZ})")
    else:
        rows_total = ceil_div(bounds[march].upper, points * threads[1])
        lines.append(f"    for (int {block_row} = blockIdx.y; {block_row} < {rows_total}; {block_row} += gridDim.y) {{")
        lines.append(f"        const int {start} = ({block_row} * {threads[1]} + threadIdx.y) * {points};")
        grid.append(f"min({rows_total}, {MAX_GRID_YZ})")
        if shape.slices:
            opening, extent = slice_loop(view, shape.slices, "z", "    ")
            lines.extend(opening)
            closers.append("    }")
            grid.append(f"min({extent}, {MAX_GRID_YZ})")
    closers.append("    }")
    indent = "    " * (1 + len(closers))
    sizes = [points + window.high[march] - window.low[march]] + [window.high[c] - window.low[c] + 1
                                                                  for c in reversed(across)]
    lines.append(f"{indent}{element} {win}{''.join(f'[{s}]' for s in sizes)};")
    loaded = window.low[march]  # rows below this one are not loaded yet
    for k in range(points):
        last_row = k + window.high[march]
        for row in range(loaded, last_row + 1):
            for offsets in window.slots.get(row, []):
                where = {march: f"({start} + {row})" if row else start}
                for c, d in zip(across, offsets, strict=True):
                    where[c] = f"({at[c]} + {d})" if d else at[c]
                index = "".join(f"[{i}]" for i in _slot(window, march, across, row, offsets))
                cell = f"{shape.field}[{field_address(shape, where)}]"
                condition = _load_condition(shape, window, march, across, row, offsets, where)
                lines.append(f"{indent}{win}{index} = ({condition}) ? {_loaded(element, cell)} : "
                             f"({element})0;")
        loaded = max(loaded, last_row + 1)
        values = {march: f"{start} + {k}" if k else start, **{c: at[c] for c in across}}
        lines.append(f"{indent}{{  // point {k}")
        lines.append(f"{indent}    {bind(view, values)} {prelude(view)}".rstrip())
        replacements = {(r.access.start, r.access.end): _window_read(win, window, march, across, k, r, values)
                        for r in shape.reads if not r.fallback}
        lines.append(f"{indent}    if ({view.guard}) {{")
        lines.append(reindent(view.work_with(replacements), indent + "        "))
        lines.append(f"{indent}    }}")
        lines.append(f"{indent}}}")
    lines.extend(reversed(closers))
    return "\n" + "\n".join(lines) + "\n", tuple(grid)


def _slot(window: _Window, march: str, across: tuple[str, ...], row: int, offsets: tuple[int, ...]) -> list[int]:
    """The window subscripts of the element `row` rows down and `offsets` across."""
    return [row - window.low[march]] + [d - window.low[c] for c, d in reversed(list(zip(across, offsets, strict=True)))]


def _window_read(win: str, window: _Window, march: str, across: tuple[str, ...], k: int, read: NeighbourRead,
                 point: dict[str, str]) -> str:
    """The window element that `read` takes at point k (its offsets may be loop variables; a
    clamped read chooses among constant elements, so the window stays in registers)."""
    if read.clamped:
        def element(offsets: dict[str, int]) -> str:
            constant = replace(read, offsets={c: Poly.const(d) for c, d in offsets.items()}, clamped=())
            return _window_read(win, window, march, across, k, constant, point)

        return clamped_read(read, element, lambda c, j: f"({point[c]} + {j})")
    subscripts = []
    for c in (march, *reversed(across)):
        base = (k if c == march else 0) - window.low[c]
        shift = read.offsets[c]
        if shift.constant is not None:
            text = str(base + shift.constant)
        else:
            text = f"{base} + ({shift.text()})" if base else f"({shift.text()})"
        subscripts.append(f"[{text}]")
    return win + "".join(subscripts)


def fills_device(given: ApplierInput, launch: LaunchConfig) -> bool:
    """Whether `launch` has at least one wave of resident blocks on the device the candidates
    are measured on (True when the device or the problem size is not known)."""
    if given.device is None:
        return True
    blocks = 1
    for extent in launch.grid:
        value = value_of(extent, given)
        if value is None:
            return True
        blocks *= value
    threads = 1
    for extent in launch.block:
        threads *= int(extent)
    return blocks >= given.device.resident_blocks(threads)


def _loaded(element: str, cell: str) -> str:
    """A load of `cell`: through the read-only path where `__ldg` is declared for `element`."""
    return f"__ldg(&{cell})" if element in LDG_TYPES else cell


def _load_condition(shape: Stencil, window: _Window, march: str, across: tuple[str, ...], row: int,
                    offsets: tuple[int, ...], where: dict[str, str]) -> str:
    """When the window slot `row` rows down and `offsets` across is loaded: where one of the reads
    that can take it (at one of the thread's points) touches memory, each read's box with its
    redundant bounds dropped (`g >= -1` next to `g >= 0`): a load only where the kernel reads,
    for a few comparisons per slot."""
    position = {**{c: c for c in shape.slices}, **where}
    boxes: list[str] = []
    for read in shape.reads:
        if not any(read.low[march] <= row - k <= read.high[march] for k in range(window.points)):
            continue
        if any(not read.low[c] <= d <= read.high[c] for c, d in zip(across, offsets, strict=True)):
            continue
        box = " && ".join(f"{position[c]} {op} {text}" for c, op, text in _tightest(read.limits) if c in position)
        if box not in boxes:
            boxes.append(box)
    if not boxes or "" in boxes:
        return "true"
    return " || ".join(f"({b})" for b in boxes)


def _tightest(limits: tuple[tuple[str, str, str], ...]) -> list[tuple[str, str, str]]:
    """`limits` without the bounds another bound of the same coordinate and side implies (their
    difference a constant)."""
    kept: list[tuple[str, str, str, Poly | None]] = []
    for c, op, text in limits:
        value = _bound_value(op, text)
        redundant = False
        for i, (kc, kop, _, kvalue) in enumerate(kept):
            if kc != c or (kop in ("<", "<=")) != (op in ("<", "<=")) or value is None or kvalue is None:
                continue
            difference = (value - kvalue).constant
            if difference is None:
                continue
            lower = op in (">", ">=")
            if (difference > 0) == lower and difference != 0:
                kept[i] = (c, op, text, value)  # tighter than the one kept
            redundant = True
            break
        if not redundant:
            kept.append((c, op, text, value))
    return [(c, op, text) for c, op, text, _ in kept]


@lru_cache(maxsize=4096)
def _bound_value(op: str, text: str) -> Poly | None:
    """The bound as `g >= L` or `g < U` (the polynomial L or U), None when it does not parse."""
    value = expression_poly(text)
    if value is None:
        return None
    return value + Poly.of({(): 1}) if op in (">", "<=") else value
