"""Building the graph from trajectories: the three merge cases, canonicalisation, parsing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from regrapht.errors import InputError
from regrapht.graph import (
    START,
    Canonicaliser,
    ReasoningGraph,
    Step,
    Trajectory,
    build_graph,
    read_trajectories,
)
from regrapht.graph.build import add_trajectory
from regrapht.graph.canon import normalise
from regrapht.model import ScriptedModel


def step(technique: str, after: str = "after", speedup: float | None = None, arch: str | None = None) -> Step:
    return Step(technique, f"why {technique}", f"what {technique} does", "before", after, speedup, arch)


def trajectory(kernel: str, *techniques: str) -> Trajectory:
    return Trajectory(kernel, "source", tuple(step(t) for t in techniques))


def test_new_vertices_and_edges_from_start() -> None:
    graph = build_graph([trajectory("saxpy", "restrict_const", "launch_configuration", "vectorized_access")])
    assert graph.edges() == [
        (START, "restrict_const"),
        ("launch_configuration", "vectorized_access"),
        ("restrict_const", "launch_configuration"),
    ]
    assert graph.description("restrict_const") == "what restrict_const does"
    assert graph.trajectories == 1


def test_existing_edge_gets_example_appended() -> None:
    graph = build_graph([trajectory("a", "fast_math"), trajectory("b", "fast_math")])
    assert graph.edges() == [(START, "fast_math")]
    assert [e.kernel for e in graph.examples(START, "fast_math")] == ["a", "b"]


def test_existing_vertex_gets_new_edge() -> None:
    graph = build_graph([trajectory("a", "tiling_x", "unroll_y"), trajectory("b", "unroll_y")])
    assert graph.techniques() == ["tiling_x", "unroll_y"]
    assert graph.predecessors("unroll_y") == [START, "tiling_x"]
    assert len(graph.examples(START, "unroll_y")) == 1


def test_cycles_and_self_loops_allowed() -> None:
    graph = build_graph([trajectory("a", "x", "y", "x", "x")])
    assert graph.has_edge("y", "x") and graph.has_edge("x", "y") and graph.has_edge("x", "x")


def test_speedups_become_prior_best_per_arch() -> None:
    t = Trajectory("k", "s", (step("fast_math", speedup=1.5, arch="sm_90"),))
    u = Trajectory("k2", "s", (step("fast_math", speedup=2.5, arch="sm_90"), step("x", speedup=1.1)))
    graph = build_graph([t, u])
    assert graph.prior_stats(START, "fast_math").best_speedup == {"sm_90": 2.5}
    assert graph.prior_stats("fast_math", "x").best_speedup == {"unknown": 1.1}
    # priors from the measured outcomes: visits and the mean step reward
    assert graph.prior_stats(START, "fast_math").visits == 2
    assert graph.prior_stats(START, "fast_math").mean_reward == pytest.approx(2.0)
    summary = graph.summary()
    assert (summary.speedup_median, summary.speedup_max) == (1.5, 2.5)


def test_synonyms_merge_steps() -> None:
    graph = build_graph([trajectory("a", "Tiling", "Loop Unroll"), trajectory("b", "smem-tiling", "#pragma unroll")])
    assert graph.techniques() == ["loop_unrolling", "shared_memory_tiling"]
    assert len(graph.examples("shared_memory_tiling", "loop_unrolling")) == 2


def test_normalise() -> None:
    assert normalise("  Shared-Memory Tiling!! ") == "shared_memory_tiling"


def test_model_relabel_accepted_only_when_exact() -> None:
    model = ScriptedModel.of(" `memory_coalescing` \n", "memory_coalescing, probably", "NONE")
    canon = Canonicaliser(known={"memory_coalescing", "fast_math"}, model=model)
    assert canon.canonical("Access contiguity fix", "make warps read adjacent words") == "memory_coalescing"
    assert canon.canonical("Other thing") == "other_thing"  # not exactly one name
    assert canon.canonical("Third") == "third"  # NONE
    assert canon.relabels == [("access_contiguity_fix", "memory_coalescing")]
    prompt = model.prompts[0][1].content
    assert "- fast_math\n- memory_coalescing" in prompt and "access_contiguity_fix" in prompt
    assert "make warps read adjacent words" in prompt


def test_model_not_asked_for_known_or_synonym_names() -> None:
    model = ScriptedModel.of()
    canon = Canonicaliser(known={"fast_math"}, model=model)
    assert canon.canonical("Fast Math") == "fast_math"
    assert canon.canonical("tiling") == "shared_memory_tiling"
    assert model.calls == []


def test_model_relabel_during_build() -> None:
    model = ScriptedModel.of("restrict_const")
    graph = ReasoningGraph()
    canon = Canonicaliser(model=model)
    add_trajectory(graph, trajectory("a", "restrict_const"), canon)
    path = add_trajectory(graph, trajectory("b", "noalias pointers"), canon)
    assert path == ["restrict_const"]
    assert len(graph.examples(START, "restrict_const")) == 2


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_read_trajectories_defaults_code_before(tmp_path: Path) -> None:
    record = {"kernel": "k", "source": "S0", "arch": "sm_80", "steps": [
        {"technique": "a", "rationale": "r", "description": "d", "code_after": "S1", "speedup": 2},
        {"technique": "b", "rationale": "r", "description": "d", "code_after": "S2", "arch": "sm_90"},
    ]}
    [t] = read_trajectories(_write(tmp_path, ["", json.dumps(record)]))
    assert [(s.code_before, s.code_after, s.arch) for s in t.steps] == [("S0", "S1", "sm_80"), ("S1", "S2", "sm_90")]
    assert t.steps[0].speedup == 2.0


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "invalid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"kernel": "k", "source": "s", "steps": []}', "non-empty list 'steps'"),
        ('{"kernel": "k", "source": "s", "steps": [{"technique": "", "rationale": "", "description": "", '
         '"code_after": ""}]}', "steps[0].technique must be a non-empty string"),
        ('{"kernel": "k", "source": "s", "steps": [{"technique": "t", "rationale": "", "description": "", '
         '"code_after": "", "speedup": -1}]}', "steps[0].speedup must be a positive number"),
    ],
)
def test_bad_line_names_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    good = json.dumps({"kernel": "k", "source": "s", "steps": [
        {"technique": "t", "rationale": "", "description": "", "code_after": ""}]})
    path = _write(tmp_path, [good, line])
    with pytest.raises(InputError) as caught:
        read_trajectories(path)
    assert message in caught.value.message
    assert (caught.value.file, caught.value.line) == (str(path), 2)
    assert str(caught.value).startswith(f"{path}:2: ")


def test_starter_trajectories_cover_rule_techniques() -> None:
    path = Path(__file__).resolve().parents[3] / "graph" / "trajectories" / "starter.jsonl"
    graph = build_graph(read_trajectories(path))
    for technique in (
        "memory_coalescing", "shared_memory_tiling", "restrict_const", "vectorized_access",
        "warp_shuffle_reduction", "shared_memory_privatization", "loop_unrolling", "fast_math",
        "launch_configuration", "grid_stride_loop", "bank_conflict_padding", "divergence_reduction",
    ):
        assert graph.has_technique(technique), technique
    assert graph.successors("shared_memory_tiling") == ["bank_conflict_padding", "loop_unrolling", "restrict_const"]
