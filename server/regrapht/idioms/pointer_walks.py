"""Pointer walks rewritten as indexing, so that the idiom analysis sees affine subscripts.

A kernel often walks a pointer instead of indexing: `const float *p = A + col; for (int i = 0;
i < m; ++i) { s += *p * x[i]; p += n; }` reads `A[col + i * n]`. `indexed_pointer_walks`
returns the source with every such walk of the kernel written as `*(p + (long long)(i - (0)) * (n))`
and the bump removed, which is the same program when

- the loop is a `for` with a declared counter `i = L`, a test `i < U` / `i <= U` / `i != U` and a
  unit step (`++i`, `i++`, `i += 1`), or a `while (i < U)` whose last statement is `++i` with `i`
  declared before it and assigned nowhere else;
- the bump `p += S` / `p = p + S` / `++p` / `p++` (S = 1) / `p -= S` is a statement of the loop body
  itself (or a part of the `for` update, `++i, p += n`) that comes after every other use of `p`
  in the body; or it is the `p++` of a `*p++` evaluated once per iteration (a statement of the
  body, not under `?:`/`&&`/`||`) and the loop's only mention of `p`;
- `p` is a local pointer declared before the loop, assigned nowhere else, its address not taken,
  and used nowhere after the loop; S is arithmetic on names the body does not assign (no loads,
  not `p`, not the counter).

Anything else is left as written (the appliers then see a kernel they do not match).
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from regrapht.idioms.access import identifiers
from regrapht.idioms.syntax import (
    KernelSyntax,
    kernel_syntax,
    named_statements,
    text,
    unparen,
    updated_target,
    walk,
)


@dataclass(frozen=True)
class _Walk:
    pointer: str
    stride: str  # code, in elements (negative for `p -= S`)
    counter: str
    lower: str  # code of the counter's first value
    bump: Node  # the statement (or update part) removed; or the `p++` of `*p++`
    body: Node  # the loop body: uses of the pointer in it are replaced
    inline: bool = False  # `*p++`: the bump is replaced by the offset pointer, nothing removed


def indexed_pointer_walks(source: str, kernel: str) -> str:
    """`source` with the pointer walks of `kernel` written as indexing (unchanged when none)."""
    syntax = kernel_syntax(source, kernel)
    if syntax is None:
        return source
    edits: list[tuple[int, int, str]] = []
    for loop in walk(syntax.body):
        if loop.type in ("for_statement", "while_statement"):
            edits += _loop_edits(loop, syntax)
    if not edits:
        return source
    data = syntax.source
    for start, end, replacement in sorted(edits, reverse=True):
        data = data[:start] + replacement.encode() + data[end:]
    return data.decode()


def _loop_edits(loop: Node, syntax: KernelSyntax) -> list[tuple[int, int, str]]:
    """The edits that index the pointer walks of one loop (none when any check fails)."""
    walks = _walks_of(loop, syntax)
    if not walks:
        return []
    edits: list[tuple[int, int, str]] = []
    update = unparen(loop.child_by_field_name("update")) if loop.type == "for_statement" else None
    if any(w.bump.type != "expression_statement" and not w.inline for w in walks):
        assert update is not None
        step = next(p for p in _comma_parts(update) if _unit_step(p, walks[0].counter))
        edits.append((update.start_byte, update.end_byte, text(step)))
    for found in walks:
        offset = f"(long long)({found.counter} - ({found.lower})) * ({found.stride})"
        if found.inline:
            edits.append((found.bump.start_byte, found.bump.end_byte, f"({found.pointer} + {offset})"))
            continue
        if found.bump.type == "expression_statement":
            edits.append((found.bump.start_byte, found.bump.end_byte, ";"))
        for node in walk(found.body):
            if node.type != "identifier" or text(node) != found.pointer or _inside(node, found.bump):
                continue
            parent = node.parent
            if parent is not None and parent.type == "subscript_expression" and \
                    parent.child_by_field_name("argument") == node:
                # p[k] -> p[offset + (k)], which the access analysis reads as one subscript
                indices = parent.child_by_field_name("indices")
                inner = indices.named_children[0] if indices is not None and indices.named_children else None
                if inner is None:
                    return []
                edits.append((inner.start_byte, inner.end_byte, f"{offset} + ({text(inner)})"))
            else:
                edits.append((node.start_byte, node.end_byte, f"({found.pointer} + {offset})"))
    return edits


def _comma_parts(node: Node | None) -> list[Node]:
    node = unparen(node)
    if node is None:
        return []
    if node.type != "comma_expression":
        return [node]
    return _comma_parts(node.child_by_field_name("left")) + _comma_parts(node.child_by_field_name("right"))


def _inside(node: Node, outer: Node) -> bool:
    return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def _walks_of(loop: Node, syntax: KernelSyntax) -> list[_Walk]:
    counter = _counter(loop, syntax)
    body = loop.child_by_field_name("body")
    if counter is None or body is None:
        return []
    name, lower = counter
    statements = [s for s in named_statements(body) if s.type != "comment"] \
        if body.type == "compound_statement" else [body]
    candidates: list[tuple[str, str, Node | None, Node]] = []
    for statement in statements:
        found = _bump(statement.named_children[0] if statement.type == "expression_statement"
                      and statement.named_children else None)
        if found is not None:
            candidates.append((*found, statement))
    update = unparen(loop.child_by_field_name("update")) if loop.type == "for_statement" else None
    for part in _comma_parts(update) if update is not None and update.type == "comma_expression" else []:
        found = _bump(part)
        if found is not None and not _unit_step(part, name):
            candidates.append((*found, part))
    inline = _inline_bumps(statements, syntax, loop)
    candidates = [c for c in candidates if _local_pointer(c[0], loop, syntax)]
    if len({c[0] for c in candidates} | {w.pointer for w in inline}) != len(candidates) + len(inline):
        return []  # one pointer bumped twice
    assigned = {text(unparen(n.child_by_field_name("left") or n.child_by_field_name("argument")))
                for n in walk(body) if n.type in ("assignment_expression", "update_expression")}
    walks = []
    for pointer, stride, stride_node, bump in candidates:
        if identifiers(stride_node) & (assigned | {pointer, name} | {c[0] for c in candidates}):
            return []
        if stride_node is not None and any(n.type in ("subscript_expression", "pointer_expression", "call_expression",
                                                      "assignment_expression", "update_expression")
                                           for n in walk(stride_node)):
            return []  # a stride loaded from memory (or with effects) may change while the loop runs
        if bump.type == "expression_statement":
            position = statements.index(bump)
            if any(pointer in identifiers(s) for s in statements[position + 1:]):
                return []
        elif loop.child_by_field_name("condition") is not None and \
                pointer in identifiers(loop.child_by_field_name("condition")):
            return []
        for node in walk(loop):
            if node.type in ("assignment_expression", "update_expression") and not _inside(node, bump):
                target = updated_target(node)
                if target is not None and text(target) == pointer:
                    return []
            if node.type == "pointer_expression" and text(node.child_by_field_name("operator")) == "&" and \
                    text(unparen(node.child_by_field_name("argument"))) == pointer:
                return []  # its address escapes
        walks.append(_Walk(pointer, stride, name, lower, bump, body))
    return walks + [_Walk(w.pointer, "1", name, lower, w.bump, body, inline=True) for w in inline]


def _inline_bumps(statements: list[Node], syntax: KernelSyntax, loop: Node) -> list[_Walk]:
    """The `p++` of each `*p++` that runs once per iteration: in a statement of the body itself,
    not under `?:`, `&&` or `||`, for a local pointer the loop mentions nowhere else."""
    found = []
    for statement in statements:
        if statement.type not in ("expression_statement", "declaration"):
            continue
        for node in walk(statement):
            if node.type != "update_expression" or not node.children or node.children[0].type != "identifier" or \
                    text(node.child_by_field_name("operator")) != "++":
                continue  # only the postfix `p++`
            parent = node.parent
            if parent is None or parent.type != "pointer_expression" or \
                    text(parent.child_by_field_name("operator")) != "*":
                continue
            pointer = text(node.children[0])
            if not _local_pointer(pointer, loop, syntax) or _conditional_between(node, statement):
                continue
            uses = [n for n in walk(loop) if n.type == "identifier" and text(n) == pointer]
            if len(uses) != 1:
                continue
            found.append(_Walk(pointer, "1", "", "", node, statement, inline=True))
    return found


def _conditional_between(node: Node, statement: Node) -> bool:
    """Whether `node` runs only on some evaluations of `statement` (`?:`, `&&`, `||`)."""
    current = node.parent
    while current is not None and current != statement:
        if current.type == "conditional_expression" or (
                current.type == "binary_expression" and text(current.child_by_field_name("operator")) in ("&&", "||")):
            return True
        current = current.parent
    return False


def _bump(expression: Node | None) -> tuple[str, str, Node | None] | None:
    """(pointer, stride code, stride node) of `p += S`, `p -= S`, `p = p + S`, `++p`, `p++`."""
    expression = unparen(expression)
    if expression is None:
        return None
    if expression.type == "update_expression":
        target = unparen(expression.child_by_field_name("argument"))
        operator = text(expression.child_by_field_name("operator"))
        if target is not None and target.type == "identifier":
            return text(target), "1" if operator == "++" else "-1", None
        return None
    if expression.type != "assignment_expression":
        return None
    target = unparen(expression.child_by_field_name("left"))
    right = unparen(expression.child_by_field_name("right"))
    operator = text(expression.child_by_field_name("operator"))
    if target is None or target.type != "identifier" or right is None:
        return None
    name = text(target)
    if operator == "+=":
        return name, text(right), right
    if operator == "-=":
        return name, f"-({text(right)})", right
    if operator == "=" and right.type == "binary_expression" and text(right.child_by_field_name("operator")) == "+":
        left_part, right_part = unparen(right.child_by_field_name("left")), unparen(right.child_by_field_name("right"))
        if left_part is not None and right_part is not None and text(left_part) == name:
            return name, text(right_part), right_part
    return None


def _counter(loop: Node, syntax: KernelSyntax) -> tuple[str, str] | None:
    """(counter, code of its first value) of a unit-step counted loop."""
    condition = unparen(loop.child_by_field_name("condition"))
    if condition is not None and condition.type == "condition_clause":
        condition = unparen(condition.named_children[0]) if condition.named_children else None
    if condition is None or condition.type != "binary_expression" or \
            text(condition.child_by_field_name("operator")) not in ("<", "<=", "!="):
        return None
    name = text(unparen(condition.child_by_field_name("left")))
    if loop.type == "for_statement":
        init = loop.child_by_field_name("initializer")
        if init is None or init.type != "declaration":
            return None
        declarators = init.children_by_field_name("declarator")
        if len(declarators) != 1 or declarators[0].type != "init_declarator" or \
                text(declarators[0].child_by_field_name("declarator")) != name:
            return None
        update = unparen(loop.child_by_field_name("update"))
        steps = [update] if update is None or update.type != "comma_expression" else \
            [update.child_by_field_name("left"), update.child_by_field_name("right")]
        if sum(_unit_step(s, name) for s in steps) != 1:
            return None
        return name, text(declarators[0].child_by_field_name("value"))
    statements = [s for s in named_statements(loop.child_by_field_name("body")) if s.type != "comment"]
    if not statements or statements[-1].type != "expression_statement" or \
            not _unit_step(statements[-1].named_children[0] if statements[-1].named_children else None, name):
        return None
    declaration = _declaration_before(loop, name, syntax)
    if declaration is None:
        return None
    for node in walk(syntax.body):
        if node.type in ("assignment_expression", "update_expression") and not _inside(node, statements[-1]):
            target = updated_target(node)
            if target is not None and text(target) == name:
                return None
    return name, text(declaration)


def _unit_step(node: Node | None, name: str) -> bool:
    node = unparen(node)
    if node is None:
        return False
    if node.type == "update_expression":
        return text(node.child_by_field_name("operator")) == "++" and text(node.child_by_field_name("argument")) == name
    return node.type == "assignment_expression" and text(node.child_by_field_name("left")) == name and \
        text(node.child_by_field_name("operator")) == "+=" and text(node.child_by_field_name("right")) == "1"


def _declaration_before(loop: Node, name: str, syntax: KernelSyntax) -> Node | None:
    """The initial value of `name`, declared by a statement of the block holding `loop`, before it."""
    for declarator in _declarators_before(loop):
        if text(declarator.child_by_field_name("declarator")) == name:
            return declarator.child_by_field_name("value")
    return None


def _declarators_before(loop: Node) -> list[Node]:
    """The init declarators of the declarations of the block holding `loop`, before it."""
    block = loop.parent
    found: list[Node] = []
    for statement in named_statements(block) if block is not None else []:
        if statement.start_byte >= loop.start_byte:
            break
        if statement.type == "declaration":
            found += [d for d in statement.children_by_field_name("declarator") if d.type == "init_declarator"]
    return found


def _local_pointer(pointer: str, loop: Node, syntax: KernelSyntax) -> bool:
    """A pointer declared (with a value) in the block holding `loop`, before it, and not used
    after the loop anywhere in the kernel."""
    targets = [d.child_by_field_name("declarator") for d in _declarators_before(loop)]
    if not any(t is not None and t.type == "pointer_declarator" and text(t.child_by_field_name("declarator")) == pointer
               for t in targets):
        return False
    return not any(node.type == "identifier" and text(node) == pointer and node.start_byte >= loop.end_byte
                   for node in walk(syntax.body))
