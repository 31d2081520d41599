"""Issue 27: def-use through references, out-parameters and block scopes (R001/R002/R003 read it),
one finding per cause with the other locations as related information, and messages that state
what the code does (each rule's message variants, with the spellings and near misses of each)."""

from __future__ import annotations

import pytest

from regrapht.cuda import SourceDocument
from regrapht.rules import Finding, analyze, analyze_text
from regrapht.rules.confirm import confirm_findings
from regrapht.text import Position, Span
from regrapht.validate.ptx import LineCode, PtxFacts


def of(text: str, rule: str) -> list[Finding]:
    return [f for f in analyze_text(text) if f.rule == rule]


def lines(findings: list[Finding]) -> list[int]:
    return [f.span.start.line + 1 for f in findings]


# ------------------------------------------------------------------ def-use: out-parameters
KERNEL = """__global__ void k(float *__restrict__ out, const float *__restrict__ in, int D, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int x = 0, q = 0;
    {call}
    out[i * D + x] = in[blockIdx.x * blockDim.x + threadIdx.x];
}}"""


@pytest.mark.parametrize("call", [
    "udivmod(i, D, x);",  # references: writes i and x
    "fast_divmod(&i, &x, i, D);",  # pointers to the locals
    "divmod_into(i, D, x, q);",  # a third spelling: the quotient and remainder both written back
    "int &r = i; r = r / D;",  # a local reference: writes through it change i
])
def test_a_helper_writing_its_arguments_makes_them_unknown(call: str) -> None:
    assert of(KERNEL.format(call=call), "R001") == []


@pytest.mark.parametrize("call", [
    "q = quotient(i, D);",  # the value is used: a function of its arguments, not a writer
    "printf(\"%d\", i);",  # output takes its arguments by value
    "__syncthreads();",
    "const int &r = i; q = r;",  # a const reference cannot write i
])
def test_calls_that_cannot_write_the_index_keep_the_stride(call: str) -> None:
    (finding,) = of(KERNEL.format(call=call), "R001")
    assert "strides by `D` elements" in finding.message and finding.severity == "warning"


def test_host_helpers_keep_the_launch_dimensions_they_are_given() -> None:
    text = """__global__ void k(float *y) { y[threadIdx.x] = 0.0f; }
void run(float *y, int n) {
    int threads = 100;
    print_config(threads);
    k<<<n / threads, threads>>>(y);
}"""
    (finding,) = of(text, "R009")
    assert finding.message.startswith("100 threads per block")


# ------------------------------------------------------------------ def-use: block scopes
@pytest.mark.parametrize("body", [
    # a loop's own `j` shadows the outer one only inside the loop
    "int j = blockIdx.x; for (int j = threadIdx.x * m; j < n; j += m) { tmp[j] = 0.0f; } out[j * n + threadIdx.x] = 1.0f;",
    # a block's local
    "int j = blockIdx.x; { int j = threadIdx.x * m; tmp[j] = 0.0f; } out[j * n + threadIdx.x] = 1.0f;",
    # a later loop's variable of the same name
    "int j = blockIdx.x; for (int j = threadIdx.x * m; j < n; j += m) {} for (int r = 0; r < 4; r++) out[j * n + threadIdx.x + r] = 1.0f;",
])
def test_a_name_declared_in_a_block_does_not_leak_out_of_it(body: str) -> None:
    text = f"__global__ void k(float *__restrict__ out, float *__restrict__ tmp, int n, int m) {{\n    {body}\n}}"
    assert [f for f in of(text, "R001") if f.message.startswith("`out")] == []


def test_an_assignment_in_a_block_still_reaches_past_it() -> None:
    text = """__global__ void k(float *__restrict__ out, int n, int m) {
    int j = blockIdx.x;
    if (n > 4) { j = threadIdx.x * m; }
    out[j] = 1.0f;
}"""
    assert lines(of(text, "R001")) == [4]


# ------------------------------------------------------------------ R006: GNU __restrict
@pytest.mark.parametrize("declaration", [
    "const float2 *__restrict x", "const float * __restrict x", "const float *__restrict__ x",
])
def test_r006_accepts_every_restrict_spelling(declaration: str) -> None:
    text = f"__global__ void k({declaration}, float2 *__restrict y) {{ y[threadIdx.x].x = x[threadIdx.x].x; }}"
    assert of(text, "R006") == []


def test_r006_near_miss_without_restrict_names_what_is_missing() -> None:
    (finding,) = of("__global__ void k(const float *x, float *__restrict y) { y[threadIdx.x] = x[threadIdx.x]; }",
                    "R006")
    assert "lacks `__restrict__`" in finding.message and "`const`" not in finding.message


# ------------------------------------------------------------------ R007: casts, grouping, messages
@pytest.mark.parametrize("expression", [
    "static_cast<Real>(0.5) * v", "Real(2.0) * v + v", "(Real)0.25 * v * v", "v * scale(0.1)",
])
def test_r007_explicit_casts_and_arguments_stay_silent(expression: str) -> None:
    text = f"""template <typename Real> __global__ void k(Real *y) {{
    Real v = y[threadIdx.x];
    y[threadIdx.x] = {expression};
}}"""
    assert of(text, "R007") == []


def test_r007_near_miss_a_bare_literal_in_the_chain_is_reported() -> None:
    text = "__global__ void k(float *y) { float v = y[threadIdx.x]; y[threadIdx.x] = 0.5 * v * v; }"
    (finding,) = of(text, "R007")
    assert finding.severity == "warning" and "`0.5` is a double-precision literal" in finding.message


@pytest.mark.parametrize(("line", "severity", "said"), [
    ("y[i] = y[i] * 0.5;", "hint", "`0.5` is a double-precision literal; the compiler can narrow this exact operation"),
    ("y[i] = y[i] * 0.1;", "warning", "`0.1` is a double-precision literal, so the float arithmetic around it"),
    ("y[i] = 0.3 * y[i] + 0.7 * v;", "warning", "`0.3` and `0.7` are double-precision literals, so the float "
                                                "arithmetic around them"),
    ("y[i] = 0.3 * y[i] + 0.3 * v;", "warning", "`0.3` (2 literals) are double-precision literals"),
])
def test_r007_message_variants_name_the_literals_they_are_about(line: str, severity: str, said: str) -> None:
    text = f"__global__ void k(float *y) {{ int i = threadIdx.x; float v = y[i + 1];\n    {line}\n}}"
    (finding,) = of(text, "R007")
    assert finding.severity == severity and finding.message.startswith(said)
    literals = [t for t in ("0.5", "0.1", "0.3", "0.7") if t in line]
    assert all(f"`{t}f`" in finding.message for t in literals)  # the advice writes each literal
    assert len(finding.fixes[0].edits) == line.count("0.")  # one fix for every literal of the line
    assert len(finding.related) == line.count("0.") - 1


def test_r007_a_confirmed_hint_takes_its_proven_message() -> None:
    text = "__global__ void k(float *y) { int i = threadIdx.x;\n    y[i] = y[i] * 0.5;\n}"
    (hint,) = of(text, "R007")
    assert "can narrow" in hint.message
    facts = PtxFacts({2: LineCode(instructions=4, f64=2, functions={"k"})})
    (confirmed,) = confirm_findings([hint], facts)
    assert confirmed.severity == "warning" and "can narrow" not in confirmed.message
    assert confirmed.message.endswith("stays in double precision; write `0.5f`. Confirmed by nvcc: 2 f64 instructions in k.")


# ------------------------------------------------------------------ R001 + R002: one pass, one finding
ROWS = """__global__ void rows(const float *__restrict__ x, float *__restrict__ y, int ncols) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    float m = x[row * ncols];
    for (int c = 1; c < ncols; c++) {
        m = fmaxf(m, x[row * ncols + c]);
        y[row * ncols + 2 * c] = m;
    }
}"""


def test_a_row_per_thread_pass_is_one_finding_with_its_accesses_related() -> None:
    findings = [f for f in analyze_text(ROWS) if f.rule in ("R001", "R002")]
    (finding,) = findings
    assert finding.rule == "R002" and finding.span.start.line + 1 == 5
    assert sorted(r.span.start.line + 1 for r in finding.related) == [3, 6]


def test_an_absorbed_r001_brings_its_repetitions_along() -> None:
    text = ROWS.replace("        y[row * ncols + 2 * c] = m;\n    }\n",
                        "        y[row * ncols + 2 * c] = m;\n    }\n    y[row * ncols + 2 * ncols] = m;\n")
    findings = [f for f in analyze_text(text) if f.rule in ("R001", "R002")]
    (finding,) = findings
    assert [r.span.start.line + 1 for r in finding.related] == [3, 6, 8]


def test_without_r002_the_strided_accesses_are_still_r001() -> None:
    from regrapht.cuda import parse_source
    from regrapht.rules import RuleConfig

    found = analyze(parse_source(ROWS), RuleConfig(enabled=frozenset({"R001"})))
    assert lines(found) == [3, 6]


# ------------------------------------------------------------------ R010
@pytest.mark.parametrize(("condition", "modulo"), [
    ("threadIdx.x & 1", "modulo 2"), ("tid & 3", "modulo 4"), ("tid % 2 == 0", "modulo 2"),
])
def test_r010_names_the_period_of_the_branch_not_the_mask(condition: str, modulo: str) -> None:
    text = f"""__global__ void k(float *y) {{
    int tid = threadIdx.x;
    if ({condition}) {{ y[tid] = y[tid] * 2.0f; y[tid] += 1.0f; }} else {{ y[tid] = 0.0f; y[tid] -= 1.0f; }}
}}"""
    (finding,) = of(text, "R010")
    assert f"({modulo})" in finding.message and "modulo 1" not in finding.message


REDUCE = """__global__ void reduce0(const float *__restrict__ in, float *__restrict__ out) {{
    __shared__ float sdata[256];
    unsigned int tid = threadIdx.x;
    sdata[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for ({loop}) {{
        if ({condition}) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }}
    if (tid == 0) out[blockIdx.x] = sdata[0];
}}"""


@pytest.mark.parametrize(("loop", "condition"), [
    ("unsigned int s = 1; s < blockDim.x; s *= 2", "tid % (2 * s) == 0"),
    ("int s = 1; s < 256; s <<= 1", "(threadIdx.x % (s * 2)) == 0"),
    ("unsigned int s = 1; s < blockDim.x; s = s * 2", "tid % (s + s) == 0"),
])
def test_r010_reports_the_interleaved_reduction(loop: str, condition: str) -> None:
    (finding,) = of(REDUCE.format(loop=loop, condition=condition), "R010")
    assert finding.severity == "warning" and "interleaved addressing" in finding.message


@pytest.mark.parametrize(("loop", "condition"), [
    ("unsigned int s = blockDim.x / 2; s > 0; s >>= 1", "tid < s"),  # sequential addressing: the fix
    ("unsigned int s = 1; s < blockDim.x; s *= 2", "tid % 64 == 0"),  # whole warps
    ("unsigned int s = 1; s < blockDim.x; s *= 2", "tid % 2 == 0"),  # a fixed period, one statement
])
def test_r010_near_misses_of_the_interleaved_reduction(loop: str, condition: str) -> None:
    assert of(REDUCE.format(loop=loop, condition=condition), "R010") == []


# ------------------------------------------------------------------ R011: one stage, one finding
def test_r011_the_butterflies_of_one_stage_are_one_finding() -> None:
    text = """__global__ void stage(float *__restrict__ d) {
    __shared__ float s[1024];
    int t = threadIdx.x;
    for (int h = 1; h < 512; h *= 2) {
        float a = s[2 * t];
        float b = s[2 * t + 1];
        s[2 * t] = a + b;
        s[2 * t + 1] = a - b;
        __syncthreads();
    }
    d[t] = s[4 * t];
}"""
    findings = of(text, "R011")
    assert lines(findings) == [5, 11]  # the stage, and a different stride after the loop
    assert "2-way" in findings[0].message and "(4 accesses of `s` here)" in findings[0].message
    assert [r.span.start.line + 1 for r in findings[0].related] == [6, 7, 8]
    assert "4-way" in findings[1].message and not findings[1].related


# ------------------------------------------------------------------ R012: which return it cites
def test_r012_does_not_cite_a_return_no_barrier_thread_went_through() -> None:
    text = """__global__ void k(float *y, const int *ids, int n) {
    __shared__ float s[64];
    int i = threadIdx.x;
    if (!ids) {
        if (i > n) return;
        y[i] = 0.0f;
        return;
    }
    __syncthreads();
    y[i] = s[i];
}"""
    assert of(text, "R012") == []


@pytest.mark.parametrize(("exit_statement", "hinted"), [
    ("if (!__syncthreads_or(found)) { return; }", []),  # a block-wide vote: every thread returns or none
    ("if (__syncthreads_count(found) == 0) return;", []),
    ("if (__syncthreads_and(found) || i >= n) return;", [9]),  # `i >= n` differs between threads
])
def test_r012_a_barrier_in_the_exit_condition_is_reached_before_anyone_returns(exit_statement: str,
                                                                              hinted: list[int]) -> None:
    text = f"""__global__ void k(float *y, int n) {{
    __shared__ float s[64];
    int i = threadIdx.x;
    bool found = y[i] > 0.0f;
    {exit_statement}
    s[i] = y[i];
    y[i] = 0.0f;
    y[i] += 1.0f;
    __syncthreads();
    y[i] = s[63 - i];
}}"""
    findings = of(text, "R012")
    assert [(f.severity, f.span.start.line + 1) for f in findings] == [("hint", line) for line in hinted]


SPLIT = """template <typename T, int rows>
__launch_bounds__(64, 1)
static __global__ void first(const T * __restrict__ x, float * __restrict__ dst, int n) {
#if defined(ARCH_A) || defined(ARCH_B)
#if defined(ARCH_A)
    if constexpr (!(sizeof(T) == 4)) {NO_DEVICE_CODE;} else {
    typedef tile<16, 8, T> tile_A;
#elif defined(ARCH_B)
    if constexpr (rows != 32) {NO_DEVICE_CODE;} else {
    typedef tile<32, 4, T> tile_A;
#endif
    const int j = threadIdx.y;
    for (int j0 = 0; j0 < rows; j0 += 4) {
        if (j0 + 4 > rows && j >= n) {
            return;
        }
        dst[j] = x[j];
    }
    }
#else
    NO_DEVICE_CODE;
#endif
}

template <typename T, int rows>
__launch_bounds__(64, 1)
static __global__ void second(const T * __restrict__ x, float * __restrict__ dst) {
#if defined(ARCH_A) || defined(ARCH_B)
#if defined(ARCH_A)
    if constexpr (!(sizeof(T) == 4)) {NO_DEVICE_CODE;} else {
#elif defined(ARCH_B)
    if constexpr (rows != 32) {NO_DEVICE_CODE;} else {
#endif
    __shared__ float s[64];
    s[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    dst[threadIdx.x] = s[63 - threadIdx.x];
    }
#else
    NO_DEVICE_CODE;
#endif
}"""


def test_r012_does_not_cite_another_kernels_return_when_preprocessor_arms_split_the_braces() -> None:
    # The `#if` arms open braces the parse cannot match: the two kernels come back as one syntax
    # error. The recovered `first` ends at `second`'s header, so second's barrier is not first's.
    from regrapht.cuda import parse_source

    model = parse_source(SPLIT)
    assert model.has_errors
    first = next(f for f in model.functions if f.name == "first")
    assert all(s.span.start.line < 24 for s in first.syncs) and all(a.span.start.line < 24 for a in first.accesses)
    assert of(SPLIT, "R012") == []


def test_r012_hint_points_at_the_early_return() -> None:
    text = """__global__ void k(float *y, int n) {
    __shared__ float s[64];
    int i = threadIdx.x;
    if (i >= n) return;
    s[i] = y[i];
    __syncthreads();
    y[i] = s[63 - i];
}"""
    (finding,) = of(text, "R012")
    assert finding.severity == "hint" and "`i >= n` returned early" in finding.message
    assert [(r.span.start.line + 1, r.message) for r in finding.related] == [(4, "the threads with `i >= n` return here")]


# ------------------------------------------------------------------ R015
@pytest.mark.parametrize(("header", "reported"), [
    ("for (int k = 0; k < 8; k++)", False),  # nvcc unrolls it by itself
    ("for (int k = 0; k < 16; k++)", True),
    ("#pragma unroll\n    for (int k = 0; k < 16; k++)", False),
])
def test_r015_trip_counts(header: str, reported: bool) -> None:
    text = f"""__global__ void k(float *y, const float *c) {{
    float acc = 0.0f;
    {header} {{ acc = acc * y[threadIdx.x] + c[k]; }}
    y[threadIdx.x] = acc;
}}"""
    found = of(text, "R015")
    assert bool(found) == reported
    if found:
        assert found[0].scope is not None and "unless nvcc unrolls it by itself" in found[0].message


def test_r015_without_a_backward_branch_in_the_loop_is_dropped_with_one_it_stays() -> None:
    text = """__global__ void k(float *y, const float *c) {
    float acc = 0.0f;
    for (int k = 0; k < 16; k++) {
        acc = acc * y[threadIdx.x] + c[k];
    }
    y[threadIdx.x] = acc;
}"""
    findings = of(text, "R015")
    unrolled = PtxFacts({4: LineCode(instructions=32, functions={"k"})})
    assert confirm_findings(findings, unrolled) == ()
    kept = PtxFacts({4: LineCode(instructions=3, functions={"k"}), 3: LineCode(instructions=2, backward_branches=1)})
    (finding,) = confirm_findings(findings, kept)
    assert finding.severity == "hint" and "nvcc kept it as a loop" in finding.message
    assert finding.message.endswith("nvcc shows: a backward branch at line 3.")
    assert confirm_findings(findings, PtxFacts({})) == tuple(findings)  # no code: no verdict


# ------------------------------------------------------------------ related locations move with their function
def test_related_locations_move_with_the_function() -> None:
    text = "\n" + ROWS
    document = SourceDocument(text)
    before = [f for f in analyze(document.model) if f.rule == "R002"]
    document.apply_change(Span(Position(0, 0), Position(0, 0)), "\n\n")
    after = [f for f in analyze(document.model) if f.rule == "R002"]
    assert [r.span.start.line for r in after[0].related] == [r.span.start.line + 2 for r in before[0].related]


# ------------------------------------------------------------------ every rule's message variants
K = "__global__ void k(const float *__restrict__ x, float *__restrict__ y, int n, int rows, int s00) {{\n" \
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    {body}\n}}"
VARIANTS = [
    ("R001", "y[i] = x[i * rows];", "warning",
     "`x[i * rows]` strides by `rows` elements between neighbouring threads (threadIdx.x), so"),
    ("R001", "y[i] = x[i * s00];", "hint", "`x[i * s00]` strides by `s00` elements between neighbouring threads "
     "(threadIdx.x) if `s00` is not 1"),
    ("R001", "y[i] = x[2 * i];", "hint", "`x[2 * i]` strides by 2 elements between neighbouring threads "
     "(threadIdx.x) (partly served by the same sectors)"),
    ("R001", "y[i] = x[i * rows] + x[i * rows + 1];", "warning", "`x[i * rows]` strides by `rows`"),
    ("R002", "float a = 0.0f; for (int k = 0; k < n; k++) a += x[i * n + k]; y[i] = a;", "warning",
     "Each thread walks its own contiguous run of `x` (loop over `k`, threads `n` elements apart)"),
    ("R002", "float a = 0.0f; for (int k = 0; k < 4; k++) a += x[i * 4 + k]; y[i] = a;", "hint",
     "Each thread walks its own contiguous run of `x` (loop over `k`, threads 4 elements apart)"),
    ("R003", "float a = 0.0f; for (int k = 0; k < n; k++) a += x[k] * y[k * n + i]; y[i] = a;", "information",
     "All threads along threadIdx.x load the same `x` element"),
    ("R005", "atomicAdd(&y[(int)x[i]], 1.0f);", "warning", "Per-element global `atomicAdd` into `y` at data-dependent"),
    ("R008", "y[i] = sqrt(rows) * x[i];", "warning", "`sqrt` gets a double or integer argument here"),
    ("R008", "y[i] = expf(x[i]) * exp(n);", "warning", "`exp` gets a double or integer argument here, so the "
     "double-precision function runs; call `expf`"),
    ("R016", "if (i < n) y[i] = x[i];", "hint", "Each thread handles exactly one element"),
]


@pytest.mark.parametrize(("rule", "body", "severity", "said"), VARIANTS)
def test_each_rule_says_what_its_variant_found(rule: str, body: str, severity: str, said: str) -> None:
    found = of(K.format(body=body), rule)
    assert len(found) == 1, [f.message for f in found]
    assert found[0].severity == severity and found[0].message.startswith(said), found[0].message
    if rule == "R001" and "+ 1]" in body:
        assert "(2 accesses of `x` with this stride)" in found[0].message and len(found[0].related) == 1


@pytest.mark.parametrize(("launch", "severity", "said"), [
    ("k<<<n, 100>>>(x, y, n, n, 1);", "warning", "100 threads per block is not a multiple of the warp size (32): "
     "the last warp of every block runs with 28 idle lanes"),
    ("k<<<n, 32>>>(x, y, n, n, 1);", "hint", "32 threads per block is few"),
    ("k<<<n, dim3(10, 10)>>>(x, y, n, n, 1);", "warning", "100 threads per block is not a multiple"),
])
def test_r009_message_variants(launch: str, severity: str, said: str) -> None:
    text = K.format(body="y[i] = x[i];") + f"\nvoid run(const float *x, float *y, int n) {{ {launch} }}"
    (finding,) = of(text, "R009")
    assert finding.severity == severity and finding.message.startswith(said)


def test_r014_message_names_its_array_and_target() -> None:
    text = """__global__ void total(const float *__restrict__ x, float *sum, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int k = i * 64; k < i * 64 + 64; k++) acc += x[k];
    atomicAdd(sum, acc);
}"""
    (finding,) = of(text, "R014")
    assert finding.message.startswith("Each thread sums `x` in a sequential loop and then adds its total to `sum`")


# ------------------------------------------------------------------ compiler evidence that refutes
STRIDED = """__global__ void k(const float *__restrict__ x, float *__restrict__ y, int rows) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = x[i * rows] * 0.1;
}"""


@pytest.mark.parametrize(("code", "rule", "reason"), [
    (LineCode(instructions=3, global_widths=[16], functions={"k"}), "R001",
     "Not confirmed by nvcc: only 16-byte vector global accesses on this line in k."),  # access width
    (LineCode(instructions=3, local_accesses=2, functions={"k"}), "R001",
     "Not confirmed by nvcc: only shared or local memory accesses on this line in k."),  # a local-memory copy
    (LineCode(instructions=3, global_widths=[4], functions={"k"}), "R007",
     "Not confirmed by nvcc: no f64 instruction for this line in k."),  # f64 count
])
def test_compiler_evidence_demotes_a_claim_it_contradicts_with_the_reason(code: LineCode, rule: str,
                                                                        reason: str) -> None:
    (finding,) = of(STRIDED, rule)
    assert finding.severity == "warning"
    (judged,) = [f for f in confirm_findings(analyze_text(STRIDED), PtxFacts({3: code})) if f.rule == rule]
    assert judged.severity == "hint" and judged.message == f"{finding.message} {reason}"
