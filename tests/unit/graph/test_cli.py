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
    assert set(stats["speedup"]) == {"median", "max"}


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


def test_bundled_file_is_up_to_date(tmp_path: Path) -> None:
    out = tmp_path / "rebuilt.msgpack"
    run("graph", "build", str(STARTER), "-o", str(out))
    assert out.read_bytes() == (STARTER.parents[1] / "reasoning-graph.msgpack").read_bytes()
