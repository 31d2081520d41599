"""The one evaluator of C integer expressions: literals, constant folding, index polynomials.

Every engine that reads an integer out of kernel source (the source model in `cuda/extract.py`,
the idioms' `Symbols` and point-kernel builder) folds it here, with C semantics on 64-bit
signed values: `/` truncates toward zero, `%` takes the dividend's sign, shifts, bitwise and
logical operators, comparisons (0 or 1), the ternary with a constant condition, integer casts
and `sizeof` of a basic type (a left shift of a negative value is the multiplication C++20
and nvcc make it). A result that C leaves undefined or that overflows 64 bits (division by
zero, a negative or too wide shift) is "not a constant": `None` from the constant functions,
an opaque atom from `PolyFolder`, never an exception.

`PolyFolder.poly` turns a tree-sitter expression into an `affine.Poly`; its subclasses say what
a name means (`local_value`, `unknown_name`), what an unknown expression becomes (`opaque`) and
may read more shapes (`extension`, e.g. clamps).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.cuda.nodes import ambiguous_cast, encode_source, make_parser, node_text, unparen, walk

INT_MIN = -(1 << 63)
INT_MAX = (1 << 63) - 1
MAX_DEPTH = 120  # deeper expressions become opaque instead of recursing
MAX_SHIFT = 63
# `x << k` with an unknown x stays a polynomial (x * 2^k) for shifts below this.
MAX_SCALING_SHIFT = 31
BUILTIN_VECTORS = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim"})
WARP_SIZE = 32
# Functional casts that keep an integer value: `int(x)`, `size_t(x)`.
INTEGER_CAST_CALLS = frozenset({"int", "long", "size_t"})
_FLOAT_TYPE_WORDS = ("float", "double", "half", "bfloat16")
_INT_LITERAL = re.compile(r"^(0[xX][0-9a-fA-F']+|[0-9][0-9']*)[uUlL]*$")
# sizeof of the basic types (qualifiers dropped), in bytes on every CUDA target.
SIZEOF = {
    "char": 1, "signed char": 1, "unsigned char": 1, "int8_t": 1, "uint8_t": 1, "bool": 1,
    "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2, "half": 2, "__half": 2, "nv_bfloat16": 2,
    "__nv_bfloat16": 2, "float": 4, "int": 4, "unsigned": 4, "unsigned int": 4, "int32_t": 4, "uint32_t": 4,
    "half2": 4, "__half2": 4, "nv_bfloat162": 4, "__nv_bfloat162": 4, "char4": 4, "uchar4": 4, "short2": 4,
    "double": 8, "float2": 8, "int2": 8, "uint2": 8, "long long": 8, "unsigned long long": 8, "int64_t": 8,
    "uint64_t": 8, "size_t": 8, "long": 8, "short4": 8, "float3": 12, "int3": 12, "float4": 16, "int4": 16,
    "uint4": 16, "double2": 16, "longlong2": 16, "double4": 32,
}


def int_literal(text: str) -> int | None:
    """The value of a C integer literal (decimal, octal or hex, with suffixes), else None."""
    match = _INT_LITERAL.match(text.strip())
    if not match:
        return None
    digits = match.group(1).replace("'", "")
    if digits.startswith(("0x", "0X")):
        return int(digits, 16)
    if len(digits) > 1 and digits.startswith("0"):
        return int(digits, 8) if all(c in "01234567" for c in digits) else None
    return int(digits)


def type_bytes(type_text: str) -> int | None:
    """sizeof of a scalar or CUDA vector type spelled `type_text` (qualifiers ignored), else None."""
    words = [w for w in type_text.replace("*", " ").split() if w not in ("const", "volatile", "__restrict__", "__restrict")]
    return SIZEOF.get(" ".join(words))


def in_range(value: int | None) -> int | None:
    """`value` when it fits a 64-bit signed integer, else None (an overflow is not a constant)."""
    return value if value is not None and INT_MIN <= value <= INT_MAX else None


def _quotient(left: int, right: int) -> int:
    quotient = abs(left) // abs(right)
    return quotient if (left >= 0) == (right > 0) else -quotient


BINARY_OPERATORS = frozenset({"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "<", "<=", ">", ">=", "==", "!=",
                              "&&", "||"})


def fold_binary(operator: str, left: int, right: int) -> int | None:
    """`left operator right` in C, or None when C leaves it undefined or it overflows."""
    if operator in ("/", "%"):
        if right == 0:
            return None
        quotient = _quotient(left, right)
        return in_range(quotient if operator == "/" else left - right * quotient)
    if operator in ("<<", ">>"):
        if not 0 <= right <= MAX_SHIFT:
            return None
        return in_range(left << right if operator == "<<" else left >> right)
    results = {
        "+": lambda: left + right, "-": lambda: left - right, "*": lambda: left * right,
        "&": lambda: left & right, "|": lambda: left | right, "^": lambda: left ^ right,
        "<": lambda: int(left < right), "<=": lambda: int(left <= right), ">": lambda: int(left > right),
        ">=": lambda: int(left >= right), "==": lambda: int(left == right), "!=": lambda: int(left != right),
        "&&": lambda: int(bool(left) and bool(right)), "||": lambda: int(bool(left) or bool(right)),
    }
    compute = results.get(operator)
    return in_range(compute()) if compute is not None else None


def fold_unary(operator: str, value: int) -> int | None:
    """`operator value` in C (`-`, `+`, `~`, `!`), or None."""
    results = {"-": -value, "+": value, "~": ~value, "!": int(not value)}
    return in_range(results.get(operator))


def is_float_type(type_text: str) -> bool:
    """A cast to this type leaves the integers (`(float) i`, `static_cast<double>(n)`)."""
    return any(word in type_text for word in _FLOAT_TYPE_WORDS)


def _sizeof_type(node: Node) -> str | None:
    """The type named by `sizeof(T)`, else None (`sizeof x` of an expression). tree-sitter reads
    `sizeof(float4)` (a type name it does not know) as the size of a parenthesized name."""
    type_node = node.child_by_field_name("type")
    if type_node is not None:
        return node_text(type_node)
    value = unparen(node.child_by_field_name("value"))
    return node_text(value) if value is not None and value.type == "identifier" else None


class PolyFolder:
    """Folds a tree-sitter integer expression into an `affine.Poly` with C semantics.

    `+ - *` and `x << k` (k constant) stay polynomial over unknown atoms; every other operator
    folds when its operands are constants. Subclasses provide the scope: `local_value` (a local
    definition's value), `unknown_name`, `opaque` and optionally `extension`.
    """

    def __init__(self, constants: Mapping[str, int]) -> None:
        self.constants = constants

    # ------------------------------------------------------------------ the scope's hooks
    def local_value(self, name: str) -> Poly | None:
        """The value of a local definition of `name` made so far, else None."""
        return None

    def unknown_name(self, name: str, node: Node) -> Poly:
        """A name with no definition and no file constant: an atom of its own name."""
        return Poly.atom(name)

    def opaque(self, node: Node) -> Poly:
        """An expression the folder cannot read as an integer polynomial."""
        raise NotImplementedError

    def extension(self, node: Node, depth: int) -> Poly | None:
        """A shape the scope reads itself (a call, a non-constant ternary), else None."""
        return None

    # ------------------------------------------------------------------ folding
    def poly(self, node: Node | None, depth: int = 0) -> Poly:
        """The polynomial of `node` (0 for a missing node)."""
        node = unparen(node)
        if node is None:
            return Poly.const(0)
        if depth > MAX_DEPTH:
            return self.opaque(node)
        result = self._fold(node, node.type, depth)
        if result is None:
            result = self.extension(node, depth)
        if result is None or (result.constant is not None and in_range(result.constant) is None):
            return self.opaque(node)
        return result

    def _fold(self, node: Node, kind: str, depth: int) -> Poly | None:
        if kind == "number_literal":
            literal = node_text(node)
            value = int_literal(literal.removeprefix("-"))  # `-1` can be one literal token
            if value is None:
                return None
            return Poly.const(-value if literal.startswith("-") else value)
        if kind == "identifier":
            return self._name(node_text(node), node)
        if kind == "field_expression":
            argument = node.child_by_field_name("argument")
            if argument is not None and node_text(argument) in BUILTIN_VECTORS:
                return Poly.atom(f"{node_text(argument)}.{node_text(node.child_by_field_name('field'))}")
            return None
        if kind == "cast_expression":
            if is_float_type(node_text(node.child_by_field_name("type"))) or ambiguous_cast(node):
                return None
            return self.poly(node.child_by_field_name("value"), depth + 1)
        if kind == "call_expression":
            operand = self._integer_cast_operand(node)
            return self.poly(operand, depth + 1) if operand is not None else None
        if kind == "sizeof_expression":
            type_text = _sizeof_type(node)
            size = type_bytes(type_text) if type_text is not None else None
            return Poly.const(size) if size is not None else None
        if kind == "unary_expression":
            return self._unary(node, depth)
        if kind == "binary_expression":
            return self._binary(node, depth)
        if kind == "conditional_expression":
            condition = self.poly(node.child_by_field_name("condition"), depth + 1).constant
            if condition is None:
                return None
            return self.poly(node.child_by_field_name("consequence" if condition else "alternative"), depth + 1)
        return None

    def _name(self, name: str, node: Node) -> Poly:
        value = self.local_value(name)
        if value is not None:
            return value
        if name in self.constants:
            return Poly.const(self.constants[name])
        if name == "warpSize":
            return Poly.const(WARP_SIZE)
        return self.unknown_name(name, node)

    def _unary(self, node: Node, depth: int) -> Poly | None:
        operator = node_text(node.child_by_field_name("operator"))
        argument = self.poly(node.child_by_field_name("argument"), depth + 1)
        if operator == "-":
            return -argument
        if operator == "+":
            return argument
        value = argument.constant
        folded = fold_unary(operator, value) if value is not None else None
        return Poly.const(folded) if folded is not None else None

    def _binary(self, node: Node, depth: int) -> Poly | None:
        operator = node_text(node.child_by_field_name("operator"))
        left = self.poly(node.child_by_field_name("left"), depth + 1)
        right = self.poly(node.child_by_field_name("right"), depth + 1)
        if operator == "+":
            return left + right
        if operator == "-":
            return left - right
        if operator == "*":
            return left * right
        shift = right.constant
        if operator == "<<" and shift is not None and 0 <= shift < MAX_SCALING_SHIFT:
            return left * Poly.const(1 << shift)
        if left.constant is None or shift is None:
            return None
        folded = fold_binary(operator, left.constant, shift)
        return Poly.const(folded) if folded is not None else None

    @staticmethod
    def _integer_cast_operand(node: Node) -> Node | None:
        """The operand of `int(x)` / `size_t(x)` (one argument), else None."""
        function = node.child_by_field_name("function")
        arguments = node.child_by_field_name("arguments")
        if function is None or arguments is None or node_text(function) not in INTEGER_CAST_CALLS:
            return None
        args = [a for a in arguments.named_children if a.type != "comment"]
        return args[0] if len(args) == 1 else None


class ConstantFolder(PolyFolder):
    """Folds with no local definitions: a name that is not a constant makes the value unknown."""

    def opaque(self, node: Node) -> Poly:
        return Poly.atom(f"~:{node_text(node)}")


def parse_expression(expression: str) -> tuple[bytes, Node] | None:
    """The tree-sitter node of a standalone C expression (with the bytes it points into), or
    None when the text is not exactly one expression."""
    data = encode_source(f"int value_ = ({expression});")
    tree = make_parser().parse(data)
    if tree.root_node.has_error:
        return None
    value = next((n.child_by_field_name("value") for n in walk(tree.root_node) if n.type == "init_declarator"), None)
    return (data, value) if value is not None else None


def constant_value(expression: str, constants: Mapping[str, int] | None = None) -> int | None:
    """The value of a constant C integer expression (`(N + 31) / 32`), or None when it does not
    parse, names something that is not in `constants`, or is undefined or overflows."""
    parsed = parse_expression(expression)
    if parsed is None:
        return None
    return ConstantFolder(dict(constants or {})).poly(parsed[1]).constant
