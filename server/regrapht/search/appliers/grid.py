"""The order an applier offers its parameter grid in: the variants it offered before it had a
grid first, as they were (so first answers and the `rules` sweep at small budgets do not change),
then every other grid point in lexicographic order of its coordinates and launch block, each
(source, launch) once; and the bound (`__launch_bounds__`) a grid point's kernel declares for its
block, so the compiler fits its registers to the launch."""

from __future__ import annotations

import math
from collections.abc import Iterable

from regrapht.cuda.tokens import find_word, is_name
from regrapht.search.appliers.common import (
    ApplierInput,
    Rewrite,
    block_dims,
    edits,
    has_launch_bounds,
    int_literal,
)
from regrapht.search.source import code_mask, find_kernel, integer_define, kernel_launch_bounds


def grid_order(first: Iterable[Rewrite], rest: Iterable[Rewrite]) -> list[Rewrite]:
    """`first` in its order, then `rest` sorted by (params' values, launch block), without a
    rewrite whose source and launch an earlier one already has."""
    seen: set[tuple[str, tuple[str, ...], tuple[str, ...], str]] = set()
    ordered: list[Rewrite] = []

    def block_key(r: Rewrite) -> tuple[int, ...]:
        return tuple(int(b) if b.strip().isdigit() else 0 for b in r.launch.block)

    for rewrite in [*first, *sorted(rest, key=lambda r: (tuple(v for _, v in r.params), block_key(r)))]:
        key = (rewrite.source, tuple(rewrite.launch.grid), tuple(rewrite.launch.block), str(rewrite.launch.shared_bytes))
        if key not in seen:
            seen.add(key)
            ordered.append(rewrite)
    return ordered


def thread_limit(given: ApplierInput) -> int:
    """The most threads per block a grid point of `given`'s kernel may launch: the device's limit
    (1024 without a device) and the kernel's own `__launch_bounds__` (written before or after
    `__global__`, on its definition or a forward declaration), which a rewrite of the body keeps
    (a launch beyond it fails). A bound the kernel spells with a name is read through a single
    `#define NAME <integer>`; any other allows only its launch's own block (0 when that is not
    a literal)."""
    limit = given.device.max_threads_per_block if given.device is not None else 1024
    bounds = kernel_launch_bounds(given.source, given.kernel)
    if not bounds:
        return limit
    bound = int_literal(bounds[0])
    if bound is None and is_name(bounds[0]):
        bound = integer_define(given.source, bounds[0])
    if bound is not None:
        return min(limit, bound)
    own = int_literal(given.launch.block[0]) if given.launch.block else None
    return min(limit, own) if own is not None else 0


def bounded_grid_order(given: ApplierInput, first: Iterable[Rewrite], rest: Iterable[Rewrite]) -> list[Rewrite]:
    """`grid_order(first, rest)` with every grid point after the first variants declaring
    `__launch_bounds__(its block)` (`with_launch_bounds`). Without a bound the compiler may give
    a thread more registers than a block of the grid's larger sizes can have (65536 per block:
    at 1024 threads, 64 each), and the launch fails; with it, the compiler fits them to the
    block (spilling if it must). The first variants are kept as they were."""
    kept = grid_order(first, [])
    ordered = grid_order(kept, rest)
    return kept + [with_launch_bounds(r, given.kernel) for r in ordered[len(kept):]]


def with_launch_bounds(rewrite: Rewrite, kernel: str) -> Rewrite:
    """`rewrite` with `__launch_bounds__(B)` after `__global__` in the definition of `kernel`,
    B its literal block size (x*y*z). Unchanged when the kernel already declares a bound (a grid
    is kept within it, `thread_limit`) or the block is not made of literals."""
    dims = block_dims(rewrite.launch)
    located = find_kernel(rewrite.source, kernel)
    if located is None or not rewrite.launch.block or dims is None or min(dims) <= 0 \
            or has_launch_bounds(located, rewrite.source):
        return rewrite
    threads = math.prod(dims)
    header = code_mask(rewrite.source)[located.start:located.body_start]
    at = find_word(header, "__global__")
    if at < 0:
        return rewrite
    cut = located.start + at + len("__global__")
    return rewrite.then(edits(rewrite.source, (cut, cut, f" __launch_bounds__({threads})")))
