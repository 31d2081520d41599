"""`regrapht graph distill` with a fake evaluator: verified steps become trajectories (each
measured, arch and GPU recorded, failed steps dropped), the graph built from them takes its
priors from the measured outcomes, and the held-out test split is refused."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from regrapht.commands import graph as graph_command
from regrapht.errors import InputError
from regrapht.graph import START, build_graph
from regrapht.graph.build import parse_trajectory, read_trajectories
from regrapht.search import SearchHooks, SearchTools, optimize
from regrapht.search.distill import check_train_split, trajectories_of, unique, write_jsonl
from regrapht.search.run import SearchRun
from regrapht.validate.types import Candidate

from .fakes import FakeEvaluator, search_request
from .test_selection import SGEMM, SGEMM_TARGET, misleading_graph

ROOT = Path(__file__).resolve().parents[3]


def tiled_fast_unrolled_wrong(candidate: Candidate) -> float | None:
    """Tiling 6x; any unrolled version computes wrong results; other changes 1.1x."""
    if "#pragma unroll" in candidate.source and "__shared__" not in candidate.source:
        return None
    speed = 6.0 if "__shared__" in candidate.source else 1.1
    return speed * (1.05 if "__restrict__" in candidate.source else 1.0)


def distilled(seed: int = 0, budget: int = 16) -> list[dict[str, object]]:
    sessions: list[SearchRun] = []
    graph = misleading_graph()
    optimize(search_request(SGEMM, "sgemm", "mcgs", budget, seed), SGEMM_TARGET,
             SearchTools(FakeEvaluator(tiled_fast_unrolled_wrong), None, graph),
             SearchHooks(on_finish=sessions.append))
    return trajectories_of(sessions[0], task="sgemm", strategy="mcgs", seed=seed, graph=graph)


def test_verified_chains_become_trajectories_with_measured_steps() -> None:
    records = distilled()
    assert records
    for record in records:
        assert record["arch"] == "sm_90" and record["gpu"] == "Fake GPU" and record["task"] == "sgemm"
        assert record["source"].startswith("__global__ void sgemm(")  # type: ignore[union-attr]
        steps = record["steps"]
        assert isinstance(steps, list) and steps
        previous = record["source"]
        total = 1.0
        for step in steps:
            assert step["arch"] == "sm_90" and step["speedup"] > 0
            assert step["code_before"] == previous  # each step starts from the code the last one produced
            assert "__global__ void sgemm(" in step["code_after"]
            previous = step["code_after"]
            total *= step["speedup"]
        # the steps' speedups multiply to the last candidate's measured speedup
        last = tiled_fast_unrolled_wrong(Candidate(steps[-1]["code_after"], SGEMM_TARGET.launch))
        assert last is not None and total == pytest.approx(last, rel=1e-3)
        parse_trajectory(json.loads(json.dumps(record)), "distilled.jsonl", 1)
    # the tiled chain is there, with the step's measured 6x
    tiled = [r for r in records if r["steps"][0]["technique"] == "shared_memory_tiling"]  # type: ignore[index]
    assert tiled and tiled[0]["steps"][0]["speedup"] == pytest.approx(6.0)  # type: ignore[index]


def test_failed_steps_are_dropped() -> None:
    for record in distilled(budget=24):
        for step in record["steps"]:  # type: ignore[attr-defined]
            assert not ("#pragma unroll" in step["code_after"] and "__shared__" not in step["code_after"])


def test_nothing_is_distilled_without_a_device() -> None:
    sessions: list[SearchRun] = []
    optimize(search_request(SGEMM, "sgemm", "mcgs", 6), SGEMM_TARGET,
             SearchTools(FakeEvaluator(lambda c: 2.0, gpu_name=None), None, misleading_graph()),
             SearchHooks(on_finish=sessions.append))
    assert trajectories_of(sessions[0], task="sgemm", strategy="mcgs", seed=0, graph=None) == []


def test_the_graph_built_from_distilled_trajectories_takes_measured_priors(tmp_path: Path) -> None:
    records = unique([*distilled(0), *distilled(1), *distilled(0)])
    path = tmp_path / "distilled.jsonl"
    assert write_jsonl(path, records) == len(records)
    starter = read_trajectories(ROOT / "graph/trajectories/starter.jsonl")
    graph = build_graph([*starter, *read_trajectories(path)])
    assert graph.trajectories == len(starter) + len(records)
    stats = graph.prior_stats(START, "shared_memory_tiling")
    measured = [e.speedup for e in graph.examples(START, "shared_memory_tiling") if e.speedup is not None]
    assert stats.visits == len(measured) > 0 and stats.best_speedup["sm_90"] == pytest.approx(6.0)


def test_the_held_out_split_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="train split only"):
        check_train_split(ROOT / "bench/corpus/test/bmm_small")
    check_train_split(tmp_path / "corpus" / "train" / "gemm")
    parser = argparse.ArgumentParser(prog="regrapht")
    graph_command.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["graph", "distill", str(ROOT / "bench/corpus/test/bmm_small"), "-o",
                              str(tmp_path / "out.jsonl")])
    with pytest.raises(InputError, match="held-out test split") as raised:
        args.handler(args)
    assert "bmm_small" in str(raised.value)
    assert not (tmp_path / "out.jsonl").exists()
