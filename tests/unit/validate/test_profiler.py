"""Nsight Compute's report as the card reads it, without a GPU: the raw CSV page's metrics, the
rule findings of the details page with the technique each maps to, the tool found beside nvcc,
and `bench --profile` saying why nothing was profiled here (tests/gpu/test_profile_gpu.py
profiles a real launch on the H200)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from regrapht.cli import main
from regrapht.validate.profiler import (
    METRICS,
    find_ncu,
    parse_raw,
    parse_rules,
    profile_of,
    technique_for_rule,
)

RAW = '''"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","dram__throughput.avg.pct_of_peak_sustained_elapsed","sm__throughput.avg.pct_of_peak_sustained_elapsed","sm__warps_active.avg.pct_of_peak_sustained_active","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"
"","","","","","","","%","%","%","",""
"0","4242","python3","127.0.0.1","_Z5saxpyifPfS_","1","7","66.12","18.4","74.9","45.01","0"
'''
DETAILS = """\
  saxpy(int, float, float *, float *) (167773, 1, 1)x(100, 1, 1), Context 1, Stream 7, Device 0, CC 9.0
    Section: GPU Speed Of Light Throughput
    ----------------------- ----------- ------------
    Metric Name             Metric Unit Metric Value
    ----------------------- ----------- ------------
    DRAM Throughput                   %        66.12
    ----------------------- ----------- ------------

    OPT   This kernel grid is too small to fill the available resources on this device, resulting in only 0.4
          full waves across all SMs. Look at Launch Statistics for more details.

    Section: Warp State Statistics
    INF   On average, each warp of this kernel spends 45.0 cycles being stalled waiting for a scoreboard
          dependency on a L1TEX (local, global, surface, texture) operation.
    WRN   Uncoalesced global accesses: 50% of the sectors are excessive.
"""


def test_the_raw_page_gives_the_launchs_metrics() -> None:
    metrics = parse_raw(RAW, "_Z5saxpyifPfS_")
    assert metrics[METRICS["dram_pct"]] == 66.12 and metrics[METRICS["occupancy_pct"]] == 74.9
    assert parse_raw("no csv here", "k") == {}


def test_rules_are_read_whole_and_mapped_to_techniques() -> None:
    rules = parse_rules(DETAILS)
    assert [r.kind for r in rules] == ["OPT", "INF", "WRN"]
    assert rules[0].text.startswith("This kernel grid is too small") and rules[0].text.endswith("more details.")
    assert [r.technique for r in rules] == ["launch_configuration", "vectorized_access", "memory_coalescing"]
    assert technique_for_rule("nothing the graph knows") == ""


def test_the_profile_ranks_stalls_and_drops_zeros() -> None:
    profile = profile_of("saxpy", parse_raw(RAW, "_Z5saxpyifPfS_"), DETAILS)
    assert profile.stalls == (("long_scoreboard", 45.01),) and profile.sm_pct == 18.4
    assert json.loads(json.dumps(profile.to_json()))["rules"][2]["technique"] == "memory_coalescing"


def test_ncu_is_found_beside_nvcc(tmp_path: Path) -> None:
    bin_dir = tmp_path / "cuda" / "bin"
    bin_dir.mkdir(parents=True)
    for tool in ("nvcc", "ncu"):
        (bin_dir / tool).write_text("#!/bin/sh\n")
        os.chmod(bin_dir / tool, 0o755)
    assert find_ncu({"PATH": str(tmp_path), "CUDA_HOME": str(tmp_path / "cuda")}) == bin_dir / "ncu"


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_bench_profile_says_why_nothing_was_profiled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("REGRAPHT_CACHE_DIR", str(tmp_path / "cache"))
    saxpy = Path(__file__).resolve().parents[3] / "examples" / "saxpy.cu"
    assert main(["bench", str(saxpy), "--kernel", "saxpy", "--profile", "--json"]) == 0
    profile = json.loads(capsys.readouterr().out)["profile"]
    if "error" in profile:  # no device or no ncu here: said, not a crash
        assert profile["error"]
    else:
        assert profile["dram_pct"] is not None


def test_the_card_section_and_the_findings_of_a_profile() -> None:
    from regrapht.lsp.features.validation import PROFILE_SECTION, profile_findings, profile_section
    from regrapht.text import Span
    from regrapht.validate.profiler import ProfileFailure

    profile = profile_of("saxpy", parse_raw(RAW, "_Z5saxpyifPfS_"), DETAILS)
    section = profile_section(profile)
    assert section.title == PROFILE_SECTION
    assert section.body.startswith("DRAM 66% of peak, SM 18%, achieved occupancy 75% (one launch)")
    assert "long scoreboard 45.01 cycles per issued instruction" in section.body
    assert "- WRN: Uncoalesced global accesses" in section.body and "(`memory_coalescing`)" in section.body
    findings = profile_findings(Span.of(4, 16, 4, 21), "saxpy", profile)
    assert [f.technique for f in findings] == ["launch_configuration", "memory_coalescing"]  # OPT and WRN, not INF
    assert findings[1].message.startswith("Nsight Compute: Uncoalesced") and "Optimize can apply it" in findings[1].message
    failed = profile_section(ProfileFailure("profiling is not permitted on this GPU (ERR_NVGPUCTRPERM): ..."))
    assert failed.body.startswith("Not profiled: profiling is not permitted")


def test_validation_keeps_each_kernels_profile_with_the_digest_of_the_text_it_measured() -> None:
    """`publish` (the validation feature) records the profile in the kernel's facts with the text's
    digest, for Optimize (app/jobs.py `profile_of_text`); a failed profile keeps none."""
    from regrapht.app.jobs import profile_of_text
    from regrapht.lsp.features.validation import publish
    from regrapht.lsp.state import ServerState
    from regrapht.validate.background import FileValidation
    from regrapht.validate.profile_report import ProfileFailure, source_digest

    state = ServerState()
    text = "__global__ void saxpy(int n, float a, float *x, float *y) {}\n"
    document = state.open("untitled:saxpy.cu", text, 1)
    profile = profile_of("saxpy", parse_raw(RAW, "_Z5saxpyifPfS_"), DETAILS)
    answer = publish(state, document.uri, Path("saxpy.cu"), FileValidation((), ()), (), {"saxpy": profile},
                     source_digest(text))
    facts = state.facts_for(document.uri, "saxpy")
    assert facts is not None and facts.profile is not None and facts.profile.profile == profile
    assert profile_of_text(facts, text) == profile and profile_of_text(facts, text + "// edited\n") is None
    assert answer["profiles"]["saxpy"]["dram_pct"] == 66.12
    publish(state, document.uri, Path("saxpy.cu"), FileValidation((), ()), (), {"saxpy": ProfileFailure("no ncu")},
            source_digest(text))
    again = state.facts_for(document.uri, "saxpy")
    assert again is not None and again.profile is None and profile_of_text(again, text) is None
