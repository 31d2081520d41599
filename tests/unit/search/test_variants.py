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
    # a warp per row in 256-thread blocks: the block still follows from the threads per row
    rows.append(Rewrite("w", LaunchConfig(("rows",), ("256",)), "", (("threads", 32), ("block_x", 256))))
    assert set(grid_axes(rows)) == {"threads"}
    # the same threads per row under two blocks (a launch-shaped variant): the block is an axis
    rows.append(Rewrite("w2", LaunchConfig(("rows",), ("128",)), "", (("threads", 32), ("block_x", 128))))
    assert set(grid_axes(rows)) == {"threads", "block_x"}


def test_a_parameter_the_others_determine_is_not_an_axis() -> None:
    """A GEMM tiling's block follows from its tile and outputs per thread: a move to the next tile
    width is one step, not two."""
    tilings = [Rewrite(f"t{m}x{n}/{tm}", LaunchConfig(("g",), (str(m * n // (tm * tm)),)), "",
                       (("tile_m", m), ("tile_n", n), ("thread_m", tm), ("block_x", m * n // (tm * tm))))
               for m, n, tm in ((128, 128, 8), (128, 64, 8), (64, 64, 4), (64, 64, 2), (64, 128, 8))]
    axes = grid_axes(tilings)
    assert set(axes) == {"tile_m", "tile_n", "thread_m"}
    assert grid_distance(tilings[0], tilings[1], axes) == 1


def test_on_a_sparse_grid_the_nearest_points_are_neighbours() -> None:
    sparse = [point(threads=t, items=i) for t, i in ((32, 1), (128, 4), (512, 8), (256, 4))]
    # from (32, 1) the nearest other point is 3 steps away: not converged before it is judged
    assert next_variant(sparse, {0: 2.0}, anywhere=False) == 1
    assert not converged(sparse, {0: 2.0})
