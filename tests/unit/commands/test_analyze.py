"""`regrapht analyze`: JSON per the CLI contract, compiler-style text, exit codes."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from regrapht.commands import analyze
from regrapht.errors import InputError

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    analyze.register(parser.add_subparsers())
    return parser.parse_args(["analyze", *argv])


def test_json_output_follows_the_contract() -> None:
    out = io.StringIO()
    args = _args(str(EXAMPLES / "saxpy.cu"), "--json")
    assert args.handler(args, out=out, err=io.StringIO()) == 0
    findings = json.loads(out.getvalue())
    literal = next(f for f in findings if f["rule"] == "R007")
    # `y[i] * 1.0` is an exact scaling that nvcc narrows to float: a hint, not a warning.
    assert literal == {
        "rule": "R007", "severity": "hint", "line": 9, "column": 34, "end_line": 9, "end_column": 37,
        "kernel": "saxpy", "message": literal["message"], "technique": "fast_math", "doc": "rules/R007.md",
    }


def test_json_carries_the_related_locations_of_a_grouped_finding(tmp_path: Path) -> None:
    path = tmp_path / "blend.cu"
    path.write_text("__global__ void k(float *y) { int i = threadIdx.x; float v = y[i + 1];\n"
                    "    y[i] = 0.3 * y[i] + 0.7 * v;\n}\n")
    out = io.StringIO()
    args = _args(str(path), "--json")
    assert args.handler(args, out=out, err=io.StringIO()) == 0
    (literal,) = [f for f in json.loads(out.getvalue()) if f["rule"] == "R007"]
    assert (literal["line"], literal["column"]) == (2, 12)
    assert literal["related"] == [{"line": 2, "column": 25, "end_line": 2, "end_column": 28,
                                   "message": "`0.7` on the same line, also without `f`"}]
    others = [f for f in json.loads(out.getvalue()) if f["rule"] != "R007"]
    assert all("related" not in f for f in others)  # the key is absent where there is nothing related


def test_plain_output_is_compiler_style() -> None:
    out = io.StringIO()
    path = str(EXAMPLES / "saxpy.cu")
    args = _args(path)
    assert args.handler(args, out=out, err=io.StringIO()) == 0
    line = next(line for line in out.getvalue().splitlines() if "R007" in line)
    assert line.startswith(f"{path}:9:34: hint: ") and line.endswith("[R007 fast_math]")


def test_unreadable_file_is_an_input_error(tmp_path: Path) -> None:
    missing = tmp_path / "missing.cu"
    args = _args(str(missing))
    with pytest.raises(InputError) as error:
        args.handler(args, out=io.StringIO(), err=io.StringIO())
    assert str(missing) in str(error.value)


def test_non_utf8_file_warns_and_succeeds(tmp_path: Path) -> None:
    path = tmp_path / "latin1.cu"
    path.write_bytes(b"// caf\xe9\n__global__ void k(float *y) { y[threadIdx.x] *= 2.1; }\n")
    out, err = io.StringIO(), io.StringIO()
    args = _args(str(path), "--json")
    assert args.handler(args, out=out, err=err) == 0
    assert "UTF-8" in err.getvalue()
    assert any(f["rule"] == "R007" for f in json.loads(out.getvalue()))
