"""Stencils and convolutions -> a shared-memory tile with halos per block (1-D, 2-D, 3-D).

Recognised on the source model (`idioms/stencil.py`): a point kernel that reads one array at
its point shifted by constant or loop-bounded offsets (Jacobi/heat stencils, 3x3 and depthwise
convolutions, cellular-automaton steps on interior points), never writes what it reads, and
whose reads of that array split into per-coordinate offsets of the array's layout.

The rewrite gives each block a tile of points (the measured tilings in `TILES` first, then the
grid `GRID_TILES` x `GRID_THREADS`, e.g. 2-D: 32x32 by 32x8 threads, four points each) and loads the tile plus its halo into
shared memory once, each element by one thread, coalesced along the contiguous coordinate. An
element is loaded only when some read of the kernel would touch it (the guard shifted by each
read's offset range, and the bounds each read runs under), so no load leaves the memory the
kernel itself reads. Coordinates the array does not vary along (a depthwise convolution's
channel) are looped over by the remaining grid dimensions. The kernel's own statements then run
at each point of the tile with the stencil reads redirected to shared memory; reads the idiom
does not cover (weights, clamped or wrapped indices) stay as they are. A batch loop around the
whole work that no launch axis is free to take stays a loop around the tiled body
(`idioms/kept_loops.py`, `points.kept_loop_rewrites`), as in `RegisterColumnStencil`.
"""

from __future__ import annotations

from dataclasses import replace

from regrapht.cuda.affine import Poly
from regrapht.idioms.pointwise import AXES, FreshNames, PointKernel, fresh
from regrapht.idioms.stencil import NeighbourRead, Stencil, clamped_read, stencil
from regrapht.search.appliers.common import ApplierInput, Rewrite, body_edits
from regrapht.search.appliers.grid import grid_order, thread_limit
from regrapht.search.appliers.points import (
    bind,
    ceil_div,
    kept_loop_rewrites,
    prelude,
    recognised_with_loops,
    template_pins,
)
from regrapht.spec.launch import LaunchConfig

# Per number of tiled coordinates, the tilings offered (measured on the GPU, best first): one
# point per thread keeps the naive kernel's parallelism (on an H200 the 32x32 tile with four
# points per thread ran a Game of Life step at 0.63x: the L1 already serves the naive reads, so
# fewer, longer threads lose), several points per thread share a tile's halo among more points.
TILES: dict[int, list[tuple[tuple[int, ...], tuple[int, int]]]] = {
    1: [((256,), (256, 1)), ((1024,), (256, 1))],
    2: [((32, 8), (32, 8)), ((32, 32), (32, 8))],
    3: [((32, 8, 2), (32, 8)), ((32, 8, 8), (32, 8))]}
# The rest of the grid the search may tune, after the measured tilings above: per number of
# tiled coordinates, the tile extents and the block (at most 256 threads, none idle in the
# work phase: a block spans at most the tile along x and y), larger tiles sharing each halo
# among more points. Tiles whose shared array would not fit SHARED_BUDGET are dropped per kernel.
GRID_TILES: dict[int, tuple[tuple[int, ...], ...]] = {
    1: tuple((t,) for t in (256, 512, 1024, 2048, 4096)),
    2: tuple((x, y) for x in (32, 64, 128) for y in (8, 16, 32)),
    3: tuple((x, y, z) for x, y in ((32, 4), (32, 8), (32, 16), (64, 4), (64, 8)) for z in (2, 4, 8))}
GRID_THREADS: dict[int, tuple[tuple[int, int], ...]] = {
    1: ((64, 1), (128, 1), (256, 1)),
    2: ((32, 4), (32, 8), (64, 4), (128, 2)),
    3: ((32, 4), (32, 8), (64, 4))}
MAX_GRID = 65535  # grid y/z limit: slices beyond it are strided
SHARED_BUDGET = 40 * 1024  # static shared memory per block, below the 48 KiB static limit


class HaloTiledStencil:
    technique = "shared_memory_tiling"
    also: tuple[str, ...] = ()

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        found = recognised_with_loops(given, stencil)
        if found is None:
            return kept_loop_rewrites(given, self.apply)
        given, kernel, shape = found
        view = shape.kernel
        if len(shape.tiled) not in TILES or (len(shape.tiled) == 3 and shape.slices):
            return []
        element = view.pointers[shape.field]
        halos = [shape.halo(c) for c in shape.tiled]
        rewrites = []
        first: list[Rewrite] = []
        limit = thread_limit(given)
        for extents, threads in tilings(len(shape.tiled)):
            if (extents, threads) not in TILES[len(shape.tiled)] and threads[0] * threads[1] > limit:
                continue  # past the device's or the kernel's `__launch_bounds__` limit
            sizes = [t + lo + hi for t, (lo, hi) in zip(extents, halos, strict=True)]
            cells = 1
            for size in sizes:
                cells *= size
            if cells * _bytes(element) > SHARED_BUDGET:
                continue
            body, grid = _tiled_body(view, shape, element, extents, threads, halos, sizes)
            block = (str(threads[0]), str(threads[1])) if threads[1] > 1 else (str(threads[0]),)
            tile_text = "x".join(str(t) for t in extents)
            note = f"{tile_text} tile of {shape.field} with a halo of {halos} in shared memory"
            rewrites.append(Rewrite(given.source, LaunchConfig(grid, block, given.launch.shared_bytes),
                                    note, tuple((f"tile_{axis}", t) for axis, t in zip(AXES, extents, strict=False)), edits=body_edits(given, kernel, template_pins(given) + body)))
            if (extents, threads) in TILES[len(shape.tiled)]:
                first.append(rewrites[-1])
        return grid_order(first, rewrites[len(first):])


def tilings(n: int) -> list[tuple[tuple[int, ...], tuple[int, int]]]:
    """(tile extents, block) to build for `n` tiled coordinates: the measured ones first, in their
    order, then the rest of the grid."""
    rest = [(extents, threads) for extents in GRID_TILES[n] for threads in GRID_THREADS[n]
            if (extents, threads) not in TILES[n] and threads[0] <= extents[0] and (n == 1 or threads[1] <= extents[1])]
    return [*TILES[n], *rest]


def _bytes(element: str) -> int:
    words = element.replace("const", "").split()
    if "double" in words or "long" in words:
        return 8
    if "char" in words:
        return 1
    if "short" in words or "half" in words or "__half" in words:
        return 2
    return 4  # float, int, unsigned, and template parameters assumed at most 4 bytes


def _tiled_body(view: PointKernel, shape: Stencil, element: str, extents: tuple[int, ...], threads: tuple[int, int],
                halos: list[tuple[int, int]], sizes: list[int]) -> tuple[str, tuple[str, ...]]:
    tiled = shape.tiled
    n = len(tiled)
    name = FreshNames(view)  # a coordinate `l` or `g` must not share its origin's name with a counter
    tile = name("tile")
    origin = {c: name(f"{c}0") for c in tiled}
    local = {c: name(f"l{i}") for i, c in enumerate(tiled)}
    where = {c: name(f"g{i}") for i, c in enumerate(tiled)}
    axes = dict(zip(tiled, AXES, strict=False))
    slice_axes = AXES[n:]
    grid = [ceil_div(view.bounds[c].upper, extents[i]) for i, c in enumerate(tiled)]
    lines = [f"    // {'x'.join(map(str, extents))} points per block; the tile of {shape.field} with its halo "
             "is loaded once, coalesced, only where the kernel reads.",
             f"    __shared__ {element} {tile}{''.join(f'[{s}]' for s in reversed(sizes))};"]
    for c in tiled:
        lines.append(f"    const int {origin[c]} = blockIdx.{axes[c]} * {extents[tiled.index(c)]};")
    indent = "    "
    closers: list[str] = []
    # one launch axis per slice; slices beyond the last axis share it (`slice_loop`)
    groups: list[tuple[str, ...]] = [(c,) for c in shape.slices[: len(slice_axes) - 1]]
    if shape.slices[len(slice_axes) - 1:]:
        groups.append(tuple(shape.slices[len(slice_axes) - 1:]))
    for group, axis in zip(groups, slice_axes, strict=False):
        opening, extent = slice_loop(view, group, axis, indent)
        lines.extend(opening)
        closers.append(f"{indent}}}")
        indent += "    "
        grid.append(f"min({extent}, {MAX_GRID})")
    # -- load the tile and its halo
    step = {c: _thread_step(i, threads) for i, c in enumerate(tiled)}
    load_open, load_close, load_indent = _nest(tiled, step, sizes, local, indent)
    lines.extend(load_open)
    for c in tiled:
        lo = halos[tiled.index(c)][0]
        lines.append(f"{load_indent}const int {where[c]} = {origin[c]} - {lo} + {local[c]};")
    address = field_address(shape, where)
    lines.append(f"{load_indent}if ({read_somewhere(shape, where)})")
    lines.append(f"{load_indent}    {tile}{''.join(f'[{local[c]}]' for c in reversed(tiled))} = "
                 f"{shape.field}[{address}];")
    lines.extend(load_close)
    lines.append(f"{indent}__syncthreads();")
    # -- the kernel's own work at each point of the tile
    work_open, work_close, work_indent = _nest(tiled, step, list(extents), local, indent)
    lines.extend(work_open)
    values = {c: f"{origin[c]} + {local[c]}" for c in tiled}
    lines.append(f"{work_indent}{bind(view, values)} {prelude(view)}".rstrip())
    replacements = {(r.access.start, r.access.end): _tile_read(tile, tiled, local, halos, r, origin)
                    for r in shape.reads if not r.fallback}
    lines.append(f"{work_indent}if ({view.guard}) {{")
    lines.append(reindent(view.work_with(replacements), work_indent + "    "))
    lines.append(f"{work_indent}}}")
    lines.extend(work_close)
    if shape.slices:
        lines.append(f"{indent}__syncthreads();  // the tile is reused for the next slice")
    lines.extend(reversed(closers))
    return "\n" + "\n".join(lines) + "\n", tuple(grid)


def slice_loop(view: PointKernel, slices: tuple[str, ...], axis: str, indent: str) -> tuple[list[str], str]:
    """The opening of the loop that gives a block, along grid axis `axis`, each value of the
    slice coordinates in turn (strided by the grid), and the number of values (the grid
    extent it wants). Several slices (a batch and a channel) run as one index decomposed in
    mixed radix, the first slice fastest: each combination once."""
    uppers = [view.bounds[c].upper for c in slices]
    types = []
    for c in slices:
        coordinate = view.coordinate(c)
        assert coordinate is not None
        types.append(coordinate.type.replace("const ", ""))
    if len(slices) == 1:
        c, upper = slices[0], uppers[0]
        return [f"{indent}for ({types[0]} {c} = blockIdx.{axis}; {c} < {upper}; {c} += gridDim.{axis}) {{"], upper
    index = fresh(view, "slice")
    extent = " * ".join(f"({u})" for u in uppers)
    lines = [f"{indent}for (long long {index} = blockIdx.{axis}; {index} < {extent}; {index} += gridDim.{axis}) {{"]
    below = ""
    for position, (c, kind, upper) in enumerate(zip(slices, types, uppers, strict=True)):
        value = f"{index} / ({below})" if below else index
        if position < len(slices) - 1:
            value = f"({value}) % ({upper})"
        lines.append(f"{indent}    const {kind} {c} = ({kind})({value});")
        below = f"{below} * ({upper})" if below else f"({upper})"
    return lines, extent


def _thread_step(i: int, threads: tuple[int, int]) -> tuple[str, int]:
    if i == 0:
        return "threadIdx.x", threads[0]
    if i == 1 and threads[1] > 1:
        return "threadIdx.y", threads[1]
    return "0", 1


def _nest(tiled: tuple[str, ...], step: dict[str, tuple[str, int]], sizes: list[int], local: dict[str, str],
          indent: str) -> tuple[list[str], list[str], str]:
    opening: list[str] = []
    closing: list[str] = []
    for i in reversed(range(len(tiled))):
        c = tiled[i]
        start, stride = step[c]
        opening.append(f"{indent}for (int {local[c]} = {start}; {local[c]} < {sizes[i]}; {local[c]} += {stride}) {{")
        closing.insert(0, f"{indent}}}")
        indent += "    "
    return opening, closing, indent


def field_address(shape: Stencil, where: dict[str, str]) -> str:
    position = {**{c: c for c in shape.slices}, **where}
    terms = [f"{shape.strides[c].text()} * {position[c]}" if shape.strides[c].constant != 1 else position[c]
             for c in reversed(shape.tiled + shape.slices) if c in shape.strides]
    if shape.base.terms:
        terms.insert(0, f"({shape.base.text()})")
    return " + ".join(terms)


def read_somewhere(shape: Stencil, where: dict[str, str]) -> str:
    """Whether some read of the kernel touches the element at `where` (one box per read)."""
    position = {**{c: c for c in shape.slices}, **where}
    boxes: list[str] = []
    for read in shape.reads:
        box = " && ".join(f"{position[c]} {op} {text}" for c, op, text in read.limits if c in position)
        if box and box not in boxes:
            boxes.append(box)
    if not boxes:
        return "true"
    return " || ".join(f"({b})" for b in boxes)


def _tile_read(tile: str, tiled: tuple[str, ...], local: dict[str, str], halos: list[tuple[int, int]],
               read: NeighbourRead, origin: dict[str, str]) -> str:
    if read.clamped:
        def element(offsets: dict[str, int]) -> str:
            return _tile_read(tile, tiled, local, halos, replace(read, offsets={c: Poly.const(d) for c, d in
                                                                                offsets.items()}, clamped=()), origin)

        return clamped_read(read, element, lambda c, j: f"({origin[c]} + {local[c]} + {j})")
    subscripts = []
    for i, c in reversed(list(enumerate(tiled))):
        shift = read.offsets[c]
        lo = halos[i][0]
        text = f"{local[c]} + {lo}" if lo else local[c]
        if shift.terms:
            text += f" + ({shift.text()})"
        subscripts.append(f"[{text}]")
    return tile + "".join(subscripts)


def reindent(text: str, indent: str) -> str:
    lines = text.splitlines()
    if not lines:
        return ""
    rest = [line for line in lines[1:] if line.strip()]
    common = min((len(line) - len(line.lstrip()) for line in rest), default=0)
    out = [indent + lines[0].strip()]
    out.extend(indent + line[common:] if line.strip() else "" for line in lines[1:])
    return "\n".join(out)
