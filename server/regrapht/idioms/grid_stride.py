"""Grid-stride loops: the one reading of a counted loop's header, and the loop read as a guard.

`counted_loop` reads `for (T v = S; v < B; v += E)` (also `v <= B`, and `v++` for a step of 1)
through the affine algebra: counter, start, step, bound, body. It is a *grid-stride loop* along
launch axis a when E is the launch's thread count along a (`blockDim.a * gridDim.a`); S is then
the thread's global index along a plus an `offset`. `loop_nest` walks a nest of such loops, each
the whole body of the one around it. What a reader needs of the loops it accepts (which
comparison, what the bound and the offset may name, the counter's type) stays with it: here
`grid_stride_as_guard`, and `loop_points.loops_as_points`, which also rebuilds the launch.

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

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.cuda.parse import make_parser
from regrapht.idioms.access import is_pure
from regrapht.idioms.pointwise import AXES
from regrapht.idioms.syntax import (
    Symbols,
    kernel_syntax,
    loop_counter,
    named_statements,
    text,
    unparen,
    updated_target,
    walk,
)

T = TypeVar("T")


def thread_index(axis: str) -> Poly:
    """`blockIdx.a * blockDim.a + threadIdx.a`: the thread's global index along the axis."""
    return Poly.of({(f"blockDim.{axis}", f"blockIdx.{axis}"): 1, (f"threadIdx.{axis}",): 1})


def thread_count(axis: str) -> Poly:
    """`blockDim.a * gridDim.a`: the launch's number of threads along the axis."""
    return Poly.of({(f"blockDim.{axis}", f"gridDim.{axis}"): 1})


@dataclass(frozen=True)
class CountedLoop:
    """`for (T v = S; v < B; v += E)` (`v <= B`; `v++`: E = 1) read through the affine algebra."""

    node: Node  # the for statement
    counter: str  # v
    declaration: Node  # `T v = S`, the loop's initializer (its type and qualifiers)
    start: Node  # S as written
    comparison: str  # "<" or "<="
    bound: Node  # B as written
    first: Poly  # S
    step: Poly  # E
    axis: str | None  # the launch axis whose thread count E is (a grid-stride loop), or None

    @property
    def type(self) -> str:
        """T, its words single-spaced."""
        return " ".join(text(self.declaration.child_by_field_name("type")).split())

    @property
    def offset(self) -> Poly:
        """S minus the thread's global index along the grid-stride axis (S when there is none)."""
        return self.first - thread_index(self.axis) if self.axis is not None else self.first

    @property
    def body(self) -> Node | None:
        return self.node.child_by_field_name("body")


def counted_loop(loop: Node, symbols: Symbols) -> CountedLoop | None:
    """The for statement read as a `CountedLoop` (`symbols` resolves the locals its start and
    step name), or None when its header is of another form."""
    condition = unparen(loop.child_by_field_name("condition"))
    update = unparen(loop.child_by_field_name("update"))
    declared = loop_counter(loop)
    if declared is None or condition is None or update is None or condition.type != "binary_expression":
        return None
    counter, start, declaration = declared
    comparison = text(condition.child_by_field_name("operator"))
    bound = condition.child_by_field_name("right")
    if comparison not in ("<", "<=") or text(unparen(condition.child_by_field_name("left"))) != counter or \
            bound is None:
        return None
    step = _step(update, counter, symbols)
    if step is None:
        return None
    axis = next((a for a in AXES if step == thread_count(a)), None)
    return CountedLoop(loop, counter, declaration, start, comparison, bound, symbols.poly(start), step, axis)


def _step(update: Node, counter: str, symbols: Symbols) -> Poly | None:
    """E of `v += E`, 1 of `v++`/`++v`, None for any other update."""
    if update.type == "update_expression" and text(update.child_by_field_name("operator")) == "++" and \
            text(unparen(update.child_by_field_name("argument"))) == counter:
        return Poly.const(1)
    if update.type == "assignment_expression" and text(update.child_by_field_name("operator")) == "+=" and \
            text(unparen(update.child_by_field_name("left"))) == counter:
        return symbols.poly(update.child_by_field_name("right"))
    return None


def loop_nest(outer: Node, read: Callable[[Node, list[T]], T | None]) -> list[T]:
    """What `read` makes of `outer` and of the loops nested in it, each the whole body of the one
    around it (`for (..) for (..)`, `for (..) { for (..) {..} }`), up to the first it refuses;
    `read` also sees what it made of the loops around."""
    found: list[T] = []
    current: Node | None = outer
    while current is not None and current.type == "for_statement":
        item = read(current, found)
        if item is None:
            break
        found.append(item)
        inner = named_statements(current.child_by_field_name("body"))
        current = inner[0] if len(inner) == 1 and inner[0].type == "for_statement" else None
    return found


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
    nest = _nest(statements[-1], symbols)
    if nest is None:
        return source
    loops, body = nest
    declarations = statements[:-1]
    declared = {name: index for index, statement in enumerate(declarations) for name in _declared(statement)}
    if any(loop.counter in declared for loop in loops):
        return source  # the loop's counter shadows a local: hoisting it would redeclare the name
    headers = [f"{loop.type} {loop.counter} = {text(loop.start)};" for loop in loops]
    conditions = [f"({loop.counter} < {text(loop.bound)})" for loop in loops]
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


def _words(code: str) -> set[str]:
    """The identifiers of a piece of code (parsed as a statement list)."""
    tree = make_parser().parse(("void f() {" + code + "}").encode())
    return {text(n) for n in walk(tree.root_node) if n.type == "identifier"}


def _nest(loop: Node, symbols: Symbols) -> tuple[list[CountedLoop], Node] | None:
    """(the loops, the innermost body) of a nest of grid-stride loops over distinct axes, each
    loop the whole body of the one around it, whose body may run as a guard's."""
    loops = loop_nest(loop, lambda node, outer: _guardable(node, symbols, {o.axis for o in outer}))
    if not loops:
        return None
    # the innermost body; a single loop in it (not one of the nest) unwrapped from its braces
    inner = named_statements(loops[-1].body)
    body = inner[0] if len(inner) == 1 and inner[0].type == "for_statement" else loops[-1].body
    if body is None:
        return None
    counters = [read.counter for read in loops]
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
    return loops, body


def _guardable(loop: Node, symbols: Symbols, taken: set[str | None]) -> CountedLoop | None:
    """`for (T i = E; i < N; i += S)` with E the global index along an axis not in `taken`, plus
    a constant, and S its thread count; N must not depend on i, on memory or on the thread."""
    read = counted_loop(loop, symbols)
    if read is None or read.comparison != "<" or read.axis is None or read.axis in taken:
        return None
    # the first point may be offset by a constant (`gid + 1` for an interior): each thread still
    # runs once exactly when the launch covers the guarded range
    if read.offset.atoms():
        return None
    bound_poly = symbols.poly(read.bound)
    if read.counter in {text(n) for n in walk(read.bound) if n.type == "identifier"} or \
            bound_poly.memory_dependent or bound_poly.thread_dependent:
        return None
    return read
