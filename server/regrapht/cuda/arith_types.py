"""The arithmetic types of C expressions ("double", "float", "int") and double-literal facts.

`ExpressionTypes` reads the type of an expression under the usual arithmetic conversions from a
function's scalar types and arrays (`FunctionScope`), and which `<cmath>` overload a call
selects; `LiteralFacts` records, for every double literal of an arithmetic chain, the operator
it is an operand of and the types of the other operands (what the float-literal rule needs).
"""

from __future__ import annotations

import struct

from tree_sitter import Node

from regrapht.cuda.function_scope import FunctionScope, WalkContext
from regrapht.cuda.intexpr import BUILTIN_VECTORS, SIZEOF, int_literal
from regrapht.cuda.intexpr import MAX_DEPTH as MAX_EXPR_DEPTH
from regrapht.cuda.model import FloatLiteral
from regrapht.cuda.nodes import CAST_NAMES, Positions, ambiguous_cast, node_text, subscript_chain

DOUBLE_MATH = frozenset({
    "sqrt", "cbrt", "rsqrt", "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p",
    "pow", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
    "fabs", "floor", "ceil", "round", "trunc", "fmod", "fmin", "fmax", "hypot", "erf", "erfc",
})
# Nodes of one arithmetic expression examined for its double literals, and the depth to which
# operand types are looked at: bounded, so a 3,000-term generated expression costs O(terms).
MAX_CHAIN_NODES = 256
TYPE_DEPTH = 16  # deeper expressions become opaque atoms instead of recursing
ARITHMETIC_OPERATORS = frozenset({"+", "-", "*", "/"})
COMPARISON_OPERATORS = frozenset({"<", "<=", ">", ">=", "!=", "=="})
# Calls whose value is a float (the f-suffixed math functions, the fast intrinsics).
FLOAT_INTRINSICS = frozenset({"__expf", "__logf", "__sinf", "__cosf", "__powf", "__fdividef", "__frcp_rn",
                              "__fsqrt_rn", "__saturatef", "__int_as_float", "__uint_as_float", "__half2float",
                              "__bfloat162float", "fmaf", "__fmaf_rn", "rsqrtf", "normf"})
_INTEGER_TYPES = frozenset(t for t in SIZEOF if t not in (
    "half", "__half", "nv_bfloat16", "__nv_bfloat16", "float", "double", "half2", "__half2", "nv_bfloat162",
    "__nv_bfloat162", "char4", "uchar4", "short2", "float2", "int2", "uint2", "short4", "float3", "int3",
    "float4", "int4", "uint4", "double2", "longlong2", "double4")) | {"dim3", "uint", "int64", "uint64"}


def arithmetic_type(type_text: str) -> str:
    """"double", "float", "int" or "" (unknown: a template parameter, a half, a struct)."""
    words = " ".join(w for w in type_text.split() if w not in ("const", "volatile", "static", "constexpr",
                                                             "register", "__restrict__", "__restrict"))
    if words in ("double", "long double"):
        return "double"
    if words == "float":
        return "float"
    if words in _INTEGER_TYPES or words.startswith(("unsigned", "signed", "long", "short")):
        return "int"
    return ""


def is_exact_float(text: str) -> bool:
    """The double literal's value is a float exactly (0.5, 2.0; not 0.1)."""
    try:
        value = float(text.rstrip("lL").replace("'", ""))
        return struct.unpack("f", struct.pack("f", value))[0] == value
    except (ValueError, OverflowError):
        return False


def is_double_literal(text: str) -> bool:
    """`2.0`, `.5`, `1e3`: a floating literal of type double (no f/F/l/L suffix, not hex)."""
    lowered = text.lower()
    if lowered.startswith("0x") or lowered.endswith(("f", "l")):
        return False
    return "." in lowered or "e" in lowered


def combined_type(left: str, right: str) -> str:
    """The type of `left op right` under the usual arithmetic conversions ("" when unknown)."""
    if "double" in (left, right):
        return "double"
    if "" in (left, right):
        return ""
    return "float" if "float" in (left, right) else "int"



class ExpressionTypes:
    """Arithmetic types of a function's expressions, from its scope's scalar types and arrays."""

    def __init__(self, scope: FunctionScope) -> None:
        self.scope = scope

    def expr_type(self, node: Node | None, depth: int = 0) -> str:
        """The arithmetic type of an expression: "double", "float", "int" or "" (unknown)."""
        if node is None or depth > MAX_EXPR_DEPTH:
            return ""
        node_type = node.type
        if node_type == "number_literal":
            text = node_text(node)
            if is_double_literal(text):
                return "double"
            lowered = text.lower()
            if not lowered.startswith("0x") and lowered.endswith("f") and ("." in lowered or "e" in lowered):
                return "float"
            return "int" if int_literal(text) is not None else ""
        if node_type in ("true", "false", "char_literal", "sizeof_expression"):
            return "int"
        if node_type == "identifier":
            name = node_text(node)
            if name in self.scope.constants or name == "warpSize":
                return "int"
            return self.scope.state.types.get(name, "")
        if node_type == "field_expression":
            argument = node.child_by_field_name("argument")
            return "int" if argument is not None and node_text(argument) in BUILTIN_VECTORS else ""
        if node_type == "parenthesized_expression" and node.named_child_count == 1:
            return self.expr_type(node.named_children[0], depth + 1)
        if node_type == "cast_expression":
            return "" if ambiguous_cast(node) else arithmetic_type(node_text(node.child_by_field_name("type")))
        if node_type == "subscript_expression":
            base, _ = subscript_chain(node)
            if base is not None and base.type == "identifier":
                resolved = self.scope.resolve_array(node_text(base))
                return arithmetic_type(resolved[3]) if resolved is not None else ""
            return ""
        if node_type == "unary_expression":
            operator = node_text(node.child_by_field_name("operator"))
            if operator in ("!", "~"):
                return "int"
            return self.expr_type(node.child_by_field_name("argument"), depth + 1)
        if node_type == "binary_expression":
            operator = node_text(node.child_by_field_name("operator"))
            if operator in COMPARISON_OPERATORS or operator in ("&&", "||"):
                return "int"
            left = self.expr_type(node.child_by_field_name("left"), depth + 1)
            if left == "double":
                return "double"
            return combined_type(left, self.expr_type(node.child_by_field_name("right"), depth + 1))
        if node_type == "conditional_expression":
            return combined_type(self.expr_type(node.child_by_field_name("consequence"), depth + 1),
                             self.expr_type(node.child_by_field_name("alternative"), depth + 1))
        if node_type == "call_expression":
            return self._call_type(node, depth)
        return ""

    def _call_type(self, node: Node, depth: int) -> str:
        function = node.child_by_field_name("function")
        arguments = node.child_by_field_name("arguments")
        if function is None:
            return ""
        if function.type == "template_function":
            name = node_text(function.child_by_field_name("name"))
            if name in CAST_NAMES:
                return arithmetic_type(node_text(function.child_by_field_name("arguments")).strip("<>"))
            return ""
        name = node_text(function)
        if name in ("float", "double", "int", "unsigned"):
            return arithmetic_type(name)
        if name in FLOAT_INTRINSICS or (name.endswith("f") and name[:-1] in DOUBLE_MATH) or name in ("fmaxf", "fminf"):
            return "float"
        if name in DOUBLE_MATH:
            return self.overload(arguments.named_children if arguments is not None else (), depth)
        return ""

    def overload(self, args: tuple[Node, ...] | list[Node], depth: int = 0) -> str:
        """Which overload of a `<cmath>` function the arguments select: "float", "double", ""."""
        kinds = [self.expr_type(a, depth + 1) for a in args]
        if not kinds or "" in kinds:
            return ""
        if "double" in kinds:
            return "double"
        if all(k == "float" for k in kinds):
            return "float"
        if all(k == "int" for k in kinds):
            return "double"  # an integer argument converts to double
        return ""  # float and int mixed: CUDA has float overloads for some (pow(float, int)), not all



class LiteralFacts:
    """The facts of the double literals of one function, collected top-down by the walk."""

    def __init__(self, positions: Positions, types: ExpressionTypes) -> None:
        self.positions = positions
        self.types = types
        self._facts: dict[int, tuple[int, tuple[str, ...], str, bool]] = {}  # node id -> chain facts

    def arithmetic_chain(self, root: Node) -> None:
        """Facts of every double literal in the arithmetic expression `root` (+ - * / through
        parentheses and signs): the operator each is a direct operand of, the chain's operator
        count and the types of its other operands. Top-down and bounded (`MAX_CHAIN_NODES`):
        tree-sitter finds a node's parent by walking from the root, so nothing walks upwards."""
        operations = 0
        others: list[str] = []
        literals: list[tuple[int, str, bool]] = []
        stack: list[tuple[Node, str, bool]] = [(root, "", False)]  # (node, operator, a dividend of it)
        visited = 0
        while stack and visited < MAX_CHAIN_NODES:
            current, operator, dividend = stack.pop()
            visited += 1
            current_type = current.type
            if current_type == "parenthesized_expression" and current.named_child_count == 1:
                stack.append((current.named_children[0], operator, dividend))
                continue
            if current_type == "unary_expression" and \
                    node_text(current.child_by_field_name("operator")) in ("-", "+"):
                argument = current.child_by_field_name("argument")
                if argument is not None:
                    stack.append((argument, operator, dividend))
                continue
            inner_operator = node_text(current.child_by_field_name("operator")) \
                if current_type == "binary_expression" else ""
            if inner_operator in ARITHMETIC_OPERATORS:
                operations += 1
                for side in ("right", "left"):
                    operand = current.child_by_field_name(side)
                    if operand is not None:
                        stack.append((operand, inner_operator, inner_operator == "/" and side == "left"))
            elif current_type == "number_literal":
                if is_double_literal(node_text(current)):
                    literals.append((current.id, operator, dividend))
            else:  # other literals are their own findings (or exact); these are the operands
                others.append(self.types.expr_type(current, MAX_EXPR_DEPTH - TYPE_DEPTH))
        if stack:
            operations = max(operations, 2)  # longer than we look: a chain
        for literal_id, operator, dividend in literals:
            self._facts[literal_id] = (operations, tuple(others), operator, dividend)

    def compound_literal(self, node: Node) -> None:
        """`y *= 0.1`: y = y * 0.1 in double, one operation with y's type as the other operand."""
        operator = node_text(node.child_by_field_name("operator"))
        right = node.child_by_field_name("right")
        while right is not None and right.type == "parenthesized_expression" and right.named_child_count == 1:
            right = right.named_children[0]
        if operator in ("+=", "-=", "*=", "/=") and right is not None and right.type == "number_literal":
            left_type = self.types.expr_type(node.child_by_field_name("left"), MAX_EXPR_DEPTH - TYPE_DEPTH)
            self._facts[right.id] = (1, (left_type,), operator[0], False)

    def float_literal(self, node: Node, text: str, ctx: WalkContext) -> FloatLiteral:
        facts = self._facts.get(node.id)
        if facts is None:  # converted only, or deeper in a chain than `_arithmetic_chain` looks
            return FloatLiteral(text, self.positions.span(node), 2 if ctx.chain else 0, (), is_exact_float(text), "",
                                in_loop=bool(ctx.loops))
        operations, others, operator, dividend = facts
        return FloatLiteral(text, self.positions.span(node), operations, others, is_exact_float(text), operator,
                            dividend, bool(ctx.loops))
