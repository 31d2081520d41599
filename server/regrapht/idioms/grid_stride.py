"""Grid-stride loops over points read as the guards they are when the launch covers the range.

`for (T i = <global index along a>; i < N; i += <threads along a>) BODY` visits, in each thread,
the points `g, g + G, g + 2G, ...` below N, where g is the thread's global index and G the
number of threads along the axis. When the launch has at least N threads along that axis
(G >= N), every thread runs BODY at most once, for `i = g`, exactly as

    T i = <global index along a>;
    if (i < N) BODY

does. `grid_stride_as_guard(source, kernel)` writes the kernel that way (nested loops over
different axes, `for (y ...) for (x ...) BODY`, become one guard `if (y < H && x < W)`), so the
point-kernel recognisers (`pointwise.py`) read it. The equivalence needs the launch to cover N:
`search/appliers/points.point_view` takes the guarded view only through `covers_domain`, which
checks exactly that (grid x block >= N along each coordinate, one thread along unused axes).

Only loops whose body neither assigns the counter nor leaves or skips iterations (`break`,
`continue`: no guard expresses them) are rewritten; the loop must be the kernel's last statement,
after declarations only. Anything else is left as written.
"""

from __future__ import annotations

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.cuda.parse import make_parser
from regrapht.idioms.access import is_pure
from regrapht.idioms.syntax import (
    KernelSyntax,
    Symbols,
    kernel_syntax,
    loop_counter,
    named_statements,
    text,
    unparen,
    updated_target,
    walk,
)

AXES = ("x", "y", "z")


def _global(axis: str) -> Poly:
    return Poly.of({(f"blockDim.{axis}", f"blockIdx.{axis}"): 1, (f"threadIdx.{axis}",): 1})


def _threads(axis: str) -> Poly:
    return Poly.of({(f"blockDim.{axis}", f"gridDim.{axis}"): 1})


def grid_stride_as_guard(source: str, kernel: str) -> str:
    """The source with the kernel's final grid-stride loop nest written as a guard (see the module
    docstring), or unchanged."""
    syntax = kernel_syntax(source, kernel)
    if syntax is None:
        return source
    statements = [s for s in named_statements(syntax.body) if s.type != "comment"]
    if not statements or statements[-1].type != "for_statement":
        return source
    symbols = Symbols(syntax.constants)
    for statement in statements[:-1]:
        if statement.type != "declaration" or not is_pure(statement):
            return source
        for declarator in statement.children_by_field_name("declarator"):
            target = declarator.child_by_field_name("declarator")
            if declarator.type == "init_declarator" and target is not None and target.type == "identifier":
                symbols.define(text(target), declarator.child_by_field_name("value"))
    nest = _nest(statements[-1], symbols, syntax)
    if nest is None:
        return source
    headers, conditions, body = nest
    declarations = statements[:-1]
    declared = {name: index for index, statement in enumerate(declarations) for name in _declared(statement)}
    if any(_declared_counter(header) in declared for header in headers):
        return source  # the loop's counter shadows a local: hoisting it would redeclare the name
    # Declarations the loop headers read stay before them; the others the body reads move into
    # the guarded block (pure: evaluating them only for a point in range changes nothing), so the
    # coordinates come first, as in a point kernel; unused ones (`stride`) go.
    staying: set[int] = set()
    wanted = _words(" ".join(headers) + "".join(f" {c};" for c in conditions))
    while True:
        more = {declared[name] for name in wanted if name in declared} - staying
        if not more:
            break
        staying |= more
        wanted = set().union(*(_words(text(declarations[i])) for i in more))
    body_words = _words(text(body))
    moving = [d for i, d in enumerate(declarations) if i not in staying]
    needed: list[Node] = []
    for statement in reversed(moving):
        if _declared(statement) & body_words:
            needed.insert(0, statement)
            body_words |= _words(text(statement))
    inner = [text(d) for d in needed]
    work = text(body)
    if inner:
        work = "{\n        " + "\n        ".join(inner) + "\n        " + (work[1:] if body.type == "compound_statement"
                                                                       else work + "\n    }")
    guarded = f"{' '.join(headers)}\n    if ({' && '.join(conditions)}) {work}"
    data = syntax.source
    edits = [(statements[-1].start_byte, statements[-1].end_byte, guarded)]
    edits += [(d.start_byte, d.end_byte, "") for i, d in enumerate(declarations) if i not in staying]
    for begin, end, replacement in sorted(edits, reverse=True):
        data = data[:begin] + replacement.encode() + data[end:]
    return data.decode()


def _declared(declaration: Node) -> set[str]:
    return {text(d.child_by_field_name("declarator") or d) for d in declaration.children_by_field_name("declarator")}


def _declared_counter(header: str) -> str:
    return header.split("=")[0].split()[-1]


def _words(code: str) -> set[str]:
    """The identifiers of a piece of code (parsed as a statement list)."""
    tree = make_parser().parse(("void f() {" + code + "}").encode())
    return {text(n) for n in walk(tree.root_node) if n.type == "identifier"}


def _nest(loop: Node, symbols: Symbols, syntax: KernelSyntax) -> tuple[list[str], list[str], Node] | None:
    """(counter declarations, guard conditions, innermost body) of a nest of grid-stride loops
    over distinct axes, each loop the whole body of the one around it."""
    headers: list[str] = []
    conditions: list[str] = []
    used: set[str] = set()
    counters: list[str] = []
    body: Node | None = loop
    while body is not None and body.type == "for_statement":
        found = _grid_stride(body, symbols)
        if found is None or found[1] in used:
            break
        (header, counter, condition), axis = found[0], found[1]
        used.add(axis)
        headers.append(header)
        conditions.append(f"({condition})")
        counters.append(counter)
        body = body.child_by_field_name("body")
        inner = named_statements(body) if body is not None and body.type == "compound_statement" else []
        if len(inner) == 1 and inner[0].type == "for_statement":
            body = inner[0]
    if not headers or body is None:
        return None
    for node in walk(body):
        if node.type in ("break_statement", "continue_statement", "goto_statement"):
            return None
        if node.type in ("assignment_expression", "update_expression"):
            target = updated_target(node)
            if target is not None and text(target) in counters:
                return None
        if node.type == "declaration" and any(text(d.child_by_field_name("declarator") or d) in counters
                                              for d in node.children_by_field_name("declarator")):
            return None  # a shadowing counter: the guard would read the outer one
    return headers, conditions, body


def _grid_stride(loop: Node, symbols: Symbols) -> tuple[tuple[str, str, str], str] | None:
    """((`T i = E;`, i, `i < N`), axis) of `for (T i = E; i < N; i += S)` with E the global index
    along the axis and S its thread count; N must not depend on i or on memory."""
    condition = unparen(loop.child_by_field_name("condition"))
    update = unparen(loop.child_by_field_name("update"))
    declared = loop_counter(loop)
    if declared is None or condition is None or update is None:
        return None
    counter, start, init = declared
    if condition.type != "binary_expression" or text(condition.child_by_field_name("operator")) != "<" or \
            text(unparen(condition.child_by_field_name("left"))) != counter:
        return None
    bound = condition.child_by_field_name("right")
    bound_poly = symbols.poly(bound)
    if bound is None or counter in {text(n) for n in walk(bound) if n.type == "identifier"} or \
            bound_poly.memory_dependent or bound_poly.thread_dependent:
        return None
    if update.type != "assignment_expression" or text(update.child_by_field_name("operator")) != "+=" or \
            text(unparen(update.child_by_field_name("left"))) != counter:
        return None
    first, step = symbols.poly(start), symbols.poly(update.child_by_field_name("right"))
    # the first point may be offset by a constant (`gid + 1` for an interior): each thread still
    # runs once exactly when the launch covers the guarded range
    axis = next((a for a in AXES if not (first - _global(a)).atoms() and step == _threads(a)), None)
    if axis is None:
        return None
    header = f"{' '.join(text(init.child_by_field_name('type')).split())} {counter} = {text(start)};"
    return (header, counter, f"{counter} < {text(bound)}"), axis
