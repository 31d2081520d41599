"""Whole-array reductions into one address: what every thread adds (or maxes) into `out`.

`full_reduction(kernel)` recognises kernels whose only effect is an atomic (`atomicAdd`,
`atomicMax`, `atomicMin`) to one address that is the same for every thread, combining a
contribution per element of a range [0, N):

- per element: `int i = <global index>; if (i < n) atomicAdd(out, f(i));` (or `return` guard, or
  a grid-stride loop around it; the atomic may sit under a condition: `if (x[i] > 0)
  atomicAdd(count, 1)` counts);
- per thread, over a grid-stride loop: `T acc = 0; for (i = gid; i < n; i += stride) acc += f(i);
  atomicAdd(out, acc);` (or `while (i < n) { ...; i += stride; }` with `i` declared before), also
  a maximum or minimum (`T m = S; ... if (f(i) > m) m = f(i); atomicMax(out, m);`, `m = max(m, e)`,
  `m = e > m ? e : m`) from any thread-invariant start S of the atomic's type (combined once, as
  the original combines it once per thread);
- per thread, over one block: the same loops from `threadIdx.x` by `blockDim.x` (the applier
  checks the launch has one block);
- per thread, over a chunk: `for (k = 0; k < CH; k++) { int idx = tid * CH + k; if (idx < n)
  acc += f(idx); } atomicAdd(out, acc);` (covers [0, N) only when the launch has T threads with
  T * CH >= N: the applier checks that).

f must be pure (`accesses`/`is_pure`) and use the element index and thread-invariant values only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.idioms.access import identifiers, is_pure
from regrapht.idioms.items import ReduceOp
from regrapht.idioms.syntax import (
    GLOBAL_X,
    GRID_THREADS_X,
    KernelSyntax,
    Symbols,
    call_args,
    call_name,
    condition_of,
    named_statements,
    subscript_parts,
    text,
    unparen,
    updated_target,
    walk,
)
from regrapht.idioms.threads import thread_mapping

ATOMIC_OPS: dict[str, ReduceOp] = {"atomicAdd": "sum", "atomicMax": "max", "atomicMin": "min"}
ReductionForm = Literal["per_element", "grid_stride", "block_stride", "chunked"]


@dataclass(frozen=True)
class FullReduction:
    kernel: KernelSyntax
    form: ReductionForm
    element: str  # the element index variable (its name in `statements` and `contribution`)
    element_type: str
    count: str  # N of [0, N), as written
    statements: tuple[Node, ...]  # pure declarations computed per element, in order
    condition: Node | None  # the element contributes only where this holds
    contribution: Node  # the value combined per element
    op: ReduceOp
    atomic: str  # atomicAdd / atomicMax / atomicMin
    target: Node  # the address argument of the atomic
    target_array: str
    value_type: str  # the pointee type of the target
    kept_prelude: tuple[Node, ...]  # thread-invariant declarations the statements need
    chunk: str | None = None  # chunked form: elements per thread, as written
    start: Node | None = None  # a per-thread maximum's (minimum's) start, combined once like an element


def full_reduction(kernel: KernelSyntax) -> FullReduction | None:
    if not _only_one_atomic(kernel):
        return None
    return _per_element(kernel) or _per_thread(kernel)


def _only_one_atomic(kernel: KernelSyntax) -> bool:
    atomics = 0
    for node in walk(kernel.body):
        if node.type in ("goto_statement", "asm_statement", "gnu_asm_expression", "labeled_statement"):
            return False
        if node.type == "call_expression":
            name = call_name(node)
            if name in ATOMIC_OPS:
                atomics += 1
            elif name.startswith(("atomic", "__syncthreads", "__shfl", "__syncwarp", "printf", "__threadfence")):
                return False
        if node.type == "declaration" and any(text(c) in ("__shared__", "static") for c in node.children):
            return False
        if node.type in ("assignment_expression", "update_expression"):
            target = updated_target(node)
            if target is None or target.type != "identifier":
                return False  # a store through memory besides the atomic
    return atomics == 1


def _atomic_call(statement: Node) -> tuple[Node, Node | None] | None:
    """(call, condition) for `atomicX(...);` or `if (cond) atomicX(...);`."""
    condition = None
    if statement.type == "if_statement" and statement.child_by_field_name("alternative") is None:
        body = named_statements(statement.child_by_field_name("consequence"))
        if len(body) != 1:
            return None
        condition, statement = condition_of(statement), body[0]
    if statement.type != "expression_statement" or not statement.named_children:
        return None
    call = unparen(statement.named_children[0])
    if call is None or call.type != "call_expression" or call_name(call) not in ATOMIC_OPS or len(call_args(call)) != 2:
        return None
    return call, condition


def _target(kernel: KernelSyntax, symbols: Symbols, address: Node) -> tuple[str, str] | None:
    """(array, pointee type) when the address is the same for every thread."""
    node = unparen(address)
    base: Node | None = node
    offset = Poly.const(0)
    if node is not None and node.type == "pointer_expression" and text(node.child_by_field_name("operator")) == "&":
        inner = unparen(node.child_by_field_name("argument"))
        if inner is None or inner.type != "subscript_expression":
            return None
        base, indices = subscript_parts(inner)
        if len(indices) != 1:
            return None
        offset = symbols.poly(indices[0])
    elif node is not None and node.type == "binary_expression" and text(node.child_by_field_name("operator")) == "+":
        base, offset = node.child_by_field_name("left"), symbols.poly(node.child_by_field_name("right"))
    base = unparen(base)
    if base is None or base.type != "identifier":
        return None
    # The address may use the pointer and the kernel's scalars only: then it is the same for
    # every thread (an item index or a local derived from one would make it a scatter).
    if not identifiers(address) <= {text(base), *kernel.scalars, *kernel.constants}:
        return None
    param = kernel.param(text(base))
    if param is None or not param.is_pointer or param.is_const:
        return None
    if offset.thread_dependent or offset.memory_dependent or any(a.startswith("blockIdx") for a in offset.atoms()):
        return None
    return param.name, param.base_type


def _pure_declarations(statements: list[Node]) -> bool:
    return all(s.type == "declaration" and is_pure(s) and
               not any(text(c) in ("__shared__", "static") for c in s.children) and
               all(d.type == "init_declarator" and (d.child_by_field_name("declarator") or d).type == "identifier"
                   for d in s.children_by_field_name("declarator"))
               for s in statements)


def _thread_free(nodes: list[Node]) -> bool:
    return not any(text(n) in ("threadIdx", "blockIdx", "blockDim", "gridDim")
                   for node in nodes for n in walk(node) if n.type == "identifier")


def _per_element(kernel: KernelSyntax) -> FullReduction | None:
    mapping = thread_mapping(kernel)
    if mapping is None or len(mapping.indices) != 1 or mapping.indices[0].axis != "x" or not mapping.work:
        return None
    *decls, last = mapping.work
    found = _atomic_call(last)
    if found is None or not _pure_declarations(decls) or not _thread_free([*decls, last]):
        return None
    call, condition = found
    address, value = call_args(call)
    target = _target(kernel, mapping.symbols, address)
    if target is None or not is_pure(value) or not is_pure(condition):
        return None
    kept = _kept(mapping.prelude, [*decls, last], {mapping.indices[0].name})
    if kept is None:
        return None
    item = mapping.indices[0]
    form: ReductionForm = "grid_stride" if mapping.form == "grid_stride" else "per_element"
    return FullReduction(kernel, form, item.name, item.type, item.bound, tuple(decls), condition,
                         value, ATOMIC_OPS[call_name(call)], call_name(call), address, target[0], target[1], kept)


def _kept(prelude: tuple[Node, ...] | list[Node], work: list[Node], indices: set[str]) -> tuple[Node, ...] | None:
    used: set[str] = set()
    for statement in work:
        used |= identifiers(statement)
    kept = []
    for declaration in prelude:
        names = {text(d.child_by_field_name("declarator") or d) for d in declaration.children_by_field_name("declarator")}
        if not names & used or names <= indices:
            continue
        if not _thread_free([declaration]):
            return None
        kept.append(declaration)
    return tuple(kept)


def _per_thread(kernel: KernelSyntax) -> FullReduction | None:
    """The grid-stride, one-block and chunked per-thread forms (see the module docstring)."""
    statements = [s for s in kernel.statements() if s.type != "comment"]
    if len(statements) < 3:
        return None
    *head, loop, last = statements
    found = _atomic_call(last)
    if found is None or found[1] is not None or loop.type not in ("for_statement", "while_statement"):
        return None
    call, _ = found
    address, value = call_args(call)
    accumulator = unparen(value)
    if accumulator is None or accumulator.type != "identifier" or not _pure_declarations(head):
        return None
    acc = text(accumulator)
    op = ATOMIC_OPS[call_name(call)]
    symbols = Symbols(kernel.constants)
    start: Node | None = None
    types: dict[str, str] = {}
    for declaration in head:
        for declarator in declaration.children_by_field_name("declarator"):
            name = text(declarator.child_by_field_name("declarator"))
            init = declarator.child_by_field_name("value")
            symbols.define(name, init)
            types[name] = " ".join(w for w in text(declaration.child_by_field_name("type")).split() if w != "const")
            if name == acc:
                if start is not None:
                    return None
                start = init
    if start is None:
        return None
    target = _target(kernel, symbols, address)
    if target is None or not _identity_start(op, start, types[acc], target[1], kernel.template_parameters):
        return None
    walked = _thread_loop(loop, symbols, types)
    if walked is None:
        return _chunked(kernel, symbols, head, loop, acc, call, address, target) if op == "sum" else None
    var, var_type, first, step, bound, body = walked
    if first == GLOBAL_X and step == GRID_THREADS_X:
        form: ReductionForm = "grid_stride"
    elif first == Poly.atom("threadIdx.x") and step == Poly.atom("blockDim.x"):
        form = "block_stride"  # one block's threads stride over the array: the applier checks the grid is 1
    else:
        return None
    if any(_assigns(statement, var) for statement in body):
        return None
    parts = _accumulating(body, acc, op)
    if parts is None:
        return None
    decls, guard, contribution = parts
    if not _thread_free([*decls, contribution] + ([guard] if guard is not None else [])):
        return None
    kept = _kept(head, [*decls, contribution, *([] if op == "sum" else [start])], {var, acc})
    if kept is None:
        return None
    return FullReduction(kernel, form, var, var_type, " ".join(text(bound).split()), tuple(decls), guard,
                         contribution, op, call_name(call), address, target[0], target[1], kept,
                         start=None if op == "sum" else start)


def _identity_start(op: ReduceOp, start: Node | None, acc_type: str, value_type: str,
                    template_parameters: tuple[str, ...] = ()) -> bool:
    """Whether a thread's private accumulator starting at `start` combines into the address as
    the elements alone would: a sum from zero (each thread adds its start once), or a maximum or
    minimum from any thread-invariant value of the atomic's own type (idempotent: the start
    counts once however many threads combine it, and the rewrite starts from it too)."""
    literal = unparen(start)
    # a zero converted to the accumulator's type: `(T)0`, `T(0)`, `static_cast<T>(0)`
    while literal is not None and literal.type in ("cast_expression", "call_expression"):
        if literal.type == "cast_expression":
            literal = unparen(literal.child_by_field_name("value"))
            continue
        function = literal.child_by_field_name("function")
        converts = function is not None and (text(function) in template_parameters or
                                             (function.type == "template_function" and
                                              text(function.child_by_field_name("name")) == "static_cast"))
        args = call_args(literal)
        literal = unparen(args[0]) if converts and len(args) == 1 else None
    if op == "sum":
        return literal is not None and literal.type == "number_literal" and \
            text(literal).rstrip("fFuUlL").strip("0.") == ""
    return start is not None and acc_type == value_type and is_pure(start) and _thread_free([start])


def _thread_loop(loop: Node, symbols: Symbols, types: dict[str, str]) -> tuple[str, str, Poly, Poly, Node, list[Node]] \
        | None:
    """(variable, its type, first value, step, bound, body) of `for (T v = F; v < B; v += S)` or of
    `while (v < B) { ...; v += S; }` with `T v = F;` declared before (the body without the step)."""
    condition = unparen(loop.child_by_field_name("condition"))
    if loop.type == "while_statement":
        condition = unparen(condition_of(loop))
    if condition is None or condition.type != "binary_expression" or text(condition.child_by_field_name("operator")) != "<":
        return None
    var = text(unparen(condition.child_by_field_name("left")))
    bound = condition.child_by_field_name("right")
    if bound is None or symbols.poly(bound).thread_dependent or symbols.poly(bound).memory_dependent:
        return None
    body = named_statements(loop.child_by_field_name("body"))
    if loop.type == "for_statement":
        init = loop.child_by_field_name("initializer")
        if init is None or init.type != "declaration":
            return None
        declarators = init.children_by_field_name("declarator")
        if len(declarators) != 1 or declarators[0].type != "init_declarator" or \
                text(declarators[0].child_by_field_name("declarator")) != var:
            return None
        var_type = " ".join(text(init.child_by_field_name("type")).split())
        first = symbols.poly(declarators[0].child_by_field_name("value"))
        update = unparen(loop.child_by_field_name("update"))
    else:
        if var not in types or not body or body[-1].type != "expression_statement" or not body[-1].named_children:
            return None
        known = symbols.env.get(var)
        if known is None:
            return None
        var_type, first = types[var], known
        update = unparen(body[-1].named_children[0])
        body = body[:-1]
    if update is None or update.type != "assignment_expression" or text(update.child_by_field_name("left")) != var or \
            text(update.child_by_field_name("operator")) != "+=":
        return None
    return var, var_type, first, symbols.poly(update.child_by_field_name("right")), bound, body


def _assigns(statement: Node, name: str) -> bool:
    return any(n.type in ("assignment_expression", "update_expression") and
               text(unparen(n.child_by_field_name("left") or n.child_by_field_name("argument"))) == name
               for n in walk(statement))


_COMBINE_CALLS: dict[str, ReduceOp] = {"max": "max", "min": "min", "fmaxf": "max", "fminf": "min", "fmax": "max",
                                       "fmin": "min", "llmax": "max", "llmin": "min", "umax": "max", "umin": "min"}
_PICKS_GREATER = {">": True, ">=": True, "<": False, "<=": False}


def _accumulating(body: list[Node], acc: str, op: ReduceOp = "sum") -> tuple[list[Node], Node | None, Node] | None:
    """(declarations, condition, contribution) of a loop body `decls; [if (c)] acc += e;`, or for
    a maximum (minimum) `decls; acc = max(acc, e);` / `if (e > acc) acc = e;` /
    `acc = e > acc ? e : acc;` (and the mirrored spellings)."""
    if not body:
        return None
    *decls, last = body
    if not _pure_declarations(decls):
        return None
    if op != "sum":
        contribution = _combined(last, acc, op)
        if contribution is None or acc in identifiers(contribution) or not is_pure(contribution):
            return None
        return decls, None, contribution
    guard = None
    if last.type == "if_statement" and last.child_by_field_name("alternative") is None:
        inner = named_statements(last.child_by_field_name("consequence"))
        if len(inner) != 1:
            return None
        guard, last = condition_of(last), inner[0]
    if last.type != "expression_statement" or not last.named_children:
        return None
    update = unparen(last.named_children[0])
    if update is None or update.type != "assignment_expression" or text(update.child_by_field_name("left")) != acc:
        return None
    operator = text(update.child_by_field_name("operator"))
    right = unparen(update.child_by_field_name("right"))
    if right is None:
        return None
    if operator == "=" and right.type == "binary_expression" and text(right.child_by_field_name("operator")) == "+" \
            and text(unparen(right.child_by_field_name("left"))) == acc:
        right = unparen(right.child_by_field_name("right"))
    elif operator != "+=":
        return None
    if right is None or acc in identifiers(right) or not is_pure(right) or not is_pure(guard) or \
            (guard is not None and acc in identifiers(guard)):
        return None
    return decls, guard, right


def _combined(statement: Node, acc: str, op: ReduceOp) -> Node | None:
    """The value `e` a statement folds into `acc` with `op` (max or min), or None."""
    if statement.type == "if_statement" and statement.child_by_field_name("alternative") is None:
        inner = named_statements(statement.child_by_field_name("consequence"))
        assigned = _assigned_value(inner[0], acc) if len(inner) == 1 else None
        return assigned if assigned is not None and _keeps(condition_of(statement), assigned, acc) == op else None
    if statement.type != "expression_statement" or not statement.named_children:
        return None
    value = _assigned_value(statement, acc)
    if value is None:
        return None
    if value.type == "call_expression" and _COMBINE_CALLS.get(call_name(value)) == op and len(call_args(value)) == 2:
        first, second = (unparen(a) for a in call_args(value))
        if first is not None and text(first) == acc:
            return second
        return first if second is not None and text(second) == acc else None
    if value.type == "conditional_expression":
        yes, no = unparen(value.child_by_field_name("consequence")), unparen(value.child_by_field_name("alternative"))
        if yes is None or no is None:
            return None
        if text(no) == acc and _keeps(value.child_by_field_name("condition"), yes, acc) == op:
            return yes
        if text(yes) == acc and _keeps(value.child_by_field_name("condition"), no, acc) == _other(op):
            return no
    return None


def _assigned_value(statement: Node, acc: str) -> Node | None:
    """`e` of the statement `acc = e;`."""
    if statement.type != "expression_statement" or not statement.named_children:
        return None
    update = unparen(statement.named_children[0])
    if update is None or update.type != "assignment_expression" or text(update.child_by_field_name("operator")) != "=" \
            or text(unparen(update.child_by_field_name("left"))) != acc:
        return None
    return unparen(update.child_by_field_name("right"))


def _keeps(condition: Node | None, value: Node, acc: str) -> ReduceOp | None:
    """Which of max/min taking `value` where `condition` holds computes: `value > acc` (or
    `acc < value`, with or without `=`) keeps the greater, `value < acc` the smaller."""
    condition = unparen(condition)
    if condition is None or condition.type != "binary_expression":
        return None
    operator = text(condition.child_by_field_name("operator"))
    left, right = (text(unparen(condition.child_by_field_name(f))) for f in ("left", "right"))
    if operator not in _PICKS_GREATER:
        return None
    if left == text(value) and right == acc:
        greater = _PICKS_GREATER[operator]
    elif left == acc and right == text(value):
        greater = not _PICKS_GREATER[operator]
    else:
        return None
    return "max" if greater else "min"


def _other(op: ReduceOp) -> ReduceOp:
    return "min" if op == "max" else "max"


def _chunked(kernel: KernelSyntax, symbols: Symbols, head: list[Node], loop: Node, acc: str, call: Node,
             address: Node, target: tuple[str, str]) -> FullReduction | None:
    """`for (k = 0; k < CH; k++) { int idx = tid * CH + k; if (idx < n) acc += f(idx); }`."""
    init = loop.child_by_field_name("initializer")
    condition = unparen(loop.child_by_field_name("condition"))
    if loop.type != "for_statement" or init is None or init.type != "declaration" or condition is None or \
            condition.type != "binary_expression" or text(condition.child_by_field_name("operator")) != "<":
        return None
    declarators = init.children_by_field_name("declarator")
    update = unparen(loop.child_by_field_name("update"))
    if len(declarators) != 1 or declarators[0].type != "init_declarator" or update is None or \
            symbols.poly(declarators[0].child_by_field_name("value")).constant != 0:
        return None
    var = text(declarators[0].child_by_field_name("declarator"))
    bound = condition.child_by_field_name("right")
    if text(unparen(condition.child_by_field_name("left"))) != var or bound is None or \
            symbols.poly(bound).thread_dependent or symbols.poly(bound).memory_dependent:
        return None
    body = named_statements(loop.child_by_field_name("body"))
    if not (update.type == "update_expression" and text(update.child_by_field_name("argument")) == var):
        return None
    chunk = symbols.poly(bound)
    if len(body) != 2 or body[0].type != "declaration" or body[1].type != "if_statement":
        return None
    index_decl = body[0].children_by_field_name("declarator")
    if len(index_decl) != 1 or index_decl[0].type != "init_declarator":
        return None
    index_name = text(index_decl[0].child_by_field_name("declarator"))
    loop_symbols = Symbols(kernel.constants)
    loop_symbols.env = dict(symbols.env)
    index_poly = loop_symbols.poly(index_decl[0].child_by_field_name("value"))
    product = GLOBAL_X * chunk
    if product is None or index_poly != product + Poly.atom(var):
        return None
    guard = condition_of(body[1])
    inner = named_statements(body[1].child_by_field_name("consequence"))
    if guard is None or guard.type != "binary_expression" or text(guard.child_by_field_name("operator")) != "<" or \
            text(unparen(guard.child_by_field_name("left"))) != index_name or len(inner) != 1:
        return None
    count = guard.child_by_field_name("right")
    if count is None or symbols.poly(count).thread_dependent or symbols.poly(count).memory_dependent:
        return None
    parts = _accumulating(inner, acc)
    if parts is None or parts[0] or parts[1] is not None:
        return None
    contribution = parts[2]
    if not _thread_free([contribution]) or var in identifiers(contribution):
        return None
    kept = _kept(head, [contribution], {acc})
    if kept is None:
        return None
    index_type = " ".join(text(body[0].child_by_field_name("type")).split())
    return FullReduction(kernel, "chunked", index_name, index_type, " ".join(text(count).split()), (), None,
                         contribution, "sum", call_name(call), address, target[0], target[1], kept,
                         chunk=" ".join(text(bound).split()))
