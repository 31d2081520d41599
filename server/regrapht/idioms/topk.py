"""Row top-k by one thread per row: a sorted list of the k largest values (and their columns)
kept in two local arrays while the row is read.

`row_topk(kernel)` recognises, inside `thread_mapping`'s per-row work:

    T v[K]; I id[K];                                  (any names; K a constant)
    for (q = 0; q < K; q++) { v[q] = LOW; id[q] = NONE; }
    for (c = L; c < U; c++) { T e = <load>; <insertion of (e, c)> }
    for (q = 0; q < K; q++) { <stores of v[q], id[q] for the row> }

with scalar declarations around them. What the insertion does is not read off its shape: it is
run (`block_sim.insertion_keeps_top`) on random rows full of ties and must keep the K largest
values in descending order, equal values earliest column first, with their columns, after every
element. Any insertion written that way (a while loop shifting down, a for loop, swaps...) is
recognised; one that keeps ties the other way, or drops or duplicates entries, is not.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from regrapht.idioms.access import accesses, is_pure
from regrapht.idioms.block_sim import FLOAT_CONSTANTS, insertion_keeps_top
from regrapht.idioms.syntax import (
    KernelSyntax,
    Symbols,
    named_statements,
    subscript_parts,
    text,
    unparen,
    updated_target,
    walk,
)
from regrapht.idioms.threads import ItemIndex, ThreadMapping, thread_mapping


@dataclass(frozen=True)
class RowTopK:
    kernel: KernelSyntax
    mapping: ThreadMapping
    item: ItemIndex
    k: int
    values: str  # the local array of kept values
    ids: str  # ... and of their columns
    value_type: str
    id_type: str
    declarations: tuple[Node, ...]  # the row's scalar declarations and the two arrays, in order
    init: Node  # the loop that fills the arrays with the start values
    start_value: str  # as written (`-INFINITY`)
    start_id: str
    loop: Node  # the loop over the row
    var: str
    var_type: str
    lower: str
    upper: str
    body: tuple[Node, ...]
    output: Node  # the loop that stores the arrays


def row_topk(kernel: KernelSyntax) -> RowTopK | None:
    mapping = thread_mapping(kernel)
    if mapping is None or len(mapping.indices) != 1 or mapping.indices[0].axis != "x":
        return None
    item = mapping.indices[0]
    work = [s for s in mapping.work if s.type != "comment"]
    loops = [s for s in work if s.type == "for_statement"]
    if len(loops) != 3 or any(s.type not in ("declaration", "for_statement") for s in work):
        return None
    init, scan, output = loops
    if work.index(init) > work.index(scan) or work.index(scan) > work.index(output) or work[-1] != output:
        return None
    declarations = [s for s in work if s.type == "declaration"]
    if any(work.index(d) > work.index(init) for d in declarations):
        return None
    arrays: dict[str, tuple[str, int]] = {}
    symbols = Symbols(kernel.constants)
    for declaration in declarations:
        if any(text(c) in ("__shared__", "static", "extern") for c in declaration.children) or not is_pure(declaration):
            return None
        type_text = " ".join(w for w in text(declaration.child_by_field_name("type")).split() if w != "const")
        for declarator in declaration.children_by_field_name("declarator"):
            if declarator.type == "array_declarator":
                name, size = declarator.child_by_field_name("declarator"), declarator.child_by_field_name("size")
                constant = symbols.poly(size).constant if size is not None else None
                if name is None or name.type != "identifier" or constant is None or not 1 <= constant <= 32:
                    return None
                arrays[text(name)] = (type_text, constant)
    if len(arrays) != 2 or len({k for _, k in arrays.values()}) != 1:
        return None
    k = next(iter(arrays.values()))[1]
    starts = _init_values(init, set(arrays), k, symbols)
    if starts is None:
        return None
    parts = _row_loop(scan)
    if parts is None:
        return None
    var, var_type, lower, upper, body = parts
    loads = [s for s in body if s.type == "declaration" and any(True for _ in accesses(s, symbols))]
    if len(loads) != 1 or body[0] != loads[0] or len(loads[0].children_by_field_name("declarator")) != 1:
        return None
    element = loads[0].children_by_field_name("declarator")[0].child_by_field_name("declarator")
    if element is None or element.type != "identifier":
        return None
    rest = body[1:]
    for statement in rest:
        for node in walk(statement):
            if node.type == "subscript_expression":
                base = unparen(subscript_parts(node)[0])
                if base is None or text(base) not in arrays:
                    return None  # the insertion touches nothing but the two lists
    first, second = list(arrays)
    for values, ids in ((first, second), (second, first)):
        start_value = _number(starts[values])
        start_id = _number(starts[ids])
        if start_value is None or start_id is None or not float(start_id).is_integer():
            continue
        if insertion_keeps_top(list(rest), values, ids, text(element), var, k, start_value, int(start_id),
                               kernel.constants):
            if not _stores_lists(output, values, ids, k, symbols):
                return None
            return RowTopK(kernel, mapping, item, k, values, ids, arrays[values][0], arrays[ids][0],
                           tuple(declarations), init, starts[values], starts[ids], scan, var, var_type, lower, upper,
                           tuple(body), output)
    return None


def _init_values(loop: Node, arrays: set[str], k: int, symbols: Symbols) -> dict[str, str] | None:
    """{array: start value as written} of `for (q = 0; q < K; q++) { a[q] = A; b[q] = B; }`."""
    parts = _row_loop(loop)
    if parts is None:
        return None
    var, _, lower, upper, body = parts
    if lower != "0" or _bound(loop, symbols) != k:
        return None
    starts: dict[str, str] = {}
    for statement in body:
        expression = unparen(statement.named_children[0]) if statement.type == "expression_statement" and \
            statement.named_children else None
        if expression is None or expression.type != "assignment_expression" or \
                text(expression.child_by_field_name("operator")) != "=":
            return None
        target = unparen(expression.child_by_field_name("left"))
        if target is None or target.type != "subscript_expression":
            return None
        base, indices = subscript_parts(target)
        value = expression.child_by_field_name("right")
        if text(unparen(base)) not in arrays or len(indices) != 1 or text(unparen(indices[0])) != var or \
                value is None or any(n.type == "identifier" and text(n) not in FLOAT_CONSTANTS for n in walk(value)):
            return None
        starts[text(unparen(base))] = " ".join(text(value).split())
    return starts if set(starts) == arrays else None


def _bound(loop: Node, symbols: Symbols) -> int | None:
    condition = unparen(loop.child_by_field_name("condition"))
    return symbols.poly(condition.child_by_field_name("right")).constant if condition is not None else None


def _number(code: str) -> float | None:
    spelled = code.replace(" ", "")
    negative = spelled.startswith("-")
    spelled = spelled.lstrip("-+")
    value = FLOAT_CONSTANTS.get(spelled)
    if value is None:
        try:
            value = float(spelled.rstrip("fFlLuU")) if not spelled.lower().startswith("0x") else float(int(spelled, 16))
        except ValueError:
            return None
    return -value if negative else value


def _row_loop(loop: Node) -> tuple[str, str, str, str, list[Node]] | None:
    """(var, type, lower, upper, body) of `for (T c = L; c < U; c++) BODY` (unit step)."""
    init = loop.child_by_field_name("initializer")
    declarators = init.children_by_field_name("declarator") if init is not None and init.type == "declaration" else []
    if len(declarators) != 1 or declarators[0].type != "init_declarator":
        return None
    target, lower = declarators[0].child_by_field_name("declarator"), declarators[0].child_by_field_name("value")
    condition = unparen(loop.child_by_field_name("condition"))
    update = unparen(loop.child_by_field_name("update"))
    if target is None or lower is None or condition is None or condition.type != "binary_expression" or \
            text(condition.child_by_field_name("operator")) != "<" or \
            text(unparen(condition.child_by_field_name("left"))) != text(target) or update is None:
        return None
    var = text(target)
    unit = (update.type == "update_expression" and text(update.child_by_field_name("operator")) == "++"
            and text(update.child_by_field_name("argument")) == var) or \
        (update.type == "assignment_expression" and text(update.child_by_field_name("left")) == var
         and text(update.child_by_field_name("operator")) == "+=" and text(update.child_by_field_name("right")) == "1")
    if not unit:
        return None
    body = [s for s in named_statements(loop.child_by_field_name("body")) if s.type != "comment"]
    for statement in body:
        for node in walk(statement):
            if node.type in ("assignment_expression", "update_expression") and \
                    text(updated_target(node)) == var:
                return None
            if node.type in ("return_statement", "break_statement", "goto_statement"):
                return None
    upper = " ".join(text(condition.child_by_field_name("right")).split())
    type_text = " ".join(text(init.child_by_field_name("type")).split()) if init is not None else ""
    return var, type_text, " ".join(text(lower).split()), upper, body


def _stores_lists(loop: Node, values: str, ids: str, k: int, symbols: Symbols) -> bool:
    """The output loop runs q over [0, K) and only reads the lists at q (its stores are kept)."""
    parts = _row_loop(loop)
    if parts is None:
        return False
    var, _, lower, upper, body = parts
    if lower != "0" or _bound(loop, symbols) != k:
        return False
    for statement in body:
        if statement.type != "expression_statement":
            return False
        for node in walk(statement):
            if node.type == "subscript_expression":
                base, indices = subscript_parts(node)
                name = text(unparen(base))
                if name in (values, ids) and (len(indices) != 1 or text(unparen(indices[0])) != var):
                    return False
            if node.type in ("assignment_expression", "update_expression"):
                target = updated_target(node)
                if target is None or target.type != "subscript_expression" or \
                        text(unparen(subscript_parts(target)[0])) in (values, ids):
                    return False
    return True
