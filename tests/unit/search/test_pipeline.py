"""The optimize pipeline with a fake evaluator: the contract's JSON shape, the "best" rule,
every strategy, the no-device answer, progress and cancellation, overlay statistics."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from regrapht.errors import InputError
from regrapht.graph import START, ReasoningGraph
from regrapht.graph.types import Example
from regrapht.model.scripted import ScriptedModel
from regrapht.search import (
    STRATEGIES,
    KernelTarget,
    Progress,
    SearchHooks,
    SearchOptions,
    SearchTools,
    optimize,
)
from regrapht.search.mcgs import MCGS
from regrapht.search.run import SearchRun
from regrapht.spec.launch import LaunchConfig
from regrapht.text import apply_edits
from regrapht.validate.types import Candidate

from .fakes import FakeEvaluator, search_request

ROOT = Path(__file__).resolve().parents[3]
SAXPY = (ROOT / "examples/saxpy.cu").read_text()
TARGET = KernelTarget(LaunchConfig(("(n + 99) / 100",), ("100",)))
CONTRACT_KEYS = {"kernel", "gpu", "arch", "strategy", "budget", "baseline", "best", "candidates", "tokens",
                 "wall_s", "reason"}


def vectorized(candidate: Candidate) -> bool:
    """Whether the code moves 16-byte vectors (float4, or VectorizedMap's aligned structs)."""
    return "float4" in candidate.source or "__align__(4 * sizeof(" in candidate.source


def speed_by_text(candidate: Candidate) -> float | None:
    """vector code 3x, a 256-thread block 1.2x, __restrict__ 1.1x (multiplied); 'WRONG' is wrong."""
    if "WRONG" in candidate.source:
        return None
    speed = 1.0
    if vectorized(candidate):
        speed *= 3.0
    if candidate.launch.block == ("256",):
        speed *= 1.2
    if "__restrict__" in candidate.source:
        speed *= 1.1
    return speed if speed != 1.0 else 0.9


def graph() -> ReasoningGraph:
    g = ReasoningGraph()
    for u, v in [(START, "launch_configuration"), (START, "restrict_const"), ("restrict_const", "vectorized_access"),
                 ("launch_configuration", "restrict_const"), ("vectorized_access", "launch_configuration")]:
        for name in (u, v):
            if name != START:
                g.add_technique(name, f"{name} description")
        g.add_example(u, v, Example("k", "because", "", "before", "after", 1.5))
    return g


MODEL_ANSWER = "```cuda\n__global__ void saxpy(int n, float a, float *x, float *y)\n{\n    /* WRONG */\n}\n```"


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_returns_the_contract(strategy: str) -> None:
    model = ScriptedModel([MODEL_ANSWER] * 40)
    result = optimize(search_request(SAXPY, "saxpy", strategy, 12, 1), TARGET,
                      SearchTools(FakeEvaluator(speed_by_text), model, graph()))
    data = result.to_json()
    assert set(data) >= CONTRACT_KEYS
    assert data["strategy"] == strategy and data["budget"] == 12 and data["gpu"] == "Fake GPU"
    assert data["baseline"] == {"time_ms": 1.0}
    assert set(data["candidates"]) == {"generated", "compiled", "correct", "faster"}  # type: ignore[arg-type]
    assert data["candidates"]["generated"] <= 12  # type: ignore[index]
    assert set(data["tokens"]) == {"prompt", "completion"}  # type: ignore[arg-type]
    assert data["model_device"] == "cpu"
    best = data["best"]
    if strategy == "cot":
        assert best is None  # the scripted model's answers are all wrong
        assert data["tokens"]["prompt"] > 0  # type: ignore[index]
    else:
        assert isinstance(best, dict)
        assert best["verified"] is True and best["speedup"] > 1.0
        assert set(best) >= {"time_ms", "speedup", "verified", "techniques", "launch", "source"}
        assert set(best["launch"]) == {"grid", "block", "shared_bytes"}
        assert "WRONG" not in best["source"]


def test_mcgs_chains_techniques_to_the_fastest_verified() -> None:
    result = optimize(search_request(SAXPY, "saxpy", "mcgs", 30, 0), TARGET,
                      SearchTools(FakeEvaluator(speed_by_text), None, graph()))
    assert result.best is not None
    assert result.best.speedup == pytest.approx(3.0 * 1.2 * 1.1)
    # the 256-thread block comes with a vectorized variant or from the launch configuration
    assert {"vectorized_access", "restrict_const"} <= set(result.best.techniques)
    assert [s.technique for s in result.best.steps] == list(result.best.techniques)
    assert result.best.steps[-1].speedup == pytest.approx(result.best.speedup)


def test_rules_keeps_each_verified_improvement() -> None:
    result = optimize(search_request(SAXPY, "saxpy", "rules", 40), TARGET,
                      SearchTools(FakeEvaluator(speed_by_text)))
    assert result.best is not None and result.best.speedup == pytest.approx(3.0 * 1.2 * 1.1)


def test_no_device_gives_no_best_and_says_why() -> None:
    evaluator = FakeEvaluator(speed_by_text, gpu_name=None)
    result = optimize(search_request(SAXPY, "saxpy", "mcgs", 6), TARGET, SearchTools(evaluator, None, graph()))
    data = result.to_json()
    assert data["best"] is None and data["gpu"] is None
    assert "no CUDA device" in str(data["reason"])
    assert data["candidates"]["compiled"] == len(evaluator.seen) > 0  # type: ignore[index]


def test_never_offers_a_slower_or_wrong_candidate() -> None:
    result = optimize(search_request(SAXPY, "saxpy", "mcgs", 20), TARGET,
                      SearchTools(FakeEvaluator(lambda c: None if vectorized(c) else 0.8), None, graph()))
    assert result.best is None and "no verified candidate was faster" in result.reason


def test_progress_names_stages_and_cancel_stops_between_steps() -> None:
    seen: list[Progress] = []
    calls = {"n": 0}

    def cancel() -> bool:
        calls["n"] += 1
        return len(seen) > 6

    result = optimize(search_request(SAXPY, "saxpy", "mcgs", 30, 0,
                                     options=SearchOptions(model_after_applier_gain=True)),
                      TARGET,
                      SearchTools(FakeEvaluator(speed_by_text), ScriptedModel([MODEL_ANSWER] * 40), graph()),
                      SearchHooks(cancel=cancel, progress=seen.append))
    stages = {p.stage for p in seen}
    assert {"generating", "compiling"} <= stages and ("timing" in stages or "checking" in stages)
    assert result.cancelled and result.counters.generated < 30
    assert any(p.best_speedup for p in seen[1:]) or result.best is None


def test_verified_outcomes_go_to_the_overlay_only() -> None:
    g = graph()
    optimize(search_request(SAXPY, "saxpy", "mcgs", 10), TARGET,
             SearchTools(FakeEvaluator(speed_by_text), None, g))
    assert len(g.overlay) > 0
    assert all(stats.visits == 0 for _, _, stats in ((u, v, g.prior_stats(u, v)) for u, v in g.edges()))


def test_bad_input() -> None:
    with pytest.raises(InputError):
        optimize(search_request(SAXPY, "nope", "rules", 4), TARGET, SearchTools(FakeEvaluator(speed_by_text)))
    with pytest.raises(InputError):
        optimize(search_request(SAXPY, "saxpy", "magic", 4), TARGET, SearchTools(FakeEvaluator(speed_by_text)))


def test_model_prompt_carries_the_edge_example() -> None:
    model = ScriptedModel([MODEL_ANSWER] * 40)
    optimize(search_request(SAXPY, "saxpy", "mcgs", 6, 0, options=SearchOptions(model_after_applier_gain=True)),
             TARGET, SearchTools(FakeEvaluator(speed_by_text), model, graph()))
    user = model.prompts[0][1].content
    assert "Example of this technique" in user and "because" in user
    assert re.search(r"__global__ void saxpy", user)


def test_the_model_is_asked_only_where_no_applier_rewrite_is_waiting() -> None:
    """The model writes only techniques no applier can do, once the applier rewrites of the code
    state it would start from have been judged (an answer takes seconds and seldom wins); with
    model_after_applier_gain it is asked in applier steps that did not gain, too."""
    def run(options: SearchOptions, budget: int) -> tuple[FakeEvaluator, ScriptedModel]:
        g = graph()
        g.add_technique("divergence_reduction", "no applier does this")
        g.add_example(START, "divergence_reduction", Example("k", "because", "", "before", "after", 1.5))
        evaluator = FakeEvaluator(speed_by_text)
        model = ScriptedModel(["    /* WRONG */\n}\n```"] * 40)
        optimize(search_request(SAXPY, "saxpy", "mcgs", budget, 0, options=options), TARGET,
                 SearchTools(evaluator, model, g))
        return evaluator, model

    evaluator, model = run(SearchOptions(), 30)
    asked = [i for i, c in enumerate(evaluator.seen) if "WRONG" in c.source]
    applier_steps = {c.techniques for c in evaluator.seen if "WRONG" not in c.source}
    assert asked and not any(evaluator.seen[i].techniques in applier_steps for i in asked)
    # the structural rewrite of the original came first
    assert evaluator.seen[0].techniques == ("vectorized_access",) and asked[0] > 0
    evaluator, _ = run(SearchOptions(model_after_applier_gain=True), 8)
    assert any("WRONG" in c.source and c.techniques[-1] != "divergence_reduction" for c in evaluator.seen)


def test_the_model_is_not_asked_again_after_failing_on_this_kernel() -> None:
    g = graph()
    for name in ("divergence_reduction", "instruction_level_parallelism", "memory_coalescing"):
        g.add_technique(name, f"{name}: no applier does this")
        g.add_example(START, name, Example("k", "because", "", "before", "after", 1.5))
    model = ScriptedModel(["    /* WRONG */\n}\n```"] * 40)
    result = optimize(search_request(SAXPY, "saxpy", "mcgs", 40, 0, options=SearchOptions(model_choice=False)),
                      TARGET, SearchTools(FakeEvaluator(speed_by_text), model, g))
    rewrite = result.model_use["rewrite"]
    assert rewrite.calls == 2 and rewrite.correct == 0 and rewrite.gave_up
    shown = dict(result.to_json()["model_calls"]["rewrite"])  # type: ignore[index]
    assert shown.pop("seconds") == pytest.approx(rewrite.seconds, abs=1e-3)
    assert shown == {"calls": 2, "answered": 2, "compiled": 2, "correct": 0, "faster": 0, "failed": 0, "gave_up": True,
                     "skipped": None}


def test_the_model_picks_among_model_only_techniques_under_a_grammar() -> None:
    g = ReasoningGraph()
    for name in ("divergence_reduction", "instruction_level_parallelism"):
        g.add_technique(name, f"{name}: no applier does this")
        g.add_example(START, name, Example("k", "because", "", "before", "after", 1.5))
    # a choice, then the rewrite of the chosen technique (correct here: the original body)
    body = "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = a * x[i] + y[i];\n}\n```"
    model = ScriptedModel(["instruction_level_parallelism", body] * 20)
    session = SearchRun.open(search_request(SAXPY, "saxpy", "mcgs", 1, 0), KernelTarget(TARGET.launch),
                             SearchTools(FakeEvaluator(speed_by_text), model, g, appliers=()))
    MCGS(session, g).run()
    choice, rewrite = model.calls
    assert choice.grammar == 'root ::= "divergence_reduction" | "instruction_level_parallelism"\n'
    assert "divergence_reduction: no applier does this" in choice.messages[1].content
    assert "instruction_level_parallelism" in rewrite.messages[1].content and rewrite.grammar is None
    use = session.model_policy.use["choose"]
    assert (use.calls, use.answered, use.correct, use.faster) == (1, 1, 1, 0)  # correct, not faster


def test_technique_rewrites_continue_the_kernel_header_and_cot_thinks_first() -> None:
    model = ScriptedModel(["    /* WRONG */\n}\n```"] * 40)
    optimize(search_request(SAXPY, "saxpy", "mcgs", 10, 0,
                            options=SearchOptions(model_after_applier_gain=True)),
             TARGET, SearchTools(FakeEvaluator(speed_by_text), model, graph()))
    assert model.calls and all(c.prefill.startswith("```cuda\n__global__ void saxpy(") and c.prefill.endswith("{\n    ")
                               for c in model.calls)
    cot = ScriptedModel([MODEL_ANSWER] * 40)
    optimize(search_request(SAXPY, "saxpy", "cot", 3), TARGET, SearchTools(FakeEvaluator(speed_by_text), cot))
    assert cot.calls and all(c.prefill == "" for c in cot.calls)
    plain = ScriptedModel([MODEL_ANSWER] * 40)
    optimize(search_request(SAXPY, "saxpy", "mcgs", 10, 0,
                            options=SearchOptions(model_after_applier_gain=True, prefill_header=False)),
             TARGET, SearchTools(FakeEvaluator(speed_by_text), plain, graph()))
    assert plain.calls and all(c.prefill == "" for c in plain.calls)


def test_a_time_limit_stops_the_search_and_keeps_the_best_so_far() -> None:
    ticks = iter(range(10_000))
    result = optimize(search_request(SAXPY, "saxpy", "mcgs", 40, 0, time_limit_s=6), TARGET,
                      SearchTools(FakeEvaluator(speed_by_text), None, graph()),
                      SearchHooks(clock=lambda: float(next(ticks))))
    data = result.to_json()
    assert data["time_limited"] is True and data["cancelled"] is False
    assert 0 < result.counters.generated < 40
    assert result.best is not None  # the first structural rewrite came before the limit
    unlimited = optimize(search_request(SAXPY, "saxpy", "mcgs", 4), TARGET,
                         SearchTools(FakeEvaluator(speed_by_text), None, graph()))
    assert unlimited.to_json()["time_limited"] is False
    with pytest.raises(InputError):
        optimize(search_request(SAXPY, "saxpy", "rules", 4, 0, time_limit_s=0), TARGET,
                 SearchTools(FakeEvaluator(speed_by_text)))


def test_progress_reports_each_new_best_the_moment_it_is_measured() -> None:
    seen: list[Progress] = []
    ticks = iter(range(10_000))
    result = optimize(search_request(SAXPY, "saxpy", "mcgs", 12, 0), TARGET,
                      SearchTools(FakeEvaluator(speed_by_text), None, graph()),
                      SearchHooks(progress=seen.append, clock=lambda: float(next(ticks))))
    found = [i for i, p in enumerate(seen) if p.stage == "found"]
    assert found and seen[found[0]].message.startswith("verified ") and "x faster: " in seen[found[0]].message
    # the report comes with the evaluation that made it: the budget count has not moved on
    first_faster = next(p for p in seen if p.best_speedup)
    assert seen[found[0]].evaluated == first_faster.evaluated
    speeds = [seen[i].best_speedup for i in found]
    assert speeds == sorted(speeds) and len(set(speeds)) == len(speeds)  # once per new best
    assert result.first_faster_s is not None and result.to_json()["first_faster_s"] == result.first_faster_s


def test_an_applier_best_version_carries_the_edits_of_its_path() -> None:
    """Every step of the rules sweep is an applier's rewrite: the best version brings the edits of
    the searched text that give it, composed along its path, for the editor to apply."""
    result = optimize(search_request(SAXPY, "saxpy", "rules", 40, 0), TARGET, SearchTools(FakeEvaluator(speed_by_text)))
    assert result.best is not None and len(result.best.techniques) >= 2
    assert result.best.edits is not None and result.best.edits
    assert apply_edits(SAXPY, result.best.edits) == result.best.source
