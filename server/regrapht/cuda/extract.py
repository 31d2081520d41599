"""Turns one tree-sitter `function_definition` into a `model.Function` with every body fact.

`FunctionExtractor.extract` walks the function's subtree once, iteratively (no recursion limit
to hit on 500-deep nesting), in source order, keeping an environment of local definitions so
that `int i = blockIdx.x * blockDim.x + threadIdx.x; ... a[i * stride]` resolves to an index
polynomial (`affine.Poly`). Spans are produced relative to a base row so that the caller can
cache a function's facts by its text and shift them when lines above it change.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from typing import NamedTuple

from tree_sitter import Node

from regrapht.cuda.affine import Poly, opaque_atom
from regrapht.cuda.model import (
    AccessKind,
    Atomic,
    Branch,
    Call,
    Dim3,
    Expr,
    FloatLiteral,
    Function,
    FunctionKind,
    LaunchSite,
    Loop,
    LoopKind,
    MallocCall,
    MathCall,
    MemoryAccess,
    MemorySpace,
    Parameter,
    SharedArray,
    SyncCall,
)
from regrapht.text import Position, Span

DOUBLE_MATH = frozenset({
    "sqrt", "cbrt", "rsqrt", "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p",
    "pow", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
    "fabs", "floor", "ceil", "round", "trunc", "fmod", "fmin", "fmax", "hypot", "erf", "erfc",
})
BUILTIN_VECTORS = {"threadIdx", "blockIdx", "blockDim", "gridDim"}
# Calls that take a pointer without writing through it.
READ_ONLY_CALLS = frozenset({"__ldg", "__ldcs", "__ldca", "__ldcg", "__ldlu", "__ldcv", "sizeof"})
CAST_NAMES = frozenset({"reinterpret_cast", "static_cast", "const_cast"})
MAX_EXPR_DEPTH = 120
MAX_LOCAL_VALUES = 256  # host-function scalar definitions kept for spec inference
# Nodes of one arithmetic expression examined for its double literals, and the depth to which
# operand types are looked at: bounded, so a 3,000-term generated expression costs O(terms).
MAX_CHAIN_NODES = 256
TYPE_DEPTH = 16  # deeper expressions become opaque atoms instead of recursing
_DOUBLE_WORD = re.compile(rb"\bdouble\b")
ARITHMETIC_OPERATORS = frozenset({"+", "-", "*", "/"})
COMPARISON_OPERATORS = frozenset({"<", "<=", ">", ">=", "!=", "=="})
# Calls whose value is a float (the f-suffixed math functions, the fast intrinsics).
FLOAT_INTRINSICS = frozenset({"__expf", "__logf", "__sinf", "__cosf", "__powf", "__fdividef", "__frcp_rn",
                              "__fsqrt_rn", "__saturatef", "__int_as_float", "__uint_as_float", "__half2float",
                              "__bfloat162float", "fmaf", "__fmaf_rn", "rsqrtf", "normf"})
# Local variables and device-function parameters that hold a lane or thread rank by convention.
LANE_NAMES = frozenset({"lane", "lane_id", "laneId", "laneid", "lane_idx", "tid", "thread_id"})
LANE_CALLS = ("thread_rank", "__lane_id", "lane_id", "laneid", "get_lane_id", "threadIdx")
_TYPE_BYTES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "int8_t": 1, "uint8_t": 1, "bool": 1,
    "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2, "half": 2, "__half": 2, "nv_bfloat16": 2,
    "__nv_bfloat16": 2, "float": 4, "int": 4, "unsigned": 4, "unsigned int": 4, "int32_t": 4, "uint32_t": 4,
    "half2": 4, "__half2": 4, "nv_bfloat162": 4, "__nv_bfloat162": 4, "char4": 4, "uchar4": 4, "short2": 4,
    "double": 8, "float2": 8, "int2": 8, "uint2": 8, "long long": 8, "unsigned long long": 8, "int64_t": 8,
    "uint64_t": 8, "size_t": 8, "long": 8, "short4": 8, "float3": 12, "int3": 12, "float4": 16, "int4": 16,
    "uint4": 16, "double2": 16, "longlong2": 16, "double4": 32,
}
_INTEGER_TYPES = frozenset(t for t in _TYPE_BYTES if t not in (
    "half", "__half", "nv_bfloat16", "__nv_bfloat16", "float", "double", "half2", "__half2", "nv_bfloat162",
    "__nv_bfloat162", "char4", "uchar4", "short2", "float2", "int2", "uint2", "short4", "float3", "int3",
    "float4", "int4", "uint4", "double2", "longlong2", "double4")) | {"dim3", "uint", "int64", "uint64"}
_INT_LITERAL = re.compile(r"^(0[xX][0-9a-fA-F']+|[0-9][0-9']*)[uUlL]*$")


def int_literal(text: str) -> int | None:
    """The value of a C integer literal (decimal or hex, with suffixes), else None."""
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
    words = [w for w in type_text.replace("*", " ").split() if w not in ("const", "volatile", "__restrict__")]
    return _TYPE_BYTES.get(" ".join(words))


def arithmetic_type(type_text: str) -> str:
    """"double", "float", "int" or "" (unknown: a template parameter, a half, a struct)."""
    words = " ".join(w for w in type_text.split() if w not in ("const", "volatile", "static", "constexpr",
                                                             "register", "__restrict__"))
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


class Positions:
    """Converts tree-sitter points (row, byte column) to `Position` (code-point character)."""

    def __init__(self, source: bytes, base_row: int = 0, ascii_only: bool | None = None) -> None:
        self.source = source
        self.ascii = source.isascii() if ascii_only is None else ascii_only
        self.base_row = base_row

    def relative_to(self, base_row: int) -> Positions:
        """The same converter producing rows relative to `base_row`."""
        return Positions(self.source, base_row, self.ascii)

    def at(self, row: int, column: int, byte: int) -> Position:
        if self.ascii or column == 0:
            return Position(row - self.base_row, column)
        line_start = byte - column
        prefix = self.source[line_start:byte]
        if prefix.isascii():
            return Position(row - self.base_row, column)
        return Position(row - self.base_row, len(prefix.decode("utf-8", errors="replace")))

    def span(self, node: Node) -> Span:
        start = node.start_point
        end = node.end_point
        return Span(self.at(start.row, start.column, node.start_byte), self.at(end.row, end.column, node.end_byte))

    def start(self, node: Node) -> Position:
        return self.at(node.start_point.row, node.start_point.column, node.start_byte)

    def end(self, node: Node) -> Position:
        return self.at(node.end_point.row, node.end_point.column, node.end_byte)


def node_text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", errors="replace")


# Type names that are never variables in kernels: `(size_t) -x` stays a cast.
_KNOWN_TYPE_NAMES = frozenset({"size_t", "ssize_t", "ptrdiff_t", "intptr_t", "uintptr_t", "int8_t", "int16_t",
                               "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "uint", "ulong"})


def ambiguous_cast(node: Node | None) -> bool:
    """`(name) + x`, `(name) - x`, `(name) * x`, `(name) & x`: C++ reads a cast only when `name`
    is a type, an addition (product, ...) when it is a variable, as macro expansions write it
    (`((row) + (col) * (ld))`); tree-sitter cannot tell and always builds the cast, which loses
    `name`. Readers of values treat such a node as unknown (`idioms/spelling.py` writes it
    plainly when `name` is one of the kernel's variables)."""
    if node is None or node.type != "cast_expression":
        return False
    type_node = node.child_by_field_name("type")
    value = node.child_by_field_name("value")
    if type_node is None or value is None or len(type_node.named_children) != 1:
        return False
    name = type_node.named_children[0]
    if name.type != "type_identifier" or node_text(name) in _KNOWN_TYPE_NAMES:
        return False
    operator = node_text(value.child_by_field_name("operator")) if value.type in ("unary_expression",
                                                                                  "pointer_expression") else ""
    return operator in ("+", "-", "*", "&")


def find_function_declarator(declarator: Node | None) -> Node | None:
    """The `function_declarator` under pointer/reference declarators (`float *f(...)`)."""
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return declarator


def declarator_name(declarator: Node | None) -> Node | None:
    """The identifier a (possibly pointer/array/init) declarator declares."""
    while declarator is not None and declarator.type not in ("identifier", "field_identifier", "qualified_identifier",
                                                            "operator_name", "destructor_name", "template_function"):
        inner = declarator.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in declarator.named_children if c.type in ("identifier", "pointer_declarator",
                                                                                "array_declarator", "reference_declarator")),
                         None)
        declarator = inner
    return declarator


class _Ctx(NamedTuple):
    loops: tuple[int, ...]  # indices into the loops list, outermost first
    thread_branch: str | None  # condition text of the innermost thread-dependent branch
    single_guard: bool  # under `if (tid == 0)`-like conditions
    skip_env: bool  # inside a for-update clause: do not treat `i += s` as a new definition
    chain: bool = False  # inside an arithmetic expression whose literals were examined already


@dataclass
class _Alias:
    """A local pointer derived from a parameter or shared array: `float *row = A + r * N`."""

    array: str
    space: MemorySpace
    offset: Poly
    element_type: str


@dataclass
class _State:
    env: dict[str, Poly] = field(default_factory=dict)
    aliases: dict[str, _Alias] = field(default_factory=dict)
    shared: dict[str, str] = field(default_factory=dict)  # name -> element type
    local_arrays: dict[str, str] = field(default_factory=dict)
    dim3s: dict[str, Dim3] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)  # scalar locals and parameters: arithmetic_type
    local_values: list[tuple[str, str]] = field(default_factory=list)  # host scalars: (name, initializer)
    written: set[str] = field(default_factory=set)
    loops: list[Loop] = field(default_factory=list)
    accesses: list[MemoryAccess] = field(default_factory=list)
    atomics: list[Atomic] = field(default_factory=list)
    syncs: list[SyncCall] = field(default_factory=list)
    branches: list[Branch] = field(default_factory=list)
    shared_arrays: list[SharedArray] = field(default_factory=list)
    float_literals: list[FloatLiteral] = field(default_factory=list)
    math_calls: list[MathCall] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    launches: list[LaunchSite] = field(default_factory=list)
    dim3_list: list[Dim3] = field(default_factory=list)
    mallocs: list[MallocCall] = field(default_factory=list)
    # Condition of the first `if (<thread-dependent>) return;` seen: later barriers are divergent.
    exit_condition: str | None = None


class FunctionExtractor:
    """Extracts one function. `constants` are file-level integer constants (`#define N 256`),
    `file_shared` the file-scope `__shared__` arrays (name -> element type)."""

    def __init__(self, positions: Positions, constants: dict[str, int], file_shared: dict[str, str]) -> None:
        self.positions = positions
        self.constants = constants
        self.file_shared = file_shared
        self._state = _State()
        self._params: dict[str, Parameter] = {}
        self._function: str | None = None
        self._kind: FunctionKind = "host"
        self._unit_step_loops: set[int] = set()
        self._literal_facts: dict[int, tuple[int, tuple[str, ...], str]] = {}  # node id -> chain facts

    # ---------------------------------------------------------------- header
    def extract(self, node: Node, template_parameters: tuple[str, ...], extern_c: bool) -> Function | None:
        declarator = find_function_declarator(node.child_by_field_name("declarator"))
        if declarator is None and node.type == "ERROR":
            # Half-typed function (unclosed body): the header is a direct child of the ERROR node.
            declarator = next((c for c in node.children if c.type == "function_declarator"), None)
        if declarator is None:
            return None
        name_node = declarator.child_by_field_name("declarator")
        if name_node is None:
            return None
        if name_node.type == "template_function":
            name_node = name_node.child_by_field_name("name") or name_node
        qualifiers = {c.type for c in node.children}
        kind: FunctionKind = "global" if "__global__" in qualifiers else "device" if "__device__" in qualifiers else "host"
        launch_bounds = next((c for c in node.children if c.type == "launch_bounds"), None)
        parameters = tuple(
            p for p in (self._parameter(c) for c in (declarator.child_by_field_name("parameters") or declarator).named_children
                        if c.type in ("parameter_declaration", "optional_parameter_declaration"))
            if p is not None
        )
        body = node.child_by_field_name("body") or (node if node.type == "ERROR" else None)
        uses_double = bool(_DOUBLE_WORD.search(node.text or b""))
        state = _State()
        state.shared.update(self.file_shared)
        function_name = node_text(name_node)
        if body is not None:
            self._walk(body, state, function_name, kind, parameters, uses_double)
        return Function(
            name=function_name,
            kind=kind,
            name_span=self.positions.span(name_node),
            span=self.positions.span(node),
            body_span=self.positions.span(body) if body is not None else None,
            return_type=node_text(node.child_by_field_name("type")),
            template_parameters=template_parameters,
            parameters=parameters,
            launch_bounds=tuple(node_text(c) for c in launch_bounds.named_children if c.type != "comment")
            if launch_bounds else (),
            extern_c=extern_c,
            uses_double=uses_double,
            loops=tuple(state.loops),
            accesses=tuple(state.accesses),
            atomics=tuple(state.atomics),
            syncs=tuple(state.syncs),
            branches=tuple(state.branches),
            shared_arrays=tuple(state.shared_arrays),
            float_literals=tuple(state.float_literals),
            math_calls=tuple(state.math_calls),
            calls=tuple(state.calls),
            launches=tuple(state.launches),
            dim3s=tuple(state.dim3_list),
            mallocs=tuple(state.mallocs),
            written_pointers=frozenset(state.written),
            local_values=tuple(state.local_values),
        )

    def _parameter(self, node: Node) -> Parameter | None:
        is_const = any(c.type == "type_qualifier" and node_text(c) == "const" for c in node.children)
        is_pointer = False
        is_restrict = False
        star_end: Position | None = None
        declarator = node.child_by_field_name("declarator")
        name_node = None
        while declarator is not None:
            if declarator.type in ("identifier", "field_identifier"):
                name_node = declarator
                break
            if declarator.type in ("pointer_declarator", "abstract_pointer_declarator", "array_declarator",
                                   "abstract_array_declarator"):
                is_pointer = True
            for child in declarator.children:
                if child.type == "*":
                    star_end = self.positions.end(child)
                elif child.type == "type_qualifier" and node_text(child) in ("__restrict__", "__restrict", "restrict"):
                    is_restrict = True
            declarator = declarator.child_by_field_name("declarator")
        text = node_text(node)
        if name_node is not None:
            start = name_node.start_byte - node.start_byte
            end = name_node.end_byte - node.start_byte
            raw = node.text or b""
            type_text = (raw[:start] + raw[end:]).decode("utf-8", errors="replace").strip()
        else:
            type_text = text.strip()
        return Parameter(
            name=node_text(name_node),
            type_text=" ".join(type_text.split()),
            base_type=node_text(node.child_by_field_name("type")),
            is_pointer=is_pointer,
            is_const=is_const,
            is_restrict=is_restrict,
            span=self.positions.span(node),
            name_span=self.positions.span(name_node) if name_node is not None else None,
            star_end=star_end,
        )

    # ---------------------------------------------------------------- body walk
    def _walk(self, body: Node, state: _State, function: str, kind: FunctionKind,
              parameters: tuple[Parameter, ...], uses_double: bool) -> None:
        self._params = {p.name: p for p in parameters}
        self._state = state
        self._function = function
        self._kind = kind
        self._unit_step_loops = set()
        self._literal_facts = {}
        for parameter in parameters:
            if not parameter.is_pointer:
                state.types[parameter.name] = arithmetic_type(parameter.base_type)
        device_code = kind != "host"
        float_code = device_code and not uses_double
        stack: list[tuple[Node, _Ctx]] = [(body, _Ctx((), None, False, False))]
        while stack:
            node, ctx = stack.pop()
            node_type = node.type
            children_ctx = ctx
            skip_children: set[int] = set()
            if node_type == "declaration":
                if not ctx.skip_env:
                    self._declaration(node, ctx)
            elif node_type == "assignment_expression" and not ctx.skip_env:
                self._assignment(node)
                if float_code:
                    self._compound_literal(node)
            elif node_type == "binary_expression" and float_code and not ctx.chain:
                if node_text(node.child_by_field_name("operator")) in ARITHMETIC_OPERATORS:
                    self._arithmetic_chain(node)
                    children_ctx = ctx._replace(chain=True)
            elif node_type == "update_expression":
                self._mark_written_base(node.child_by_field_name("argument"))
            elif node_type == "subscript_expression" and device_code:
                self._subscript(node, ctx)
            elif node_type == "call_expression":
                self._call(node, ctx, float_code)
            elif node_type in ("for_statement", "while_statement", "do_statement", "for_range_loop"):
                children_ctx, skip = self._loop(node, ctx)
                skip_children.update(skip)
            elif node_type == "if_statement":
                self._if(node, ctx, stack)
                continue
            elif node_type == "conditional_expression" and device_code:
                condition = node.child_by_field_name("condition")
                if condition is not None:
                    self._branch("ternary", condition, node)
            elif node_type == "number_literal" and float_code:
                text = node_text(node)
                if is_double_literal(text):
                    state.float_literals.append(self._float_literal(node, text, ctx))
            elif node_type in ("lambda_expression", "function_definition", "class_specifier", "struct_specifier"):
                continue  # nested definitions are not this function's code
            children = node.children
            for index in range(len(children) - 1, -1, -1):
                child = children[index]
                if child.id in skip_children:
                    if child.type in ("assignment_expression", "update_expression", "comma_expression",
                                      "declaration"):
                        stack.append((child, children_ctx._replace(skip_env=True)))
                    continue
                stack.append((child, children_ctx))

    # ---------------------------------------------------------------- expressions
    def poly(self, node: Node | None, depth: int = 0) -> Poly:
        """The index polynomial of an expression, resolving locals defined so far."""
        if node is None:
            return Poly.const(0)
        node_type = node.type
        if depth > MAX_EXPR_DEPTH:
            return self._opaque(node)
        if node_type == "number_literal":
            value = int_literal(node_text(node))
            return Poly.const(value) if value is not None else self._opaque(node)
        if node_type == "identifier":
            name = node_text(node)
            if name in self._state.env:
                return self._state.env[name]
            if name in self.constants:
                return Poly.const(self.constants[name])
            if name == "warpSize":
                return Poly.const(32)
            return Poly.atom(name)
        if node_type == "field_expression":
            argument = node.child_by_field_name("argument")
            field_node = node.child_by_field_name("field")
            if argument is not None and argument.type == "identifier" and node_text(argument) in BUILTIN_VECTORS:
                return Poly.atom(f"{node_text(argument)}.{node_text(field_node)}")
            return self._opaque(node)
        if node_type in ("parenthesized_expression",) and node.named_child_count == 1:
            return self.poly(node.named_children[0], depth + 1)
        if node_type == "cast_expression":
            if ambiguous_cast(node):
                return self._opaque(node)
            return self.poly(node.child_by_field_name("value"), depth + 1)
        if node_type == "unary_expression":
            operator = node_text(node.child_by_field_name("operator"))
            argument = node.child_by_field_name("argument")
            if operator == "-":
                return -self.poly(argument, depth + 1)
            if operator == "+":
                return self.poly(argument, depth + 1)
            return self._opaque(node)
        if node_type == "binary_expression":
            operator = node_text(node.child_by_field_name("operator"))
            left = self.poly(node.child_by_field_name("left"), depth + 1)
            right = self.poly(node.child_by_field_name("right"), depth + 1)
            result: Poly | None = None
            if operator == "+":
                result = left + right
            elif operator == "-":
                result = left - right
            elif operator == "*":
                result = left * right
            elif operator == "<<" and right.constant is not None and 0 <= right.constant < 31:
                result = left * Poly.const(1 << right.constant)
            elif operator in ("/", "%", ">>", "&", "|", "^") and left.constant is not None and right.constant:
                result = Poly.const(_fold(operator, left.constant, right.constant))
            if result is not None:
                return result
            return self._opaque(node)
        return self._opaque(node)

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
            if name in self.constants or name == "warpSize":
                return "int"
            return self._state.types.get(name, "")
        if node_type == "field_expression":
            argument = node.child_by_field_name("argument")
            return "int" if argument is not None and node_text(argument) in BUILTIN_VECTORS else ""
        if node_type == "parenthesized_expression" and node.named_child_count == 1:
            return self.expr_type(node.named_children[0], depth + 1)
        if node_type == "cast_expression":
            return "" if ambiguous_cast(node) else arithmetic_type(node_text(node.child_by_field_name("type")))
        if node_type == "subscript_expression":
            base, _ = _subscript_chain(node)
            if base is not None and base.type == "identifier":
                resolved = self._resolve_array(node_text(base))
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
            return _combined(left, self.expr_type(node.child_by_field_name("right"), depth + 1))
        if node_type == "conditional_expression":
            return _combined(self.expr_type(node.child_by_field_name("consequence"), depth + 1),
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

    def _arithmetic_chain(self, root: Node) -> None:
        """Facts of every double literal in the arithmetic expression `root` (+ - * / through
        parentheses and signs): the operator each is a direct operand of, the chain's operator
        count and the types of its other operands. Top-down and bounded (`MAX_CHAIN_NODES`):
        tree-sitter finds a node's parent by walking from the root, so nothing walks upwards."""
        operations = 0
        others: list[str] = []
        literals: list[tuple[int, str]] = []
        stack: list[tuple[Node, str]] = [(root, "")]
        visited = 0
        while stack and visited < MAX_CHAIN_NODES:
            current, operator = stack.pop()
            visited += 1
            current_type = current.type
            if current_type == "parenthesized_expression" and current.named_child_count == 1:
                stack.append((current.named_children[0], operator))
                continue
            if current_type == "unary_expression" and \
                    node_text(current.child_by_field_name("operator")) in ("-", "+"):
                argument = current.child_by_field_name("argument")
                if argument is not None:
                    stack.append((argument, operator))
                continue
            inner_operator = node_text(current.child_by_field_name("operator")) \
                if current_type == "binary_expression" else ""
            if inner_operator in ARITHMETIC_OPERATORS:
                operations += 1
                for side in ("right", "left"):
                    operand = current.child_by_field_name(side)
                    if operand is not None:
                        stack.append((operand, inner_operator))
            elif current_type == "number_literal":
                if is_double_literal(node_text(current)):
                    literals.append((current.id, operator))
            else:  # other literals are their own findings (or exact); these are the operands
                others.append(self.expr_type(current, MAX_EXPR_DEPTH - TYPE_DEPTH))
        if stack:
            operations = max(operations, 2)  # longer than we look: a chain
        for literal_id, operator in literals:
            self._literal_facts[literal_id] = (operations, tuple(others), operator)

    def _compound_literal(self, node: Node) -> None:
        """`y *= 0.1`: y = y * 0.1 in double, one operation with y's type as the other operand."""
        operator = node_text(node.child_by_field_name("operator"))
        right = node.child_by_field_name("right")
        while right is not None and right.type == "parenthesized_expression" and right.named_child_count == 1:
            right = right.named_children[0]
        if operator in ("+=", "-=", "*=", "/=") and right is not None and right.type == "number_literal":
            left_type = self.expr_type(node.child_by_field_name("left"), MAX_EXPR_DEPTH - TYPE_DEPTH)
            self._literal_facts[right.id] = (1, (left_type,), operator[0])

    def _float_literal(self, node: Node, text: str, ctx: _Ctx) -> FloatLiteral:
        facts = self._literal_facts.get(node.id)
        if facts is None:  # converted only, or deeper in a chain than `_arithmetic_chain` looks
            return FloatLiteral(text, self.positions.span(node), 2 if ctx.chain else 0, (), is_exact_float(text), "")
        operations, others, operator = facts
        return FloatLiteral(text, self.positions.span(node), operations, others, is_exact_float(text), operator)

    def _opaque(self, node: Node) -> Poly:
        dims, memory = self.dependencies(node)
        text = node_text(node)
        return Poly.atom(opaque_atom(text[:80], dims, memory))

    def dependencies(self, node: Node) -> tuple[str, bool]:
        """(thread dimensions, loaded-from-memory) that an expression's value depends on."""
        dims = ""
        memory = False
        stack = [node]
        env = self._state.env
        while stack:
            current = stack.pop()
            current_type = current.type
            if current_type == "field_expression":
                argument = current.child_by_field_name("argument")
                if argument is not None and node_text(argument) == "threadIdx":
                    dims += node_text(current.child_by_field_name("field"))[-1:]
                    continue
            elif current_type == "identifier":
                known = env.get(node_text(current))
                if known is not None:
                    dims += known.thread_dims()
                    memory = memory or known.memory_dependent
                elif node_text(current) in LANE_NAMES:
                    dims += "x"  # a lane or rank handed in by the caller (`lane == 0`)
                continue
            elif current_type in ("subscript_expression", "pointer_expression") and current is not node:
                memory = memory or current_type == "subscript_expression" or node_text(current)[:1] == "*"
            elif current_type == "call_expression":
                function = node_text(current.child_by_field_name("function"))
                if function.startswith(("__shfl", "__ldg", "atomic")):
                    memory = True
                elif function.endswith(LANE_CALLS):
                    dims += "x"  # `g.thread_rank()`, `__lane_id()`
            stack.extend(current.named_children)
        if node.type == "subscript_expression":
            memory = True
        return "".join(d for d in "xyz" if d in dims), memory

    # ---------------------------------------------------------------- statements
    def _declaration(self, node: Node, ctx: _Ctx) -> None:
        state = self._state
        qualifiers = {node_text(c) for c in node.children if c.type in ("type_qualifier", "storage_class_specifier")}
        type_text = node_text(node.child_by_field_name("type"))
        for declarator in node.children_by_field_name("declarator"):
            value = declarator.child_by_field_name("value") if declarator.type == "init_declarator" else None
            target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" else declarator
            name_node = declarator_name(target)
            if name_node is None:
                continue
            name = node_text(name_node)
            if "__shared__" in qualifiers:
                shared = self.shared_array(node, target, name, type_text, "extern" in qualifiers, self._function)
                state.shared_arrays.append(shared)
                state.shared[name] = type_text
                continue
            if target is not None and target.type == "array_declarator":
                state.local_arrays[name] = type_text
                continue
            if type_text == "dim3":
                if value is None and target is not None and target.type == "function_declarator":
                    # `dim3 block(TILE, TILE);` with macro or variable arguments parses as a
                    # function declaration whose "parameter types" are the components.
                    value = target.child_by_field_name("parameters")
                state.dim3s[name] = dim3 = self._dim3(name, value, node)
                state.dim3_list.append(dim3)
                continue
            if target is not None and target.type == "pointer_declarator":
                if value is not None:
                    alias = self._alias_of(value, type_text)
                    if alias is not None:
                        state.aliases[name] = alias
                continue
            state.types[name] = arithmetic_type(type_text)
            if value is not None and value.type != "initializer_list":
                state.env[name] = self.poly(value)
                if self._kind == "host" and len(state.local_values) < MAX_LOCAL_VALUES:
                    state.local_values.append((name, node_text(value)))
            elif value is None:
                state.env.pop(name, None)

    def shared_array(self, node: Node, target: Node | None, name: str, type_text: str, is_extern: bool,
                     function: str | None) -> SharedArray:
        dims: list[str] = []
        values: list[int | None] = []
        spans: list[Span] = []
        current = target
        while current is not None and current.type == "array_declarator":
            size = current.child_by_field_name("size")
            if size is not None:
                dims.append(node_text(size))
                values.append(self.poly(size).constant)
                spans.append(self.positions.span(size))
            else:
                dims.append("")
                values.append(None)
                closing = current.children[-1]
                spans.append(Span(self.positions.start(closing), self.positions.start(closing)))
            current = current.child_by_field_name("declarator")
        dims.reverse()
        values.reverse()
        spans.reverse()
        return SharedArray(name, type_text, tuple(dims), tuple(values), tuple(spans), self.positions.span(node),
                           is_extern, function)

    def _dim3(self, name: str, value: Node | None, node: Node) -> Dim3:
        components: tuple[Node, ...] = ()
        if value is not None:
            if value.type == "call_expression":
                arguments = value.child_by_field_name("arguments")
                components = tuple(arguments.named_children) if arguments is not None else ()
            elif value.type in ("argument_list", "initializer_list", "parameter_list"):
                components = tuple(value.named_children)
            else:
                components = (value,)
        exprs = tuple(Expr(node_text(c), self.positions.span(c)) for c in components)
        values = tuple(self.constants.get(node_text(c).strip()) if c.type == "parameter_declaration"
                       else self.poly(c).constant for c in components)
        return Dim3(name, exprs, values, self.positions.span(node))

    def _alias_of(self, value: Node, type_text: str) -> _Alias | None:
        """`A + off`, `&A[off]`, `A` where A is a pointer parameter, alias or shared array."""
        node = value
        while node.type in ("cast_expression", "parenthesized_expression", "call_expression"):
            if node.type == "call_expression":
                inner = _cast_operand(node)  # `reinterpret_cast<float4 *>(p)`
            else:
                inner = node.child_by_field_name("value") if node.type == "cast_expression" else node.named_children[0]
            if inner is None:
                return None
            node = inner
        offset = Poly.const(0)
        if node.type == "pointer_expression" and node_text(node.child_by_field_name("operator")) == "&":
            argument = node.child_by_field_name("argument")
            if argument is None or argument.type != "subscript_expression":
                return None
            base, indices = _subscript_chain(argument)
            if len(indices) != 1 or base is None:
                return None
            node = base
            offset = self.poly(indices[0])
        elif node.type == "binary_expression" and node_text(node.child_by_field_name("operator")) == "+":
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            if left is None or right is None:
                return None
            node = left
            offset = self.poly(right)
        if node.type != "identifier":
            return None
        resolved = self._resolve_array(node_text(node))
        if resolved is None:
            return None
        array, space, base_offset, element_type = resolved
        offset = base_offset + offset
        if type_text and element_type and type_text != element_type and offset.thread_dependent:
            # The offset counts the old elements, the alias's subscripts the new (wider) ones:
            # keep only that the address depends on the thread, not a wrong stride.
            offset = self._opaque(value)
        return _Alias(array, space, offset, type_text or element_type)

    def _resolve_array(self, name: str) -> tuple[str, MemorySpace, Poly, str] | None:
        state = self._state
        if name in state.aliases:
            alias = state.aliases[name]
            return alias.array, alias.space, alias.offset, alias.element_type
        if name in state.shared:
            return name, "shared", Poly.const(0), state.shared[name]
        if name in state.local_arrays:
            return name, "local", Poly.const(0), state.local_arrays[name]
        parameter = self._params.get(name)
        if parameter is not None and parameter.is_pointer:
            # A kernel's pointer arguments point to global memory; a device function's may
            # point to a caller's shared tile (or a register array): unknown.
            space: MemorySpace = "global" if self._kind != "device" else "unknown"
            return name, space, Poly.const(0), parameter.base_type
        return None

    def _mark_written_base(self, target: Node | None) -> None:
        """`*p = v`, `p->x = v`, `(*p)++`: the pointer behind the target is written."""
        while target is not None and target.type in ("pointer_expression", "field_expression",
                                                     "parenthesized_expression", "subscript_expression",
                                                     "call_expression", "cast_expression"):
            if target.type == "call_expression":
                target = _cast_operand(target)  # `*reinterpret_cast<float4 *>(&out[i]) = v`
                continue
            if target.type == "cast_expression":
                target = target.child_by_field_name("value")
                continue
            if target.type == "field_expression" and node_text(target.child_by_field_name("operator")) == ".":
                target = target.child_by_field_name("argument")
                continue
            inner = target.child_by_field_name("argument")
            target = inner if inner is not None else (target.named_children[0] if target.named_children else None)
        if target is not None and target.type == "identifier":
            resolved = self._resolve_array(node_text(target))
            if resolved is not None and resolved[1] == "global":
                self._state.written.add(resolved[0])

    def _assignment(self, node: Node) -> None:
        left = node.child_by_field_name("left")
        if left is not None and left.type in ("pointer_expression", "field_expression", "parenthesized_expression"):
            self._mark_written_base(left)
        if left is None or left.type != "identifier":
            return
        name = node_text(left)
        operator = node_text(node.child_by_field_name("operator"))
        right = node.child_by_field_name("right")
        env = self._state.env
        if name in self._state.aliases or (name in self._params and self._params[name].is_pointer):
            alias = self._alias_of(right, "") if right is not None and operator == "=" else None
            if alias is not None:
                self._state.aliases[name] = alias
            return
        if operator == "=":
            env[name] = self.poly(right)
        elif operator in ("+=", "-="):
            current = env.get(name, Poly.atom(name))
            step = self.poly(right)
            env[name] = current + step if operator == "+=" else current - step
        else:
            env[name] = self._opaque(node)

    def _subscript(self, node: Node, ctx: _Ctx) -> None:
        parent = node.parent
        if parent is not None and parent.type == "subscript_expression" and parent.child_by_field_name("argument") == node:
            return  # the outer subscript records `t[a][b]` as one access
        base, indices = _subscript_chain(node)
        if base is None or not indices:
            return
        cast_type = ""
        while base.type in ("call_expression", "cast_expression", "parenthesized_expression"):
            if base.type == "call_expression":
                function = base.child_by_field_name("function")
                arguments = base.child_by_field_name("arguments")
                if function is None or function.type != "template_function" or arguments is None or \
                        node_text(function.child_by_field_name("name")) not in CAST_NAMES or not arguments.named_children:
                    return
                cast_type = node_text(function.child_by_field_name("arguments")).strip("<>")
                base = arguments.named_children[0]
            elif base.type == "cast_expression":
                cast_type = node_text(base.child_by_field_name("type"))
                value = base.child_by_field_name("value")
                if value is None:
                    return
                base = value
            else:
                if not base.named_children:
                    return
                base = base.named_children[0]
        if base.type != "identifier":
            return
        unknown: tuple[str, MemorySpace, Poly, str] = (node_text(base), "unknown", Poly.const(0), "")
        array, space, offset, element_type = self._resolve_array(node_text(base)) or unknown
        base_type = element_type
        if cast_type:
            element_type = cast_type.replace("const", "").replace("*", "").strip()
        access = self._access_kind(node)
        wider = _reinterpreted_load(node)
        if wider and access == "address":
            access = "readwrite"  # read or written through the wider pointer, not handed on
        access_bytes = type_bytes(wider or element_type)
        if access != "read" and space == "global":
            self._state.written.add(array)
        polys = [self.poly(i) for i in indices]
        # The index counts the elements of the pointer's type; after a cast in the subscript
        # (`reinterpret_cast<float4 *>(p)[k]`) `k` counts the cast type's, the alias offset the old ones.
        stride_unit_bytes = type_bytes(base_type)
        if cast_type and polys[-1].thread_dependent:
            stride_unit_bytes = None if offset.thread_dependent else type_bytes(element_type)
        last = polys[-1] + offset if len(polys) == 1 else polys[-1]
        flattened = polys[0] + offset
        for poly in polys[1:]:
            flattened = flattened + poly
        loop_variables = {self._state.loops[i].variable for i in ctx.loops}
        used = tuple(sorted(v for v in flattened.atoms() if v in loop_variables))
        self._state.accesses.append(MemoryAccess(
            array=array,
            space=space,
            indices=tuple(Expr(node_text(i), self.positions.span(i)) for i in indices),
            span=self.positions.span(node),
            access=access,
            loop_depth=len(ctx.loops),
            loop=ctx.loops[-1] if ctx.loops else None,
            loop_vars=used,
            tid_x=last.coefficient("threadIdx.x"),
            tid_y=last.coefficient("threadIdx.y"),
            thread_dependent=any(p.thread_dependent for p in polys) or offset.thread_dependent,
            data_dependent=any(p.memory_dependent for p in polys) or offset.memory_dependent,
            element_type=element_type,
            index_tid_x=tuple(p.coefficient("threadIdx.x") for p in polys),
            unit_stride_loop_vars=tuple(v for v in used if flattened.coefficient(v).kind == "unit"
                                        and self._steps_by_one(v, ctx)),
            access_bytes=access_bytes,
            stride_unit_bytes=stride_unit_bytes,
        ))

    def _steps_by_one(self, variable: str, ctx: _Ctx) -> bool:
        """The enclosing loop over `variable` steps it by +-1 (a walk, not a stride)."""
        return any(self._state.loops[i].variable == variable and i in self._unit_step_loops for i in ctx.loops)

    def _access_kind(self, node: Node) -> AccessKind:
        parent = node.parent
        child = node
        while parent is not None and parent.type == "parenthesized_expression":
            child, parent = parent, parent.parent
        if parent is None:
            return "read"
        if parent.type == "assignment_expression" and parent.child_by_field_name("left") == child:
            return "write" if node_text(parent.child_by_field_name("operator")) == "=" else "readwrite"
        if parent.type == "update_expression":
            return "readwrite"
        if parent.type == "pointer_expression" and node_text(parent.child_by_field_name("operator")) == "&":
            call = parent.parent.parent if parent.parent is not None else None
            if call is not None and call.type == "call_expression" and \
                    node_text(call.child_by_field_name("function")) in READ_ONLY_CALLS:
                return "read"
            return "address"
        return "read"

    def _call(self, node: Node, ctx: _Ctx, float_code: bool) -> None:
        state = self._state
        function = node.child_by_field_name("function")
        arguments = node.child_by_field_name("arguments")
        args = tuple(arguments.named_children) if arguments is not None else ()
        config = next((c for c in node.children if c.type == "kernel_call_syntax"), None)
        if config is not None:
            self._launch(node, function, config, args, ctx)
            return
        if function is None:
            return
        name_node = function
        if function.type == "template_function":
            name_node = function.child_by_field_name("name") or function
        name = node_text(name_node)
        span = self.positions.span(node)
        state.calls.append(Call(name, span, tuple(Expr(node_text(a), self.positions.span(a)) for a in args),
                                bool(ctx.loops), ctx.loops[-1] if ctx.loops else None))
        # A cast only renames the pointer: writes through the result are tracked as an alias
        # (`_alias_of`) or a subscript, so the cast itself is not an escape.
        if name not in READ_ONLY_CALLS and name not in CAST_NAMES:
            for argument in args:
                self._mark_escape(argument)
        if name.startswith("__syncthreads"):
            exited = ctx.thread_branch is None and state.exit_condition is not None
            condition = ctx.thread_branch or state.exit_condition
            state.syncs.append(SyncCall(span, condition is not None, condition or "", after_early_exit=exited))
        elif name.startswith("atomic") and args:
            self._atomic(name, args[0], span, ctx)
        elif name in DOUBLE_MATH and float_code and function.type == "identifier":
            state.math_calls.append(MathCall(name, name + "f", self.positions.span(function), span,
                                             self.overload(args, MAX_EXPR_DEPTH - TYPE_DEPTH)))
        elif name.startswith("cudaMalloc") and len(args) >= 2:
            pointer = args[0]
            while pointer.type in ("cast_expression", "pointer_expression", "parenthesized_expression"):
                inner = (pointer.child_by_field_name("value") if pointer.type == "cast_expression"
                         else pointer.child_by_field_name("argument") if pointer.type == "pointer_expression"
                         else (pointer.named_children[0] if pointer.named_children else None))
                if inner is None:
                    break
                pointer = inner
            state.mallocs.append(MallocCall(name, node_text(pointer) if pointer.type == "identifier" else None,
                                            node_text(args[1]), span))

    def _mark_escape(self, argument: Node) -> None:
        """A pointer parameter passed to a call (other than a read-only load) may be written."""
        if argument.type == "identifier":
            name = node_text(argument)
            resolved = self._resolve_array(name)
            if resolved is not None and resolved[1] == "global":
                self._state.written.add(resolved[0])
        elif argument.type == "binary_expression":
            left = argument.child_by_field_name("left")
            if left is not None:
                self._mark_escape(left)
        elif argument.type in ("cast_expression", "parenthesized_expression", "call_expression"):
            inner = argument.child_by_field_name("value") if argument.type == "cast_expression" else \
                _cast_operand(argument) if argument.type == "call_expression" else \
                (argument.named_children[0] if argument.named_children else None)
            if inner is not None:
                self._mark_escape(inner)
        elif argument.type == "pointer_expression" and node_text(argument.child_by_field_name("operator")) == "&":
            self._mark_written_base(argument.child_by_field_name("argument"))  # `f(&out[i])`

    def _atomic(self, name: str, target: Node, span: Span, ctx: _Ctx) -> None:
        node = target
        array: str | None = None
        offset = Poly.const(0)
        if node.type == "pointer_expression" and node_text(node.child_by_field_name("operator")) == "&":
            argument = node.child_by_field_name("argument")
            if argument is not None and argument.type == "subscript_expression":
                base, indices = _subscript_chain(argument)
                if base is not None and base.type == "identifier":
                    array = node_text(base)
                    for index in indices:
                        offset = offset + self.poly(index)
        elif node.type == "binary_expression" and node_text(node.child_by_field_name("operator")) == "+":
            left = node.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                array = node_text(left)
                offset = self.poly(node.child_by_field_name("right"))
        elif node.type == "identifier":
            array = node_text(node)
        space: MemorySpace = "unknown"
        if array is not None:
            resolved = self._resolve_array(array)
            if resolved is not None:
                array, space, base_offset, _ = resolved
                offset = offset + base_offset
                if space == "global":
                    self._state.written.add(array)
        self._state.atomics.append(Atomic(
            function=name,
            target=Expr(node_text(target), self.positions.span(target)),
            span=span,
            space=space,
            array=array,
            thread_dependent=offset.thread_dependent,
            data_dependent=offset.memory_dependent,
            single_thread_guard=ctx.single_guard,
            loop_depth=len(ctx.loops),
        ))

    def _launch(self, node: Node, function: Node | None, config: Node, args: tuple[Node, ...], ctx: _Ctx) -> None:
        name_node = function
        if function is not None and function.type == "template_function":
            name_node = function.child_by_field_name("name")
        parts = config.named_children
        exprs = [Expr(node_text(p), self.positions.span(p)) for p in parts]
        empty = Expr("", self.positions.span(config))
        self._state.launches.append(LaunchSite(
            kernel=node_text(name_node),
            grid=exprs[0] if exprs else empty,
            block=exprs[1] if len(exprs) > 1 else empty,
            shared=exprs[2] if len(exprs) > 2 else None,
            stream=exprs[3] if len(exprs) > 3 else None,
            args=tuple(Expr(node_text(a), self.positions.span(a)) for a in args),
            host_function=self._function,
            span=self.positions.span(node),
            in_loop=bool(ctx.loops),
            block_dims=self._dims(parts[1]) if len(parts) > 1 else None,
            grid_dims=self._dims(parts[0]) if parts else None,
        ))

    def _dims(self, node: Node) -> tuple[int | None, ...] | None:
        if node.type == "identifier" and node_text(node) in self._state.dim3s:
            return self._state.dim3s[node_text(node)].values
        if node.type == "call_expression" and node_text(node.child_by_field_name("function")) == "dim3":
            arguments = node.child_by_field_name("arguments")
            return tuple(self.poly(a).constant for a in (arguments.named_children if arguments else ()))
        value = self.poly(node).constant
        return (value,) if value is not None else None

    def _loop(self, node: Node, ctx: _Ctx) -> tuple[_Ctx, set[int]]:
        state = self._state
        kind: LoopKind = "for" if node.type in ("for_statement", "for_range_loop") else \
            "while" if node.type == "while_statement" else "do"
        condition = node.child_by_field_name("condition")
        init_node = node.child_by_field_name("initializer")
        update = node.child_by_field_name("update")
        variable: str | None = None
        if init_node is not None:
            if init_node.type == "declaration":
                declarator = init_node.child_by_field_name("declarator")
                name_node = declarator_name(declarator.child_by_field_name("declarator")
                                            if declarator is not None and declarator.type == "init_declarator"
                                            else declarator)
                variable = node_text(name_node) if name_node is not None else None
                value = declarator.child_by_field_name("value") if declarator is not None else None
                if variable:
                    state.env[variable] = self.poly(value) + Poly.atom(variable)
                    state.types[variable] = arithmetic_type(node_text(init_node.child_by_field_name("type")))
            elif init_node.type == "assignment_expression":
                left = init_node.child_by_field_name("left")
                if left is not None and left.type == "identifier":
                    variable = node_text(left)
                    state.env[variable] = self.poly(init_node.child_by_field_name("right")) + Poly.atom(variable)
        if variable is None and condition is not None:
            inner = condition.named_children[0] if condition.type in ("condition_clause", "parenthesized_expression") \
                and condition.named_children else condition
            if inner.type == "binary_expression":
                left = inner.child_by_field_name("left")
                if left is not None and left.type == "identifier":
                    variable = node_text(left)
                    if kind == "for" and variable not in state.env:
                        state.env[variable] = Poly.atom(variable)
        previous = node.prev_named_sibling
        unrolled = previous is not None and previous.type == "preproc_call" and "unroll" in node_text(previous)
        header_end = node.child_by_field_name("body")
        if kind == "do":
            header = Span(self.positions.start(node), self.positions.end(node.children[0]))
        elif header_end is not None:
            header = Span(self.positions.start(node), self.positions.start(header_end))
        else:
            header = self.positions.span(node)
        index = len(state.loops)
        state.loops.append(Loop(
            kind=kind,
            span=self.positions.span(node),
            header_span=header,
            variable=variable,
            init=node_text(init_node),
            condition=node_text(condition).strip("() ") if kind != "for" else node_text(condition),
            step=node_text(update),
            depth=len(ctx.loops) + 1,
            function=self._function or "",
            unrolled=unrolled,
            trip_count=self._trip_count(init_node, condition, update, variable),
            parent=ctx.loops[-1] if ctx.loops else None,
        ))
        if variable is not None and _unit_step(node_text(update), variable):
            self._unit_step_loops.add(index)
        thread_branch = ctx.thread_branch
        if condition is not None:
            branch = self._branch(kind, condition, node)
            if branch is not None and branch.thread_dependent and not self._uniform_comparison(condition):
                thread_branch = branch.condition.text
        # The initializer was evaluated above (with the induction atom); the update is a step.
        skip = {n.id for n in (update, init_node) if n is not None}
        return _Ctx(ctx.loops + (index,), thread_branch, ctx.single_guard, False), skip

    def _uniform_comparison(self, condition: Node) -> bool:
        """`t < end + tid` with `t = base + tid + k*C`: the thread index cancels, so every thread
        runs the same number of iterations (the loop is not divergent)."""
        inner = condition
        while inner.type in ("condition_clause", "parenthesized_expression") and inner.named_child_count == 1:
            inner = inner.named_children[0]
        if inner.type != "binary_expression" or \
                node_text(inner.child_by_field_name("operator")) not in COMPARISON_OPERATORS - {"=="}:
            return False
        difference = self.poly(inner.child_by_field_name("left")) - self.poly(inner.child_by_field_name("right"))
        return not difference.thread_dependent and not difference.memory_dependent

    def _trip_count(self, init: Node | None, condition: Node | None, update: Node | None,
                    variable: str | None) -> int | None:
        if init is None or condition is None or update is None or variable is None:
            return None
        start = self._state.env.get(variable, Poly.atom(variable)).without(variable).constant
        if condition.type != "binary_expression" or node_text(condition.child_by_field_name("left")) != variable:
            return None
        bound = self.poly(condition.child_by_field_name("right")).constant
        operator = node_text(condition.child_by_field_name("operator"))
        update_text = node_text(update).replace(" ", "")
        if start is None or bound is None or update_text not in (f"{variable}++", f"++{variable}", f"{variable}+=1"):
            return None
        if operator == "<":
            return max(0, bound - start)
        if operator == "<=":
            return max(0, bound - start + 1)
        return None

    def _if(self, node: Node, ctx: _Ctx, stack: list[tuple[Node, _Ctx]]) -> None:
        condition = node.child_by_field_name("condition")
        consequence = node.child_by_field_name("consequence")
        alternative = node.child_by_field_name("alternative")
        branch = self._branch("if", condition, node, _statement_count(consequence) + _statement_count(alternative),
                              alternative is not None) if condition is not None else None
        inner = ctx
        if branch is not None and branch.thread_dependent:
            # `tid % 4 == 0` still selects a quarter of the threads: not a single-thread guard.
            single = condition is not None and self._single_thread_condition(condition) and \
                (branch.modulus is None or (branch.modulus_value or 0) >= 32)
            inner = ctx._replace(thread_branch=branch.condition.text, single_guard=ctx.single_guard or single)
            if alternative is None and consequence is not None and _always_returns(consequence) \
                    and self._state.exit_condition is None:
                # The walk is in source order, so only barriers after this statement see it.
                self._state.exit_condition = branch.condition.text
        # Push in reverse source order: alternative, consequence, condition.
        if alternative is not None:
            stack.append((alternative, inner._replace(single_guard=ctx.single_guard)))
        if consequence is not None:
            stack.append((consequence, inner))
        if condition is not None:
            stack.append((condition, ctx))

    def _single_thread_condition(self, condition: Node) -> bool:
        """`tid == 0`, `lane == 0`, `!(tid & 31)`: one thread per group runs the branch."""
        stack = [condition]
        while stack:
            current = stack.pop()
            if current.type == "binary_expression":
                operator = node_text(current.child_by_field_name("operator"))
                if operator == "==":
                    return True
                if operator == "&&":
                    stack.extend(current.named_children)
            elif current.type == "unary_expression" and node_text(current.child_by_field_name("operator")) == "!":
                return True
            elif current.type in ("condition_clause", "parenthesized_expression"):
                stack.extend(current.named_children)
        return False

    def _branch(self, kind: str, condition: Node, statement: Node, statements: int = 0,
                has_else: bool = False) -> Branch | None:
        dims, _ = self.dependencies(condition)
        if not dims:
            return None
        modulus: Node | None = None
        modulus_value: int | None = None
        stack = [condition]
        while stack and modulus is None:
            current = stack.pop()
            if current.type == "binary_expression":
                operator = node_text(current.child_by_field_name("operator"))
                left = current.child_by_field_name("left")
                right = current.child_by_field_name("right")
                if operator in ("%", "&") and left is not None and right is not None and \
                        self.poly(left).coefficient("threadIdx.x").kind in ("unit", "constant"):
                    value = self.poly(right).constant
                    if operator == "%":
                        modulus, modulus_value = right, value
                    elif value is not None and value > 0 and (value + 1) & value == 0:
                        modulus, modulus_value = right, value + 1
            stack.extend(current.named_children)
        text_node = condition.named_children[0] if condition.type == "condition_clause" and condition.named_children \
            else condition
        branch = Branch(
            kind=kind,  # type: ignore[arg-type]
            condition=Expr(node_text(text_node), self.positions.span(text_node)),
            span=self.positions.span(statement),
            thread_dependent=True,
            modulus=Expr(node_text(modulus), self.positions.span(modulus)) if modulus is not None else None,
            modulus_value=modulus_value,
            statements=statements,
            has_else=has_else,
        )
        self._state.branches.append(branch)
        return branch


def _combined(left: str, right: str) -> str:
    """The type of `left op right` under the usual arithmetic conversions ("" when unknown)."""
    if "double" in (left, right):
        return "double"
    if "" in (left, right):
        return ""
    return "float" if "float" in (left, right) else "int"


def _statement_count(statement: Node | None) -> int:
    """Statements in a branch arm: a block's own statements (a nested block or loop counts 2)."""
    if statement is None:
        return 0
    if statement.type == "else_clause":
        return sum(_statement_count(c) for c in statement.named_children)
    if statement.type != "compound_statement":
        return 2 if statement.type in ("for_statement", "while_statement", "do_statement", "if_statement") else 1
    return sum(_statement_count(c) for c in statement.named_children if c.type != "comment")


def _always_returns(statement: Node) -> bool:
    """`return;` or a block with a `return` among its own statements."""
    if statement.type == "return_statement":
        return True
    return statement.type == "compound_statement" and any(c.type == "return_statement" for c in statement.named_children)


def _cast_operand(call: Node) -> Node | None:
    """The operand of `reinterpret_cast<T>(x)` (static_cast, const_cast), else None."""
    function = call.child_by_field_name("function")
    arguments = call.child_by_field_name("arguments")
    if function is None or function.type != "template_function" or arguments is None or \
            node_text(function.child_by_field_name("name")) not in CAST_NAMES or not arguments.named_children:
        return None
    return arguments.named_children[0]


def _subscript_chain(node: Node) -> tuple[Node | None, list[Node]]:
    """`t[a][b]` -> (t, [a, b])."""
    indices: list[Node] = []
    current: Node | None = node
    while current is not None and current.type == "subscript_expression":
        index_list = current.child_by_field_name("indices")
        if index_list is None:
            index_node = current.child_by_field_name("index")
            if index_node is None:
                return None, []
            indices.append(index_node)
        else:
            named = index_list.named_children
            if not named:
                return None, []
            indices.append(named[0])
        current = current.child_by_field_name("argument")
    indices.reverse()
    return current, indices


def _unit_step(update: str, variable: str) -> bool:
    update = update.replace(" ", "")
    return update in (f"{variable}++", f"++{variable}", f"{variable}--", f"--{variable}", f"{variable}+=1",
                      f"{variable}-=1")


def _reinterpreted_load(node: Node) -> str:
    """`*(float2 *) &a[i]` / `*reinterpret_cast<const float4 *>(&a[i])`: the wider type read or
    written through the address of `a[i]`, else ""."""
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    if parent is None or parent.type != "pointer_expression" or node_text(parent.child_by_field_name("operator")) != "&":
        return ""
    cast = parent.parent
    while cast is not None and cast.type in ("parenthesized_expression", "argument_list"):
        cast = cast.parent
    if cast is None:
        return ""
    if cast.type == "cast_expression":
        type_text = node_text(cast.child_by_field_name("type"))
    elif cast.type == "call_expression" and _cast_operand(cast) is not None:
        function = cast.child_by_field_name("function")
        type_text = node_text(function.child_by_field_name("arguments") if function is not None else None).strip("<>")
    else:
        return ""
    outer = cast.parent
    while outer is not None and outer.type == "parenthesized_expression":
        outer = outer.parent
    if "*" not in type_text or outer is None:
        return ""
    dereferenced = (outer.type == "pointer_expression" and node_text(outer.child_by_field_name("operator")) == "*") \
        or outer.type == "subscript_expression"
    return type_text.replace("const", "").replace("*", "").strip() if dereferenced else ""


def _fold(operator: str, left: int, right: int) -> int:
    if operator == "/":
        quotient = abs(left) // abs(right)
        return quotient if (left >= 0) == (right > 0) else -quotient
    if operator == "%":
        return left - right * _fold("/", left, right)
    if operator == ">>":
        return left >> right if right >= 0 else 0
    if operator == "&":
        return left & right
    if operator == "|":
        return left | right
    return left ^ right
