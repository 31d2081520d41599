"""Memory accesses of a statement or expression, and what an expression may do besides compute.

`accesses(node, symbols)` lists every `array[index]` (and `*p`, `*(p + i)`) under `node` with the index as a polynomial
(`Symbols.poly`) and whether it is read, written (`=`), updated in place (`+=`, `++`) or has its
address taken (`&a[i]`: atomics, pointer escapes). `is_pure(node)` says whether an expression
only computes: no assignments, increments, or calls other than known side-effect-free math.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.idioms.syntax import Symbols, call_args, call_name, subscript_parts, text, unparen, walk

AccessKind = Literal["read", "write", "update", "address"]
LOAD_INTRINSICS = frozenset({"__ldg", "__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv"})

# Calls that only compute a value from their arguments.
PURE_CALLS = frozenset({
    "expf", "exp", "__expf", "exp2f", "exp2", "logf", "log", "__logf", "log2f", "log1pf", "expm1f", "sqrtf", "sqrt",
    "rsqrtf", "rsqrt", "cbrtf", "powf", "pow", "__powf", "sinf", "cosf", "tanf", "__sinf", "__cosf", "tanhf", "tanh",
    "sinhf", "coshf", "erff", "erf", "fabsf", "fabs", "abs", "fmaxf", "fminf", "fmax", "fmin", "max", "min",
    "floorf", "ceilf", "roundf", "truncf", "fmaf", "fma", "__fmaf_rn", "__fdividef", "__frcp_rn", "__fsqrt_rn",
    "__ldg", "__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv", "__float2int_rn", "__int2float_rn", "static_cast", "float", "double", "int",
    "__float_as_uint", "__uint_as_float", "__float_as_int", "__int_as_float", "__double_as_longlong",
    "__longlong_as_double", "__popc", "__popcll", "__clz", "__clzll", "__ffs", "__brev", "__fmul_rn", "__fadd_rn",
    "__dmul_rn", "__dadd_rn", "__saturatef", "__float2uint_rn", "__double2float_rn", "log10f", "atan2f",
    "atanf", "asinf", "acosf", "hypotf", "fmodf", "copysignf", "normcdff", "erfcf", "lgammaf", "tgammaf",
    "isnan", "isinf", "isfinite", "signbit", "llabs", "labs", "umin", "umax", "llmin", "llmax",
    "ullmin", "ullmax", "exp10f", "expm1", "log1p", "ceil", "floor", "round", "trunc",
})


@dataclass(frozen=True)
class Access:
    array: str  # the pointer or array name ("" when the base is not a plain name)
    index: Poly | None  # the (single) subscript; None for `a[i][j]` or an unnamed base
    kind: AccessKind
    node: Node  # the subscript expression


def _kind(node: Node) -> AccessKind:
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        node, parent = parent, parent.parent
    if parent is None:
        return "read"
    if parent.type == "assignment_expression" and parent.child_by_field_name("left") == node:
        return "write" if text(parent.child_by_field_name("operator")) == "=" else "update"
    if parent.type == "update_expression":
        return "update"
    if parent.type == "pointer_expression" and text(parent.child_by_field_name("operator")) == "&":
        return "read" if _read_only_argument(parent) else "address"
    return "read"


def _read_only_argument(address: Node) -> bool:
    """Whether `&a[i]` is the argument of a load intrinsic (`__ldg(&a[i])`)."""
    holder = address.parent
    call = holder.parent if holder is not None and holder.type == "argument_list" else None
    return call is not None and call_name(call) in LOAD_INTRINSICS


def _dereference(node: Node, symbols: Symbols) -> Access | None:
    """`*p` or `*(p + i)` as an access of p at index 0 or i (through pointer aliases)."""
    return _pointer_access(node.child_by_field_name("argument"), node, symbols, _kind(node))


def _pointer_access(pointer: Node | None, node: Node, symbols: Symbols, kind: AccessKind) -> Access:
    """The element `pointer` (`p`, `p + i`) points to, as an access of p at index 0 or i."""
    argument = unparen(pointer)
    offset = Poly.const(0)
    while argument is not None and argument.type == "binary_expression" and \
            text(argument.child_by_field_name("operator")) == "+":
        offset = offset + symbols.poly(argument.child_by_field_name("right"))
        argument = unparen(argument.child_by_field_name("left"))
    if argument is None or argument.type != "identifier":
        return Access("", None, kind, node)
    name = text(argument)
    if name in symbols.aliases:
        name, base = symbols.aliases[name]
        offset = base + offset
    return Access(name, offset, kind, node)


def accesses(node: Node, symbols: Symbols) -> list[Access]:
    found = []
    for current in walk(node):
        if current.type == "pointer_expression" and text(current.child_by_field_name("operator")) == "*":
            deref = _dereference(current, symbols)
            if deref is not None:
                found.append(deref)
            continue
        if current.type == "call_expression" and call_name(current) in LOAD_INTRINSICS:
            args = call_args(current)
            target = unparen(args[0]) if args else None
            if target is not None and target.type != "pointer_expression":
                found.append(_pointer_access(target, current, symbols, "read"))  # `__ldg(p + i)`
            continue
        if current.type != "subscript_expression":
            continue
        if current.parent is not None and current.parent.type == "subscript_expression" and \
                current.parent.child_by_field_name("argument") == current:
            continue  # the inner part of `a[i][j]`: reported with the outer one
        base, indices = subscript_parts(current)
        base = unparen(base)
        name = text(base) if base is not None and base.type == "identifier" else ""
        index = symbols.poly(indices[0]) if len(indices) == 1 else None
        if name in symbols.aliases:
            name, offset = symbols.aliases[name]
            index = offset + index if index is not None else None
        found.append(Access(name, index, _kind(current), current))
    return found


def is_pure(node: Node | None) -> bool:
    """Whether evaluating `node` only computes a value (reads memory at most)."""
    if node is None:
        return True
    for current in walk(node):
        if current.type in ("assignment_expression", "update_expression", "comma_expression", "lambda_expression"):
            return False
        if current.type == "call_expression" and call_name(current).split("<")[0] not in PURE_CALLS and \
                not _conversion(current):  # (`static_cast<T>(x)` is the pure `static_cast`)
            return False
        if current.type == "pointer_expression" and text(current.child_by_field_name("operator")) == "&" \
                and not _read_only_argument(current):
            return False
    return True


_BUILTIN_TYPES = frozenset({"float", "double", "int", "unsigned", "long", "short", "char", "bool", "size_t"})


def _conversion(call: Node) -> bool:
    """A value conversion written as a call: `float(x)`, `static_cast<T>(x)`, or `T(0)` / `T()`
    for a template type parameter `T` of the enclosing template."""
    name = call_name(call)
    if name in _BUILTIN_TYPES or name.startswith("static_cast<"):
        return True
    holder = call.parent
    while holder is not None:
        if holder.type == "template_declaration":
            parameters = holder.child_by_field_name("parameters")
            for parameter in parameters.named_children if parameters is not None else ():
                if parameter.type == "type_parameter_declaration" and \
                        any(text(c) == name for c in parameter.named_children if c.type == "type_identifier"):
                    return True
        holder = holder.parent
    return False


def identifiers(node: Node | None) -> set[str]:
    """The plain names an expression mentions (call names excluded)."""
    if node is None:
        return set()
    names = set()
    for current in walk(node):
        if current.type == "identifier":
            parent = current.parent
            if parent is not None and parent.type == "call_expression" and parent.child_by_field_name("function") == current:
                continue
            names.add(text(current))
    return names
