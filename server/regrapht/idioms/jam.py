"""A constant loop around one inner loop, jammed into that loop: the same program with the inner
loop run once.

`jammed_constant_loops(source, kernel)` rewrites

    for (int c = 0; c < 8; ++c) {           // constant bounds, at most MAX_COPIES iterations
        float s = 0.0f;                      // declarations of the iteration's own locals
        for (int e = lo; e < hi; ++e)        // one inner loop: its header reads neither c nor them
            s += val[e] * B[col[e] * 8 + c];
        C[row * 8 + c] = s;                  // stores of what the inner loop computed
    }

(a CSR SpMM row: the dense columns around the sparse row) as

    float s_jam0 = 0.0f; ... float s_jam7 = 0.0f;
    for (int e = lo; e < hi; ++e) { s_jam0 += val[e] * B[col[e] * 8 + 0]; ... }
    C[row * 8 + 0] = s_jam0; ... C[row * 8 + 7] = s_jam7;

which the item recogniser reads as one loop with eight accumulators (the inner loop's own
locals are renamed per copy too). It is the same program when
the iterations share nothing but read-only memory: each copy updates only its own locals (each
accumulator adds the same terms in the same order), the inner loop's header is the same for every
iteration (it mentions neither c nor the iteration's locals, and the memory it reads is never
written), and the stores come after every loop, in the original's order, into pointer
parameters the kernel never reads (distinct buffers, as the spec's separate allocations are).

Refused: bounds that are not constants, more than MAX_COPIES iterations, anything else in the
outer loop (a second loop, an `if`, a call with effects), `break`/`continue`/`return`/`goto`,
an inner loop that assigns anything but the iteration's locals and its own, a store into an array
the kernel also reads, the counter changed in the loop or taken by address.
"""

from __future__ import annotations

from tree_sitter import Node

from regrapht.idioms.access import is_pure
from regrapht.idioms.syntax import (
    KernelSyntax,
    Symbols,
    kernel_syntax,
    loop_counter,
    named_statements,
    subscript_parts,
    text,
    unparen,
    updated_target,
    walk,
)

MAX_COPIES = 16  # iterations jammed at most (each copy keeps its locals in registers)
SUFFIX = "_jam"


def jammed_constant_loops(source: str, kernel: str) -> str:
    syntax = kernel_syntax(source, kernel)
    if syntax is None:
        return source
    edits: list[tuple[int, int, str]] = []
    for loop in walk(syntax.body):
        if loop.type != "for_statement" or any(s <= loop.start_byte < e for s, e, _ in edits):
            continue
        jammed = _jammed(loop, syntax)
        if jammed is not None:
            edits.append((loop.start_byte, loop.end_byte, jammed))
    if not edits:
        return source
    data = syntax.source
    for start, end, replacement in sorted(edits, reverse=True):
        data = data[:start] + replacement.encode() + data[end:]
    return data.decode()


def _constant_range(loop: Node, syntax: KernelSyntax) -> tuple[str, str, range] | None:
    """(counter, its type, its values) of `for (T c = A; c < B; ++c)` with A, B constants."""
    counter = loop_counter(loop)
    condition = unparen(loop.child_by_field_name("condition"))
    update = unparen(loop.child_by_field_name("update"))
    if counter is None or condition is None or update is None or condition.type != "binary_expression" or \
            text(condition.child_by_field_name("operator")) not in ("<", "<=") or \
            text(unparen(condition.child_by_field_name("left"))) != counter[0]:
        return None
    name, start, declaration = counter
    symbols = Symbols(syntax.constants)
    first, bound = symbols.poly(start).constant, symbols.poly(condition.child_by_field_name("right")).constant
    stepped = (update.type == "update_expression" and text(update.child_by_field_name("operator")) == "++") or \
        (update.type == "assignment_expression" and text(update.child_by_field_name("operator")) == "+=" and
         text(unparen(update.child_by_field_name("right"))) == "1")
    if first is None or bound is None or not stepped or text(updated_target(update)) != name:
        return None
    last = bound + 1 if text(condition.child_by_field_name("operator")) == "<=" else bound
    type_text = " ".join(text(declaration.child_by_field_name("type")).split())
    if any(c.type in ("type_qualifier", "storage_class_specifier") for c in declaration.children) or \
            type_text not in ("int", "unsigned", "unsigned int", "long", "long long", "size_t"):
        return None
    return name, type_text, range(first, last)


def _jammed(outer: Node, syntax: KernelSyntax) -> str | None:
    found = _constant_range(outer, syntax)
    body = outer.child_by_field_name("body")
    if found is None or body is None or body.type != "compound_statement":
        return None
    if outer.parent is None or outer.parent.type != "compound_statement":
        return None  # its statements replace it in its block (their names are fresh)
    counter, counter_type, values = found
    if not 1 <= len(values) <= MAX_COPIES:
        return None
    statements = named_statements(body)
    loops = [s for s in statements if s.type == "for_statement"]
    if len(loops) != 1:
        return None
    inner = loops[0]
    position = statements.index(inner)
    before, after = statements[:position], statements[position + 1 :]
    if any(n.type in ("break_statement", "continue_statement", "return_statement", "goto_statement",
                      "labeled_statement", "while_statement", "do_statement", "lambda_expression")
           for n in walk(body)) or any(n.type == "for_statement" and n != inner for n in walk(body)):
        return None
    own = _own_locals(before)
    if own is None or counter in own:
        return None
    inner_body = inner.child_by_field_name("body")
    header = [inner.child_by_field_name(f) for f in ("initializer", "condition", "update")]
    inner_counter = loop_counter(inner)
    if inner_body is None or inner_counter is None or any(h is None for h in header):
        return None
    names_in_header = {text(n) for h in header if h is not None for n in walk(h) if n.type == "identifier"}
    if names_in_header & (own | {counter}):
        return None  # the inner loop's range would differ between iterations
    inner_name = inner_counter[0]
    inner_locals = _declared(inner_body)
    if inner_locals & (own | {counter, inner_name}):
        return None
    # What each part may change: the inner body its own locals and the iteration's (never its
    # counter); the stores after it elements of pointer parameters only.
    if not _assigns_only(inner_body, own | inner_locals) or not _only_stores(after, syntax) or \
            _changes_any(outer, {counter}) or _address_of(outer, own | {counter}):
        return None
    stored = _stored_arrays(after)
    reads = {text(n) for n in walk(syntax.body) if n.type == "identifier" and not _is_store_base(n)}
    if stored & reads or not stored:
        return None  # a stored array also read (a later copy would see the store sooner)
    indent = " " * outer.start_point[1]
    taken = {text(n) for n in walk(syntax.function) if n.type in ("identifier", "field_identifier", "type_identifier")}
    copies = []
    for value in values:
        literal = str(value) if counter_type == "int" else f"(({counter_type}){value})"
        renames = {name: f"{name}{SUFFIX}{value - values.start}" for name in own | inner_locals}
        if set(renames.values()) & taken:
            return None
        copies.append((literal, renames))
    lines: list[str] = []
    for literal, renames in copies:
        lines += [f"{indent}{_substituted(s, counter, literal, renames)}" for s in before]
    inner_text = (inner.text or b"").decode()
    header_text = inner_text[: inner_body.start_byte - inner.start_byte].rstrip()
    # every copy's statements in turn, its locals renamed apart (no block of its own: the item
    # recogniser reads a loop body's statements as one list)
    jammed_body = "\n".join(f"{indent}    {_substituted(s, counter, literal, renames)}"
                             for literal, renames in copies for s in named_statements(inner_body))
    lines.append(f"{indent}{header_text} {{\n{jammed_body}\n{indent}}}")
    for literal, renames in copies:
        lines += [f"{indent}{_substituted(s, counter, literal, renames)}" for s in after]
    return "\n".join(lines).lstrip()


def _own_locals(before: list[Node]) -> set[str] | None:
    """The names declared by `before`, when it is only declarations of plain locals with pure
    initialisers; None otherwise."""
    names: set[str] = set()
    for statement in before:
        if statement.type != "declaration" or not is_pure(statement) or \
                any(c.type == "storage_class_specifier" for c in statement.children):
            return None
        for declarator in statement.children_by_field_name("declarator"):
            target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" else declarator
            if target is None or target.type != "identifier":
                return None  # pointers, arrays, references
            names.add(text(target))
    return names


def _declared(node: Node) -> set[str]:
    names = set()
    for current in walk(node):
        if current.type == "declaration":
            for declarator in current.children_by_field_name("declarator"):
                target: Node | None = declarator
                while target is not None and target.type != "identifier":
                    target = target.child_by_field_name("declarator")
                if target is not None:
                    names.add(text(target))
    return names


def _assigns_only(node: Node, names: set[str]) -> bool:
    """Whether every assignment or increment under `node` changes one of `names` (a plain
    local, not memory), and every call is pure."""
    for current in walk(node):
        if current.type in ("assignment_expression", "update_expression"):
            target = updated_target(current)
            if target is None or target.type != "identifier" or text(target) not in names:
                return False
        if current.type == "call_expression" and not is_pure(current):
            return False
    return True


def _only_stores(statements: list[Node], syntax: KernelSyntax) -> bool:
    """`P[i] = e;` statements (P a pointer parameter, i and e pure)."""
    for statement in statements:
        expression = unparen(statement.named_children[0]) if statement.type == "expression_statement" and \
            len(statement.named_children) == 1 else None
        if expression is None or expression.type != "assignment_expression" or \
                text(expression.child_by_field_name("operator")) != "=":
            return False
        target = unparen(expression.child_by_field_name("left"))
        if target is None or target.type != "subscript_expression":
            return False
        base, indices = subscript_parts(target)
        base = unparen(base)
        param = syntax.param(text(base)) if base is not None and base.type == "identifier" else None
        if param is None or not param.is_pointer or len(indices) != 1 or not is_pure(indices[0]) or \
                not is_pure(expression.child_by_field_name("right")):
            return False
    return True


def _stored_arrays(statements: list[Node]) -> set[str]:
    out = set()
    for statement in statements:
        for node in walk(statement):
            if _is_store_base(node):
                out.add(text(node))
    return out


def _is_store_base(node: Node) -> bool:
    """Whether `node` is the array name of the left side of an assignment `P[i] = ...`."""
    if node.type != "identifier":
        return False
    subscript = node.parent
    if subscript is None or subscript.type != "subscript_expression" or subscript.child_by_field_name("argument") != node:
        return False
    holder = subscript.parent
    while holder is not None and holder.type == "parenthesized_expression":
        subscript, holder = holder, holder.parent
    return holder is not None and holder.type == "assignment_expression" and \
        holder.child_by_field_name("left") == subscript and text(holder.child_by_field_name("operator")) == "="


def _changes_any(node: Node, names: set[str]) -> bool:
    return any(current.type in ("assignment_expression", "update_expression") and
               text(updated_target(current)) in names for current in walk(node)
               if current != node.child_by_field_name("update") and
               not _within(current, node.child_by_field_name("update")))


def _within(node: Node, holder: Node | None) -> bool:
    return holder is not None and holder.start_byte <= node.start_byte < holder.end_byte


def _address_of(node: Node, names: set[str]) -> bool:
    for current in walk(node):
        if current.type == "pointer_expression" and text(current.child_by_field_name("operator")) == "&" and \
                text(unparen(current.child_by_field_name("argument"))) in names:
            return True
    return False


def _substituted(node: Node, counter: str, literal: str, renames: dict[str, str]) -> str:
    """`node`'s text with the counter replaced by `literal` and the iteration's locals renamed
    (identifiers only: fields and called names are left alone)."""
    data = node.text or b""
    edits = []
    for current in walk(node):
        if current.type != "identifier":
            continue
        parent = current.parent
        if parent is not None and parent.type == "call_expression" and parent.child_by_field_name("function") == current:
            continue
        name = text(current)
        replacement = literal if name == counter else renames.get(name)
        if replacement is not None:
            edits.append((current.start_byte - node.start_byte, current.end_byte - node.start_byte, replacement))
    for start, end, replacement in sorted(edits, reverse=True):
        data = data[:start] + replacement.encode() + data[end:]
    return data.decode()
