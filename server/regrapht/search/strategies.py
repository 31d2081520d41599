"""The search strategies: MCGS (mcgs.py) and the baselines it is compared against.

- `random`: random walks on the graph from START, same budget, stopping at a failed step.
- `greedy`: walks that always take the best-known successor (this run's mean reward where
  tried, else the graph's statistics; ties to a matching applier), preferring a continuation not
  yet tried.
- `cot`: the model alone, no graph: "think step by step and optimize", from the best so far.
- `rules`: the deterministic appliers only, in their fixed order, keeping each verified gain.
"""

from __future__ import annotations

from collections.abc import Callable

from regrapht.graph import START, ReasoningGraph
from regrapht.search.ledger import FAILED
from regrapht.search.mcgs import MCGS, GraphWalker, rules_sweep
from regrapht.search.options import STALE_ROUNDS, round_cap
from regrapht.search.run import SearchRun
from regrapht.validate.types import Candidate


def run_mcgs(session: SearchRun, graph: ReasoningGraph | None) -> None:
    MCGS(session, graph).run()


# How a walk picks its next technique: (walker, vertex, code state, techniques so far, successors) -> one.
Pick = Callable[[GraphWalker, str, Candidate, tuple[str, ...], list[str]], str]


def _walks(session: SearchRun, graph: ReasoningGraph | None, pick: Pick, *, record_edges: bool) -> None:
    """Walks from START, each stopping at a failed step, until the budget is spent, STALE_ROUNDS walks
    in a row evaluate nothing new, or round_cap(budget) walks have run. With `record_edges` each step's
    reward is recorded on its edge (what `greedy` then reads through `edge_q`)."""
    walker = GraphWalker(session, graph)

    def walk() -> None:
        vertex, state = START, session.original
        techniques: tuple[str, ...] = ()
        for _ in range(session.options.max_depth):
            choices = walker.successors(vertex, state)
            if not choices or session.exhausted():
                return
            technique = pick(walker, vertex, state, techniques, choices)
            result = walker.step(techniques, vertex, technique, state)
            if record_edges:
                walker.record_edge(vertex, technique, result.reward)
            if result.state is None or result.reward <= FAILED:
                return
            vertex, state, techniques = technique, result.state, (*techniques, technique)

    stale = 0
    rounds = 0
    while not session.exhausted() and stale < STALE_ROUNDS and rounds < round_cap(session.ledger.budget):
        before = session.ledger.evaluated
        walk()
        rounds += 1
        stale = stale + 1 if session.ledger.evaluated == before else 0


def run_random(session: SearchRun, graph: ReasoningGraph | None) -> None:
    def pick(walker: GraphWalker, vertex: str, state: Candidate, techniques: tuple[str, ...],
             choices: list[str]) -> str:
        return session.rng.choice(choices)

    _walks(session, graph, pick, record_edges=False)


def run_greedy(session: SearchRun, graph: ReasoningGraph | None) -> None:
    def pick(walker: GraphWalker, vertex: str, state: Candidate, techniques: tuple[str, ...],
             choices: list[str]) -> str:
        untried = [a for a in choices if (*techniques, a) not in walker.paths]
        pool = untried or choices
        return max(pool, key=lambda a: (walker.edge_q(vertex, a), *walker.promise(vertex, state, a)))

    _walks(session, graph, pick, record_edges=True)


def run_cot(session: SearchRun, graph: ReasoningGraph | None) -> None:
    if session.model_policy.model is None:
        return
    state = session.original
    stale = 0
    # model_usable: within the search's model time budget (`model_time_budget_s`), and not
    # remembered failing at this kernel (the model failure memory)
    while not session.exhausted() and stale < STALE_ROUNDS and session.model_policy.usable("cot"):
        before = session.ledger.evaluated
        result = session.cot_rewrite(state)
        stale = stale + 1 if session.ledger.evaluated == before else 0
        if result is None:
            continue
        if session.ledger.best is not None and result.candidate == session.ledger.best.candidate:
            state = result.candidate  # build on the fastest verified version


def run_rules(session: SearchRun, graph: ReasoningGraph | None) -> None:
    rules_sweep(session, session.original, 1.0)


RUNNERS: dict[str, Callable[[SearchRun, ReasoningGraph | None], None]] = {
    "mcgs": run_mcgs,
    "random": run_random,
    "greedy": run_greedy,
    "cot": run_cot,
    "rules": run_rules,
}
