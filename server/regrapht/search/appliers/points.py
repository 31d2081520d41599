"""What the appliers built on point kernels (`idioms/pointwise.py`) share: finding the view of
the kernel, checking that its launch visits every point of the guarded domain exactly once, and
re-binding the coordinates in a rewrite."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from regrapht.cuda.parse import parse_source
from regrapht.idioms.grid_stride import grid_stride_as_guard
from regrapht.idioms.pointwise import AXES, PointKernel, expression_poly, launch_block, point_kernel
from regrapht.search.appliers.common import ApplierInput, ceil_parts, int_literal, norm
from regrapht.search.source import KernelText, find_kernel

T = TypeVar("T")


def point_view(given: ApplierInput, *, atomics: bool = False) -> tuple[KernelText, PointKernel] | None:
    """The kernel and its point-kernel view when its launch covers the guarded domain. A final
    grid-stride loop nest is read as its guard (`idioms/grid_stride.py`): the same program
    exactly when the launch covers the range, which `covers_domain` checks."""
    kernel = find_kernel(given.source, given.kernel)
    if kernel is None:
        return None
    constants = dict(parse_source(given.source).constants)
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


def recognised(given: ApplierInput, recognise: Callable[[PointKernel], T | None]) -> tuple[KernelText, T] | None:
    """The kernel and what `recognise` finds in its point-kernel view (with its launch covering
    the domain), or None."""
    found = point_view(given)
    if found is None:
        return None
    shape = recognise(found[1])
    return (found[0], shape) if shape is not None else None


def covers_domain(given: ApplierInput, view: PointKernel) -> bool:
    """Whether the launch has a thread for every point of the guarded domain (so a rewrite that
    visits the whole domain does the same work), and one launch dimension per coordinate."""
    block = launch_block(given.launch.block)
    if block is None:
        return False
    grid = list(given.launch.grid) + ["1"] * (3 - len(given.launch.grid))
    if view.linear is not None:
        if block[1:] != (1, 1) or any(int_literal(g) != 1 for g in grid[1:]):
            return False
        return _covers(grid[0], block[0], view.linear.total)
    used = {c.axis for c in view.coordinates}
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
