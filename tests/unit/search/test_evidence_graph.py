"""Evidence features on the graph (docs/search.md change 19): `graph distill` records, per step,
what the analyzer found in the code the step rewrote; the graph keeps them on its examples and
reads them per vertex (`feature_stats`); the search's prior for a technique without a proof on
this kernel is conditioned on them (`GraphWalker.conditioned_bound`)."""

from __future__ import annotations

import json

import pytest

from regrapht.errors import InputError
from regrapht.graph import ReasoningGraph
from regrapht.graph.build import build_graph, parse_trajectory
from regrapht.graph.store import dumps_json, loads_graph
from regrapht.search.distill import trajectories_of
from regrapht.search.evidence import KernelEvidence
from regrapht.search.mcgs import GraphWalker
from regrapht.search.request import KernelTarget
from regrapht.search.run import SearchRun, SearchTools
from regrapht.search.strategies import RUNNERS

from .fakes import FakeEvaluator, search_request
from .test_evidence_search import GELU, KERNEL, LAUNCH, facts_for, speed


def record(features: list[str], speedup: float, technique: str = "fast_math") -> dict[str, object]:
    return {"kernel": "k", "source": "a", "arch": "sm_90", "steps": [
        {"technique": technique, "rationale": "r", "description": "d", "code_after": "b", "speedup": speedup,
         "features": features}]}


def first_technique(record: dict[str, object]) -> str:
    steps = record["steps"]
    assert isinstance(steps, list)
    return str(steps[0]["technique"])


def graph_of(*records: dict[str, object]) -> ReasoningGraph:
    return build_graph(parse_trajectory(r, "t.jsonl", n) for n, r in enumerate(records, start=1))


def test_features_survive_the_graph_file() -> None:
    graph = graph_of(record(["f64", "proof:fast_math"], 2.4), record(["rule:R016"], 1.02))
    again = loads_graph(dumps_json(graph).encode(), "g.json")
    assert again.feature_stats("fast_math") == {"f64": (1, 2.4), "proof:fast_math": (1, 2.4), "rule:R016": (1, 1.02)}


def test_bad_features_name_the_step() -> None:
    bad = record(["f64"], 2.0)
    bad["steps"][0]["features"] = "f64"  # type: ignore[index]
    with pytest.raises(InputError, match=r"steps\[0\]\.features"):
        parse_trajectory(bad, "t.jsonl", 3)


def test_the_prior_is_conditioned_on_the_kernels_evidence() -> None:
    """fast_math measured 2.4x on f64 code: a kernel with f64 code is bounded by that; a technique
    whose examples share no distinguishing feature with the kernel, or a kernel without
    evidence, falls back to the graph-wide bound (None here)."""
    graph = graph_of(record(["f64"], 2.4), record(["rule:R016"], 1.05, "restrict_const"))
    f64 = KernelEvidence(KERNEL, {}, ("R007",), f64_instructions=10, instructions=20)
    session = SearchRun.open(search_request(GELU, KERNEL, "mcgs", 6), KernelTarget(LAUNCH),
                             SearchTools(FakeEvaluator(speed), None, graph, evidence=f64))
    walker = GraphWalker(session, graph)
    assert walker.conditioned_bound("fast_math") == pytest.approx(2.4)
    assert walker.conditioned_bound("restrict_const") is None  # no example shares a distinguishing feature
    plain = SearchRun.open(search_request(GELU, KERNEL, "mcgs", 6), KernelTarget(LAUNCH),
                           SearchTools(FakeEvaluator(speed), None, graph))
    assert GraphWalker(plain, graph).conditioned_bound("fast_math") is None


def test_distill_records_the_evidence_of_each_steps_code() -> None:
    from regrapht.search.evidence import kernel_evidence

    evidence = kernel_evidence(GELU, KERNEL, facts_for(GELU), arch="sm_90")
    session = SearchRun.open(search_request(GELU, KERNEL, "mcgs", 12), KernelTarget(LAUNCH),
                             SearchTools(FakeEvaluator(speed), None, None, evidence=evidence))
    RUNNERS["mcgs"](session, None)
    records = trajectories_of(session, task="gelu", strategy="mcgs", seed=0, graph=None)
    chains = [r for r in records if first_technique(r) == "fast_math"]
    assert chains
    steps = chains[0]["steps"]
    assert isinstance(steps, list)
    first = steps[0]["features"]
    assert "proof:fast_math" in first and "f64" in first and "idiom:vectorized_access" in first
    if len(steps) > 1:  # the float code: no f64 finding, no proof left
        assert "proof:fast_math" not in steps[1]["features"]
    json.dumps(records)  # what write_jsonl writes
