"""Every rule fires on its bad example, stays silent on the corrected one, and no rule fires on
the corpus of well-optimised kernels; quick fixes silence their rule; the demo examples get the
findings they are meant to show."""

from __future__ import annotations

from pathlib import Path

import pytest

from regrapht.rules import ALL_RULES, RuleConfig, analyze_text
from regrapht.text import apply_edits

DATA = Path(__file__).resolve().parents[2] / "data" / "rules"
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
GOOD = sorted((DATA / "good").glob("*.cu"))
CODES = sorted(ALL_RULES)


def rules_in(path: Path) -> set[str]:
    return {f.rule for f in analyze_text(path.read_text())}


def test_registry_metadata_is_complete() -> None:
    assert len(CODES) >= 12
    docs = Path(__file__).resolve().parents[3] / "docs"
    for code, rule in ALL_RULES.items():
        assert rule.info.code == code
        assert (docs / rule.info.doc).is_file(), rule.info.doc


@pytest.mark.parametrize("code", CODES)
def test_rule_fires_on_bad_example(code: str) -> None:
    findings = [f for f in analyze_text((DATA / "bad" / f"{code}.cu").read_text()) if f.rule == code]
    assert findings
    info = ALL_RULES[code].info
    assert findings[0].severity == info.severity
    for finding in findings:
        # The severity policy lets a check downgrade what it cannot prove to a hint.
        assert finding.severity in (info.severity, "hint")
        assert finding.technique == info.technique.name
        assert finding.doc == f"rules/{code}.md"
        assert finding.message.endswith(".")


@pytest.mark.parametrize("code", CODES)
def test_rule_silent_on_corrected_example(code: str) -> None:
    assert code not in rules_in(DATA / "fixed" / f"{code}.cu")


@pytest.mark.parametrize("path", GOOD, ids=[p.name for p in GOOD])
def test_no_rule_fires_on_good_kernels(path: Path) -> None:
    assert analyze_text(path.read_text()) == []


@pytest.mark.parametrize("code", ["R006", "R007", "R008", "R011", "R015"])
def test_applying_the_fixes_silences_the_rule(code: str) -> None:
    text = (DATA / "bad" / f"{code}.cu").read_text()
    findings = [f for f in analyze_text(text) if f.rule == code]
    assert findings and all(f.fixes for f in findings)
    # Fixes of different findings may touch the same declaration: apply them one at a time.
    while findings:
        text = apply_edits(text, list(findings[0].fixes[0].edits))
        findings = [f for f in analyze_text(text) if f.rule == code]
        assert len(findings) < 10
    assert code not in {f.rule for f in analyze_text(text)}


def test_restrict_fix_text() -> None:
    text = "__global__ void k(float *a, float* b, float *out) { out[threadIdx.x] = a[threadIdx.x] + b[threadIdx.x]; }"
    findings = [f for f in analyze_text(text) if f.rule == "R006"]
    edits = [e for f in findings for e in f.fixes[0].edits]
    assert apply_edits(text, edits).startswith(
        "__global__ void k(const float *__restrict__ a, const float* __restrict__ b, float *out)")


def test_const_not_added_when_written_through_pointer() -> None:
    text = "__global__ void k(float *a, float *b) { a[threadIdx.x] = b[threadIdx.x]; *b = 0.0f; }"
    assert [f for f in analyze_text(text) if f.rule == "R006"] == []


def test_literal_and_math_fix_text() -> None:
    text = "__global__ void k(float *y, int n) { y[threadIdx.x] = sqrt(n) * 2.0 * y[threadIdx.x]; }"
    findings = [f for f in analyze_text(text) if f.rule in ("R007", "R008")]
    fixed = apply_edits(text, [e for f in findings for e in f.fixes[0].edits])
    assert "sqrtf(n) * 2.0f * y[threadIdx.x]" in fixed


def test_bank_conflict_fix_pads_macro_and_literal_dims() -> None:
    text = (DATA / "bad" / "R011.cu").read_text()
    finding = next(f for f in analyze_text(text) if f.rule == "R011")
    assert "tile[TILE][TILE + 1]" in apply_edits(text, list(finding.fixes[0].edits))


def test_config_disables_rules_and_overrides_severity() -> None:
    text = (DATA / "bad" / "R009.cu").read_text()
    assert analyze_text(text, RuleConfig(enabled=frozenset({"R001"}))) == []
    findings = analyze_text(text, RuleConfig(severity_overrides={"R009": "error"}))
    assert findings and {f.severity for f in findings} == {"error"}


def test_findings_are_sorted_and_unique() -> None:
    findings = analyze_text((EXAMPLES / "reduce_sum.cu").read_text())
    keys = [(f.span.start, f.span.end, f.rule) for f in findings]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


@pytest.mark.parametrize(("example", "expected"), [
    ("saxpy.cu", {("R006", "saxpy"), ("R007", "saxpy"), ("R009", "saxpy"), ("R016", "saxpy")}),
    ("matmul.cu", {("R003", "matmul"), ("R006", "matmul")}),
    ("reduce_sum.cu", {("R002", "reduce_sum"), ("R004", "reduce_sum"), ("R006", "reduce_sum"),
                       ("R014", "reduce_sum")}),
    ("transpose.cu", {("R001", "transpose"), ("R006", "transpose"), ("R006", "transpose_tiled"),
                      ("R011", "transpose_tiled")}),
    ("histogram.cu", {("R005", "histogram"), ("R006", "histogram"), ("R016", "histogram")}),
])
def test_demo_examples(example: str, expected: set[tuple[str, str]]) -> None:
    findings = analyze_text((EXAMPLES / example).read_text())
    assert {(f.rule, f.kernel) for f in findings} == expected


def test_transpose_bank_conflict_points_at_column_read() -> None:
    findings = analyze_text((EXAMPLES / "transpose.cu").read_text())
    conflict = next(f for f in findings if f.rule == "R011")
    assert conflict.span.start.line == 24  # out[...] = tile[threadIdx.x][threadIdx.y]
    assert "[32][33]" in apply_edits((EXAMPLES / "transpose.cu").read_text(), list(conflict.fixes[0].edits))


def test_early_return_before_barrier_is_r012() -> None:
    text = ("__global__ void stage(const float *__restrict__ in, float *__restrict__ out, int n) {\n"
            "  __shared__ float buffer[256];\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  if (i >= n) return;\n"
            "  buffer[threadIdx.x] = in[i];\n"
            "  __syncthreads();\n"
            "  out[i] = buffer[255 - threadIdx.x];\n}\n")
    (finding,) = [f for f in analyze_text(text) if f.rule == "R012"]
    assert finding.span.start.line == 5 and "i >= n" in finding.message and "return" in finding.message
    assert "R012" not in {f.rule for f in analyze_text(text.replace("  if (i >= n) return;\n", ""))}


def test_read_only_pointer_behind_float4_cast_is_r006() -> None:
    text = ("__global__ void copy4(const float *in, float *out, int n) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  const float4 *in4 = reinterpret_cast<const float4 *>(in);\n"
            "  float4 *out4 = reinterpret_cast<float4 *>(out);\n"
            "  if (i < n) out4[i] = in4[i];\n}\n")
    r006 = [f for f in analyze_text(text) if f.rule == "R006"]
    assert [f.span.start.character for f in r006] == [text.split("\n")[0].index("const float *in")]
