"""What the names and expressions of a point kernel mean: the evaluator, clamps, conditions.

`PointValues` is the integer evaluator (`intexpr.PolyFolder`) over a point kernel's locals,
parameters and coordinates: a name with no definition is opaque, and a clamp of a coordinate
(`max(x - 1, 0)`, `y > 0 ? y - 1 : 0`) becomes an opaque atom whose `Clamp` it records. It also
reads conditions as `Condition`s and writes bounds as launch-expressible texts (scalars and
literals only). `expression_poly` folds a standalone expression text the same way.
"""

from __future__ import annotations

from collections.abc import Mapping

from tree_sitter import Node

from regrapht.cuda.affine import Poly, opaque_atom
from regrapht.cuda.intexpr import PolyFolder, parse_expression
from regrapht.cuda.nodes import node_text, walk
from regrapht.idioms.point_model import Bound, Clamp, Condition, Coordinate


class NotPointwise(Exception):
    """Internal: the kernel leaves the recognised shape (caught in `point_kernel` only)."""


def strip(node: Node | None) -> Node | None:
    """`node` without parentheses, or the expression of a condition clause."""
    while node is not None and node.type in ("parenthesized_expression", "condition_clause") and node.named_children:
        node = node.named_children[-1] if node.type == "condition_clause" else node.named_children[0]
    return node


class PointValues(PolyFolder):
    """The evaluator and the names of one point kernel (filled in by the builder as it reads)."""

    def __init__(self, constants: Mapping[str, int]) -> None:
        super().__init__(constants)
        self.env: dict[str, Poly] = {}
        self.params: dict[str, str] = {}  # parameter name -> type text
        self.pointers: dict[str, str] = {}  # pointer parameter name -> element type
        self.coordinates: list[Coordinate] = []
        self.scalar_locals: dict[str, Node] = {}  # locals defined from scalars and literals only
        self.clamps: dict[str, Clamp] = {}  # opaque atoms that are clamped coordinates
        self.bounds: dict[str, Bound] = {}  # per coordinate, once the guard is read

    # ------------------------------------------------------------------ the evaluator's scope
    def poly(self, node: Node | None, depth: int = 0) -> Poly:
        return super().poly(strip(node), depth)

    def local_value(self, name: str) -> Poly | None:
        return self.env.get(name)

    def unknown_name(self, name: str, node: Node) -> Poly:
        return self.opaque(node)

    def opaque(self, node: Node) -> Poly:
        memory = any(n.type in ("subscript_expression", "pointer_expression") for n in walk(node))
        dims = "".join(sorted({node_text(n.child_by_field_name("field"))[-1:] for n in walk(node)
                               if n.type == "field_expression" and node_text(n.child_by_field_name("argument"))
                               == "threadIdx"}))
        return Poly.atom(opaque_atom(" ".join(node_text(node).split()), dims, memory))


    def extension(self, node: Node, depth: int) -> Poly | None:
        if node.type not in ("call_expression", "conditional_expression"):
            return None
        clamp = self._clamp(node)
        if clamp is None:
            return None
        atom = self.opaque(node)
        self.clamps[atom.terms[0][0][0]] = clamp
        return atom

    # ------------------------------------------------------------------ clamps
    def _clamp(self, node: Node) -> Clamp | None:
        """The clamp `node` applies to a coordinate moved by a constant (`max(x - 1, 0)`,
        `min(max(x + k, 0), W - 1)`, `y > 0 ? y - 1 : 0`, `x < W - 1 ? x + 1 : W - 1`), or None."""
        if node.type == "call_expression":
            name = node_text(node.child_by_field_name("function"))
            arguments = node.child_by_field_name("arguments")
            args = [a for a in (arguments.named_children if arguments else []) if a.type != "comment"]
            if name not in ("min", "max") or len(args) != 2:
                return None
            for inner, bound in (args, args[::-1]):
                clamped = self._clamped(inner)
                text = self._clamp_bound(bound)
                if clamped is None or text is None:
                    continue
                # `max(x - 1, 0)` on unsigned values wraps instead of clamping: signed only
                if any(word in t for t in self._types_of(clamped.coordinate, bound) for word in ("unsigned", "size_t")):
                    return None
                if name == "max" and clamped.lower is None and clamped.upper is None:
                    return Clamp(clamped.coordinate, clamped.shift, text, None)
                if name == "min" and clamped.upper is None:
                    return Clamp(clamped.coordinate, clamped.shift, clamped.lower, text)
            return None
        condition = node.child_by_field_name("condition")
        consequence, alternative = node.child_by_field_name("consequence"), node.child_by_field_name("alternative")
        terms = self.conditions(condition) if condition is not None else None
        if not terms or len(terms) != 1 or consequence is None or alternative is None:
            return None
        term = terms[0]
        # the condition as `E >= 0` over integers
        difference = term.left - term.right
        normal = {">=": difference, ">": difference - Poly.const(1), "<=": -difference,
                  "<": -difference - Poly.const(1)}[term.op]
        for moved_node, bound_node, taken in ((consequence, alternative, True), (alternative, consequence, False)):
            moved = self._clamped(moved_node)
            text = self._clamp_bound(bound_node)
            if moved is None or moved.lower is not None or moved.upper is not None or text is None:
                continue
            value = Poly.atom(moved.coordinate) + Poly.const(moved.shift)
            limit = self.poly(bound_node)
            # max(value, limit) takes the value when value - limit >= 0, the limit when
            # limit - value - 1 >= 0; min(value, limit) the value when limit - value >= 0, the
            # limit when value - limit - 1 >= 0.
            one = Poly.const(1)
            if normal == (value - limit if taken else limit - value - one):
                return Clamp(moved.coordinate, moved.shift, text, None)
            if normal == (limit - value if taken else value - limit - one):
                return Clamp(moved.coordinate, moved.shift, None, text)
        return None

    def _clamped(self, node: Node) -> Clamp | None:
        """`node` as a coordinate moved by a constant (a clamp without bounds), or an inner clamp."""
        value = self.poly(node)
        if len(value.terms) == 1 and value.terms[0][1] == 1 and len(value.terms[0][0]) == 1 and \
                value.terms[0][0][0] in self.clamps:
            return self.clamps[value.terms[0][0][0]]
        for coordinate in self.coordinates:
            shift = (value - Poly.atom(coordinate.name)).constant
            if shift is not None:
                return Clamp(coordinate.name, shift, None, None)
        return None

    def _clamp_bound(self, node: Node) -> str | None:
        """A clamp's bound as a launch-expressible text, or None when it is not one."""
        scalars = {name for name in self.params if name not in self.pointers}
        if not self.poly(node).atoms() <= scalars:
            return None
        try:
            return self.bound_text(node)
        except NotPointwise:
            return None

    def _types_of(self, coordinate: str, bound: Node) -> list[str]:
        found = self.coordinate_named(coordinate)
        types = [found.type] if found is not None else ["unsigned"]
        return types + [self.params[n] for n in (node_text(i) for i in walk(bound) if i.type == "identifier")
                        if n in self.params]

    def coordinate_named(self, name: str) -> Coordinate | None:
        return next((c for c in self.coordinates if c.name == name), None)

    # ------------------------------------------------------------------ launch-expressible texts
    def bound_text(self, node: Node) -> str:
        """A bound's text over scalars and literals only (so a launch can use it): `#define`d
        constants by their values, locals declared before the guard from scalars (`OW = W - 2`) by
        their definitions, integer casts (`(size_t)nx`) by their operands (a launch expression has
        no casts; the kernel's own guard keeps them)."""
        return " ".join(self._scalar_text(node, 0).split())

    def _scalar_text(self, node: Node, depth: int) -> str:
        if depth > 8:
            raise NotPointwise
        data = node.text or b""
        edits: list[tuple[int, int, str]] = []
        stack = [node]
        while stack:
            inner = stack.pop()
            kind = inner.type
            if kind in ("subscript_expression", "call_expression", "pointer_expression", "field_expression",
                        "assignment_expression", "update_expression"):
                raise NotPointwise
            if kind == "cast_expression":
                type_text = node_text(inner.child_by_field_name("type"))
                value = inner.child_by_field_name("value")
                if value is None or any(word in type_text for word in ("float", "double", "half", "*")):
                    raise NotPointwise
                edits.append((inner.start_byte, inner.end_byte, f"({self._scalar_text(value, depth + 1)})"))
                continue
            if kind == "identifier":
                name = node_text(inner)
                if name in self.pointers:
                    raise NotPointwise
                if name in self.constants:
                    edits.append((inner.start_byte, inner.end_byte, str(self.constants[name])))
                elif name in self.scalar_locals:
                    edits.append((inner.start_byte, inner.end_byte,
                                  f"({self._scalar_text(self.scalar_locals[name], depth + 1)})"))
                elif name not in self.params:
                    raise NotPointwise
                continue
            stack.extend(inner.children)
        for start, end, replacement in sorted(edits, reverse=True):
            data = data[:start - node.start_byte] + replacement.encode() + data[end - node.start_byte:]
        return data.decode()

    # ------------------------------------------------------------------ conditions
    def negated(self, condition: Node) -> tuple[Condition, ...] | None:
        """`!(a < b || c >= d)` as the conjunction `a >= b && c < d`; None for other conditions."""
        return self._comparisons(condition, "||", {"<": ">=", ">=": "<", ">": "<=", "<=": ">"})

    def negated_at_bounds(self, condition: Node) -> tuple[Condition, ...] | None:
        """The negation of a disjunction of comparisons, where a term `c == e` on a coordinate
        may be one of its guard's ends (`c == 0` with `c >= 0`: its negation is `c > 0`; `c == W - 1`
        with `c < W`: `c < W - 1`); None for anything else."""
        return self._comparisons(condition, "||", {"<": ">=", ">=": "<", ">": "<=", "<=": ">"}, equal_at_ends=True)

    def _unequal_at_end(self, left: Node, right: Node) -> Condition | None:
        """`left != right` as a strict bound when `left` is a coordinate and `right` one end of
        its guard range."""
        name = node_text(strip(left))
        bound = self.bounds.get(name)
        if bound is None:
            return None
        value = self.poly(right)
        lower, upper = expression_poly(bound.lower, self.constants), expression_poly(bound.upper, self.constants)
        text = " ".join(node_text(right).split())
        if lower is not None and value == lower:
            return Condition(Poly.atom(name), ">", value, text, name)
        if upper is not None and value == upper - Poly.const(1):
            return Condition(Poly.atom(name), "<", value, text, name)
        return None

    def conditions(self, condition: Node) -> tuple[Condition, ...] | None:
        """A conjunction of comparisons as `Condition`s; None for any other condition."""
        return self._comparisons(condition, "&&", {"<": "<", "<=": "<=", ">": ">", ">=": ">="})

    def _comparisons(self, condition: Node, join: str, operators: Mapping[str, str], *,
                     equal_at_ends: bool = False) -> tuple[Condition, ...] | None:
        """The comparisons joined by `join` in `condition`, each operator mapped by `operators`
        (identity, or negation for a disjunction); with `equal_at_ends`, also `c == e` where `e` is
        an end of coordinate `c`'s guard range, negated to a strict bound; None for any other
        condition or a load."""
        terms: list[Condition] = []
        stack: list[Node | None] = [condition]
        while stack:
            node = strip(stack.pop())
            if node is None or node.type != "binary_expression":
                return None
            op = node_text(node.child_by_field_name("operator"))
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if op == join:
                stack.extend((right, left))
                continue
            if left is None or right is None or \
                    any(n.type in ("subscript_expression", "call_expression") for n in walk(node)):
                return None
            if op in operators:
                terms.append(Condition(self.poly(left), operators[op], self.poly(right),
                                       " ".join(node_text(right).split()), " ".join(node_text(left).split())))
                continue
            term = (self._unequal_at_end(left, right) or self._unequal_at_end(right, left)) \
                if op == "==" and equal_at_ends else None
            if term is None:
                return None
            terms.append(term)
        return tuple(terms)


def expression_poly(expression: str, constants: Mapping[str, int] | None = None) -> Poly | None:
    """The polynomial of a standalone integer expression over named scalars (a launch or bound
    text such as `nx - 1`), or None when it does not parse as one expression."""
    parsed = parse_expression(expression)
    if parsed is None:
        return None
    value = parsed[1]
    values = PointValues(dict(constants or {}))
    names = {node_text(n) for n in walk(value) if n.type == "identifier"}
    values.env.update({name: Poly.atom(name) for name in names})
    return values.poly(value)
