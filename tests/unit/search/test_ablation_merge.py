"""bench/merge_ablation.py: the ablation table from per-search rows (synthetic rows here)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def row(config: str, strategy: str, budget: int, seed: int, task: str, fraction: float | None, speedup: float,
        **extra: object) -> dict[str, object]:
    return {"config": config, "strategy": strategy, "budget": budget, "seed": seed, "no_model": "nomodel" in config,
            "task": task, "kernel": "k", "roofline": {"fraction": fraction},
            "best": {"speedup": speedup} if speedup > 1 else None, **extra}


def test_table_geomeans_per_seed_over_common_kernels_and_verdicts(tmp_path: Path) -> None:
    rows = []
    for seed, (a, b) in enumerate([(0.5, 0.2), (0.4, 0.2), (0.6, 0.2)]):
        rows += [row("mcgs-b12", "mcgs", 12, seed, "t1", a, 4.0, time_limited=seed == 0,
                     model_calls={"rewrite": {"calls": 2, "correct": 1, "faster": 0}, "choose": {"calls": 1}}),
                 row("mcgs-b12", "mcgs", 12, seed, "t2", 0.8, 2.0),
                 row("rules-b12", "rules", 12, seed, "t1", b, 1.5), row("rules-b12", "rules", 12, seed, "t2", 0.8, 2.0)]
    rows.append(row("rules-b12", "rules", 12, 0, "t3", 0.9, 3.0))  # t3 not finished by mcgs: left out
    for i, r in enumerate(rows):
        (tmp_path / f"{i}.json").write_text(json.dumps(r))
    done = subprocess.run([sys.executable, str(ROOT / "bench/merge_ablation.py"), str(tmp_path), "--json",
                           str(tmp_path / "out.json")], capture_output=True, text=True, check=True)
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["tasks"] == ["t1/k", "t2/k"] and out["tasks_seen"] == 3
    mcgs = out["configs"]["mcgs-b12"]
    expected = [math.sqrt(f * 0.8) for f in (0.5, 0.4, 0.6)]
    assert all(math.isclose(a, b) for a, b in zip(mcgs["fraction_per_seed"], expected, strict=True))
    assert math.isclose(mcgs["fraction_min"], expected[1]) and math.isclose(mcgs["fraction_max"], expected[2])
    assert mcgs["time_limited"] == 1 and mcgs["model_answers"] == {"asked": 6, "correct": 3, "faster": 0}
    assert out["mcgs_ahead"] == {"12": True}
    assert "budget 12: mcgs" in done.stdout and ">= every baseline" in done.stdout
    assert "| mcgs-b12 | mcgs | 12 | yes |" in done.stdout and "| 1 of 6 |" in done.stdout


def test_no_rows_is_an_error(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench/merge_ablation.py"), str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 1 and "no ablation rows" in done.stderr


def test_first_answer_summary_counts_misses_as_slowest(tmp_path: Path) -> None:
    """p50/p95 over the kernels that get a suggestion at all: a kernel cut at the limit counts as
    slowest, a kernel whose whole search found nothing faster is counted apart."""
    rows = [{"task": f"t{i}", "kernel": "k", "gpu": "H200", "first_s": float(i), "search_first_s": i - 0.5,
             "first": "verified 2.00x faster: shared_memory_tiling", "outcome": "found"} for i in range(1, 20)]
    rows.append({"task": "t20", "kernel": "k", "gpu": "H200", "first_s": None, "search_first_s": None,
                 "outcome": "limit"})
    rows.append({"task": "t21", "kernel": "k", "gpu": "H200", "first_s": None, "search_first_s": None,
                 "outcome": "none"})
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = subprocess.run([sys.executable, str(ROOT / "bench/first_answer.py"), "summary", str(path), "--md",
                           str(tmp_path / "out.md")], capture_output=True, text=True, check=True)
    assert "21 kernels (GPU H200): 19 got one, 1 got none from the whole search" in done.stdout
    assert "1 were cut at the limit" in done.stdout
    # over 20 kernels (t21 has no suggestion to wait for): nearest rank 10th and 19th
    assert "over the 20 kernels that get a suggestion at all" in done.stdout
    assert "p50 10.0 s, p95 19.0 s, within 10 s: 10 of 20" in done.stdout
    assert "| t20/k | - | none within the limit |" in done.stdout
    assert "| t21/k | - | no faster version found by the whole search |" in done.stdout
    assert (tmp_path / "out.md").read_text() == done.stdout
    rows[18]["first_s"], rows[18]["outcome"] = None, "limit"  # two misses of 20: p95 falls on one
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = subprocess.run([sys.executable, str(ROOT / "bench/first_answer.py"), "summary", str(path)],
                          capture_output=True, text=True, check=True)
    assert "p95 none (a kernel cut at the limit falls there)" in done.stdout


def test_verdicts_budget_used_and_kernel_differences(tmp_path: Path) -> None:
    """A lead of 0.01% is a tie, not "ahead"; searches that stop before their budget are counted;
    every kernel where mcgs and a baseline differ is listed with the paths each offered."""
    rows = []
    for seed in (0, 1):
        used = {"generated": 12, "compiled": 12, "correct": 12, "faster": 3}
        rows += [row("mcgs-b12", "mcgs", 12, seed, "t1", 0.50, 4.0, candidates=used,
                     best={"speedup": 4.0, "techniques": ["launch_configuration", "block_per_row"]}),
                 row("mcgs-b12", "mcgs", 12, seed, "t2", 0.80, 2.0, candidates=used),
                 row("rules-b12", "rules", 12, seed, "t1", 0.49, 3.9, candidates={**used, "generated": 5},
                     best={"speedup": 3.9, "techniques": ["block_per_row"]}),
                 row("rules-b12", "rules", 12, seed, "t2", 0.8001, 2.0, candidates={**used, "generated": 6}),
                 row("mcgs-b6", "mcgs", 6, seed, "t1", 0.50, 4.0), row("mcgs-b6", "mcgs", 6, seed, "t2", 0.80, 2.0),
                 row("rules-b6", "rules", 6, seed, "t1", 0.40, 3.0), row("rules-b6", "rules", 6, seed, "t2", 0.80, 2.0)]
    for i, r in enumerate(rows):
        (tmp_path / f"{i}.json").write_text(json.dumps(r))
    done = subprocess.run([sys.executable, str(ROOT / "bench/merge_ablation.py"), str(tmp_path), "--json",
                           str(tmp_path / "out.json")], capture_output=True, text=True, check=True)
    out = json.loads((tmp_path / "out.json").read_text())
    # b12: sqrt(.5*.8) vs sqrt(.49*.8001): +1.0% -> ahead; b6: sqrt(.5*.8) vs sqrt(.4*.8): +11.8% -> ahead
    assert out["verdicts"]["12"]["verdict"] == "ahead" and out["verdicts"]["6"]["verdict"] == "ahead"
    assert out["verdicts"]["12"]["best_baseline"] == "rules-b12"
    assert "| rules-b12 | 5.5 | 6 | 4 of 4 |" in done.stdout and "| mcgs-b12 | 12.0 | 12 | 0 of 4 |" in done.stdout
    assert [(d["budget"], d["baseline"], d["kernel"]) for d in out["differences"]] == [
        (6, "rules-b6", "t1/k"), (12, "rules-b12", "t1/k")]  # t2 differs by 0.01%: not listed
    assert "| 12 | rules-b12 | t1/k | 0.5000 | 0.4900 | launch_configuration+block_per_row | block_per_row |" in done.stdout
    for r in rows:
        if r["config"] == "rules-b12" and r["task"] == "t1":
            r["roofline"] = {"fraction": 0.4999}
    for i, r in enumerate(rows):
        (tmp_path / f"{i}.json").write_text(json.dumps(r))
    subprocess.run([sys.executable, str(ROOT / "bench/merge_ablation.py"), str(tmp_path), "--json",
                    str(tmp_path / "out.json")], capture_output=True, text=True, check=True)
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["verdicts"]["12"]["verdict"] == "tied" and out["mcgs_ahead"]["12"] is True
