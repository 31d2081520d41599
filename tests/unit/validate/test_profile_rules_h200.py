"""Nsight Compute's rule texts of the real H200 run, read for people: the card's section and the
P001 findings of `examples/saxpy.cu`, before (as recorded in
tests/data/gpu-recordings/saxpy-hover-h200-077a863.json, the card before the fix) and after. The details page
(tests/data/ncu/saxpy-h200-details.txt) is reconstructed from that recording: the rule texts
laid out again the way ncu prints them, its padding included."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

from regrapht.lsp.features.validation import PROFILE_RULE, profile_findings, profile_section
from regrapht.text import Span
from regrapht.validate.profile_report import ProfileRule, RuleEstimate, parse_profile, strongest_first
from regrapht.validate.profiler import METRICS, parse_rules, profile_of

DATA = Path(__file__).resolve().parents[2] / "data"
DETAILS = (DATA / "ncu" / "saxpy-h200-details.txt").read_text(encoding="utf-8")
RECORDED = json.loads((DATA / "gpu-recordings" / "saxpy-hover-h200-077a863.json").read_text(encoding="utf-8"))
METRICS_H200 = {METRICS["dram_pct"]: 36.0, METRICS["sm_pct"]: 32.0, METRICS["occupancy_pct"]: 49.0}


def recorded_p001() -> list[str]:
    return [d["message"] for d in RECORDED["diagnostics"] if d["code"] == PROFILE_RULE]


def test_the_reconstruction_is_what_the_old_server_read_from_ncu() -> None:
    """The fixture parses to the recorded texts, but for the runs of spaces (collapsed now)."""
    recorded = [re.sub(r" \(technique: \w+; Optimize can apply it\)$", "", m).removeprefix("Nsight Compute: ")
                for m in recorded_p001()]
    parsed = [r.text for r in parse_rules(DETAILS) if r.kind in ("OPT", "WRN")]
    assert parsed == [" ".join(t.split()) for t in recorded]


def test_before_the_recorded_texts_have_runs_of_spaces_and_the_estimate_inside_the_sentence() -> None:
    card = RECORDED["hover"]["contents"]["value"]
    assert "relative to the peak            performance" in card
    assert "- OPT: Est. Local Speedup: 79.95%      " in card and "- WRN: The optional metric" in card
    assert len(recorded_p001()) == 6  # 6 P001 infos for one kernel
    assert "**Compiled with**: `none`" in card


def test_rule_texts_have_single_spaces_and_the_estimate_apart() -> None:
    rules = parse_rules(DETAILS)
    assert not any("  " in r.text for r in rules)
    stall = next(r for r in rules if "scoreboard" in r.text)
    assert stall.text.startswith("Est. Local Speedup: 79.95% On average")  # ncu's text is kept whole
    assert stall.estimate == RuleEstimate(79.95, "local")
    assert stall.prose.startswith("On average, each warp of this workload spends 40.4 cycles")
    assert stall.shown().endswith("two instructions. (ncu estimates up to 80% local speedup)")
    warps = next(r for r in rules if r.text.startswith("Est. Speedup: 8.369%"))
    assert warps.estimate == RuleEstimate(8.369, "global") and "(ncu estimates up to 8.4% speedup)" in warps.shown()


def test_notes_about_ncu_itself_are_told_from_rules_about_the_kernel() -> None:
    about_tool = [r.kind for r in parse_rules(DETAILS) if r.about_tool]
    assert about_tool == ["WRN", "INF"]  # the missing optional metric; the pointer to the sampling table
    assert ProfileRule("WRN", "The metric foo__bar was not collected. Enable the SourceCounters section for more "
                              "details.", "").about_tool
    assert ProfileRule("INF", "See the Memory Workload Analysis section for the details of each cache.", "").about_tool
    assert not ProfileRule("OPT", "Uncoalesced global accesses: 50% of the sectors are excessive. See the "
                                  "Profiling Guide for more details.", "memory_coalescing").about_tool


def test_pointers_elsewhere_in_ncus_report_are_left_out_of_a_rules_summary() -> None:
    rules = {r.technique + r.kind: r for r in parse_rules(DETAILS)}
    low_throughput = rules["vectorized_accessOPT"]
    assert low_throughput.text.endswith("Look at Scheduler Statistics and Warp State Statistics for potential reasons.")
    assert low_throughput.summary.endswith("typically indicate latency issues.")
    occupancy = next(r for r in parse_rules(DETAILS) if "achieved occupancy (48.8%)" in r.text)
    assert "https://" in occupancy.text and "https://" not in occupancy.summary


def test_the_rules_go_the_largest_estimate_first() -> None:
    ordered = strongest_first(parse_rules(DETAILS))
    assert [r.estimate.percent if r.estimate else None for r in ordered] == [79.95, 51.16, 21.88, 8.369, None]


def test_after_the_card_section_reads_as_a_cuda_developer_expects() -> None:
    body = profile_section(profile_of("saxpy", METRICS_H200, DETAILS)).body
    assert body.startswith("DRAM 36% of peak, SM 32%, achieved occupancy 49% (one launch)")
    lines = [line for line in body.split("\n\n") if line.startswith("- ")]
    assert lines[0].startswith("- OPT: On average, each warp of this workload spends 40.4 cycles")
    assert lines[0].endswith("(ncu estimates up to 80% local speedup; `memory_coalescing`)")
    assert len(lines) == 4 and body.endswith("and 1 more of ncu's rules")
    assert "  " not in body and "Est." not in body and "optional metric" not in body and "Warp Stall Sampling" not in body


def test_after_one_finding_per_technique_from_its_strongest_rule() -> None:
    findings = profile_findings(Span.of(4, 16, 4, 21), "saxpy", profile_of("saxpy", METRICS_H200, DETAILS))
    assert [f.technique for f in findings] == ["memory_coalescing", "launch_configuration", "divergence_reduction",
                                               "vectorized_access"]
    occupancy = findings[1].message
    assert occupancy.startswith("Nsight Compute: The difference between calculated theoretical (100.0%)")
    assert occupancy.endswith("(ncu estimates up to 51% local speedup; technique: launch_configuration; "
                              "Optimize can apply it)")
    assert all(f.rule == PROFILE_RULE and f.severity == "information" for f in findings)


def test_a_saved_profile_of_the_old_shape_reads_the_same() -> None:
    """A profile saved before (text with its padding, no summary keys) shows the same card."""
    fresh = profile_of("saxpy", METRICS_H200, DETAILS)
    saved = fresh.to_json()
    assert parse_profile(json.loads(json.dumps(saved))) == fresh  # the added keys read back (optimize --profile)
    saved_rules = saved["rules"]
    assert isinstance(saved_rules, list) and {"summary", "estimate_pct", "estimate_scope", "about_tool"} <= set(saved_rules[0])
    old = {**saved, "rules": [{"kind": "OPT", "text": "Est. Local Speedup: 79.95%          On average, each warp",
                               "technique": "memory_coalescing"}]}
    again = parse_profile(old)
    assert again.outcome == "profiled" and again.rules[0].shown() == ("On average, each warp (ncu estimates up to "
                                                                       "80% local speedup)")


def test_after_the_card_names_no_flags_when_the_compile_added_none() -> None:
    """The recording's "**Compiled with**: `none`": nvcc's defaults are no flags to name."""
    from regrapht.lsp.features.compile_flags import record_flags
    from regrapht.lsp.state import ServerState
    from regrapht.validate.compile_db import CompileFlags

    state = ServerState()
    document = state.open("untitled:saxpy.cu", "__global__ void saxpy(int n, float a, float *x, float *y) {}\n", 1)
    record_flags(state, document.uri, ["saxpy"], CompileFlags())
    facts = state.facts_for(document.uri, "saxpy")
    assert facts is not None and facts.compile_flags == ""
    record_flags(state, document.uri, ["saxpy"], CompileFlags(defines=("SCALE=3",), origin="compile_commands.json"))
    facts = state.facts_for(document.uri, "saxpy")
    assert facts is not None and facts.compile_flags == "-DSCALE=3 (compile_commands.json)"
    assert CompileFlags().describe() == "default flags"


def test_bench_prints_the_rules_as_the_card_reads_them() -> None:
    from regrapht.commands.bench import profile_lines

    lines = profile_lines(profile_of("saxpy", METRICS_H200, DETAILS))
    rules = [line for line in lines if line.startswith(("OPT", "WRN", "INF"))]
    assert rules[0].startswith("OPT On average, each warp") and rules[0].endswith(
        "(ncu estimates up to 80% local speedup) [memory_coalescing]")
    assert len(rules) == 5 and not any("optional metric" in line for line in lines)


def test_a_note_about_the_tool_raises_no_technique_in_the_search() -> None:
    from regrapht.search.profile_evidence import profile_boosts

    note = ProfileRule("WRN", "The optional metric smsp__pcsamp_sample_count could not be found. Collecting it as "
                              "an additional metric could enable the rule to provide more guidance on memory.",
                       "vectorized_access")
    profile = profile_of("saxpy", {METRICS["dram_pct"]: 36.0, METRICS["sm_pct"]: 32.0, METRICS["occupancy_pct"]: 90.0},
                         "")
    assert profile_boosts(replace(profile, rules=(note,))).boosts == ()
    assert not ProfileRule("OPT", "Est. Speedup: 5%", "").about_tool  # an estimate alone is no note about ncu


def test_after_the_hover_lists_the_most_severe_findings_first() -> None:
    """Before, the recorded hover's three lines were P001 infos on the kernel's name (repeating the
    profile section), the R009 warning counted in "and 8 more"; now the warning comes first."""
    from regrapht.cards import kernel_card
    from regrapht.cuda.parse import parse_source
    from regrapht.rules.engine import analyze

    source = (Path(__file__).resolve().parents[3] / "examples" / "saxpy.cu").read_text(encoding="utf-8")
    model = parse_source(source)
    kernel = model.kernel("saxpy")
    assert kernel is not None
    static = [f for f in analyze(model) if f.kernel == "saxpy"]
    profile = profile_findings(kernel.name_span, "saxpy", profile_of("saxpy", METRICS_H200, DETAILS))
    card = kernel_card(kernel, model.launches_of("saxpy"), [*static, *profile], None)
    listed = [line for line in card.splitlines() if line.startswith("- **")]
    assert listed[0].startswith("- **R009** (warning, line 15)"), listed
    assert "and 5 more in the kernel report" in card
