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

This module reads the statements (decodes, guards, batch loops, pointer offsets); its
collaborators: the records and reading state (`batched_model.py`), the k loop's product
(`batched_work.py`) and the domain (`batched_domain.py`).
"""

from __future__ import annotations

from collections.abc import Mapping

from tree_sitter import Node

from regrapht.cuda.affine import Poly, exact_quotient
from regrapht.idioms.batched_domain import Domain
from regrapht.idioms.batched_model import (
    AXES,
    FLOAT_TYPES,
    GLOBALS,
    INTEGER_TYPE_WORDS,
    LEAF_NAMES,
    ROLES,
    BatchedOperand,
    BatchedProduct,
    Decode,
    NotBatched,
    ProductWork,
    Reading,
    evaluate,
    substitute,
    template_arguments,
    times,
)
from regrapht.idioms.batched_work import ProductReader
from regrapht.idioms.pointwise import expression_poly, is_pragma
from regrapht.idioms.syntax import (
    KernelSyntax,
    Symbols,
    call_name,
    identifiers_in,
    kernel_syntax,
    named_statements,
    text,
    unparen,
    walk,
)


def batched_product(source: str, kernel_name: str, grid: tuple[str, ...], block: tuple[str, ...],
                    constants: Mapping[str, int] | None = None) -> BatchedProduct | None:
    """The batched product kernel `kernel_name` of `source` computes under this launch, or None.

    `grid`/`block` are the launch's spec expressions; `constants` the spec's scalar values."""
    syntax = kernel_syntax(source, kernel_name.split("<")[0].strip())
    if syntax is None:
        return None
    try:
        return _Reader(syntax, kernel_name, grid, block, dict(constants or {})).read()
    except NotBatched:
        return None


class _Reader:
    """Reads the kernel's statements in order into a `Reading`, up to the product's work."""

    def __init__(self, syntax: KernelSyntax, kernel_name: str, grid: tuple[str, ...], block: tuple[str, ...],
                 constants: dict[str, int]) -> None:
        reading = Reading(syntax, constants, Symbols(syntax.constants))
        self.reading = reading
        self.products = ProductReader(reading)
        self.work: ProductWork | None = None
        self.pending: Node | None = None  # an accumulator declared before the indices, awaiting its loop
        # threadIdx/blockIdx used directly in subscripts are decodes of themselves
        for axis in AXES:
            for builtin in ("threadIdx", "blockIdx"):
                reading.decodes[f"{builtin}.{axis}"] = Decode(f"{builtin}.{axis}", Poly.const(1), None)
        self._template(kernel_name)
        reading.scalars = {p.name for p in syntax.params if not p.is_pointer}
        reading.pointers = {p.name: reading.types.get(p.base_type, p.base_type) for p in syntax.params if p.is_pointer}
        reading.written_types = {p.name: p.base_type for p in syntax.params if p.is_pointer}
        reading.known = reading.scalars | set(reading.template_values)
        reading.grid_texts = (list(grid) + ["1"] * 3)[:3]
        reading.block_texts = (list(block) + ["1"] * 3)[:3]
        reading.launch_grid = [self._launch_poly(g) for g in reading.grid_texts]
        reading.launch_block = [self._launch_poly(b) for b in reading.block_texts]

    # ------------------------------------------------------------------ set-up
    def _template(self, kernel_name: str) -> None:
        function = self.reading.syntax.function
        template = function.parent if function.parent is not None and \
            function.parent.type == "template_declaration" else None
        if template is None:
            return
        parameters = template.child_by_field_name("parameters")
        arguments = template_arguments(kernel_name)
        declared = [p for p in (parameters.named_children if parameters is not None else []) if p.type != "comment"]
        if len(arguments) != len(declared):
            raise NotBatched  # defaults or packs: not worth guessing
        for parameter, argument in zip(declared, arguments, strict=True):
            name = text(parameter.named_children[-1]) if parameter.named_children else ""
            if parameter.type == "type_parameter_declaration":
                self.reading.types[name] = argument
            elif parameter.type == "parameter_declaration":
                declarator = parameter.child_by_field_name("declarator")
                value = expression_poly(argument, self.reading.syntax.constants)
                if declarator is None or value is None or value.constant is None:
                    raise NotBatched
                self.reading.template_values[text(declarator)] = value.constant
            else:
                raise NotBatched

    def _launch_poly(self, expression: str) -> Poly:
        poly = expression_poly(expression, self.reading.syntax.constants)
        if poly is None:
            raise NotBatched
        return poly

    # ------------------------------------------------------------------ statements
    def read(self) -> BatchedProduct | None:
        self._statements(self.reading.syntax.statements())
        if self.work is None:
            return None
        return Domain(self.reading, self.work).finish()

    def _statements(self, statements: list[Node]) -> None:
        statements = [s for s in statements if not is_pragma(s)]
        for position, statement in enumerate(statements):
            last = position == len(statements) - 1
            if self.work is not None:
                raise NotBatched  # anything after the store
            kind = statement.type
            if self.pending is not None and kind not in ("if_statement", "compound_statement", "for_statement"):
                acc = self.products.accumulator(self.pending)
                if acc is not None and acc[0] in identifiers_in(statement):
                    raise NotBatched  # the accumulator used before its loop
            if kind == "declaration":
                following = statements[position + 1] if position + 1 < len(statements) else None
                if self.products.accumulator(statement, following) is not None:
                    if following is None or following.type != "for_statement":
                        # `float sum = 0.f;` first, the indices and guards after it: the k loop
                        # later in this block (or an `if` in it) takes it
                        if self.pending is not None:
                            raise NotBatched
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
                raise NotBatched

    def _work_from(self, declaration: Node, rest: list[Node]) -> None:
        """The accumulator `declaration`, then in `rest` the k loop, declarations, the store."""
        if len(rest) < 2:
            raise NotBatched
        for between in rest[1:-1]:  # `size_t o = ...;` between the loop and the store
            if between.type != "declaration":
                raise NotBatched
            if not self._value_local(between):
                self._declaration(between)
        self.work = self.products.product(declaration, rest[0], rest[-1])

    def _declaration(self, statement: Node) -> None:
        if any(text(c) in ("static", "__shared__", "extern") for c in statement.children):
            raise NotBatched
        for declarator in statement.children_by_field_name("declarator"):
            if declarator.type != "init_declarator":
                raise NotBatched
            target = declarator.child_by_field_name("declarator")
            value = declarator.child_by_field_name("value")
            if target is None or value is None:
                raise NotBatched
            if target.type == "pointer_declarator":
                name = text(target.child_by_field_name("declarator"))
                if not self.reading.symbols.define_alias(name, value, self.reading.pointers):
                    raise NotBatched
                continue
            type_text = text(statement.child_by_field_name("type"))
            if target.type != "identifier" or any(word in type_text for word in ("float", "double", "half", "auto")):
                raise NotBatched
            if any(n.type in ("subscript_expression", "pointer_expression", "assignment_expression",
                              "update_expression") or (n.type == "call_expression" and call_name(n) not in
                                                       ("min", "max", "static_cast", "int")) for n in walk(value)):
                raise NotBatched
            name = text(target)
            decode = self._decode(value)
            if decode is not None:
                self.reading.decodes[name] = decode
                self.reading.symbols.env[name] = Poly.atom(name)
            else:
                poly = self.reading.symbols.poly(value)
                if any(a.startswith("~") or ("." in a and a not in self.reading.decodes) for a in poly.atoms()):
                    raise NotBatched  # opaque, or geometry other than threadIdx/blockIdx themselves
                self.reading.symbols.define(name, value)

    def _value_local(self, statement: Node) -> bool:
        """`float v = alpha * acc;` between the loop and the store: a float/double local (not
        `static`) the epilogue may read, its value standing in for it there (`_epilogue` then
        checks that the value reads nothing but the accumulator, scalars and earlier such locals)."""
        type_text = text(statement.child_by_field_name("type"))
        declarators = statement.children_by_field_name("declarator")
        if self.reading.types.get(type_text, type_text) not in FLOAT_TYPES or len(declarators) != 1 or \
                declarators[0].type != "init_declarator" or \
                any(c.type == "storage_class_specifier" for c in statement.children):
            return False
        target, value = declarators[0].child_by_field_name("declarator"), declarators[0].child_by_field_name("value")
        if target is None or value is None or target.type != "identifier":
            raise NotBatched
        self.reading.value_locals[text(target)] = (type_text, value)
        return True

    def _advance(self, statement: Node) -> None:
        """`A += mat * M * K;` (or `A = A + ...`) on a pointer before the work: an offset."""
        assignment = statement.named_children[0] if statement.named_children else None
        if assignment is None or assignment.type != "assignment_expression":
            raise NotBatched
        target = unparen(assignment.child_by_field_name("left"))
        value = assignment.child_by_field_name("right")
        op = text(assignment.child_by_field_name("operator"))
        name = text(target) if target is not None and target.type == "identifier" else ""
        if not (name in self.reading.pointers or name in self.reading.symbols.aliases) or value is None:
            raise NotBatched
        if op == "=":
            if not self.reading.symbols.define_alias(name, value, self.reading.pointers):
                raise NotBatched
            return
        if op != "+=":
            raise NotBatched
        offset = self.reading.symbols.poly(value)
        if offset.memory_dependent or any(a.startswith("~") for a in offset.atoms()):
            raise NotBatched
        root, first = self.reading.symbols.aliases.get(name, (name, Poly.const(0)))
        self.reading.symbols.aliases[name] = (root, first + offset)

    def _decode(self, node: Node | None) -> Decode | None:
        node = unparen(node)
        if node is None:
            return None
        if node.type == "identifier" and text(node) in self.reading.decodes:
            return self.reading.decodes[text(node)]
        if node.type == "cast_expression":
            return self._cast_decode(node)
        if node.type == "binary_expression" and text(node.child_by_field_name("operator")) in ("/", "%"):
            inner = self._decode(node.child_by_field_name("left"))
            amount = self.reading.scalar(node.child_by_field_name("right"))
            if inner is None or amount is None or amount.constant == 0:
                return None
            if text(node.child_by_field_name("operator")) == "/":
                if inner.modulus is None:
                    return Decode(inner.source, times(inner.divisor, amount), None)
                remaining = exact_quotient(inner.modulus, amount)
                return Decode(inner.source, times(inner.divisor, amount), remaining) if remaining is not None \
                    else None
            if inner.modulus is not None and exact_quotient(inner.modulus, amount) is None:
                return None
            return Decode(inner.source, inner.divisor, amount)
        poly = self.reading.symbols.poly(node)
        for axis_index, axis in enumerate(AXES):
            for source, shape in ((f"threadIdx.{axis}", Poly.atom(f"threadIdx.{axis}")),
                                  (f"blockIdx.{axis}", Poly.atom(f"blockIdx.{axis}")),
                                  (f"global.{axis}", GLOBALS[axis]),
                                  (f"global.{axis}", _literal_global(axis, self.reading.launch_block[axis_index]))):
                if shape is not None and poly == shape:
                    return Decode(source, Poly.const(1), None)
        return None

    def _cast_decode(self, node: Node) -> Decode | None:
        """`(int)(o / N % M)`: a cast to an integer type keeps the decode when it widens, or when
        the value is a digit below a modulus (`% M` with M an int scalar: it fits any integer type)."""
        type_node = node.child_by_field_name("type")
        words = set(text(type_node).split()) if type_node is not None else set()
        if not words or not words <= INTEGER_TYPE_WORDS:
            return None
        inner = self._decode(node.child_by_field_name("value"))
        if inner is None:
            return None
        if words & {"long", "size_t", "int64_t", "uint64_t", "ptrdiff_t"} or inner.modulus is not None:
            return inner
        return None

    def _scalar(self, node: Node | None) -> Poly | None:
        """A positive amount over scalars and template parameters."""
        poly = self.reading.symbols.poly(node)
        if not poly.terms or not poly.atoms() <= self.reading.known or any(c <= 0 for _, c in poly.terms):
            return None
        return poly

    def _if(self, statement: Node, last: bool) -> None:
        condition = statement.child_by_field_name("condition")
        consequence = statement.child_by_field_name("consequence")
        if condition is None or consequence is None or statement.child_by_field_name("alternative") is not None:
            raise NotBatched
        body = named_statements(consequence)
        if len(body) == 1 and body[0].type == "return_statement" and not body[0].named_children:
            self.reading.conditions.extend(self._comparisons(condition, "||", negate=True))
            return
        if not last:
            raise NotBatched
        self.reading.conditions.extend(self._comparisons(condition, "&&", negate=False))
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
                raise NotBatched
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
            bound = self.reading.exclusive(right, op == "<=")
            if op not in ("<", "<=") or name not in self.reading.decodes or bound is None:
                raise NotBatched
            found.append((name, bound))
        return found

    def _exclusive(self, node: Node | None, inclusive: bool) -> Poly | None:
        """The exclusive bound a `< node` (or `<= node`: `<= M - 1` is `< M`) sets, over scalars."""
        if not inclusive:
            return self.reading.scalar(node)
        poly = self.reading.symbols.poly(node) + Poly.const(1)
        if not poly.terms or not poly.atoms() <= self.reading.known or any(c <= 0 for _, c in poly.terms):
            return None
        return poly

    def _batch_loop(self, loop: Node) -> None:
        """`for (int b = 0; b < B; b++)` or a grid-stride loop around the work."""
        if self.pending is not None:
            raise NotBatched  # an accumulator outside the batch loop is not zeroed per matrix
        init = loop.child_by_field_name("initializer")
        condition = unparen(loop.child_by_field_name("condition"))
        update = loop.child_by_field_name("update")
        body = loop.child_by_field_name("body")
        if init is None or init.type != "declaration" or condition is None or update is None or body is None:
            raise NotBatched
        declarators = init.children_by_field_name("declarator")
        if len(declarators) != 1 or declarators[0].type != "init_declarator":
            raise NotBatched
        name = text(declarators[0].child_by_field_name("declarator"))
        start = self.reading.symbols.poly(declarators[0].child_by_field_name("value"))
        if condition.type != "binary_expression" or text(condition.child_by_field_name("operator")) != "<" or \
                text(condition.child_by_field_name("left")) != name:
            raise NotBatched
        bound = self.reading.scalar(condition.child_by_field_name("right"))
        step_text = text(update).replace(" ", "")
        if bound is None or any(text(n) == name for n in walk(body) if n.type == "identifier" and
                                n.parent is not None and n.parent.type in ("assignment_expression",
                                                                           "update_expression")):
            raise NotBatched
        step: Poly | None = Poly.const(1) if step_text in (f"{name}++", f"++{name}", f"{name}+=1") else None
        if step is None and step_text.startswith(f"{name}+="):
            step = self.reading.symbols.poly(update.child_by_field_name("right"))
        if step is None:
            raise NotBatched
        source = f"loop.{name}"
        if start == Poly.const(0) and step == Poly.const(1):
            pass
        else:
            owned: list[tuple[str, str]] = []
            for axis in AXES:
                if start == Poly.atom(f"blockIdx.{axis}") and step == Poly.atom(f"gridDim.{axis}"):
                    owned = [("grid", axis)]
                elif start == GLOBALS[axis] and step in (Poly.of({(f"blockDim.{axis}", f"gridDim.{axis}"): 1}),):
                    owned = [("grid", axis), ("block", axis)]
                elif start == Poly.atom(f"threadIdx.{axis}") and step == Poly.atom(f"blockDim.{axis}"):
                    owned = [("block", axis)]  # a block-stride loop: the block's threads share the values
            if not owned or any(o in self.reading.owned for o in owned):
                raise NotBatched
            self.reading.owned.update(owned)
        self.reading.reach[source] = bound
        self.reading.decodes[name] = Decode(source, Poly.const(1), None)
        self.reading.symbols.env[name] = Poly.atom(name)
        self._statements(named_statements(body))


def _literal_global(axis: str, block: Poly) -> Poly | None:
    """`blockIdx.x * 256 + threadIdx.x` when the launch's block is 256 wide."""
    if block.constant is None:
        return None
    return Poly.of({(f"blockIdx.{axis}",): block.constant, (f"threadIdx.{axis}",): 1})


__all__ = [
    "LEAF_NAMES", "ROLES", "BatchedOperand", "BatchedProduct", "Decode", "batched_product", "evaluate", "substitute",
    "template_arguments",
]
