"""The CUDA source model: kernels, parameters, launches, accesses with their thread strides,
atomics, barriers, branches, loops, literals; positions in code points."""

from __future__ import annotations

from pathlib import Path

from regrapht.cuda import parse_source
from regrapht.text import Position

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_kernel_signature_and_parameters() -> None:
    model = parse_source(
        'template <int BS>\n__global__ void __launch_bounds__(256, 2) k(const float *__restrict__ a, float *b, int n) {}\n'
        'extern "C" __global__ void e(double *x) {}\n__device__ float d(float v) { return v; }\nvoid host() {}\n')
    k, e = model.kernels
    assert k.name == "k" and k.template_parameters == ("int BS",) and k.launch_bounds == ("256", "2")
    a, b, n = k.parameters
    assert (a.is_pointer, a.is_const, a.is_restrict, a.base_type) == (True, True, True, "float")
    assert (b.is_pointer, b.is_const, b.is_restrict) == (True, False, False)
    assert not n.is_pointer and n.type_text == "int"
    assert a.type_text == "const float *__restrict__"
    assert k.name_span.start == Position(1, 42)
    assert e.extern_c and not k.extern_c
    assert [f.name for f in model.device_functions] == ["d"]
    assert [f.name for f in model.host_functions] == ["host"]


def test_launch_sites_resolve_dim3_blocks() -> None:
    model = parse_source((EXAMPLES / "matmul.cu").read_text())
    (site,) = model.launches_of("matmul")
    assert site.grid.text == "grid" and site.block.text == "block" and site.host_function == "run_matmul"
    assert site.block_dims == (16, 16) and site.threads_per_block == 256
    assert site.args[0].text == "dA" and site.shared is None
    other = parse_source("#define BS 128\nvoid h(){ k<<<g, BS * 2, 64, s>>>(x); dim3 b = dim3(8, 4); k<<<1, b>>>(); }")
    first, second = other.launches
    assert first.block_dims == (256,) and first.shared is not None and first.shared.text == "64"
    assert first.stream is not None and first.stream.text == "s"
    assert second.block_dims == (8, 4)


def test_index_coefficients_resolve_local_definitions() -> None:
    model = parse_source(
        "__global__ void k(float *a, float *b, const float *c, int N, int stride) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  int j = i * stride;\n"
        "  a[i] = b[j] + c[i * 4] + c[N * threadIdx.x + 1] + c[threadIdx.x % 7];\n}\n")
    kernel = model.kernels[0]
    by_text = {(acc.array, acc.indices[0].text): acc for acc in kernel.accesses}
    assert by_text[("a", "i")].tid_x.kind == "unit" and by_text[("a", "i")].access == "write"
    assert by_text[("b", "j")].tid_x.kind == "runtime" and by_text[("b", "j")].tid_x.text == "stride"
    assert by_text[("c", "i * 4")].tid_x.kind == "constant" and by_text[("c", "i * 4")].tid_x.value == 4
    assert by_text[("c", "N * threadIdx.x + 1")].tid_x.text == "N"
    assert by_text[("c", "threadIdx.x % 7")].tid_x.kind == "nonaffine"
    assert kernel.written_pointers == frozenset({"a"})
    assert all(acc.space == "global" for acc in kernel.accesses)


def test_loops_shared_arrays_and_pointer_aliases() -> None:
    model = parse_source(
        "__global__ void k(const float *A, float *out, int N) {\n"
        "  __shared__ float tile[32][33];\n"
        "  const float *row = A + blockIdx.x * N;\n"
        "  float s = 0.0f;\n"
        "  #pragma unroll\n"
        "  for (int t = 0; t < 4; t++) {\n"
        "    for (int k = threadIdx.x; k < N; k += blockDim.x) { s += row[k]; }\n"
        "  }\n"
        "  tile[threadIdx.y][threadIdx.x] = s;\n"
        "  out[blockIdx.x] = tile[0][0];\n}\n")
    kernel = model.kernels[0]
    outer, inner = kernel.loops
    assert (outer.variable, outer.trip_count, outer.unrolled, outer.depth) == ("t", 4, True, 1)
    assert (inner.variable, inner.trip_count, inner.depth, inner.parent) == ("k", None, 2, 0)
    (tile,) = kernel.shared_arrays
    assert tile.dims == ("32", "33") and tile.dim_values == (32, 33) and tile.element_type == "float"
    load = next(a for a in kernel.accesses if a.indices[0].text == "k")
    assert load.array == "A" and load.space == "global" and load.tid_x.kind == "unit"
    assert load.loop_depth == 2 and load.loop_vars == ("k",)
    store = next(a for a in kernel.accesses if a.array == "tile" and a.access == "write")
    assert store.space == "shared" and [c.kind for c in store.index_tid_x] == ["none", "unit"]


def test_atomics_syncs_and_branches() -> None:
    model = parse_source(
        "__global__ void k(const int *d, int *bins, float *sum, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) { atomicAdd(&bins[d[i]], 1); __syncthreads(); }\n"
        "  if (threadIdx.x % 4 == 0) { atomicAdd(sum, 1.0f); }\n"
        "  if (threadIdx.x == 0) { atomicAdd(sum, 2.0f); }\n"
        "  __syncthreads();\n}\n")
    kernel = model.kernels[0]
    histogram, every_fourth, guarded = kernel.atomics
    assert histogram.data_dependent and histogram.thread_dependent and histogram.array == "bins"
    assert not every_fourth.thread_dependent and not every_fourth.single_thread_guard
    assert guarded.single_thread_guard
    inside, outside = kernel.syncs
    assert inside.under_thread_branch and inside.branch_condition == "i < n"
    assert not outside.under_thread_branch
    modulo = next(b for b in kernel.branches if b.modulus is not None)
    assert modulo.modulus_value == 4


def test_float_code_literals_and_math_calls() -> None:
    model = parse_source(
        "__global__ void f(float *y) { y[0] = sqrt(y[0]) * 2.0 + 1.0f + 3 + 1e3; }\n"
        "__global__ void g(double *y) { y[0] = sqrt(y[0]) * 2.0; }\n")
    f, g = model.kernels
    assert [lit.text for lit in f.float_literals] == ["2.0", "1e3"]
    assert [(c.name, c.float_name) for c in f.math_calls] == [("sqrt", "sqrtf")]
    assert g.uses_double and not g.float_literals and not g.math_calls


def test_host_calls_mallocs_and_loops() -> None:
    model = parse_source(
        "void h(float *hp, int n) { float *d; cudaMalloc((void **)&d, n * sizeof(float));\n"
        "  for (int i = 0; i < 3; ++i) { cudaMemcpy(d, hp, n, cudaMemcpyHostToDevice); }\n"
        "  cudaDeviceSynchronize(); }\n")
    (host,) = model.host_functions
    (malloc,) = host.mallocs
    assert malloc.pointer == "d" and malloc.size == "n * sizeof(float)"
    calls = {c.name: c.in_loop for c in host.calls}
    assert calls["cudaMemcpy"] is True and calls["cudaDeviceSynchronize"] is False


def test_positions_count_code_points_on_non_ascii_lines() -> None:
    text = '__global__ void k(float *y) { /* é€😀 */ y[threadIdx.x] = 2.0; }\n'
    (literal,) = parse_source(text).kernels[0].float_literals
    column = text.index("2.0")
    assert literal.span.start == Position(0, column) and literal.span.end == Position(0, column + 3)


def test_kernel_at_position_and_launch_lookup() -> None:
    model = parse_source((EXAMPLES / "transpose.cu").read_text())
    kernel = model.kernel_at(Position(18, 10))
    assert kernel is not None and kernel.name == "transpose_tiled"
    assert model.kernel_at(Position(30, 4)) is None
    assert [s.kernel for s in model.launches_of("transpose")] == ["transpose"]


def test_barrier_after_thread_dependent_early_return_is_divergent() -> None:
    model = parse_source(
        "__global__ void k(float *a, int n) {\n"
        "  __shared__ float s[256];\n"
        "  if (blockIdx.x >= n) return;\n"  # block-uniform: every thread of the block leaves
        "  __syncthreads();\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i >= n) { a[0] = 0.0f; return; }\n"
        "  s[threadIdx.x] = a[i];\n"
        "  __syncthreads();\n"
        "  a[i] = s[255 - threadIdx.x];\n}\n"
        "__global__ void guarded(float *a, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i >= n) { a[0] = 0.0f; } else { return; }\n"  # an else: not an unconditional exit of the if
        "  __syncthreads();\n}\n")
    before, after = model.kernels[0].syncs
    assert not before.under_thread_branch
    assert after.under_thread_branch and after.after_early_exit and after.branch_condition == "i >= n"
    (other,) = model.kernels[1].syncs
    assert not other.after_early_exit


def test_reinterpret_cast_aliases_are_followed() -> None:
    model = parse_source(
        "__global__ void v(const float *in, float *out, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  const float4 *in4 = reinterpret_cast<const float4 *>(in);\n"
        "  float4 *out4 = reinterpret_cast<float4 *>(out + 4 * blockIdx.x);\n"
        "  float4 *wide = reinterpret_cast<float4 *>(out + threadIdx.x);\n"
        "  out4[i] = in4[i * 2];\n"
        "  wide[0] = in4[i];\n"
        "  *reinterpret_cast<float2 *>(&out[2 * i]) = make_float2(0.0f, 0.0f);\n}\n")
    kernel = model.kernels[0]
    write, read, wide_write, wide_read = kernel.accesses[:4]
    assert (write.array, write.space, write.access, write.element_type) == ("out", "global", "write", "float4")
    assert write.tid_x.kind == "unit"
    assert (read.array, read.space, read.element_type) == ("in", "global", "float4")
    assert read.tid_x.kind == "constant" and read.tid_x.value == 2
    assert wide_write.array == "out" and wide_write.thread_dependent and wide_write.tid_x.kind == "nonaffine"
    assert wide_read.tid_x.kind == "unit"
    # `in` is only read through its alias (the cast is not an escape); `out` is written.
    assert kernel.written_pointers == frozenset({"out"})


def test_headers_only_model_has_the_whole_models_headers() -> None:
    """`parse_source(text, bodies=False)`: every function with the same header (what the
    restrict adapter reads on each applier variant) and no body facts, on real files."""
    root = EXAMPLES.parent
    files = [*sorted(EXAMPLES.glob("*.cu")), *sorted((root / "tests/data/redteam").glob("*/*.cu"))[:40],
             *sorted((root / "bench/tasks").glob("*/*.cu"))]
    header = ("name", "kind", "name_span", "span", "body_span", "return_type", "template_parameters", "parameters",
              "launch_bounds", "extern_c", "uses_double")
    seen = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        whole, headers = parse_source(text), parse_source(text, bodies=False)
        assert len(whole.functions) == len(headers.functions), path
        for full, only in zip(whole.functions, headers.functions, strict=True):
            assert [getattr(full, f) for f in header] == [getattr(only, f) for f in header], (path, full.name)
            assert not (only.accesses or only.loops or only.written_pointers or only.calls), (path, full.name)
            seen += bool(full.accesses)
    assert seen > 40  # the whole model did find body facts there
