"""Which dot product a dense matrix product forms: `C(r, c) = f(sum_k A(r, k) * B(k, c))`.

A dense product is a point kernel (`pointwise.py`) over a row and a column coordinate (and an
optional batch coordinate) whose work is: a float accumulator set to zero, one loop `k` from 0
to a scalar bound adding the product of a read of A and a read of B (`acc += A[..] * B[..]`,
`acc = acc + ...`, `acc = fmaf(A[..], B[..], acc)`), and one store of an expression of the
accumulator into C (`C[i] = acc`, `C[i] = alpha * acc + beta * C[i]`). Each operand's index is
split with the affine algebra into base + outer * (row or column) + inner * k: a stride of 1
says which way the operand is contiguous, so transposed operands (`A[k * lda + r]`) and batched
bases (`A[b * M * K + ...]`) are recognised alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.cuda.extract import node_text
from regrapht.idioms.pointwise import Access, PointKernel, coefficient_of, is_pragma
from regrapht.idioms.syntax import unparen, walk


@dataclass(frozen=True)
class Operand:
    array: str
    base: Poly  # scalars and the batch coordinate only
    outer: Poly  # stride of the row (A) or column (B) coordinate
    inner: Poly  # stride of k

    @property
    def k_contiguous(self) -> bool:
        return self.inner.constant == 1


@dataclass(frozen=True)
class DenseProduct:
    kernel: PointKernel
    row: str
    col: str
    batch: str | None
    k: str  # the loop variable's name
    k_bound: str  # its exclusive upper bound (scalars and literals)
    acc: str
    a: Operand
    b: Operand
    output: str
    store: str  # the store statement's text (uses `acc`, coordinates, scalars, C at its own index)


def dense_product(kernel: PointKernel) -> DenseProduct | None:
    nodes = kernel.work_nodes
    if len(nodes) != 3 or len(kernel.coordinates) not in (2, 3):
        return None
    acc = _zero_accumulator(nodes[0])
    loop = _k_loop(kernel, nodes[1], acc) if acc is not None else None
    if acc is None or loop is None or nodes[2].type != "expression_statement":
        return None
    k, k_bound, (first, second) = loop
    reads = [a for a in kernel.accesses if a.loop_vars == (k,)]
    outside = [a for a in kernel.accesses if not a.loop_vars]
    if len(reads) != 2 or len(outside) + 2 != len(kernel.accesses):
        return None
    writes = [a for a in outside if a.write]
    if len(writes) != 1 or writes[0].read:
        return None
    output = writes[0]
    if any(a.array == output.array and a.index != output.index for a in outside):
        return None  # C read elsewhere than the element it writes
    if output.array in (first.array, second.array) or any(a.index.memory_dependent for a in kernel.accesses):
        return None
    names = [c.name for c in kernel.coordinates]
    split = _operands(kernel, first, second, k, names)
    if split is None:
        return None
    row, col, batch, a, b = split
    if kernel.bounds[row].lower != "0" or kernel.bounds[col].lower != "0":
        return None
    if batch is not None and kernel.bounds[batch].lower != "0":
        return None
    element = {kernel.pointers[x] for x in (a.array, b.array, output.array)}
    if element != {"float"}:
        return None
    return DenseProduct(kernel, row, col, batch, k, k_bound, acc, a, b, output.array, node_text(nodes[2]))


def _zero_accumulator(node: Node) -> str | None:
    if node.type != "declaration" or node_text(node.child_by_field_name("type")) != "float":
        return None
    declarators = node.children_by_field_name("declarator")
    if len(declarators) != 1 or declarators[0].type != "init_declarator":
        return None
    value = node_text(declarators[0].child_by_field_name("value")).rstrip("fF")
    if value not in ("0", "0.", "0.0", ".0"):
        return None
    return node_text(declarators[0].child_by_field_name("declarator"))


def _k_loop(kernel: PointKernel, node: Node, acc: str) -> tuple[str, str, tuple[Access, Access]] | None:
    if node.type != "for_statement":
        return None
    init, condition = node.child_by_field_name("initializer"), node.child_by_field_name("condition")
    update, body = node.child_by_field_name("update"), node.child_by_field_name("body")
    if init is None or condition is None or update is None or body is None or init.type != "declaration":
        return None
    declarators = init.children_by_field_name("declarator")
    if len(declarators) != 1 or declarators[0].type != "init_declarator" or \
            node_text(declarators[0].child_by_field_name("value")) != "0":
        return None
    k = node_text(declarators[0].child_by_field_name("declarator"))
    if node_text(update).replace(" ", "") not in (f"{k}++", f"++{k}", f"{k}+=1"):
        return None
    if condition.type != "binary_expression" or node_text(condition.child_by_field_name("operator")) != "<" or \
            node_text(condition.child_by_field_name("left")) != k:
        return None
    bound = condition.child_by_field_name("right")
    if bound is None or any(n.type == "identifier" and node_text(n) not in kernel.params for n in walk(bound)) or \
            any(node_text(n) in kernel.pointers for n in walk(bound)):
        return None
    statements = body.named_children if body.type == "compound_statement" else [body]
    statements = [s for s in statements if s.type != "comment" and not is_pragma(s)]
    if len(statements) != 1 or statements[0].type != "expression_statement":
        return None
    operands = _product_update(statements[0].named_children[0] if statements[0].named_children else None, acc)
    if operands is None:
        return None
    found = []
    for operand in operands:
        access = next((a for a in kernel.accesses if a.start == operand.start_byte and a.end == operand.end_byte),
                      None)
        if access is None or access.write:
            return None
        found.append(access)
    return k, " ".join(node_text(bound).split()), (found[0], found[1])


def _product_update(node: Node | None, acc: str) -> tuple[Node, Node] | None:
    """The two subscripts of `acc += X * Y`, `acc = acc + X * Y`, `acc = fmaf(X, Y, acc)`."""
    if node is None or node.type != "assignment_expression" or node_text(node.child_by_field_name("left")) != acc:
        return None
    op = node_text(node.child_by_field_name("operator"))
    right = unparen(node.child_by_field_name("right"))
    if right is None:
        return None
    product: Node | None = None
    if op == "+=":
        product = right
    elif op == "=" and right.type == "binary_expression" and node_text(right.child_by_field_name("operator")) == "+":
        left_term, right_term = unparen(right.child_by_field_name("left")), unparen(right.child_by_field_name("right"))
        if left_term is not None and node_text(left_term) == acc:
            product = right_term
        elif right_term is not None and node_text(right_term) == acc:
            product = left_term
    elif op == "=" and right.type == "call_expression" and node_text(right.child_by_field_name("function")) in \
            ("fmaf", "__fmaf_rn", "fma"):
        arguments = right.child_by_field_name("arguments")
        args = [a for a in (arguments.named_children if arguments else []) if a.type != "comment"]
        if len(args) == 3 and node_text(args[2]) == acc:
            x, y = unparen(args[0]), unparen(args[1])
            if x is not None and y is not None and x.type == y.type == "subscript_expression":
                return x, y
        return None
    product = unparen(product)
    if product is None or product.type != "binary_expression" or node_text(product.child_by_field_name("operator")) != "*":
        return None
    x, y = unparen(product.child_by_field_name("left")), unparen(product.child_by_field_name("right"))
    if x is None or y is None or x.type != "subscript_expression" or y.type != "subscript_expression":
        return None
    return x, y


def _operands(kernel: PointKernel, first: Access, second: Access, k: str,
              names: list[str]) -> tuple[str, str, str | None, Operand, Operand] | None:
    """(row, col, batch, A, B): A is the read whose index holds one coordinate, B the other."""
    def used(access: Access) -> list[str]:
        return [c for c in names if coefficient_of(access.index, c).terms]

    in_first, in_second = set(used(first)), set(used(second))
    shared = in_first & in_second
    rows, cols = sorted(in_first - shared), sorted(in_second - shared)
    if len(rows) != 1 or len(cols) != 1:
        return None
    row, col = rows[0], cols[0]
    rest = [c for c in names if c not in (row, col)]
    batch = rest[0] if rest else None
    if len(rest) > 1 or (shared and shared != {batch}):
        return None
    a = _operand(kernel, first, row, k, batch)
    b = _operand(kernel, second, col, k, batch)
    if a is None or b is None:
        return None
    return row, col, batch, a, b


def _operand(kernel: PointKernel, access: Access, coordinate: str, k: str, batch: str | None) -> Operand | None:
    outer = coefficient_of(access.index, coordinate)
    inner = coefficient_of(access.index, k)
    scalars = set(kernel.params)
    for stride in (outer, inner):
        if len(stride.terms) != 1 or stride.terms[0][1] <= 0 or not set(stride.terms[0][0]) <= scalars:
            return None
    if outer.constant != 1 and inner.constant != 1:
        return None
    base = access.index - outer * Poly.atom(coordinate) - inner * Poly.atom(k)  # type: ignore[operator]
    allowed = scalars | ({batch} if batch else set())
    if not base.atoms() <= allowed:
        return None
    if batch is not None and any(batch in m and len([a for a in m if a == batch]) > 1 for m, _ in base.terms):
        return None
    return Operand(access.array, base, outer, inner)
