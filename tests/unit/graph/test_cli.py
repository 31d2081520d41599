"""`regrapht graph` subcommands, run through the module's own parser."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from regrapht.commands import graph as graph_command
from regrapht.errors import InputError

STARTER = Path(__file__).resolve().parents[3] / "graph" / "trajectories" / "starter.jsonl"


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="regrapht")
    graph_command.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    return int(args.handler(args))


@pytest.fixture()
def built(tmp_path: Path) -> Path:
    out = tmp_path / "g.msgpack"
    assert run("graph", "build", str(STARTER), "-o", str(out), "--json-out", str(tmp_path / "g.json")) == 0
    return out


def test_build_and_stats_json(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (built.parent / "g.json").is_file()
    capsys.readouterr()
    assert run("graph", "stats", "--graph", str(built), "--json") == 0
    stats = json.loads(capsys.readouterr().out)
    assert set(stats) >= {"vertices", "edges", "examples", "trajectories", "techniques", "speedup"}
    assert stats["trajectories"] == 16 and stats["vertices"] == len(stats["techniques"]) + 1
    assert set(stats["speedup"]) >= {"median", "max"}  # the contract's keys, plus the histogram
    assert sum(stats["speedup"]["histogram"].values()) == sum(
        1 for line in STARTER.read_text().splitlines() for step in json.loads(line)["steps"] if "speedup" in step)


def test_stats_of_bundled_graph(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("graph", "stats") == 0
    assert "techniques:" in capsys.readouterr().out


def test_show(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert run("graph", "show", "Tiling", "--graph", str(built), "--json") == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["technique"] == "shared_memory_tiling"
    assert {e["to"] for e in shown["out"]} == {"bank_conflict_padding", "loop_unrolling", "restrict_const"}
    assert any(e["from"] == "__start__" and e["examples"] == 3 for e in shown["in"])
    assert run("graph", "show", "shared_memory_tiling", "--graph", str(built)) == 0
    assert "followed by:" in capsys.readouterr().out


def test_show_unknown_technique(built: Path) -> None:
    with pytest.raises(InputError, match="unknown technique 'teleportation'"):
        run("graph", "show", "teleportation", "--graph", str(built))


def test_export_dot_and_json(built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dot = tmp_path / "g.dot"
    assert run("graph", "export", "--dot", "--graph", str(built), "-o", str(dot)) == 0
    text = dot.read_text()
    assert text.startswith("digraph reasoning_graph {") and '"__start__" -> "shared_memory_tiling"' in text
    capsys.readouterr()
    assert run("graph", "export", "--json", "--graph", str(built)) == 0
    assert json.loads(capsys.readouterr().out)["format"] == "regrapht-reasoning-graph"


def test_bad_trajectory_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kernel": "k", "source": "s", "steps": [{"technique": "t"}]}\n')
    with pytest.raises(InputError) as caught:
        run("graph", "build", str(bad), "-o", str(tmp_path / "o.msgpack"))
    assert str(caught.value).startswith(f"{bad}:1: steps[0].rationale")


def test_stats_show_the_speedup_distribution(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    steps = [{"technique": t, "rationale": "r", "description": "d", "code_after": t, "speedup": x, "arch": "sm_90"}
             for t, x in (("shared_memory_tiling", 6.0), ("loop_unrolling", 1.05), ("launch_configuration", 0.9))]
    trajectories = tmp_path / "t.jsonl"
    trajectories.write_text(json.dumps({"kernel": "k", "source": "s", "steps": steps}) + "\n")
    run("graph", "build", str(trajectories), "-o", str(tmp_path / "g.msgpack"))
    capsys.readouterr()
    assert run("graph", "stats", "--graph", str(tmp_path / "g.msgpack")) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "step speedups measured in the examples:" in lines
    assert any(line.split()[:2] == ["4-10x", "1"] and line.endswith("#" * 40) for line in lines)
    assert any(line.split()[:2] == ["<1x", "1"] for line in lines)
    capsys.readouterr()
    run("graph", "stats", "--graph", str(tmp_path / "g.msgpack"), "--json")
    speedup = json.loads(capsys.readouterr().out)["speedup"]
    assert speedup["median"] == 1.05 and speedup["max"] == 6.0 and speedup["histogram"]["1-1.1"] == 1


def test_bundled_file_is_up_to_date(tmp_path: Path) -> None:
    """The bundled graph is built from every trajectory file (hand-written and distilled)."""
    out = tmp_path / "rebuilt.msgpack"
    run("graph", "build", *sorted(str(p) for p in STARTER.parent.glob("*.jsonl")), "-o", str(out))
    assert out.read_bytes() == (STARTER.parents[1] / "reasoning-graph.msgpack").read_bytes()


def test_export_svg_pictures_every_technique_and_edge(built: Path, tmp_path: Path) -> None:
    import xml.dom.minidom

    from regrapht.graph.store import load_graph

    out = tmp_path / "g.svg"
    assert run("graph", "export", "--svg", "--graph", str(built), "-o", str(out)) == 0
    document = xml.dom.minidom.parse(str(out))
    texts = {t.firstChild.data for t in document.getElementsByTagName("text") if t.firstChild is not None}
    graph = load_graph(built)
    assert set(graph.techniques()) <= texts
    assert len(document.getElementsByTagName("path")) == len(graph.edges()) + 1  # + the arrow head


def test_bundled_picture_is_up_to_date(tmp_path: Path) -> None:
    out = tmp_path / "g.svg"
    run("graph", "export", "--svg", "-o", str(out))
    assert out.read_text() == (STARTER.parents[1] / "reasoning-graph.svg").read_text()
