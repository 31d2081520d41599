from regrapht.cards import CardSection, KernelFacts, Resources, card_target, kernel_card, lens_title
from regrapht.cuda.parse import parse_source
from regrapht.rules.engine import analyze
from regrapht.text import Position
from regrapht.validate.types import Timing

SOURCE = """__global__ void saxpy(int n, float a, float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i] * 2.0;
}

void run(int n, float a, float *x, float *y)
{
    saxpy<<<(n + 255) / 256, 256>>>(n, a, x, y);
}
"""


def test_card_has_signature_launches_findings_and_extra_sections():
    model = parse_source(SOURCE)
    kernel = model.kernel("saxpy")
    findings = [f for f in analyze(model) if f.kernel == "saxpy"]
    facts = KernelFacts(
        resources=Resources(registers=12, shared_bytes=0, spill_bytes=0, occupancy=1.0, arch="sm_90"),
        timing=Timing(median_ms=0.123, p10_ms=0.12, p90_ms=0.13, runs=50),
        speedup=1.5,
        technique_path=("restrict_const", "fast_math"),
        sections=(CardSection("Notes", "hand-written"),),
    )
    card = kernel_card(kernel, model.launches_of("saxpy"), findings, facts, doc_link=lambda d: "https://x/" + d)
    assert card.startswith("```cuda-cpp\n__global__ void saxpy(int n, float a, float *x, float *y)\n```")
    assert "line 9 in `run`" in card and "256 threads/block" in card
    assert "[**R007**](https://x/rules/R007.md)" in card
    assert "12 registers/thread" in card and "occupancy 100%" in card
    assert "median 0.123 ms" in card and "1.50x" in card
    assert "`restrict_const` → `fast_math`" in card and "**Notes**\nhand-written" in card
    long = kernel_card(kernel, model.launches_of("saxpy"), findings, None, long=True)
    assert "| `x` |" in long and "Technique:" in long


def test_targets_and_lens_title():
    model = parse_source(SOURCE)
    assert card_target(model, Position(0, 17))[0].name == "saxpy"
    assert card_target(model, Position(8, 6))[1] == model.launches[0].span
    assert card_target(model, Position(2, 0)) is None
    assert lens_title([]) == "No findings"
    findings = [f for f in analyze(model) if f.kernel == "saxpy"]
    title = lens_title(findings)
    counted = sum(int(part.split()[0]) for part in title.split(":")[0].split(", "))
    assert counted == len(findings) and "_" not in title  # counts by severity, techniques as words


def test_the_lens_says_when_hints_have_a_quick_fix():
    from regrapht.cards import hint_fix_note
    from regrapht.rules.types import Finding, Fix
    from regrapht.text import Span, TextEdit

    fix = (Fix("Add __restrict__", (TextEdit(Span.of(0, 0, 0, 0), "x"),)),)

    def finding(severity, fixes=()):
        return Finding("R003", severity, Span.of(0, 0, 0, 1), "k", "m", "restrict_const", "rules/R003.md", fixes)

    plain_hint, fixable_hint, fixable_warning = finding("hint"), finding("hint", fix), finding("warning", fix)
    assert hint_fix_note([plain_hint, fixable_warning]) == ""  # a warning's fix is in Problems already
    assert hint_fix_note([fixable_hint]) == "; the hint has a quick fix"
    assert hint_fix_note([fixable_hint, fixable_hint]) == "; the 2 hints have quick fixes"
    assert hint_fix_note([fixable_hint, plain_hint, plain_hint]) == "; 1 of 3 hints has a quick fix"
    assert hint_fix_note([fixable_hint, fixable_hint, plain_hint]) == "; 2 of 3 hints have quick fixes"
    assert lens_title([fixable_warning, fixable_hint]) == "1 warning, 1 hint: restrict const; the hint has a quick fix"
    assert lens_title([fixable_warning, plain_hint]) == "1 warning, 1 hint: restrict const"


def test_lens_counts_what_problems_shows_and_names_techniques_in_words():
    from regrapht.cards import severity_counts

    model = parse_source(SOURCE)
    findings = [f for f in analyze(model) if f.kernel == "saxpy"]
    by_severity = {}
    for finding in findings:
        by_severity[finding.severity] = by_severity.get(finding.severity, 0) + 1
    counts = severity_counts(findings)
    for severity, count in by_severity.items():
        noun = {"error": "error", "warning": "warning", "information": "info", "hint": "hint"}[severity]
        assert f"{count} {noun}" in counts


def test_signature_keeps_the_sources_spacing_and_the_hover_card_is_compact():
    source = "__global__ void k(float* a, float *b, const float *__restrict__ c, int n) { a[0] = 0.5 * b[0] * c[0] * 2.0 * 3.0; }\n"
    model = parse_source(source)
    kernel = model.kernel("k")
    assert kernel is not None
    card_short = kernel_card(kernel, (), list(analyze(model)) * 3, report_link="command:x")
    assert "k(float* a, float *b, const float *__restrict__ c, int n)" in card_short
    assert "more in the kernel report" in card_short and card_short.rstrip().endswith("[Show the kernel report](command:x)")
    assert card_short.count("\n- **R") == 3
    long = kernel_card(kernel, (), list(analyze(model)) * 3, long=True, report_link="command:x")
    assert "Show the kernel report" not in long


def test_card_names_the_compile_flags_used():
    model = parse_source(SOURCE)
    kernel = model.kernel("saxpy")
    facts = KernelFacts(compile_flags="-I/p/include -DSCALE=3 (compile_commands.json)")
    card = kernel_card(kernel, model.launches_of("saxpy"), [], facts)
    assert "**Compiled with**: `-I/p/include -DSCALE=3 (compile_commands.json)`" in card
    assert "Compiled with" not in kernel_card(kernel, model.launches_of("saxpy"), [], KernelFacts())
