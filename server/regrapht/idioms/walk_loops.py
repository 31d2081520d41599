"""Loops that walk pointers by one element and dereference them as they go (`*p++`), whose trip
count may come from the walk itself: the same loop written with an index. (`pointer_walks`
indexes strided walks of local pointers in counted loops; this module adds the element-by-element
walks of scans and copies: parameters walked in place, `*p++`, `while (p != end)`, `while (n--)`.)

`indexed_walk_loops(kernel)` rewrites a kernel's one loop whose pointers advance by one element per
iteration (`acc += *p++; *q++ = acc;`, `++p; ++q;` at the end of the body or in the `for`
update, `for (const float *p = in; p != in + n; ++p)`) so that each `*p` reads or writes
`root[offset + k]` at the iteration's index k, and returns the new source. The idiom recognisers
then read it like any indexed loop. The trip count comes from an integer counter of the loop
(`for (int i = 0; i < n; ++i)`), from a walker's bound (`p < in + n`, `p != end` with
`end = in + n`), or from a count-down (`while (n--)`, `while (n-- > 0)`).

Refused: a walker used any other way (`p[1]`, `p + 2`, compared, passed, used after the loop),
advanced other than once per iteration or inside a condition, loops nested in the walking loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from regrapht.idioms.syntax import (
    KernelSyntax,
    condition_of,
    identifiers_in,
    named_statements,
    subscript_parts,
    text,
    unparen,
    updated_target,
    walk,
)

INDEX = "walk_k"  # the iteration index of the rewritten loop (renamed when the kernel uses it)


@dataclass
class _Walker:
    root: str  # the pointer parameter it starts in
    offset: str  # where it starts, as code ("0", "base * 4")
    advances: int = 0  # within the current iteration, so far


def indexed_walk_loops(kernel: KernelSyntax) -> str | None:
    loops = [n for n in walk(kernel.body) if n.type in ("for_statement", "while_statement", "do_statement")]
    if len(loops) != 1 or loops[0].type == "do_statement":
        return None
    loop = loops[0]
    names = identifiers_in(kernel.body)
    index = INDEX
    while index in names:
        index += "_"
    walkers = _walkers(kernel, loop)
    if not walkers:
        return None
    header = _trip(kernel, loop, walkers, index)
    if header is None:
        return None
    new_header, counter_index, incremented_in_update = header
    body = loop.child_by_field_name("body")
    if body is None:
        return None
    edits = _body_edits(body, walkers, counter_index)
    if edits is None:
        return None
    for name, walker in walkers.items():
        if walker.advances + (1 if name in incremented_in_update else 0) != 1:
            return None
    source = kernel.source
    body_text = bytearray(source[body.start_byte:body.end_byte])
    for start, end, replacement in sorted(edits, reverse=True):
        body_text[start - body.start_byte:end - body.start_byte] = replacement.encode()
    loop_text = new_header + " " + body_text.decode()
    if body.type != "compound_statement":
        loop_text = new_header + " { " + body_text.decode() + " }"
    new_source = source[:loop.start_byte] + loop_text.encode() + source[loop.end_byte:]
    return new_source.decode()


def _walkers(kernel: KernelSyntax, loop: Node) -> dict[str, _Walker] | None:
    """Pointers advanced in the loop, with where they start; None when one is used otherwise."""
    advanced: set[str] = set()
    for node in walk(loop):
        target = _advanced(node)
        if target is not None:
            advanced.add(target)
    found: dict[str, _Walker] = {}
    starts = _pointer_starts(kernel, loop)
    pointers = set(kernel.pointers) | {text(d) for n in walk(kernel.body) if n.type == "pointer_declarator"
                                        if (d := n.child_by_field_name("declarator")) is not None}
    for name in advanced:
        if name not in pointers:
            continue  # a counter
        if name not in starts:
            return None
        root, offset = starts[name]
        found[name] = _Walker(root, offset)
    # Nothing after the loop may use a walker (its value after the loop is not recomputed).
    after = False
    for node in walk(kernel.body):
        if node == loop:
            after = True
            continue
        if after and node.start_byte >= loop.end_byte and node.type == "identifier" and text(node) in found:
            return None
    return found


def _advanced(node: Node) -> str | None:
    """p of `p++`, `++p`, `p += 1`."""
    if node.type == "update_expression" and text(node.child_by_field_name("operator")) == "++":
        argument = unparen(node.child_by_field_name("argument"))
        return text(argument) if argument is not None and argument.type == "identifier" else None
    if node.type == "assignment_expression" and text(node.child_by_field_name("operator")) == "+=":
        left, right = unparen(node.child_by_field_name("left")), unparen(node.child_by_field_name("right"))
        if left is not None and left.type == "identifier" and right is not None and text(right) == "1":
            return text(left)
    return None


def _pointer_starts(kernel: KernelSyntax, loop: Node) -> dict[str, tuple[str, str]]:
    """(root parameter, offset) of each pointer at the loop's start: parameters never assigned
    before it, and `T *p = root`, `root + e`, `&root[e]` declared before it (or in its `for`)."""
    starts: dict[str, tuple[str, str]] = {}
    for param in kernel.params:
        if param.is_pointer:
            starts[param.name] = (param.name, "0")
    for node in walk(kernel.body):
        if node.start_byte >= loop.end_byte:
            break
        if node.type == "init_declarator":
            target = node.child_by_field_name("declarator")
            if target is not None and target.type == "pointer_declarator":
                name = target.child_by_field_name("declarator")
                start = _start(node.child_by_field_name("value"), kernel)
                if name is not None and name.type == "identifier" and start is not None:
                    starts[text(name)] = start
                elif name is not None:
                    starts.pop(text(name), None)
        if node.start_byte < loop.start_byte and node.type in ("assignment_expression", "update_expression"):
            target = updated_target(node)
            if target is not None and target.type == "identifier":
                starts.pop(text(target), None)  # moved before the loop: its start is not known
    return starts


def _start(value: Node | None, kernel: KernelSyntax) -> tuple[str, str] | None:
    value = unparen(value)
    if value is None:
        return None
    if value.type == "identifier" and text(value) in kernel.pointers:
        return text(value), "0"
    if value.type == "binary_expression" and text(value.child_by_field_name("operator")) == "+":
        left = unparen(value.child_by_field_name("left"))
        if left is not None and left.type == "identifier" and text(left) in kernel.pointers:
            return text(left), " ".join(text(value.child_by_field_name("right")).split())
    if value.type == "pointer_expression" and text(value.child_by_field_name("operator")) == "&":
        inner = unparen(value.child_by_field_name("argument"))
        if inner is not None and inner.type == "subscript_expression":
            base, indices = subscript_parts(inner)
            base = unparen(base)
            if base is not None and base.type == "identifier" and text(base) in kernel.pointers and len(indices) == 1:
                return text(base), " ".join(text(indices[0]).split())
    return None


def _trip(kernel: KernelSyntax, loop: Node, walkers: dict[str, _Walker],
          index: str) -> tuple[str, str, set[str]] | None:
    """(new loop header, the iteration index as code, walkers advanced by the header)."""
    if loop.type == "while_statement":
        condition = unparen(condition_of(loop))
        count = _count_down(condition, loop, kernel) or _walker_bound(condition, walkers)
        if count is None:
            return None
        return f"for (long long {index} = 0; {index} < {count}; ++{index})", index, set()
    init = loop.child_by_field_name("initializer")
    condition = unparen(loop.child_by_field_name("condition"))
    updates = _update_parts(loop.child_by_field_name("update"))
    if updates is None:
        return None
    in_update = {name for u in updates if (name := _advanced(u)) is not None and name in walkers}
    others = [u for u in updates if _advanced(u) not in walkers]
    counter = _counter(init, condition, others)
    if counter is not None:
        name, start, bound = counter
        return f"for ({text(init).rstrip(';')}; {name} < {bound}; ++{name})", f"({name} - ({start}))", in_update
    if others:
        return None
    count = _walker_bound(condition, walkers)
    if count is None:
        return None
    return f"for (long long {index} = 0; {index} < {count}; ++{index})", index, in_update


def _update_parts(update: Node | None) -> list[Node] | None:
    update = unparen(update)
    if update is None:
        return []
    if update.type == "comma_expression":
        left, right = update.child_by_field_name("left"), update.child_by_field_name("right")
        first, rest = _update_parts(left), _update_parts(right)
        return None if first is None or rest is None else first + rest
    return [update]


def _counter(init: Node | None, condition: Node | None, updates: list[Node]) -> tuple[str, str, str] | None:
    """(counter, start, bound) of `int i = S; i < U; ++i` (the walkers' increments aside)."""
    if init is None or init.type != "declaration" or condition is None or len(updates) != 1:
        return None
    declarators = init.children_by_field_name("declarator")
    if len(declarators) != 1 or declarators[0].type != "init_declarator":
        return None
    target = declarators[0].child_by_field_name("declarator")
    if target is None or target.type != "identifier":
        return None
    name = text(target)
    if condition.type != "binary_expression" or text(condition.child_by_field_name("operator")) != "<" or \
            text(unparen(condition.child_by_field_name("left"))) != name or _advanced(updates[0]) != name:
        return None
    return name, " ".join(text(declarators[0].child_by_field_name("value")).split()), \
        " ".join(text(condition.child_by_field_name("right")).split())


def _count_down(condition: Node | None, loop: Node, kernel: KernelSyntax) -> str | None:
    """n of `while (n--)`, `while (n-- > 0)`, `while (n-- != 0)` for a scalar n the body leaves
    alone (its value after the loop is not recomputed, so it must not be used after it)."""
    if condition is not None and condition.type == "binary_expression" and \
            text(condition.child_by_field_name("operator")) in (">", "!=") and \
            text(unparen(condition.child_by_field_name("right"))) == "0":
        condition = unparen(condition.child_by_field_name("left"))
    if condition is None or condition.type != "update_expression" or \
            text(condition.child_by_field_name("operator")) != "--" or condition.children[0].type == "--":
        return None
    argument = unparen(condition.child_by_field_name("argument"))
    if argument is None or argument.type != "identifier":
        return None
    name = text(argument)
    body = loop.child_by_field_name("body")
    uses = [n for n in walk(kernel.body) if n.type == "identifier" and text(n) == name
            and (n.start_byte >= loop.end_byte or (body is not None and body.start_byte <= n.start_byte < body.end_byte))]
    return name if not uses else None


def _walker_bound(condition: Node | None, walkers: dict[str, _Walker]) -> str | None:
    """N - offset of `p < root + N` / `p != root + N` (or `&root[N]`) for a walker p of root."""
    if condition is None or condition.type != "binary_expression" or \
            text(condition.child_by_field_name("operator")) not in ("<", "!="):
        return None
    left = unparen(condition.child_by_field_name("left"))
    if left is None or text(left) not in walkers:
        return None
    walker = walkers[text(left)]
    right = unparen(condition.child_by_field_name("right"))
    end: tuple[str, str] | None = None
    if right is not None and right.type == "binary_expression" and text(right.child_by_field_name("operator")) == "+":
        base = unparen(right.child_by_field_name("left"))
        if base is not None and base.type == "identifier":
            end = text(base), " ".join(text(right.child_by_field_name("right")).split())
    elif right is not None and right.type == "pointer_expression" and text(right.child_by_field_name("operator")) == "&":
        inner = unparen(right.child_by_field_name("argument"))
        if inner is not None and inner.type == "subscript_expression":
            base, indices = subscript_parts(inner)
            if base is not None and len(indices) == 1:
                end = text(unparen(base)), " ".join(text(indices[0]).split())
    if end is None or end[0] != walker.root:
        return None
    return f"({end[1]}) - ({walker.offset})"


def _body_edits(body: Node, walkers: dict[str, _Walker], index: str) -> list[tuple[int, int, str]] | None:
    """Edits of the body: each `*p`/`*p++` becomes `root[offset + index + advances]`, each
    `p++;` statement disappears; None for any other use of a walker."""
    edits: list[tuple[int, int, str]] = []
    statements = named_statements(body) if body.type == "compound_statement" else [body]
    for statement in statements:
        if statement.type == "expression_statement" and statement.named_children:
            expression = unparen(statement.named_children[0])
            name = _advanced(expression) if expression is not None else None
            if name in walkers:
                walkers[name].advances += 1
                edits.append((statement.start_byte, statement.end_byte, ";"))
                continue
        conditional = statement.type not in ("expression_statement", "declaration")
        done = _statement_edits(statement, walkers, index, edits, conditional)
        if not done:
            return None
    return edits


def _statement_edits(statement: Node, walkers: dict[str, _Walker], index: str,
                     edits: list[tuple[int, int, str]], conditional: bool) -> bool:
    handled: set[int] = set()
    for node in walk(statement):
        if node.id in handled:
            continue
        if node.type == "pointer_expression" and text(node.child_by_field_name("operator")) == "*":
            argument = unparen(node.child_by_field_name("argument"))
            name, advance = None, False
            if argument is not None and argument.type == "identifier" and text(argument) in walkers:
                name = text(argument)
            elif argument is not None and argument.type == "update_expression" and \
                    text(argument.child_by_field_name("operator")) == "++" and argument.children[0].type != "++":
                inner = unparen(argument.child_by_field_name("argument"))
                if inner is not None and text(inner) in walkers:
                    name, advance = text(inner), True
            if name is None:
                continue
            if conditional and advance:
                return False  # advanced only on some iterations
            walker = walkers[name]
            offset = "" if walker.offset == "0" else f"({walker.offset}) + "
            step = f" + {walker.advances}" if walker.advances else ""
            edits.append((node.start_byte, node.end_byte, f"{walker.root}[{offset}{index}{step}]"))
            if advance:
                walker.advances += 1
            for inner_node in walk(node):
                handled.add(inner_node.id)
            continue
        if node.type == "identifier" and text(node) in walkers:
            return False  # used other than through `*p`
    return True
