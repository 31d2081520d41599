"""The order an applier offers its parameter grid in: the variants it offered before it had a
grid first, as they were (so first answers and the `rules` sweep at small budgets do not change),
then every other grid point in lexicographic order of its coordinates and launch block, each
(source, launch) once."""

from __future__ import annotations

from collections.abc import Iterable

from regrapht.search.appliers.common import Rewrite


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
