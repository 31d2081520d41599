"""MCGS bookkeeping against hand-computed small cases (see the comments for the arithmetic)."""

from __future__ import annotations

import math

import pytest

from regrapht.graph import START, ReasoningGraph
from regrapht.graph.types import EdgeStats, Example
from regrapht.model.scripted import ScriptedModel
from regrapht.search.mcgs import MCGS
from regrapht.search.options import SearchOptions
from regrapht.search.request import KernelTarget
from regrapht.search.run import SearchTools
from regrapht.search.strategies import run_greedy
from regrapht.spec.launch import LaunchConfig

from .fakes import FakeEvaluator, ScriptedSteps, search_request

LAUNCH = LaunchConfig(("(n + 255) / 256",), ("256",))


def graph_of(*edges: tuple[str, str]) -> ReasoningGraph:
    graph = ReasoningGraph()
    for u, v in edges:
        for name in (u, v):
            if name != START:
                graph.add_technique(name)
        graph.add_example(u, v, Example("k", "why", "", "before", "after"))
    return graph


def session(budget: int, rewards: dict[str, float], **options: object) -> ScriptedSteps:
    opts = SearchOptions(epsilon=0.0, step_cap=1, applier_edges=False, **options)  # type: ignore[arg-type]
    steps = ScriptedSteps.open(search_request("src", "k", "mcgs", budget, 0, options=opts), KernelTarget(LAUNCH),
                               SearchTools(FakeEvaluator(lambda c: 1.0), ScriptedModel.of()))
    steps.rewards = rewards
    return steps


def test_selection_expansion_rollout_and_backpropagation_of_the_max() -> None:
    graph = graph_of((START, "a"), (START, "b"), ("a", "c"))
    s = session(3, {"a": 2.0, "b": -1.0, "c": 3.0})
    search = MCGS(s, graph)
    # 1: START expanded to [a, b]; rollout from START takes a (both priors 0, first wins): R = 2.
    assert search.iteration() == 2.0
    assert search.expanded[START] == ["a", "b"]
    assert search.visits == {START: 1} and search.value[START] == 2.0
    # 2: a and b not yet selected: both score the first-play value 0 + sqrt(2 ln 1) = 0; tie by
    #    the graph's order -> a (cached step, reward 2); a expanded to [c]; rollout applies c (3).
    #    R = max(2, 3) = 3, backed up to START and a (vertices) and START -> a (the edge).
    assert search.ucb(START, "a") == search.ucb(START, "b") == 0.0
    assert search.iteration() == 3.0
    assert search.visits == {START: 2, "a": 1}
    assert search.value[START] == pytest.approx(2.5) and search.value["a"] == 3.0
    assert search.edge_visits == {(START, "a"): 1, ("a", "c"): 1}
    assert search.selected_visits == {(START, "a"): 1} and search.selected_value[(START, "a")] == 3.0
    # 3: P-UCB(a) = 3 + sqrt(2 ln 2 / 1) > P-UCB(b) = 0 + sqrt(2 ln 2) (first play) -> a, then c
    #    (both cached): nothing new is judged, R = 3.
    assert search.ucb(START, "a") == pytest.approx(3 + math.sqrt(2 * math.log(2)))
    assert search.ucb(START, "b") == pytest.approx(math.sqrt(2 * math.log(2)))
    assert search.iteration() == 3.0
    assert s.ledger.evaluated == 2
    assert s.applied == [("a",), ("a", "c")]


def test_a_branch_that_judges_nothing_new_is_closed_and_the_budget_goes_elsewhere() -> None:
    graph = graph_of((START, "a"), (START, "b"), ("a", "c"))
    s = session(3, {"a": 2.0, "b": -1.0, "c": 3.0})
    search = MCGS(s, graph)
    search.run()
    assert s.ledger.evaluated == 3
    assert s.applied == [("a",), ("a", "c"), ("b",)]
    assert ("a", "c") in search.closed


def test_run_stops_at_the_budget_and_reuses_cached_paths() -> None:
    graph = graph_of((START, "a"), (START, "b"), ("a", "c"))
    s = session(3, {"a": 2.0, "b": -1.0, "c": 3.0})
    search = MCGS(s, graph)
    search.run()
    assert s.ledger.evaluated == 3
    # every path was applied once: re-selecting a path costs no budget
    assert len(s.applied) == len(set(s.applied))


def test_rollout_policy_visit_penalty() -> None:
    graph = graph_of((START, "a"), (START, "b"))
    graph.set_prior_stats(START, "b", EdgeStats(visits=1, mean_reward=0.5))
    # (steps 1.5x faster than the code they rewrite: a step tried that did not gain is not
    # offered again by the rollout, `MCGS.spent`)
    s = session(10, {"a": 1.5, "b": 1.5}, visit_penalty=0.5)
    search = MCGS(s, graph)
    search.edge_visits[(START, "a")] = 2
    search.edge_value[(START, "a")] = 1.0
    # Q - lambda N: a = 1.0 - 0.5 * 2 = 0.0 ; b untried = 0 (neutral); tie -> b's prior 0.5 > a's 0
    rewards = search.rollout([START], s.original)
    assert s.applied == [("b",)] and rewards == [1.5]
    # now b: Q = 1.5 (mean of one visit), N = 1 -> 1.0 ; a still 0.0 -> b again
    search.rollout([START], s.original)
    assert s.applied[-1] == ("b",)


def test_rollout_stops_at_the_first_failed_step_and_caps_steps() -> None:
    graph = graph_of((START, "a"), ("a", "b"), ("b", "c"))
    s = session(10, {"a": 1.5, "b": -1.0, "c": 4.0}, )
    s.options = SearchOptions(epsilon=0.0, step_cap=5, applier_edges=False)
    search = MCGS(s, graph)
    assert search.rollout([START], s.original) == [1.5, -1.0]
    s2 = session(10, {"a": 1.5, "b": 1.2, "c": 4.0})
    s2.options = SearchOptions(epsilon=0.0, step_cap=2, applier_edges=False)
    assert MCGS(s2, graph).rollout([START], s2.original) == [1.5, 1.2]


def test_epsilon_one_is_uniform_random_choice() -> None:
    graph = graph_of((START, "a"), (START, "b"), (START, "c"))
    s = session(200, {"a": 1.5, "b": 1.5, "c": 1.5})
    s.options = SearchOptions(epsilon=1.0, step_cap=1, applier_edges=False)
    search = MCGS(s, graph)
    for _ in range(90):
        search.rollout([START], s.original)
    counts = {t: search.edge_visits[(START, t)] for t in "abc"}
    assert all(15 < n < 50 for n in counts.values()), counts


@pytest.mark.parametrize("strategy", ["mcgs", "greedy"])
def test_ties_go_to_a_matching_applier_then_to_the_prior(strategy: str) -> None:
    graph = graph_of((START, "a"), (START, "b"), (START, "c"), (START, "d"), (START, "e"))
    # d: another kernel's 500x (no applier matches here); b: a modest measured prior
    graph.record_outcome(START, "d", 500.0, 500.0, "sm_90")
    graph.record_outcome(START, "b", 0.5, 1.5, "sm_90")
    s = session(5, {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 1.0})
    s.matching = ["c", "b"]  # c's applier comes first in APPLIERS
    if strategy == "mcgs":
        MCGS(s, graph).run()
    else:
        run_greedy(s, graph)
    # matching appliers first (b by its prior before c), then d by its prior, then graph order
    assert s.applied == [("b",), ("c",), ("d",), ("a",), ("e",)]


def test_a_prior_from_other_kernels_does_not_outrank_a_tried_gain_in_the_rollout() -> None:
    graph = graph_of((START, "a"), (START, "d"))
    graph.record_outcome(START, "d", 500.0, 500.0, "sm_90")
    s = session(10, {"a": 2.0, "d": -1.0}, visit_penalty=0.5)
    search = MCGS(s, graph)
    search.edge_visits[(START, "a")] = 1
    search.edge_value[(START, "a")] = 2.0
    # a: Q 2.0 - 0.5 * 1 = 1.5 (this kernel's gain) > d untried: 0, whatever its prior
    search.rollout([START], s.original)
    assert s.applied == [("a",)]
