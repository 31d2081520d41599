"""`init = "file(PATH.npy)"` and `expect = "file(...)"`, the spec extension for captured data
(docs/kernel-spec.md): parsing, paths relative to the spec, the checks against the buffer, what
the GPU worker is sent, the data drawn, and no smaller odd size for captured data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from regrapht.errors import InputError
from regrapht.spec.draw import generate
from regrapht.spec.init import parse_init_spec
from regrapht.spec.model import load_spec, parse_spec
from regrapht.spec.resolve import odd_size_variant, resolve, uses_files

SPEC = """[[kernel]]
name = "scale"
grid = ["(n + 255) / 256"]
block = [256]

[[kernel.arg]]
name = "x"
type = "const float*"
count = "n"
init = "file(data/x.npy)"

[[kernel.arg]]
name = "y"
type = "float*"
count = "n"
init = "file('data/y.npy')"
role = "inout"
expect = "file(data/y.after.npy)"

[[kernel.arg]]
name = "n"
type = "int"
value = "1000"
"""


@pytest.fixture
def spec_path(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    np.save(tmp_path / "data" / "x.npy", np.arange(1000, dtype=np.float32))
    np.save(tmp_path / "data" / "y.npy", np.ones(1000, dtype=np.float32))
    np.save(tmp_path / "data" / "y.after.npy", np.arange(1000, dtype=np.float32) * 2 + 1)
    path = tmp_path / "k.regrapht.toml"
    path.write_text(SPEC)
    return path


def test_file_inputs_resolve_relative_to_the_spec(spec_path: Path) -> None:
    kernel = load_spec(spec_path).kernel("scale")
    assert kernel.args[0].init is not None and kernel.args[0].init.path == "data/x.npy"
    assert kernel.args[1].init is not None and kernel.args[1].init.path == "data/y.npy"  # quotes dropped
    resolved = resolve(kernel)
    x, y = resolved.buffers
    assert x.init is not None and Path(x.init.path or "") == spec_path.parent / "data" / "x.npy"
    assert y.expect == str(spec_path.parent / "data" / "y.after.npy")
    wire = resolved.to_wire()["buffers"]
    assert isinstance(wire, list)
    assert wire[0]["init"][:3] == ["file", [], str(spec_path.parent / "data" / "x.npy")]
    assert wire[1]["expect"][0] == y.expect and "expect" not in wire[0]
    assert x.init.text() == f"file({x.init.path})" and not x.init.random
    data = generate(x.init, x.count, x.dtype, np.random.default_rng(0))
    assert np.array_equal(data, np.arange(1000, dtype=np.float32))
    assert uses_files(kernel) and odd_size_variant(kernel, resolved) is None  # one size: the captured one


def test_a_spec_without_files_sends_the_same_wire_as_before() -> None:
    text = SPEC.replace('init = "file(data/x.npy)"', 'init = "uniform(-1, 1)"')
    text = text.replace("init = \"file('data/y.npy')\"", 'init = "zeros"').replace('expect = "file(data/y.after.npy)"\n', "")
    kernel = parse_spec(text).kernel("scale")
    wire = resolve(kernel).to_wire()["buffers"]
    assert wire == [{"name": "x", "dtype": "float32", "count": 1000, "role": "in", "init": ["uniform", [-1.0, 1.0]]},
                    {"name": "y", "dtype": "float32", "count": 1000, "role": "inout", "init": ["zeros", []]}]
    assert not uses_files(kernel) and odd_size_variant(kernel, resolve(kernel)) is not None


@pytest.mark.parametrize(("change", "key", "message"), [
    (('init = "file(data/x.npy)"', 'init = "file(data/x.txt)"'), "kernel[0].arg[0].init", "only .npy files"),
    (('init = "file(data/x.npy)"', 'init = "file()"'), "kernel[0].arg[0].init", "needs the path of a .npy file"),
    (('init = "file(data/x.npy)"', 'init = "file(data/missing.npy)"'), "kernel[0].arg[0].init", "No such file"),
    (('value = "1000"', 'value = "999"'), "kernel[0].arg[0].init", "holds 1000 elements, the buffer's count is 999"),
    (('expect = "file(data/y.after.npy)"', 'expect = "zeros"'), "kernel[0].arg[1].expect", "takes file(PATH.npy)"),
    (('init = "file(data/x.npy)"\n', 'init = "file(data/x.npy)"\nexpect = "file(data/x.npy)"\n'),
     "kernel[0].arg[0].expect", "'x' is 'in'"),
    (('expect = "file(data/y.after.npy)"', 'expekt = "file(data/y.after.npy)"'), "kernel[0].arg[1].expekt",
     "did you mean 'expect'"),
])
def test_bad_file_inputs_name_the_key(spec_path: Path, change: tuple[str, str], key: str, message: str) -> None:
    spec_path.write_text(SPEC.replace(*change))
    with pytest.raises(InputError) as caught:
        load_spec(spec_path)
    assert caught.value.key == key and message in str(caught.value)


def test_a_scalar_cannot_take_expect() -> None:
    text = SPEC.replace('value = "1000"', 'value = "1000"\nexpect = "file(a.npy)"')
    with pytest.raises(InputError, match="'expect' is for pointers"):
        parse_spec(text)


def test_file_init_parses_alone() -> None:
    assert parse_init_spec('file("a b/c.npy")').path == "a b/c.npy"
    with pytest.raises(InputError, match="file\\(path.npy\\)"):
        parse_init_spec("fil(a.npy)")


def test_a_file_input_that_is_not_a_regular_file_is_refused(spec_path: Path) -> None:
    import os

    fifo = spec_path.parent / "data" / "fifo.npy"
    os.mkfifo(fifo)  # opening it would wait for a writer forever
    spec_path.write_text(SPEC.replace("file(data/x.npy)", "file(data/fifo.npy)"))
    with pytest.raises(InputError, match="is not a regular file"):
        load_spec(spec_path)
