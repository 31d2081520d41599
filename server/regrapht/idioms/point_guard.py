"""The guard of a point kernel: each coordinate's bounds, and a 1-D index decoded into coordinates.

`GuardBounds.bounds` reads `if (x < W && y < H)` (or the early-return form `if (x >= W || ...)
return;`) into a `Bound` per coordinate; a coordinate the guard leaves open may range over its
grid extent. `linearise` recognises coordinates decoded from one thread index in a mixed radix
(`c = t % C`, `w = (t / C) % W`, `n = t / (C * W)`) and re-binds them as coordinates of their
own, with the index re-defined from them (`LinearIndex`).
"""

from __future__ import annotations

from typing import NamedTuple

from tree_sitter import Node

from regrapht.cuda.affine import Poly, exact_quotient, polynomial_quotient
from regrapht.cuda.nodes import node_text, walk
from regrapht.idioms.point_model import AXES, Bound, Coordinate, LinearIndex
from regrapht.idioms.point_values import NotPointwise, PointValues, expression_poly, strip


class GuardBounds:
    """Reads a guard's comparisons into bounds over the coordinates of `values`."""

    def __init__(self, values: PointValues, block: tuple[int, int, int] | None, grid: tuple[str, ...] | None) -> None:
        self.values = values
        self.block = block
        self.grid = grid

    def bounds(self, guard: Node, negated: bool) -> dict[str, Bound]:
        """Per coordinate, its bounds from a conjunction (`!negated`) or disjunction of negated
        comparisons (`negated`, the early-return form)."""
        join = "||" if negated else "&&"
        terms: list[Node] = []
        stack: list[Node] = [guard]
        while stack:
            node = strip(stack.pop())
            if node is None:
                raise NotPointwise
            if node.type == "binary_expression" and node_text(node.child_by_field_name("operator")) == join:
                stack.extend((node.child_by_field_name("right"), node.child_by_field_name("left")))  # type: ignore[arg-type]
                continue
            terms.append(node)
        lower: dict[str, str] = {}
        upper: dict[str, str] = {}
        above_zero: set[str] = set()
        names = {c.name for c in self.values.coordinates}
        for term in terms:
            if term.type != "binary_expression":
                raise NotPointwise
            op = node_text(term.child_by_field_name("operator"))
            left, right = term.child_by_field_name("left"), term.child_by_field_name("right")
            if left is None or right is None:
                raise NotPointwise
            flip = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}
            if op == ("==" if negated else "!=") and self._is_zero_test(left, right):
                # `if (x == 0 || ...) return;`: a coordinate is a thread id (>= 0), so x >= 1
                above_zero.add(node_text(strip(left if node_text(strip(left)) in names else right)))
                continue
            if op not in flip:
                raise NotPointwise
            moved = self._moved_coordinate(left)
            if moved is None:
                left, right, op = right, left, flip[op]
                moved = self._moved_coordinate(left)
            if moved is None:
                raise NotPointwise
            coordinate, shift = moved
            if negated:  # `x >= W` returns, so the work has `x < W`
                op = {"<": ">=", ">=": "<", ">": "<=", "<=": ">"}[op]
            bound = self.values.bound_text(right)
            if shift:  # `i + 1 >= n`: a bound on `i` moved by the constant (`i >= n - 1`)
                bound = f"({bound}) {'-' if shift > 0 else '+'} {abs(shift)}"
            if op == "<":
                upper[coordinate] = bound
            elif op == "<=":
                upper[coordinate] = f"{bound} + 1"
            elif op == ">=":
                lower[coordinate] = bound
            else:
                lower[coordinate] = f"{bound} + 1"
        for coordinate in above_zero:
            other = expression_poly(lower[coordinate], self.values.constants) if coordinate in lower else None
            if coordinate in lower and (other is None or other.constant is None or other.constant < 1):
                raise NotPointwise  # two lower bounds, not known which is the tighter
            lower.setdefault(coordinate, "1")
        for unbounded in self.values.coordinates:
            if unbounded.name not in upper:
                extent = self._grid_extent(unbounded.axis)
                if extent is not None:
                    upper[unbounded.name] = extent
        if set(upper) != names:
            raise NotPointwise  # a coordinate with no upper bound: its extent is the launch's
        # in the coordinates' order, not the set's: guards built from the bounds read the same every run
        return {c.name: Bound(lower.get(c.name, "0"), upper[c.name]) for c in self.values.coordinates}

    def _is_zero_test(self, left: Node, right: Node) -> bool:
        """`c == 0` or `0 == c` for a coordinate `c`."""
        names = {c.name for c in self.values.coordinates}
        return (node_text(strip(left)) in names and self.values.poly(right) == Poly.const(0)) or \
            (node_text(strip(right)) in names and self.values.poly(left) == Poly.const(0))

    def _moved_coordinate(self, node: Node | None) -> tuple[str, int] | None:
        """`(c, k)` when `node` is a coordinate `c` plus a constant `k` (`x`, `i + 1`, `(y - 2)`),
        with integer arithmetic only (no casts that could change the comparison's type)."""
        node = strip(node)
        if node is None or any(n.type in ("cast_expression", "call_expression", "subscript_expression")
                               for n in walk(node)):
            return None
        value = self.values.poly(node)
        for coordinate in self.values.coordinates:
            shift = (value - Poly.atom(coordinate.name)).constant
            if shift is not None and (shift == 0 or node.type == "binary_expression"):
                return coordinate.name, shift
        return None

    def _grid_extent(self, axis: str) -> str | None:
        """The grid's extent along `axis` when a coordinate on it comes from `blockIdx` alone
        (block size 1) and the extent is an expression of scalar parameters and literals."""
        index = AXES.index(axis)
        if self.block is None or self.block[index] != 1 or self.grid is None:
            return None
        extent = self.grid[index] if index < len(self.grid) else "1"
        value = expression_poly(extent, self.values.constants)
        scalars = {name for name in self.values.params if name not in self.values.pointers}
        if value is None or not value.atoms() <= scalars:
            return None
        return " ".join(extent.split())


class Decoded(NamedTuple):
    """The coordinates of a mixed-radix index: their bounds, the index, the prelude kept."""

    bounds: dict[str, Bound]
    linear: LinearIndex
    prelude: list[str]
    prelude_nodes: list[Node]


def _size_order(divisor: Poly) -> tuple[int, int]:
    """Sorts a mixed radix's divisors smallest first: 1, 16, W, W - 2, W * H (degree, then the
    leading term's coefficient)."""
    if not divisor.terms:
        return (0, 0)
    lead = max(divisor.terms, key=lambda term: (len(term[0]), term[0]))
    return len(lead[0]), lead[1]


def _divide_poly(total: Poly, divisor: Poly) -> Poly | None:
    """`total / divisor` when it divides exactly (`N*C*(H-2)*(W-2)` by `(H-2)*(W-2)`)."""
    if len(total.terms) == 1:
        return exact_quotient(total, divisor)
    return polynomial_quotient(total, divisor)



class MixedRadix:
    """Recognises coordinates decoded from the x coordinate of `values` (a 1-D index)."""

    def __init__(self, values: PointValues) -> None:
        self.values = values

    def linearise(self, bounds: dict[str, Bound], prelude: list[str], prelude_nodes: list[Node]) -> Decoded | None:
        """Coordinates decoded from a 1-D index `t` by `t % M`, `(t / D) % M` and `t / D` in a
        mixed radix (D of each part = D * M of the previous one, the last part's bound times
        its D = t's bound); None when the declarations are not such a decomposition."""
        index = next(c for c in self.values.coordinates if c.axis == "x")
        others = [c for c in self.values.coordinates if c.axis != "x"]  # (a channel on y: one value per block row)
        bound = bounds[index.name]
        total = expression_poly(bound.upper, self.values.constants)
        if bound.lower != "0" or total is None:
            return None
        parts: list[tuple[str, str, Poly, Poly | None, Node]] = []
        for statement in prelude_nodes:
            type_text = " ".join(node_text(statement.child_by_field_name("type")).split())
            for declarator in statement.children_by_field_name("declarator"):
                value = strip(declarator.child_by_field_name("value"))
                split = self._radix_part(value, index.name)
                if split is not None:
                    parts.append((node_text(declarator.child_by_field_name("declarator")), type_text, *split,
                                  statement))
        if len(parts) < 2:
            return None
        parts.sort(key=lambda part: _size_order(part[2]))
        divisor = Poly.const(1)
        for position, (_, _, part_divisor, modulus, _) in enumerate(parts):
            last = position == len(parts) - 1
            if part_divisor != divisor or (modulus is None) != last:
                return None
            if modulus is not None:
                product = divisor * modulus
                if product is None:
                    return None
                divisor = product
        quotient = _divide_poly(total, divisor)
        if quotient is None:
            return None
        # Every declaration holding a part must hold only parts (it is replaced by the binding).
        holders = {id(part[4]) for part in parts}
        named = {part[0] for part in parts}
        for statement in prelude_nodes:
            if id(statement) in holders and any(node_text(d.child_by_field_name("declarator")) not in named
                                                for d in statement.children_by_field_name("declarator")):
                return None
        kept = [(t, n) for t, n in zip(prelude, prelude_nodes, strict=True) if id(n) not in holders]
        terms = []
        new_bounds: dict[str, Bound] = {c.name: bounds[c.name] for c in others}
        self.values.coordinates = []
        for name, type_text, part_divisor, modulus, _ in parts:
            self.values.coordinates.append(Coordinate(name, type_text, "x"))
            self.values.env[name] = Poly.atom(name)
            terms.append(name if part_divisor.constant == 1 else f"{name} * ({part_divisor.text()})")
            new_bounds[name] = Bound("0", (modulus or quotient).text())
        self.values.coordinates.extend(others)
        definition = f"{index.type.replace('const ', '')} {index.name} = {' + '.join(reversed(terms))};"
        linear = LinearIndex(index.name, index.type, bound.upper, definition)
        decoded = Poly.const(0)
        for name, _, part_divisor, _, _ in parts:
            decoded = decoded + Poly.of({tuple(sorted((name, *m))): v for m, v in part_divisor.terms})
        self.values.env[index.name] = decoded
        prelude = [definition] + [t for t, _ in kept]
        prelude_nodes = [n for _, n in kept]
        for statement in prelude_nodes:  # re-read the other locals with the index re-defined
            for declarator in statement.children_by_field_name("declarator"):
                target = declarator.child_by_field_name("declarator")
                if target is not None:
                    self.values.env[node_text(target)] = self.values.poly(declarator.child_by_field_name("value"))
        return Decoded(new_bounds, linear, prelude, prelude_nodes)

    def _radix_part(self, value: Node | None, index: str) -> tuple[Poly, Poly | None] | None:
        """(D, M) for `index % M` (D = 1), `(index / D) % M`, `index / D` (M None)."""
        if value is None or value.type != "binary_expression":
            return None
        op = node_text(value.child_by_field_name("operator"))
        left, right = strip(value.child_by_field_name("left")), value.child_by_field_name("right")
        if right is None or left is None or op not in ("/", "%"):
            return None
        amount = self._scalar_poly(right)
        if amount is None:
            return None
        if left.type == "identifier" and node_text(left) == index:
            return (Poly.const(1), amount) if op == "%" else (amount, None)
        if op == "%" and left.type == "binary_expression" and node_text(left.child_by_field_name("operator")) == "/":
            inner_left = strip(left.child_by_field_name("left"))
            divisor = self._scalar_poly(left.child_by_field_name("right"))
            if inner_left is not None and inner_left.type == "identifier" and node_text(inner_left) == index and \
                    divisor is not None:
                return divisor, amount
        return None

    def _scalar_poly(self, node: Node | None) -> Poly | None:
        """A polynomial of scalars (`n`, `C * W`, `16`, an extent `OW = W - 2`) whose one term, or
        whose term of highest degree, is positive; else None."""
        if node is None:
            return None
        poly = self.values.poly(node)
        if not poly.terms or not poly.atoms() <= set(self.values.params):
            return None
        top = max(poly.terms, key=lambda term: (len(term[0]), term[0]))
        return poly if top[1] > 0 else None

