"""The spec language against docs/kernel-spec.md: every construct it allows works, every way to
break it is one clean `InputError` naming the file and the key (exit 2 in the CLI), never a
traceback, and hostile sizes fail fast."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from regrapht.cli import main
from regrapht.errors import InputError
from regrapht.gpu_arch import MAX_SHARED_BYTES_PER_BLOCK as MAX_SHARED_BYTES
from regrapht.search.prompt import extract_launch
from regrapht.spec.draw import generate
from regrapht.spec.expr import evaluate, names_in
from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import load_spec, parse_spec
from regrapht.spec.resolve import resolve

FILE = "k.regrapht.toml"


def spec_text(*, kernel: str = "", args: str = "", grid: str = '["ceil_div(n, 256)"]', block: str = "[256]") -> str:
    """A kernel `k(const float* x, float* y, int n, float eps)`; `kernel` adds lines to the
    [[kernel]] table, `args` whole extra [[kernel.arg]] tables after `eps`."""
    return f"""
[[kernel]]
name = "k"
grid = {grid}
block = {block}
{kernel}

[[kernel.arg]]
name = "x"
type = "const float*"
count = "n"
init = "uniform(-1, 1)"

[[kernel.arg]]
name = "y"
type = "float*"
count = "n"
role = "out"

[[kernel.arg]]
name = "n"
type = "int"
value = "1000"

[[kernel.arg]]
name = "eps"
type = "float"
value = "1e-5"
{args}
"""


def resolved(text: str):  # type: ignore[no-untyped-def]
    return resolve(parse_spec(text, file=FILE).kernels[0])


# -- what the document allows ------------------------------------------------------------------

@pytest.mark.parametrize(("literal", "value"), [
    ("42", 42), ("0x100", 256), ("0X1f", 31), ("256u", 256), ("256U", 256), ("1LL", 1), ("1ll", 1),
    ("7ull", 7), ("7LLU", 7), ("3l", 3), ("3ul", 3), ("010", 8), ("0", 0),
    ("1.5", 1.5), ("2.0f", 2.0), ("2.f", 2.0), ("1e-5", 1e-5), ("1E+3", 1000.0), ("1e5f", 1e5),
    (".5", 0.5), (".5e1", 5.0), ("1.5e-3F", 1.5e-3), ("18446744073709551615", 2**64 - 1),
    ("-9223372036854775807 - 1", -(2**63)),
])
def test_c_literals(literal: str, value: float) -> None:
    assert evaluate(literal, {}) == value
    assert names_in(literal) == set(), "a literal's letters are not scalar names"


@pytest.mark.parametrize("literal", ["1e-5", "2.0f", "0x100", "256u", "1LL", ".5", "1.5e-3F"])
def test_literals_in_every_key(literal: str) -> None:
    """The same literal as a scalar value, in a count, an init argument, grid, block and
    shared_bytes (old code took the `e` of `1e-5` for an unknown scalar in every one)."""
    text = spec_text(
        grid=f'["ceil_div(n, 256) + 0 * ({literal})"]', block=f'["256 + 0 * ({literal})"]',
        kernel=f'shared_bytes = "0 * ({literal})"',
    ).replace('value = "1e-5"', f'value = "{literal}"').replace(
        'count = "n"\ninit = "uniform(-1, 1)"', f'count = "n + 0 * ({literal})"\ninit = "uniform(-1, 1 + {literal})"')
    kernel = resolved(text)
    assert kernel.scalars["eps"] == pytest.approx(float(evaluate(literal, {})), rel=1e-6)
    assert kernel.grid == (4, 1, 1) and kernel.block == (256, 1, 1) and kernel.buffers[0].count == 1000


def test_layernorm_eps_spec_is_usable() -> None:
    kernel = resolved(spec_text())
    assert kernel.scalars["eps"] == pytest.approx(1e-5) and kernel.scalar_dtypes["eps"] == "float32"


def test_init_args_use_any_scalar_even_one_declared_later() -> None:
    """CSR SpMV: `col` holds randint(0, ncols) where ncols is declared after it."""
    text = """
[[kernel]]
name = "spmv"
grid = ["ceil_div(rows, 128)"]
block = [128]

[[kernel.arg]]
name = "col"
type = "const int*"
count = "nnz"
init = "randint(0, ncols)"

[[kernel.arg]]
name = "val"
type = "const float*"
count = "nnz"
init = "normal(0, scale)"

[[kernel.arg]]
name = "start"
type = "const int*"
count = "rows + 1"
init = "arange(0, nnz / rows)"

[[kernel.arg]]
name = "y"
type = "float*"
count = "rows"
role = "out"
init = "const(ncols - 1)"

[[kernel.arg]]
name = "rows"
type = "int"
value = "4096"

[[kernel.arg]]
name = "nnz"
type = "int"
value = "rows * 16"

[[kernel.arg]]
name = "ncols"
type = "int"
value = "3000"

[[kernel.arg]]
name = "scale"
type = "float"
value = "0.5f"
"""
    kernel = parse_spec(text, file=FILE).kernels[0]
    result = resolve(kernel)
    inits = {b.name: b.init for b in result.buffers}
    assert inits["col"] is not None and inits["col"].params == (0.0, 3000.0)
    assert inits["val"] is not None and inits["val"].params == (0.0, 0.5)
    assert inits["start"] is not None and inits["start"].params == (0.0, 16.0)
    assert inits["y"] is not None and inits["y"].params == (2999.0,)
    # A smaller problem size (the odd-size trial) moves the init's bound with it.
    smaller = resolve(kernel, overrides={"rows": 7})
    assert {b.name: b.count for b in smaller.buffers} == {"col": 112, "val": 112, "start": 8, "y": 7}
    values = generate(inits["col"], 10_000, "int32", np.random.default_rng(0))
    assert values.min() >= 0 and values.max() < 3000


@pytest.mark.parametrize("init", [
    "uniform(-1, 1)", "normal(0, 1)", "randint(0, 10)", "zeros", "ones", "const(3)", "arange(0, 1)",
    "uniform(-n, n)", "normal(eps, 2 * eps)", "randint(1, n)", "const(1e-5)", "arange(n, -1)",
])
def test_every_initialiser(init: str) -> None:
    kernel = resolved(spec_text().replace('init = "uniform(-1, 1)"', f'init = "{init}"'))
    made = kernel.buffers[0].init
    assert made is not None and made.kind == init.split("(")[0]
    assert generate(made, 16, "float32", np.random.default_rng(1)).shape == (16,)


@pytest.mark.parametrize(("ctype", "dtype"), [
    ("int", "int32"), ("unsigned int", "uint32"), ("long long", "int64"), ("unsigned long long", "uint64"),
    ("size_t", "uint64"), ("float", "float32"), ("double", "float64"), ("char", "int8"),
    ("unsigned char", "uint8"), ("short", "int16"), ("bool", "bool"),
])
def test_every_type(ctype: str, dtype: str) -> None:
    """Every scalar type as a scalar and as pointers (plain, const, __restrict__)."""
    value = "1" if ctype == "bool" else "100"
    text = f"""
[[kernel]]
name = "k"
grid = [1]
block = [32]

[[kernel.arg]]
name = "a"
type = "const {ctype}* __restrict__"
count = "8"
init = "ones"

[[kernel.arg]]
name = "b"
type = "{ctype}*"
count = "8"
role = "out"

[[kernel.arg]]
name = "c"
type = "{ctype} *__restrict__"
count = "8"
init = "zeros"

[[kernel.arg]]
name = "s"
type = "{ctype}"
value = "{value}"
"""
    kernel = resolved(text)
    assert [b.dtype for b in kernel.buffers] == [dtype] * 3
    assert kernel.scalar_dtypes["s"] == dtype and [b.role for b in kernel.buffers] == ["in", "out", "inout"]


def test_launch_and_counts_use_scalars_declared_after_them() -> None:
    text = spec_text(grid='["ceil_div(n, tile)", "rows"]', block='["tile", "2"]',
                     kernel='shared_bytes = "tile * 4 * 2"',
                     args='[[kernel.arg]]\nname = "tile"\ntype = "int"\nvalue = "0x80"\n\n'
                          '[[kernel.arg]]\nname = "rows"\ntype = "int"\nvalue = "3"\n')
    kernel = resolved(text)
    assert kernel.grid == (8, 3, 1) and kernel.block == (128, 2, 1) and kernel.shared_bytes == 1024


# -- every way to break it ---------------------------------------------------------------------

BIG = "9" * 5001


def _case(old: str, new: str, key: str, message: str) -> tuple[str, str, str, str]:
    """In the base spec, `old` replaced by `new` must fail at `key` with `message`."""
    return (old, new, key, message)


CASES = [
    # depth, size, length
    _case('value = "1000"', 'value = "' + "(" * 300 + "1000" + ")" * 300 + '"', "kernel[0].arg[2].value",
          "nested more than"),
    _case('value = "1000"', 'value = "' + "-" * 300 + '1000"', "kernel[0].arg[2].value", "nested more than"),
    _case('value = "1000"', f'value = "{BIG}"', "kernel[0].arg[2].value", "does not fit in 64 bits"),
    _case('value = "1e-5"', f'value = "{BIG}.0"', "kernel[0].arg[3].value", "not a finite number"),
    _case('value = "1000"', 'value = "1' + " << 1" * 1000 + '"', "kernel[0].arg[2].value", "64-bit"),
    _case('value = "1000"', 'value = "' + "1 << " * 100_000 + '1"', "kernel[0].arg[2].value", "the limit is"),
    # overflow
    _case('value = "1e-5"', f"value = {2**70}", "kernel[0].arg[3].value", "64-bit"),
    _case('value = "1e-5"', 'value = "(1 << 62) * 1024"', "kernel[0].arg[3].value", "64-bit"),
    _case('value = "1e-5"', 'value = "1e39"', "kernel[0].arg[3].value", "does not fit in float32"),
    _case('value = "1e-5"', 'value = "1e999"', "kernel[0].arg[3].value", "not a finite number"),
    _case('value = "1e-5"', "value = inf", "kernel[0].arg[3].value", "not a finite number"),
    _case('value = "1e-5"', "value = nan", "kernel[0].arg[3].value", "not a finite number"),
    _case('count = "n"\ninit', f'count = {2**2520}\ninit', "kernel[0].arg[0].count", "64-bit"),
    _case('count = "n"\ninit', 'count = "(1 << 62) * 2"\ninit', "kernel[0].arg[0].count", "2^63 bytes"),
    _case('count = "n"\ninit', 'count = "1 << 2520"\ninit', "kernel[0].arg[0].count", "shift count"),
    _case('value = "1000"', 'value = "1 << 40"', "kernel[0].arg[2].value", "does not fit in int32"),
    # tolerances
    _case('block = [256]', "block = [256]\nrtol = nan", "kernel[0].rtol", "finite"),
    _case('block = [256]', "block = [256]\natol = inf", "kernel[0].atol", "finite"),
    _case('block = [256]', "block = [256]\nrtol = -1.0", "kernel[0].rtol", "non-negative"),
    _case('block = [256]', f"block = [256]\natol = {2**2000}", "kernel[0].atol", "finite"),
    # unknown keys, with a hint
    _case('block = [256]', "blok = [256]", "kernel[0].blok", "did you mean 'block'"),
    _case('role = "out"', 'rol = "out"', "kernel[0].arg[1].rol", "did you mean 'role'"),
    _case('block = [256]', 'block = [256]\nshared = "0"', "kernel[0].shared", "did you mean 'shared_bytes'"),
    _case('[[kernel]]', 'kernels = 1\n[[kernel]]', "kernels", "did you mean 'kernel'"),
    _case('count = "n"\ninit', 'count = "nn"\ninit', "kernel[0].arg[0].count", "did you mean 'n'"),
    # impossible launches
    _case('block = [256]', 'block = [256]\nshared_bytes = "1 << 40"', "kernel[0].shared_bytes", "no GPU"),
    _case('block = [256]', f'block = [256]\nshared_bytes = "{MAX_SHARED_BYTES + 1}"',
          "kernel[0].shared_bytes", "no GPU"),
    _case('block = [256]', 'block = [256]\nshared_bytes = "-1"', "kernel[0].shared_bytes", "negative"),
    _case('block = [256]', "block = [2048]", "kernel[0].block", "more than 1024 threads"),
    _case('block = [256]', "block = [1, 1, 128]", "kernel[0].block[2]", "at most 64"),
    _case('block = [256]', "block = [0]", "kernel[0].block[0]", "outside"),
    _case('grid = ["ceil_div(n, 256)"]', 'grid = ["1 << 31"]', "kernel[0].grid[0]", "outside"),
    _case('grid = ["ceil_div(n, 256)"]', 'grid = [1, 65536]', "kernel[0].grid[1]", "outside"),
    # malformed literals and initialisers
    _case('value = "1e-5"', 'value = "1e"', "kernel[0].arg[3].value", "malformed number"),
    _case('value = "1e-5"', 'value = "1LLL"', "kernel[0].arg[3].value", "malformed number"),
    _case('value = "1e-5"', 'value = "09"', "kernel[0].arg[3].value", "malformed octal"),
    _case('value = "1e-5"', 'value = "0x"', "kernel[0].arg[3].value", "malformed number"),
    _case('init = "uniform(-1, 1)"', 'init = "randint(0, m)"', "kernel[0].arg[0].init", "unknown name 'm'"),
    _case('init = "uniform(-1, 1)"', 'init = "randint(n, 0)"', "kernel[0].arg[0].init", "lo must be less"),
    _case('init = "uniform(-1, 1)"', 'init = "uniform(-1, ' + "(" * 300 + "1" + ")" * 300 + ')"',
          "kernel[0].arg[0].init", "nested more than"),
    _case('init = "uniform(-1, 1)"', 'init = "const(1e999)"', "kernel[0].arg[0].init", "not a finite"),
    # TOML nesting deep enough to crash tomllib's recursion
    _case('[[kernel]]', "deep = " + "[" * 5000 + "]" * 5000 + "\n[[kernel]]", "", "nested too deeply"),
]


@pytest.mark.parametrize(("old", "new", "key", "message"), CASES,
                         ids=[f"{c[2] or 'toml'}-{c[3][:20]}" for c in CASES])
def test_broken_specs_name_file_and_key(old: str, new: str, key: str, message: str) -> None:
    text = spec_text()
    assert old in text
    started = time.perf_counter()
    with pytest.raises(InputError) as info:
        resolved(text.replace(old, new, 1))
    assert time.perf_counter() - started < 2.0, "hostile input must fail fast"
    assert message in info.value.message, info.value.message
    assert info.value.file == FILE
    assert (info.value.key or "") == key
    assert len(str(info.value)) < 400 and "\n" not in str(info.value)


def test_model_launch_answer_with_endless_signs_is_a_clean_rejection() -> None:
    """A model's `LAUNCH grid=(----...n)` reaches resolve() through extract_launch."""
    kernel = parse_spec(spec_text(), file=FILE).kernels[0]
    answer = "```cuda\n__global__ void k() {}\n```\nLAUNCH grid=(" + "-" * 5000 + "n) block=(256)"
    launch = extract_launch(answer, LaunchConfig(("ceil_div(n, 256)",), ("256",)))
    with pytest.raises(InputError) as info:
        resolve(kernel, launch=launch)
    assert info.value.key == "launch.grid[0]" and "nested more than" in info.value.message
    with pytest.raises(InputError) as info:
        resolve(kernel, launch=LaunchConfig(("1",), ("256",), "1 << 40"))
    assert info.value.key == "launch.shared_bytes"


# -- files and the CLI -------------------------------------------------------------------------

def _check(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["spec", "check", str(path)])
    return code, capsys.readouterr().err


def test_cli_non_utf8_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.regrapht.toml"
    path.write_bytes(spec_text().encode().replace(b"uniform", b"unif\xff\xfeorm"))
    code, err = _check(path, capsys)
    assert code == 2 and str(path) in err and "not UTF-8" in err and err.count("\n") == 1
    assert f"{path}:{spec_text().count(chr(10), 0, spec_text().index('uniform')) + 1}:" in err


@pytest.mark.parametrize(("old", "new", "key"), [
    ('value = "1000"', 'value = "' + "(" * 300 + "1" + ")" * 300 + '"', "kernel[0].arg[2].value"),
    ('block = [256]', "blok = [256]", "kernel[0].blok"),
    ('count = "n"\ninit', f'count = {2**2520}\ninit', "kernel[0].arg[0].count"),
])
def test_cli_exit_2_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str,
                             key: str) -> None:
    path = tmp_path / "k.regrapht.toml"
    path.write_text(spec_text().replace(old, new, 1), encoding="utf-8")
    code, err = _check(path, capsys)
    assert code == 2 and err.startswith("regrapht: error: ") and str(path) in err and f"[{key}]" in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_cli_valid_literals_and_later_scalars(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "k.regrapht.toml"
    path.write_text(spec_text().replace('init = "uniform(-1, 1)"', 'init = "randint(0, n)"'), encoding="utf-8")
    assert main(["spec", "check", str(path)]) == 0
    assert "x[1000] in" in capsys.readouterr().out


def test_examples_still_load() -> None:
    examples = Path(__file__).resolve().parents[2] / "examples"
    for path in sorted(examples.glob("*.regrapht.toml")):
        for kernel in load_spec(path).kernels:
            resolve(kernel)
