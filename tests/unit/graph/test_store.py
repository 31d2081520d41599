"""Graph files (msgpack, JSON), the bundled graph, and the user-local overlay."""

from __future__ import annotations

import json
import os
from pathlib import Path

import msgpack
import pytest

from regrapht.errors import InputError
from regrapht.graph import (
    START,
    EdgeStats,
    Overlay,
    ReasoningGraph,
    Step,
    Trajectory,
    build_graph,
    load_bundled_graph,
    load_graph,
    load_overlay,
    open_graph,
    save_graph,
    save_overlay,
)
from regrapht.graph.store import dumps_msgpack, to_document


def sample_graph() -> ReasoningGraph:
    steps = (
        Step("restrict_const", "r1", "d1", "b0", "a0", 1.2, "sm_90"),
        Step("vectorized_access", "r2", "d2", "a0", "a1"),
        Step("restrict_const", "r3", "d1", "a1", "a2"),
    )
    return build_graph([Trajectory("saxpy", "b0", steps), Trajectory("k", "s", steps[:1])])


@pytest.mark.parametrize("name", ["g.msgpack", "g.json"])
def test_round_trip(tmp_path: Path, name: str) -> None:
    graph = sample_graph()
    path = tmp_path / name
    save_graph(graph, path)
    loaded = load_graph(path)
    assert to_document(loaded) == to_document(graph)
    assert loaded.examples(START, "restrict_const") == graph.examples(START, "restrict_const")
    assert loaded.trajectories == 2
    if name.endswith(".json"):
        assert json.loads(path.read_text())["format"] == "regrapht-reasoning-graph"


def test_build_is_deterministic() -> None:
    assert dumps_msgpack(sample_graph()) == dumps_msgpack(sample_graph())


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "corrupt reasoning graph file"),
        (b"\xc1\xc1garbage", "corrupt reasoning graph file"),
        (b"{broken json", "corrupt reasoning graph JSON"),
        (msgpack.packb({"format": "something-else"}), "not a ReGraphT reasoning graph"),
        (msgpack.packb({"format": "regrapht-reasoning-graph", "version": 99}), "unsupported reasoning graph version 99"),
    ],
)
def test_corrupt_file_is_input_error(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.msgpack"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message) as caught:
        load_graph(path)
    assert caught.value.file == str(path)


def test_truncated_msgpack(tmp_path: Path) -> None:
    path = tmp_path / "cut.msgpack"
    path.write_bytes(dumps_msgpack(sample_graph())[:-20])
    with pytest.raises(InputError, match="corrupt"):
        load_graph(path)


def test_bad_edge_names_key(tmp_path: Path) -> None:
    document = to_document(sample_graph())
    document["edges"][1]["to"] = "nowhere"
    path = tmp_path / "g.json"
    path.write_text(json.dumps(document))
    with pytest.raises(InputError, match="unknown vertex") as caught:
        load_graph(path)
    assert caught.value.key == "edges[1]"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        load_graph(tmp_path / "none.msgpack")


def test_bundled_graph_loads() -> None:
    graph = load_bundled_graph()
    assert graph.trajectories >= 12
    assert "shared_memory_tiling" in graph.successors(START)


def test_record_outcome_and_merged_stats() -> None:
    graph = sample_graph()
    # priors from the two measured examples (1.2x each)
    assert graph.edge_stats(START, "restrict_const") == EdgeStats(2, 1.2, {"sm_90": 1.2})
    graph.record_outcome(START, "restrict_const", 1.0, speedup=1.1, arch="sm_90")
    merged = graph.record_outcome(START, "restrict_const", 0.0, speedup=2.0, arch="sm_80")
    assert merged.visits == 4 and merged.mean_reward == pytest.approx((2 * 1.2 + 1.0 + 0.0) / 4)
    assert merged.best_speedup == {"sm_90": 1.2, "sm_80": 2.0}
    assert graph.prior_stats(START, "restrict_const").visits == 2  # the graph itself is untouched
    graph.record_outcome("vectorized_access", "fast_math", 1.0)  # not an edge: still recorded
    assert graph.edge_stats("vectorized_access", "fast_math").visits == 1
    assert not graph.has_edge("vectorized_access", "fast_math")
    assert graph.vertex_stats("fast_math").visits == 1
    assert graph.vertex_stats("restrict_const").visits == 4


def test_overlay_save_load_and_merge(tmp_path: Path) -> None:
    bundled = tmp_path / "graph.msgpack"
    save_graph(sample_graph(), bundled)
    before = bundled.read_bytes()
    overlay_path = tmp_path / "user" / "overlay.msgpack"

    first = open_graph(bundled, overlay_path)  # no overlay yet: empty
    assert len(first.overlay) == 0
    first.record_outcome(START, "restrict_const", 0.8, speedup=3.0, arch="sm_90")
    save_overlay(first.overlay, overlay_path)

    second = open_graph(bundled, overlay_path)
    stats = second.edge_stats(START, "restrict_const")  # 2 measured priors (1.2x) + this outcome
    assert stats.visits == 3 and stats.mean_reward == pytest.approx((2 * 1.2 + 0.8) / 3)
    assert stats.best_speedup == {"sm_90": 3.0}
    second.record_outcome(START, "restrict_const", 0.2)
    save_overlay(second.overlay, overlay_path)
    assert load_overlay(overlay_path).get(START, "restrict_const").visits == 2
    assert bundled.read_bytes() == before  # the bundled graph is never modified
    assert [p.name for p in overlay_path.parent.iterdir()] == ["overlay.msgpack"]  # no temp files left


def test_runs_saving_the_same_overlay_keep_each_others_outcomes(tmp_path: Path) -> None:
    """The editor and a CLI run (or two parallel runs) open the overlay, search, then save:
    the second save adds to what the first wrote instead of overwriting it."""
    from regrapht.app.optimize import save_statistics

    bundled = tmp_path / "bundled.msgpack"
    save_graph(sample_graph(), bundled)
    overlay_path = tmp_path / "user" / "overlay.msgpack"
    save_overlay(Overlay({(START, "restrict_const"): EdgeStats(2, 1.0, {"sm_90": 1.1})}), overlay_path)
    editor, cli = open_graph(bundled, overlay_path), open_graph(bundled, overlay_path)
    editor.record_outcome(START, "restrict_const", 3.0, 3.0, "sm_90")
    cli.record_outcome(START, "restrict_const", -1.0, None, "sm_90")
    cli.record_outcome(START, "fast_math", 1.5, 1.5, "sm_80")
    save_statistics(editor, overlay_path)
    save_statistics(cli, overlay_path)
    saved = load_overlay(overlay_path)
    assert saved.get(START, "restrict_const") == EdgeStats(4, (2 * 1.0 + 3.0 - 1.0) / 4, {"sm_90": 3.0})
    assert saved.get(START, "fast_math") == EdgeStats(1, 1.5, {"sm_80": 1.5})
    assert cli.edge_stats(START, "restrict_const").visits >= 4  # the saver now sees the sum
    save_statistics(cli, overlay_path)  # nothing new: nothing added twice
    assert load_overlay(overlay_path).get(START, "restrict_const").visits == 4
    overlay_path.write_bytes(b"\xc1")  # unreadable: replaced, the search's outcomes kept
    editor.record_outcome(START, "fast_math", 2.0, 2.0, "sm_90")
    save_statistics(editor, overlay_path)
    assert load_overlay(overlay_path).get(START, "fast_math") == EdgeStats(1, 2.0, {"sm_90": 2.0})


def test_overlay_write_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "overlay.msgpack"
    save_overlay(Overlay({(START, "a"): EdgeStats(1, 1.0, {})}), path)
    before = path.read_bytes()

    def failing_replace(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError):
        save_overlay(Overlay({(START, "b"): EdgeStats(5, 0.0, {})}), path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["overlay.msgpack"]


@pytest.mark.parametrize(
    "content",
    [b"\xc1", msgpack.packb({"format": "nope"}), msgpack.packb({"format": "regrapht-graph-overlay", "version": 1,
                                                                 "edges": [["a", "b", -1, 0.0, {}]]})],
)
def test_corrupt_overlay(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "overlay.msgpack"
    path.write_bytes(content)
    with pytest.raises(InputError) as caught:
        load_overlay(path)
    assert caught.value.file == str(path)


def test_default_overlay_path(tmp_path: Path) -> None:
    from regrapht.graph import default_overlay_path

    assert default_overlay_path({"XDG_DATA_HOME": "/d"}, Path("/h")) == Path("/d/regrapht/graph-overlay.msgpack")
    assert default_overlay_path({}, Path("/h")) == Path("/h/.local/share/regrapht/graph-overlay.msgpack")
