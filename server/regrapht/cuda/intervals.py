"""Integer intervals of kernel expressions at one concrete launch: the evaluator `ranges.py` uses.

Owns `Interval` (inclusive bounds, infinite where unknown) with C integer arithmetic over it, and
`Evaluator`: the value range of a tree-sitter expression in an `Env` of bindings (scalar
parameters, locals defined once, loop variables, the thread and block indices). The same
evaluator gives concrete values: with every thread index and loop iteration fixed by
`Evaluator.atoms` each interval is a single point, which is how `ranges.py` checks a witness
thread. Guards narrow values: a path condition `i < n` caps what `i` (or any expression of the
same text in the same scope) can be where the condition holds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from tree_sitter import Node

from regrapht.cuda.intexpr import int_literal, is_float_type, type_bytes
from regrapht.cuda.nodes import CAST_NAMES, ambiguous_cast, node_text, unparen

INF = math.inf
MAX_DEPTH = 60  # nested evaluation (helper returns, local definitions) beyond this is unknown
THREAD_ATOMS = ("threadIdx.x", "threadIdx.y", "threadIdx.z", "blockIdx.x", "blockIdx.y", "blockIdx.z")
# the value ranges of loads through pointers to narrow integer types (`bins[data[i]]`)
NARROW_RANGES = {"unsigned char": (0, 255), "uint8_t": (0, 255), "uchar": (0, 255), "char": (-128, 127),
                 "signed char": (-128, 127), "int8_t": (-128, 127), "unsigned short": (0, 65535),
                 "uint16_t": (0, 65535), "short": (-32768, 32767), "int16_t": (-32768, 32767), "bool": (0, 1)}
_UNSIGNED_32 = ("unsigned", "unsigned int", "uint32_t", "uint")


@dataclass(frozen=True)
class Interval:
    lo: float  # an int, or -INF
    hi: float  # an int, or INF

    @staticmethod
    def point(value: float) -> Interval:
        return Interval(value, value)

    @property
    def finite(self) -> bool:
        return self.lo != -INF and self.hi != INF

    @property
    def is_point(self) -> bool:
        return self.finite and self.lo == self.hi

    def meet(self, other: Interval) -> Interval:
        return Interval(max(self.lo, other.lo), min(self.hi, other.hi))

    def join(self, other: Interval) -> Interval:
        return Interval(min(self.lo, other.lo), max(self.hi, other.hi))


UNKNOWN = Interval(-INF, INF)
BOOL = Interval(0, 1)


def _mul(a: float, b: float) -> float:
    return 0 if a == 0 or b == 0 else a * b


def multiply(a: Interval, b: Interval) -> Interval:
    corners = [_mul(a.lo, b.lo), _mul(a.lo, b.hi), _mul(a.hi, b.lo), _mul(a.hi, b.hi)]
    return Interval(min(corners), max(corners))


def _trunc_div(a: float, b: float) -> float:
    if a in (INF, -INF):
        return a if b > 0 else -a
    q = abs(int(a)) // abs(int(b))
    return q if (a >= 0) == (b > 0) else -q


def divide(a: Interval, b: Interval) -> Interval:
    if b.lo >= 1 or b.hi <= -1:
        if not (b.finite or b.lo >= 1 and a.lo >= 0):
            return UNKNOWN
        if b.hi == INF:  # a / [d, inf) with a >= 0: between 0 and a / d
            return Interval(0, _trunc_div(a.hi, b.lo))
        corners = [_trunc_div(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
        return Interval(min(corners), max(corners))
    return UNKNOWN


def modulo(a: Interval, b: Interval) -> Interval:
    if b.lo < 1 or b.hi == INF:
        return UNKNOWN
    if a.is_point and b.is_point:
        q = _trunc_div(a.lo, b.lo)
        return Interval.point(a.lo - q * b.lo)
    top = b.hi - 1
    if a.lo >= 0:
        return Interval(0, min(a.hi, top))
    return Interval(-top, top if a.hi > 0 else 0)


def shift_right(a: Interval, b: Interval) -> Interval:
    if not b.is_point or not 0 <= b.lo < 64:
        return UNKNOWN
    k = int(b.lo)
    return Interval(a.lo if a.lo == -INF else int(a.lo) >> k, a.hi if a.hi == INF else int(a.hi) >> k)


def shift_left(a: Interval, b: Interval) -> Interval:
    if not b.is_point or not 0 <= b.lo < 63:
        return UNKNOWN
    return multiply(a, Interval.point(1 << int(b.lo)))


def bit_and(a: Interval, b: Interval) -> Interval:
    if a.is_point and b.is_point:
        return Interval.point(int(a.lo) & int(b.lo))
    for mask, other in ((b, a), (a, b)):
        if mask.is_point and mask.lo >= 0:
            return Interval(0, mask.lo if other.lo < 0 else min(mask.lo, other.hi))
    if a.lo >= 0 and b.lo >= 0:
        return Interval(0, min(a.hi, b.hi))
    return UNKNOWN


def bit_or(a: Interval, b: Interval, operator: str) -> Interval:
    if a.is_point and b.is_point:
        x, y = int(a.lo), int(b.lo)
        return Interval.point(x | y if operator == "|" else x ^ y)
    if a.lo >= 0 and b.lo >= 0 and a.finite and b.finite:
        return Interval(0, (1 << int(max(a.hi, b.hi)).bit_length()) - 1)
    return UNKNOWN


def compare(a: Interval, b: Interval, operator: str) -> Interval:
    """0, 1 or [0, 1] for a comparison of the two ranges."""
    if operator in (">", ">="):
        a, b, operator = b, a, "<" if operator == ">" else "<="
    if operator == "<":
        return Interval.point(1) if a.hi < b.lo else Interval.point(0) if a.lo >= b.hi else BOOL
    if operator == "<=":
        return Interval.point(1) if a.hi <= b.lo else Interval.point(0) if a.lo > b.hi else BOOL
    if operator in ("==", "!="):
        equal = a.is_point and b.is_point and a.lo == b.lo
        apart = a.hi < b.lo or b.hi < a.lo
        if operator == "!=":
            equal, apart = apart, equal
        return Interval.point(1) if equal else Interval.point(0) if apart else BOOL
    return BOOL


def truth(value: Interval) -> bool | None:
    """Whether a condition of this value holds: True (never 0), False (always 0), None (either)."""
    if value.lo == 0 and value.hi == 0:
        return False
    if value.lo > 0 or value.hi < 0:
        return True
    return None


# ---------------------------------------------------------------------------------------------
# Bindings and environments


@dataclass(frozen=True)
class Fixed:
    """A value known as a range: a kernel's scalar argument, a template argument."""

    value: Interval


@dataclass(frozen=True)
class Defined:
    """A local defined once (or a helper's parameter): its expression, read where it was written."""

    node: Node
    env: Env


@dataclass(frozen=True)
class LoopVar:
    """A `for` loop's induction variable: start, step (`+= c`, `-= c`, `*= c`, `<<= c`, `>>= c`,
    `/= c`) and the loop's id (the iteration counter a witness fixes)."""

    loop: int
    start: Node
    env: Env
    operator: str  # "+", "-", "*", "<<", ">>", "/"
    step: Node | None  # None for ++/--
    increasing: bool


@dataclass(frozen=True, eq=False)
class Growing:
    """A local only ever increased (`i += stride`, `i++`): at least its start while every step is
    not negative (a grid-stride `while (i < n)` bounds the other side). `step_envs`: where each
    step is written (filled by the walk as it meets them)."""

    start: Node
    env: Env
    steps: tuple[Node | None, ...]
    step_envs: Mapping[tuple[int, int], Env]


@dataclass(frozen=True)
class Opaque:
    """A local assigned more than once, or anything the model does not follow."""


@dataclass(frozen=True)
class Pointer:
    """A pointer into a buffer: `buffer` (a kernel parameter, or `__shared__:NAME`), its byte
    offset as a sum of (expression, env, bytes per unit) parts, and the size of what it points to."""

    buffer: str
    parts: tuple[tuple[Node, Env, int], ...]
    element_bytes: int
    element_type: str


Binding = Fixed | Defined | LoopVar | Growing | Opaque | Pointer


@dataclass(eq=False)
class Frame:
    """One function being walked: the kernel or a `__device__` helper it calls."""

    types: Mapping[str, str]  # template type parameter -> the instance's type
    constants: Mapping[str, int]  # template values, `#define`s, `constexpr`s


@dataclass(eq=False)
class Env:
    frame: Frame
    names: dict[str, Binding] = field(default_factory=dict)

    def child(self) -> Env:
        return Env(self.frame, dict(self.names))


def normal_text(node: Node) -> str:
    return "".join(node_text(unparen(node)).split())


class Evaluator:
    """Value ranges at a launch. `dims`: blockDim/gridDim; `atoms`: a concrete thread and loop
    iterations (a witness) or None for every thread; `narrowed`: per frame, expression text ->
    the range the path conditions allow; `helpers`: `__device__` functions by name (their
    single `return` is followed); `element_types`: what a pointer binding points to."""

    def __init__(self, dims: Mapping[str, int], atoms: Mapping[object, int] | None,
                 helpers: Mapping[str, Node], loop_bounds: Mapping[int, int] | None = None) -> None:
        self.dims = dims
        self.atoms = atoms
        self.helpers = helpers
        self.narrowed: dict[int, dict[str, Interval]] = {}
        self.loop_bounds = loop_bounds or {}
        self._depth = 0

    def value(self, node: Node | None, env: Env) -> Interval:
        node = unparen(node)
        if node is None or self._depth > MAX_DEPTH:
            return UNKNOWN
        self._depth += 1
        try:
            result = self._value(node, env)
        finally:
            self._depth -= 1
        narrowed = self.narrowed.get(id(env.frame))
        if narrowed:
            bound = narrowed.get(normal_text(node))
            if bound is not None:
                result = result.meet(bound)
        return result

    def name(self, name: str, env: Env) -> Interval:
        binding = env.names.get(name)
        if binding is None:
            if name in env.frame.constants:
                return Interval.point(env.frame.constants[name])
            return Interval.point(32) if name == "warpSize" else UNKNOWN
        if isinstance(binding, Fixed):
            return binding.value
        if isinstance(binding, Defined):
            return self.value(binding.node, binding.env)
        if isinstance(binding, LoopVar):
            return self.loop_value(binding)
        if isinstance(binding, Growing) and self.atoms is None:
            envs = binding.step_envs
            if all(step is None or (step.start_byte, step.end_byte) in envs
                   and self.value(step, envs[(step.start_byte, step.end_byte)]).lo >= 0 for step in binding.steps):
                return Interval(self.value(binding.start, binding.env).lo, INF)
        return UNKNOWN

    def loop_value(self, var: LoopVar) -> Interval:
        start = self.value(var.start, var.env)
        step = Interval.point(1) if var.step is None else self.value(var.step, var.env)
        if self.atoms is not None and var.loop in self.atoms and start.is_point and step.is_point:
            value = _iterate(var.operator, int(start.lo), int(step.lo), self.atoms[var.loop])
            return Interval.point(value) if value is not None else UNKNOWN
        # every iteration: from the start on, in the step's direction (the loop's condition,
        # a path condition of the body, bounds the other side)
        if var.operator == ">>" or var.operator == "/":
            return Interval(0 if start.lo >= 0 else -INF, start.hi) if step.lo >= 1 else UNKNOWN
        if var.increasing:
            return Interval(start.lo, INF)
        return Interval(-INF, start.hi)

    def _value(self, node: Node, env: Env) -> Interval:
        kind = node.type
        if kind == "number_literal":
            text = node_text(node)
            value = int_literal(text.removeprefix("-"))
            if value is None:
                return UNKNOWN
            return Interval.point(-value if text.startswith("-") else value)
        if kind in ("true", "false"):
            return Interval.point(1 if kind == "true" else 0)
        if kind == "identifier":
            return self.name(node_text(node), env)
        if kind == "field_expression":
            return self._field(node)
        if kind == "binary_expression":
            return self._binary(node, env)
        if kind == "unary_expression":
            return self._unary(node, env)
        if kind == "conditional_expression":
            condition = truth(self.value(node.child_by_field_name("condition"), env))
            yes = self.value(node.child_by_field_name("consequence"), env)
            no = self.value(node.child_by_field_name("alternative"), env)
            return yes if condition is True else no if condition is False else yes.join(no)
        if kind == "cast_expression":
            if ambiguous_cast(node):
                return UNKNOWN
            return self._cast(node_text(node.child_by_field_name("type")),
                              self.value(node.child_by_field_name("value"), env))
        if kind == "call_expression":
            return self._call(node, env)
        if kind == "sizeof_expression":
            type_node = node.child_by_field_name("type")
            type_text = node_text(type_node).strip() if type_node is not None else ""
            size = type_bytes(env.frame.types.get(type_text, type_text))
            return Interval.point(size) if size is not None else UNKNOWN
        if kind == "subscript_expression":
            return self._load(node, env)
        return UNKNOWN

    def _field(self, node: Node) -> Interval:
        argument = node_text(node.child_by_field_name("argument"))
        member = node_text(node.child_by_field_name("field"))
        key = f"{argument}.{member}"
        if key in self.dims:
            return Interval.point(self.dims[key])
        if key in THREAD_ATOMS:
            if self.atoms is not None and key in self.atoms:
                return Interval.point(self.atoms[key])
            limit = self.dims.get(("blockDim." if argument == "threadIdx" else "gridDim.") + member)
            return Interval(0, limit - 1) if limit else UNKNOWN
        return UNKNOWN

    def _binary(self, node: Node, env: Env) -> Interval:
        operator = node_text(node.child_by_field_name("operator"))
        left = self.value(node.child_by_field_name("left"), env)
        if operator in ("&&", "||"):
            first = truth(left)
            if operator == "&&" and first is False or operator == "||" and first is True:
                return Interval.point(0 if operator == "&&" else 1)
            second = truth(self.value(node.child_by_field_name("right"), env))
            if first is not None and second is not None:
                return Interval.point(int(first and second) if operator == "&&" else int(first or second))
            return BOOL
        right = self.value(node.child_by_field_name("right"), env)
        if operator == "+":
            return Interval(left.lo + right.lo, left.hi + right.hi)
        if operator == "-":
            return Interval(left.lo - right.hi, left.hi - right.lo)
        operations = {"*": multiply, "/": divide, "%": modulo, ">>": shift_right, "<<": shift_left, "&": bit_and}
        if operator in operations:
            return operations[operator](left, right)
        if operator in ("|", "^"):
            return bit_or(left, right, operator)
        if operator in ("<", "<=", ">", ">=", "==", "!="):
            return compare(left, right, operator)
        return UNKNOWN

    def _unary(self, node: Node, env: Env) -> Interval:
        operator = node_text(node.child_by_field_name("operator"))
        value = self.value(node.child_by_field_name("argument"), env)
        if operator == "-":
            return Interval(-value.hi, -value.lo)
        if operator == "+":
            return value
        if operator == "!":
            held = truth(value)
            return BOOL if held is None else Interval.point(0 if held else 1)
        if operator == "~":
            return Interval(-value.hi - 1, -value.lo - 1)
        return UNKNOWN

    def _cast(self, type_text: str, value: Interval) -> Interval:
        words = " ".join(type_text.replace("const", " ").split())
        if "*" in words or is_float_type(words):
            return UNKNOWN
        if words in _UNSIGNED_32 and value.lo < 0:
            return Interval(0, 2**32 - 1)
        if words in ("bool",):
            held = truth(value)
            return BOOL if held is None else Interval.point(int(held))
        return value

    def _call(self, node: Node, env: Env) -> Interval:
        function = node.child_by_field_name("function")
        arguments = node.child_by_field_name("arguments")
        args = [a for a in (arguments.named_children if arguments is not None else []) if a.type != "comment"]
        if function is None:
            return UNKNOWN
        if function.type == "template_function":
            name = node_text(function.child_by_field_name("name"))
            if name in CAST_NAMES and args:
                type_args = node_text(function.child_by_field_name("arguments")).strip("<>")
                return self._cast(type_args, self.value(args[0], env))
        else:
            name = node_text(function)
        values = [self.value(a, env) for a in args]
        if name in ("min", "umin", "imin", "fminf") and len(values) == 2:
            return Interval(min(values[0].lo, values[1].lo), min(values[0].hi, values[1].hi))
        if name in ("max", "umax", "imax") and len(values) == 2:
            return Interval(max(values[0].lo, values[1].lo), max(values[0].hi, values[1].hi))
        if name in ("__mul24", "__umul24") and len(values) == 2:
            return multiply(values[0], values[1])
        if name in ("int", "long", "size_t", "unsigned") and len(values) == 1:
            return values[0]
        helper = self.helpers.get(name)
        if helper is not None:
            return self._helper_return(helper, args, env)
        return UNKNOWN

    def _helper_return(self, helper: Node, args: list[Node], env: Env) -> Interval:
        """`__device__ int idx(int r, int c) { return r * W + c; }`: the returned expression."""
        body = helper.child_by_field_name("body")
        statements = [c for c in (body.named_children if body is not None else []) if c.type != "comment"]
        if len(statements) != 1 or statements[0].type != "return_statement" or not statements[0].named_children:
            return UNKNOWN
        inner = Env(Frame(env.frame.types, env.frame.constants))
        for name, arg in zip(parameter_names(helper), args, strict=False):
            inner.names[name] = Defined(arg, env)
        return self.value(statements[0].named_children[0], inner)

    def _load(self, node: Node, env: Env) -> Interval:
        base = node.child_by_field_name("argument")
        while base is not None and base.type == "subscript_expression":
            base = base.child_by_field_name("argument")
        binding = env.names.get(node_text(base)) if base is not None else None
        if isinstance(binding, Pointer):
            element = " ".join(env.frame.types.get(binding.element_type, binding.element_type).split())
            bounds = NARROW_RANGES.get(element)
            if bounds is not None:
                return Interval(*bounds)
        return UNKNOWN


def _iterate(operator: str, start: int, step: int, k: int) -> int | None:
    """A loop variable's value at iteration `k` (None beyond 2^64: such an iteration is never reached)."""
    if operator in ("+", "-"):
        return start + k * step if operator == "+" else start - k * step
    if operator in ("<<", ">>"):
        if step < 0:
            return None
        shift = step * k
        if operator == ">>":
            return start >> shift if shift < 64 else (0 if start >= 0 else -1)
        return start << shift if shift < 64 else None
    if operator in ("*", "/") and step >= 2:
        if k >= 64:
            return None if operator == "*" else 0
        power = step ** k
        return start * power if operator == "*" else int(start / power)
    return None


def parameter_names(function: Node) -> list[str]:
    """The parameter names of a `function_definition`, in order ("" for an unnamed one)."""
    from regrapht.cuda.nodes import declarator_name, find_function_declarator

    declarator = find_function_declarator(function.child_by_field_name("declarator"))
    parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
    names = []
    for parameter in parameters.named_children if parameters is not None else []:
        if parameter.type not in ("parameter_declaration", "optional_parameter_declaration"):
            continue
        name = declarator_name(parameter.child_by_field_name("declarator"))
        names.append(node_text(name) if name is not None else "")
    return names
