"""Kernels declared with `__launch_bounds__` (and other specifiers) before their name.

`search/source.py` reads a declaration the way the tree-sitter model does: `__launch_bounds__`
before or after `__global__`, `extern "C"`, `static`, templates, spelled across lines with
comments in between, is not the kernel's name. Every other reader of kernel declarations (the
candidate contract check, the appliers' thread limit, the result edit) agrees with it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from regrapht.cuda.parse import parse_source
from regrapht.search.appliers import APPLIERS, ApplierInput, DeviceLimits, rewrites_of
from regrapht.search.appliers.common import has_launch_bounds
from regrapht.search.appliers.grid import thread_limit
from regrapht.search.source import (
    find_kernel,
    find_kernels,
    integer_define,
    kernel_declarations,
    kernel_launch_bounds,
    replace_kernel,
)
from regrapht.spec.launch import LaunchConfig
from regrapht.validate.signature import contract_violation, kernel_decls

BODY = "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = 2.0f * x[i];\n}\n"
PARAMS = "(const float *x, float *y, int n)"

# (declaration up to the parameter list, the kernel's name, its launch bounds, its template parameters)
SPELLINGS = {
    "after_global": ("__global__ void __launch_bounds__(256) my_kernel", "my_kernel", ("256",), ()),
    "min_blocks": ("__global__ void __launch_bounds__(256, 2) k", "k", ("256", "2"), ()),
    "before_global": ("#define BLOCK 128\n__launch_bounds__(BLOCK) __global__ void k", "k", ("BLOCK",), ()),
    "before_global_own_line": ("__launch_bounds__(128)\n__global__ void k", "k", ("128",), ()),
    "between_global_and_void": ("__global__ __launch_bounds__(256) void k", "k", ("256",), ()),
    "extern_c": ('extern "C" __global__ void __launch_bounds__(128) k', "k", ("128",), ()),
    "extern_c_block": ('extern "C" {\n__global__ void __launch_bounds__(128) k', "k", ("128",), ()),
    "template": ("template <int B>\n__global__ void __launch_bounds__(B) k", "k", ("B",), ("int B",)),
    "template_one_line": ("template <typename T, int B> __global__ void __launch_bounds__(B, 1) k", "k",
                          ("B", "1"), ("typename T", "int B")),
    "template_bounds_before": ("template <int B>\n// bounded\n__launch_bounds__(B)\n__global__ void k", "k", ("B",),
                               ("int B",)),
    "static": ("static __global__ void __launch_bounds__(64) k", "k", ("64",), ()),
    "across_lines": ("__global__ void\n__launch_bounds__(\n    256,   // threads\n    2)\nk", "k", ("256", "2"), ()),
    "comments_between": ("__global__ /* bounded */ void __launch_bounds__(256) // one block\n k", "k", ("256",), ()),
    "nested_parentheses": ("__global__ void __launch_bounds__(2 * (128)) k", "k", ("2 * (128)",), ()),
    "other_attributes": ("__global__ void __maxnreg__(32) __launch_bounds__(256) k", "k", ("256",), ()),
    "plain": ("__global__ void k", "k", (), ()),
}


def _source(key: str) -> str:
    head = SPELLINGS[key][0]
    tail = "}\n" if key == "extern_c_block" else ""
    return f"#include <cuda_runtime.h>\n\n// scales x\n{head}{PARAMS}\n{BODY}{tail}\nint after;\n"


@pytest.mark.parametrize("key", SPELLINGS)
def test_the_name_params_body_and_bounds_of_every_spelling(key: str) -> None:
    source = _source(key)
    _, name, bounds, template = SPELLINGS[key]
    [kernel] = find_kernels(source)
    assert kernel.name == name and kernel.launch_bounds == bounds
    assert source[kernel.params_start : kernel.params_end] == PARAMS[1:-1]
    assert [p.name for p in kernel.params] == ["x", "y", "n"] and kernel.params[0].type == "const float *"
    assert "{" + kernel.body(source) + "}\n" == BODY
    # the definition is every specifier of the declaration (the template, the bounds before
    # `__global__`), not the comment or the preprocessor line before it
    definition = kernel.text(source)
    first_line = SPELLINGS[key][0].split("\n")
    expected_start = first_line[1] if key in ("before_global", "extern_c_block") else first_line[0]
    assert definition.startswith(expected_start) and definition.endswith("}")
    assert find_kernel(source, name) == kernel and find_kernel(source, f"{name}<256>") == kernel
    [declaration] = kernel_declarations(source)
    assert declaration.template_parameters == template


def test_the_tree_sitter_model_agrees_on_names_and_bounds() -> None:
    """What hover, CodeLens and the rules read (`cuda/extract.py`) names the same kernels, with the
    same bounds (comments inside the bounds dropped). The grammar does not know `__maxnreg__`."""
    for key, (_, name, bounds, template) in SPELLINGS.items():
        if key == "other_attributes":
            continue
        [function] = parse_source(_source(key)).kernels
        assert (function.name, function.launch_bounds, function.template_parameters) == (name, bounds, template), key


def test_the_hover_card_shows_the_bound_without_its_comments() -> None:
    from regrapht.cards import kernel_card

    [function] = parse_source(_source("across_lines")).kernels
    card = kernel_card(function, (), ())
    assert "`__launch_bounds__(256, 2)`" in card and "//" not in card
    assert function.signature.startswith("__global__ void k(")


def test_replacing_a_kernel_replaces_its_bounds_too() -> None:
    source = _source("template_bounds_before")
    new = "template <int B>\n__launch_bounds__(B)\n__global__ void k(const float *x, float *y, int n) { y[0] = x[0]; }"
    replaced = replace_kernel(source, "k", new)
    assert replaced is not None and replaced.count("__launch_bounds__") == 1 and replaced.count("template") == 1
    assert replaced.startswith("#include <cuda_runtime.h>\n\n// scales x\n" + new) and replaced.endswith("int after;\n")


def test_declarations_without_a_body_and_their_bounds() -> None:
    source = ("__global__ void __launch_bounds__(512) k(const float *x, float *y, int n);\n"
              "__global__ void other(float *y) { y[0] = 1; }\n"
              f"__global__ void k{PARAMS}\n{BODY}")
    assert [k.name for k in find_kernels(source)] == ["other", "k"]
    assert [d.name for d in kernel_declarations(source)] == ["k", "other", "k"]
    kernel = find_kernel(source, "k")
    assert kernel is not None and kernel.launch_bounds == ()
    assert kernel_launch_bounds(source, "k") == ("512",) and has_launch_bounds(kernel, source)
    assert kernel_launch_bounds(source, "other") == ()
    # `__global__` in a comment or a string, or inside a longer name, is not a kernel
    assert find_kernels('// __global__ void no(int a) {}\nconst char *s = "__global__ void no(int a) {}";\n'
                        "int my__global__x(int a) { return a; }\n") == []


def test_integer_defines() -> None:
    assert integer_define("#define BLOCK 256\n", "BLOCK") == 256
    assert integer_define("#  define BLOCK (128u)\n", "BLOCK") == 128
    assert integer_define("#define BLOCK 2 * 128\n", "BLOCK") is None
    assert integer_define("#define BLOCK 256\n#undef BLOCK\n#define BLOCK 512\n", "BLOCK") is None
    assert integer_define("// #define BLOCK 256\n", "BLOCK") is None


H200_LIKE = DeviceLimits(132, 2048, 1024, 48 * 1024)


def test_thread_limit_reads_every_spelling_of_the_bound() -> None:
    launch = LaunchConfig(("(n + 127) / 128",), ("128",))

    def limit(key: str) -> int:
        _, name, _, _ = SPELLINGS[key]
        return thread_limit(ApplierInput(_source(key), name, launch, {}, H200_LIKE))

    assert limit("after_global") == 256 and limit("min_blocks") == 256 and limit("across_lines") == 256
    assert limit("before_global") == 128  # `#define BLOCK 128`
    assert limit("static") == 64 and limit("plain") == 1024
    # a template parameter: only the launch's own block
    assert limit("template") == 128


PLAIN = (Path(__file__).resolve().parents[3] / "examples/reduce_sum.cu").read_text()
KERNEL = PLAIN.replace("__global__ void reduce_sum(", "__global__ void __launch_bounds__(256) reduce_sum(")


def test_appliers_rewrite_a_bounded_kernel_within_its_bound() -> None:
    assert KERNEL != PLAIN
    launch = LaunchConfig(("(ceil_div(n, chunk) + 127) / 128",), ("128",))
    given = ApplierInput(KERNEL, "reduce_sum", launch, {"n": 1 << 22, "chunk": 64}, H200_LIKE)
    rewrites = {a.__class__.__name__: rewrites_of(a, given) for a in APPLIERS}
    matched = {name: found for name, found in rewrites.items() if found}
    assert "BlockReduceAtomic" in matched, sorted(rewrites)
    every = [r for found in matched.values() for r in found]
    assert all(int(r.launch.block[0]) <= 256 for r in every)
    assert all("__launch_bounds__(256)" in r.source for r in every)
    # without the bound the same grid goes beyond it: the bound is what keeps it in
    free = rewrites_of(APPLIERS[[a.__class__.__name__ for a in APPLIERS].index("BlockReduceAtomic")],
                       ApplierInput(PLAIN, "reduce_sum", launch, {"n": 1 << 22, "chunk": 64}, H200_LIKE))
    assert max(int(r.launch.block[0]) for r in free) > 256


def test_the_contract_check_reads_the_same_declarations() -> None:
    from regrapht.spec.ctypes_ import parse_ctype

    params = tuple(parse_ctype(t) for t in ("const float*", "float*", "int"))
    for key, (_, name, _, template) in SPELLINGS.items():
        source = _source(key)
        [decl] = kernel_decls(source)
        assert decl.name == name and decl.params == ("const float *x", "float *y", "int n"), key
        assert decl.template_params == tuple(t.split()[-1] for t in template), key
        assert contract_violation(source, name, params) is None, key
    renamed = _source("after_global").replace("my_kernel", "other_kernel")
    assert "renaming is not allowed" in (contract_violation(renamed, "my_kernel", params) or "")
