"""What the appliers built on point kernels (`idioms/pointwise.py`) share: finding the view of
the kernel, checking that its launch visits every point of the guarded domain exactly once, and
re-binding the coordinates in a rewrite."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TypeVar

from regrapht.cuda.parse import parse_source
from regrapht.idioms.grid_stride import grid_stride_as_guard
from regrapht.idioms.kept_loops import loop_around, loop_as_scalar
from regrapht.idioms.loop_points import distinct_writes, loops_as_points
from regrapht.idioms.pointwise import AXES, Bound, PointKernel, expression_poly, launch_block, point_kernel
from regrapht.idioms.shared_tiles import detiled
from regrapht.idioms.spelling import builtins_unaliased, plain_spelling
from regrapht.idioms.syntax import kernel_syntax
from regrapht.idioms.tile_rows import tile_rows_as_points
from regrapht.search.appliers.common import (
    ApplierInput,
    Rewrite,
    ceil_parts,
    changed_region,
    int_literal,
    norm,
)
from regrapht.search.source import KernelText, find_kernel
from regrapht.spec.expr import names_in

T = TypeVar("T")


def point_view(given: ApplierInput, *, atomics: bool = False, pinned: bool = False
               ) -> tuple[KernelText, PointKernel] | None:
    """The kernel and its point-kernel view when its launch covers the guarded domain. `pinned`:
    read the integer template arguments of the instantiation asked for (`dwconv<double, 3>`) as
    constants; a rewrite of such a view holds for them only (`template_pins` says so in code). A final
    grid-stride loop nest is read as its guard (`idioms/grid_stride.py`): the same program
    exactly when the launch covers the range, which `covers_domain` checks."""
    kernel = find_kernel(given.source, given.kernel)
    if kernel is None:
        return None
    constants = dict(parse_source(given.source).constants)
    if pinned:
        constants.update(template_values(given))
    view = point_kernel(kernel.text(given.source), launch_block(given.launch.block), constants, atomics=atomics,
                        grid=tuple(given.launch.grid))
    if view is None:
        guarded = grid_stride_as_guard(given.source, given.kernel)
        as_guard = find_kernel(guarded, given.kernel) if guarded != given.source else None
        if as_guard is not None:
            view = point_kernel(as_guard.text(guarded), launch_block(given.launch.block), constants, atomics=atomics,
                                grid=tuple(given.launch.grid))
    if view is None or not covers_domain(given, view):
        return None
    return kernel, view


def template_values(given: ApplierInput) -> dict[str, int]:
    """The integer template arguments of the instantiation named (`K` -> 3 for `dwconv<double, 3>`)."""
    syntax = kernel_syntax(given.source, given.kernel)
    if syntax is None or "<" not in given.kernel or not given.kernel.rstrip().endswith(">"):
        return {}
    inside = given.kernel[given.kernel.index("<") + 1 : given.kernel.rstrip().rindex(">")]
    arguments: list[str] = []
    depth, current = 0, ""
    for char in inside:
        depth += {"<": 1, "(": 1, ">": -1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            arguments.append(current.strip())
            current = ""
        else:
            current += char
    arguments.append(current.strip())
    if len(arguments) != len(syntax.template_parameters):
        return {}
    return {name: value for name, argument in zip(syntax.template_parameters, arguments, strict=True)
            if (value := int_literal(argument)) is not None}


def template_pins(given: ApplierInput) -> str:
    """`static_assert`s that keep a rewrite made for one instantiation (`template_values`) from
    compiling for another, or "" when the kernel has no integer template arguments."""
    return "".join(f"\n    static_assert({name} == {value}, \"rewritten for {name} = {value}\");"
                   for name, value in sorted(template_values(given).items()))


def recognised(given: ApplierInput, recognise: Callable[[PointKernel], T | None], *, pinned: bool = False
               ) -> tuple[KernelText, T] | None:
    """The kernel and what `recognise` finds in its point-kernel view (with its launch covering
    the domain), or None."""
    found = point_view(given, pinned=pinned)
    if found is None:
        return None
    shape = recognise(found[1])
    return (found[0], shape) if shape is not None else None


def recognised_with_loops(given: ApplierInput, recognise: Callable[[PointKernel], T | None]
                          ) -> tuple[ApplierInput, KernelText, T] | None:
    """`recognised` (template arguments pinned: the caller puts `template_pins` in its rewrite),
    also for a kernel whose points are visited by grid-stride loops or a march
    (`idioms/loop_points.py`): then of the kernel with those loops written as coordinates, and
    the launch that gives each point its own thread (the input the rewrite is made from)."""
    found = recognised(given, recognise, pinned=True)
    if found is not None:
        return (given, *found)
    as_points = loops_read_as_points(given)
    if as_points is None:
        return None
    found = recognised(as_points, recognise, pinned=True)
    return (as_points, *found) if found is not None else None


def loops_read_as_points(given: ApplierInput) -> ApplierInput | None:
    """`given` with its point-visiting loops written as coordinates and a launch with a thread
    per point; None when it has none, or its iterations may not run in parallel."""
    block = launch_block(given.launch.block)
    converted = loops_as_points(given.source, given.kernel, block, tuple(given.launch.grid))
    if converted is None or block is None:
        return None
    kernel = find_kernel(converted.source, given.kernel)
    if kernel is None:
        return None
    constants = dict(parse_source(converted.source).constants)
    view = point_kernel(kernel.text(converted.source), block, constants, grid=tuple(given.launch.grid))
    axes = dict(converted.axes)
    if view is not None and view.linear is not None and view.linear.name in axes:
        # a grid-stride loop over a flat index the kernel decodes: its parts are the coordinates
        del axes[view.linear.name]
        axes.update({c.name: c.axis for c in view.coordinates if c.axis == "x"})
    if view is None or not distinct_writes(view, axes):
        return None
    grid = list(given.launch.grid) + ["1"] * (3 - len(given.launch.grid))
    for variable, axis in converted.axes.items():
        index = AXES.index(axis)
        upper = view.linear.total if view.linear is not None and view.linear.name == variable \
            else view.bounds[variable].upper
        grid[index] = ceil_div(upper, block[index])
    while len(grid) > len(given.launch.grid) and grid[-1] == "1":
        grid.pop()
    launch = replace(given.launch, grid=tuple(grid))
    return replace(given, source=converted.source, launch=launch)


def tile_rows_read_as_points(given: ApplierInput) -> ApplierInput | None:
    """`given` with a loop over a tile's rows in block-row steps written as a thread per row
    (`idioms/tile_rows.py`), and the launch whose block has those rows; None when it has none."""
    block = launch_block(given.launch.block)
    converted = tile_rows_as_points(given.source, given.kernel, block, tuple(given.launch.grid))
    if converted is None:
        return None
    dims = list(given.launch.block) + ["1"] * (3 - len(given.launch.block))
    dims[AXES.index(converted.axis)] = str(converted.rows)
    while len(dims) > len(given.launch.block) and dims[-1] == "1":
        dims.pop()
    return replace(given, source=converted.source, launch=replace(given.launch, block=tuple(dims)))


def detiled_read_as_naive(given: ApplierInput) -> ApplierInput | None:
    """`given` with a product staged through shared tiles written as its naive dot product
    (`idioms/shared_tiles.py`); None when it has none."""
    written = detiled(given.source, given.kernel, launch_block(given.launch.block), tuple(given.launch.grid),
                      template_values(given))
    if written is None:
        return None
    # written plainly again (the loads keep the spelling they had: `(row) * (K)` from a macro),
    # the block's indices under their own names (`int tx = threadIdx.x;` of the samples' layout)
    return replace(given, source=plain_spelling(builtins_unaliased(written, given.kernel), given.kernel))


def kept_loop_rewrites(given: ApplierInput, apply: Callable[[ApplierInput], list[Rewrite]]) -> list[Rewrite]:
    """`apply`'s rewrites of one iteration of a loop around the kernel's whole work that no
    launch axis can take (`idioms/kept_loops.py`), each with the loop put back around it."""
    kept = loop_as_scalar(given.source, given.kernel)
    if kept is None:
        return []
    derived = replace(given, source=kept.source)
    found = recognised_with_loops(derived, lambda view: view)
    if found is None:
        return []
    # the counter as a coordinate of its range (no longer a scalar) for `distinct_writes`
    view = found[2]
    counted = replace(view, params={name: kind for name, kind in view.params.items() if name != kept.variable},
                      bounds={**view.bounds, kept.variable: Bound(kept.lower, kept.upper)})
    if not distinct_writes(counted, {kept.variable: ""}):
        return []
    rewrites = []
    for rewrite in apply(derived):
        if any(kept.variable in names_in(e) for e in (*rewrite.launch.grid, *rewrite.launch.block)):
            continue  # the launch would depend on the iteration
        source = loop_around(rewrite.source, given.kernel, kept)
        if source is not None:
            # `loop_around` returns the whole text: its change is the region it rewrote
            wrapped = rewrite.then((changed_region(rewrite.source, source),)).rebased(given.source)
            rewrites.append(replace(wrapped, note=f"{rewrite.note}, in each iteration of the loop over "
                                                  f"{kept.variable} (no launch axis is free for it)"))
    return rewrites


def covers_domain(given: ApplierInput, view: PointKernel) -> bool:
    """Whether the launch has a thread for every point of the guarded domain (so a rewrite that
    visits the whole domain does the same work), and one launch dimension per coordinate."""
    block = launch_block(given.launch.block)
    if block is None:
        return False
    grid = list(given.launch.grid) + ["1"] * (3 - len(given.launch.grid))
    used = {c.axis for c in view.coordinates}
    if view.linear is not None:  # the x axis covers the 1-D index the x coordinates decode
        if block[0] < 1 or not _covers(grid[0], block[0], view.linear.total):
            return False
        others = [c for c in view.coordinates if c.axis != "x"]
        return all(axis in used or (block[i] == 1 and int_literal(grid[i]) == 1) for i, axis in enumerate(AXES)
                   if axis != "x") and all(_covers(grid[AXES.index(c.axis)], block[AXES.index(c.axis)],
                                                   view.bounds[c.name].upper) for c in others)
    for axis_index, axis in enumerate(AXES):
        if axis not in used and (block[axis_index] != 1 or int_literal(grid[axis_index]) != 1):
            return False  # extra threads along an unused axis would repeat the work
    for coordinate in view.coordinates:
        axis_index = AXES.index(coordinate.axis)
        if not _covers(grid[axis_index], block[axis_index], view.bounds[coordinate.name].upper):
            return False
    return True


def _covers(expr: str, size: int, bound: str) -> bool:
    """Whether `expr` blocks of `size` threads reach every index below `bound`."""
    upper = norm(bound)
    parts = ceil_parts(expr)
    if parts is not None and parts[1] == size and norm(parts[0]).strip("()") == upper.strip("()"):
        return True
    if size == 1 and norm(expr).strip("()") == upper.strip("()"):
        return True
    return _at_least(parts[0] if parts is not None and parts[1] == size else None, upper) or \
        _at_least(f"({expr}) * {size}", upper)


def _at_least(covered: str | None, upper: str) -> bool:
    """Whether `covered` >= `upper` for every value of the scalars: their difference is a
    non-negative constant (`nx` covers `nx - 1`)."""
    if covered is None:
        return False
    have, need = expression_poly(covered), expression_poly(upper)
    if have is None or need is None:
        return False
    difference = (have - need).constant
    return difference is not None and difference >= 0


def bind(view: PointKernel, values: Mapping[str, str]) -> str:
    """Declarations giving each coordinate its value in the rewrite (same names and types)."""
    return " ".join(f"{view.coordinate(name).type} {name} = {value};"  # type: ignore[union-attr]
                    for name, value in values.items())


def prelude(view: PointKernel) -> str:
    return " ".join(view.prelude)


def ceil_div(upper: str, size: int) -> str:
    return upper if size == 1 else f"({upper} + {size - 1}) / {size}"
