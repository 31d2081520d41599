"""A structural technique whose variants are a parameter grid larger than the budget: MCGS judges
a proven technique's variants nearest the best one first (`search/variants.py`) and spends what
is left on the code it found, where the `rules` sweep judges the grid in the applier's order.
Fake appliers and timings (a smooth landscape, as block sizes and points per thread give); the
H200 ablation is the measurement."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import mean

import pytest

from regrapht.graph import load_bundled_graph
from regrapht.search.appliers import ApplierInput, Rewrite
from regrapht.search.request import KernelTarget
from regrapht.search.run import SearchRun, SearchTools
from regrapht.search.strategies import RUNNERS
from regrapht.spec.launch import LaunchConfig
from regrapht.validate.types import Candidate

from .fakes import FakeEvaluator, Restrict, search_request

NAIVE = "naive"
THREADS = (32, 64, 128, 256, 512, 1024)
ITEMS = (1, 2, 4, 8)
# the applier's historical variants first, then the rest of the grid in lexicographic order
LEGACY = ((256, 1), (128, 1), (32, 1))
GRID = (*LEGACY, *((t, i) for t in THREADS for i in ITEMS if (t, i) not in LEGACY))


def per_row_speed(threads: int, items: int) -> float:
    """Peaks at 512 threads x 4 items; one grid step costs 12-15%."""
    return 6.0 * 0.85 ** abs(math.log2(threads / 512)) * 0.88 ** abs(math.log2(items / 4))


@dataclass(frozen=True)
class RowGrid:
    """A block-per-row rewrite of the naive code: threads per row x items per thread (the block is
    the threads per row)."""

    technique: str = "block_per_row"
    also: tuple[str, ...] = ()

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        if given.source != NAIVE:
            return []
        return [Rewrite(f"row t={t} i={i}", LaunchConfig(("rows",), (str(t),)), f"{t} threads, {i} items",
                        (("threads_per_row", t), ("items", i))) for t, i in GRID]


@dataclass(frozen=True)
class WarpRows:
    """A slower structural alternative with a small grid of its own."""

    technique: str = "warp_shuffle_reduction"
    also: tuple[str, ...] = ()

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        if given.source != NAIVE:
            return []
        return [Rewrite(f"warp i={i}", LaunchConfig(("rows / 8",), ("256",)), f"warp per row, {i} items",
                        (("items", i),)) for i in (1, 2, 4)]


def speed(candidate: Candidate) -> float:
    text = candidate.source
    gain = 1.04 if "restrict" in text else 1.0  # restrict on top of a restructured kernel
    if text.startswith("row"):
        fields = dict(part.split("=") for part in text.split()[1:3])
        return per_row_speed(int(fields["t"]), int(fields["i"])) * gain
    if text.startswith("warp"):
        return (2.0 + 0.2 * int(text.split("=")[1].split()[0])) * gain
    return 1.0 * (0.99 if "restrict" in text else 1.0)


def best(strategy: str, budget: int, seed: int, judge: Callable[[Candidate], float] = speed) -> float:
    graph = load_bundled_graph()
    session = SearchRun.open(search_request(NAIVE, "rows", "mcgs", budget, seed),
                             KernelTarget(LaunchConfig(("rows / 128",), ("128",))),
                             SearchTools(FakeEvaluator(judge), None, graph,
                                         appliers=(RowGrid(), WarpRows(), Restrict())))
    RUNNERS[strategy](session, graph)
    assert session.ledger.best is not None
    assert session.ledger.evaluated <= budget
    return session.ledger.best.evaluation.speedup or 1.0


@pytest.mark.parametrize("budget", [6, 12, 24])
def test_mcgs_is_ahead_of_every_baseline_on_a_grid_larger_than_the_budget(budget: int) -> None:
    mcgs = [best("mcgs", budget, seed) for seed in range(3)]
    for baseline in ("rules", "greedy", "random"):
        others = [best(baseline, budget, seed) for seed in range(3)]
        assert mean(mcgs) > mean(others) * 1.01, (baseline, mcgs, others)
    assert min(mcgs) >= max(best("rules", budget, seed) for seed in range(3))


def test_mcgs_climbs_to_the_peak_and_builds_on_it() -> None:
    """At 24 candidates mcgs reaches the grid's peak (512 x 4) and restrict on top of it; the
    `rules` sweep spends its budget on the grid in the applier's order."""
    assert best("mcgs", 24, 0) == pytest.approx(6.0 * 1.04)
    assert best("rules", 24, 0) < 6.0 * 1.04


def test_a_grid_whose_first_point_is_within_the_noise_is_still_searched() -> None:
    """heat3d on the H200: the first coarsening was 0.99x, a neighbour 1.04x. A structural step
    within PROMISING_MARGIN of the code it rewrote has its neighbourhood judged first (change 16)."""
    def flat_start(candidate: Candidate) -> float:
        if candidate.source.startswith("row"):
            fields = dict(part.split("=") for part in candidate.source.split()[1:3])
            threads, items = int(fields["t"]), int(fields["i"])
            if (threads, items) == GRID[0]:
                return 0.99
            return 1.0 + 0.05 * math.log2(items) if threads >= 256 else 0.98
        return 0.9 if candidate.source.startswith("warp") else 0.97
    assert best("mcgs", 6, 0, flat_start) >= 1.05


def two_peaks(candidate: Candidate) -> float:
    """The applier's first point (256 x 1) is a local peak (3.0x, every neighbour 2.7x); 512 x 4,
    three grid steps away (past its neighbourhood), is faster (3.3x). restrict_const alone is
    slower (0.99x) and at most the graph's ~1.08x: dominated once a 3x version exists."""
    text = candidate.source
    if text.startswith("row"):
        fields = dict(part.split("=") for part in text.split()[1:3])
        threads, items = int(fields["t"]), int(fields["i"])
        peak = {(256, 1): 3.0, (512, 4): 3.3}.get((threads, items))
        return (peak or 2.7 * 0.97 ** abs(math.log2(threads / 256))) * (1.01 if "restrict" in text else 1.0)
    return 0.5 if text.startswith("warp") else 0.99


def test_the_best_techniques_farther_variants_come_before_dominated_refinements() -> None:
    """Change 18: once the best step's neighbourhood converged (a local best), its farther variants
    are judged before a refinement that cannot beat the best even with its largest measured gain
    (restrict_const on the naive code); before, those came first and the 3.3x point was never
    judged within 16 candidates."""
    evaluator = FakeEvaluator(two_peaks)
    graph = load_bundled_graph()
    session = SearchRun.open(search_request(NAIVE, "rows", "mcgs", 16, 0),
                             KernelTarget(LaunchConfig(("rows / 128",), ("128",))),
                             SearchTools(evaluator, None, graph, appliers=(RowGrid(), WarpRows(), Restrict())))
    RUNNERS["mcgs"](session, graph)
    order = [c.source for c in evaluator.seen]
    assert session.ledger.best is not None and (session.ledger.best.evaluation.speedup or 0.0) >= 3.3, order
    peak = order.index("row t=512 i=4")
    assert all(order.index(source) > peak for source in order if source == f"{NAIVE} restrict"), order
