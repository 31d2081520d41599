"""A tile's rows walked by a loop of block-row steps, written as one thread per row.

Code that tiles by hand often gives each block a TILE-row tile but only ROWS rows of threads,
every thread copying TILE / ROWS rows: `int y = blockIdx.y * TILE + threadIdx.y; for (int i = 0;
i < TILE; i += ROWS) out[... + i] = in[... + i * width];` on a block of ROWS rows (the vendor
samples' naive transpose). When the kernel reads `threadIdx.y` and the counter `i` only as
their sum (every index and condition they enter is a polynomial in which `i` and `threadIdx.y`
have the same coefficients, and neither is multiplied by the other), the program is the same
as one with a block of TILE rows, `threadIdx.y` taking the value `threadIdx.y + i`, and no loop:
`tile_rows_as_points` writes that kernel and says which block it needs. A kernel without a
guard (the tile sizes divide the problem) gets the one its launch implies, `y < grid_y * TILE`
on each coordinate `blockIdx.a * B + threadIdx.a`, so that point-kernel readers see its domain.

The loop's iterations must be independent: no `break`, `continue`, `return` or `goto` in it,
every local it assigns declared in it, no array it writes also read in it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.cuda.intexpr import constant_value
from regrapht.idioms.syntax import (
    Symbols,
    condition_of,
    depends_on,
    kernel_syntax,
    loop_counter,
    named_statements,
    subscript_parts,
    text,
    unparen,
    updated_target,
    walk,
)

AXES = ("x", "y", "z")


@dataclass(frozen=True)
class TileRows:
    source: str  # the whole file, the kernel's loop written as a thread per row
    axis: str  # the launch axis whose block grows from the loop's step to its extent
    rows: int  # the new block size along it (the loop's extent)


def tile_rows_as_points(source: str, kernel: str, block: tuple[int, int, int] | None,
                        grid: tuple[str, ...]) -> TileRows | None:
    syntax = kernel_syntax(source, kernel)
    if syntax is None or block is None:
        return None
    statements = syntax.statements()
    if not statements or statements[-1].type != "for_statement":
        return None
    loop, prelude = statements[-1], statements[:-1]
    header = _header(loop, syntax.constants)
    if header is None:
        return None
    counter, extent, step = header
    axis = next((a for a, size in zip(AXES, block, strict=True) if size == step and size < extent), None)
    if axis is None or extent % step or extent * _others(block, axis) > 1024:
        return None
    thread = f"threadIdx.{axis}"
    body = loop.child_by_field_name("body")
    if body is None or not _independent(body) or not all(_declaration(s) for s in prelude):
        return None
    symbols = Symbols(syntax.constants)
    for statement in prelude:
        for declarator in statement.children_by_field_name("declarator"):
            target = declarator.child_by_field_name("declarator")
            symbols.define(text(target), declarator.child_by_field_name("value"))
    if any(text(n) == counter for s in prelude for n in walk(s)):
        return None
    for expression in _uses(body, counter, symbols, thread):
        if expression is None or not _symmetric(symbols.poly(expression), thread, counter):
            return None
    guard = "" if _guarded(body) else launch_guard(symbols, block, grid, axis, extent)
    if guard is None:
        return None
    data = syntax.source
    inner = _without_counter(body, counter, data)
    work = inner if not guard else f"if ({guard}) {inner}"
    new = data[: loop.start_byte].decode() + work + data[loop.end_byte :].decode()
    return TileRows(new, axis, extent)


def _others(block: tuple[int, int, int], axis: str) -> int:
    product = 1
    for a, size in zip(AXES, block, strict=True):
        if a != axis:
            product *= size
    return product


def _header(loop: Node, constants: Mapping[str, int]) -> tuple[str, int, int] | None:
    """(counter, extent, step) of `for (int i = 0; i < EXTENT; i += STEP)`, both constants."""
    declared = loop_counter(loop)
    condition, update = unparen(loop.child_by_field_name("condition")), unparen(loop.child_by_field_name("update"))
    if declared is None or condition is None or update is None or condition.type != "binary_expression" or \
            update.type != "assignment_expression" or text(update.child_by_field_name("operator")) != "+=":
        return None
    counter, start, _ = declared
    known = dict(constants)
    extent = constant_value(text(condition.child_by_field_name("right")), known)
    step = constant_value(text(update.child_by_field_name("right")), known)
    if text(start).strip() != "0" or text(condition.child_by_field_name("operator")) != "<" or \
            text(unparen(condition.child_by_field_name("left"))) != counter or \
            text(unparen(update.child_by_field_name("left"))) != counter or extent is None or step is None or \
            step <= 0 or extent <= step:
        return None
    return counter, extent, step


def _declaration(statement: Node) -> bool:
    """A pure declaration of plain locals (one value each)."""
    if statement.type != "declaration" or any(c.type == "storage_class_specifier" for c in statement.children):
        return False
    for declarator in statement.children_by_field_name("declarator"):
        target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" else None
        if target is None or target.type != "identifier":
            return False
        if any(n.type in ("call_expression", "assignment_expression", "update_expression", "subscript_expression",
                          "pointer_expression") for n in walk(declarator)):
            return False
    return True


def _independent(body: Node) -> bool:
    declared = {text(d.child_by_field_name("declarator")) for d in walk(body) if d.type == "init_declarator"}
    written, read = set(), set()
    for node in walk(body):
        if node.type in ("break_statement", "continue_statement", "return_statement", "goto_statement",
                         "labeled_statement", "asm_statement"):
            return False
        if node.type == "call_expression" and text(node.child_by_field_name("function")).startswith(
                ("__sync", "atomic")):
            return False
        if node.type in ("assignment_expression", "update_expression"):
            target = updated_target(node)
            if target is None:
                return False
            if target.type == "identifier":
                if text(target) not in declared:
                    return False
            elif target.type == "subscript_expression":
                base, _ = subscript_parts(target)
                written.add(text(unparen(base)))
            else:
                return False
        elif node.type == "subscript_expression" and not (node.parent is not None and
                                                        node.parent.type == "assignment_expression" and
                                                        node.parent.child_by_field_name("left") == node):
            base, _ = subscript_parts(node)
            read.add(text(unparen(base)))
    return not written & read


def _uses(body: Node, counter: str, symbols: Symbols, thread: str) -> list[Node | None]:
    """The expressions of the body through which the counter or the thread index (through a
    local) can matter: subscript indices and conditions; None for a use anywhere else."""
    relevant = {name for name, value in symbols.env.items() if depends_on(value, thread)} | {counter}
    found: list[Node | None] = []
    roots: list[Node] = []
    for node in walk(body):
        if node.type == "subscript_expression":
            _, indices = subscript_parts(node)
            roots.extend(indices)
        elif node.type in ("if_statement", "conditional_expression"):
            condition = condition_of(node) if node.type == "if_statement" else node.child_by_field_name("condition")
            if condition is not None:
                roots.append(condition)
    covered = [(r.start_byte, r.end_byte) for r in roots]
    for node in walk(body):
        use = node.type == "identifier" and text(node) in relevant or \
            node.type == "field_expression" and "".join(text(node).split()) == thread
        if use and not any(start <= node.start_byte < end for start, end in covered):
            found.append(None)
    for root in roots:
        if root.type == "binary_expression" and text(root.child_by_field_name("operator")) in ("&&", "||"):
            found.extend(_terms(root))
        elif root.type == "binary_expression" and text(root.child_by_field_name("operator")) in (
                "<", "<=", ">", ">=", "==", "!="):
            found.extend((root.child_by_field_name("left"), root.child_by_field_name("right")))
        else:
            found.append(root)
    return found


def _terms(node: Node) -> list[Node | None]:
    node = unparen(node) or node
    if node.type == "binary_expression" and text(node.child_by_field_name("operator")) in ("&&", "||"):
        return [*_terms(node.child_by_field_name("left")), *_terms(node.child_by_field_name("right"))]  # type: ignore[arg-type]
    if node.type == "binary_expression" and text(node.child_by_field_name("operator")) in (
            "<", "<=", ">", ">=", "==", "!="):
        return [node.child_by_field_name("left"), node.child_by_field_name("right")]
    return [None]


def _symmetric(poly: Poly, thread: str, counter: str) -> bool:
    """Whether `poly` reads `thread` and `counter` only as their sum: each monomial holding one
    has its twin with the other and the same coefficient, none holds both or either twice, and
    no opaque atom mentions them."""
    terms = poly.as_dict()
    for monomial, coefficient in terms.items():
        for atom in monomial:
            if atom.startswith("~") and (depends_on(Poly.atom(atom), counter) or depends_on(Poly.atom(atom), thread)):
                return False
        has_thread, has_counter = monomial.count(thread), monomial.count(counter)
        if has_thread + has_counter > 1:
            return False
        if has_thread or has_counter:
            twin = tuple(sorted(counter if a == thread else thread if a == counter else a for a in monomial))
            if terms.get(twin) != coefficient:
                return False
    return True


def _guarded(body: Node) -> bool:
    inner = named_statements(body)
    return len(inner) == 1 and inner[0].type == "if_statement" and inner[0].child_by_field_name("alternative") is None


def launch_guard(symbols: Symbols, block: tuple[int, int, int], grid: tuple[str, ...], axis: str,
                 extent: int) -> str | None:
    """`name < grid_a * B_a && ...` over the locals (`symbols`) that are coordinates
    `blockIdx.a * B_a + threadIdx.a` (B_a the block's size, `extent` along `axis`), for every
    axis the launch spans: the domain an unguarded kernel covers; None when an axis has none."""
    terms = []
    for a, size in zip(AXES, block, strict=True):
        width = extent if a == axis else size
        index = AXES.index(a)
        if index >= len(grid):
            if size != 1:
                return None
            continue
        want = Poly.of({(f"blockIdx.{a}",): width, (f"threadIdx.{a}",): 1})
        names = [name for name, value in symbols.env.items() if value == want]
        if not names:
            if size == 1 and grid[index].strip() == "1":
                continue
            return None
        terms.append(f"{names[0]} < ({grid[index]}) * {width}")
    return " && ".join(terms) if terms else None


def _without_counter(body: Node, counter: str, data: bytes) -> str:
    """The loop's body with the counter written as 0 (its first row: the thread is the row)."""
    start = body.start_byte
    piece = data[start : body.end_byte]
    for node in sorted((n for n in walk(body) if n.type == "identifier" and text(n) == counter),
                       key=lambda n: n.start_byte, reverse=True):
        piece = piece[: node.start_byte - start] + b"0" + piece[node.end_byte - start :]
    return piece.decode()
