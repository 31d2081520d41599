"""A struct passed by value as its bytes (`type = "struct NAME"`, `bytes`, `align`: the spec
extension capture writes, docs/kernel-spec.md): parsing, errors by key, the worker's wire, and the
mangled name the kernel is found by."""

from __future__ import annotations

import pytest

from regrapht.errors import InputError
from regrapht.spec.model import parse_spec
from regrapht.spec.resolve import resolve
from regrapht.validate.mangle import find_entry, mangle

SPEC = """[[kernel]]
name = "step"
grid = ["(n + 127) / 128"]
block = [128]

[[kernel.arg]]
name = "params"
type = "struct physics::Params"
bytes = "0000803f0000004000004040"

[[kernel.arg]]
name = "x"
type = "float*"
count = "n"
init = "zeros"

[[kernel.arg]]
name = "n"
type = "int"
value = "4096"
"""


def test_a_struct_argument_reads_and_resolves() -> None:
    kernel = parse_spec(SPEC).kernel("step")
    params = kernel.args[0]
    assert params.is_struct and not params.is_scalar and not params.is_pointer
    assert params.raw == bytes.fromhex("0000803f0000004000004040") and params.align == 4  # 12 bytes: 4
    assert kernel.signature() == "step(physics::Params, float*, int)"
    resolved = resolve(kernel)
    assert "params" not in resolved.scalars and resolved.args[0] == ("params", "bytes")
    assert resolved.to_wire()["structs"] == {"params": ["0000803f0000004000004040", 4]}
    assert mangle("step", [a.ctype for a in kernel.args]) == "_Z4stepN7physics6ParamsEPfi"
    assert find_entry(["_Z4stepN7physics6ParamsEPfi", "_Z4stepPfi"], "step", [a.ctype for a in kernel.args],
                      None) == "_Z4stepN7physics6ParamsEPfi"


def test_a_struct_named_twice_is_a_substitution() -> None:
    text = SPEC.replace('[[kernel.arg]]\nname = "x"', '[[kernel.arg]]\nname = "other"\ntype = "struct physics::Params"\n'
                        'bytes = "00000000"\n\n[[kernel.arg]]\nname = "x"')
    kernel = parse_spec(text).kernel("step")
    # a class name and its namespace are substitution candidates (S_ the namespace, S0_ the class)
    assert mangle("step", [a.ctype for a in kernel.args]) == "_Z4stepN7physics6ParamsES0_Pfi"


@pytest.mark.parametrize(("change", "key", "message"), [
    (('bytes = "0000803f0000004000004040"\n', ''), "kernel[0].arg[0].bytes", "needs 'bytes'"),
    (('bytes = "0000803f0000004000004040"', 'bytes = "0x12"'), "kernel[0].arg[0].bytes", "hexadecimal"),
    (('bytes = "0000803f0000004000004040"', 'bytes = "0000803f0000004000004040"\nalign = 3'),
     "kernel[0].arg[0].align", "power of two"),
    (('bytes = "0000803f0000004000004040"', 'bytes = "0000803f0000004000004040"\nvalue = "1"'),
     "kernel[0].arg[0].value", "takes 'bytes'"),
    (('value = "4096"', 'value = "4096"\nbytes = "00"'), "kernel[0].arg[2].bytes", "for a struct passed by value"),
    (('value = "4096"', 'value = "params"'), "kernel[0].arg[2].value", "unknown name 'params'"),
])
def test_bad_struct_arguments_name_the_key(change: tuple[str, str], key: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_spec(SPEC.replace(*change))
    assert caught.value.key == key and message in str(caught.value)


def test_a_struct_larger_than_the_parameter_space_is_refused() -> None:
    with pytest.raises(InputError, match="at most 4096"):
        parse_spec(SPEC.replace("0000803f0000004000004040", "00" * 4097))


@pytest.mark.parametrize(("params", "mangled"), [  # as g++ 12 mangles them
    (["struct physics::Params", "float*", "float*", "struct physics::Params"], "_Z4stepN7physics6ParamsEPfS1_S0_"),
    (["struct P2", "struct P2", "const float*", "const float*"], "_Z4step2P2S_PKfS1_"),
    (["struct ns::A", "struct ns::B", "struct ns::A"], "_Z4stepN2ns1AENS_1BES0_"),
])
def test_struct_manglings(params: list[str], mangled: str) -> None:
    args = "".join(
        f'\n[[kernel.arg]]\nname = "a{i}"\ntype = "{t}"\n'
        + ('bytes = "00000000"\n' if t.startswith("struct") else 'count = 4\ninit = "zeros"\n')
        for i, t in enumerate(params))
    kernel = parse_spec(f'[[kernel]]\nname = "step"\ngrid = [1]\nblock = [32]\n{args}').kernel("step")
    assert mangle("step", [a.ctype for a in kernel.args]) == mangled
