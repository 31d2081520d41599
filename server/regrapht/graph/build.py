"""Building the reasoning graph from trajectories (JSON Lines files, see graph/README.md).

The walk follows the paper: start at the initial vertex; for each step, canonicalise the
technique name; if the current vertex already has an edge to that technique, append the
example to it; else if the technique's vertex exists, add an edge; else add the vertex and the
edge. The step's technique becomes the current vertex.

Edge priors come from the measured outcomes: an edge whose examples carry speedups gets
`visits` = their number, `mean_reward` = their mean step reward (the search's convention: the
speedup when faster, speedup - 1 when slower) and the best speedup per arch.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from regrapht.errors import InputError
from regrapht.graph.canon import Canonicaliser
from regrapht.graph.graph import ReasoningGraph
from regrapht.graph.types import START, UNKNOWN_ARCH, EdgeStats, Example, Step, Trajectory
from regrapht.inputs import MAX_GRAPH_BYTES, read_text_bounded

_STEP_TEXT = ("technique", "rationale", "description", "code_after")


def parse_trajectory(record: object, shown: str, line: int) -> Trajectory:
    """One trajectory from a decoded JSON line; InputError naming file and line if malformed."""

    def fail(message: str) -> InputError:
        return InputError(message, file=shown, line=line)

    if not isinstance(record, dict):
        raise fail("a trajectory must be a JSON object")
    kernel, source, steps = record.get("kernel"), record.get("source"), record.get("steps")
    if not isinstance(kernel, str) or not kernel:
        raise fail("trajectory needs a non-empty string 'kernel'")
    if not isinstance(source, str):
        raise fail("trajectory needs a string 'source' (the unoptimized kernel)")
    if not isinstance(steps, list) or not steps:
        raise fail("trajectory needs a non-empty list 'steps'")
    default_arch = record.get("arch")
    if default_arch is not None and not isinstance(default_arch, str):
        raise fail("'arch' must be a string such as \"sm_90\"")
    parsed: list[Step] = []
    previous = source
    for index, raw in enumerate(steps):
        where = f"steps[{index}]"
        if not isinstance(raw, dict):
            raise fail(f"{where} must be an object")
        for name in _STEP_TEXT:
            if not isinstance(raw.get(name), str) or (name == "technique" and not raw[name].strip()):
                raise fail(f"{where}.{name} must be a non-empty string" if name == "technique"
                           else f"{where}.{name} must be a string")
        before = raw.get("code_before", previous)  # default: the code the previous step produced
        speedup = raw.get("speedup")
        arch = raw.get("arch", default_arch)
        features = raw.get("features", [])
        if not isinstance(features, list) or not all(isinstance(f, str) for f in features):
            raise fail(f"{where}.features must be a list of strings")
        if not isinstance(before, str):
            raise fail(f"{where}.code_before must be a string")
        if speedup is not None and (isinstance(speedup, bool) or not isinstance(speedup, int | float) or speedup <= 0):
            raise fail(f"{where}.speedup must be a positive number")
        if arch is not None and not isinstance(arch, str):
            raise fail(f"{where}.arch must be a string")
        parsed.append(Step(
            technique=raw["technique"], rationale=raw["rationale"], description=raw["description"],
            code_before=before, code_after=raw["code_after"],
            speedup=None if speedup is None else float(speedup), arch=arch, features=tuple(sorted(set(features))),
        ))
        previous = raw["code_after"]
    return Trajectory(kernel=kernel, source=source, steps=tuple(parsed))


def read_trajectories(path: Path) -> list[Trajectory]:
    """All trajectories of a JSON Lines file (blank lines skipped)."""
    shown = str(path)
    text = read_text_bounded(path, MAX_GRAPH_BYTES, "trajectories file")
    trajectories: list[Trajectory] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"invalid JSON: {error.msg} (column {error.colno})", file=shown, line=number) from error
        trajectories.append(parse_trajectory(record, shown, number))
    return trajectories


def add_trajectory(graph: ReasoningGraph, trajectory: Trajectory, canon: Canonicaliser) -> list[str]:
    """Merge one trajectory into `graph`; returns the canonical technique path it followed."""
    current = START
    path: list[str] = []
    for step in trajectory.steps:
        technique = canon.canonical(step.technique, step.description)
        example = Example(
            kernel=trajectory.kernel, rationale=step.rationale, description=step.description,
            code_before=step.code_before, code_after=step.code_after, speedup=step.speedup, arch=step.arch,
            features=step.features,
        )
        # The three cases of the method; add_example covers them, spelled out for the reader:
        # an existing edge gets the example appended; an existing vertex gets a new edge;
        # an unknown technique gets a new vertex and a new edge.
        graph.add_example(current, technique, example)
        canon.add_known([technique])
        path.append(technique)
        current = technique
    graph.trajectories += 1
    return path


def build_graph(
    trajectories: Iterable[Trajectory],
    canonicaliser: Canonicaliser | None = None,
    graph: ReasoningGraph | None = None,
) -> ReasoningGraph:
    """A graph of `trajectories`, merged into `graph` if given (else a new one)."""
    target = graph if graph is not None else ReasoningGraph()
    canon = canonicaliser if canonicaliser is not None else Canonicaliser()
    canon.add_known(target.techniques())
    for trajectory in trajectories:
        add_trajectory(target, trajectory, canon)
    set_measured_priors(target)
    return target


def step_reward(speedup: float) -> float:
    return speedup if speedup > 1.0 else speedup - 1.0


def set_measured_priors(graph: ReasoningGraph) -> None:
    """Every edge's prior statistics from the speedups measured in its examples (module docstring)."""
    for u, v in graph.edges():
        measured = [e for e in graph.examples(u, v) if e.speedup is not None]
        if not measured:
            continue
        best: dict[str, float] = {}
        for example in measured:
            assert example.speedup is not None
            arch = example.arch or UNKNOWN_ARCH
            best[arch] = max(example.speedup, best.get(arch, example.speedup))
        mean = sum(step_reward(e.speedup) for e in measured if e.speedup is not None) / len(measured)
        graph.set_prior_stats(u, v, EdgeStats(len(measured), round(mean, 6), best))
