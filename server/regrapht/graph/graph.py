"""`ReasoningGraph`: CUDA optimization techniques as vertices, observed transitions as edges.

An edge u->v means "after applying u, v was applied next"; it carries the examples seen for
that transition and prior statistics (best speedups recorded in the examples). The graph has
one initial vertex, `START`, standing for the unoptimized kernel; cycles are allowed.

Search statistics gathered on this machine live in an `Overlay` (see overlay.py), kept apart
from the bundled graph so that the bundled file is never modified; `edge_stats` returns both
merged. `record_outcome` may be called from a search worker thread, hence the lock.
"""

from __future__ import annotations

import statistics
import threading
from collections.abc import Iterator

import networkx as nx

from regrapht.graph.overlay import Overlay
from regrapht.graph.types import START, UNKNOWN_ARCH, EdgeStats, Example, GraphSummary, speedup_histogram


class ReasoningGraph:
    def __init__(self, digraph: nx.DiGraph | None = None, *, trajectories: int = 0) -> None:
        self.digraph: nx.DiGraph = digraph if digraph is not None else nx.DiGraph()
        if START not in self.digraph:
            self.digraph.add_node(START, description="the unoptimized kernel")
        self.trajectories = trajectories
        self._overlay = Overlay()
        self._unsaved = Overlay()  # outcomes recorded here and not yet merged into the overlay file
        self._lock = threading.Lock()

    # ---- vertices -------------------------------------------------------------------------
    def techniques(self) -> list[str]:
        """Every technique vertex (not START), sorted."""
        return sorted(v for v in self.digraph.nodes if v != START)

    def has_technique(self, technique: str) -> bool:
        return technique in self.digraph

    def description(self, technique: str) -> str:
        return str(self.digraph.nodes[technique].get("description", ""))

    def add_technique(self, technique: str, description: str = "") -> None:
        if technique not in self.digraph:
            self.digraph.add_node(technique, description=description)
        elif description and not self.description(technique):
            self.digraph.nodes[technique]["description"] = description

    def successors(self, technique: str) -> list[str]:
        """Techniques applied right after `technique` in some example ([] if unknown), sorted."""
        return sorted(self.digraph.successors(technique)) if technique in self.digraph else []

    def predecessors(self, technique: str) -> list[str]:
        return sorted(self.digraph.predecessors(technique)) if technique in self.digraph else []

    def feature_stats(self, technique: str) -> dict[str, tuple[int, float]]:
        """Per evidence feature of the code it rewrote (`Example.features`, recorded by `graph
        distill`): how many measured steps into `technique` had it, and their best speedup."""
        found: dict[str, tuple[int, float]] = {}
        for u in self.predecessors(technique):
            for example in self.digraph.edges[u, technique]["examples"]:
                if example.speedup is None:
                    continue
                for feature in example.features:
                    count, best = found.get(feature, (0, 0.0))
                    found[feature] = (count + 1, max(best, example.speedup))
        return found

    # ---- edges ----------------------------------------------------------------------------
    def edges(self) -> list[tuple[str, str]]:
        return sorted(self.digraph.edges)

    def has_edge(self, u: str, v: str) -> bool:
        return bool(self.digraph.has_edge(u, v))

    def examples(self, u: str, v: str) -> list[Example]:
        """Examples of applying v right after u (a copy; [] if there is no such edge)."""
        if not self.digraph.has_edge(u, v):
            return []
        return list(self.digraph.edges[u, v]["examples"])

    def iter_examples(self) -> Iterator[tuple[str, str, Example]]:
        for u, v in self.edges():
            for example in self.digraph.edges[u, v]["examples"]:
                yield u, v, example

    def add_example(self, u: str, v: str, example: Example) -> None:
        """Append an example to u->v, adding the edge (and vertices) if needed."""
        self.add_technique(u)
        self.add_technique(v, example.description)
        if not self.digraph.has_edge(u, v):
            self.digraph.add_edge(u, v, examples=[], stats=EdgeStats())
        data = self.digraph.edges[u, v]
        data["examples"].append(example)
        if example.speedup is not None:
            data["stats"] = data["stats"].merged(
                EdgeStats(best_speedup={example.arch or UNKNOWN_ARCH: example.speedup})
            )

    def prior_stats(self, u: str, v: str) -> EdgeStats:
        """The statistics stored in the graph file (without this machine's overlay)."""
        if not self.digraph.has_edge(u, v):
            return EdgeStats()
        stats: EdgeStats = self.digraph.edges[u, v]["stats"]
        return stats

    def set_prior_stats(self, u: str, v: str, stats: EdgeStats) -> None:
        self.digraph.edges[u, v]["stats"] = stats

    # ---- search statistics ----------------------------------------------------------------
    def edge_stats(self, u: str, v: str) -> EdgeStats:
        """Prior stats merged with this machine's overlay; zeros for a pair never seen."""
        with self._lock:
            local = self._overlay.get(u, v)
        return self.prior_stats(u, v).merged(local)

    def vertex_stats(self, v: str) -> EdgeStats:
        """All transitions into v together (its visit count for UCT-style selection)."""
        total = EdgeStats()
        for u in self.predecessors(v):
            total = total.merged(self.edge_stats(u, v))
        with self._lock:
            extra = [s for (a, b), s in self._overlay.items() if b == v and not self.digraph.has_edge(a, b)]
        for stats in extra:
            total = total.merged(stats)
        return total

    def record_outcome(
        self, u: str, v: str, reward: float, speedup: float | None = None, arch: str | None = None
    ) -> EdgeStats:
        """Record one verified outcome of applying v after u into the overlay; returns the
        merged stats. The pair need not be an edge (search may try transitions never seen)."""
        with self._lock:
            updated = self._overlay.get(u, v).with_outcome(reward, speedup, arch)
            self._overlay.set(u, v, updated)
            self._unsaved.set(u, v, self._unsaved.get(u, v).with_outcome(reward, speedup, arch))
        return self.edge_stats(u, v)

    def take_unsaved(self) -> Overlay:
        """The outcomes recorded since the last call (what a save must add to the file); resets."""
        with self._lock:
            unsaved, self._unsaved = self._unsaved, Overlay()
        return unsaved

    @property
    def overlay(self) -> Overlay:
        """A snapshot of this machine's statistics (what `save_overlay` writes)."""
        with self._lock:
            return self._overlay.copy()

    def apply_overlay(self, overlay: Overlay) -> None:
        """Use `overlay` as this machine's statistics (replacing any held)."""
        with self._lock:
            self._overlay = overlay.copy()

    # ---- summary --------------------------------------------------------------------------
    def example_count(self) -> int:
        return sum(len(data["examples"]) for _, _, data in self.digraph.edges(data=True))

    def summary(self) -> GraphSummary:
        speedups = [e.speedup for _, _, e in self.iter_examples() if e.speedup is not None]
        return GraphSummary(
            vertices=self.digraph.number_of_nodes(),
            edges=self.digraph.number_of_edges(),
            examples=self.example_count(),
            trajectories=self.trajectories,
            techniques=self.techniques(),
            speedup_median=round(statistics.median(speedups), 3) if speedups else None,
            speedup_max=round(max(speedups), 3) if speedups else None,
            speedup_histogram=speedup_histogram(speedups),
        )
