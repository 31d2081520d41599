"""The one integer evaluator (`cuda/intexpr.py`): C semantics, and "not a constant" instead of
an exception for what C leaves undefined, overflows or names something unknown."""

from __future__ import annotations

import pytest

from regrapht.cuda.affine import Poly
from regrapht.cuda.intexpr import (
    ConstantFolder,
    constant_value,
    fold_binary,
    fold_unary,
    int_literal,
    parse_expression,
)


@pytest.mark.parametrize(("expression", "value"), [
    ("-7 / 2", -3),  # truncates toward zero, not floor (-4)
    ("7 / -2", -3),
    ("-7 % 2", -1),  # the remainder takes the dividend's sign
    ("7 % -2", 1),
    ("-8 / 2", -4),
    ("1 << 4", 16),
    ("-1 << 2", -4),  # a multiplication, as in C++20 and nvcc
    ("256 >> 3", 32),
    ("-16 >> 2", -4),  # arithmetic shift of a signed value
    ("0xF0 & 0x3C", 0x30),
    ("0xF0 | 0x0F", 0xFF),
    ("6 ^ 3", 5),
    ("~0", -1),
    ("!0 + !5", 1),
    ("1 + 2 * 3", 7),  # precedence: * before +
    ("(1 + 2) * 3", 9),
    ("1 << 2 + 1", 8),  # + before <<
    ("8 - 2 - 1", 5),  # left associative
    ("2 * 3 % 4", 2),
    ("3 < 4", 1),
    ("3 >= 4", 0),
    ("2 == 2 && 1 != 1", 0),
    ("0 || 7", 1),
    ("1 ? 10 : 20", 10),
    ("0 ? 10 : 20", 20),
    ("(int) 5 + (unsigned) 2", 7),
    ("int(9) / size_t(2)", 4),
    ("sizeof(float4) / sizeof(float)", 4),
    ("sizeof(double)", 8),
    ("0x1F", 31),
    ("017", 15),
    ("1'000", 1000),
    ("256u", 256),
    ("warpSize * 2", 64),
    ("(N + 31) / 32", 4),
])
def test_constant_value_has_c_semantics(expression: str, value: int) -> None:
    assert constant_value(expression, {"N": 100}) == value


@pytest.mark.parametrize("expression", [
    "1 / 0",  # undefined
    "5 % 0",
    "1 << 64",  # a shift past the width
    "1 << -1",
    "9223372036854775807 + 1",  # signed overflow
    "4611686018427387904 * 4",
    "n + 1",  # an unknown name
    "x ? 1 : 2",  # a condition that is not a constant
    "(float) 3",  # leaves the integers
    "2.5",
    "sizeof(struct Foo)",
    "a[0]",
    "f(3)",
])
def test_what_is_not_a_constant_gives_none(expression: str) -> None:
    assert constant_value(expression, {"N": 100}) is None


def test_text_that_is_not_one_expression_gives_none() -> None:
    assert constant_value("1 +") is None
    assert constant_value("1; int y = 2") is None
    assert parse_expression(")(") is None


def test_fold_binary_and_unary() -> None:
    assert fold_binary("/", -7, 2) == -3
    assert fold_binary("%", -7, 2) == -1
    assert fold_binary("/", -(1 << 63), -1) is None  # INT64_MIN / -1 overflows
    assert fold_binary("<<", 1, 63) is None
    assert fold_binary("<<", 1, 62) == 1 << 62
    assert fold_binary("?", 1, 2) is None
    assert fold_unary("-", -(1 << 63)) is None
    assert fold_unary("~", 5) == -6
    assert fold_unary("*", 5) is None


def test_int_literal() -> None:
    assert int_literal("0x10") == 16
    assert int_literal("010") == 8
    assert int_literal("09") is None  # not an octal literal
    assert int_literal("12ULL") == 12
    assert int_literal("1.0") is None


def _poly(expression: str, constants: dict[str, int] | None = None) -> Poly:
    parsed = parse_expression(expression)
    assert parsed is not None
    return ConstantFolder(constants or {}).poly(parsed[1])


def test_polynomials_over_unknown_names() -> None:
    index = _poly("(blockIdx.x * blockDim.x + threadIdx.x) * 4 + k")
    assert index == Poly.of({("blockDim.x", "blockIdx.x"): 4, ("threadIdx.x",): 4, ("k",): 1})
    assert _poly("i << 3") == Poly.of({("i",): 8})  # a shift by a constant scales
    assert _poly("i * W + j") == _poly("j + W * i")
    assert _poly("W * (H - 2)", {"H": 10}) == Poly.of({("W",): 8})


def test_non_polynomial_parts_become_opaque_atoms() -> None:
    quotient = _poly("i / 2")
    assert quotient.constant is None
    assert len(quotient.terms) == 1 and quotient.terms[0][0][0].startswith("~")
    assert _poly("(float) i").constant is None
    deep = "1" + " + 1" * 300  # nested beyond the depth limit: opaque, no recursion error
    assert _poly(deep).constant is None
