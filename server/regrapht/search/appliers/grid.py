"""The order an applier offers its parameter grid in: the variants it offered before it had a
grid first, as they were (so first answers and the `rules` sweep at small budgets do not change),
then every other grid point in lexicographic order of its coordinates and launch block, each
(source, launch) once."""

from __future__ import annotations

import re
from collections.abc import Iterable

from regrapht.search.appliers.common import ApplierInput, Rewrite, int_literal
from regrapht.search.source import code_mask


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
    (1024 without a device) and the kernel's own `__launch_bounds__`, which a rewrite of the body
    keeps (a launch beyond it fails); bounds the kernel spells with a name allow only its launch's
    own block (0 when that is not a literal)."""
    limit = given.device.max_threads_per_block if given.device is not None else 1024
    mask = code_mask(given.source)
    name = re.escape(given.kernel.split("<")[0].strip())
    # the declarations of the kernel: from the end of what precedes them up to its name
    headers = [mask[max(mask.rfind(c, 0, m.start()) for c in ";{}") + 1 : m.start()]
               for m in re.finditer(rf"\b{name}\s*\(", mask)]
    header = " ".join(h for h in headers if "__global__" in h)
    if "__launch_bounds__" not in header:
        return limit
    bound = re.search(r"__launch_bounds__\s*\(\s*(\d+)\s*[,)]", header)
    if bound is not None:
        return min(limit, int(bound.group(1)))
    own = int_literal(given.launch.block[0]) if given.launch.block else None
    return min(limit, own) if own is not None else 0
