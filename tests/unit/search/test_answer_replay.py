"""bench/replay_answer_rule.py: an ablation's answers re-chosen from its logs by the product's rule."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))

import replay_answer_rule  # noqa: E402

LOG = """\
2026-11-30 14:14:02,199 regrapht.search.run: rms [1/4] block_per_row (one 128-thread block per row, CUB): faster 8.01x (compile 4 s)
2026-11-30 14:14:06,389 regrapht.search.run: rms [2/4] block_per_row+restrict_const (__restrict__ on pointer parameters): faster 8.05x
2026-11-30 14:14:06,389 regrapht.search.run: rms [3/4] block_per_row+restrict_const+loop_unrolling (#pragma unroll on 3 loop(s)): faster 8.07x
2026-11-30 14:14:06,389 regrapht.search.run: rms [4/4] launch_configuration (block 64 -> 128): slower 0.90x
t/rms mcgs-b12 seed 0: roofline fraction 0.5 (done, 1 s, measurements {})
2026-11-30 14:14:06,389 regrapht.search.run: rms [1/4] block_per_row (one warp per row): faster 5.00x
2026-11-30 14:14:06,389 regrapht.search.run: rms [2/4] block_per_row+restrict_const (__restrict__): faster 6.00x
t/rms rules-b12 seed 0: roofline fraction 0.4 (done, 1 s, measurements {})
"""


def test_the_replay_offers_the_simplest_answer_within_the_floor(tmp_path: Path) -> None:
    run = tmp_path / "run"
    (run / "rows").mkdir(parents=True)
    (run / "logs").mkdir()
    (run / "logs" / "t.log").write_text(LOG)
    base = {"task": "t", "kernel": "rms", "baseline": {"time_ms": 1.0}}
    rows = {
        "mcgs-b12-s0-t-rms.json": {**base, "config": "mcgs-b12", "seed": 0, "roofline": {"floor_ms": 0.0625, "fraction": 0.504375},
                                   "best": {"speedup": 8.07, "techniques": ["block_per_row", "restrict_const", "loop_unrolling"]}},
        "rules-b12-s0-t-rms.json": {**base, "config": "rules-b12", "seed": 0, "roofline": {"floor_ms": 0.0625, "fraction": 0.375},
                                    "best": {"speedup": 6.0, "techniques": ["block_per_row", "restrict_const"]}},
        "rules-b12-s1-t-rms.json": {**base, "config": "rules-b12", "seed": 1, "copied_from_seed": 0,
                                    "roofline": {"floor_ms": 0.0625, "fraction": 0.375},
                                    "best": {"speedup": 6.0, "techniques": ["block_per_row", "restrict_const"]}},
    }
    for name, row in rows.items():
        (run / "rows" / name).write_text(json.dumps(row))
    changes = replay_answer_rule.replay(run, tmp_path / "out")
    mcgs = json.loads((tmp_path / "out" / "mcgs-b12-s0-t-rms.json").read_text())
    # 8.01x is within 1% of 8.07x: the one-technique answer
    assert mcgs["best"]["techniques"] == ["block_per_row"] and mcgs["best"]["speedup"] == 8.01
    assert abs(mcgs["roofline"]["fraction"] - 0.0625 * 8.01) < 1e-12
    # 5x is not within 1% of 6x: unchanged, and the copied seed follows
    for seed in (0, 1):
        rules = json.loads((tmp_path / "out" / f"rules-b12-s{seed}-t-rms.json").read_text())
        assert rules["best"]["techniques"] == ["block_per_row", "restrict_const"] and rules["seed"] == seed
    assert changes == ["t mcgs-b12 s0: block_per_row+restrict_const+loop_unrolling 8.07x -> block_per_row 8.01x"]
