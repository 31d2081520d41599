"""The domain of a batched product: which thread computes which (batch, row, column).

`Domain.finish` cuts every source of the indices (thread and block indices, global ids, batch
loops) into its mixed-radix digits (*leaves*), gives each leaf its role by which operands use
it (batch, row, column), its extent from the guards and the launch (every launch axis wider
than one owned by a used source, each guarded value reached), and reads the store's epilogue,
into a `BatchedProduct`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from tree_sitter import Node

from regrapht.cuda.affine import Poly, exact_quotient
from regrapht.errors import InputError
from regrapht.idioms.batched_model import (
    AXES,
    ELEMENT_TYPES,
    FLOAT_TYPES,
    LEAF_NAMES,
    ROLES,
    BatchedOperand,
    BatchedProduct,
    Epilogue,
    NotBatched,
    Piece,
    ProductWork,
    Reading,
    evaluate,
    substitute,
    times,
)
from regrapht.idioms.batched_work import product_type
from regrapht.idioms.pointwise import PURE_CALLS, coefficient_of, expression_poly
from regrapht.idioms.syntax import (
    text,
)
from regrapht.spec.expr import evaluate_int


class Domain:
    """The domain of `work` in the kernel whose reading is `reading`."""

    def __init__(self, reading: Reading, work: ProductWork) -> None:
        self.reading = reading
        self.work = work
        self.leaf_of_local: dict[str, Poly] = {}
        self.role_of_leaf: dict[str, Poly] = {}

    def finish(self) -> BatchedProduct | None:
        work = self.work
        element = {self.reading.pointers[array] for array in (work.first[0], work.second[0], work.output[0])}
        acc_type = self.reading.types.get(work.acc_type, work.acc_type)
        if len(element) != 1 or next(iter(element)) not in ELEMENT_TYPES or acc_type not in ELEMENT_TYPES:
            return None
        if (acc_type in FLOAT_TYPES) != (next(iter(element)) in FLOAT_TYPES):
            return None  # an int sum of float products (or the reverse) converts at every step
        formed = product_type(self.reading.types, work, next(iter(element)), acc_type)
        if formed is None:
            return None
        leaves, rewrite = self._leaves()
        indices = {}
        for key, (_, index) in (("first", work.first), ("second", work.second), ("output", work.output)):
            substituted = substitute(index, rewrite)
            if substituted is None:
                return None
            indices[key] = substituted
        allowed = set(leaves) | self.reading.known | {work.k}
        if any(not poly.atoms() <= allowed for poly in indices.values()):
            return None  # loaded, opaque or thread-dependent index parts
        roles: dict[str, str] = {}
        for leaf in leaves:
            used = (bool(coefficient_of(indices["first"], leaf).terms), bool(coefficient_of(indices["second"], leaf).terms),
                    bool(coefficient_of(indices["output"], leaf).terms))
            role = {(True, True, True): "batch", (True, False, True): "row", (False, True, True): "col"}.get(used)
            if role is None or role in roles.values():
                return None
            roles[leaf] = role
        if set(roles.values()) != set(ROLES):
            return None
        extents = self._extents(leaves, rewrite)
        if extents is None:
            return None
        names = {leaf: LEAF_NAMES[role] for leaf, role in roles.items()}
        k_atom = "@k"  # the loop variable may be spelled like a role name (`for (int i = 0; i < n; ++i)`)
        mapping = {work.k: Poly.atom(k_atom), **{leaf: Poly.atom(name) for leaf, name in names.items()}}
        renamed = {key: substitute(poly, mapping) for key, poly in indices.items()}
        a_index, b_index, c_index = renamed["first"], renamed["second"], renamed["output"]
        if a_index is None or b_index is None or c_index is None:
            return None
        a = _operand(work.first[0], a_index, "i", k_atom, self.reading.known)
        b = _operand(work.second[0], b_index, "j", k_atom, self.reading.known)
        c = _output(c_index, self.reading.known)
        if a is None or b is None or c is None:
            return None
        extent = {roles[leaf]: value for leaf, value in extents.items()}
        # A batch that is `blockIdx.a` with no guard is counted by the launch alone (even when the
        # spec's grid is a literal): the rewrite keeps that grid axis and reads gridDim.
        [batch_leaf] = [leaf for leaf, role in roles.items() if role == "batch"]
        source, low, high = leaves[batch_leaf]
        batch_axis = None
        if source.startswith("blockIdx.") and low == Poly.const(1) and high is None and \
                not any(self.reading.decodes[name].source == source for name, _ in self.reading.conditions):
            batch_axis = source.split(".")[1]
        elif not extent["batch"].atoms() <= self.reading.known:
            return None
        if not (extent["row"].atoms() | extent["col"].atoms() | work.k_bound.atoms()) <= self.reading.known:
            return None
        self.leaf_of_local = rewrite
        self.role_of_leaf = {leaf: Poly.atom(name) for leaf, name in names.items()}
        epilogue = self._epilogue(work, c_index)
        if epilogue is None:
            return None
        return BatchedProduct(
            element=next(iter(element)), acc_type=acc_type,
            element_text=self.reading.written_types[work.output[0]], acc_text=work.acc_type,
            product_type=formed[0], product_text=formed[1] or self.reading.written_types[work.output[0]],
            batch=extent["batch"],
            m=extent["row"],
            n=extent["col"], k=work.k_bound, a=a, b=b, output=work.output[0], c_base=c[0], c_row=c[1], c_col=c[2],
            epilogue=epilogue, template_values=dict(self.reading.template_values), batch_axis=batch_axis,
            compile_time=frozenset(self.reading.template_values))

    def _leaves(self) -> tuple[dict[str, tuple[str, Poly, Poly | None]], dict[str, Poly]]:
        """The mixed-radix digits of every source the work uses (name -> (source, low cut,
        high cut or None for the top digit)) and each decode local as a sum of them."""
        work = self.work
        used: set[str] = set()
        for _, index in (work.first, work.second, work.output):
            used |= {atom for atom in index.atoms() if atom in self.reading.decodes}
        used |= {name for name, _ in self.reading.conditions}
        cuts: dict[str, list[Poly]] = {}
        for name in used:
            decode = self.reading.decodes[name]
            points = cuts.setdefault(decode.source, [Poly.const(1)])
            for cut in (decode.divisor, times(decode.divisor, decode.modulus) if decode.modulus else None):
                if cut is not None and cut not in points:
                    points.append(cut)
        leaves: dict[str, tuple[str, Poly, Poly | None]] = {}
        for source, points in cuts.items():
            ordered = _chain(points)
            if ordered is None:
                raise NotBatched
            for position, low in enumerate(ordered):
                high = ordered[position + 1] if position + 1 < len(ordered) else None
                leaves[f"{source}#{position}"] = (source, low, high)
        rewrite: dict[str, Poly] = {}
        for name in used:
            decode = self.reading.decodes[name]
            top = times(decode.divisor, decode.modulus) if decode.modulus else None
            total = Poly.const(0)
            for leaf, (source, low, high) in leaves.items():
                if source != decode.source or exact_quotient(low, decode.divisor) is None:
                    continue
                if top is not None and (high is None or exact_quotient(top, high) is None):
                    continue
                weight = exact_quotient(low, decode.divisor)
                term = Poly.atom(leaf) * weight if weight is not None else None
                if term is None:
                    raise NotBatched
                total = total + term
            rewrite[name] = total
        return leaves, rewrite

    def _source_reach(self, source: str) -> Poly | None:
        kind, axis = source.split(".", 1)
        if kind == "loop":
            return self.reading.reach[source]
        index = AXES.index(axis)
        if kind == "threadIdx":
            return self.reading.launch_block[index]
        if kind == "blockIdx":
            return self.reading.launch_grid[index]
        return self.reading.launch_grid[index] * self.reading.launch_block[index]

    def _reaches(self, source: str, need: Poly, reach: Poly, values: Mapping[str, int]) -> bool:
        """Whether `source` takes every value below `need`: symbolically (`nmat` blocks for
        `mat < nmat`; `(X + 255) / 256` blocks of 256 for `t < X`), else at the spec's sizes."""
        fixed = {name: Poly.const(value) for name, value in self.reading.template_values.items()}
        need = substitute(need, fixed) or need  # `mat < nmat` with mat = id / (S * S): nmat * 256
        difference = (reach - need).constant
        if difference is not None:
            return difference >= 0
        kind, axis = source.split(".", 1)
        if kind == "global":
            index = AXES.index(axis)
            match = re.fullmatch(r"\s*\((.+)\)\s*/\s*(\d+)\s*", self.reading.grid_texts[index])
            size = self.reading.launch_block[index].constant
            if match is not None and int(match.group(2)) == size:
                rounded = expression_poly(match.group(1), self.reading.syntax.constants)
                if rounded is not None and rounded - Poly.const(size - 1) == need:
                    return True  # ceil(need / size) blocks of size threads
        have = self._reach_value(source, values)
        wanted = evaluate(need, values)
        return have is not None and wanted is not None and have >= wanted

    def _reach_value(self, source: str, values: Mapping[str, int]) -> int | None:
        """How many values `source` takes at the spec's sizes (launch expressions evaluated)."""
        kind, axis = source.split(".", 1)
        if kind == "loop":
            return evaluate(self.reading.reach[source], values)
        index = AXES.index(axis)
        texts = {"threadIdx": [self.reading.block_texts[index]], "blockIdx": [self.reading.grid_texts[index]],
                 "global": [self.reading.block_texts[index], self.reading.grid_texts[index]]}[kind]
        total = 1
        for expression in texts:
            try:
                total *= evaluate_int(expression, values)
            except InputError:
                return None
        return total

    def _extents(self, leaves: dict[str, tuple[str, Poly, Poly | None]],
                 rewrite: dict[str, Poly]) -> dict[str, Poly] | None:
        # Every launch axis wider than one must be owned by a source the work uses.
        sources = {source for source, _, _ in leaves.values()}
        for index, axis in enumerate(AXES):
            block_owned = ("block", axis) in self.reading.owned or bool({f"threadIdx.{axis}", f"global.{axis}"} & sources)
            grid_owned = ("grid", axis) in self.reading.owned or bool({f"blockIdx.{axis}", f"global.{axis}"} & sources)
            if (not block_owned and self.reading.launch_block[index] != Poly.const(1)) or \
                    (not grid_owned and self.reading.launch_grid[index] != Poly.const(1)):
                return None
            if f"threadIdx.{axis}" in sources and f"global.{axis}" in sources or \
                    f"blockIdx.{axis}" in sources and f"global.{axis}" in sources:
                return None
            # an axis a stride loop owns is spread by that loop: an index read straight from the
            # same axis as well would pair the loop's values with one thread's, not all of them
            if ("block", axis) in self.reading.owned and {f"threadIdx.{axis}", f"global.{axis}"} & sources or \
                    ("grid", axis) in self.reading.owned and {f"blockIdx.{axis}", f"global.{axis}"} & sources:
                return None
        values = {**self.reading.constants, **self.reading.template_values}
        for name, limit in self.reading.conditions:
            modulus = self.reading.decodes[name].modulus
            # a guard on a digit below the top may only restate its radix, for every size
            if modulus is not None:
                slack = (limit - modulus).constant
                if slack is None:
                    slack_at = evaluate(limit - modulus, self.reading.template_values)
                    slack = slack_at if slack_at is not None else -1
                if slack < 0:
                    return None
        extents: dict[str, Poly] = {}
        for leaf, (source, low, high) in leaves.items():
            reach = self._source_reach(source)
            if reach is None:
                return None
            if high is not None:
                extent = exact_quotient(high, low)
                if extent is None:
                    return None
                extents[leaf] = extent
                continue
            # the top digit: bounded by guards on it (or on a decode whose top it is) and by the launch
            bound: Poly | None = None
            for name, limit in self.reading.conditions:
                decode = self.reading.decodes[name]
                if decode.source != source or decode.modulus is not None:
                    continue
                candidate = exact_quotient(limit, exact_quotient(low, decode.divisor) or Poly.const(0)) \
                    if exact_quotient(low, decode.divisor) is not None else None
                if candidate is None:
                    return None
                if bound is not None and candidate != bound:
                    return None
                bound = candidate
            if bound is None:
                bound = exact_quotient(reach, low)
                if bound is None:  # `threadIdx.x / COLS` over a block of 128: by the template's value
                    have, width = evaluate(reach, self.reading.template_values), evaluate(low, self.reading.template_values)
                    if have is None or not width or have % width:
                        return None
                    bound = Poly.const(have // width)
            else:
                # the launch must reach every guarded value (checked at the spec's sizes)
                if not self._reaches(source, times(bound, low), reach, values):
                    return None
            extents[leaf] = self._symbolic(bound, values)
        return extents

    def _symbolic(self, extent: Poly, values: Mapping[str, int]) -> Poly:
        """A literal extent that equals exactly one template parameter becomes that parameter,
        so the rewrite stays right for the template's other instantiations."""
        if extent.constant is None:
            return extent
        same = [name for name, value in self.reading.template_values.items() if value == extent.constant]
        return Poly.atom(same[0]) if len(same) == 1 else extent

    def _epilogue(self, work: ProductWork, c_index: Poly) -> Epilogue | None:
        """The stored value over holes for the accumulator and C's element."""
        expression = self._formatted(work.value, work, c_index)
        if expression is None:
            return None
        if work.compound:
            expression = (Piece(hole="c"), Piece.of(" + ("), *expression, Piece.of(")"))
        return Epilogue(expression)

    def _formatted(self, value: Node, work: ProductWork, c_index: Poly) -> tuple[Piece, ...] | None:
        """`value`'s text as pieces: the accumulator and C at the stored element as holes, a float
        local of the epilogue its own value converted to its type; None when it reads anything
        else (other memory, thread-dependent locals) or changes anything."""
        data = self.reading.syntax.source
        spans: list[tuple[int, int, tuple[Piece, ...]]] = []
        stack = [value]
        while stack:
            node = stack.pop()
            if node.type == "subscript_expression":
                array, index = self.reading.subscript(node)
                if array != work.output[0]:
                    return None
                leaves_index = self._renamed(index)
                if leaves_index is None or leaves_index != c_index:
                    return None
                spans.append((node.start_byte, node.end_byte, (Piece(hole="c"),)))
                continue
            if node.type == "identifier":
                name = text(node)
                if name == work.acc:
                    spans.append((node.start_byte, node.end_byte, (Piece(hole="acc"),)))
                elif name in self.reading.value_locals:
                    type_text, local_value = self.reading.value_locals[name]
                    inner = self._formatted(local_value, work, c_index)
                    if inner is None:
                        return None
                    spans.append((node.start_byte, node.end_byte,
                                  (Piece.of(f"(({type_text})("), *inner, Piece.of("))"))))
                elif name not in self.reading.scalars and name not in self.reading.template_values and \
                        not (node.parent is not None and node.parent.type == "call_expression" and
                             node.parent.child_by_field_name("function") == node and name in PURE_CALLS):
                    return None
                continue
            if node.type in ("assignment_expression", "update_expression", "pointer_expression",
                             "field_expression", "comma_expression"):
                return None
            stack.extend(node.children)
        pieces: list[Piece] = []
        cursor = value.start_byte
        for start, end, replacement in sorted(spans, key=lambda span: span[:2]):
            pieces += [Piece.of(data[cursor:start].decode()), *replacement]
            cursor = end
        pieces.append(Piece.of(data[cursor : value.end_byte].decode()))
        return tuple(pieces)

    def _renamed(self, index: Poly) -> Poly | None:
        """An index with its decode locals as the role names b, i, j (as `finish` names them)."""
        leaves = substitute(index, self.leaf_of_local)
        return substitute(leaves, self.role_of_leaf) if leaves is not None else None


def _chain(points: list[Poly]) -> list[Poly] | None:
    """The cut points ordered so that each divides the next, or None when they are not a chain."""
    ordered: list[Poly] = []
    remaining = list(points)
    current = Poly.const(1)
    if current not in remaining:
        return None
    remaining.remove(current)
    ordered.append(current)
    while remaining:
        nexts = [p for p in remaining if exact_quotient(p, current) is not None and
                 all(exact_quotient(q, p) is not None for q in remaining if q != p)]
        if len(nexts) != 1:
            return None
        current = nexts[0]
        remaining.remove(current)
        ordered.append(current)
    return ordered


def _operand(array: str, index: Poly, coordinate: str, k: str, scalars: set[str]) -> BatchedOperand | None:
    outer = coefficient_of(index, coordinate)
    inner = coefficient_of(index, k)
    for stride in (outer, inner):
        if not stride.terms or not stride.atoms() <= scalars:
            return None
    base = index - times(outer, Poly.atom(coordinate)) - times(inner, Poly.atom(k))
    if not base.atoms() <= scalars | {"b"} or coefficient_of(base, "b").atoms() - scalars:
        return None
    if any(m.count("b") > 1 for m, _ in base.terms):
        return None
    return BatchedOperand(array, base, outer, inner)


def _output(index: Poly, scalars: set[str]) -> tuple[Poly, Poly, Poly] | None:
    row, col = coefficient_of(index, "i"), coefficient_of(index, "j")
    if not row.terms or not col.terms or not (row.atoms() | col.atoms()) <= scalars:
        return None
    base = index - times(row, Poly.atom("i")) - times(col, Poly.atom("j"))
    if not base.atoms() <= scalars | {"b"} or any(m.count("b") > 1 for m, _ in base.terms):
        return None
    if not coefficient_of(base, "b").terms:
        return None
    return base, row, col
