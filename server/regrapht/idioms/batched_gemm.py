"""Batched matrix products however the threads are mapped: `C[b](i, j) = f(sum_k A[b](i, k) * B[b](k, j))`.

`idioms/gemm.py` reads products whose coordinates are global thread ids (the point-kernel
view). Batched products of small matrices are usually written otherwise: one block per matrix
with `threadIdx.y/x` as (row, col), a flat thread id divided by `M * N`, a loop over the batch
(plain or grid-stride), the matrices fixed by a template parameter or a `#define`. This module
reads all of them the same way, on the tree-sitter tree and the affine algebra:

- every integer local that the indices use is a *decode* of one *source* of distinct values:
  `(source / divisor) % modulus`, the source being `threadIdx.a`, `blockIdx.a`, a global id
  along `a`, or a loop variable (`for (b = 0; b < B; b++)`, or a grid-stride loop, which then
  owns its launch axes);
- the decodes of one source must cut it into a mixed radix (divisors 1, N, M*N, ...), whose
  digits are the *leaves*; each leaf is the batch, the row or the column (which operands use
  it says which), and the guards (`if (mat >= nmat) return;`, `if (i < M && j < N)`, `t < total`)
  and the launch give each its extent; every launch axis wider than 1 must be owned by a used
  source, so each (b, i, j) is computed by exactly one thread;
- the work is a zeroed float/double accumulator, one `k` loop from 0 to a scalar bound adding
  `X[..] * Y[..]` (`+=`, `acc = acc + ..`, `fmaf`/`fma`), and one store `C[..] = expr(acc)`
  (`+=` too) whose expression reads nothing but scalars and C at the element it writes;
- local pointers into the operands (`const float *a = A + mat * D * D;`) are followed;
- a factor may be widened before the product (`(double)A[..] * (double)B[..]` on float data, a
  `double a = A[..];` load local): the product is then formed in that type (`product_type`), and
  the rewrite forms it there too, so every rounding stays the original's. A narrowing conversion,
  or one inside `fmaf` (which converts back), is a near-miss.

Near-misses return None: data-dependent bounds or indices, a store into an operand, non-affine
indices, a leaf no operand uses, launch axes no source owns, statements beyond the above.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from tree_sitter import Node

from regrapht.cuda.affine import Poly, exact_quotient
from regrapht.cuda.extract import ambiguous_cast
from regrapht.errors import InputError
from regrapht.idioms.pointwise import PURE_CALLS, coefficient_of, expression_poly, is_pragma
from regrapht.idioms.syntax import (
    GLOBAL_X,
    GLOBAL_Y,
    KernelSyntax,
    Symbols,
    call_args,
    call_name,
    identifiers_in,
    kernel_syntax,
    named_statements,
    subscript_parts,
    text,
    unparen,
    walk,
)
from regrapht.spec.expr import evaluate_int

AXES = ("x", "y", "z")
GLOBAL_Z = Poly.of({("blockDim.z", "blockIdx.z"): 1, ("threadIdx.z",): 1})
_GLOBALS = {"x": GLOBAL_X, "y": GLOBAL_Y, "z": GLOBAL_Z}
ELEMENT_TYPES = ("float", "double", "int")
FLOAT_TYPES = ("float", "double")
_FLOAT_RANK = {"float": 0, "double": 1}  # a conversion to a higher rank is exact
ROLES = ("batch", "row", "col")
_INTEGER_TYPE_WORDS = frozenset({"int", "unsigned", "signed", "long", "short", "size_t", "int64_t", "uint64_t",
                                 "ptrdiff_t", "int32_t", "uint32_t"})


@dataclass(frozen=True)
class Decode:
    """`(source / divisor) % modulus` (modulus None: no `%`)."""

    source: str
    divisor: Poly
    modulus: Poly | None


@dataclass(frozen=True)
class BatchedOperand:
    array: str  # the pointer parameter
    base: Poly  # over the batch leaf ("b") and scalars
    outer: Poly  # stride of its row (A) or column (B) coordinate
    inner: Poly  # stride of k


@dataclass(frozen=True)
class BatchedProduct:
    element: str  # "float" or "double" (after template substitution)
    acc_type: str  # the accumulator's type (after template substitution)
    element_text: str  # the operands' element type as written (`T` in a template)
    acc_text: str  # the accumulator's type as written
    # The type each product `a * b` is formed in (after template substitution; the element type
    # unless a factor is widened, `(double)A[..]` on float data) and that type as written.
    product_type: str
    product_text: str
    batch: Poly  # extents over scalar parameters, template parameters and literals
    m: Poly
    n: Poly
    k: Poly
    a: BatchedOperand
    b: BatchedOperand
    output: str
    c_base: Poly  # C's index = c_base(b) + c_row * i + c_col * j
    c_row: Poly
    c_col: Poly
    # The stored value with `{acc}` for the accumulator and `{c}` for C's element (str.format
    # fields; braces of the original are doubled).
    epilogue: str
    template_values: Mapping[str, int]  # this instantiation's integer template arguments
    # The grid axis whose blocks are the batch when its count exists only in the launch
    # (`blockIdx.x` per matrix, no guard, the grid not a kernel scalar): a rewrite keeps the launch.
    batch_axis: str | None
    compile_time: frozenset[str]  # names whose values are compile-time (template parameters)

    def value(self, poly: Poly, constants: Mapping[str, int]) -> int | None:
        """`poly` evaluated with the template arguments and `constants` (spec scalars)."""
        return evaluate(poly, {**constants, **self.template_values})


# A leaf of the mixed radix in the indices: role letter (b, i, j) by what uses it.
LEAF_NAMES = {"batch": "b", "row": "i", "col": "j"}


def evaluate(poly: Poly, values: Mapping[str, int]) -> int | None:
    total = 0
    for monomial, coefficient in poly.terms:
        term = coefficient
        for atom in monomial:
            if atom not in values:
                return None
            term *= values[atom]
        total += term
    return total


def substitute(poly: Poly, mapping: Mapping[str, Poly]) -> Poly | None:
    out = Poly.const(0)
    for monomial, coefficient in poly.terms:
        term: Poly | None = Poly.const(coefficient)
        for atom in monomial:
            if term is None:
                return None
            term = term * mapping.get(atom, Poly.atom(atom))
        if term is None:
            return None
        out = out + term
    return out


def template_arguments(name: str) -> list[str]:
    """`bmm<float, 16>` -> ["float", "16"] (split at top-level commas)."""
    if "<" not in name or not name.rstrip().endswith(">"):
        return []
    inner = name[name.index("<") + 1 : name.rstrip().rindex(">")]
    parts, depth, current = [], 0, ""
    for char in inner:
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        depth += {"<": 1, ">": -1, "(": 1, ")": -1}.get(char, 0)
        current += char
    if current.strip():
        parts.append(current.strip())
    return parts


class _NotBatched(Exception):
    """Internal: the kernel leaves the recognised shape (caught in `batched_product` only)."""


def batched_product(source: str, kernel_name: str, grid: tuple[str, ...], block: tuple[str, ...],
                    constants: Mapping[str, int] | None = None) -> BatchedProduct | None:
    """The batched product kernel `kernel_name` of `source` computes under this launch, or None.

    `grid`/`block` are the launch's spec expressions; `constants` the spec's scalar values."""
    syntax = kernel_syntax(source, kernel_name.split("<")[0].strip())
    if syntax is None:
        return None
    try:
        return _Reader(syntax, kernel_name, grid, block, dict(constants or {})).read()
    except _NotBatched:
        return None


@dataclass(frozen=True)
class _Factor:
    """One factor of the k loop's product: a load and the types (as written) it is converted to
    before the product, innermost first (a load local's declared type, then casts)."""

    load: Node
    conversions: tuple[str, ...]


@dataclass
class _Work:
    acc: str
    acc_type: str
    k: str
    k_bound: Poly
    first: tuple[str, Poly]  # (array, index) of the two factors
    second: tuple[str, Poly]
    conversions: tuple[tuple[str, ...], tuple[str, ...]]  # of the first and second factor
    fused: str  # the call that forms the update (`fmaf`, `fma`), "" for `acc += a * b`
    output: tuple[str, Poly]
    value: Node
    compound: bool  # `C[..] += expr`


class _Reader:
    def __init__(self, syntax: KernelSyntax, kernel_name: str, grid: tuple[str, ...], block: tuple[str, ...],
                 constants: dict[str, int]) -> None:
        self.syntax = syntax
        self.constants = constants
        self.symbols = Symbols(syntax.constants)
        self.decodes: dict[str, Decode] = {}
        self.reach: dict[str, Poly] = {}  # source -> how many values it takes
        self.owned: set[tuple[str, str]] = set()  # ("block" | "grid", axis) owned by a loop source
        self.conditions: list[tuple[str, Poly]] = []  # (decode local, exclusive bound)
        self.work: _Work | None = None
        self.types: dict[str, str] = {}
        # threadIdx/blockIdx used directly in subscripts are decodes of themselves
        for axis in AXES:
            for builtin in ("threadIdx", "blockIdx"):
                self.decodes[f"{builtin}.{axis}"] = Decode(f"{builtin}.{axis}", Poly.const(1), None)
        self.template_values: dict[str, int] = {}
        self.value_locals: dict[str, tuple[str, Node]] = {}  # float locals the epilogue reads: (type, value)
        self.pending: Node | None = None  # an accumulator declared before the indices, awaiting its loop
        self.leaf_of_local: dict[str, Poly] = {}
        self.role_of_leaf: dict[str, Poly] = {}
        self._template(kernel_name)
        self.scalars = {p.name for p in syntax.params if not p.is_pointer}
        self.pointers = {p.name: self.types.get(p.base_type, p.base_type) for p in syntax.params if p.is_pointer}
        self.written_types = {p.name: p.base_type for p in syntax.params if p.is_pointer}
        self.known = self.scalars | set(self.template_values)
        self.grid_texts = (list(grid) + ["1"] * 3)[:3]
        self.block_texts = (list(block) + ["1"] * 3)[:3]
        self.launch_grid = [self._launch_poly(g) for g in self.grid_texts]
        self.launch_block = [self._launch_poly(b) for b in self.block_texts]

    # ------------------------------------------------------------------ set-up
    def _template(self, kernel_name: str) -> None:
        function = self.syntax.function
        template = function.parent if function.parent is not None and \
            function.parent.type == "template_declaration" else None
        if template is None:
            return
        parameters = template.child_by_field_name("parameters")
        arguments = template_arguments(kernel_name)
        declared = [p for p in (parameters.named_children if parameters is not None else []) if p.type != "comment"]
        if len(arguments) != len(declared):
            raise _NotBatched  # defaults or packs: not worth guessing
        for parameter, argument in zip(declared, arguments, strict=True):
            name = text(parameter.named_children[-1]) if parameter.named_children else ""
            if parameter.type == "type_parameter_declaration":
                self.types[name] = argument
            elif parameter.type == "parameter_declaration":
                declarator = parameter.child_by_field_name("declarator")
                value = expression_poly(argument, self.syntax.constants)
                if declarator is None or value is None or value.constant is None:
                    raise _NotBatched
                self.template_values[text(declarator)] = value.constant
            else:
                raise _NotBatched

    def _launch_poly(self, expression: str) -> Poly:
        poly = expression_poly(expression, self.syntax.constants)
        if poly is None:
            raise _NotBatched
        return poly

    # ------------------------------------------------------------------ statements
    def read(self) -> BatchedProduct | None:
        self._statements(self.syntax.statements())
        if self.work is None:
            return None
        return self._finish(self.work)

    def _statements(self, statements: list[Node]) -> None:
        statements = [s for s in statements if not is_pragma(s)]
        for position, statement in enumerate(statements):
            last = position == len(statements) - 1
            if self.work is not None:
                raise _NotBatched  # anything after the store
            kind = statement.type
            if self.pending is not None and kind not in ("if_statement", "compound_statement", "for_statement"):
                acc = self._accumulator(self.pending)
                if acc is not None and acc[0] in identifiers_in(statement):
                    raise _NotBatched  # the accumulator used before its loop
            if kind == "declaration":
                following = statements[position + 1] if position + 1 < len(statements) else None
                if self._accumulator(statement, following) is not None:
                    if following is None or following.type != "for_statement":
                        # `float sum = 0.f;` first, the indices and guards after it: the k loop
                        # later in this block (or an `if` in it) takes it
                        if self.pending is not None:
                            raise _NotBatched
                        self.pending = statement
                        continue
                    self._work_from(statement, statements[position + 1 :])
                    return
                self._declaration(statement)
            elif kind == "for_statement" and self.pending is not None and not last:
                self._work_from(self.pending, statements[position:])
                return
            elif kind == "if_statement":
                self._if(statement, last)
                if not last:
                    continue
                return
            elif kind == "for_statement" and last:
                self._batch_loop(statement)
                return
            elif kind == "compound_statement" and last:
                self._statements(named_statements(statement))
                return
            elif kind == "expression_statement" and not last:
                self._advance(statement)
            else:
                raise _NotBatched

    def _work_from(self, declaration: Node, rest: list[Node]) -> None:
        """The accumulator `declaration`, then in `rest` the k loop, declarations, the store."""
        if len(rest) < 2:
            raise _NotBatched
        for between in rest[1:-1]:  # `size_t o = ...;` between the loop and the store
            if between.type != "declaration":
                raise _NotBatched
            if not self._value_local(between):
                self._declaration(between)
        self.work = self._product(declaration, rest[0], rest[-1])

    def _declaration(self, statement: Node) -> None:
        if any(text(c) in ("static", "__shared__", "extern") for c in statement.children):
            raise _NotBatched
        for declarator in statement.children_by_field_name("declarator"):
            if declarator.type != "init_declarator":
                raise _NotBatched
            target = declarator.child_by_field_name("declarator")
            value = declarator.child_by_field_name("value")
            if target is None or value is None:
                raise _NotBatched
            if target.type == "pointer_declarator":
                name = text(target.child_by_field_name("declarator"))
                if not self.symbols.define_alias(name, value, self.pointers):
                    raise _NotBatched
                continue
            type_text = text(statement.child_by_field_name("type"))
            if target.type != "identifier" or any(word in type_text for word in ("float", "double", "half", "auto")):
                raise _NotBatched
            if any(n.type in ("subscript_expression", "pointer_expression", "assignment_expression",
                              "update_expression") or (n.type == "call_expression" and call_name(n) not in
                                                       ("min", "max", "static_cast", "int")) for n in walk(value)):
                raise _NotBatched
            name = text(target)
            decode = self._decode(value)
            if decode is not None:
                self.decodes[name] = decode
                self.symbols.env[name] = Poly.atom(name)
            else:
                poly = self.symbols.poly(value)
                if any(a.startswith("~") or ("." in a and a not in self.decodes) for a in poly.atoms()):
                    raise _NotBatched  # opaque, or geometry other than threadIdx/blockIdx themselves
                self.symbols.define(name, value)

    def _value_local(self, statement: Node) -> bool:
        """`float v = alpha * acc;` between the loop and the store: a float/double local (not
        `static`) the epilogue may read, its value standing in for it there (`_epilogue` then
        checks that the value reads nothing but the accumulator, scalars and earlier such locals)."""
        type_text = text(statement.child_by_field_name("type"))
        declarators = statement.children_by_field_name("declarator")
        if self.types.get(type_text, type_text) not in FLOAT_TYPES or len(declarators) != 1 or \
                declarators[0].type != "init_declarator" or \
                any(c.type == "storage_class_specifier" for c in statement.children):
            return False
        target, value = declarators[0].child_by_field_name("declarator"), declarators[0].child_by_field_name("value")
        if target is None or value is None or target.type != "identifier":
            raise _NotBatched
        self.value_locals[text(target)] = (type_text, value)
        return True

    def _advance(self, statement: Node) -> None:
        """`A += mat * M * K;` (or `A = A + ...`) on a pointer before the work: an offset."""
        assignment = statement.named_children[0] if statement.named_children else None
        if assignment is None or assignment.type != "assignment_expression":
            raise _NotBatched
        target = unparen(assignment.child_by_field_name("left"))
        value = assignment.child_by_field_name("right")
        op = text(assignment.child_by_field_name("operator"))
        name = text(target) if target is not None and target.type == "identifier" else ""
        if not (name in self.pointers or name in self.symbols.aliases) or value is None:
            raise _NotBatched
        if op == "=":
            if not self.symbols.define_alias(name, value, self.pointers):
                raise _NotBatched
            return
        if op != "+=":
            raise _NotBatched
        offset = self.symbols.poly(value)
        if offset.memory_dependent or any(a.startswith("~") for a in offset.atoms()):
            raise _NotBatched
        root, first = self.symbols.aliases.get(name, (name, Poly.const(0)))
        self.symbols.aliases[name] = (root, first + offset)

    def _decode(self, node: Node | None) -> Decode | None:
        node = unparen(node)
        if node is None:
            return None
        if node.type == "identifier" and text(node) in self.decodes:
            return self.decodes[text(node)]
        if node.type == "cast_expression":
            return self._cast_decode(node)
        if node.type == "binary_expression" and text(node.child_by_field_name("operator")) in ("/", "%"):
            inner = self._decode(node.child_by_field_name("left"))
            amount = self._scalar(node.child_by_field_name("right"))
            if inner is None or amount is None or amount.constant == 0:
                return None
            if text(node.child_by_field_name("operator")) == "/":
                if inner.modulus is None:
                    return Decode(inner.source, _times(inner.divisor, amount), None)
                remaining = exact_quotient(inner.modulus, amount)
                return Decode(inner.source, _times(inner.divisor, amount), remaining) if remaining is not None \
                    else None
            if inner.modulus is not None and exact_quotient(inner.modulus, amount) is None:
                return None
            return Decode(inner.source, inner.divisor, amount)
        poly = self.symbols.poly(node)
        for axis_index, axis in enumerate(AXES):
            for source, shape in ((f"threadIdx.{axis}", Poly.atom(f"threadIdx.{axis}")),
                                  (f"blockIdx.{axis}", Poly.atom(f"blockIdx.{axis}")),
                                  (f"global.{axis}", _GLOBALS[axis]),
                                  (f"global.{axis}", _literal_global(axis, self.launch_block[axis_index]))):
                if shape is not None and poly == shape:
                    return Decode(source, Poly.const(1), None)
        return None

    def _cast_decode(self, node: Node) -> Decode | None:
        """`(int)(o / N % M)`: a cast to an integer type keeps the decode when it widens, or when
        the value is a digit below a modulus (`% M` with M an int scalar: it fits any integer type)."""
        type_node = node.child_by_field_name("type")
        words = set(text(type_node).split()) if type_node is not None else set()
        if not words or not words <= _INTEGER_TYPE_WORDS:
            return None
        inner = self._decode(node.child_by_field_name("value"))
        if inner is None:
            return None
        if words & {"long", "size_t", "int64_t", "uint64_t", "ptrdiff_t"} or inner.modulus is not None:
            return inner
        return None

    def _scalar(self, node: Node | None) -> Poly | None:
        """A positive amount over scalars and template parameters."""
        poly = self.symbols.poly(node)
        if not poly.terms or not poly.atoms() <= self.known or any(c <= 0 for _, c in poly.terms):
            return None
        return poly

    def _if(self, statement: Node, last: bool) -> None:
        condition = statement.child_by_field_name("condition")
        consequence = statement.child_by_field_name("consequence")
        if condition is None or consequence is None or statement.child_by_field_name("alternative") is not None:
            raise _NotBatched
        body = named_statements(consequence)
        if len(body) == 1 and body[0].type == "return_statement" and not body[0].named_children:
            self.conditions.extend(self._comparisons(condition, "||", negate=True))
            return
        if not last:
            raise _NotBatched
        self.conditions.extend(self._comparisons(condition, "&&", negate=False))
        self._statements(body)

    def _comparisons(self, condition: Node, join: str, *, negate: bool) -> list[tuple[str, Poly]]:
        """Upper bounds `local < bound` that hold where the work runs."""
        found: list[tuple[str, Poly]] = []
        stack: list[Node | None] = [condition]
        while stack:
            node = unparen(stack.pop())
            if node is not None and node.type == "condition_clause":
                node = unparen(node.named_children[-1]) if node.named_children else None
            if node is None or node.type != "binary_expression":
                raise _NotBatched
            op = text(node.child_by_field_name("operator"))
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if op == join:
                stack.extend((left, right))
                continue
            if negate:
                op = {">=": "<", ">": "<=", "<=": ">", "<": ">="}.get(op, "")
            if op in (">", ">="):  # `bound > local`
                left, right, op = right, left, {">": "<", ">=": "<="}[op]
            name = text(unparen(left))
            bound = self._exclusive(right, op == "<=")
            if op not in ("<", "<=") or name not in self.decodes or bound is None:
                raise _NotBatched
            found.append((name, bound))
        return found

    def _exclusive(self, node: Node | None, inclusive: bool) -> Poly | None:
        """The exclusive bound a `< node` (or `<= node`: `<= M - 1` is `< M`) sets, over scalars."""
        if not inclusive:
            return self._scalar(node)
        poly = self.symbols.poly(node) + Poly.const(1)
        if not poly.terms or not poly.atoms() <= self.known or any(c <= 0 for _, c in poly.terms):
            return None
        return poly

    def _batch_loop(self, loop: Node) -> None:
        """`for (int b = 0; b < B; b++)` or a grid-stride loop around the work."""
        if self.pending is not None:
            raise _NotBatched  # an accumulator outside the batch loop is not zeroed per matrix
        init = loop.child_by_field_name("initializer")
        condition = unparen(loop.child_by_field_name("condition"))
        update = loop.child_by_field_name("update")
        body = loop.child_by_field_name("body")
        if init is None or init.type != "declaration" or condition is None or update is None or body is None:
            raise _NotBatched
        declarators = init.children_by_field_name("declarator")
        if len(declarators) != 1 or declarators[0].type != "init_declarator":
            raise _NotBatched
        name = text(declarators[0].child_by_field_name("declarator"))
        start = self.symbols.poly(declarators[0].child_by_field_name("value"))
        if condition.type != "binary_expression" or text(condition.child_by_field_name("operator")) != "<" or \
                text(condition.child_by_field_name("left")) != name:
            raise _NotBatched
        bound = self._scalar(condition.child_by_field_name("right"))
        step_text = text(update).replace(" ", "")
        if bound is None or any(text(n) == name for n in walk(body) if n.type == "identifier" and
                                n.parent is not None and n.parent.type in ("assignment_expression",
                                                                           "update_expression")):
            raise _NotBatched
        step: Poly | None = Poly.const(1) if step_text in (f"{name}++", f"++{name}", f"{name}+=1") else None
        if step is None and step_text.startswith(f"{name}+="):
            step = self.symbols.poly(update.child_by_field_name("right"))
        if step is None:
            raise _NotBatched
        source = f"loop.{name}"
        if start == Poly.const(0) and step == Poly.const(1):
            pass
        else:
            owned: list[tuple[str, str]] = []
            for axis in AXES:
                if start == Poly.atom(f"blockIdx.{axis}") and step == Poly.atom(f"gridDim.{axis}"):
                    owned = [("grid", axis)]
                elif start == _GLOBALS[axis] and step in (Poly.of({(f"blockDim.{axis}", f"gridDim.{axis}"): 1}),):
                    owned = [("grid", axis), ("block", axis)]
                elif start == Poly.atom(f"threadIdx.{axis}") and step == Poly.atom(f"blockDim.{axis}"):
                    owned = [("block", axis)]  # a block-stride loop: the block's threads share the values
            if not owned or any(o in self.owned for o in owned):
                raise _NotBatched
            self.owned.update(owned)
        self.reach[source] = bound
        self.decodes[name] = Decode(source, Poly.const(1), None)
        self.symbols.env[name] = Poly.atom(name)
        self._statements(named_statements(body))

    # ------------------------------------------------------------------ the product
    def _accumulator(self, statement: Node, following: Node | None = None) -> tuple[str, str] | None:
        """(name, type as written) of a zeroed accumulator declaration; a float local that is not
        one ends the reading. An `int` local is an accumulator only when it is zeroed, a loop
        follows and the data are int (else it is an index like any other)."""
        type_text = text(statement.child_by_field_name("type"))
        declared = self.types.get(type_text, type_text)
        declarators = statement.children_by_field_name("declarator")
        if declared not in ELEMENT_TYPES or len(declarators) != 1 or declarators[0].type != "init_declarator" or \
                declarators[0].child_by_field_name("declarator").type != "identifier":  # type: ignore[union-attr]
            return None
        value = unparen(declarators[0].child_by_field_name("value"))
        literal = text(value).rstrip("fF") if value is not None else ""
        if value is not None and value.type == "call_expression" and len(call_args(value)) == 1:
            literal = text(call_args(value)[0]).rstrip("fF")  # T(0)
        if declared not in FLOAT_TYPES:
            if literal != "0" or following is None or following.type != "for_statement" or \
                    declared not in self.pointers.values() or any(word in text(statement) for word in ("const", "static")):
                return None
        elif literal not in ("0", "0.", "0.0", ".0"):
            raise _NotBatched  # a float local that is not a zeroed accumulator
        return text(declarators[0].child_by_field_name("declarator")), type_text

    def _product(self, declaration: Node, loop: Node, store: Node) -> _Work:
        acc, acc_type = self._accumulator(declaration, loop) or ("", "")
        if loop.type != "for_statement" or store.type != "expression_statement":
            raise _NotBatched
        init, condition = loop.child_by_field_name("initializer"), unparen(loop.child_by_field_name("condition"))
        update, body = loop.child_by_field_name("update"), loop.child_by_field_name("body")
        if init is None or condition is None or update is None or body is None or init.type != "declaration":
            raise _NotBatched
        declarators = init.children_by_field_name("declarator")
        if len(declarators) != 1 or declarators[0].type != "init_declarator" or \
                self.symbols.poly(declarators[0].child_by_field_name("value")) != Poly.const(0):
            raise _NotBatched
        k = text(declarators[0].child_by_field_name("declarator"))
        # `k < K`, `k <= K - 1`, or `k != K` (the same for every K >= 0; below, the original
        # overflows its counter)
        operator = text(condition.child_by_field_name("operator")) if condition.type == "binary_expression" else ""
        if text(update).replace(" ", "") not in (f"{k}++", f"++{k}", f"{k}+=1") or \
                operator not in ("<", "<=", "!=") or text(condition.child_by_field_name("left")) != k:
            raise _NotBatched
        k_bound = self._exclusive(condition.child_by_field_name("right"), operator == "<=")
        statements = [s for s in named_statements(body) if not is_pragma(s) and
                      not (s.type == "expression_statement" and not s.named_children)]  # `;`
        if k_bound is None or not statements or statements[-1].type != "expression_statement" or \
                not statements[-1].named_children:
            raise _NotBatched
        self.symbols.env[k] = Poly.atom(k)
        loads = self._loads(statements[:-1])
        read = _product_factors(statements[-1].named_children[0], acc, loads, set(self.types))
        if read is None:
            raise _NotBatched
        (first_factor, second_factor), fused = read
        first, second = (self._subscript(factor.load) for factor in (first_factor, second_factor))
        assignment = store.named_children[0] if store.named_children else None
        if assignment is None or assignment.type != "assignment_expression" or \
                text(assignment.child_by_field_name("operator")) not in ("=", "+="):
            raise _NotBatched
        target = unparen(assignment.child_by_field_name("left"))
        value = assignment.child_by_field_name("right")
        if target is None or target.type != "subscript_expression" or value is None:
            raise _NotBatched
        output = self._subscript(target)
        if output[0] in (first[0], second[0]):
            raise _NotBatched  # the output aliases an operand
        return _Work(acc, acc_type, k, k_bound, first, second,
                     (first_factor.conversions, second_factor.conversions), fused, output, value,
                     text(assignment.child_by_field_name("operator")) == "+=")

    def _loads(self, statements: list[Node]) -> dict[str, _Factor]:
        """`float a = A[..];` statements before the update in the k loop: local -> its load
        and the conversions on the way (a cast of the load, then the local's type). Not static;
        the conversions are checked with the product's (`_product_type`: widening only)."""
        loads: dict[str, _Factor] = {}
        for statement in statements:
            declarators = statement.children_by_field_name("declarator") if statement.type == "declaration" else []
            if len(declarators) != 1 or declarators[0].type != "init_declarator" or \
                    any(c.type == "storage_class_specifier" for c in statement.children):
                raise _NotBatched
            target, value = declarators[0].child_by_field_name("declarator"), \
                unparen(declarators[0].child_by_field_name("value"))
            converted = _converted(value, set(self.types)) if value is not None else None
            if target is None or target.type != "identifier" or converted is None or \
                    converted.load.type != "subscript_expression" or text(target) in loads:
                raise _NotBatched
            self._subscript(converted.load)
            loads[text(target)] = _Factor(converted.load,
                                          (*converted.conversions, text(statement.child_by_field_name("type"))))
        return loads

    def _product_type(self, work: _Work, element: str, acc_type: str) -> tuple[str, str] | None:
        """(type, as written) each product is formed in: the element type, or the wider float
        type a factor is converted to (the other factor follows it, by C++'s usual conversions);
        None when a conversion narrows (`float a = A[..]` on double data rounds every element),
        leaves the float types, or feeds a fused call that would not form the product there."""
        product, written = element, ""
        for chain in work.conversions:
            current, current_text = element, ""
            for type_text in chain:
                resolved = self.types.get(type_text, type_text)
                if resolved == current:
                    current_text = current_text or type_text
                    continue
                if current not in _FLOAT_RANK or resolved not in _FLOAT_RANK or \
                        _FLOAT_RANK[resolved] < _FLOAT_RANK[current]:
                    return None
                current, current_text = resolved, type_text
            if current != product and _FLOAT_RANK.get(current, -1) > _FLOAT_RANK.get(product, -1):
                product, written = current, current_text
        if work.fused in ("fmaf", "__fmaf_rn") and not (element == acc_type == product == "float"):
            return None  # fmaf rounds a double accumulator (or factor) to float at every step
        if work.fused == "fma" and acc_type != product:
            return None  # `fma` on mixed types: another overload, or none
        return product, written

    def _subscript(self, node: Node) -> tuple[str, Poly]:
        array, indices = subscript_parts(node)
        if array is None or array.type != "identifier" or len(indices) != 1:
            raise _NotBatched
        name = text(array)
        index = self.symbols.poly(indices[0])
        if name in self.symbols.aliases:
            name, offset = self.symbols.aliases[name]
            index = offset + index
        if name not in self.pointers:
            raise _NotBatched
        return name, index

    # ------------------------------------------------------------------ the domain
    def _finish(self, work: _Work) -> BatchedProduct | None:
        element = {self.pointers[array] for array in (work.first[0], work.second[0], work.output[0])}
        acc_type = self.types.get(work.acc_type, work.acc_type)
        if len(element) != 1 or next(iter(element)) not in ELEMENT_TYPES or acc_type not in ELEMENT_TYPES:
            return None
        if (acc_type in FLOAT_TYPES) != (next(iter(element)) in FLOAT_TYPES):
            return None  # an int sum of float products (or the reverse) converts at every step
        product_type = self._product_type(work, next(iter(element)), acc_type)
        if product_type is None:
            return None
        leaves, rewrite = self._leaves()
        indices = {}
        for key, (_, index) in (("first", work.first), ("second", work.second), ("output", work.output)):
            substituted = substitute(index, rewrite)
            if substituted is None:
                return None
            indices[key] = substituted
        allowed = set(leaves) | self.known | {work.k}
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
        a = _operand(work.first[0], a_index, "i", k_atom, self.known)
        b = _operand(work.second[0], b_index, "j", k_atom, self.known)
        c = _output(c_index, self.known)
        if a is None or b is None or c is None:
            return None
        extent = {roles[leaf]: value for leaf, value in extents.items()}
        # A batch that is `blockIdx.a` with no guard is counted by the launch alone (even when the
        # spec's grid is a literal): the rewrite keeps that grid axis and reads gridDim.
        [batch_leaf] = [leaf for leaf, role in roles.items() if role == "batch"]
        source, low, high = leaves[batch_leaf]
        batch_axis = None
        if source.startswith("blockIdx.") and low == Poly.const(1) and high is None and \
                not any(self.decodes[name].source == source for name, _ in self.conditions):
            batch_axis = source.split(".")[1]
        elif not extent["batch"].atoms() <= self.known:
            return None
        if not (extent["row"].atoms() | extent["col"].atoms() | work.k_bound.atoms()) <= self.known:
            return None
        self.leaf_of_local = rewrite
        self.role_of_leaf = {leaf: Poly.atom(name) for leaf, name in names.items()}
        epilogue = self._epilogue(work, c_index)
        if epilogue is None:
            return None
        return BatchedProduct(
            element=next(iter(element)), acc_type=acc_type,
            element_text=self.written_types[work.output[0]], acc_text=work.acc_type,
            product_type=product_type[0], product_text=product_type[1] or self.written_types[work.output[0]],
            batch=extent["batch"],
            m=extent["row"],
            n=extent["col"], k=work.k_bound, a=a, b=b, output=work.output[0], c_base=c[0], c_row=c[1], c_col=c[2],
            epilogue=epilogue, template_values=dict(self.template_values), batch_axis=batch_axis,
            compile_time=frozenset(self.template_values))

    def _leaves(self) -> tuple[dict[str, tuple[str, Poly, Poly | None]], dict[str, Poly]]:
        """The mixed-radix digits of every source the work uses (name -> (source, low cut,
        high cut or None for the top digit)) and each decode local as a sum of them."""
        work = self.work
        assert work is not None
        used: set[str] = set()
        for _, index in (work.first, work.second, work.output):
            used |= {atom for atom in index.atoms() if atom in self.decodes}
        used |= {name for name, _ in self.conditions}
        cuts: dict[str, list[Poly]] = {}
        for name in used:
            decode = self.decodes[name]
            points = cuts.setdefault(decode.source, [Poly.const(1)])
            for cut in (decode.divisor, _times(decode.divisor, decode.modulus) if decode.modulus else None):
                if cut is not None and cut not in points:
                    points.append(cut)
        leaves: dict[str, tuple[str, Poly, Poly | None]] = {}
        for source, points in cuts.items():
            ordered = _chain(points)
            if ordered is None:
                raise _NotBatched
            for position, low in enumerate(ordered):
                high = ordered[position + 1] if position + 1 < len(ordered) else None
                leaves[f"{source}#{position}"] = (source, low, high)
        rewrite: dict[str, Poly] = {}
        for name in used:
            decode = self.decodes[name]
            top = _times(decode.divisor, decode.modulus) if decode.modulus else None
            total = Poly.const(0)
            for leaf, (source, low, high) in leaves.items():
                if source != decode.source or exact_quotient(low, decode.divisor) is None:
                    continue
                if top is not None and (high is None or exact_quotient(top, high) is None):
                    continue
                weight = exact_quotient(low, decode.divisor)
                term = Poly.atom(leaf) * weight if weight is not None else None
                if term is None:
                    raise _NotBatched
                total = total + term
            rewrite[name] = total
        return leaves, rewrite

    def _source_reach(self, source: str) -> Poly | None:
        kind, axis = source.split(".", 1)
        if kind == "loop":
            return self.reach[source]
        index = AXES.index(axis)
        if kind == "threadIdx":
            return self.launch_block[index]
        if kind == "blockIdx":
            return self.launch_grid[index]
        return self.launch_grid[index] * self.launch_block[index]

    def _reaches(self, source: str, need: Poly, reach: Poly, values: Mapping[str, int]) -> bool:
        """Whether `source` takes every value below `need`: symbolically (`nmat` blocks for
        `mat < nmat`; `(X + 255) / 256` blocks of 256 for `t < X`), else at the spec's sizes."""
        fixed = {name: Poly.const(value) for name, value in self.template_values.items()}
        need = substitute(need, fixed) or need  # `mat < nmat` with mat = id / (S * S): nmat * 256
        difference = (reach - need).constant
        if difference is not None:
            return difference >= 0
        kind, axis = source.split(".", 1)
        if kind == "global":
            index = AXES.index(axis)
            match = re.fullmatch(r"\s*\((.+)\)\s*/\s*(\d+)\s*", self.grid_texts[index])
            size = self.launch_block[index].constant
            if match is not None and int(match.group(2)) == size:
                rounded = expression_poly(match.group(1), self.syntax.constants)
                if rounded is not None and rounded - Poly.const(size - 1) == need:
                    return True  # ceil(need / size) blocks of size threads
        have = self._reach_value(source, values)
        wanted = evaluate(need, values)
        return have is not None and wanted is not None and have >= wanted

    def _reach_value(self, source: str, values: Mapping[str, int]) -> int | None:
        """How many values `source` takes at the spec's sizes (launch expressions evaluated)."""
        kind, axis = source.split(".", 1)
        if kind == "loop":
            return evaluate(self.reach[source], values)
        index = AXES.index(axis)
        texts = {"threadIdx": [self.block_texts[index]], "blockIdx": [self.grid_texts[index]],
                 "global": [self.block_texts[index], self.grid_texts[index]]}[kind]
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
            block_owned = ("block", axis) in self.owned or bool({f"threadIdx.{axis}", f"global.{axis}"} & sources)
            grid_owned = ("grid", axis) in self.owned or bool({f"blockIdx.{axis}", f"global.{axis}"} & sources)
            if (not block_owned and self.launch_block[index] != Poly.const(1)) or \
                    (not grid_owned and self.launch_grid[index] != Poly.const(1)):
                return None
            if f"threadIdx.{axis}" in sources and f"global.{axis}" in sources or \
                    f"blockIdx.{axis}" in sources and f"global.{axis}" in sources:
                return None
            # an axis a stride loop owns is spread by that loop: an index read straight from the
            # same axis as well would pair the loop's values with one thread's, not all of them
            if ("block", axis) in self.owned and {f"threadIdx.{axis}", f"global.{axis}"} & sources or \
                    ("grid", axis) in self.owned and {f"blockIdx.{axis}", f"global.{axis}"} & sources:
                return None
        values = {**self.constants, **self.template_values}
        for name, limit in self.conditions:
            modulus = self.decodes[name].modulus
            # a guard on a digit below the top may only restate its radix, for every size
            if modulus is not None:
                slack = (limit - modulus).constant
                if slack is None:
                    slack_at = evaluate(limit - modulus, self.template_values)
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
            for name, limit in self.conditions:
                decode = self.decodes[name]
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
                    have, width = evaluate(reach, self.template_values), evaluate(low, self.template_values)
                    if have is None or not width or have % width:
                        return None
                    bound = Poly.const(have // width)
            else:
                # the launch must reach every guarded value (checked at the spec's sizes)
                if not self._reaches(source, _times(bound, low), reach, values):
                    return None
            extents[leaf] = self._symbolic(bound, values)
        return extents

    def _symbolic(self, extent: Poly, values: Mapping[str, int]) -> Poly:
        """A literal extent that equals exactly one template parameter becomes that parameter,
        so the rewrite stays right for the template's other instantiations."""
        if extent.constant is None:
            return extent
        same = [name for name, value in self.template_values.items() if value == extent.constant]
        return Poly.atom(same[0]) if len(same) == 1 else extent

    def _epilogue(self, work: _Work, c_index: Poly) -> str | None:
        """The stored value as a format string over `{acc}` and `{c}`."""
        expression = self._formatted(work.value, work, c_index)
        if expression is None:
            return None
        return f"{{c}} + ({expression})" if work.compound else expression

    def _formatted(self, value: Node, work: _Work, c_index: Poly) -> str | None:
        """`value`'s text as a format string: the accumulator `{acc}`, C at the stored element
        `{c}`, a float local of the epilogue its own value converted to its type; None when it
        reads anything else (other memory, thread-dependent locals) or changes anything."""
        data = self.syntax.source
        spans: list[tuple[int, int, str]] = []
        stack = [value]
        while stack:
            node = stack.pop()
            if node.type == "subscript_expression":
                array, index = self._subscript(node)
                if array != work.output[0]:
                    return None
                leaves_index = self._renamed(index)
                if leaves_index is None or leaves_index != c_index:
                    return None
                spans.append((node.start_byte, node.end_byte, "{c}"))
                continue
            if node.type == "identifier":
                name = text(node)
                if name == work.acc:
                    spans.append((node.start_byte, node.end_byte, "{acc}"))
                elif name in self.value_locals:
                    type_text, local_value = self.value_locals[name]
                    inner = self._formatted(local_value, work, c_index)
                    if inner is None:
                        return None
                    spans.append((node.start_byte, node.end_byte, f"(({type_text})({inner}))"))
                elif name not in self.scalars and name not in self.template_values and \
                        not (node.parent is not None and node.parent.type == "call_expression" and
                             node.parent.child_by_field_name("function") == node and name in PURE_CALLS):
                    return None
                continue
            if node.type in ("assignment_expression", "update_expression", "pointer_expression",
                             "field_expression", "comma_expression"):
                return None
            stack.extend(node.children)
        pieces: list[str] = []
        cursor = value.start_byte
        for start, end, replacement in sorted(spans):
            pieces.append(data[cursor:start].decode().replace("{", "{{").replace("}", "}}"))
            pieces.append(replacement)
            cursor = end
        pieces.append(data[cursor : value.end_byte].decode().replace("{", "{{").replace("}", "}}"))
        return "".join(pieces)

    def _renamed(self, index: Poly) -> Poly | None:
        """An index with its decode locals as the role names b, i, j (as `_finish` names them)."""
        leaves = substitute(index, self.leaf_of_local)
        return substitute(leaves, self.role_of_leaf) if leaves is not None else None


def _literal_global(axis: str, block: Poly) -> Poly | None:
    """`blockIdx.x * 256 + threadIdx.x` when the launch's block is 256 wide."""
    if block.constant is None:
        return None
    return Poly.of({(f"blockIdx.{axis}",): block.constant, (f"threadIdx.{axis}",): 1})


def _times(left: Poly, right: Poly) -> Poly:
    product = left * right
    if product is None:
        raise _NotBatched
    return product


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
    base = index - _times(outer, Poly.atom(coordinate)) - _times(inner, Poly.atom(k))
    if not base.atoms() <= scalars | {"b"} or coefficient_of(base, "b").atoms() - scalars:
        return None
    if any(m.count("b") > 1 for m, _ in base.terms):
        return None
    return BatchedOperand(array, base, outer, inner)


def _output(index: Poly, scalars: set[str]) -> tuple[Poly, Poly, Poly] | None:
    row, col = coefficient_of(index, "i"), coefficient_of(index, "j")
    if not row.terms or not col.terms or not (row.atoms() | col.atoms()) <= scalars:
        return None
    base = index - _times(row, Poly.atom("i")) - _times(col, Poly.atom("j"))
    if not base.atoms() <= scalars | {"b"} or any(m.count("b") > 1 for m, _ in base.terms):
        return None
    if not coefficient_of(base, "b").terms:
        return None
    return base, row, col


def _product_factors(node: Node, acc: str, loads: Mapping[str, _Factor],
                     type_parameters: set[str]) -> tuple[tuple[_Factor, _Factor], str] | None:
    """The two factors of `acc += a * b` (or `acc = acc + a * b`, `acc = a * b + acc`,
    `acc = fmaf(a, b, acc)`, `fma`) and the fused call's name ("" for none). A factor is a load
    `A[..]` or one of the k loop's load locals (each used once, as one factor), either possibly
    converted: `(double)x`, `static_cast<double>(x)`, `double(x)`, `T(x)` for a template type."""
    if node.type != "assignment_expression" or text(node.child_by_field_name("left")) != acc:
        return None
    op, right = text(node.child_by_field_name("operator")), unparen(node.child_by_field_name("right"))
    factors: list[Node | None] = []
    fused = ""
    if right is None:
        return None
    if op == "=" and right.type == "call_expression" and call_name(right) in ("fmaf", "fma", "__fmaf_rn"):
        args = call_args(right)
        if len(args) != 3 or text(unparen(args[2])) != acc:
            return None
        factors, fused = [args[0], args[1]], call_name(right)
    else:
        product: Node | None = right if op == "+=" else None
        if op == "=" and right.type == "binary_expression" and text(right.child_by_field_name("operator")) == "+":
            left_term, right_term = unparen(right.child_by_field_name("left")), unparen(right.child_by_field_name("right"))
            product = right_term if text(left_term) == acc else left_term if text(right_term) == acc else None
        product = unparen(product)
        if product is None or product.type != "binary_expression" or text(product.child_by_field_name("operator")) != "*":
            return None
        factors = [product.child_by_field_name("left"), product.child_by_field_name("right")]
    resolved: list[_Factor] = []
    used: list[str] = []
    for factor in factors:
        converted = _converted(factor, type_parameters)
        if converted is None:
            return None
        inner = converted.load
        if inner.type == "identifier" and text(inner) in loads:
            used.append(text(inner))
            local = loads[text(inner)]
            resolved.append(_Factor(local.load, (*local.conversions, *converted.conversions)))
        elif inner.type == "subscript_expression":
            resolved.append(converted)
        else:
            return None
    if sorted(used) != sorted(loads):
        return None  # every load local is one factor, once
    return (resolved[0], resolved[1]), fused


def _converted(node: Node | None, type_parameters: set[str]) -> _Factor | None:
    """`node` without the conversions around it (`(double)(float)x` -> x, ("float", "double"))."""
    casts: list[str] = []
    inner = unparen(node)
    while inner is not None:
        conversion = _conversion(inner, type_parameters)
        if conversion is None:
            break
        casts.append(conversion[0])
        inner = unparen(conversion[1])
    return _Factor(inner, tuple(reversed(casts))) if inner is not None else None


def _conversion(node: Node, type_parameters: set[str]) -> tuple[str, Node] | None:
    """(type as written, converted value) of `(T)x`, `static_cast<T>(x)`, `T(x)` (a builtin
    type or a template type parameter), else None."""
    if node.type == "cast_expression":
        type_node, value = node.child_by_field_name("type"), node.child_by_field_name("value")
        if type_node is None or value is None or ambiguous_cast(node):
            return None
        return text(type_node), value
    if node.type != "call_expression" or len(call_args(node)) != 1:
        return None
    function = node.child_by_field_name("function")
    if function is None:
        return None
    if function.type == "primitive_type" or (function.type in ("identifier", "type_identifier") and
                                             text(function) in type_parameters):
        return text(function), call_args(node)[0]
    if function.type == "template_function" and text(function.child_by_field_name("name")) == "static_cast":
        arguments = function.child_by_field_name("arguments")
        kinds = [a for a in arguments.named_children if a.type != "comment"] if arguments is not None else []
        if len(kinds) == 1 and kinds[0].type == "type_descriptor":
            return text(kinds[0]), call_args(node)[0]
    return None
