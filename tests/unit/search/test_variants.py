"""The order MCGS judges a proven technique's variants in (`search/variants.py`): nearest the
best judged one, in grid steps; converged once every neighbour of the best is judged."""

from __future__ import annotations

from regrapht.search.appliers import Rewrite
from regrapht.search.variants import converged, grid_axes, grid_distance, next_variant
from regrapht.spec.launch import LaunchConfig

LAUNCH = LaunchConfig(("n",), ("256",))


def point(**params: int) -> Rewrite:
    return Rewrite(f"k{sorted(params.items())}", LAUNCH, "", tuple(params.items()))


GRID = [point(threads=t, items=i) for t in (32, 64, 128, 256) for i in (1, 2, 4)]


def test_axes_are_the_sorted_values_of_each_parameter() -> None:
    assert grid_axes(GRID) == {"threads": [32, 64, 128, 256], "items": [1, 2, 4]}


def test_distance_counts_grid_steps_not_values() -> None:
    axes = grid_axes(GRID)
    assert grid_distance(point(threads=32, items=1), point(threads=64, items=1), axes) == 1
    assert grid_distance(point(threads=32, items=1), point(threads=256, items=4), axes) == 5
    assert grid_distance(point(threads=32), point(threads=32, items=2), axes) == 1  # an axis only one has
    assert grid_distance(point(threads=32, items=2), point(threads=32, items=2), axes) == 0


def test_variants_without_parameters_keep_the_applier_order() -> None:
    plain = [Rewrite(f"v{i}", LAUNCH, "") for i in range(4)]
    assert next_variant(plain, {}, anywhere=False) == 0
    assert next_variant(plain, {0: 2.0}, anywhere=False) == 1
    assert next_variant(plain, {0: 2.0, 1: 3.0}, anywhere=False) == 2
    assert next_variant(plain, {0: 2.0, 1: 3.0, 2: 1.0, 3: 1.0}, anywhere=True) is None


def test_the_next_variant_is_a_neighbour_of_the_best() -> None:
    index = {r.params: i for i, r in enumerate(GRID)}
    at = lambda t, i: index[(("threads", t), ("items", i))]  # noqa: E731
    rewards = {at(64, 2): 2.0}
    first = next_variant(GRID, rewards, anywhere=False)
    assert first is not None and grid_distance(GRID[first], GRID[at(64, 2)], grid_axes(GRID)) == 1
    # the best moved to (128, 2): its neighbours come next, not the applier's next point
    rewards = {at(64, 2): 2.0, at(128, 2): 3.0}
    chosen = next_variant(GRID, rewards, anywhere=False)
    assert chosen is not None and grid_distance(GRID[chosen], GRID[at(128, 2)], grid_axes(GRID)) == 1


def test_converged_once_every_neighbour_of_the_best_is_judged() -> None:
    index = {r.params: i for i, r in enumerate(GRID)}
    at = lambda t, i: index[(("threads", t), ("items", i))]  # noqa: E731
    rewards = {at(64, 2): 3.0, at(32, 2): 1.0, at(128, 2): 2.0, at(64, 1): 2.5, at(64, 4): 2.9}
    assert next_variant(GRID, rewards, anywhere=False) is None
    assert converged(GRID, rewards)
    farther = next_variant(GRID, rewards, anywhere=True)
    assert farther is not None and grid_distance(GRID[farther], GRID[at(64, 2)], grid_axes(GRID)) == 2
    everything = {i: 1.0 for i in range(len(GRID))}
    assert not converged(GRID, everything)


def test_a_parameter_that_restates_another_is_one_axis() -> None:
    """A block-per-row rewrite's threads per row and its launch's block move together: one step."""
    rows = [Rewrite(f"r{t}", LaunchConfig(("rows",), (str(t),)), "", (("threads", t), ("block_x", t)))
            for t in (64, 128, 256)]
    axes = grid_axes(rows)
    assert set(axes) == {"threads"}
    assert grid_distance(rows[0], rows[1], axes) == 1
    # a warp per row in 256-thread blocks: the block no longer follows the threads per row
    rows.append(Rewrite("w", LaunchConfig(("rows",), ("256",)), "", (("threads", 32), ("block_x", 256))))
    assert set(grid_axes(rows)) == {"threads", "block_x"}
