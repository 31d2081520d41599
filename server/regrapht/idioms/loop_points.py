"""Loops that visit the points of a domain one by one, written as launch coordinates.

Two common ways of writing a point kernel hide its points in a loop:

- a *grid-stride loop* `for (int y = blockIdx.y * blockDim.y + threadIdx.y + F; y < L;
  y += blockDim.y * gridDim.y)`: whatever the launch, the threads together visit every `y` in
  `[F, L)` once;
- a *march*: each thread of a 2-D launch loops over the third coordinate,
  `for (int z = A; z < L; z++)` with `A`, `L` scalars (the "2.5-D" naive stencil).

Both are read by `grid_stride.counted_loop` (the one reading of a loop's header: counter,
start, step, bound; a grid-stride loop when the step is the launch's thread count along an axis)
and walked by `grid_stride.loop_nest`; what this conversion requires of them is decided here.

`loops_as_points` writes such loops (the whole remaining work of the kernel, nested loops
visiting one coordinate each) as coordinates of a launch: `int y = blockIdx.y * blockDim.y +
threadIdx.y;` with `F <= y && y < L` joined to the kernel's guard, a march on a launch axis the
kernel does not use. The result is the same program when the loop's iterations are independent,
which is checked here on the syntax tree: no `break`, `return` or `goto` in the loop, no
`continue` of the loop itself, every local the body assigns declared in the body (nothing carried
from one iteration to the next), and every array the body writes never read in it. That the
iterations write distinct elements is checked by the caller on the point-kernel view
(`distinct_writes`), where the written indices are polynomials over the coordinates.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.idioms.grid_stride import counted_loop, loop_nest
from regrapht.idioms.pointwise import AXES, Bound, PointKernel, coefficient_of, expression_poly
from regrapht.idioms.syntax import (
    BUILTINS,
    Symbols,
    kernel_syntax,
    named_statements,
    text,
    unparen,
    updated_target,
    walk,
)

LOOPS = ("for_statement", "while_statement", "do_statement")


@dataclass(frozen=True)
class LoopPoints:
    source: str  # the whole file with the kernel's loops written as coordinates
    axes: Mapping[str, str]  # converted loop variable -> its launch axis
    marched: str | None  # the axis a march was put on (the launch grows along it), if any


@dataclass(frozen=True)
class _Loop:
    node: Node
    variable: str
    type: str
    axis: str
    first: str  # `F` of `F <= v`, "" when it is 0 (the thread id's own lower end)
    last: str  # `v < L` or `v <= L` as written (scalars only)
    inclusive: bool  # `v <= L`
    march: bool


def loops_as_points(source: str, kernel: str, block: tuple[int, int, int] | None,
                    grid: tuple[str, ...]) -> LoopPoints | None:
    """The file with the kernel's point-visiting loops written as launch coordinates (see the
    module's docstring), or None when the kernel has no such loop or its iterations may depend
    on each other."""
    syntax = kernel_syntax(source, kernel)
    if syntax is None or block is None:
        return None
    symbols = Symbols(syntax.constants)
    scalars = set(syntax.scalars)
    statements = syntax.statements()
    if not statements:
        return None
    guard: Node | None = None  # an early-return guard before the loop
    container = None  # the guard `if` whose block ends with the loop
    visible: set[str] = set()  # scalar locals the new guard terms may name (declared before it)
    for statement in statements[:-1]:
        if statement.type == "declaration":
            _define(symbols, statement)
            if guard is None:
                visible |= _scalar_locals(symbols, statement, scalars)
        elif statement.type == "if_statement" and guard is None and _returns(statement):
            guard = statement
        elif statement.type not in ("comment",):
            return None
    outer = statements[-1]
    if outer.type == "if_statement" and guard is None and outer.child_by_field_name("alternative") is None:
        container = outer
        inner = named_statements(outer.child_by_field_name("consequence"))
        for statement in inner[:-1]:
            if statement.type != "declaration":
                return None
            _define(symbols, statement)
            visible |= _scalar_locals(symbols, statement, scalars)
        if not inner:
            return None
        outer = inner[-1]
    used_axes = {text(n.child_by_field_name("field"))[-1:] for n in walk(syntax.function)
                 if n.type == "field_expression" and text(n.child_by_field_name("argument")) in BUILTINS}
    loops = loop_nest(outer, lambda node, around: _loop(node, symbols, scalars, visible, syntax.constants, used_axes,
                                                        block, grid, around))
    if not loops:
        return None
    body_node = loops[-1].node.child_by_field_name("body")
    if body_node is None or \
            not independent_iterations({loop.variable for loop in loops}, loops[0].node, body_node, syntax.function):
        return None
    data = syntax.source
    body_text = text(body_node) if body_node.type == "compound_statement" else "{ " + text(body_node) + " }"
    entering = [f"{loop.variable} >= {loop.first}" for loop in loops if loop.first] + \
        [f"{loop.variable} {'<=' if loop.inclusive else '<'} {loop.last}" for loop in loops]
    leaving = [f"{loop.variable} < {loop.first}" for loop in loops if loop.first] + \
        [f"{loop.variable} {'>' if loop.inclusive else '>='} {loop.last}" for loop in loops]
    edits: list[tuple[int, int, str]] = []
    # the loops' ranges join the guard: an early return leaves outside them, a guard block
    # runs inside them; without a guard they become one
    joined = (guard, " || ", leaving) if guard is not None else (container, " && ", entering)
    if joined[0] is not None:
        condition = joined[0].child_by_field_name("condition")
        assert condition is not None
        edits.append((condition.start_byte, condition.end_byte,
                      f"(({text(unparen_condition(condition))}){joined[1]}{joined[1].join(joined[2])})"))
        edits.append((outer.start_byte, outer.end_byte, body_text))
    else:
        edits.append((outer.start_byte, outer.end_byte, f"if ({' && '.join(entering)}) {body_text}"))
    # Locals only the loop headers used (`int stride = blockDim.x * gridDim.x;`) go with them.
    headers = {id(loop.node) for loop in loops}
    for statement in statements[:-1]:
        if statement.type == "declaration" and _only_in_headers(statement, syntax.function, headers, loops):
            edits.append((statement.start_byte, statement.end_byte, ""))
    opening = syntax.body.children[0]
    # The thread id in the loop variable's type (a 64-bit index keeps its 64-bit product).
    coordinates = " ".join(f"{loop.type} {loop.variable} = ({loop.type})blockIdx.{loop.axis} * blockDim.{loop.axis} + "
                           f"threadIdx.{loop.axis};" for loop in loops)
    edits.append((opening.end_byte, opening.end_byte, "\n    " + coordinates))
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        data = data[:start] + replacement.encode() + data[end:]
    marched = next((loop.axis for loop in loops if loop.march), None)
    return LoopPoints(data.decode(), {loop.variable: loop.axis for loop in loops}, marched)


def unparen_condition(condition: Node) -> Node:
    """The expression of an `if`'s condition clause."""
    inner = condition.child_by_field_name("value") if condition.type == "condition_clause" else condition
    stripped = unparen(inner)
    return stripped if stripped is not None else condition


def _define(symbols: Symbols, declaration: Node) -> None:
    for declarator in declaration.children_by_field_name("declarator"):
        if declarator.type == "init_declarator":
            target = declarator.child_by_field_name("declarator")
            if target is not None and target.type == "identifier":
                symbols.define(text(target), declarator.child_by_field_name("value"))


def _returns(statement: Node) -> bool:
    consequence = statement.child_by_field_name("consequence")
    inner = named_statements(consequence)
    return statement.child_by_field_name("alternative") is None and len(inner) == 1 and \
        inner[0].type == "return_statement" and not inner[0].named_children


def _loop(node: Node, symbols: Symbols, scalars: set[str], visible: set[str], constants: Mapping[str, int],
          used_axes: set[str],
          block: tuple[int, int, int], grid: tuple[str, ...], outer: list[_Loop]) -> _Loop | None:
    read = counted_loop(node, symbols)
    if read is None:
        return None
    if any(w in read.type for w in ("float", "double", "auto")) or \
            any(t.type == "type_qualifier" for t in read.declaration.children):
        return None
    last = _scalar_text(read.bound, symbols, scalars, visible | set(constants))
    if last is None:
        return None
    inclusive = read.comparison == "<="
    if read.axis is not None:
        # a grid-stride loop: from the thread id (plus scalars) on, along an axis not yet converted
        if read.axis in {loop.axis for loop in outer} or not _scalar(read.offset, scalars):
            return None
        first = "" if read.offset.constant == 0 else _poly_text(read.offset)
        return _Loop(node, read.counter, read.type, read.axis, first, last, inclusive, False)
    if read.step != Poly.const(1) or not _scalar(read.first, scalars) or any(loop.march for loop in outer):
        return None
    # A march: on the last launch axis the kernel does not use, one thread deep, one block long.
    taken = {loop.axis for loop in outer}
    for axis in reversed(AXES):
        index = AXES.index(axis)
        if axis in used_axes or axis in taken or block[index] != 1 or \
                (index < len(grid) and grid[index].strip() != "1"):
            continue
        first = "" if read.first.constant == 0 else _poly_text(read.first)
        return _Loop(node, read.counter, read.type, axis, first, last, inclusive, True)
    return None


def _scalar(poly: Poly, scalars: set[str]) -> bool:
    return poly.atoms() <= scalars


def _poly_text(poly: Poly) -> str:
    return f"({poly.text()})"


def _scalar_text(node: Node, symbols: Symbols, scalars: set[str], names: set[str]) -> str | None:
    """The bound as written when it names scalars, constants and scalar locals in scope only, else
    its polynomial over scalars (locals resolved), else None (a bound read from memory or from
    the thread)."""
    spelled = {text(n) for n in walk(node) if n.type == "identifier"}
    if spelled <= scalars | names and \
            not any(n.type in ("subscript_expression", "call_expression", "field_expression") for n in walk(node)):
        return f"({text(node)})"
    poly = symbols.poly(node)
    return _poly_text(poly) if _scalar(poly, scalars) else None


def _scalar_locals(symbols: Symbols, declaration: Node, scalars: set[str]) -> set[str]:
    """The locals `declaration` defines from scalars and literals only."""
    found = set()
    for declarator in declaration.children_by_field_name("declarator"):
        target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" else None
        if target is not None and target.type == "identifier" and text(target) in symbols.env and \
                _scalar(symbols.env[text(target)], scalars):
            found.add(text(target))
    return found


def independent_iterations(variables: set[str], outer_loop: Node, body: Node, function: Node) -> bool:
    """Whether the iterations of the loop nest `outer_loop` (counters `variables`, innermost body
    `body`) cannot see each other (see the module docstring)."""
    declared_inside = set()
    for node in walk(body):
        if node.type == "init_declarator" or node.type == "declaration":
            for declarator in ([node] if node.type == "init_declarator" else node.children_by_field_name("declarator")):
                target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" \
                    else declarator
                if target is not None and target.type == "identifier":
                    declared_inside.add(text(target))
    declared_outside = {text(n) for n in walk(function) if n.type == "identifier" and
                        not (outer_loop.start_byte <= n.start_byte < outer_loop.end_byte)}
    written: set[str] = set()
    for node in walk(body):
        if node.type in ("break_statement", "return_statement", "goto_statement"):
            return False
        if node.type == "continue_statement" and not _continues_inner_loop(node, body):
            return False
        if node.type in ("assignment_expression", "update_expression"):
            target = updated_target(node)
            if target is None:
                return False
            if target.type == "identifier":
                name = text(target)
                if name in variables or name not in declared_inside or name in declared_outside:
                    return False  # a value carried from one iteration to the next
            elif target.type == "subscript_expression":
                array = unparen(target.child_by_field_name("argument"))
                if array is None or array.type != "identifier":
                    return False
                written.add(text(array))
            else:
                return False
    # An array the loop writes is never read in it (not even the element it writes, `+=`).
    for node in walk(body):
        if node.type == "identifier" and text(node) in written:
            subscript = node.parent
            assignment = subscript.parent if subscript is not None else None
            while assignment is not None and assignment.type == "parenthesized_expression":
                assignment = assignment.parent
            if subscript is None or subscript.type != "subscript_expression" or assignment is None or \
                    assignment.type != "assignment_expression" or \
                    text(assignment.child_by_field_name("operator")) != "=" or \
                    unparen(assignment.child_by_field_name("left")) != subscript:
                return False
    return True


def _continues_inner_loop(node: Node, body: Node) -> bool:
    current = node.parent
    while current is not None and current != body:
        if current.type in LOOPS:
            return True
        current = current.parent
    return False


def _only_in_headers(declaration: Node, function: Node, headers: set[int], loops: list[_Loop]) -> bool:
    """A declaration of locals from the launch geometry that only the converted loops' headers use."""
    if not any(n.type == "field_expression" and text(n.child_by_field_name("argument")) in BUILTINS
               for n in walk(declaration)):
        return False
    names = set()
    for declarator in declaration.children_by_field_name("declarator"):
        target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" else declarator
        if target is None or target.type != "identifier":
            return False
        names.add(text(target))
    for node in walk(function):
        if node.type != "identifier" or text(node) not in names or declaration.start_byte <= node.start_byte < \
                declaration.end_byte:
            continue
        if not any(_in_header(node, loop.node) for loop in loops):
            return False
    return True


def _in_header(node: Node, loop: Node) -> bool:
    body = loop.child_by_field_name("body")
    inside = loop.start_byte <= node.start_byte < loop.end_byte
    return inside and (body is None or not body.start_byte <= node.start_byte < body.end_byte)


def distinct_writes(view: PointKernel, axes: Mapping[str, str]) -> bool:
    """Whether the points one thread of the original visited (all values of the converted
    coordinates, the others fixed) write distinct elements: every write's index is linear in the
    converted coordinates with scalar coefficients `a_i` that form a mixed radix over their
    ranges, `a_1 >= 1` and `a_{i+1} >= 1 + sum_{j <= i} a_j (extent_j - 1)` for every size of the
    domain that is not empty (scalars bounded below by a coordinate's range count as >= 1)."""
    positive = _positive_scalars(view)
    extents = [e for e in (_extent(b) for b in view.bounds.values()) if e is not None]
    scalars = {name for name in view.params if name not in view.pointers}
    for access in view.accesses:
        if not access.write:
            continue
        radix: list[tuple[Poly, Poly]] = []  # (coefficient, extent)
        for variable in axes:
            coefficient = coefficient_of(access.index, variable)
            if not coefficient.terms or not coefficient.atoms() <= scalars:
                return False
            rest = access.index - coefficient * Poly.atom(variable)  # type: ignore[operator]
            if any(variable in monomial for monomial, _ in rest.terms) or \
                    any(a.startswith("~") and variable in a for a in rest.atoms()):
                return False  # the coordinate also in a non-linear or opaque term
            extent = _extent(view.bounds[variable])
            if extent is None:
                return False
            radix.append((coefficient, extent))
        # smallest stride first (fewest atoms, then the constant: `1` < `nx` < `nx * ny`)
        radix.sort(key=lambda part: (max(len(m) for m, _ in part[0].terms), part[0].terms[-1][1]))
        covered = Poly.const(0)  # the largest distance the smaller parts span
        for coefficient, extent in radix:
            if not _at_least_one(coefficient - covered, positive, extents):
                return False
            grown = coefficient * (extent - Poly.const(1))
            if grown is None:
                return False
            covered = covered + grown
    return True


def _extent(bound: Bound) -> Poly | None:
    lower, upper = expression_poly(bound.lower), expression_poly(bound.upper)
    return upper - lower if lower is not None and upper is not None else None


def _positive_scalars(view: PointKernel) -> set[str]:
    """Scalars at least 1 whenever the domain is not empty: `p` with a coordinate ranging over
    `[L, U)`, `L >= 0` a constant and `U <= p` (`x < nx - 1` gives nx >= 2)."""
    found = set()
    for bound in view.bounds.values():
        lower, upper = expression_poly(bound.lower), expression_poly(bound.upper)
        if lower is None or upper is None or lower.constant is None or lower.constant < 0:
            continue
        for atom in upper.atoms():
            difference = (upper - Poly.atom(atom)).constant
            if difference is not None and difference <= 0 and atom in view.params:
                found.add(atom)
    return found


def _at_least_one(poly: Poly, positive: set[str], extents: list[Poly]) -> bool:
    """Whether `poly >= 1` whenever the domain is not empty: every non-constant term has a
    positive coefficient and `positive` atoms (each >= 1) and their least sum plus the constant
    is >= 1; or `poly` is a product of up to three coordinate extents (each >= 1: `OH * OW`)
    plus such terms."""
    if _least(poly, positive) >= 1:
        return True
    products = [Poly.const(1)]
    for _ in range(3):
        grown = [p * e for p in products for e in extents]
        products = [p for p in grown if p is not None]
        if any(_least(poly - product, positive) >= 0 for product in products):
            return True
    return False


def _least(poly: Poly, positive: set[str]) -> int:
    """A lower bound of `poly` for `positive` atoms >= 1 (-1 when there is none this simple)."""
    least = 0
    for monomial, value in poly.terms:
        if monomial and (value < 0 or not set(monomial) <= positive):
            return -1
        least += value
    return least
