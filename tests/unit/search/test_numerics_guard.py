"""The precision guard: what a verified path does to floating-point results travels with it
(the edit's title, its annotation, the card), and `allow_approximations` off (the editor's
`regrapht.allowFastMath`) keeps the approximating techniques out of every strategy."""

from __future__ import annotations

import pytest

from regrapht.app.messages import edit_title, path_description
from regrapht.search import KernelTarget, SearchOptions, SearchTools, optimize
from regrapht.search.ledger import StepRecord
from regrapht.search.pipeline import BestVersion, path_numerics
from regrapht.search.run import SearchRun, searchable
from regrapht.spec.launch import LaunchConfig
from regrapht.techniques import TECHNIQUES, numerics_of
from regrapht.validate.types import Candidate

from .fakes import FakeEvaluator, search_request

DOUBLE_MATH = """\
__global__ void soft(int n, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = 0.5 * x[i] * (1.0 + tanh(0.7978845608 * x[i]));
    }
}
"""
TARGET = KernelTarget(LaunchConfig(("(n + 255) / 256",), ("256",)))


def float_math_is_faster(candidate: Candidate) -> float | None:
    """2x once the double literals are float ones (what fast_math writes), 0.9 otherwise."""
    return 2.0 if "0.5f" in candidate.source else 0.9


def test_each_record_says_what_it_does_to_numerics() -> None:
    by_name = {t.name: t.numerics for t in TECHNIQUES}
    assert by_name["fast_math"] == "approximates"
    assert by_name["block_reduce_atomic"] == by_name["block_scan"] == "reorders"
    assert by_name["memory_coalescing"] == by_name["restrict_const"] == "exact"
    assert numerics_of(("restrict_const", "block_reduce_atomic", "fast_math")) == "approximates"
    assert numerics_of(("restrict_const", "warp_shuffle_reduction")) == "reorders"
    assert numerics_of(("a_technique_only_the_model_knows",)) == "exact"
    assert path_numerics(("block_reduce_atomic",), floating_outputs=False) == "exact"  # integer sums
    assert path_numerics(("block_reduce_atomic",), floating_outputs=True) == "reorders"


@pytest.mark.parametrize(("numerics", "title_end", "annotation_end"), [
    ("exact", "on H200, verified", "fast_math (2.00x)"),
    ("approximates", "; changes numerics (fast math)", "fast-math approximations (within the spec's tolerance)"),
    ("reorders", "; float sums reordered", "round differently, within the spec's tolerance)"),
])
def test_the_edit_says_what_the_version_does_to_numerics(numerics: str, title_end: str, annotation_end: str) -> None:
    best = BestVersion(1.0, 2.0, ("fast_math",), TARGET.launch, "", (StepRecord("fast_math", "", 2.0),),
                       numerics=numerics)  # type: ignore[arg-type]
    assert edit_title("soft", 2.0, "H200", best.numerics).endswith(title_end)
    assert path_description(best).endswith(annotation_end)


@pytest.mark.parametrize("strategy", ["rules", "mcgs", "greedy"])
def test_fast_math_is_found_and_said_when_allowed_and_never_tried_when_not(strategy: str) -> None:
    allowed = FakeEvaluator(float_math_is_faster)
    result = optimize(search_request(DOUBLE_MATH, "soft", strategy, 48), TARGET, SearchTools(allowed))
    assert result.best is not None and "fast_math" in result.best.techniques
    assert result.best.numerics == "approximates" and result.to_json()["best"]["numerics"] == "approximates"

    refused = FakeEvaluator(float_math_is_faster)
    options = SearchOptions(allow_approximations=False)
    result = optimize(search_request(DOUBLE_MATH, "soft", strategy, 48, options=options), TARGET, SearchTools(refused))
    assert refused.seen  # the search ran (other techniques were judged)
    assert not any("fast_math" in c.techniques or "0.5f" in c.source for c in refused.seen)
    assert result.best is None or "fast_math" not in result.best.techniques


def test_a_left_out_technique_is_refused_with_the_reason() -> None:
    options = SearchOptions(allow_approximations=False)
    assert not searchable("fast_math", options) and searchable("block_reduce_atomic", options)
    assert searchable("fast_math", SearchOptions()) and searchable("the_models_own", options)
    session = SearchRun.open(search_request(DOUBLE_MATH, "soft", "greedy", 6, options=options), TARGET,
                             SearchTools(FakeEvaluator(float_math_is_faster)))
    step = session.apply_technique(session.original, "start", "fast_math")
    assert step.state is None and "allowFastMath is off" in step.note
    assert all(a.technique != "fast_math" for a in session.applier_cache.appliers)
