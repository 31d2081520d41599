"""The kernel report's data (`regrapht.app.report_data`) and the card's escaping: the roofline
points and floor from bytes, FLOPs and the peaks, every judged candidate of the last run, the
edit title with GPU, checks and path."""

from __future__ import annotations

import json

import pytest

from regrapht.app.messages import edit_title, outcome_message
from regrapht.app.report_data import floor_ms, report_data
from regrapht.cards import KernelFacts, LastRun, Resources, Traffic, escape_markdown, kernel_card
from regrapht.cuda.parse import parse_source
from regrapht.rules.types import Finding, Fix
from regrapht.search.ledger import CandidateLedger, Counters
from regrapht.search.pipeline import OptimizeResult
from regrapht.spec.launch import LaunchConfig
from regrapht.text import Span
from regrapht.validate.types import Candidate, Evaluation, Timing

LAUNCH = LaunchConfig(("(n + 255) / 256",), ("256",), "0")
SOURCE = "__global__ void saxpy(float a, const float *x, float *y, int n) { }\n"


def judged_history() -> tuple[CandidateLedger, OptimizeResult]:
    ledger = CandidateLedger(budget=8)
    ledger.record(Candidate(SOURCE + "//1", LAUNCH, ("restrict_const",)), Evaluation(
        "faster", "", Timing(0.5, 0.49, 0.51, 20), 2.0, {"compile_s": 0.8, "check_s": 0.2, "time_s": 0.3}),
        "const __restrict__ on x")
    ledger.record(Candidate(SOURCE + "//2", LAUNCH, ("restrict_const", "vectorize")), Evaluation(
        "wrong", "y[17]: 3.0 != 2.0 (seed 2)", details={"compile_s": 1.1, "check_s": 0.1}), "float4, width 4")
    ledger.record(Candidate(SOURCE + "//3", LAUNCH, ("block_size",)), Evaluation(
        "compile_error", "error: expected ';'", details={"compile_s": 0.4}), "block 512")
    result = OptimizeResult(
        kernel="saxpy", gpu="NVIDIA H200", arch="sm_90", strategy="rules", budget=8, baseline_ms=1.0, best=None,
        counters=Counters(3, 2, 1, 1), prompt_tokens=0, completion_tokens=0, wall_s=4.2, reason="r", model=None,
        model_device=None, seed=0, history=tuple(ledger.judged))
    return ledger, result


def test_the_ledger_keeps_every_judged_candidate_in_order() -> None:
    ledger, _ = judged_history()
    first, second, third = ledger.judged
    assert (first.index, first.techniques, first.note, first.outcome) == (1, ("restrict_const",),
                                                                          "const __restrict__ on x", "faster")
    assert (first.speedup, first.time_ms, first.compile_s, first.check_s, first.time_s) == (2.0, 0.5, 0.8, 0.2, 0.3)
    assert second.reason == "y[17]: 3.0 != 2.0 (seed 2)" and second.time_ms is None and second.time_s is None
    assert third.outcome == "compile_error" and third.compile_s == 0.4 and third.check_s is None
    assert "source" not in first.to_json() and first.to_json(source=True)["source"] == SOURCE + "//1"


def test_floor_is_the_slower_of_bandwidth_and_compute() -> None:
    memory = Traffic(bytes_moved=4_000_000_000, flops=1e9, peak_gbps=4000.0, peak_gflops=50_000.0)
    assert floor_ms(memory) == pytest.approx(1.0)  # 4 GB at 4 TB/s
    compute = Traffic(bytes_moved=4_000, flops=1e12, peak_gbps=4000.0, peak_gflops=50_000.0)
    assert floor_ms(compute) == pytest.approx(20.0)  # 1 TFLOP at 50 TFLOP/s
    assert floor_ms(Traffic(4_000, None, None, None)) is None  # no measured peaks: no floor


def test_report_data_has_resources_roofline_and_every_candidate() -> None:
    _, result = judged_history()
    facts = KernelFacts(resources=Resources(16, 0, 0, 1.0, "sm_90", "block size"), timing=Timing(1.0, 0.9, 1.1, 20),
                        traffic=Traffic(3_000_000, 2_000_000.0, 4000.0, 50_000.0),
                        last_run=LastRun("nothing", "no faster", result, original=SOURCE))
    finding = Finding("R006", "warning", Span.of(0, 0, 0, 5), "saxpy", "`x` is read-only", "restrict_const",
                      "rules/R006.md", (Fix("Add const __restrict__", ()),))
    data = report_data("file:///s.cu", "saxpy", "card", facts, [finding], lambda doc: f"file:///docs/{doc}")
    json.dumps(data)  # the LSP answer is JSON
    assert data["findings"] == [{"rule": "R006", "severity": "warning", "line": 0, "message": "`x` is read-only",
                                 "technique": "restrict_const", "doc": "file:///docs/rules/R006.md",
                                 "fixes": ["Add const __restrict__"]}]
    assert data["resources"]["occupancy"] == 1.0 and data["timing"]["median_ms"] == 1.0  # type: ignore[index]
    roof = data["roofline"]
    assert isinstance(roof, dict) and roof["floor_ms"] == pytest.approx(3_000_000 / 4000e9 * 1e3)
    assert roof["intensity"] == pytest.approx(2 / 3)
    kinds = [(p["kind"], p["label"]) for p in roof["points"]]
    assert kinds == [("original", "original"), ("verified", "#1 restrict_const"), ("floor", "floor")]
    original = roof["points"][0]
    assert original["gbps"] == pytest.approx(3.0) and original["gflops"] == pytest.approx(2.0)  # 3 MB, 2 MFLOP in 1 ms
    run = data["run"]
    assert isinstance(run, dict) and run["kind"] == "nothing" and run["original"] == SOURCE
    assert [c["outcome"] for c in run["candidates"]] == ["faster", "wrong", "compile_error"]
    assert run["candidates"][1]["reason"] == "y[17]: 3.0 != 2.0 (seed 2)"


def test_report_data_without_facts_is_the_card_and_findings_only() -> None:
    data = report_data("file:///s.cu", "saxpy", "card", None, [], lambda doc: doc)
    assert data["markdown"] == "card" and data["roofline"] is None and data["run"] is None
    assert data["resources"] is None and data["timing"] is None


def test_the_card_escapes_fix_titles_and_keeps_rule_links_outside_bold() -> None:
    assert escape_markdown("Add __restrict__ to `x`") == "Add \\_\\_restrict\\_\\_ to \\`x\\`"
    model = parse_source(SOURCE)
    kernel = model.kernel("saxpy")
    assert kernel is not None
    finding = Finding("R006", "warning", Span.of(0, 0, 0, 5), "saxpy", "read-only", "restrict_const",
                      "rules/R006.md", (Fix("Add const __restrict__", ()),))
    card = kernel_card(kernel, [], [finding], long=True, doc_link=lambda doc: f"file:///docs/{doc}")
    assert "- [**R006**](file:///docs/rules/R006.md) (warning, line 1)" in card
    assert "Quick fix: Add const \\_\\_restrict\\_\\_." in card


def test_the_edit_title_carries_gpu_checks_and_path() -> None:
    title = edit_title("saxpy", 2.4, "NVIDIA H200", "approximates", "clean (memcheck)", "4 seeds, odd size",
                       ("restrict_const", "vectorize"))
    assert title == ("Apply 2.4x faster saxpy on NVIDIA H200, verified (4 seeds, odd size), "
                     "restrict_const -> vectorize, sanitizer: clean; changes numerics (fast math)")
    assert outcome_message("cancelled", "stopped", "saxpy", True) == \
        "ReGraphT: optimizing saxpy was cancelled (the kernel was edited); stopped"
