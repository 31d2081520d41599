"""The order in which MCGS judges the variants of a proven technique: nearest the best first.

An applier's rewrites of one code state may be points of a parameter grid (`Rewrite.params`:
threads per row, points per thread, tile shape, block shape, ...). A fixed sweep judges them in
the applier's order; MCGS judges next the untried variant nearest the best one judged so far
(pattern search: a step along one axis at a time, continuing from wherever the best moved). Once
every neighbour of the best is judged and none beat it, the technique is tuned (`converged`):
the farther variants wait until nothing else is left to judge.

Distance is counted in grid steps: on each axis, the difference of the two values' positions
among the values that axis takes in the grid; an axis only one of the two has counts one step.
An axis the other axes determine is not counted (`grid_axes`). The neighbours of the best are its
`2 x axes` nearest grid points (`neighbours`): a step either way along each axis of a dense grid,
and the nearest points of a sparse one (the H200 ablation of e67da66: on gemv_t the best column
split was two steps from the first, and the one point one step away was slower).
Variants without parameters are one step from each other, so they are judged in the applier's
order, as before grids.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from regrapht.search.appliers import Rewrite

# Grid steps within which a variant is always a neighbour of the best one.
NEIGHBOUR_STEPS = 1

Axes = dict[str, list[int]]


def grid_axes(rewrites: Sequence[Rewrite]) -> Axes:
    """Each parameter's values over `rewrites`, sorted: a value's position is its grid coordinate.
    A parameter the others determine is left out (the launch's block of a block-per-row rewrite,
    which is its threads per row; a GEMM tiling's block, which its tile and outputs per thread
    fix), so one move along the grid is one step; the last-named such parameter goes first."""
    values: dict[str, set[int]] = {}
    for rewrite in rewrites:
        for name, value in rewrite.params:
            values.setdefault(name, set()).add(value)
    kept = list(values)
    for name in reversed(list(values)):
        if len(kept) > 1 and _determined(rewrites, name, [other for other in kept if other != name]):
            kept.remove(name)
    return {name: sorted(values[name]) for name in kept}


def _determined(rewrites: Sequence[Rewrite], name: str, others: list[str]) -> bool:
    """Whether `name`'s value (or its absence) follows from the values of `others` in every variant."""
    seen: dict[tuple[int | None, ...], int | None] = {}
    for rewrite in rewrites:
        params = dict(rewrite.params)
        key = tuple(params.get(other) for other in others)
        if seen.setdefault(key, params.get(name)) != params.get(name):
            return False
    return True


def grid_distance(a: Rewrite, b: Rewrite, axes: Axes) -> int:
    """Grid steps between two variants over `axes` (1 between two distinct variants that no axis
    tells apart: no parameters, or only restated ones)."""
    first = {name: value for name, value in a.params if name in axes}
    second = {name: value for name, value in b.params if name in axes}
    if first == second:
        return 0 if (a.source, a.launch) == (b.source, b.launch) else 1
    steps = 0
    for name in first.keys() | second.keys():
        if name in first and name in second:
            positions = axes.get(name, [])
            if first[name] in positions and second[name] in positions:
                steps += abs(positions.index(first[name]) - positions.index(second[name]))
            else:
                steps += int(first[name] != second[name])
        else:
            steps += 1
    return steps


def neighbours(rewrites: Sequence[Rewrite], best: int) -> list[int]:
    """The variants nearest `best`: its `2 x axes` nearest grid points (at least 2), and every
    point as near as the farthest of them (a full step either way along each axis on a dense grid;
    on a sparse one, such as tile shapes that go with their outputs per thread, its nearest points
    whatever their distance)."""
    axes = grid_axes(rewrites)
    steps = {i: grid_distance(rewrites[i], rewrites[best], axes) for i in range(len(rewrites)) if i != best}
    if not steps:
        return []
    ordered = sorted(steps.values())
    reach = ordered[min(len(ordered), max(2, 2 * len(axes))) - 1]
    return sorted((i for i, d in steps.items() if d <= max(reach, NEIGHBOUR_STEPS)), key=lambda i: (steps[i], i))


def next_variant(rewrites: Sequence[Rewrite], rewards: Mapping[int, float], *, anywhere: bool,
                 first: int = 0) -> int | None:
    """The index of the variant to judge next: the applier's `first` variants in its order (its
    hand-picked, most promising ones), then the untried neighbour of the best judged variant
    (`rewards`: reward by index) nearest it, ties in the applier's order; else, if `anywhere`, the
    untried variant nearest it; None when every variant is judged, or when every neighbour of the
    best is judged (`converged`) and not `anywhere`."""
    untried = [i for i in range(len(rewrites)) if i not in rewards]
    if not untried:
        return None
    if not rewards or untried[0] < first:
        return untried[0]
    best = max(rewards, key=lambda i: (rewards[i], -i))
    near = [i for i in neighbours(rewrites, best) if i not in rewards]
    if near:
        return near[0]
    if not anywhere:
        return None
    axes = grid_axes(rewrites)
    return min(untried, key=lambda i: (grid_distance(rewrites[i], rewrites[best], axes), i))


def converged(rewrites: Sequence[Rewrite], rewards: Mapping[int, float], first: int = 0) -> bool:
    """Whether untried variants are left but none is a neighbour of the best judged one."""
    return len(rewards) < len(rewrites) and next_variant(rewrites, rewards, anywhere=False, first=first) is None
