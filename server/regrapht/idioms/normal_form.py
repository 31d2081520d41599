"""The source in the normal form the item recogniser reads: pointer walks as indexing, running
sums kept in memory as running sums in registers.

`normal_form(source, kernel)` applies, in order,

1. `pointer_walks.indexed_pointer_walks` (`s += *p; p += n;` -> `s += *(p + (i - L) * n);`);
2. `scalarised_accumulations`: a loop that accumulates straight into an output element,
   `for (...) y[j] += e;` (or `y[j] = y[j] + e`, `-=`), becomes
   `T y_acc = y[j]; for (...) y_acc += e; y[j] = y_acc;`. This is the same program when the
   element's index does not change in the loop (no loop variable, nothing the loop assigns), the
   loop touches that array nowhere else, and the array is a pointer parameter (a distinct buffer,
   which the spec's separate allocations guarantee, so the loop's loads cannot see the element);
3. `jam.jammed_constant_loops`: a loop of constant bounds around one inner loop (the dense
   columns of a CSR SpMM around its row loop) jammed into the inner loop, each iteration's
   locals renamed apart (`for (c..8) { s = 0; for (e..) s += ..c..; C[..c] = s; }` -> one `e`
   loop updating `s_jam0` .. `s_jam7`, then the eight stores).

Each step leaves anything it does not recognise as written.
"""

from __future__ import annotations

from tree_sitter import Node

from regrapht.idioms.access import identifiers
from regrapht.idioms.jam import jammed_constant_loops
from regrapht.idioms.pointer_walks import indexed_pointer_walks
from regrapht.idioms.syntax import (
    KernelSyntax,
    kernel_syntax,
    named_statements,
    subscript_parts,
    text,
    unparen,
    walk,
)


def normal_form(source: str, kernel: str) -> str:
    return jammed_constant_loops(scalarised_accumulations(indexed_pointer_walks(source, kernel), kernel), kernel)


def scalarised_accumulations(source: str, kernel: str) -> str:
    """`source` with `kernel`'s loops that accumulate into one output element given a register
    running value (see the module docstring); unchanged when none qualifies."""
    syntax = kernel_syntax(source, kernel)
    if syntax is None:
        return source
    taken = {text(n) for n in walk(syntax.function) if n.type == "identifier"}
    edits: list[tuple[int, int, str]] = []
    for loop in walk(syntax.body):
        if loop.type not in ("for_statement", "while_statement"):
            continue
        found = _accumulation(loop, syntax)
        if found is None:
            continue
        array, index, updates = found
        param = syntax.param(array)
        assert param is not None
        name = f"{array}_running"
        while name in taken:
            name += "_"
        taken.add(name)
        indent = " " * loop.start_point[1]
        element = f"{array}[{text(index)}]"
        edits.append((loop.start_byte, loop.start_byte, f"{param.base_type} {name} = {element};\n{indent}"))
        edits.append((loop.end_byte, loop.end_byte, f"\n{indent}{element} = {name};"))
        for target in updates:
            edits.append((target.start_byte, target.end_byte, name))
    if not edits:
        return source
    data = syntax.source
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        data = data[:start] + replacement.encode() + data[end:]
    return data.decode()


def _accumulation(loop: Node, syntax: KernelSyntax) -> tuple[str, Node, list[Node]] | None:
    """(array, index node, the `y[j]` targets to replace) of a loop whose body statements
    accumulate into one element `y[j]` of a pointer parameter, or None."""
    block = loop.parent
    if block is None or block.type != "compound_statement":
        return None  # the declaration and the store need a block around the loop
    body = loop.child_by_field_name("body")
    statements = named_statements(body)
    targets: list[Node] = []
    spelling: str | None = None
    array: str | None = None
    index: Node | None = None
    for statement in statements:
        expression = unparen(statement.named_children[0]) if statement.type == "expression_statement" and \
            statement.named_children else None
        target = _accumulated_element(expression)
        if target is None:
            continue
        base, indices = subscript_parts(target)
        base = unparen(base)
        if base is None or base.type != "identifier" or len(indices) != 1:
            return None
        key = " ".join(text(target).split())
        if spelling is not None and key != spelling:
            return None  # two elements (or two spellings of one): leave it
        spelling, array, index = key, text(base), indices[0]
        targets.append(target)
        if expression is not None and expression.type == "assignment_expression" and \
                text(expression.child_by_field_name("operator")) == "=":
            right = unparen(expression.child_by_field_name("right"))
            left_part = unparen(right.child_by_field_name("left")) if right is not None else None
            if left_part is not None:
                targets.append(left_part)  # the `y[j]` of `y[j] = y[j] + e`
    if array is None or index is None:
        return None
    param = syntax.param(array)
    if param is None or not param.is_pointer or param.is_const:
        return None
    assigned = {text(unparen(n.child_by_field_name("left") or n.child_by_field_name("argument")))
                for n in walk(loop) if n.type in ("assignment_expression", "update_expression")}
    declared = {text(n) for n in walk(loop) if n.type == "identifier" and n.parent is not None
                and n.parent.type in ("init_declarator", "declaration")}
    if identifiers(index) & (assigned | declared) or any(n.type in ("subscript_expression", "pointer_expression",
                                                                      "call_expression") for n in walk(index)):
        return None
    # The loop mentions the array only in the accumulated element.
    mentions = [n for n in walk(loop) if n.type == "identifier" and text(n) == array]
    if len(mentions) != len(targets):
        return None
    # No early exit that would skip the store after the loop (a `return` leaves the kernel with
    # the running value unstored; `break` is fine: the store follows the loop).
    if any(n.type in ("return_statement", "goto_statement") for n in walk(loop)):
        return None
    return array, index, targets


def _accumulated_element(expression: Node | None) -> Node | None:
    """The `y[j]` of `y[j] += e`, `y[j] -= e` and `y[j] = y[j] + e`, when `e` does not read it."""
    if expression is None or expression.type != "assignment_expression":
        return None
    target = unparen(expression.child_by_field_name("left"))
    right = unparen(expression.child_by_field_name("right"))
    operator = text(expression.child_by_field_name("operator"))
    if target is None or right is None or target.type != "subscript_expression":
        return None
    if operator in ("+=", "-="):
        return target
    if operator == "=" and right.type == "binary_expression" and text(right.child_by_field_name("operator")) == "+":
        left_part = unparen(right.child_by_field_name("left"))
        if left_part is not None and " ".join(text(left_part).split()) == " ".join(text(target).split()):
            return target
    return None
