"""Every code example in the hand-written trajectories is real CUDA that nvcc compiles (distilled
trajectories, `distilled-*.jsonl`, were compiled, checked and timed when they were made)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from nvcc_check import compile_together

TRAJECTORIES = Path(__file__).resolve().parents[3] / "graph" / "trajectories"
HAND_WRITTEN = sorted(p for p in TRAJECTORIES.glob("*.jsonl") if not p.name.startswith("distilled"))


def _examples(path: Path) -> list[tuple[str, str]]:
    found = []
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
@pytest.mark.parametrize("path", HAND_WRITTEN, ids=[p.stem for p in HAND_WRITTEN])
def test_starter_examples_compile(path: Path, tmp_path: Path) -> None:
    """Each example as if compiled alone (`compile_together`: examples of the same includes share
    one nvcc run, a namespace each); a failure names the example (file, line, step)."""
    examples = _examples(path)
    assert examples, path
    compile_together(["#include <cuda_runtime.h>\n" + code for _, code in examples], tmp_path, path.stem,
                     strict=False, labels=[label for label, _ in examples])
