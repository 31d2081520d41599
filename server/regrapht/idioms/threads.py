"""How a kernel's threads map to the items it computes: one thread per element, row, column...

`thread_mapping(kernel)` recognises the usual shapes around a kernel's per-item work:

- `int i = <global x index>; if (i < n) { WORK }` (also several indices: `if (r < R && c < C)`),
- `int i = <global x index>; if (i >= n) return; WORK`,
- `for (int i = <global x index>; i < n; i += blockDim.x * gridDim.x) { WORK }` (grid-stride),

where the indices are global thread indices along x/y/z (`blockIdx.x * blockDim.x + threadIdx.x`
in any spelling, resolved through local definitions) and the bounds do not depend on the thread
or on loaded data. Statements before the guard must be plain declarations. What the work does is
left to the idiom recognisers (rows.py, ...), which get the `Symbols` as defined at its start.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.idioms.syntax import (
    GLOBAL_X,
    GLOBAL_Y,
    GRID_THREADS_X,
    KernelSyntax,
    Symbols,
    condition_of,
    named_statements,
    text,
    unparen,
    walk,
)

GLOBAL_Z = Poly.of({("blockDim.z", "blockIdx.z"): 1, ("threadIdx.z",): 1})
# Linear thread ids over two launch dimensions: a 2-D grid of 1-D blocks
# (`(blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x`) and a 1-D grid of 2-D
# blocks (`blockIdx.x * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x`).
LINEAR_GRID_XY = Poly.of({("blockDim.x", "blockIdx.x"): 1, ("blockDim.x", "blockIdx.y", "gridDim.x"): 1,
                          ("threadIdx.x",): 1})
LINEAR_BLOCK_XY = Poly.of({("blockDim.x", "blockDim.y", "blockIdx.x"): 1, ("blockDim.x", "threadIdx.y"): 1,
                           ("threadIdx.x",): 1})
AXES = {"x": GLOBAL_X, "y": GLOBAL_Y, "z": GLOBAL_Z, "grid_xy": LINEAR_GRID_XY, "block_xy": LINEAR_BLOCK_XY}
# The launch dimensions (grid, block) each axis spans; every other dimension must be 1 for the
# kernel to run one thread per item.
AXIS_DIMENSIONS = {"x": (("grid", 0), ("block", 0)), "y": (("grid", 1), ("block", 1)),
                   "z": (("grid", 2), ("block", 2)), "grid_xy": (("grid", 0), ("grid", 1), ("block", 0)),
                   "block_xy": (("grid", 0), ("block", 0), ("block", 1))}
MappingForm = Literal["if", "return", "grid_stride"]


@dataclass(frozen=True)
class ItemIndex:
    name: str  # the local variable holding the global thread index
    axis: str  # "x", "y" or "z"
    bound: str  # the exclusive upper bound, as written
    bound_poly: Poly
    type: str  # its declared type, e.g. "int"


@dataclass(frozen=True)
class ThreadMapping:
    indices: tuple[ItemIndex, ...]  # outermost guard term first
    form: MappingForm
    prelude: tuple[Node, ...]  # the declarations before the guard
    work: tuple[Node, ...]  # the statements run once per item
    symbols: Symbols  # local definitions at the start of `work`

    def index(self, axis: str) -> ItemIndex | None:
        return next((i for i in self.indices if i.axis == axis), None)


def _axis_of(poly: Poly) -> str | None:
    return next((axis for axis, value in AXES.items() if poly == value), None)


def _is_pure_declaration(node: Node) -> bool:
    if node.type != "declaration":
        return False
    if any(text(c) in ("__shared__", "static", "extern") for c in node.children):
        return False
    return not any(n.type in ("call_expression", "assignment_expression", "update_expression", "subscript_expression")
                   for n in walk(node))


def _declared(node: Node) -> list[tuple[str, Node | None, str]]:
    """(name, initial value, type) of each declarator of a declaration."""
    out = []
    type_text = " ".join(text(node.child_by_field_name("type")).split())
    for declarator in node.children_by_field_name("declarator"):
        if declarator.type == "init_declarator":
            target = declarator.child_by_field_name("declarator")
            value = declarator.child_by_field_name("value")
        else:
            target, value = declarator, None
        if target is None or target.type != "identifier":
            return []  # pointers, arrays: not a plain index declaration
        out.append((text(target), value, type_text))
    return out


def _bound_terms(condition: Node | None, joiner: str, symbols: Symbols, candidates: dict[str, tuple[str, str]],
                 negated: bool) -> list[ItemIndex] | None:
    """The `idx < bound` terms of `a < n && b < m` (or `idx >= bound` of `a >= n || b >= m`)."""
    condition = unparen(condition)
    if condition is None or condition.type != "binary_expression":
        return None
    operator = text(condition.child_by_field_name("operator"))
    left, right = condition.child_by_field_name("left"), condition.child_by_field_name("right")
    if operator == joiner:
        first = _bound_terms(left, joiner, symbols, candidates, negated)
        second = _bound_terms(right, joiner, symbols, candidates, negated)
        return None if first is None or second is None else first + second
    wanted = {">=": "<", "<=": ">"} if negated else {"<": "<", ">": ">"}
    if operator not in wanted:
        return None
    index_node, bound_node = (left, right) if wanted[operator] == "<" else (right, left)
    index_node = unparen(index_node)
    if index_node is None or index_node.type != "identifier" or text(index_node) not in candidates:
        return None
    bound = symbols.poly(bound_node)
    if bound.thread_dependent or bound.memory_dependent:
        return None  # a data- or thread-dependent bound is not a plain item range
    name = text(index_node)
    axis, type_text = candidates[name]
    return [ItemIndex(name, axis, " ".join(text(bound_node).split()), bound, type_text)]


def thread_mapping(kernel: KernelSyntax) -> ThreadMapping | None:
    """The kernel's thread-to-item mapping, or None when its body has another shape."""
    symbols = Symbols(kernel.constants)
    candidates: dict[str, tuple[str, str]] = {}
    statements = kernel.statements()
    prelude: list[Node] = []
    for position, statement in enumerate(statements):
        rest = statements[position + 1:]
        if statement.type == "declaration" and _is_pure_declaration(statement):
            for name, value, type_text in _declared(statement):
                symbols.define(name, value)
                axis = _axis_of(symbols.poly(value)) if value is not None else None
                if axis is not None:
                    candidates[name] = (axis, type_text)
                else:
                    candidates.pop(name, None)
            prelude.append(statement)
            continue
        if statement.type == "if_statement" and statement.child_by_field_name("alternative") is None:
            consequence = statement.child_by_field_name("consequence")
            body = named_statements(consequence)
            if len(body) == 1 and body[0].type == "return_statement" and not body[0].named_children:
                terms = _bound_terms(condition_of(statement), "||", symbols, candidates, negated=True)
                if terms is None:
                    return None
                return ThreadMapping(tuple(terms), "return", tuple(prelude), tuple(rest), _indexed(symbols, terms))
            if rest:
                return None
            terms = _bound_terms(condition_of(statement), "&&", symbols, candidates, negated=False)
            if terms is None:
                return None
            return ThreadMapping(tuple(terms), "if", tuple(prelude), tuple(body), _indexed(symbols, terms))
        if statement.type == "for_statement" and not rest:
            return _grid_stride(statement, symbols, tuple(prelude))
        return None
    return None


def _grid_stride(loop: Node, symbols: Symbols, prelude: tuple[Node, ...]) -> ThreadMapping | None:
    init = loop.child_by_field_name("initializer")
    if init is None or init.type != "declaration":
        return None
    declared = _declared(init)
    if len(declared) != 1 or declared[0][1] is None:
        return None
    name, value, type_text = declared[0]
    axis = _axis_of(symbols.poly(value))
    if axis != "x":
        return None
    terms = _bound_terms(loop.child_by_field_name("condition"), "&&", symbols, {name: (axis, type_text)}, False)
    update = unparen(loop.child_by_field_name("update"))
    if terms is None or len(terms) != 1 or update is None or update.type != "assignment_expression":
        return None
    if text(update.child_by_field_name("left")) != name or text(update.child_by_field_name("operator")) != "+=":
        return None
    if symbols.poly(update.child_by_field_name("right")) != GRID_THREADS_X:
        return None
    body = loop.child_by_field_name("body")
    # The index must not be changed by the work itself.
    for node in walk(body) if body is not None else ():
        if node.type in ("assignment_expression", "update_expression"):
            target = node.child_by_field_name("left") or node.child_by_field_name("argument")
            if text(target) == name:
                return None
    return ThreadMapping(tuple(terms), "grid_stride", prelude, tuple(named_statements(body)),
                         _indexed(symbols, terms))


def substitute(poly: Poly, pattern: Poly, replacement: Poly) -> Poly:
    """`poly` with every whole multiple of the linear `pattern` replaced by `replacement`
    (`2*(blockIdx.x*blockDim.x + threadIdx.x) + 1` -> `2*row + 1`)."""
    own = poly.as_dict()
    head, head_coefficient = pattern.terms[0]
    factor, remainder = divmod(own.get(head, 0), head_coefficient)
    if factor == 0 or remainder or any(own.get(m, 0) != c * factor for m, c in pattern.terms):
        return poly
    result = poly - Poly.of({m: c * factor for m, c in pattern.terms})
    scaled = replacement * Poly.const(factor)
    return result + scaled if scaled is not None else poly


def _indexed(symbols: Symbols, terms: list[ItemIndex]) -> Symbols:
    """`symbols` where each item index is an atom of its own name, also inside other locals."""
    out = Symbols(symbols.constants)
    out.definitions = dict(symbols.definitions)
    for name, value in symbols.env.items():
        for term in terms:
            value = substitute(value, AXES[term.axis], Poly.atom(term.name))
        out.env[name] = value
    for term in terms:
        out.env[term.name] = Poly.atom(term.name)
        out.definitions.pop(term.name, None)
    return out
