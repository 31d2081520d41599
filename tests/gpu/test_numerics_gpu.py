"""The precision guard on the device: `regrapht optimize` of a float kernel written with double
literals and `tanh` finds the float version and says it approximates (`best.numerics`), and with
`--no-fast-math` never offers it; a reduction's answer over floats says it reorders sums."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from regrapht.cli import main

pytestmark = pytest.mark.gpu

GELU = """\
__global__ void gelu(int n, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = 0.5 * v * (1.0 + tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
    }
}
"""
GELU_SPEC = """\
[[kernel]]
name = "gelu"
grid = ["(n + 255) / 256"]
block = [256]
rtol = 1e-3
atol = 1e-4

[[kernel.arg]]
name = "n"
type = "int"
value = "1 << 24"

[[kernel.arg]]
name = "x"
type = "const float*"
count = "n"
init = "uniform(-3, 3)"
role = "in"

[[kernel.arg]]
name = "y"
type = "float*"
count = "n"
role = "out"
"""


def optimize_json(tmp_path: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> dict[str, object]:
    source = tmp_path / "gelu.cu"
    source.write_text(GELU, encoding="utf-8")
    (tmp_path / "gelu.regrapht.toml").write_text(GELU_SPEC, encoding="utf-8")
    capsys.readouterr()
    assert main(["optimize", str(source), "--kernel", "gelu", "--strategy", "rules", "--budget", "24",
                 "--no-model", "--json", *flags]) in (0, 1)
    return json.loads(capsys.readouterr().out)


def test_float_math_is_found_and_marked_and_left_out_when_asked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], gpu_worker: object) -> None:
    allowed = optimize_json(tmp_path, capsys)
    best = allowed["best"]
    assert isinstance(best, dict), allowed["reason"]
    assert "fast_math" in best["techniques"] and best["numerics"] == "approximates", best["techniques"]
    assert best["sanitizer"] == "clean (memcheck, racecheck, synccheck)", best["sanitizer"]  # the gate ran
    refused = optimize_json(tmp_path, capsys, "--no-fast-math")
    other = refused["best"]
    assert other is None or ("fast_math" not in other["techniques"] and other["numerics"] != "approximates")
