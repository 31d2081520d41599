"""MCGS tunes a structural rewrite that keeps the launch's block by judging it under the other
block shapes as more variants of the step (`MCGS.variant_rewrites`, docs/search.md change 14): a
block shape alone is slower, so no path through it is searched, and the `rules` sweep, which tunes
the launch after the structural rewrite (where the launch applier no longer matches), never
reaches that order. Fake appliers and timings;
the H200 ablation is the measurement."""

from __future__ import annotations

from dataclasses import dataclass

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
# the vectorized map's speed by the block it keeps; the block shapes alone are slower
VECTORIZED = {"256": 2.0, "128": 2.4, "512": 1.8, "64": 2.1}
BLOCK_ALONE = {"256": 1.0, "128": 0.95, "512": 0.9, "64": 0.97}


@dataclass(frozen=True)
class KeepsBlock:
    """A structural rewrite of the naive code that keeps the launch (a vectorized map)."""

    technique: str = "vectorized_access"
    also: tuple[str, ...] = ()

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        if given.source != NAIVE:
            return []
        return [Rewrite("vectorized", given.launch, "float4 loads")]


@dataclass(frozen=True)
class BlockShapes:
    """Block shapes of the naive code only (a rewritten kernel has its own launch)."""

    technique: str = "launch_configuration"
    also: tuple[str, ...] = ()

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        if given.source != NAIVE:
            return []
        return [Rewrite(given.source, LaunchConfig(given.launch.grid, (block,)), f"block {block}")
                for block in ("128", "512", "64") if (block,) != given.launch.block]


def speed(candidate: Candidate) -> float:
    block = candidate.launch.block[0]
    gain = 1.0 if "restrict" not in candidate.source else 0.99  # noise-level, slower
    if candidate.source.startswith("vectorized"):
        return VECTORIZED[block] * gain
    return BLOCK_ALONE[block] * gain


def best(strategy: str, budget: int, seed: int) -> tuple[float, tuple[str, ...]]:
    graph = load_bundled_graph()
    session = SearchRun.open(search_request(NAIVE, "map", "mcgs", budget, seed),
                             KernelTarget(LaunchConfig(("n/256",), ("256",))),
                             SearchTools(FakeEvaluator(speed), None, graph,
                                         appliers=(KeepsBlock(), BlockShapes(), Restrict())))
    RUNNERS[strategy](session, graph)
    assert session.ledger.best is not None
    return session.ledger.best.evaluation.speedup or 1.0, session.ledger.best.candidate.techniques


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mcgs_tries_the_structural_rewrite_below_block_shapes(seed: int) -> None:
    speedup, techniques = best("mcgs", 12, seed)
    assert speedup == pytest.approx(2.4)
    assert techniques == ("vectorized_access",)
    assert best("rules", 12, seed)[0] == pytest.approx(2.0)  # vectorized, then nothing matches


def test_the_structural_rewrite_is_judged_first() -> None:
    """The block-shaped variants come after the structural rewrite on the original launch (the
    first candidate) proved itself; at budget 1 mcgs offers what `rules` offers."""
    assert best("mcgs", 1, 0)[0] == pytest.approx(2.0)
    assert best("mcgs", 3, 0)[0] >= 2.0


def test_a_slower_step_that_changes_the_text_stays_a_dead_end() -> None:
    """restrict before the structural rewrite is slower and changes only the text the rewrite
    reads: nothing below it is tried (here, the rewrite of restricted code does not match)."""
    graph = load_bundled_graph()
    session = SearchRun.open(search_request(NAIVE, "map", "mcgs", 24, 0),
                             KernelTarget(LaunchConfig(("n/256",), ("256",))),
                             SearchTools(FakeEvaluator(speed), None, graph,
                                         appliers=(KeepsBlock(), BlockShapes(), Restrict())))
    RUNNERS["mcgs"](session, graph)
    paths = [c.techniques for c in session.ledger.history]
    assert not any(p[:1] == ("restrict_const",) and len(p) > 1 for p in paths), paths
