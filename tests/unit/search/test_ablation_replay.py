"""bench/replay_ablation.py: searches replayed on stored verdicts find what the recorded searches
found, and a candidate the record lacks is counted as unmeasured, never as faster."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from regrapht.app.optimize import kernel_target
from regrapht.evaluation.runner import load_task
from regrapht.graph import open_graph
from regrapht.inputs import read_source
from regrapht.search import SearchTools, optimize
from regrapht.validate.measurements import candidate_digest
from regrapht.validate.types import Candidate, Evaluation, Timing

from .fakes import search_request

ROOT = Path(__file__).resolve().parents[3]
TASK = ROOT / "bench/corpus/train/log_softmax"
DEVICE = {"name": "NVIDIA H200", "cc": [9, 0], "l2_bytes": 62914560, "sms": 132, "total_bytes": 150 << 30,
          "driver": 13000, "max_threads_per_sm": 2048, "max_threads_per_block": 1024, "max_shared_per_block": 49152}


@dataclass
class SyntheticEvaluator:
    """Verdicts made up from each candidate's digest (0.5x-3x), recorded as bench/ablation.py stores them."""

    gpu_name: str = "synthetic"
    arch: str = "sm_90"
    device: dict[str, Any] = field(default_factory=lambda: dict(DEVICE))
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    no_device_reason: str = ""

    def hold_gpu(self) -> AbstractContextManager[None]:
        return nullcontext()

    def baseline(self) -> Timing:
        return Timing(1.0, 1.0, 1.0, 1)

    def evaluate(self, candidate: Candidate) -> Evaluation:
        digest = candidate_digest(candidate.source, candidate.launch)
        speedup = 0.5 + int(hashlib.sha256(digest.encode()).hexdigest()[:6], 16) / 0xFFFFFF * 2.5
        outcome = "faster" if speedup > 1.02 else "slower"
        self.entries[digest] = {"digest": digest, "outcome": outcome, "speedup": speedup, "median_ms": 1 / speedup}
        return Evaluation(outcome, "", Timing(1 / speedup, 1 / speedup, 1 / speedup, 1), speedup)


def record(configs: list[tuple[str, int]]) -> tuple[dict[str, float], dict[str, dict[str, Any]]]:
    task = load_task(TASK)
    source, _ = read_source(task.source_path)
    kernel = task.spec.kernels[0]
    evaluator = SyntheticEvaluator()
    found = {}
    for strategy, budget in configs:
        result = optimize(search_request(source, kernel.name, strategy, budget, 0), kernel_target(kernel),
                          SearchTools(evaluator, None, open_graph()))
        found[f"{strategy}-b{budget}"] = result.best.speedup if result.best is not None else 1.0
    return found, evaluator.entries


def replay(rows: Path, configs: list[str], out: Path) -> list[dict[str, Any]]:
    done = subprocess.run([sys.executable, "bench/replay_ablation.py", str(rows), "--configs", *configs,
                           "--seeds", "0", "--json", str(out)], cwd=ROOT, capture_output=True, text=True,
                          timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| rules-b12 |" in done.stdout
    return list(json.loads(out.read_text()))


def test_replayed_searches_find_what_the_recorded_ones_found(tmp_path: Path) -> None:
    found, entries = record([("rules", 12), ("mcgs", 12)])
    rows = tmp_path / "rows"
    rows.mkdir()
    summary = {"task": "log_softmax", "entries": list(entries.values()), "device": DEVICE}
    (rows / "cache-log_softmax.json").write_text(json.dumps(summary))
    replayed = replay(rows, ["rules:12", "mcgs:12:no-model"], tmp_path / "replayed.json")
    assert {r["config"]: r["speedup"] for r in replayed} == {"rules-b12": found["rules-b12"], "mcgs-nomodel-b12": found["mcgs-b12"]}
    assert all(r["unmeasured"] == 0 for r in replayed)

    # the rules sweep's answer forgotten: the replay cannot find it, and says it was unmeasured
    best = next(e for e in entries.values() if e["speedup"] == found["rules-b12"])
    summary["entries"] = [e for e in entries.values() if e is not best]
    (rows / "cache-log_softmax.json").write_text(json.dumps(summary))
    rules = next(r for r in replay(rows, ["rules:12"], tmp_path / "again.json") if r["config"] == "rules-b12")
    assert rules["unmeasured"] >= 1 and rules["speedup"] < best["speedup"]
