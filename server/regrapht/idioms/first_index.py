"""Predicate searches: one thread per index, the least index whose predicate holds kept with
`atomicMin` (issue 26: "the first index that satisfies a predicate").

`first_index_search(kernel)` recognises, in the shapes `threads.thread_mapping` reads (a bound
guard `if (i < n) { ... }`, an early return, a grid-stride loop) and the compound guard
`if (i < n && P) atomicMin(r, i);` (the bound terms first, then the predicate):

    [pure declarations]
    if (P) atomicMin(R, i);           (or `{ atomicMin(R, i); }`, or the atomic alone when P is in the guard)

where `i` is the 1-D global index along x, R is `r`, `&r[0]` or `r + 0` of an integer pointer
parameter `r` nothing else touches, the value is `i` itself (a cast of it allowed), and P is
pure, reads no memory through `r`, and holds no other atomic. The work's result is
min(*r, least i with P(i)); since the value is the index, a tile of indices wholly at or above
the best found so far cannot change it (the rewrite's early exit). Refused: another value
(`atomicMin(r, x[i])`: a value reduction), an address that depends on the thread, `atomicMax`,
any other write, and everything `thread_mapping` refuses.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from regrapht.idioms.access import identifiers, is_pure
from regrapht.idioms.syntax import (
    KernelSyntax,
    call_args,
    call_name,
    condition_of,
    kernel_syntax,
    named_statements,
    text,
    unparen,
    walk,
)
from regrapht.idioms.threads import ItemIndex, ThreadMapping, thread_mapping

INDEX_RESULTS = frozenset({"int", "unsigned int", "unsigned", "long long", "long long int", "unsigned long long",
                           "unsigned long long int"})
RESULT_BYTES = {"int": 4, "unsigned int": 4, "unsigned": 4, "long long": 8, "long long int": 8,
                "unsigned long long": 8, "unsigned long long int": 8}
INDEX_BYTES = {"int": 4, "unsigned int": 4, "unsigned": 4, "long": 8, "long long": 8, "size_t": 8,
               "unsigned long long": 8, "long long int": 8, "int64_t": 8, "uint32_t": 4, "int32_t": 4}


@dataclass(frozen=True)
class FirstIndexSearch:
    kernel: KernelSyntax
    index: ItemIndex  # the 1-D global index and its bound
    form: str  # "if", "return", "grid_stride"
    prelude: tuple[str, ...]  # declarations before the guard (texts), the index's own left out
    decls: tuple[str, ...]  # pure declarations of the work before the test
    predicate: str  # "1" when none beyond the bound
    result: str  # the pointer parameter
    result_type: str


def first_index_search(source: str, name: str) -> FirstIndexSearch | None:
    kernel = kernel_syntax(source, name)
    if kernel is None:
        return None
    mapping = thread_mapping(kernel)
    if mapping is None:
        split = _split_guard(kernel, name)
        if split is None:
            return None
        kernel, mapping = split
    return _search(kernel, mapping)


def _split_guard(kernel: KernelSyntax, name: str) -> tuple[KernelSyntax, ThreadMapping] | None:
    """`if (i < n && P) S` read as `if (i < n) { if (P) S }`: the kernel reparsed in that form and
    its mapping (None unless the last statement is such an if and the bound terms lead)."""
    statements = kernel.statements()
    if not statements or statements[-1].type != "if_statement" or \
            statements[-1].child_by_field_name("alternative") is not None:
        return None
    last = statements[-1]
    terms = _conjuncts(condition_of(last))
    if len(terms) < 2:
        return None
    consequence = last.child_by_field_name("consequence")
    if consequence is None:
        return None
    for cut in range(1, len(terms)):
        bound = " && ".join(text(t) for t in terms[:cut])
        predicate = " && ".join(f"({text(t)})" for t in terms[cut:])
        start, end = last.start_byte, last.end_byte
        raw = kernel.source
        rewritten = (raw[:start].decode() + f"if ({bound}) {{ if ({predicate}) {text(consequence)} }}" +
                     raw[end:].decode())
        again = kernel_syntax(rewritten, name)
        mapping = thread_mapping(again) if again is not None else None
        if again is not None and mapping is not None:
            return again, mapping
    return None


def _conjuncts(node: Node | None) -> list[Node]:
    node = unparen(node)
    if node is None:
        return []
    if node.type == "binary_expression" and text(node.child_by_field_name("operator")) == "&&":
        return _conjuncts(node.child_by_field_name("left")) + _conjuncts(node.child_by_field_name("right"))
    return [node]


def _search(kernel: KernelSyntax, mapping: ThreadMapping) -> FirstIndexSearch | None:
    if len(mapping.indices) != 1 or mapping.indices[0].axis != "x":
        return None
    index = mapping.indices[0]
    work = [s for s in mapping.work if s.type != "comment"]
    decls: list[Node] = []
    while work and work[0].type == "declaration" and is_pure(work[0]):
        decls.append(work.pop(0))
    if len(work) != 1:
        return None
    statement = work[0]
    predicate: str | None = None
    if statement.type == "if_statement":
        if statement.child_by_field_name("alternative") is not None:
            return None
        condition = condition_of(statement)
        if condition is None or not is_pure(condition):
            return None
        predicate = f"({text(condition)})"
        body = [s for s in named_statements(statement.child_by_field_name("consequence")) if s.type != "comment"]
        if len(body) != 1:
            return None
        statement = body[0]
    found = _atomic_min(statement, kernel, index.name)
    if found is None:
        return None
    result, result_type = found
    if index.type not in INDEX_BYTES or RESULT_BYTES[result_type] < INDEX_BYTES[index.type]:
        return None  # the result type must hold every index
    # nothing but the atomic may write; the predicate and declarations must not read the result
    for node in (*decls, *mapping.prelude):
        if result in identifiers(node):
            return None
    if predicate is not None and result in predicate.replace("(", " ").replace(")", " ").split():
        return None
    # the index's own declaration goes (each tested position declares it); nothing else may use it
    prelude = [p for p in mapping.prelude if index.name not in _declared_names(p)]
    if any(index.name in identifiers(p) for p in prelude):
        return None
    return FirstIndexSearch(kernel, index, mapping.form, tuple(text(p) for p in prelude),
                            tuple(text(d) for d in decls), predicate or "1", result, result_type)


def _declared_names(declaration: Node) -> set[str]:
    names = set()
    for declarator in declaration.children_by_field_name("declarator"):
        target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" else declarator
        if target is not None:
            names.add(text(target))
    return names


def _atomic_min(statement: Node, kernel: KernelSyntax, index: str) -> tuple[str, str] | None:
    """(pointer, its element type) of `atomicMin(R, i);` with R = r, &r[0] or r + 0."""
    expression = unparen(statement.named_children[0]) if statement.type == "expression_statement" and \
        statement.named_children else None
    if expression is None or expression.type != "call_expression" or call_name(expression) != "atomicMin":
        return None
    args = call_args(expression)
    if len(args) != 2:
        return None
    address, value = unparen(args[0]), unparen(args[1])
    while value is not None and value.type == "cast_expression":
        value = unparen(value.child_by_field_name("value"))
    if value is None or value.type != "identifier" or text(value) != index:
        return None
    pointer = _pointer_of(address)
    if pointer is None:
        return None
    param = kernel.param(pointer)
    if param is None or not param.is_pointer or param.is_const or param.base_type not in INDEX_RESULTS:
        return None
    uses = [n for n in walk(kernel.body) if n.type == "identifier" and text(n) == pointer]
    if len(uses) != 1:
        return None  # the result is touched elsewhere
    return pointer, param.base_type


def _pointer_of(address: Node | None) -> str | None:
    if address is None:
        return None
    if address.type == "identifier":
        return text(address)
    if address.type == "pointer_expression" and text(address.child_by_field_name("operator")) == "&":
        inner = unparen(address.child_by_field_name("argument"))
        if inner is not None and inner.type == "subscript_expression":
            array = inner.child_by_field_name("argument")
            indices = inner.child_by_field_name("indices")
            subscript = indices.named_children[0] if indices is not None and indices.named_children else \
                inner.child_by_field_name("index")
            if array is not None and array.type == "identifier" and subscript is not None and text(subscript) == "0":
                return text(array)
        return None
    if address.type == "binary_expression" and text(address.child_by_field_name("operator")) == "+":
        left, right = unparen(address.child_by_field_name("left")), unparen(address.child_by_field_name("right"))
        if left is not None and right is not None and left.type == "identifier" and text(right) == "0":
            return text(left)
    return None
