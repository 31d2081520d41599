"""Spelling passes over loops: `do ... while` as `while`, a counter stepped down first as a
counting-down `for`, one counter reused by several loops given one per loop, a counted `while`
as a `for`, and a counter counting down to its bound counting up instead."""

from __future__ import annotations

from tree_sitter import Node

from regrapht.idioms.access import is_pure
from regrapht.idioms.spelling.common import (
    Edits,
    changes,
    counter_declaration,
    declares,
    is_pure_statement,
    local_names,
    outermost,
    plain_counter,
    reads_memory,
    unit_step,
)
from regrapht.idioms.syntax import (
    KernelSyntax,
    condition_of,
    identifiers_in,
    loop_counter,
    named_statements,
    text,
    unparen,
    walk,
)

UP = "walk_up"  # the counting-up counter (renamed when the kernel uses the name)


def do_while(syntax: KernelSyntax) -> Edits:
    edits: Edits = []
    for node in walk(syntax.body):
        if node.type != "do_statement":
            continue
        condition = unparen(condition_of(node) or node.child_by_field_name("condition"))
        body = node.child_by_field_name("body")
        if condition is None or body is None or body.type != "compound_statement" or \
                condition.type != "binary_expression" or text(condition.child_by_field_name("operator")) != "<":
            continue
        if any(n.type in ("continue_statement", "break_statement") for n in walk(body)):
            continue
        edits.append((node.start_byte, node.end_byte, f"while ({text(condition)}) {text(body)}"))
    return outermost(edits)


_SIGNED_WORDS = frozenset({"int", "signed", "long", "short"})


def do_count_down(syntax: KernelSyntax) -> Edits:
    """`T i = S; ... do { --i; BODY } while (i > 0);` -> `for (T i = (S) - 1; i >= 0; --i) { BODY }`."""
    edits: Edits = []
    for block in walk(syntax.body):
        if block.type != "compound_statement":
            continue
        statements = named_statements(block)
        for position, loop in enumerate(statements):
            if loop.type != "do_statement":
                continue
            condition = unparen(condition_of(loop) or loop.child_by_field_name("condition"))
            body = loop.child_by_field_name("body")
            if condition is None or body is None or body.type != "compound_statement" or \
                    condition.type != "binary_expression" or text(condition.child_by_field_name("operator")) != ">" or \
                    text(unparen(condition.child_by_field_name("right"))) != "0":
                continue
            counter_node = unparen(condition.child_by_field_name("left"))
            inner = named_statements(body)
            if counter_node is None or counter_node.type != "identifier" or not inner:
                continue
            counter = text(counter_node)
            # stepped down first and nowhere else; no `continue`/`break` (kept simple: both
            # would leave the counter at another value); unused after the loop
            if not unit_step(inner[0], counter, "-") or any(changes(s, {counter}) for s in inner[1:]) or \
                    counter in local_names(inner) or \
                    any(n.type in ("continue_statement", "break_statement") for n in walk(body)) or \
                    any(counter in identifiers_in(s) for s in statements[position + 1 :]):
                continue
            found = counter_declaration(statements[:position], counter)
            if found is None:
                continue
            declaration, type_text, start = found
            if not set(type_text.split()) <= _SIGNED_WORDS:
                continue  # an unsigned counter is never below zero: `i >= 0` would not end the loop
            between = statements[statements.index(declaration) + 1 : position]
            if reads_memory(start) or any(changes(s, identifiers_in(start) | {counter}) or
                                           counter in identifiers_in(s) or not is_pure_statement(s)
                                           for s in between):
                continue
            kept = "".join(text(s) + "\n" for s in inner[1:])
            edits.append((declaration.start_byte, declaration.end_byte, ""))
            edits.append((loop.start_byte, loop.end_byte,
                          f"for ({type_text} {counter} = ({text(start)}) - 1; {counter} >= 0; --{counter}) {{\n{kept}}}"))
    return outermost(edits)


def reused_counters(syntax: KernelSyntax) -> Edits:
    """One declared counter per loop for a counter the loops of one block share (see the module
    docstring); every edit is a small range of its own, so the edits of two counters never nest."""
    function = syntax.function
    if any(n.type in ("goto_statement", "labeled_statement", "reference_declarator", "lambda_expression")
           for n in walk(function)):
        return []
    declared: dict[str, int] = {}
    for node in walk(function):
        if node.type == "identifier" and declares(node):
            declared[text(node)] = declared.get(text(node), 0) + 1
    edits: Edits = []
    for block in walk(syntax.body):
        if block.type != "compound_statement":
            continue
        statements = named_statements(block)
        for position, declaration in enumerate(statements):
            found = plain_counter(declaration)
            if found is None or declared.get(found[0]) != 1:
                continue
            counter, type_text, start = found
            later = statements[position + 1 :]
            uses = [n for n in walk(function) if n.type == "identifier" and text(n) == counter and not declares(n)]
            if not later or any(not later[0].start_byte <= n.start_byte < later[-1].end_byte for n in uses) or \
                    any(_address_taken(n) for n in uses):
                continue
            own = _own_counters(later, counter, type_text, start)
            if own is None or any(s < e2 and s2 < e for s, e, _ in own for s2, e2, _ in edits):
                continue
            edits.extend(own)
            edits.append((declaration.start_byte, declaration.end_byte, ""))
    return edits


def _address_taken(use: Node) -> bool:
    parent = use.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    return parent is not None and parent.type == "pointer_expression" and \
        text(parent.child_by_field_name("operator")) == "&"


def _own_counters(later: list[Node], counter: str, type_text: str, start: Node | None) -> Edits | None:
    """The edits giving each loop among `later` (the statements after the counter's declaration)
    its own counter, or None unless every statement that mentions the counter is such a loop or
    the `counter = e;` that starts the while loop after it."""
    edits: Edits = []
    # the counter's value where it is known and unread: (its expression, the statement setting it)
    pending: tuple[Node, Node | None] | None = (start, None) if start is not None and not reads_memory(start) \
        else None
    if start is not None and not is_pure(start):
        return None  # dropping the declaration would drop its effect
    loops = 0
    for statement in later:
        if counter not in identifiers_in(statement):
            if pending is not None and (not is_pure_statement(statement) or
                                        changes(statement, identifiers_in(pending[0])) or
                                        local_names([statement]) & identifiers_in(pending[0])):
                pending = None  # the start would not read the same values after this statement
            continue
        if pending is not None and pending[1] is not None and statement.type != "while_statement":
            return None  # an assigned start no while loop takes (its statement would be left)
        assigned = _assigned_start(statement, counter)
        if assigned is not None:
            if reads_memory(assigned):
                return None
            pending = (assigned, statement)
            continue
        if statement.type == "for_statement":
            init = unparen(statement.child_by_field_name("initializer"))
            value = init.child_by_field_name("right") if init is not None and \
                init.type == "assignment_expression" and text(init.child_by_field_name("operator")) == "=" and \
                text(unparen(init.child_by_field_name("left"))) == counter else None
            if init is None or value is None or counter in identifiers_in(value):
                return None  # the loop reads the value left before it
            edits.append((init.start_byte, init.end_byte, f"{type_text} {counter} = {text(value)}"))
            pending = None
            loops += 1
            continue
        if statement.type != "while_statement" or pending is None:
            return None
        condition, body = condition_of(statement), statement.child_by_field_name("body")
        inner = named_statements(body) if body is not None and body.type == "compound_statement" else []
        if condition is None or body is None or not inner or not unit_step(inner[-1], counter, "+") or \
                not is_pure(condition) or any(n.type == "continue_statement" for n in walk(body)):
            return None
        value, setter = pending
        if setter is not None:
            edits.append((setter.start_byte, setter.end_byte, ""))
        edits.append((statement.start_byte, body.start_byte,
                      f"for ({type_text} {counter} = {text(value)}; {text(condition)}; "
                      f"{text(inner[-1].named_children[0])}) "))
        edits.append((inner[-1].start_byte, inner[-1].end_byte, ""))
        pending = None
        loops += 1
    if pending is not None and pending[1] is not None:
        return None  # a start assigned and never looped over
    return edits if loops else None


def _assigned_start(statement: Node, counter: str) -> Node | None:
    """e of the statement `counter = e;` where e does not read the counter."""
    if statement.type != "expression_statement" or len(statement.named_children) != 1:
        return None
    assignment = unparen(statement.named_children[0])
    if assignment is None or assignment.type != "assignment_expression" or \
            text(assignment.child_by_field_name("operator")) != "=" or \
            text(unparen(assignment.child_by_field_name("left"))) != counter:
        return None
    value = assignment.child_by_field_name("right")
    return value if value is not None and counter not in identifiers_in(value) and is_pure(value) else None


def counted_while(syntax: KernelSyntax) -> Edits:
    edits: Edits = []
    for block in walk(syntax.body):
        if block.type != "compound_statement":
            continue
        statements = named_statements(block)
        for position, loop in enumerate(statements):
            if loop.type != "while_statement":
                continue
            condition, body = condition_of(loop), loop.child_by_field_name("body")
            if condition is None or body is None or body.type != "compound_statement" or \
                    condition.type != "binary_expression" or \
                    text(condition.child_by_field_name("operator")) not in ("<", "<="):
                continue
            counter_node = unparen(condition.child_by_field_name("left"))
            bound = condition.child_by_field_name("right")
            if counter_node is None or counter_node.type != "identifier" or bound is None:
                continue
            counter = text(counter_node)
            inner = named_statements(body)
            if not inner or not unit_step(inner[-1], counter, "+") or reads_memory(bound) or \
                    counter in identifiers_in(bound) or any(changes(s, {counter}) for s in inner[:-1]) or \
                    any(n.type == "continue_statement" for n in walk(body)):
                continue
            if any(counter in identifiers_in(s) for s in statements[position + 1 :]):
                continue  # used after the loop: a for would end its scope
            found = counter_declaration(statements[:position], counter)
            if found is None:
                continue
            declaration, type_text, start = found
            between = statements[statements.index(declaration) + 1 : position]
            if reads_memory(start) or any(changes(s, identifiers_in(start) | {counter}) or
                                           counter in identifiers_in(s) or not is_pure_statement(s)
                                           for s in between):
                continue
            step = text(inner[-1].named_children[0])
            kept = "".join(text(s) + "\n" for s in inner[:-1])
            edits.append((declaration.start_byte, declaration.end_byte, ""))
            edits.append((loop.start_byte, loop.end_byte,
                          f"for ({type_text} {counter} = {text(start)}; {text(condition)}; {step}) {{\n{kept}}}"))
    return outermost(edits)


def count_up(syntax: KernelSyntax) -> Edits:
    edits: Edits = []
    names = identifiers_in(syntax.body)
    up = UP
    while up in names:
        up += "_"
    for node in walk(syntax.body):
        if node.type != "for_statement":
            continue
        condition = unparen(node.child_by_field_name("condition"))
        update = unparen(node.child_by_field_name("update"))
        body = node.child_by_field_name("body")
        declared = loop_counter(node)
        if declared is None or condition is None or update is None or body is None or \
                body.type != "compound_statement":
            continue
        var, start, init = declared
        operator = text(condition.child_by_field_name("operator")) if condition.type == "binary_expression" else ""
        if operator not in (">", ">=") or text(unparen(condition.child_by_field_name("left"))) != var:
            continue
        decrement = (update.type == "update_expression" and text(update.child_by_field_name("operator")) == "--"
                     and text(update.child_by_field_name("argument")) == var)
        if not decrement or any(n.type in ("assignment_expression", "update_expression") and text(
                unparen(n.child_by_field_name("left") or n.child_by_field_name("argument"))) == var
                for n in walk(body)):
            continue
        type_text = " ".join(text(init.child_by_field_name("type")).split()) if init is not None else "int"
        low = text(condition.child_by_field_name("right"))
        # var takes start, start - 1, ..., down to low + 1 (`>`) or low (`>=`).
        count = f"({text(start)}) - ({low})" + (" + 1" if operator == ">=" else "")
        header = f"for ({type_text} {up} = 0; {up} < {count}; ++{up})"
        inner = text(body)[1:]
        edits.append((node.start_byte, node.end_byte,
                      f"{header} {{\n const {type_text} {var} = ({text(start)}) - {up};{inner}"))
    return outermost(edits)
