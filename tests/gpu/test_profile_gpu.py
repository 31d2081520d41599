"""Nsight Compute through the spec harness on the device: `regrapht bench --profile` on the
example saxpy reads DRAM and SM throughput, achieved occupancy, the top warp stalls and the rule
findings of one profiled launch (a memory-bound kernel: DRAM well above SM)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from regrapht.cli import main
from regrapht.validate.profiler import find_ncu

pytestmark = pytest.mark.gpu
SAXPY = Path(__file__).resolve().parents[2] / "examples" / "saxpy.cu"


def test_bench_profile_reads_one_launch(gpu_worker: object, capsys: pytest.CaptureFixture[str]) -> None:
    if find_ncu(os.environ) is None:
        pytest.skip("ncu not found")
    assert main(["bench", str(SAXPY), "--kernel", "saxpy", "--profile", "--json"]) == 0
    profile = json.loads(capsys.readouterr().out)["profile"]
    assert "error" not in profile, profile
    assert profile["dram_pct"] is not None and profile["dram_pct"] > 20, profile
    assert profile["sm_pct"] is not None and profile["dram_pct"] > profile["sm_pct"], profile
    assert profile["occupancy_pct"] is not None and profile["occupancy_pct"] > 0, profile
    assert profile["stalls"], profile
    assert profile["rules"] and all(r["text"] for r in profile["rules"]), profile
