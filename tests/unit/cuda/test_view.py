"""`cuda/view.py`: one `FileView` per code state, its kernels read from the tree-sitter parse or,
for text that does not parse cleanly, by the lexical scanner, the same way either way."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from regrapht.cuda.scan import code_mask
from regrapht.cuda.view import KernelView, kernel_view, kernels_of
from regrapht.idioms.read_only import read_only_arrays
from regrapht.idioms.syntax import kernel_syntax
from regrapht.search.prompt import extract_code, splice_answer
from regrapht.search.source import find_kernel
from regrapht.spec.infer import infer_spec
from regrapht.validate.signature import contract_violation

SPECIFIED = '''#include <cuda_runtime.h>
#define BLOCK 256

// scales rows; the launch below is its only one
template <typename T, int B = BLOCK>
__launch_bounds__(B, 2)
__global__ void scale(const T *__restrict__ x, T *y, int n)
{
    int i = blockIdx.x * B + threadIdx.x;  // "{" in a comment
    if (i < n) y[i] = x[i] * T(2);
}

extern "C" __global__ void __launch_bounds__(128) plain(float *a, int n) { a[0] = n; }

extern "C" {
__global__ void inside(float *a) { a[1] = 0.0f; }
}

__global__ void declared(float *a);

void host(const float *x, float *y, float *a, int n, cudaStream_t s)
{
    scale<float><<<(n + BLOCK - 1) / BLOCK, BLOCK, 0, s>>>(x, y, n);
    plain<<<1, 1>>>(a, n);
    /* plain<<<2, 2>>>(a, n); */
}
'''


def test_a_file_that_parses_reads_its_kernels_from_the_tree() -> None:
    view = kernels_of(SPECIFIED)
    assert view.parsed
    assert [k.name for k in view.kernels] == ["scale", "plain", "inside"]
    assert [d.name for d in view.declarations] == ["scale", "plain", "inside", "declared"]
    scale = view.kernel("scale<float>")
    assert scale is not None and scale.node is not None and scale.node.type == "function_definition"
    assert scale.text(SPECIFIED).startswith("template <typename T, int B = BLOCK>\n__launch_bounds__(B, 2)\n")
    assert scale.text(SPECIFIED).endswith("x[i] * T(2);\n}")
    assert scale.template_parameters == ("typename T", "int B = BLOCK")
    assert scale.launch_bounds == ("B", "2")
    assert [(p.type, p.name, p.is_pointer, p.element_type) for p in scale.params] == [
        ("const T * __restrict__", "x", True, "T"), ("T *", "y", True, "T"), ("int", "n", False, "int")]
    assert SPECIFIED[scale.params_start : scale.params_end] == "const T *__restrict__ x, T *y, int n"
    assert scale.body(SPECIFIED).strip().startswith("int i = blockIdx.x")
    lines = SPECIFIED.split("\n")
    assert lines[scale.lines[0]].startswith("template") and lines[scale.lines[1]] == "}"
    assert lines[scale.body_lines[0]] == "{"
    assert [site.args for site in scale.launches] == [("(n + BLOCK - 1) / BLOCK", "BLOCK", "0", "s")]
    plain = view.kernel("plain")
    assert plain is not None and plain.text(SPECIFIED).startswith('extern "C" __global__')
    assert plain.launch_bounds == ("128",) and [site.args for site in plain.launches] == [("1", "1")]
    inside = view.kernel("inside")
    assert inside is not None and inside.text(SPECIFIED).startswith("__global__ void inside")
    assert view.kernel("declared") is None and view.kernel("absent") is None


def test_the_tree_and_the_scanner_read_a_kernel_the_same_way() -> None:
    # A stray "}" at file scope: tree-sitter has an error, the scanner reads the file.
    broken = SPECIFIED + "\n}\n"
    assert not kernels_of(broken).parsed
    for name in ("scale", "plain", "inside"):
        tree, scanned = kernel_view(SPECIFIED, name), kernel_view(broken, name)
        assert isinstance(tree, KernelView) and isinstance(scanned, KernelView)
        assert tree == scanned  # every field but the node and the file
        assert scanned.node is None and tree.node is not None
        assert tree.launches == scanned.launches
    assert kernels_of(SPECIFIED).declarations == kernels_of(broken).declarations


def test_text_that_does_not_parse_still_has_its_kernel_located() -> None:
    answer = "Here is the kernel:\n__global__ void k(float *x, int n) {\n  x[0] = n;\n"  # never closed
    view = kernels_of(answer)
    assert not view.parsed and view.kernels == ()
    assert [d.name for d in view.declarations] == ["k"]
    closed = answer + "}\n```"
    k = kernel_view(closed, "k")
    assert k is not None and k.node is None and k.text(closed).endswith("x[0] = n;\n}")
    assert [p.name for p in k.params] == ["x", "n"]


@pytest.mark.parametrize("text", ["", "\x00\xff garbage {{{ ((", "}" * 5000, "/* unterminated", '"unterminated'])
def test_any_text_gives_a_view(text: str) -> None:
    view = kernels_of(text)
    assert view.masked == code_mask(text) and len(view.masked) == len(text)
    assert view.kernel("k") is None and view.launches_of("k") == ()


def test_offsets_count_code_points_not_bytes() -> None:
    text = "// héllo wörld ✓\n__global__ void k(float *x) { x[0] = 1.0f; }\nvoid h(float *x) { k<<<1, 2>>>(x); }\n"
    k = kernel_view(text, "k")
    assert k is not None and kernels_of(text).parsed
    assert k.text(text) == "__global__ void k(float *x) { x[0] = 1.0f; }"
    assert text[k.params_start : k.params_end] == "float *x"
    assert [text[s.start : s.end] for s in k.launches] == ["<<<1, 2>>>"]


def test_a_launch_of_another_kernel_whose_name_ends_the_same_is_not_a_launch() -> None:
    text = "__global__ void k(int *a) {}\n__global__ void my_k(int *a) {}\nvoid h(int *a) { my_k<<<1, 1>>>(a); }\n"
    assert kernels_of(text).launches_of("k") == ()
    assert len(kernels_of(text).launches_of("my_k")) == 1


def test_a_huge_file_is_parsed_once_and_located_quickly() -> None:
    kernels = "".join(f"__global__ void k{i}(float *x) {{ x[{i}] = {i}.0f; }}\n" for i in range(3000))
    view = kernels_of(kernels)
    assert len(view.kernels) == 3000 and view.kernel("k2999") is not None
    assert kernels_of(kernels) is view


def test_one_code_state_is_parsed_once_across_locate_prompt_idioms_and_spec_inference() -> None:
    source = SPECIFIED.replace("scale", "scale_once")  # a text no other test has parsed
    plain = find_kernel(source, "plain")
    assert plain is not None
    answer = "```cuda\n" + plain.text(source).replace("a[0] = n;", "a[0] = n + 0;") + "\n```"
    code = extract_code(answer)
    assert code is not None
    kernels_of.cache_clear()
    find_kernel(source, "scale_once")  # locate (search/source.py's adapter)
    assert splice_answer(source, "plain", code).source is not None  # the prompt: the original and the answer
    assert kernel_syntax(source, "scale_once") is not None  # idioms
    read_only_arrays(source, "scale_once")
    infer_spec(source, "plain")  # spec inference reads the view's model
    contract_violation(code, "plain", ())  # the candidate check reads the answer's view
    info = kernels_of.cache_info()
    assert info.misses == 2  # the source and the answer, one parse each
    # each later reader of either text found it parsed (spec inference asks more than once: its
    # proofs read the view too)
    assert info.hits >= 5


def test_the_view_is_below_the_engines() -> None:
    package = Path(__file__).resolve().parents[3] / "server" / "regrapht"
    for folder in ("cuda", "validate"):
        for path in sorted((package / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
            names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
            assert not any(name.startswith(("regrapht.search", "regrapht.idioms")) for name in names), path


def test_a_kernel_defined_twice_is_the_first_definition_for_every_reader() -> None:
    """`kernel()` (the appliers' offsets) and `function_node()` (the idioms' tree) pick the same
    definition of a kernel defined in both branches of an `#if`: the first."""
    source = ("#if USE_WIDE\n__global__ void k(float *x, int n) { int i = threadIdx.x; if (i < n) x[i] = 1.0f; }\n"
              "#else\n__global__ void k(float *x, int n) { int i = threadIdx.x; if (i < n) x[i] = 2.0f; }\n#endif\n"
              "namespace other { template <typename T> __global__ void k(T *y) { y[0] = T(3); } }\n")
    view = kernels_of(source)
    first = view.kernel("k")
    assert first is not None and first.node is not None and "1.0f" in source[first.body_start : first.body_end]
    found = view.function_node("k")
    assert found is not None and found[0].start_byte == first.node.start_byte and found[1] == ()
    syntax = kernel_syntax(source, "k")
    assert syntax is not None and b"1.0f" in (syntax.body.text or b"")
