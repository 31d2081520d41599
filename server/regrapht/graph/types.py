"""Plain data of the reasoning graph: trajectories (input), examples (on edges), statistics."""

from __future__ import annotations

from dataclasses import dataclass, field

START = "__start__"  # the initial vertex: the unoptimized kernel, before any technique
UNKNOWN_ARCH = "unknown"  # the arch key for a speedup recorded without one


@dataclass(frozen=True)
class Step:
    """One technique applied in a trajectory (one line of `steps` in a trajectory file)."""

    technique: str
    rationale: str
    description: str
    code_before: str
    code_after: str
    speedup: float | None = None
    arch: str | None = None
    # what the analyzer found in the code the step rewrote (search/evidence.py `features`:
    # `proof:fast_math`, `f64`, `spills`, ...), recorded by `graph distill`
    features: tuple[str, ...] = ()


@dataclass(frozen=True)
class Trajectory:
    """A kernel optimized step by step; steps are applied in order from `source`."""

    kernel: str
    source: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Example:
    """One observed application of technique v right after technique u (an edge u->v)."""

    kernel: str
    rationale: str
    description: str
    code_before: str
    code_after: str
    speedup: float | None = None
    arch: str | None = None
    features: tuple[str, ...] = ()  # the evidence features of `code_before` (Step.features)


@dataclass(frozen=True)
class EdgeStats:
    """Search statistics: how often a transition was tried, its mean reward, and the best
    verified speedup per GPU arch (e.g. {"sm_90": 3.1})."""

    visits: int = 0
    mean_reward: float = 0.0
    best_speedup: dict[str, float] = field(default_factory=dict)

    def merged(self, other: EdgeStats) -> EdgeStats:
        """Both sets of observations together (visit-weighted mean, best per arch)."""
        visits = self.visits + other.visits
        mean = (
            (self.mean_reward * self.visits + other.mean_reward * other.visits) / visits if visits else 0.0
        )
        best = dict(self.best_speedup)
        for arch, speedup in other.best_speedup.items():
            best[arch] = max(speedup, best.get(arch, speedup))
        return EdgeStats(visits, mean, best)

    def with_outcome(self, reward: float, speedup: float | None, arch: str | None) -> EdgeStats:
        visits = self.visits + 1
        mean = self.mean_reward + (reward - self.mean_reward) / visits
        best = dict(self.best_speedup)
        if speedup is not None:
            key = arch or UNKNOWN_ARCH
            best[key] = max(speedup, best.get(key, speedup))
        return EdgeStats(visits, mean, best)


@dataclass(frozen=True)
class GraphSummary:
    """What `regrapht graph stats` prints (keys of the CLI contract)."""

    vertices: int
    edges: int
    examples: int
    trajectories: int
    techniques: list[str]
    speedup_median: float | None
    speedup_max: float | None
    # measured step speedups by range (SPEEDUP_BINS), for the distribution `graph stats` shows
    speedup_histogram: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {
            "vertices": self.vertices,
            "edges": self.edges,
            "examples": self.examples,
            "trajectories": self.trajectories,
            "techniques": self.techniques,
            "speedup": {"median": self.speedup_median, "max": self.speedup_max,
                        "histogram": dict(self.speedup_histogram)},
        }


# Upper bounds of the speedup ranges `graph stats` counts (the last range is open).
SPEEDUP_BINS: tuple[tuple[str, float], ...] = (
    ("<1", 1.0), ("1-1.1", 1.1), ("1.1-1.5", 1.5), ("1.5-2", 2.0), ("2-4", 4.0), ("4-10", 10.0),
    ("10-100", 100.0), (">=100", float("inf")),
)


def speedup_histogram(speedups: list[float]) -> dict[str, int]:
    counts = {label: 0 for label, _ in SPEEDUP_BINS}
    for speedup in speedups:
        label = next(name for name, bound in SPEEDUP_BINS if speedup < bound)
        counts[label] += 1
    return counts
