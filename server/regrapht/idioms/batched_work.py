"""The k loop of a batched product: a zeroed accumulator, `acc += a * b` over k, one store.

`ProductReader` reads the accumulator declaration, the k loop (its bound, the load locals, the
update `acc += X[..] * Y[..]`, `fmaf`/`fma` too) and the store `C[..] = expr(acc)` into a
`ProductWork`; `product_type` says in which type each product is formed (a widened factor,
`(double)A[..]`, forms it there; a narrowing conversion is a near-miss).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.cuda.nodes import ambiguous_cast
from regrapht.idioms.batched_model import (
    ELEMENT_TYPES,
    FLOAT_RANK,
    FLOAT_TYPES,
    NotBatched,
    ProductWork,
    Reading,
)
from regrapht.idioms.pointwise import is_pragma
from regrapht.idioms.syntax import (
    call_args,
    call_name,
    named_statements,
    text,
    unparen,
)


@dataclass(frozen=True)
class Factor:
    """One factor of the k loop's product: a load and the types (as written) it is converted to
    before the product, innermost first (a load local's declared type, then casts)."""

    load: Node
    conversions: tuple[str, ...]



class ProductReader:
    """Reads the product of the kernel whose reading so far is `reading`."""

    def __init__(self, reading: Reading) -> None:
        self.reading = reading

    def accumulator(self, statement: Node, following: Node | None = None) -> tuple[str, str] | None:
        """(name, type as written) of a zeroed accumulator declaration; a float local that is not
        one ends the reading. An `int` local is an accumulator only when it is zeroed, a loop
        follows and the data are int (else it is an index like any other)."""
        type_text = text(statement.child_by_field_name("type"))
        declared = self.reading.types.get(type_text, type_text)
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
                    declared not in self.reading.pointers.values() or any(word in text(statement) for word in ("const", "static")):
                return None
        elif literal not in ("0", "0.", "0.0", ".0"):
            raise NotBatched  # a float local that is not a zeroed accumulator
        return text(declarators[0].child_by_field_name("declarator")), type_text

    def product(self, declaration: Node, loop: Node, store: Node) -> ProductWork:
        acc, acc_type = self.accumulator(declaration, loop) or ("", "")
        if loop.type != "for_statement" or store.type != "expression_statement":
            raise NotBatched
        init, condition = loop.child_by_field_name("initializer"), unparen(loop.child_by_field_name("condition"))
        update, body = loop.child_by_field_name("update"), loop.child_by_field_name("body")
        if init is None or condition is None or update is None or body is None or init.type != "declaration":
            raise NotBatched
        declarators = init.children_by_field_name("declarator")
        if len(declarators) != 1 or declarators[0].type != "init_declarator" or \
                self.reading.symbols.poly(declarators[0].child_by_field_name("value")) != Poly.const(0):
            raise NotBatched
        k = text(declarators[0].child_by_field_name("declarator"))
        # `k < K`, `k <= K - 1`, or `k != K` (the same for every K >= 0; below, the original
        # overflows its counter)
        operator = text(condition.child_by_field_name("operator")) if condition.type == "binary_expression" else ""
        if text(update).replace(" ", "") not in (f"{k}++", f"++{k}", f"{k}+=1") or \
                operator not in ("<", "<=", "!=") or text(condition.child_by_field_name("left")) != k:
            raise NotBatched
        k_bound = self.reading.exclusive(condition.child_by_field_name("right"), operator == "<=")
        statements = [s for s in named_statements(body) if not is_pragma(s) and
                      not (s.type == "expression_statement" and not s.named_children)]  # `;`
        if k_bound is None or not statements or statements[-1].type != "expression_statement" or \
                not statements[-1].named_children:
            raise NotBatched
        self.reading.symbols.env[k] = Poly.atom(k)
        loads = self._loads(statements[:-1])
        read = _product_factors(statements[-1].named_children[0], acc, loads, set(self.reading.types))
        if read is None:
            raise NotBatched
        (first_factor, second_factor), fused = read
        first, second = (self.reading.subscript(factor.load) for factor in (first_factor, second_factor))
        assignment = store.named_children[0] if store.named_children else None
        if assignment is None or assignment.type != "assignment_expression" or \
                text(assignment.child_by_field_name("operator")) not in ("=", "+="):
            raise NotBatched
        target = unparen(assignment.child_by_field_name("left"))
        value = assignment.child_by_field_name("right")
        if target is None or target.type != "subscript_expression" or value is None:
            raise NotBatched
        output = self.reading.subscript(target)
        if output[0] in (first[0], second[0]):
            raise NotBatched  # the output aliases an operand
        return ProductWork(acc, acc_type, k, k_bound, first, second,
                     (first_factor.conversions, second_factor.conversions), fused, output, value,
                     text(assignment.child_by_field_name("operator")) == "+=")

    def _loads(self, statements: list[Node]) -> dict[str, Factor]:
        """`float a = A[..];` statements before the update in the k loop: local -> its load
        and the conversions on the way (a cast of the load, then the local's type). Not static;
        the conversions are checked with the product's (`product_type`: widening only)."""
        loads: dict[str, Factor] = {}
        for statement in statements:
            declarators = statement.children_by_field_name("declarator") if statement.type == "declaration" else []
            if len(declarators) != 1 or declarators[0].type != "init_declarator" or \
                    any(c.type == "storage_class_specifier" for c in statement.children):
                raise NotBatched
            target, value = declarators[0].child_by_field_name("declarator"), \
                unparen(declarators[0].child_by_field_name("value"))
            converted = _converted(value, set(self.reading.types)) if value is not None else None
            if target is None or target.type != "identifier" or converted is None or \
                    converted.load.type != "subscript_expression" or text(target) in loads:
                raise NotBatched
            self.reading.subscript(converted.load)
            loads[text(target)] = Factor(converted.load,
                                          (*converted.conversions, text(statement.child_by_field_name("type"))))
        return loads


def product_type(types: Mapping[str, str], work: ProductWork, element: str, acc_type: str) -> tuple[str, str] | None:
    """(type, as written) each product is formed in: the element type, or the wider float
    type a factor is converted to (the other factor follows it, by C++'s usual conversions);
    None when a conversion narrows (`float a = A[..]` on double data rounds every element),
    leaves the float types, or feeds a fused call that would not form the product there."""
    product, written = element, ""
    for chain in work.conversions:
        current, current_text = element, ""
        for type_text in chain:
            resolved = types.get(type_text, type_text)
            if resolved == current:
                current_text = current_text or type_text
                continue
            if current not in FLOAT_RANK or resolved not in FLOAT_RANK or \
                    FLOAT_RANK[resolved] < FLOAT_RANK[current]:
                return None
            current, current_text = resolved, type_text
        if current != product and FLOAT_RANK.get(current, -1) > FLOAT_RANK.get(product, -1):
            product, written = current, current_text
    if work.fused in ("fmaf", "__fmaf_rn") and not (element == acc_type == product == "float"):
        return None  # fmaf rounds a double accumulator (or factor) to float at every step
    if work.fused == "fma" and acc_type != product:
        return None  # `fma` on mixed types: another overload, or none
    return product, written


def _product_factors(node: Node, acc: str, loads: Mapping[str, Factor],
                     type_parameters: set[str]) -> tuple[tuple[Factor, Factor], str] | None:
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
    resolved: list[Factor] = []
    used: list[str] = []
    for factor in factors:
        converted = _converted(factor, type_parameters)
        if converted is None:
            return None
        inner = converted.load
        if inner.type == "identifier" and text(inner) in loads:
            used.append(text(inner))
            local = loads[text(inner)]
            resolved.append(Factor(local.load, (*local.conversions, *converted.conversions)))
        elif inner.type == "subscript_expression":
            resolved.append(converted)
        else:
            return None
    if sorted(used) != sorted(loads):
        return None  # every load local is one factor, once
    return (resolved[0], resolved[1]), fused


def _converted(node: Node | None, type_parameters: set[str]) -> Factor | None:
    """`node` without the conversions around it (`(double)(float)x` -> x, ("float", "double"))."""
    casts: list[str] = []
    inner = unparen(node)
    while inner is not None:
        conversion = _conversion(inner, type_parameters)
        if conversion is None:
            break
        casts.append(conversion[0])
        inner = unparen(conversion[1])
    return Factor(inner, tuple(reversed(casts))) if inner is not None else None


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
