"""Answer selection: the simplest verified candidate within the timing noise of the fastest, the
one rule every strategy's answer goes through."""

from __future__ import annotations

import pytest

from regrapht.search import SearchHooks, SearchTools, optimize
from regrapht.search.answer import NOISE_FLOOR, choose_answer, noise_band, within_noise
from regrapht.search.ledger import Judged
from regrapht.spec.launch import LaunchConfig
from regrapht.validate.types import Candidate, Evaluation, Timing

from .fakes import FakeEvaluator, search_request
from .test_pipeline import SAXPY, TARGET, graph, vectorized

LAUNCH = LaunchConfig(("1",), ("256",))


def steady(ms: float, runs: int = 200, spread: float = 0.002) -> Timing:
    return Timing(ms, ms * (1 - spread), ms * (1 + spread), runs)


def judged(techniques: tuple[str, ...], timing: Timing, baseline_ms: float = 0.32) -> Judged:
    evaluation = Evaluation("faster", "", timing, baseline_ms / timing.median_ms)
    return Judged(Candidate("/* " + "+".join(techniques) + " */", LAUNCH, techniques), evaluation,
                  evaluation.speedup or 0.0, "")


def test_the_band_has_a_floor_and_widens_with_the_measured_spread() -> None:
    assert noise_band(steady(1.0), steady(1.0)) == NOISE_FLOOR == 0.01
    noisy = Timing(1.0, 0.7, 1.3, 20)  # +-30% run to run, 20 runs
    assert noise_band(noisy, noisy) > 0.05
    assert noise_band(steady(1.0, runs=200, spread=0.1), steady(1.0, runs=200, spread=0.1)) < noise_band(
        steady(1.0, runs=20, spread=0.1), steady(1.0, runs=20, spread=0.1))
    assert within_noise(steady(1.0), steady(1.009)) and not within_noise(steady(1.0), steady(1.02))


def test_rmsnorm_three_unrolls_are_not_an_answer_over_one() -> None:
    # the H200 ablation: block_per_row+restrict+unroll x3 at 0.03968 ms, with one unroll 0.03977 ms
    one = judged(("block_per_row", "restrict_const", "loop_unrolling"), steady(0.03977))
    three = judged(("block_per_row", "restrict_const", "loop_unrolling", "loop_unrolling", "loop_unrolling"),
                   steady(0.03968))
    plain = judged(("block_per_row",), steady(0.0400))  # 0.8% slower than the fastest: also within 1%
    slower = judged(("block_per_row",), steady(0.0416))  # 4.8% slower: a measured difference
    assert choose_answer([three, one]) is one
    assert choose_answer([three, one, plain]) is plain
    assert choose_answer([three, one, slower]) is one
    assert choose_answer([]) is None
    # equally simple: the fastest
    assert choose_answer([judged(("a",), steady(1.005)), judged(("b",), steady(1.0))]).candidate.techniques == ("b",)


def test_a_noisy_fastest_measurement_lets_a_simpler_one_win_within_its_noise() -> None:
    fast_noisy = judged(("a", "b"), Timing(1.0, 0.8, 1.2, 20))
    simpler = judged(("a",), steady(1.04))
    assert choose_answer([fast_noisy, simpler]) is simpler
    assert choose_answer([judged(("a", "b"), steady(1.0)), simpler]).candidate.techniques == ("a", "b")


def nearly_free_restrict(candidate: Candidate) -> float | None:
    """Vector code 3x; __restrict__ a further 0.3% (noise); anything else as slow as before."""
    speed = 3.0 if vectorized(candidate) else 0.9
    return speed * 1.003 if "__restrict__" in candidate.source and speed > 1 else speed


@pytest.mark.parametrize("strategy", ["mcgs", "greedy", "random", "rules"])
def test_every_strategy_offers_the_simplest_answer_within_the_noise(strategy: str) -> None:
    evaluator = FakeEvaluator(nearly_free_restrict)
    result = optimize(search_request(SAXPY, "saxpy", strategy, 24, 0), TARGET,
                      SearchTools(evaluator, None, graph()))
    assert result.best is not None
    assert result.best.techniques == ("vectorized_access",), result.best.techniques
    assert result.best.speedup == pytest.approx(3.0)
    assert [s.technique for s in result.best.steps] == ["vectorized_access"]
    assert result.best.steps[-1].speedup == pytest.approx(3.0)
    # the fastest (with __restrict__, 0.3% faster) was measured, and is not the answer
    assert strategy not in ("mcgs", "rules") or any(vectorized(c) and "__restrict__" in c.source for c in evaluator.seen)


def test_progress_shows_the_answer_the_rule_offers_now() -> None:
    from regrapht.search import Progress

    seen: list[Progress] = []
    result = optimize(search_request(SAXPY, "saxpy", "rules", 24, 0), TARGET,
                      SearchTools(FakeEvaluator(nearly_free_restrict), None, graph()),
                      SearchHooks(progress=seen.append))
    found = [p for p in seen if p.stage == "found"]
    assert found and result.best is not None
    # the 0.3%-faster version with __restrict__ never replaces the offered one in the progress
    assert all("restrict_const" not in p.message for p in found if "vectorized_access" in p.message)
    assert seen[-1].best_speedup == pytest.approx(result.best.speedup)
