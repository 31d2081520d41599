"""MCGS against every baseline at budgets 6, 12 and 24 with fake timings (issue 12): a small
ablation on kernels made of fake appliers, judged by what the code is (never by the technique
names), with the bundled (distilled) graph's priors. The timings follow what the applier runs on
the H200 measured: a structural rewrite pays several times over, its variants (tile shapes) differ
by tens of percent and the best is not always the first; refinements (block shapes, unrolling,
restrict, fast math) gain up to ~25% on naive code and are noise-level or slower on restructured
code (BlockSizeTuning 72 of 82 slower, LoopUnrolling 14 of 14). MCGS must be at or above every
baseline in geomean at every budget, and for the reasons docs/search.md gives: every variant of
the proven structural technique, then refinements of the best code, with refinements that cannot
beat the best (the distilled priors bound their gain) last."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import pytest

from regrapht.graph import ReasoningGraph, load_bundled_graph
from regrapht.search.appliers import ApplierInput, Rewrite
from regrapht.search.mcgs import MCGS, is_structural
from regrapht.search.request import KernelTarget
from regrapht.search.run import SearchRun, SearchTools
from regrapht.search.strategies import RUNNERS
from regrapht.spec.launch import LaunchConfig
from regrapht.validate.types import Candidate

from .fakes import FakeEvaluator, search_request


@dataclass(frozen=True)
class MarkerApplier:
    """Matches code it has not rewritten yet; variant i appends `// <technique> v<i>`."""

    technique: str
    variants: int
    also: tuple[str, ...] = ()

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        if f"// {self.technique} " in given.source:
            return []
        return [Rewrite(given.source + f"\n// {self.technique} v{i}", given.launch, f"{self.technique} v{i}")
                for i in range(self.variants)]


@dataclass(frozen=True)
class FakeKernel:
    """Per technique, the gain of each variant: on naive code, and (refinements) on restructured code."""

    name: str
    structural: Mapping[str, tuple[float, ...]]
    refinements: Mapping[str, tuple[tuple[float, ...], tuple[float, ...]]]  # (on naive code, on restructured)

    def appliers(self) -> tuple[MarkerApplier, ...]:
        # the APPLIERS order: pattern rewrites first, then the local ones
        return (*(MarkerApplier(t, len(g)) for t, g in self.structural.items()),
                *(MarkerApplier(t, len(g[0])) for t, g in self.refinements.items()))

    def speed(self, candidate: Candidate) -> float:
        """The product of the steps' gains; a structural rewrite regenerates the kernel (its own
        launch and loops), so refinements made before the first one are lost."""
        steps = [line[3:].split(" v") for line in candidate.source.splitlines() if line.startswith("// ")]
        restructured = False
        speed = 1.0
        for technique, variant in steps:
            if technique in self.structural:
                speed = (speed if restructured else 1.0) * self.structural[technique][int(variant)]
                restructured = True
            else:
                speed *= self.refinements[technique][1 if restructured else 0][int(variant)]
        return speed


KERNELS = (
    # a GEMM: tiling pays, its 4th tile shape best (rules judges every variant); refinements slower once tiled
    FakeKernel("gemm", {"shared_memory_tiling": (4.0, 5.0, 3.5, 6.0)},
               {"launch_configuration": ((1.13, 1.2, 0.9), (0.97, 0.95, 0.99)),
                "loop_unrolling": ((1.05, 1.0, 0.98), (0.99, 0.98, 1.0)),
                "restrict_const": ((1.02,), (1.0,))}),
    # a reduction: the warp-shuffle rewrite pays, vectorizing the loads on top of it too
    FakeKernel("reduction", {"warp_shuffle_reduction": (20.0, 24.0), "vectorized_access": (1.5, 1.4)},
               {"grid_stride_loop": ((1.1, 0.9), (0.96, 0.98)), "launch_configuration": ((1.1, 1.0, 0.9), (0.98, 1.01, 0.97)),
                "loop_unrolling": ((1.0, 0.99, 0.98), (0.99, 1.0, 0.97))}),
    # an elementwise map: vectorized 2x; a block shape pays a little on top
    FakeKernel("map", {"vectorized_access": (2.0, 2.2)},
               {"launch_configuration": ((1.05, 0.95, 1.1), (1.03, 0.97, 0.99)), "loop_unrolling": ((0.98,), (0.97,)),
                "restrict_const": ((1.01,), (1.01,)), "fast_math": ((1.0,), (0.99,))}),
    # a kernel no pattern rewrite matches: only refinements
    FakeKernel("plain", {},
               {"launch_configuration": ((0.9, 1.3, 1.1), (1.0, 1.0, 1.0)), "grid_stride_loop": ((1.2, 0.9), (1.0, 1.0)),
                "loop_unrolling": ((1.0, 0.98, 1.05), (1.0, 1.0, 1.0)), "restrict_const": ((1.02,), (1.0,))}),
)
BASELINES = ("rules", "greedy", "random")


def best_speedup(kernel: FakeKernel, strategy: str, budget: int, seed: int, graph: ReasoningGraph) -> float:
    session = SearchRun.open(search_request("naive", kernel.name, "mcgs", budget, seed),
                             KernelTarget(LaunchConfig(("1",), ("256",))),
                             SearchTools(FakeEvaluator(kernel.speed), None, graph, appliers=kernel.appliers()))
    RUNNERS[strategy](session, graph)
    best = session.ledger.best
    return best.evaluation.speedup or 1.0 if best is not None else 1.0


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


@pytest.mark.parametrize("budget", [6, 12, 24])
def test_mcgs_is_at_or_above_every_baseline(budget: int) -> None:
    graph = load_bundled_graph()
    results: dict[str, list[float]] = {}
    for strategy in ("mcgs", *BASELINES):
        per_seed = [geomean([best_speedup(k, strategy, budget, seed, graph) for k in KERNELS]) for seed in (0, 1, 2)]
        results[strategy] = per_seed
    mcgs = sum(results["mcgs"]) / 3
    for baseline in BASELINES:
        assert mcgs >= sum(results[baseline]) / 3, results
    # and on every seed, not only on average
    assert min(results["mcgs"]) >= max(max(results[b]) for b in ("rules", "greedy")), results


def test_mcgs_finds_at_least_what_the_rules_sweep_finds_on_every_kernel() -> None:
    graph = load_bundled_graph()
    for budget in (6, 12, 24):
        for kernel in KERNELS:
            rules = best_speedup(kernel, "rules", budget, 0, graph)
            for seed in (0, 1, 2):
                assert best_speedup(kernel, "mcgs", budget, seed, graph) >= rules, (kernel.name, budget, seed)


def test_the_proven_structural_technique_gets_every_variant_before_dominated_refinements() -> None:
    """On the GEMM: tiling's 4 variants (the 4th is best, beyond `max_variants`) come before any
    refinement of the naive code, which the priors bound below the tiled 4x (launch configuration
    gained at most ~1.26x on naive code in the distilled graph)."""
    kernel = KERNELS[0]
    evaluator = FakeEvaluator(kernel.speed)
    session = SearchRun.open(search_request("naive", "gemm", "mcgs", 12, 0),
                             KernelTarget(LaunchConfig(("1",), ("256",))),
                             SearchTools(evaluator, None, load_bundled_graph(), appliers=kernel.appliers()))
    MCGS(session, session.graph).run()
    order = [[line for line in c.source.splitlines() if line.startswith("// ")] for c in evaluator.seen]
    tiled = [i for i, lines in enumerate(order) if lines and lines[0].startswith("// shared_memory_tiling")]
    naive_refined = [i for i, lines in enumerate(order) if lines and not lines[0].startswith("// shared_memory_tiling")]
    assert [order[i][0] for i in tiled[:4]] == [f"// shared_memory_tiling v{i}" for i in range(4)]
    assert not naive_refined or min(naive_refined) > tiled[3]
    assert session.ledger.best is not None and session.ledger.best.evaluation.speedup == pytest.approx(6.0)
    assert all(is_structural(t) or t in {"launch_configuration", "loop_unrolling", "restrict_const"}
               for c in evaluator.seen for t in c.techniques)


def test_the_first_candidate_is_the_highest_prior_matching_structural_rewrite() -> None:
    """Two structural appliers match (tiling first in the applier order) and refinements too: the
    first candidate judged is the structural rewrite with the higher prior in the bundled graph
    (block_reduce_atomic's measured mean reward after START is far above tiling's)."""
    graph = load_bundled_graph()
    assert graph.prior_stats("__start__", "block_reduce_atomic").mean_reward > \
        graph.prior_stats("__start__", "shared_memory_tiling").mean_reward
    kernel = FakeKernel("two", {"shared_memory_tiling": (2.0,), "block_reduce_atomic": (3.0,)},
                        {"launch_configuration": ((1.2, 1.1, 1.0), (1.0, 1.0, 1.0))})
    evaluator = FakeEvaluator(kernel.speed)
    session = SearchRun.open(search_request("naive", "two", "mcgs", 6, 0),
                             KernelTarget(LaunchConfig(("1",), ("256",))),
                             SearchTools(evaluator, None, graph, appliers=kernel.appliers()))
    MCGS(session, graph).run()
    assert [c.techniques for c in evaluator.seen[:2]] == [("block_reduce_atomic",), ("shared_memory_tiling",)]


# A row normalisation as the H200 ablation measured it (rmsnorm): one block per row pays ~8x, its
# variants differ by a few percent; restrict and unrolling on top gain 0.2-5%, i.e. partly noise;
# block shapes only match the naive kernel (the launch applier leaves CUB kernels with shared
# memory alone), where they lose.
@dataclass(frozen=True)
class NaiveOnlyApplier(MarkerApplier):
    """A MarkerApplier that matches only code no structural rewrite produced."""

    structural: tuple[str, ...] = ()

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        if any(f"// {t} " in given.source for t in self.structural):
            return []
        return super().apply(given)


@dataclass(frozen=True)
class RowNorm(FakeKernel):
    def appliers(self) -> tuple[MarkerApplier, ...]:
        return tuple(NaiveOnlyApplier(a.technique, a.variants, structural=tuple(self.structural))
                     if a.technique == "launch_configuration" else a for a in super().appliers())


ROW_NORM = RowNorm("row_norm", {"block_per_row": (5.42, 8.01, 7.91)},
                   {"restrict_const": ((1.01,), (1.05,)), "loop_unrolling": ((1.0,), (1.004,)),
                    "fast_math": ((1.0,), (0.99,)), "launch_configuration": ((0.67, 0.33, 1.01), (1.0, 1.0, 1.0))})


def offered(kernel: FakeKernel, strategy: str, budget: int, seed: int, graph: ReasoningGraph) -> tuple[float, int]:
    """The answer the product offers (search/answer.py): its speedup and number of techniques."""
    session = SearchRun.open(search_request("naive", kernel.name, "mcgs", budget, seed),
                             KernelTarget(LaunchConfig(("1",), ("256",))),
                             SearchTools(FakeEvaluator(kernel.speed), None, graph, appliers=kernel.appliers()))
    RUNNERS[strategy](session, graph)
    answer = session.ledger.answer()
    return (answer.evaluation.speedup or 1.0, len(answer.candidate.techniques)) if answer is not None else (1.0, 0)


@pytest.mark.parametrize("budget", [6, 12, 24])
def test_under_the_answer_rule_mcgs_offers_at_least_every_baseline(budget: int) -> None:
    """What the user is offered, not the fastest measured: mcgs's geomean >= every baseline's at
    every budget, on every kernel >= rules' within the rule's noise floor (an answer may be up to
    1% slower than the fastest found, for fewer techniques)."""
    graph = load_bundled_graph()
    kernels = (*KERNELS, ROW_NORM)
    per_strategy = {s: [geomean([offered(k, s, budget, seed, graph)[0] for k in kernels]) for seed in (0, 1, 2)]
                    for s in ("mcgs", *BASELINES)}
    mcgs = sum(per_strategy["mcgs"]) / 3
    for baseline in BASELINES:
        assert mcgs >= sum(per_strategy[baseline]) / 3 * (1 - 0.01), per_strategy
    for kernel in kernels:
        rules = offered(kernel, "rules", budget, 0, graph)[0]
        for seed in (0, 1, 2):
            assert offered(kernel, "mcgs", budget, seed, graph)[0] >= rules * (1 - 0.01), (kernel.name, budget, seed)


def test_the_row_norm_answer_is_the_structural_step_with_a_measured_gain_only() -> None:
    """rmsnorm's case: the best block per row plus restrict (5% measured) is offered; a 0.4%
    unrolling on top is not (the ablation's rules answer had three of them)."""
    graph = load_bundled_graph()
    for strategy in ("mcgs", "rules"):
        speed, steps = offered(ROW_NORM, strategy, 24, 0, graph)
        assert steps == 2 and speed == pytest.approx(8.01 * 1.05), strategy
