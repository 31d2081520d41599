"""Nsight Compute through the spec harness on the device: `regrapht bench --profile` on the
example saxpy reads DRAM and SM throughput, achieved occupancy, the top warp stalls and the rule
findings of one profiled launch (a memory-bound kernel: DRAM well above SM); `regrapht optimize
--profile` with that saved output names the techniques the profile raised (issue 31)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from regrapht.cli import main
from regrapht.search.profile_evidence import profile_boosts
from regrapht.techniques import technique_named
from regrapht.validate.profile_report import Profile, profile_from_json
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


def test_optimize_profile_names_the_raised_techniques(gpu_worker: object, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The real thing end to end: ncu profiles saxpy, the saved `bench --profile --json` output is
    given to `optimize --profile`, and the optimize JSON lists the boosts that profile gives
    (vectorized access among them where it is memory-bound), read by mcgs."""
    if find_ncu(os.environ) is None:
        pytest.skip("ncu not found")
    assert main(["bench", str(SAXPY), "--kernel", "saxpy", "--profile", "--json"]) == 0
    saved = tmp_path / "saxpy-profile.json"
    saved.write_text(capsys.readouterr().out)
    profile = profile_from_json(json.loads(saved.read_text()), "saxpy")
    assert isinstance(profile, Profile), profile
    code = main(["optimize", str(SAXPY), "--kernel", "saxpy", "--strategy", "mcgs", "--budget", "4", "--no-model",
                 "--profile", str(saved), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code in (0, 1), result
    shown = result["profile"]
    assert shown is not None and shown["applied"] is True and shown["kernel"] == "saxpy", result
    assert shown["boosts"] == json.loads(json.dumps(profile_boosts(profile).to_json()))["boosts"], (shown, profile)
    raised = [b["technique"] for b in shown["boosts"]]
    assert raised and all(technique_named(t).name == t for t in raised), (raised, profile)
    if shown["bottleneck"] == "memory":  # saxpy at the spec's size: DRAM near its peak
        assert "vectorized_access" in raised, (raised, profile)
    assert all(b["reasons"] for b in shown["boosts"]), shown
