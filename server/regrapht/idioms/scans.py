"""Whole-array scans written as a recurrence through the output array, run by one thread.

`recurrence_scan(kernel)` recognises, in the work of `items.single_thread_work`:

    [T c = ...;]                      pure scalar declarations
    [if (U <= L) return;]             the empty range, or the loop wrapped in `if (U > L) { }`
    out[L] = v0;                      (absent: in place, `a[i] += a[i - 1]` keeps a[L])
    for (T i = L + 1; i < U; ++i) {   (`i <= U - 1`, `i++`, `i += 1`; or a `while` of that shape)
        [T v = f(i);]                 pure declarations
        out[i] = out[i - 1] + g(i);   (either operand order, or `out[i] += out[i - 1]` in place)
    }

- inclusive when v0 is g(L) (compared on the source model: same operators and names, subscripts
  equal as affine polynomials with i = L): out[j] = g(L) + ... + g(j);
- otherwise exclusive when v0 reads no memory and no thread: out[j] = v0 + g(L + 1) + ... + g(j),
  an exclusive scan of h(j) = g(j + 1) over [L, U) started at v0.

g may read arrays other than `out` at the position i or i - 1 only (a read ahead, `in[i + 1]`,
reads past the end at the last position), and `out` itself only at i (the in-place form, whose
old value is read before it is overwritten). Anything else is refused: another operator
(`out[i - 1] * a + x[i]`), a longer reach (`out[i - 2]`), a non-unit step, loaded or
thread-dependent bounds, other statements in the loop or after it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.cuda.extract import ambiguous_cast
from regrapht.cuda.intexpr import BINARY_OPERATORS, fold_binary, int_literal
from regrapht.idioms.access import accesses, is_pure
from regrapht.idioms.items import ItemLoop, SingleThread, scan_loop, single_thread_work
from regrapht.idioms.syntax import (
    KernelSyntax,
    Symbols,
    call_args,
    call_name,
    condition_of,
    loop_counter,
    named_statements,
    subscript_parts,
    text,
    unparen,
    updated_target,
    walk,
)

POSITION = "@position"


@dataclass(frozen=True)
class RecurrenceScan:
    kernel: KernelSyntax
    single: SingleThread
    head: tuple[Node, ...]  # scalar declarations before the scan, kept in every thread
    output: str  # the array written
    value_type: str  # its element type, as written
    var: str  # the loop variable
    var_type: str
    lower: str  # L, the first position written
    end: str  # U, the exclusive end
    decls: tuple[Node, ...]  # declarations of the loop body
    contribution: Node  # g(i)
    exclusive: bool
    start: str  # exclusive: v0; inclusive: "0"


def recurrence_scan(kernel: KernelSyntax) -> RecurrenceScan | None:
    found = single_thread_work(kernel)
    if found is None:
        return None
    work, single = found
    statements = [s for s in work if s.type != "comment"]
    symbols = Symbols(kernel.constants)
    head: list[Node] = []
    while statements and statements[0].type == "declaration" and _scalar_declaration(statements[0], symbols):
        head.append(statements.pop(0))
    guard: Node | None = None
    negated = False
    if len(statements) >= 2 and _early_return(statements[0]):
        guard, statements = condition_of(statements[0]), statements[1:]
    elif len(statements) == 1 and statements[0].type == "if_statement" and \
            statements[0].child_by_field_name("alternative") is None:
        guard, negated = condition_of(statements[0]), True
        statements = [s for s in named_statements(statements[0].child_by_field_name("consequence"))
                      if s.type != "comment"]
    if len(statements) == 2:
        first, loop = statements
    elif len(statements) == 1:
        first, loop = None, statements[0]
    else:
        return None
    return _recurrence(kernel, single, tuple(head), symbols, guard, negated, first, loop)


def _recurrence(kernel: KernelSyntax, single: SingleThread, head: tuple[Node, ...], symbols: Symbols,
                guard: Node | None, negated: bool, first: Node | None, loop: Node) -> RecurrenceScan | None:
    parts = _loop_parts(loop, symbols)
    if parts is None:
        return None
    var, var_type, start_node, bound, body = parts
    lower_poly = symbols.poly(start_node) - Poly.const(1)
    end_poly = symbols.poly(bound)
    for poly in (lower_poly, end_poly):
        if poly.thread_dependent or poly.memory_dependent:
            return None
    if guard is not None and not _empty_range_test(guard, symbols, lower_poly, end_poly, negated):
        return None
    *decls, store = body
    loop_symbols = symbols.copy()
    loop_symbols.env[var] = Poly.atom(POSITION)
    local_defs: dict[str, Node] = {}
    for declaration in decls:
        if declaration.type != "declaration" or not is_pure(declaration):
            return None
        for declarator in declaration.children_by_field_name("declarator"):
            target = declarator.child_by_field_name("declarator")
            value = declarator.child_by_field_name("value")
            if declarator.type != "init_declarator" or target is None or target.type != "identifier" or value is None:
                return None
            local_defs[text(target)] = value
            loop_symbols.define(text(target), value)
    step = _recurrence_step(store, loop_symbols, kernel)
    if step is None:
        return None
    output, contribution, in_place = step
    position = Poly.atom(POSITION)
    for declaration in decls:
        if not _reads_allowed(declaration, loop_symbols, output, position, in_place):
            return None
    compound = contribution.parent is not None and contribution.parent.type == "assignment_expression" and \
        contribution.parent.child_by_field_name("left") == contribution  # `out[i] += out[i - 1]`
    if not compound and not _reads_allowed(contribution, loop_symbols, output, position, in_place):
        return None
    param = kernel.param(output)
    if param is None or not param.is_pointer or param.is_const:
        return None
    lower_text = f"({' '.join(text(start_node).split())}) - 1"
    end_text = " ".join(text(bound).split())
    base = (kernel, single, head, output, param.base_type, var, var_type)
    if first is None:
        if not in_place:
            return None  # out[L] would be left as it was: not a scan of g
        return RecurrenceScan(*base, lower_text, end_text, tuple(decls), contribution, False, "0")
    initial = _initial_store(first, symbols, output, lower_poly)
    if initial is None or in_place:
        return None
    at_lower = symbols.copy()
    at_lower.env[var] = lower_poly
    for name, value in local_defs.items():
        at_lower.define(name, value)
    if _canonical(initial, symbols, {}) == _canonical(contribution, at_lower, local_defs):
        return RecurrenceScan(*base, lower_text, end_text, tuple(decls), contribution, False, "0")
    if not is_pure(initial) or any(True for _ in accesses(initial, symbols)) or \
            symbols.poly(initial).thread_dependent or any(text(n) in local_defs or text(n) == var
                                                          for n in walk(initial) if n.type == "identifier"):
        return None
    return RecurrenceScan(*base, lower_text, end_text, tuple(decls), contribution, True,
                          " ".join(text(initial).split()))


def _scalar_declaration(declaration: Node, symbols: Symbols) -> bool:
    if any(text(c) in ("__shared__", "static", "extern") for c in declaration.children) or not is_pure(declaration):
        return False
    for declarator in declaration.children_by_field_name("declarator"):
        target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" else None
        if target is None or target.type != "identifier":
            return False
        value = declarator.child_by_field_name("value")
        if any(True for _ in accesses(value, symbols)) if value is not None else False:
            return False
        symbols.define(text(target), value)
    return True


def _early_return(statement: Node) -> bool:
    if statement.type != "if_statement" or statement.child_by_field_name("alternative") is not None:
        return False
    body = named_statements(statement.child_by_field_name("consequence"))
    return len(body) == 1 and body[0].type == "return_statement" and not body[0].named_children


def _empty_range_test(condition: Node | None, symbols: Symbols, lower: Poly, end: Poly, negated: bool) -> bool:
    """Whether `condition` holds exactly when [L, U) is empty (`U <= L`, `U < L + 1`, `U == L`
    for a range that is never reversed, `!U` for L = 0), or, `negated`, exactly when it is not."""
    condition = unparen(condition)
    if condition is None:
        return False
    if condition.type == "unary_expression" and text(condition.child_by_field_name("operator")) == "!":
        return not negated and symbols.poly(condition.child_by_field_name("argument")) == end - lower
    if condition.type != "binary_expression":
        return False
    operator = text(condition.child_by_field_name("operator"))
    difference = symbols.poly(condition.child_by_field_name("left")) - symbols.poly(condition.child_by_field_name("right"))
    size = end - lower  # the test reads `difference OP 0`
    empty = {"<=": size, "<": size - Poly.const(1), "==": size, ">=": lower - end, ">": lower - end + Poly.const(1)}
    nonempty = {">": size, ">=": size - Poly.const(1), "!=": size, "<": lower - end, "<=": lower - end + Poly.const(1)}
    wanted = nonempty if negated else empty
    return operator in wanted and difference == wanted[operator]


def _loop_parts(loop: Node, symbols: Symbols) -> tuple[str, str, Node, Node, list[Node]] | None:
    """(var, type, start, exclusive bound, body) of `for (T i = S; i < U; ++i) BODY`."""
    if loop.type != "for_statement":
        return None
    declared = loop_counter(loop)
    if declared is None:
        return None
    var, start, init = declared
    condition = unparen(loop.child_by_field_name("condition"))
    if condition is None or condition.type != "binary_expression" or \
            text(unparen(condition.child_by_field_name("left"))) != var:
        return None
    bound = condition.child_by_field_name("right")
    operator = text(condition.child_by_field_name("operator"))
    if bound is None or operator != "<":
        return None  # `i <= U - 1` would need the bound rewritten; `<` is how it is written
    update = unparen(loop.child_by_field_name("update"))
    if not _unit_increment(update, var):
        return None
    body = [s for s in named_statements(loop.child_by_field_name("body")) if s.type != "comment"]
    if not body:
        return None
    for statement in body:
        for node in walk(statement):
            if node.type in ("assignment_expression", "update_expression") and \
                    text(updated_target(node)) == var:
                return None
    return var, " ".join(text(init.child_by_field_name("type")).split()), start, bound, body


def _unit_increment(update: Node | None, var: str) -> bool:
    if update is None:
        return False
    if update.type == "update_expression":
        return text(update.child_by_field_name("argument")) == var and text(update.child_by_field_name("operator")) == "++"
    if update.type == "assignment_expression" and text(update.child_by_field_name("left")) == var:
        right = unparen(update.child_by_field_name("right"))
        return text(update.child_by_field_name("operator")) == "+=" and right is not None and text(right) == "1"
    return False


def _recurrence_step(store: Node, symbols: Symbols, kernel: KernelSyntax) -> tuple[str, Node, bool] | None:
    """(output, g, in place) of `out[i] = out[i - 1] + g;` (or `g + out[i - 1]`, `out[i] +=
    out[i - 1]`, `out[i] = out[i] + out[i - 1]`)."""
    if store.type != "expression_statement" or not store.named_children:
        return None
    expression = unparen(store.named_children[0])
    if expression is None or expression.type != "assignment_expression":
        return None
    left = unparen(expression.child_by_field_name("left"))
    here = _element(left, symbols, Poly.atom(POSITION))
    if left is None or here is None:
        return None
    previous = Poly.atom(POSITION) - Poly.const(1)
    operator = text(expression.child_by_field_name("operator"))
    right = unparen(expression.child_by_field_name("right"))
    if right is None:
        return None
    if operator == "+=":
        if _element(right, symbols, previous) == here:
            return here, left, True  # out[i] += out[i - 1]: g(i) is out[i] as it was
        return None
    if operator != "=" or right.type != "binary_expression" or text(right.child_by_field_name("operator")) != "+":
        return None
    a, b = unparen(right.child_by_field_name("left")), unparen(right.child_by_field_name("right"))
    if a is None or b is None:
        return None
    if _element(a, symbols, previous) == here:
        g = b
    elif _element(b, symbols, previous) == here:
        g = a
    else:
        return None
    in_place = _element(g, symbols, Poly.atom(POSITION)) == here
    return here, g, in_place


def _element(node: Node | None, symbols: Symbols, index: Poly) -> str | None:
    """The array of `a[index]` (a plain pointer parameter), else None."""
    node = unparen(node)
    if node is None or node.type != "subscript_expression":
        return None
    base, indices = subscript_parts(node)
    base = unparen(base)
    if base is None or base.type != "identifier" or len(indices) != 1 or symbols.poly(indices[0]) != index:
        return None
    return text(base)


def _reads_allowed(node: Node, symbols: Symbols, output: str, position: Poly, in_place: bool) -> bool:
    """Reads of other arrays at the position or the one before, of `output` only at the position
    (in place); nothing written; no thread-dependent values."""
    if not is_pure(node):
        return False
    for n in walk(node):
        if n.type == "identifier" and text(n) in ("threadIdx", "blockIdx"):
            return False
    for access in accesses(node, symbols):
        if access.kind != "read" or not access.array or access.index is None:
            return False
        if access.array == output:
            if not in_place or access.index != position:
                return False
        elif access.index not in (position, position - Poly.const(1)):
            return False
    return True


def _initial_store(statement: Node, symbols: Symbols, output: str, lower: Poly) -> Node | None:
    """v0 of `out[L] = v0;`."""
    if statement.type != "expression_statement" or not statement.named_children:
        return None
    expression = unparen(statement.named_children[0])
    if expression is None or expression.type != "assignment_expression" or \
            text(expression.child_by_field_name("operator")) != "=":
        return None
    if _element(expression.child_by_field_name("left"), symbols, lower) != output:
        return None
    value = expression.child_by_field_name("right")
    if value is None or not is_pure(value):
        return None
    for access in accesses(value, symbols):
        if access.array == output or access.kind != "read":
            return None
    return value


def _canonical(node: Node | None, symbols: Symbols, local_defs: dict[str, Node], depth: int = 0) -> str:
    """A spelling of an expression that is equal for equal values on the source model: locals of
    the loop body replaced by their definitions, subscripts by their affine polynomials."""
    node = unparen(node)
    if node is None or depth > 50:
        return "?"
    if node.type == "identifier":
        name = text(node)
        if name in local_defs:
            return _canonical(local_defs[name], symbols, local_defs, depth + 1)
        return symbols.poly(node).text()
    if node.type == "number_literal":
        return text(node).lower().rstrip("flu")
    if node.type == "subscript_expression":
        base, indices = subscript_parts(node)
        return _canonical(base, symbols, local_defs, depth + 1) + "[" + \
            ",".join(symbols.poly(i).text() for i in indices) + "]"
    if node.child_count == 0:
        return text(node)
    return node.type + "(" + " ".join(_canonical(c, symbols, local_defs, depth + 1) if c.is_named else text(c)
                                      for c in node.children) + ")"


# ------------------------------------------------------------------------------ one block, chunks
@dataclass(frozen=True)
class ChunkedScan:
    """A one-block scan of [0, N) in per-thread chunks (see `chunked_block_scan`)."""

    kernel: KernelSyntax
    loop: ItemLoop  # the final per-chunk scan loop (its bounds are the chunk's)
    accumulator: str  # its running sum, started at the totals of the chunks before
    value_type: str
    declarations: tuple[Node, ...]  # the scalar declarations before the first barrier, in order
    chunk_lower: Node
    chunk_upper: Node
    total: str  # the thread's chunk total
    totals: str  # the shared array of chunk totals
    stored_at: Node  # the index each thread stores its total at
    combine: tuple[Node, ...]  # the statements between the barrier and the rescan loop
    simple_combine: bool  # `run = 0; for (k = 0; k < t; ++k) run += totals[k];`: no need to run it
    shared_sizes: tuple[tuple[str, Node], ...]  # the shared arrays and their sizes as written


def chunked_block_scan(kernel: KernelSyntax) -> ChunkedScan | None:
    """The scan a block computes in three steps over per-thread chunks [lo, hi):

        __shared__ T part[M];
        <scalar declarations: tid, per, lo, hi, ...>
        T s = 0;  for (i = lo; i < hi; ++i) s += f(i);        the chunk's total
        part[tid] = s;  __syncthreads();
        <combine: leaves run = part[0] + ... + part[tid - 1]>
        for (i = lo; i < hi; ++i) { out[i] = run; run += f(i); }  (or inclusive, any element code)

    f must be the same in both chunk loops (on the source model) and use no thread position.
    The combine step is any code over shared memory and scalars (a loop over the totals before
    the thread, thread 0 scanning them, a Hillis-Steele scan...): the caller runs it for the
    launch (`block_sim.prefix_of_totals`) unless it is the plain loop, and checks which range the
    chunks cover (`chunk_ranges`); here only the shape is checked."""
    statements = [s for s in kernel.statements() if s.type != "comment"]
    shared: dict[str, Node] = {}
    scalars: dict[str, str] = {}
    for statement in statements:
        if statement.type == "declaration" and any(text(c) == "__shared__" for c in statement.children):
            for declarator in statement.children_by_field_name("declarator"):
                name = declarator.child_by_field_name("declarator")
                size = declarator.child_by_field_name("size")
                if declarator.type != "array_declarator" or name is None or name.type != "identifier" or size is None:
                    return None
                shared[text(name)] = size
    if not shared or len(statements) < 5:
        return None
    first_loop = next((n for n, s in enumerate(statements) if s.type == "for_statement"), None)
    if first_loop is None or statements[-1].type != "for_statement":
        return None
    head = statements[:first_loop]
    barrier_at = next((n for n, s in enumerate(statements) if _is_barrier(s)), None)
    if barrier_at is None or barrier_at < first_loop + 2:
        return None
    between = statements[first_loop + 1:barrier_at]
    stores = [s for s in between if s.type != "declaration"]
    combine = statements[barrier_at + 1:-1]
    declarations = [s for s in head + between if s.type == "declaration" and s.children[0].type != "__shared__"
                    and not any(text(c) == "__shared__" for c in s.children)]
    if len(stores) != 1 or any(s.type != "declaration" for s in head):
        return None
    for declaration in declarations:
        if not _scalar_only(declaration, scalars):
            return None
    for statement in combine:
        if statement.type == "declaration" and not any(text(c) == "__shared__" for c in statement.children):
            for declarator in statement.children_by_field_name("declarator"):
                target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" \
                    else declarator
                if target is not None and target.type == "identifier":
                    scalars[text(target)] = " ".join(
                        w for w in text(statement.child_by_field_name("type")).split() if w != "const")
    total = _chunk_total(statements[first_loop], scalars)
    if total is None:
        return None
    total_name, element_var, lower, upper, contribution = total
    stored = _stored_total(stores[0], total_name)
    if stored is None or stored[0] not in shared or not _starts_at_zero(declarations, total_name):
        return None
    part, stored_at = stored
    last = statements[-1]
    for run in _updated_names(last):
        if run not in scalars:
            continue
        loop = scan_loop(kernel, last, run, scalars[run])
        if loop is not None and loop.scan is not None:
            break
    else:
        return None
    if _canonical(loop.lower, Symbols(), {}) != _canonical(lower, Symbols(), {}) or \
            _canonical(loop.upper, Symbols(), {}) != _canonical(upper, Symbols(), {}) or loop.inclusive_upper:
        return None
    first_symbols, last_symbols = Symbols(), Symbols()
    first_symbols.env[element_var] = Poly.atom(POSITION)
    last_symbols.env[loop.var] = Poly.atom(POSITION)
    local_defs: dict[str, Node] = {}
    for statement in loop.body:
        if statement.type == "declaration":
            for declarator in statement.children_by_field_name("declarator"):
                target, value = declarator.child_by_field_name("declarator"), declarator.child_by_field_name("value")
                if target is not None and value is not None:
                    local_defs[text(target)] = value
    if _canonical(contribution, first_symbols, {}) != _canonical(loop.scan.contribution, last_symbols, local_defs):
        return None
    # The element code and the contribution may use the element, the running sum, the kernel's
    # parameters and their own locals: nothing of the thread, its chunk or the shared totals.
    block_names = (set(scalars) - {run}) | set(shared) | {"threadIdx", "blockIdx", "blockDim", "gridDim"}
    for statement in loop.body:
        if {text(n) for n in walk(statement) if n.type == "identifier"} & block_names:
            return None
    if {text(n) for n in walk(contribution) if n.type == "identifier"} & block_names:
        return None
    combine_decls = [s for s in combine if s.type == "declaration"]
    combine_code = [s for s in combine if s.type != "declaration"]
    simple = len(combine_code) == 1 and _combined(combine_code[0], part, text(stored_at), scalars) == run and \
        _starts_at_zero(declarations + combine_decls, run) and \
        all(_declared(d) <= {run} and is_pure(d) for d in combine_decls)
    if not simple and any(n.type in ("call_expression",) and call_name(n) not in ("__syncthreads", "min", "max")
                          for s in combine for n in walk(s)):
        return None
    return ChunkedScan(kernel, loop, run, scalars[run], tuple(declarations), loop.lower, loop.upper, total_name, part,
                       stored_at,
                       tuple(combine), simple, tuple(shared.items()))


def _updated_names(loop: Node) -> list[str]:
    names = []
    for node in walk(loop):
        if node.type == "assignment_expression":
            target = unparen(node.child_by_field_name("left"))
            if target is not None and target.type == "identifier" and text(target) not in names:
                names.append(text(target))
    return names


def _scalar_only(declaration: Node, scalars: dict[str, str]) -> bool:
    if any(text(c) in ("static", "extern") for c in declaration.children) or not is_pure(declaration):
        return False
    type_text = " ".join(w for w in text(declaration.child_by_field_name("type")).split() if w != "const")
    for declarator in declaration.children_by_field_name("declarator"):
        target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" else declarator
        if target is None or target.type != "identifier":
            return False
        value = declarator.child_by_field_name("value") if declarator.type == "init_declarator" else None
        if value is not None and any(n.type in ("subscript_expression", "pointer_expression") for n in walk(value)):
            return False  # loads happen in the loops, not in the chunk arithmetic
        scalars[text(target)] = type_text
    return True


def _starts_at_zero(declarations: list[Node], name: str) -> bool:
    for declaration in declarations:
        for declarator in declaration.children_by_field_name("declarator"):
            target = declarator.child_by_field_name("declarator")
            if declarator.type == "init_declarator" and target is not None and text(target) == name:
                value = unparen(declarator.child_by_field_name("value"))
                return value is not None and value.type == "number_literal" and \
                    text(value).lower().rstrip("flu").strip("0.") == "" and "x" not in text(value).lower()
    return False


def _declared(declaration: Node) -> set[str]:
    names = set()
    for declarator in declaration.children_by_field_name("declarator"):
        target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" else declarator
        if target is not None:
            names.add(text(target))
    return names


def _is_barrier(statement: Node) -> bool:
    if statement.type != "expression_statement" or not statement.named_children:
        return False
    call = unparen(statement.named_children[0])
    return call is not None and call.type == "call_expression" and text(call.child_by_field_name("function")) == \
        "__syncthreads" and not call_args(call)


def _chunk_total(loop: Node, scalars: dict[str, str]) -> tuple[str, str, Node, Node, Node] | None:
    """(s, i, lo, hi, f) of `for (T i = lo; i < hi; ++i) s += f(i);` with f pure."""
    init = loop.child_by_field_name("initializer")
    declarators = init.children_by_field_name("declarator") if init is not None and init.type == "declaration" else []
    if len(declarators) != 1 or declarators[0].type != "init_declarator":
        return None
    var_node, lower = declarators[0].child_by_field_name("declarator"), declarators[0].child_by_field_name("value")
    condition = unparen(loop.child_by_field_name("condition"))
    if var_node is None or lower is None or condition is None or condition.type != "binary_expression" or \
            text(condition.child_by_field_name("operator")) != "<" or \
            text(unparen(condition.child_by_field_name("left"))) != text(var_node):
        return None
    upper = condition.child_by_field_name("right")
    if upper is None or not _unit_increment(unparen(loop.child_by_field_name("update")), text(var_node)):
        return None
    body = [s for s in named_statements(loop.child_by_field_name("body")) if s.type != "comment"]
    if len(body) != 1 or body[0].type != "expression_statement" or not body[0].named_children:
        return None
    update = unparen(body[0].named_children[0])
    if update is None or update.type != "assignment_expression":
        return None
    target = text(unparen(update.child_by_field_name("left")))
    right = unparen(update.child_by_field_name("right"))
    operator = text(update.child_by_field_name("operator"))
    if target not in scalars or right is None:
        return None
    if operator == "=" and right.type == "binary_expression" and text(right.child_by_field_name("operator")) == "+" \
            and text(unparen(right.child_by_field_name("left"))) == target:
        right = unparen(right.child_by_field_name("right"))
    elif operator != "+=":
        return None
    if right is None or not is_pure(right) or target in {text(n) for n in walk(right)}:
        return None
    return target, text(var_node), lower, upper, right


def _stored_total(statement: Node, total: str) -> tuple[str, Node] | None:
    """(array, index) of `array[index] = total;`."""
    if statement.type != "expression_statement" or not statement.named_children:
        return None
    expression = unparen(statement.named_children[0])
    if expression is None or expression.type != "assignment_expression" or \
            text(expression.child_by_field_name("operator")) != "=" or \
            text(unparen(expression.child_by_field_name("right"))) != total:
        return None
    left = unparen(expression.child_by_field_name("left"))
    if left is None or left.type != "subscript_expression":
        return None
    base, indices = subscript_parts(left)
    base = unparen(base)
    if base is None or base.type != "identifier" or len(indices) != 1:
        return None
    return text(base), indices[0]


def _combined(loop: Node, part: str, thread: str, scalars: dict[str, str]) -> str | None:
    """run of `for (k = 0; k < t; ++k) run += part[k];` (t the thread index the totals were
    stored at)."""
    total = _chunk_total(loop, scalars)
    if total is None:
        return None
    run, var, lower, upper, contribution = total
    if text(unparen(lower)) not in ("0", "0u") or text(unparen(upper)) != thread:
        return None
    if contribution.type != "subscript_expression":
        return None
    base, indices = subscript_parts(contribution)
    if text(unparen(base)) != part or len(indices) != 1 or text(unparen(indices[0])) != var:
        return None
    return run


def chunk_ranges(found: ChunkedScan, values: dict[str, int], threads: int) -> list[tuple[int, int]] | None:
    """Each thread's [lo, hi) for the scalar `values` and a one-block launch of `threads`
    threads; None when the chunk arithmetic cannot be evaluated."""
    steps: list[tuple[str, Evaluator]] = []
    for declaration in found.declarations:
        for declarator in declaration.children_by_field_name("declarator"):
            target, value = declarator.child_by_field_name("declarator"), declarator.child_by_field_name("value")
            if declarator.type == "init_declarator" and target is not None:
                steps.append((text(target), _compiled(value)))
    low_of, high_of = _compiled(found.chunk_lower), _compiled(found.chunk_upper)
    ranges = []
    for thread in range(threads):
        env: dict[str, int | None] = {**values, "threadIdx.x": thread, "blockDim.x": threads, "blockIdx.x": 0,
                                      "gridDim.x": 1}
        for name, evaluate in steps:
            env[name] = evaluate(env)
        low, high = low_of(env), high_of(env)
        if low is None or high is None:
            return None
        ranges.append((low, high))
    return ranges


Evaluator = Callable[[dict[str, "int | None"]], "int | None"]


def _compiled(node: Node | None) -> Evaluator:
    """The C integer value of a scalar expression (the operators of `intexpr.fold_binary`, min,
    max, ?:, casts ignored) as a function of the names' values; None where it is not such an
    expression or the value is undefined or overflows."""
    node = unparen(node)
    if node is None:
        return lambda env: None
    kind = node.type
    if kind == "number_literal":
        constant = int_literal(text(node))
        return lambda env: constant
    if kind in ("identifier", "field_expression"):
        name = "".join(text(node).split())
        return lambda env: env.get(name)
    if kind == "cast_expression":
        if ambiguous_cast(node):
            return lambda env: None
        return _compiled(node.child_by_field_name("value"))
    if kind == "conditional_expression":
        test = _compiled(node.child_by_field_name("condition"))
        yes, no = _compiled(node.child_by_field_name("consequence")), _compiled(node.child_by_field_name("alternative"))

        def choose(env: dict[str, int | None]) -> int | None:
            condition = test(env)
            return None if condition is None else (yes(env) if condition else no(env))
        return choose
    if kind == "call_expression" and call_name(node) in ("min", "max", "umin", "umax", "llmin", "llmax") and \
            len(call_args(node)) == 2:
        first, second = (_compiled(a) for a in call_args(node))
        pick = min if "min" in call_name(node) else max

        def extreme(env: dict[str, int | None]) -> int | None:
            a, b = first(env), second(env)
            return None if a is None or b is None else pick(a, b)
        return extreme
    if kind != "binary_expression":
        return lambda env: None
    left, right = _compiled(node.child_by_field_name("left")), _compiled(node.child_by_field_name("right"))
    operator = text(node.child_by_field_name("operator"))
    if operator not in BINARY_OPERATORS:
        return lambda env: None

    def binary(env: dict[str, int | None]) -> int | None:
        a, b = left(env), right(env)
        return None if a is None or b is None else fold_binary(operator, a, b)  # the one C integer evaluator
    return binary
