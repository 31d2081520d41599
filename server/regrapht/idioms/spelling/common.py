"""What the spelling passes share: the edit list, and small readings of declarations, counters
and statements (which names a statement changes, whether it reads memory or is pure)."""

from __future__ import annotations

from tree_sitter import Node

from regrapht.idioms.access import is_pure
from regrapht.idioms.syntax import (
    identifiers_in,
    text,
    unparen,
    walk,
)

Edits = list[tuple[int, int, str]]


def outermost(edits: Edits) -> Edits:
    """The edits not nested in another (inner ones are redone on the next pass, if any)."""
    kept: Edits = []
    for edit in sorted(edits, key=lambda e: (e[0], -e[1])):
        if kept and edit[0] < kept[-1][1]:
            continue
        kept.append(edit)
    return kept


def type_of(node: Node) -> str:
    return " ".join(w for w in text(node.child_by_field_name("type")).split() if w not in ("const", "volatile"))


def declares(identifier: Node) -> bool:
    """Whether `identifier` is the name a declaration or a parameter declares."""
    child, parent = identifier, identifier.parent
    while parent is not None and parent.type in ("pointer_declarator", "array_declarator", "reference_declarator",
                                                 "init_declarator") and parent.child_by_field_name("declarator") == child:
        child, parent = parent, parent.parent
    return parent is not None and parent.type in ("declaration", "parameter_declaration") and \
        child in parent.children_by_field_name("declarator")


_INTEGER_WORDS = frozenset({"int", "unsigned", "signed", "long", "short", "size_t", "const"})


def unit_step(statement: Node, counter: str, sign: str) -> bool:
    """Whether `statement` steps the counter `k` by one in the direction `sign` ("+" or "-"):
    `k++;`/`++k;`, `k += 1;` or `k = k + 1;` (either order), and for "-" `k--;`/`--k;`,
    `k -= 1;` or `k = k - 1;`."""
    if statement.type != "expression_statement" or len(statement.named_children) != 1:
        return False
    step = unparen(statement.named_children[0])
    if step is None:
        return False
    if step.type == "update_expression":
        return text(step.child_by_field_name("operator")) == sign * 2 and \
            text(unparen(step.child_by_field_name("argument"))) == counter
    if step.type != "assignment_expression" or text(unparen(step.child_by_field_name("left"))) != counter:
        return False
    operator, right = text(step.child_by_field_name("operator")), unparen(step.child_by_field_name("right"))
    if operator == sign + "=":
        return text(right) == "1"
    if operator != "=" or right is None or right.type != "binary_expression" or \
            text(right.child_by_field_name("operator")) != sign:
        return False
    operands = text(unparen(right.child_by_field_name("left"))), text(unparen(right.child_by_field_name("right")))
    # `1 + k` is a step up; `1 - k` is not a step down
    return set(operands) == {counter, "1"} if sign == "+" else operands == (counter, "1")


def changes(node: Node, names: set[str]) -> bool:
    """Whether `node` assigns, increments or takes the address of one of `names`."""
    for current in walk(node):
        address = current.type == "pointer_expression" and text(current.child_by_field_name("operator")) == "&"
        field = "left" if current.type == "assignment_expression" else "argument"
        if current.type not in ("assignment_expression", "update_expression") and not address:
            continue
        target = unparen(current.child_by_field_name(field))
        # `y[k] = ..` stores through k, it does not change it; `&k` lets anything change it
        if target is not None and text(target) in names:
            return True
    return False


def reads_memory(node: Node) -> bool:
    return any(n.type in ("subscript_expression", "pointer_expression", "field_expression", "call_expression")
               for n in walk(node)) or not is_pure(node)


def plain_counter(statement: Node) -> tuple[str, str, Node | None] | None:
    """(name, integer type, start or None) of `T i;` / `T i = start;` (one declarator, no qualifier
    or storage class)."""
    if statement.type != "declaration" or \
            any(c.type in ("type_qualifier", "storage_class_specifier", "attribute_specifier") for c in statement.children):
        return None
    declarators = statement.children_by_field_name("declarator")
    type_text = " ".join(text(statement.child_by_field_name("type")).split())
    if len(declarators) != 1 or not set(type_text.split()) <= _INTEGER_WORDS - {"const"}:
        return None
    declarator = declarators[0]
    if declarator.type == "identifier":
        return text(declarator), type_text, None
    target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" else None
    if target is None or target.type != "identifier":
        return None
    return text(target), type_text, declarator.child_by_field_name("value")


def counter_declaration(before: list[Node], counter: str) -> tuple[Node, str, Node] | None:
    """The last statement of `before` declaring `counter` alone (`int k = 0;`): the statement,
    its integer type and the start value."""
    for statement in reversed(before):
        if counter not in identifiers_in(statement):
            continue
        declarators = statement.children_by_field_name("declarator") if statement.type == "declaration" else []
        type_text = " ".join(text(statement.child_by_field_name("type")).split()) if declarators else ""
        qualifiers = [text(c) for c in statement.children if c.type == "type_qualifier"]
        if len(declarators) != 1 or declarators[0].type != "init_declarator" or qualifiers or \
                not set(type_text.split()) <= _INTEGER_WORDS or \
                text(declarators[0].child_by_field_name("declarator")) != counter:
            return None
        start = declarators[0].child_by_field_name("value")
        return (statement, type_text, start) if start is not None else None
    return None


def is_pure_statement(statement: Node) -> bool:
    """A declaration whose initialisers only compute values (no call, store or update)."""
    return statement.type == "declaration" and is_pure(statement)


def local_names(statements: list[Node]) -> set[str]:
    names: set[str] = set()
    for statement in statements:
        for node in walk(statement):
            if node.type == "init_declarator" or (node.type in ("pointer_declarator",) and
                                                   node.parent is not None and node.parent.type == "declaration"):
                target = node.child_by_field_name("declarator")
                while target is not None and target.type == "pointer_declarator":
                    target = target.child_by_field_name("declarator")
                if target is not None and target.type == "identifier":
                    names.add(text(target))
            elif node.type == "declaration":
                for declarator in node.children_by_field_name("declarator"):
                    if declarator.type == "identifier":
                        names.add(text(declarator))
    return names
