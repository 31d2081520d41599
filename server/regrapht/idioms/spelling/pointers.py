"""Spelling passes over memory and indices: a local pointer into a parameter written as the
parameter's subscript, `*(p + e)` as `p[e]`, `__ldg(&X)` as `X`, and an unnamed global thread
index named once and used for each expression of its value."""

from __future__ import annotations

from collections.abc import Mapping

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.idioms.access import is_pure
from regrapht.idioms.spelling.common import Edits, changes, declares, outermost, plain_counter
from regrapht.idioms.syntax import (
    KernelSyntax,
    Symbols,
    call_args,
    call_name,
    identifiers_in,
    text,
    unparen,
    updated_target,
    walk,
)


def pointer_offsets(syntax: KernelSyntax) -> Edits:
    """Local pointers `T *p = P + offset` / `&P[offset]` into a pointer parameter P, subscripted
    as `p[i]` only and never re-pointed, with every name of the offset never assigned in the
    kernel: each `p[i]` as `P[(long long)(offset) + (i)]`, the declaration dropped."""
    pointers = syntax.pointers
    assigned = set()
    declared: dict[str, int] = {}
    for node in walk(syntax.function):
        if node.type in ("assignment_expression", "update_expression"):
            target = updated_target(node)
            if target is not None and target.type == "identifier":
                assigned.add(text(target))
        elif node.type == "identifier" and declares(node):
            declared[text(node)] = declared.get(text(node), 0) + 1
    edits: Edits = []
    for statement in walk(syntax.body):
        if statement.type != "declaration":
            continue
        declarators = statement.children_by_field_name("declarator")
        if len(declarators) != 1 or declarators[0].type != "init_declarator":
            continue
        pointer = declarators[0].child_by_field_name("declarator")
        value = unparen(declarators[0].child_by_field_name("value"))
        name_node = pointer.child_by_field_name("declarator") if pointer is not None and \
            pointer.type == "pointer_declarator" else None
        if name_node is None or name_node.type != "identifier" or value is None:
            continue
        name = text(name_node)
        split = _parameter_offset(value, pointers)
        if split is None or declared.get(name, 0) > 1 or name in assigned:
            continue  # a name declared twice (shadowed) or re-pointed is left as it is
        base, offset = split
        if identifiers_in(offset) & assigned or not is_pure(offset):
            continue
        replaced: Edits = []
        for use in walk(syntax.body):
            if use.type != "identifier" or text(use) != name or use == name_node:
                continue
            subscript = use.parent
            index = _only_index(subscript) if subscript is not None and subscript.type == "subscript_expression" \
                and subscript.child_by_field_name("argument") == use else None
            if subscript is None or index is None:
                replaced = []
                break  # used otherwise (`p + 1`, `*p`, passed on): left as it is
            replaced.append((subscript.start_byte, subscript.end_byte,
                             f"{base}[(long long)({text(offset)}) + ({text(index)})]"))
        if replaced:
            edits.extend(replaced)
            edits.append((statement.start_byte, statement.end_byte, ""))
    return outermost(edits)


def _only_index(subscript: Node) -> Node | None:
    index = subscript.child_by_field_name("indices") or subscript.child_by_field_name("index")
    if index is not None and index.type == "subscript_argument_list":
        named = [c for c in index.named_children if c.type != "comment"]
        return named[0] if len(named) == 1 else None
    return index


def _parameter_offset(value: Node, pointers: Mapping[str, object]) -> tuple[str, Node] | None:
    """(P, offset) for `P + offset`, `offset + P` or `&P[offset]` with P a pointer parameter."""
    if value.type == "binary_expression" and text(value.child_by_field_name("operator")) == "+":
        left, right = value.child_by_field_name("left"), value.child_by_field_name("right")
        for base, offset in ((left, right), (right, left)):
            base = unparen(base)
            if base is not None and base.type == "identifier" and text(base) in pointers and offset is not None:
                return text(base), offset
        return None
    if value.type == "pointer_expression" and text(value.child_by_field_name("operator")) == "&":
        inner = unparen(value.child_by_field_name("argument"))
        if inner is not None and inner.type == "subscript_expression":
            base = unparen(inner.child_by_field_name("argument"))
            index = _only_index(inner)
            if base is not None and base.type == "identifier" and text(base) in pointers and index is not None:
                return text(base), index
    return None


def deref_subscripts(syntax: KernelSyntax) -> Edits:
    pointers = {p.name for p in syntax.params if p.is_pointer}
    for node in walk(syntax.body):
        if node.type == "declaration":
            for declarator in node.children_by_field_name("declarator"):
                target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" \
                    else declarator
                if target is not None and target.type == "pointer_declarator":
                    inner = target.child_by_field_name("declarator")
                    if inner is not None and inner.type == "identifier":
                        pointers.add(text(inner))
    edits: Edits = []
    for node in walk(syntax.body):
        if node.type != "pointer_expression" or text(node.child_by_field_name("operator")) != "*":
            continue
        sum_node = unparen(node.child_by_field_name("argument"))
        if sum_node is None or sum_node.type != "binary_expression" or \
                text(sum_node.child_by_field_name("operator")) != "+":
            continue
        base = unparen(sum_node.child_by_field_name("left"))
        offset = sum_node.child_by_field_name("right")
        if base is None or offset is None or base.type != "identifier" or text(base) not in pointers:
            continue
        edits.append((node.start_byte, node.end_byte, f"{text(base)}[{text(offset)}]"))
    return outermost(edits)


def plain_loads(syntax: KernelSyntax) -> Edits:
    edits: Edits = []
    for node in walk(syntax.body):
        if node.type != "call_expression" or call_name(node) != "__ldg" or len(call_args(node)) != 1:
            continue
        address = unparen(call_args(node)[0])
        if address is None or address.type != "pointer_expression" or \
                text(address.child_by_field_name("operator")) != "&":
            continue
        target = unparen(address.child_by_field_name("argument"))
        if target is not None and target.type == "subscript_expression":
            edits.append((node.start_byte, node.end_byte, f"({text(target)})"))
    return outermost(edits)


_THREAD_LOCAL_TYPES = frozenset({"int", "unsigned", "unsigned int"})  # int + unsigned int is unsigned int


def named_global_index(syntax: KernelSyntax) -> Edits:
    names = identifiers_in(syntax.function)
    symbols = Symbols(syntax.constants)
    for node in walk(syntax.body):
        value = node.child_by_field_name("value") if node.type == "init_declarator" else \
            node.child_by_field_name("right") if node.type == "assignment_expression" else None
        if value is not None and any(symbols.poly(value) == _global_index(axis) for axis in "xyz"):
            return []  # the kernel names it already (a coordinate, a grid-stride loop's start)
    declared_once: dict[str, int] = {}
    for node in walk(syntax.function):
        if node.type == "identifier" and declares(node):
            declared_once[text(node)] = declared_once.get(text(node), 0) + 1
    inserted: list[str] = []
    edits: Edits = []
    for axis in "xyz":
        found = _global_index_edits(syntax, axis, declared_once)
        if found is None:
            continue
        name = f"global_{axis}"
        while name in names:
            name += "_"
        uses, dropped = found
        edits.extend((start, end, name) for start, end in uses)
        edits.extend((d.start_byte, d.end_byte, "") for d in dropped)
        inserted.append(f"const unsigned int {name} = blockIdx.{axis} * blockDim.{axis} + threadIdx.{axis};")
    if not inserted:
        return []
    opening = syntax.body.children[0]
    edits.append((opening.end_byte, opening.end_byte, "\n    " + "\n    ".join(inserted)))
    return edits


def _global_index(axis: str) -> Poly:
    return Poly.of({(f"blockDim.{axis}", f"blockIdx.{axis}"): 1, (f"threadIdx.{axis}",): 1})


def _global_index_edits(syntax: KernelSyntax, axis: str,
                        declared: dict[str, int]) -> tuple[list[tuple[int, int]], list[Node]] | None:
    """(the ranges of the expressions equal to the global index along `axis`, the declarations of
    the thread-index locals they used), or None unless that is every use of the axis's block and
    thread index."""
    thread = f"threadIdx.{axis}"
    symbols = Symbols(syntax.constants)
    locals_: dict[str, Node] = {}  # `int t = threadIdx.x;` at the top, never changed
    for statement in syntax.statements():
        found = plain_counter(statement)
        if found is not None and found[2] is not None and symbols.poly(found[2]) == Poly.atom(thread) and \
                found[1] in _THREAD_LOCAL_TYPES and declared.get(found[0]) == 1 and \
                not changes(syntax.body, {found[0]}):
            locals_[found[0]] = statement
            symbols.env[found[0]] = Poly.atom(thread)
    target = _global_index(axis)
    uses: list[tuple[int, int]] = []
    indices = 0
    for node in walk(syntax.body):
        if node.type not in ("binary_expression", "cast_expression") or \
                any(start <= node.start_byte < end for start, end in uses) or symbols.poly(node) != target:
            continue
        if not is_pure(node) or not (_whole_index(node) or _unsigned_global(node, axis, set(locals_)) and
                                     _bounded(node)):
            return None
        uses.append((node.start_byte, node.end_byte))
        indices += _whole_index(node)
    if not indices:
        return None  # no point's element is indexed by it
    for node in walk(syntax.body):
        inside = any(start <= node.start_byte < end for start, end in uses) or \
            any(d.start_byte <= node.start_byte < d.end_byte for d in locals_.values())
        if inside:
            continue
        if node.type == "identifier" and text(node) in locals_:
            return None
        if node.type == "field_expression" and text(node.child_by_field_name("field")) == axis and \
                text(node.child_by_field_name("argument")) in ("threadIdx", "blockIdx"):
            return None
    return uses, list(locals_.values())


def _whole_index(node: Node) -> bool:
    """Whether `node` (parentheses aside) is the one index of a subscript."""
    child, parent = node, node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        child, parent = parent, parent.parent
    if parent is not None and parent.type == "subscript_argument_list":
        return len([c for c in parent.named_children if c.type != "comment"]) == 1
    return parent is not None and parent.type == "subscript_expression" and \
        parent.child_by_field_name("argument") != child


def _bounded(node: Node) -> bool:
    """Whether `node` (parentheses aside) is the left side of a `<` (a guard's bound test)."""
    child, parent = node, node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        child, parent = parent, parent.parent
    return parent is not None and parent.type == "binary_expression" and \
        text(parent.child_by_field_name("operator")) == "<" and parent.child_by_field_name("left") == child


def _unsigned_global(node: Node, axis: str, locals_: set[str]) -> bool:
    """`blockIdx.x * blockDim.x + t` (either order, no cast), t `threadIdx.x` or an `int` or
    `unsigned` local of it: an `unsigned int`, as the coordinate."""
    node_ = unparen(node)
    if node_ is None or node_.type != "binary_expression" or text(node_.child_by_field_name("operator")) != "+":
        return False
    operands = [unparen(node_.child_by_field_name("left")), unparen(node_.child_by_field_name("right"))]
    thread = [o for o in operands if o is not None and (text(o) == f"threadIdx.{axis}" or
                                                         (o.type == "identifier" and text(o) in locals_))]
    block = [o for o in operands if o is not None and o.type == "binary_expression" and
             text(o.child_by_field_name("operator")) == "*" and
             sorted(text(unparen(o.child_by_field_name(f))) for f in ("left", "right")) ==
             [f"blockDim.{axis}", f"blockIdx.{axis}"]]
    return len(thread) == 1 and len(block) == 1
