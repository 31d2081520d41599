"""Monte Carlo Graph Search over the reasoning graph, as published (ReGraphT, arXiv 2510.19873).

- Selection walks the expanded subgraph from START by P-UCB(s) = Q(s) + sqrt(2 ln N(parent) / N(s))
  (an unvisited vertex first), never revisiting a vertex on the same path. Ties (unvisited
  vertices, equal rollout scores) go to a technique whose deterministic applier matches the code,
  then to the graph's prior (see `GraphWalker.promise`).
- Expansion adds all graph successors of the selected vertex on its first visit.
- Rollout picks the next technique by argmax_a [Q(s,a) - lambda N(s,a)] with probability
  1 - epsilon, uniformly at random otherwise, up to a step cap, stopping at the first failed step.
- Each step applies a technique to the current code (session.apply_technique); the rollout's
  reward is the maximum step reward along the whole path, back-propagated to every vertex on the
  selected path.

Statistics are per vertex (graph search: a technique reached by two paths shares them); the code
a technique path produced is cached per path, so re-selecting a path costs no budget.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from regrapht.graph import START, ReasoningGraph
from regrapht.search.session import FAILED, Session, StepResult
from regrapht.validate.types import Candidate


@dataclass
class GraphWalker:
    """What every graph strategy shares: successors, priors, per-edge statistics, the path cache."""

    session: Session
    graph: ReasoningGraph | None
    edge_visits: dict[tuple[str, str], int] = field(default_factory=dict)
    edge_value: dict[tuple[str, str], float] = field(default_factory=dict)
    paths: dict[tuple[str, ...], StepResult] = field(default_factory=dict)

    def successors(self, vertex: str, state: Candidate) -> list[str]:
        found = [v for v in (self.graph.successors(vertex) if self.graph is not None else []) if v != START]
        appliers = self.session.applicable(state)
        if self.session.options.applier_edges:
            found += [a.technique for a in appliers if a.technique not in found]
        if self.session.model is None or not self.session.options.use_model:
            # Without a model a technique with no applier rewrite is a certain failure.
            names = {name for a in appliers for name in (a.technique, *a.also)}
            found = [t for t in found if t in names]
        return found

    def applier_rank(self, state: Candidate, technique: str) -> int:
        """Higher for a technique whose applier matches `state` earlier in APPLIERS (pattern
        rewrites come first there); 0 when none matches. Breaks ties between equal scores: an
        applier rewrite is cheap, safe and, on a pattern it recognises, usually the big gain."""
        appliers = self.session.applicable(state)
        for position, applier in enumerate(appliers):
            if technique == applier.technique:
                return len(appliers) - position
        return 0

    def promise(self, vertex: str, state: Candidate, technique: str) -> tuple[bool, float, int]:
        """How a technique not yet tried here ranks against the others (higher first): one whose
        deterministic applier matches `state` (evidence about this kernel), then the graph's prior
        (a mean reward over other kernels, which one 500x histogram can dominate), then the
        applier order. docs/search.md has the H200 runs behind this order."""
        rank = self.applier_rank(state, technique)
        return rank > 0, self.prior(vertex, technique), rank

    def prior(self, u: str, v: str) -> float:
        if self.graph is None:
            return 0.0
        stats = self.graph.edge_stats(u, v)
        if stats.visits > 0:
            return stats.mean_reward
        if stats.best_speedup:
            return max(stats.best_speedup.values())
        return 0.0

    def edge_q(self, u: str, v: str) -> float:
        """This search's mean reward for u -> v; 0 (neutral) before it is tried: a prior is a
        measure of other kernels, so it only orders untried techniques (`promise`)."""
        return self.edge_value.get((u, v), 0.0)

    def step(self, techniques: tuple[str, ...], vertex: str, technique: str, state: Candidate) -> StepResult:
        key = (*techniques, technique)
        cached = self.paths.get(key)
        if cached is not None:
            return cached
        result = self.session.apply_technique(state, vertex, technique)
        if result.evaluation is not None or result.state is None:
            self.paths[key] = result
        return result

    def record_edge(self, u: str, v: str, reward: float) -> None:
        key = (u, v)
        n = self.edge_visits.get(key, 0) + 1
        self.edge_visits[key] = n
        value = self.edge_value.get(key, 0.0)
        self.edge_value[key] = value + (reward - value) / n


@dataclass
class MCGS(GraphWalker):
    visits: dict[str, int] = field(default_factory=dict)
    value: dict[str, float] = field(default_factory=dict)
    expanded: dict[str, list[str]] = field(default_factory=dict)
    iterations: int = 0

    def run(self) -> None:
        stale = 0
        limit = 10 * self.session.budget + 20
        while not self.session.exhausted() and self.iterations < limit and stale < 25:
            before = self.session.evaluated
            self.iteration()
            stale = stale + 1 if self.session.evaluated == before else 0

    def iteration(self) -> float:
        self.iterations += 1
        path, rewards, state = self.select()
        if state is not None:
            rewards += self.rollout(path, state)
        reward = max(rewards) if rewards else 0.0
        self.backpropagate(path, reward)
        return reward

    def ucb(self, parent: str, child: str) -> float:
        n = self.visits.get(child, 0)
        if n == 0:
            return math.inf
        return self.value.get(child, 0.0) + math.sqrt(2.0 * math.log(max(self.visits.get(parent, 1), 1)) / n)

    def select(self) -> tuple[list[str], list[float], Candidate | None]:
        path = [START]
        rewards: list[float] = []
        state: Candidate | None = self.session.original
        vertex = START
        while state is not None:
            if vertex not in self.expanded:
                self.expanded[vertex] = self.successors(vertex, state)
                break
            children = [c for c in self.expanded[vertex] if c not in path]
            if not children or len(path) > self.session.options.max_depth:
                break
            # Ties (several unvisited children) go by promise, then the graph's order.
            here = state
            child = max(children, key=lambda c: (self.ucb(vertex, c), *self.promise(vertex, here, c)))
            result = self.step(tuple(path[1:]), vertex, child, state)
            path.append(child)
            rewards.append(result.reward)
            state = result.state
            vertex = child
        return path, rewards, state

    def rollout(self, path: list[str], state: Candidate) -> list[float]:
        rewards: list[float] = []
        techniques = tuple(path[1:])
        vertex = path[-1]
        options = self.session.options
        for _ in range(options.step_cap):
            if self.session.exhausted():
                break
            choices = self.successors(vertex, state)
            if not choices:
                break
            if self.session.rng.random() < options.epsilon:
                technique = self.session.rng.choice(choices)
            else:
                technique = max(choices, key=lambda a: (
                    self.edge_q(vertex, a) - options.visit_penalty * self.edge_visits.get((vertex, a), 0),
                    *self.promise(vertex, state, a)))
            result = self.step(techniques, vertex, technique, state)
            self.record_edge(vertex, technique, result.reward)
            rewards.append(result.reward)
            if result.state is None or result.reward <= FAILED:
                break
            techniques = (*techniques, technique)
            state = result.state
            vertex = technique
        return rewards

    def backpropagate(self, path: list[str], reward: float) -> None:
        for vertex in path:
            n = self.visits.get(vertex, 0) + 1
            self.visits[vertex] = n
            q = self.value.get(vertex, 0.0)
            self.value[vertex] = q + (reward - q) / n
