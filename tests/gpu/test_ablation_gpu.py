"""The ablation's shared measurements on a real GPU (bench/ablation.py): every configuration and
seed of a task on one evaluator; a candidate two searches both judge gets one measurement, so
identical answers have identical timings; every answer is re-checked on fresh inputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from regrapht.validate.worker import GpuWorker

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "bench/corpus/train/axpby_int"


def test_identical_answers_of_different_configurations_have_identical_timings(gpu_worker: GpuWorker,
                                                                               tmp_path: Path) -> None:
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, "bench/ablation.py", str(TASK), "--out", str(tmp_path / "rows"),
                           "--configs", "rules:6", "mcgs:6:no-model", "greedy:6:no-model", "--seeds", "0", "1"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(p.read_text()) for p in (tmp_path / "rows").glob("*-axpby_int-axpby_int.json")]
    assert len(rows) == 6 and all(r["gpu"] and r["roofline"]["fraction"] for r in rows)
    by_source: dict[str, set[float]] = {}
    for row in rows:
        if row["best"] is not None:
            assert row["recheck"]["outcome"] in ("faster", "slower"), row["recheck"]  # verified again, fresh inputs
            by_source.setdefault(row["best"]["source"], set()).add(row["best"]["time_ms"])
    assert by_source and all(len(times) == 1 for times in by_source.values()), by_source
    cache = json.loads((tmp_path / "rows/cache-axpby_int.json").read_text())
    assert cache["search"]["hits"] > 0 and cache["recheck"]["misses"] >= 1
