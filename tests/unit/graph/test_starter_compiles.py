"""Every code example in the hand-written trajectories is real CUDA that nvcc compiles (distilled
trajectories, `distilled-*.jsonl`, were compiled, checked and timed when they were made)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

TRAJECTORIES = Path(__file__).resolve().parents[3] / "graph" / "trajectories"
HAND_WRITTEN = sorted(p for p in TRAJECTORIES.glob("*.jsonl") if not p.name.startswith("distilled"))


def _examples() -> list[tuple[str, str]]:
    found = []
    for path in HAND_WRITTEN:
        for line_number, line in enumerate(path.read_text().splitlines(), 1):
            trajectory = json.loads(line)
            found.append((f"{path.stem}-line{line_number}-source", trajectory["source"]))
            for step_index, step in enumerate(trajectory["steps"]):
                for key in ("code_before", "code_after"):
                    if step.get(key):
                        found.append((f"{path.stem}-line{line_number}-step{step_index}-{key}", step[key]))
    return found


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
@pytest.mark.parametrize(("label", "code"), _examples(), ids=[label for label, _ in _examples()])
def test_starter_example_compiles(label: str, code: str, tmp_path: Path) -> None:
    source = tmp_path / f"{label}.cu"
    source.write_text("#include <cuda_runtime.h>\n" + code)
    result = subprocess.run(
        ["nvcc", "-arch=sm_90", "-cubin", "-o", str(tmp_path / "out.cubin"), str(source)],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stderr
