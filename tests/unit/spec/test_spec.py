"""Spec parsing (every error names its key), expressions with C semantics, resolve, inference."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from spec_texts import xy_spec

from regrapht.errors import InputError
from regrapht.spec.draw import generate
from regrapht.spec.expr import evaluate
from regrapht.spec.infer import infer_spec
from regrapht.spec.init import parse_init
from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import load_spec, parse_spec
from regrapht.spec.resolve import odd_size_variant, resolve

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.mark.parametrize(("text", "value"), [
    ("(n + 255) / 256", 65536), ("-7 / 2", -3), ("-7 % 2", -1), ("7 % -2", 1), ("1 << 24", 1 << 24),
    ("ceil_div(n, 3)", (1 << 24) // 3 + 1), ("min(3, max(1, 2)) * 2", 4), ("n >> 4", 1 << 20),
    ("2.0", 2.0), ("5 / 2.0", 2.5), ("0x10 + 1", 17), ("-(3 - 5)", 2), ("256u", 256),
])
def test_expressions_follow_c(text: str, value: float) -> None:
    assert evaluate(text, {"n": 1 << 24}) == value


@pytest.mark.parametrize(("text", "message"), [
    ("n +", "unexpected"), ("m * 2", "unknown name 'm'"), ("foo(1)", "unknown function"),
    ("1 / 0", "division by zero"), ("(1 + 2", "expected ')'"), ("__import__(os)", "unknown function"),
    ("", "empty"), ("1; 2", "unexpected character"), ("min(1)", "takes 2 arguments"),
])
def test_bad_expressions_name_the_key(text: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        evaluate(text, {"n": 4}, file="f.toml", key="kernel[0].grid[0]")
    assert message in info.value.message
    assert info.value.key == "kernel[0].grid[0]" and info.value.file == "f.toml"


GOOD = xy_spec("k", grid="ceil_div(n, 128)", block=128, n="1000", x_type="const float* __restrict__")


def test_examples_parse_and_resolve() -> None:
    for path in sorted(EXAMPLES.glob("*.regrapht.toml")):
        spec = load_spec(path)
        for kernel in spec.kernels:
            resolved = resolve(kernel)
            assert resolved.buffers and resolved.grid[0] >= 1


def test_defaults_roles_and_resolve() -> None:
    kernel = parse_spec(GOOD, file="k.toml").kernel("k")
    x, y, n = kernel.args
    assert x.role == "in" and x.ctype.const and y.role == "out" and n.value == "1000"
    assert kernel.rtol == 1e-5 and kernel.atol == 1e-6
    resolved = resolve(kernel)
    assert resolved.grid == (8, 1, 1) and resolved.block == (128, 1, 1)
    assert resolved.bytes_moved == 8000
    launched = resolve(kernel, launch=LaunchConfig(("ceil_div(n, 256)",), ("256",)))
    assert launched.grid == (4, 1, 1)
    assert odd_size_variant(kernel, resolved) == {"n": 999}


@pytest.mark.parametrize(("edit", "key", "message"), [
    (('value = "1000"', 'value = "m + 1"'), "kernel[0].arg[2].value", "unknown name 'm'"),
    (('count = "n"\ninit', 'count = "q"\ninit'), "kernel[0].arg[0].count", "unknown name 'q'"),
    (('init = "uniform(-1, 1)"', 'init = "gauss(0, 1)"'), "kernel[0].arg[0].init", "unknown initialiser"),
    (('init = "uniform(-1, 1)"\n', ''), "kernel[0].arg[0].init", "needs an 'init'"),
    (('type = "float*"', 'type = "float5*"'), "kernel[0].arg[1].type", "unknown type"),
    (('role = "out"', 'role = "output"'), "kernel[0].arg[1].role", "role must be"),
    (('grid = ["ceil_div(n, 128)"]', 'grid = ["n +"]'), "kernel[0].grid[0]", "unexpected"),
    (('block = [128]', 'block = [2048]'), "kernel[0].block", "more than 1024"),
    (('block = [128]\n', ''), "kernel[0].block", "missing 'block'"),
    (('name = "k"', 'name = 3'), "kernel[0].name", "kernel name"),
    (('value = "1000"', 'value = "0"'), "kernel[0].arg[0].count", "must be positive"),
    (('value = "1000"', 'value = "1 << 40"'), "kernel[0].arg[2].value", "does not fit"),
])
def test_spec_errors_name_their_key(edit: tuple[str, str], key: str, message: str) -> None:
    text = GOOD.replace(*edit, 1)
    assert text != GOOD
    with pytest.raises(InputError) as info:
        parse_spec(text, file="k.regrapht.toml")
    assert info.value.key == key, info.value
    assert message in info.value.message
    assert info.value.file == "k.regrapht.toml"


def test_bad_toml_names_the_line() -> None:
    with pytest.raises(InputError) as info:
        parse_spec("[[kernel]]\nname = \n", file="s.toml")
    assert info.value.line == 2


def test_initialisers() -> None:
    rng = np.random.default_rng(0)
    assert generate(parse_init("arange(1, 2)"), 4, "float32", rng).tolist() == [1, 3, 5, 7]
    assert generate(parse_init("const(7)"), 2, "int32", rng).tolist() == [7, 7]
    values = generate(parse_init("randint(0, 256)"), 1000, "uint8", rng)
    assert values.dtype == np.uint8 and values.min() >= 0
    u = generate(parse_init("uniform(-1, 1)"), 1000, "float32", rng)
    assert u.min() >= -1 and u.max() < 1
    assert generate(parse_init("zeros"), 3, "float64", rng).tolist() == [0, 0, 0]


def test_infer_from_launch_sites_round_trips() -> None:
    for name, kernel in (("saxpy", "saxpy"), ("matmul", "matmul"), ("transpose", "transpose_tiled"),
                         ("histogram", "histogram"), ("reduce_sum", "reduce_sum")):
        text = infer_spec((EXAMPLES / f"{name}.cu").read_text(), kernel, file=f"{name}.cu")
        spec = parse_spec(text)
        assert spec.kernels[0].name == kernel
    saxpy = parse_spec(infer_spec((EXAMPLES / "saxpy.cu").read_text(), "saxpy")).kernels[0]
    assert saxpy.grid == ("(n + 99) / 100",) and saxpy.block == (100,)
    matmul = parse_spec(infer_spec((EXAMPLES / "matmul.cu").read_text(), "matmul")).kernels[0]
    assert matmul.block == (16, 16) and matmul.args[2].role == "out" and matmul.args[0].count == "N * N"
    hist = parse_spec(infer_spec((EXAMPLES / "histogram.cu").read_text(), "histogram")).kernels[0]
    assert hist.args[1].role == "out" and hist.args[1].init is not None and hist.args[1].init.kind == "zeros"


def test_infer_uses_cudamalloc_sizes_and_renames_host_names() -> None:
    source = """
__global__ void add(const float *a, float *b, int count) { int i = threadIdx.x; if (i < count) b[i] += a[i]; }
void host(int m) {
    float *da, *db;
    cudaMalloc(&da, m * sizeof(float));
    cudaMalloc((void **)&db, sizeof(float) * m);
    add<<<(m + 127) / 128, 128>>>(da, db, m);
}
"""
    kernel = parse_spec(infer_spec(source, "add")).kernels[0]
    assert kernel.grid == ("(count + 127) / 128",)
    assert [a.count for a in kernel.args[:2]] == ["count", "count"]
    assert kernel.args[1].role == "inout"


def test_infer_unknown_kernel_names_the_file() -> None:
    with pytest.raises(InputError) as info:
        infer_spec((EXAMPLES / "saxpy.cu").read_text(), "nope", file="saxpy.cu")
    assert info.value.file == "saxpy.cu" and "saxpy" in info.value.message
