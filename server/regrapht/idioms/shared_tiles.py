"""A matrix product already staged through shared tiles, written as the dot product it computes.

The tutorial (and vendor-sample) shared-memory matmul gives each thread of a TILE x TILE block
one output and walks K a tile at a time:

    for (int t = 0; t < T; ++t) {
        As[ty][tx] = A[...t...tx...];  Bs[ty][tx] = B[...t...ty...];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }

`As[ty][k]` is what thread (ty, k) loaded, so the product reads `A[...t...k...]` (its load with
`tx` written `k`), and `Bs[k][tx]` reads `B[...t...k...]` (`ty` written `k`). When both loads
read their operand at `t * TILE + k` (their index polynomials have t's coefficient TILE times
k's, and no product of the two), the loops are one loop over `kk = t * TILE + k` in [0, T *
TILE), in order: `detiled` writes that naive kernel (`for (int kk = 0; kk < (T) * TILE; ++kk)
acc += A[..kk..] * B[..kk..];`), the statements after the loop (the store) and the accumulator
under the kernel's guard (or the one its launch implies: each coordinate below its grid's
extent), for the dense-product reader (`idioms/gemm.py`) to recognise.

Only on a launch of exactly TILE x TILE threads (any other would leave tile elements unloaded or
store past the tiles) and for loads that are plain reads of pointer parameters.
"""

from __future__ import annotations

from collections.abc import Mapping

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.cuda.intexpr import constant_value
from regrapht.idioms.syntax import (
    Symbols,
    call_name,
    depends_on,
    kernel_syntax,
    loop_counter,
    named_statements,
    subscript_parts,
    text,
    unparen,
    walk,
)
from regrapht.idioms.tile_rows import launch_guard

_PRAGMA = "preproc_call"


def detiled(source: str, kernel: str, block: tuple[int, int, int] | None, grid: tuple[str, ...],
            constants: Mapping[str, int]) -> str | None:
    """The file with the kernel's shared-tile product loop written as the naive dot product, or
    None when the kernel is not of that shape (see the module docstring)."""
    syntax = kernel_syntax(source, kernel)
    if syntax is None or block is None:
        return None
    known = {**syntax.constants, **constants}
    statements = [s for s in syntax.statements() if not _shared_decl(s)]
    loops = [n for n, s in enumerate(statements) if s.type == "for_statement"]
    if len(loops) != 1:
        return None
    at = loops[0]
    prelude, loop, after = statements[:at], statements[at], statements[at + 1 :]
    if not prelude or not after or not all(_plain_declaration(s) for s in prelude):
        return None
    accumulator = _accumulator(prelude[-1])
    header = _tile_loop(loop, known)
    if accumulator is None or header is None:
        return None
    counter, tiles = header
    symbols = Symbols(known)
    for statement in prelude[:-1]:
        for declarator in statement.children_by_field_name("declarator"):
            symbols.define(text(declarator.child_by_field_name("declarator")), declarator.child_by_field_name("value"))
    shared = {name: size for s in [*syntax.statements(), *named_statements(loop.child_by_field_name("body"))]
              if (found := _shared_tile(s, known)) is not None for name, size in [found]}
    body = [s for s in named_statements(loop.child_by_field_name("body")) if not _shared_decl(s)]
    product = _staged_product(body, shared, symbols, accumulator, known)
    if product is None:
        return None
    tile, (a_load, a_array, a_guard), (b_load, b_array, b_guard), inner = product
    if block != (tile, tile, 1):
        return None
    merged = f"{counter}_{inner}_rg"
    a_text = _merged_index(a_load, symbols, "threadIdx.x", counter, inner, merged, tile)
    b_text = _merged_index(b_load, symbols, "threadIdx.y", counter, inner, merged, tile)
    if a_text is None or b_text is None or any(text(n) == merged for n in walk(syntax.body)):
        return None
    guard, work = _guard_and_work(after)
    if guard is None:
        guard = launch_guard(symbols, block, grid, "x", tile)
        work = after
    if guard is None or not work:
        return None
    bound = f"({_folded(tiles, known)}) * {tile}"
    if a_guard is not None or b_guard is not None:
        # bounds-guarded loads: zeros past K (0 * 0 adds nothing) and outside the stored rows and
        # columns (the store's guard holds wherever the sum is stored), so the sum runs to K
        limit = _guarded_limit(a_guard, b_guard, guard, symbols, counter, inner, tile, tiles, known)
        if limit is None:
            return None
        bound = limit
    data = syntax.source
    naive = (f"if ({guard}) {{\n        {text(prelude[-1])}\n"
             f"        for (int {merged} = 0; {merged} < {bound}; ++{merged})\n"
             f"            {accumulator} += {a_array}[{a_text}] * {b_array}[{b_text}];\n"
             + "".join(f"        {_plain_store(s)}\n" for s in work) + "    }")
    kept = "\n    ".join(text(s) for s in prelude[:-1])
    new_body = "{\n    " + kept + "\n    " + naive + "\n}"
    return data[: syntax.body.start_byte].decode() + new_body + data[syntax.body.end_byte :].decode()


def _guarded_limit(a_guard: Node | None, b_guard: Node | None, store_guard: str, symbols: Symbols, counter: str,
                   inner: str, tile: int, tiles: Node, constants: Mapping[str, int]) -> str | None:
    """The bound `L` of the merged loop when both loads are guarded by `t * TILE + k < L` (the
    tile's element of K, with the thread written `k`) and otherwise only by terms of the store's
    guard that do not move with the substituted thread, and the tiles are `(L + TILE - 1) /
    TILE`; None otherwise."""
    stored = {" ".join(t.split()) for t in store_guard.split("&&")}
    limits: set[str] = set()
    for condition, thread in ((a_guard, "threadIdx.x"), (b_guard, "threadIdx.y")):
        if condition is None:
            return None
        found = None
        for term in _conjuncts(condition):
            term = unparen(term) or term
            spelled = " ".join(text(term).split())
            operator = text(term.child_by_field_name("operator")) if term.type == "binary_expression" else ""
            left = term.child_by_field_name("left") if operator == "<" else None
            if left is not None and _is_merged(left, symbols, thread, counter, inner, tile):
                found = " ".join(text(term.child_by_field_name("right")).split())
            elif spelled not in stored or _moves_with(term, symbols, thread):
                return None
        if found is None:
            return None
        limits.add(found)
    if len(limits) != 1:
        return None
    [limit] = limits
    folded = " ".join(_folded(tiles, constants).split())
    value = constant_value(limit, constants)
    spelled_limit = str(value) if value is not None else limit
    if folded not in (f"({spelled_limit} + {tile - 1}) / {tile}", f"({spelled_limit} + {tile} - 1) / {tile}"):
        return None
    return limit


def _conjuncts(node: Node) -> list[Node]:
    node = unparen(node) or node
    if node.type == "binary_expression" and text(node.child_by_field_name("operator")) == "&&":
        return [*_conjuncts(node.child_by_field_name("left")), *_conjuncts(node.child_by_field_name("right"))]  # type: ignore[arg-type]
    return [node]


def _is_merged(node: Node, symbols: Symbols, thread: str, counter: str, inner: str, tile: int) -> bool:
    """Whether `node`, its thread written `inner`, is exactly `counter * tile + inner`."""
    substituted = _replace(symbols.poly(node), thread, inner)
    return substituted == Poly.of({(counter,): tile, (inner,): 1})


def _moves_with(term: Node, symbols: Symbols, thread: str) -> bool:
    return any(n.type == "field_expression" and "".join(text(n).split()) == thread or
               n.type == "identifier" and text(n) in symbols.env and depends_on(symbols.env[text(n)], thread)
               for n in walk(term))


def _plain_store(statement: Node) -> str:
    """`statement`'s text, a store through a macro's parentheses (`((C)[i]) = v;`) as `C[i] = v;`."""
    expression = unparen(statement.named_children[0]) if statement.type == "expression_statement" and \
        statement.named_children else None
    left = unparen(expression.child_by_field_name("left")) if expression is not None and \
        expression.type == "assignment_expression" else None
    if expression is None or left is None or left.type != "subscript_expression":
        return text(statement)
    base, indices = subscript_parts(left)
    base = unparen(base)
    if base is None or base.type != "identifier" or len(indices) != 1:
        return text(statement)
    data, start = statement.text or b"", statement.start_byte
    target = f"{text(base)}[{text(indices[0])}]".encode()
    written = expression.child_by_field_name("left")
    assert written is not None
    return (data[: written.start_byte - start] + target + data[written.end_byte - start :]).decode()


def _folded(node: Node, constants: Mapping[str, int]) -> str:
    """`node`'s text with each name of a constant (a macro, a template argument) as its value."""
    data, start = node.text or b"", node.start_byte
    names = sorted((n for n in walk(node) if n.type == "identifier" and text(n) in constants),
                   key=lambda n: n.start_byte, reverse=True)
    for name in names:
        data = data[: name.start_byte - start] + str(constants[text(name)]).encode() + data[name.end_byte - start :]
    return data.decode()


def _shared_decl(statement: Node) -> bool:
    return statement.type == "declaration" and any(text(c) == "__shared__" for c in statement.children)


def _shared_tile(statement: Node, constants: Mapping[str, int]) -> tuple[str, int] | None:
    """(name, TILE) of `__shared__ T a[TILE][TILE];`."""
    if not _shared_decl(statement) or any(text(c) == "extern" for c in statement.children):
        return None
    declarators = statement.children_by_field_name("declarator")
    if len(declarators) != 1 or declarators[0].type != "array_declarator":
        return None
    outer = declarators[0]
    inner = outer.child_by_field_name("declarator")
    if inner is None or inner.type != "array_declarator":
        return None
    name = inner.child_by_field_name("declarator")
    sizes = [constant_value(text(d.child_by_field_name("size")), constants) for d in (inner, outer)]
    if name is None or name.type != "identifier" or sizes[0] is None or sizes[0] != sizes[1]:
        return None
    return text(name), sizes[0]


def _plain_declaration(statement: Node) -> bool:
    if statement.type != "declaration" or any(c.type == "storage_class_specifier" for c in statement.children):
        return False
    return all(d.type == "init_declarator" and d.child_by_field_name("declarator") is not None and
               d.child_by_field_name("declarator").type == "identifier" and  # type: ignore[union-attr]
               not any(n.type in ("call_expression", "subscript_expression", "pointer_expression",
                                  "assignment_expression", "update_expression") for n in walk(d))
               for d in statement.children_by_field_name("declarator"))


def _accumulator(statement: Node) -> str | None:
    """The name of `T acc = 0;` (a floating type, a zero literal)."""
    declarators = statement.children_by_field_name("declarator")
    kind = " ".join(text(statement.child_by_field_name("type")).split())
    if len(declarators) != 1 or kind not in ("float", "double"):
        return None
    value = unparen(declarators[0].child_by_field_name("value"))
    if value is None or value.type != "number_literal" or text(value).rstrip("fF").strip("0.") != "":
        return None
    return text(declarators[0].child_by_field_name("declarator"))


def _tile_loop(loop: Node, constants: Mapping[str, int]) -> tuple[str, Node] | None:
    """(t, T) of `for (int t = 0; t < T; ++t)` (or `t++`, `t += 1`)."""
    declared = loop_counter(loop)
    condition, update = unparen(loop.child_by_field_name("condition")), unparen(loop.child_by_field_name("update"))
    if declared is None or condition is None or update is None or condition.type != "binary_expression":
        return None
    counter, start, _ = declared
    if constant_value(text(start), constants) != 0 or text(condition.child_by_field_name("operator")) != "<" or \
            text(unparen(condition.child_by_field_name("left"))) != counter or not _steps_by_one(update, counter):
        return None
    bound = condition.child_by_field_name("right")
    if bound is None or any(text(n) == counter for n in walk(bound)):
        return None
    return counter, bound


def _steps_by_one(update: Node, counter: str) -> bool:
    if update.type == "update_expression":
        return text(update.child_by_field_name("operator")) == "++" and \
            text(unparen(update.child_by_field_name("argument"))) == counter
    return update.type == "assignment_expression" and text(update.child_by_field_name("operator")) == "+=" and \
        text(unparen(update.child_by_field_name("left"))) == counter and \
        text(unparen(update.child_by_field_name("right"))) == "1"


def _is(node: Node | None, symbols: Symbols, builtin: str) -> bool:
    """Whether `node` is `threadIdx.x` (or a local of that value)."""
    return node is not None and symbols.poly(node) == Poly.atom(builtin)


def _barrier(statement: Node) -> bool:
    if statement.type != "expression_statement" or len(statement.named_children) != 1:
        return False
    call = unparen(statement.named_children[0])
    return call is not None and call.type == "call_expression" and call_name(call) == "__syncthreads"


Load = tuple[Node, str, Node | None]  # the load's index, its array, its guard (None: unguarded)


def _staged_product(body: list[Node], shared: Mapping[str, int], symbols: Symbols, acc: str,
                    constants: Mapping[str, int]) -> tuple[int, Load, Load, str] | None:
    """(TILE, (A's load, A), (B's load, B), k) of the tile loop's body: two stores of plain loads
    into the tiles at [ty][tx], a barrier, `for (k < TILE) acc += As[ty][k] * Bs[k][tx];`, a
    barrier."""
    body = [s for s in body if s.type != _PRAGMA]
    if len(body) != 5 or not _barrier(body[2]) or not _barrier(body[4]) or body[3].type != "for_statement":
        return None
    loads = {}
    for statement in body[:2]:
        stored = _tile_store(statement, shared, symbols)
        if stored is None:
            return None
        loads[stored[0]] = stored[1:]
    inner_loop = body[3]
    declared = loop_counter(inner_loop)
    condition = unparen(inner_loop.child_by_field_name("condition"))
    update = unparen(inner_loop.child_by_field_name("update"))
    inner = [s for s in named_statements(inner_loop.child_by_field_name("body")) if s.type != _PRAGMA]
    if declared is None or condition is None or update is None or len(inner) != 1 or \
            condition.type != "binary_expression" or text(condition.child_by_field_name("operator")) != "<":
        return None
    k, start, _ = declared
    tile = constant_value(text(condition.child_by_field_name("right")), constants)
    if constant_value(text(start), constants) != 0 or tile is None or not _steps_by_one(update, k) or \
            text(unparen(condition.child_by_field_name("left"))) != k:
        return None
    factors = _accumulated_product(inner[0], acc)
    if factors is None:
        return None
    (a_tile, a_indices), (b_tile, b_indices) = factors
    if a_tile not in loads or b_tile not in loads or a_tile == b_tile or shared.get(a_tile) != tile or \
            shared.get(b_tile) != tile:
        return None
    if not (_is(a_indices[0], symbols, "threadIdx.y") and text(unparen(a_indices[1])) == k and
            text(unparen(b_indices[0])) == k and _is(b_indices[1], symbols, "threadIdx.x")):
        return None
    return tile, loads[a_tile], loads[b_tile], k


def _tile_store(statement: Node, shared: Mapping[str, int], symbols: Symbols
                ) -> tuple[str, Node, str, Node | None] | None:
    """(tile, load, array, condition) of `S[ty][tx] = P[...];`, P a pointer read, or of
    `S[ty][tx] = (c) ? P[...] : 0;` (a bounds-guarded load: the condition returned)."""
    if statement.type != "expression_statement" or len(statement.named_children) != 1:
        return None
    assignment = unparen(statement.named_children[0])
    if assignment is None or assignment.type != "assignment_expression" or \
            text(assignment.child_by_field_name("operator")) != "=":
        return None
    left, right = unparen(assignment.child_by_field_name("left")), unparen(assignment.child_by_field_name("right"))
    condition = None
    if right is not None and right.type == "conditional_expression":
        zero = unparen(right.child_by_field_name("alternative"))
        if zero is None or zero.type != "number_literal" or text(zero).rstrip("fF").strip("0.") != "":
            return None
        condition, right = right.child_by_field_name("condition"), unparen(right.child_by_field_name("consequence"))
    if left is None or right is None or left.type != "subscript_expression" or right.type != "subscript_expression":
        return None
    base, indices = subscript_parts(left)
    array, load_indices = subscript_parts(right)
    base, array = unparen(base), unparen(array)
    if base is None or text(base) not in shared or len(indices) != 2 or not _is(indices[0], symbols, "threadIdx.y") \
            or not _is(indices[1], symbols, "threadIdx.x") or array is None or array.type != "identifier" or \
            len(load_indices) != 1 or text(array) in shared:
        return None
    return text(base), load_indices[0], text(array), condition


def _accumulated_product(statement: Node, acc: str) -> tuple[tuple[str, list[Node]], tuple[str, list[Node]]] | None:
    """The two tile reads of `acc += X[i][j] * Y[k][l];` (or `acc = acc + X[i][j] * Y[k][l];`)."""
    if statement.type != "expression_statement" or len(statement.named_children) != 1:
        return None
    update = unparen(statement.named_children[0])
    if update is None or update.type != "assignment_expression" or text(update.child_by_field_name("left")) != acc:
        return None
    product = unparen(update.child_by_field_name("right"))
    if text(update.child_by_field_name("operator")) == "=" and product is not None and \
            product.type == "binary_expression" and text(product.child_by_field_name("operator")) == "+" and \
            text(unparen(product.child_by_field_name("left"))) == acc:
        product = unparen(product.child_by_field_name("right"))
    elif text(update.child_by_field_name("operator")) != "+=":
        return None
    if product is None or product.type != "binary_expression" or text(product.child_by_field_name("operator")) != "*":
        return None
    reads = []
    for side in (product.child_by_field_name("left"), product.child_by_field_name("right")):
        side = unparen(side)
        if side is None or side.type != "subscript_expression":
            return None
        base, indices = subscript_parts(side)
        base = unparen(base)
        if base is None or base.type != "identifier" or len(indices) != 2:
            return None
        reads.append((text(base), indices))
    return reads[0], reads[1]


def _merged_index(index: Node, symbols: Symbols, thread: str, counter: str, inner: str, merged: str,
                  tile: int) -> str | None:
    """The load's index with `thread` written `inner` and then `counter * tile + inner` written
    `merged`, when the index reads the two only that way; None otherwise."""
    local_threads = {name for name, value in symbols.env.items() if value == Poly.atom(thread)}
    others = {name for name, value in symbols.env.items() if depends_on(value, thread)} - local_threads
    if any(n.type == "identifier" and text(n) in others for n in walk(index)):
        return None  # a local that mixes the thread index with something else
    poly = symbols.poly(index)
    substituted = _replace(poly, thread, inner)
    if substituted is None or not _merges(substituted, counter, inner, tile):
        return None
    data = index.text or b""
    start = index.start_byte
    edits = []
    for node in walk(index):
        spelled = "".join(text(node).split())
        if node.type == "field_expression" and spelled == thread or \
                node.type == "identifier" and text(node) in local_threads:
            edits.append((node.start_byte - start, node.end_byte - start, merged))
        elif node.type == "identifier" and text(node) == counter:
            edits.append((node.start_byte - start, node.end_byte - start, "0"))
    for begin, end, new in sorted(edits, reverse=True):
        data = data[:begin] + new.encode() + data[end:]
    return data.decode()


def _replace(poly: Poly, atom: str, by: str) -> Poly | None:
    terms: dict[tuple[str, ...], int] = {}
    for monomial, coefficient in poly.as_dict().items():
        if any(a.startswith("~") for a in monomial):
            return None
        renamed = tuple(sorted(by if a == atom else a for a in monomial))
        terms[renamed] = terms.get(renamed, 0) + coefficient
    return Poly.of(terms)


def _merges(poly: Poly, counter: str, inner: str, tile: int) -> bool:
    """Whether `poly` reads `counter` and `inner` only as `counter * tile + inner`."""
    terms = poly.as_dict()
    for monomial, coefficient in terms.items():
        count_c, count_i = monomial.count(counter), monomial.count(inner)
        if count_c + count_i > 1:
            return False
        if count_i:
            twin = tuple(sorted(counter if a == inner else a for a in monomial))
            if terms.get(twin) != coefficient * tile:
                return False
        elif count_c:
            twin = tuple(sorted(inner if a == counter else a for a in monomial))
            if terms.get(twin, 0) * tile != coefficient:
                return False
    return True


def _guard_and_work(after: list[Node]) -> tuple[str | None, list[Node]]:
    """(guard, statements) of a final `if (G) { ... }` without else, or (None, []) otherwise."""
    if len(after) == 1 and after[0].type == "if_statement" and after[0].child_by_field_name("alternative") is None:
        condition = after[0].child_by_field_name("condition")
        inner = named_statements(after[0].child_by_field_name("consequence"))
        value = condition.child_by_field_name("value") if condition is not None else None
        if value is not None and inner:
            return text(value), inner
    return None, []
