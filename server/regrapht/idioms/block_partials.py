"""Per-block reductions through a shared-memory tree: one sum, maximum or minimum per block.

`block_partial(kernel, threads, constants)` recognises the textbook shape (interleaved or
sequential addressing, a strided index, the first add during the load, a static or an
`extern __shared__` buffer), read in plain form (`idioms/spelling/`: cooperative groups'
barriers and ranks, a `SharedMemory<T>` proxy, index macros):

    <prelude>                      each thread's value: index declarations and loads, stores to
                                   locals only
    S[e] = X;                      the value into the shared array S
    <combine>                      shared memory, barriers and the thread's own indices only
    if (C) OUT[J] = Y;             J the same in every thread (block and grid indices, scalars),
    if (C) atomicAdd(&OUT[J], Y);  or one atomicAdd/atomicMax/atomicMin of Y into OUT[J] (`OUT`,
                                   `OUT + J`, `&OUT[J]`): the block's partial into a whole-array one

The combine is not matched against a list of spellings: the block is run (`block_sim.
block_tree_operator`, every thread of the launch's 1-D block in lock step, on random values) and
must leave `C` true in thread 0 alone, with `Y` there the sum, the maximum or the minimum of what
every thread stored (the same one on every draw). So the rewrite may compute Y as that
operator's reduction of the values `X` by any means (`search/appliers/block_partials.py`:
`cub::BlockReduce`) and run the final statement as written, in one thread, with Y replaced.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tree_sitter import Node

from regrapht.cuda.intexpr import constant_value
from regrapht.idioms.access import is_pure
from regrapht.idioms.block_sim import TreeOperator, block_tree_operator
from regrapht.idioms.syntax import (
    KernelSyntax,
    call_args,
    call_name,
    condition_of,
    identifiers_in,
    named_statements,
    subscript_parts,
    text,
    unparen,
    updated_target,
    walk,
)

_BARRIER = "__syncthreads"
_THREAD_FIELDS = frozenset({"threadIdx.x", "threadIdx.y", "threadIdx.z", "blockDim.x", "blockDim.y", "blockDim.z"})
_BLOCK_FIELDS = frozenset({"blockIdx.x", "blockIdx.y", "blockIdx.z", "gridDim.x", "gridDim.y", "gridDim.z"})
ATOMICS = frozenset({"atomicAdd", "atomicMax", "atomicMin"})
# the calls a combine may make (`block_sim` runs them): barriers and two-value orderings
_COMBINE_CALLS = frozenset({_BARRIER, "min", "max", "fminf", "fmaxf", "fmin", "fmax"})


@dataclass(frozen=True)
class BlockPartial:
    kernel: KernelSyntax
    prelude: tuple[Node, ...]  # each thread's statements before its store, in order
    value: Node  # X: the thread's value, stored into the shared array
    value_type: str  # the shared array's element type, as written (`T`, `float`)
    array: str  # the shared array's name
    target: Node  # OUT[J] (or the atomic's address: `OUT`, `&OUT[J]`): where the block's result goes
    shared: tuple[Node, ...]  # the kernel's shared declarations (the rewrite drops them)
    operator: TreeOperator  # what the tree computes from the values X
    final: Node  # the final statement's expression (`OUT[J] = Y`, `atomicAdd(..., Y)`)
    result: Node  # Y within `final`
    atomic: str | None  # the final statement's atomic (`atomicMax`); None: a store


@dataclass(frozen=True)
class _Final:
    condition: Node  # C
    expression: Node  # `OUT[J] = Y` or `atomicOp(ADDRESS, Y)`
    target: Node  # OUT[J] or ADDRESS
    result: Node  # Y
    atomic: str | None


@dataclass(frozen=True)
class _Shared:
    declaration: Node
    element_type: str
    size: int | None  # None: `extern __shared__` (sized by the launch)


def block_partial(kernel: KernelSyntax, threads: int, constants: Mapping[str, int]) -> BlockPartial | None:
    """The kernel's per-block reduction when it is one (see the module docstring) for a 1-D
    block of `threads` threads; `constants`: the file's, the spec's and the instance's template
    values."""
    statements = kernel.statements()
    shared = {name: found for statement in statements if (found := _shared_array(statement, constants)) is not None
              for name in [_declared_array(statement)] if name is not None}
    body = [s for s in statements if not any(s is found.declaration for found in shared.values())]
    if not shared or len(body) < 3 or any(_declares_shared(s) for s in body):
        return None
    first = next((n for n, s in enumerate(body) if identifiers_in(s) & set(shared)), None)
    if first is None:
        return None
    prelude, store, combine, final = body[:first], body[first], body[first + 1 : -1], body[-1]
    stored = _store(store, shared)
    finished = _final(final, kernel)
    if stored is None or finished is None or not all(_per_thread(s) for s in prelude):
        return None
    array, stored_at, value = stored
    condition, result = finished.condition, finished.result
    fixed = set(constants) - set(kernel.scalars)  # a scalar the spec fixes is still one per launch
    declared = _declared(prelude)
    opaque = _memory_values(prelude, declared)
    thread_only = _thread_only(prelude, declared - opaque, fixed)
    plain_value = unparen(value)
    held = text(plain_value) if plain_value is not None and plain_value.type == "identifier" and \
        text(plain_value) in opaque else None
    if held is not None and _type_of(prelude, held) != shared[array].element_type:
        return None  # the stored value converts: the held local is not what the array holds
    allowed = thread_only | set(shared) | _declared(combine) | fixed | ({held} if held else set())
    for node in (stored_at, *combine, condition, result):
        if not _names_allowed(node, allowed) or _reads_global(node, set(shared)):
            return None
    if not _names_allowed(stored_at, thread_only | fixed):
        return None
    index_prelude = [s for s in prelude if s.type == "declaration" and _declared([s]) <= thread_only]
    sizes = {name: found.size if found.size is not None else threads for name, found in shared.items()}
    operator = block_tree_operator(index_prelude, frozenset(opaque - ({held} if held else set())), array,
                                   stored_at, held, combine, condition, result, threads, constants, sizes)
    if operator is None:
        return None
    if operator != "sum" and any(n.type == "cast_expression" for s in combine for n in walk(s)):
        return None  # the block run reads casts as no-ops; `(int)a > (int)b` on unsigned values is not their max
    return BlockPartial(kernel, tuple(prelude), value, shared[array].element_type, array, finished.target,
                        tuple(found.declaration for found in shared.values()), operator, finished.expression,
                        result, finished.atomic)


def _declares_shared(statement: Node) -> bool:
    return any(n.type == "declaration" and any(text(c) == "__shared__" for c in n.children) for n in walk(statement))


def _declared_array(statement: Node) -> str | None:
    declarators = statement.children_by_field_name("declarator")
    if len(declarators) != 1 or declarators[0].type != "array_declarator":
        return None
    name = declarators[0].child_by_field_name("declarator")
    return text(name) if name is not None and name.type == "identifier" else None


def _shared_array(statement: Node, constants: Mapping[str, int]) -> _Shared | None:
    """`__shared__ T a[N];` (N a constant) or `extern __shared__ T a[];`."""
    if statement.type != "declaration" or not any(text(c) == "__shared__" for c in statement.children):
        return None
    declarators = statement.children_by_field_name("declarator")
    if len(declarators) != 1 or declarators[0].type != "array_declarator":
        return None
    size_node = declarators[0].child_by_field_name("size")
    extern = any(text(c) == "extern" for c in statement.children)
    element = " ".join(w for w in text(statement.child_by_field_name("type")).split() if w != "volatile")
    if extern:
        return _Shared(statement, element, None) if size_node is None else None
    size = constant_value(text(size_node), constants) if size_node is not None else None
    return _Shared(statement, element, size) if size is not None and size > 0 else None


def _store(statement: Node, shared: Mapping[str, _Shared]) -> tuple[str, Node, Node] | None:
    """(array, index, value) of `S[e] = X;`, X reading no shared memory."""
    if statement.type != "expression_statement" or len(statement.named_children) != 1:
        return None
    assignment = unparen(statement.named_children[0])
    if assignment is None or assignment.type != "assignment_expression" or \
            text(assignment.child_by_field_name("operator")) != "=":
        return None
    left, value = unparen(assignment.child_by_field_name("left")), assignment.child_by_field_name("right")
    if left is None or left.type != "subscript_expression" or value is None:
        return None
    base, indices = subscript_parts(left)
    base = unparen(base)
    if base is None or base.type != "identifier" or text(base) not in shared or len(indices) != 1 or \
            identifiers_in(value) & set(shared) or not is_pure(value):
        return None
    return text(base), indices[0], value


def _final(statement: Node, kernel: KernelSyntax) -> _Final | None:
    """`if (C) OUT[J] = Y;` or `if (C) atomicOp(ADDRESS, Y);` (ADDRESS `OUT`, `OUT + J` or
    `&OUT[J]`), OUT a pointer parameter and J the same in every thread of the block."""
    if statement.type != "if_statement" or statement.child_by_field_name("alternative") is not None:
        return None
    condition = condition_of(statement)
    inner = named_statements(statement.child_by_field_name("consequence"))
    if condition is None or len(inner) != 1 or inner[0].type != "expression_statement" or \
            len(inner[0].named_children) != 1:
        return None
    expression = unparen(inner[0].named_children[0])
    if expression is None:
        return None
    if expression.type == "call_expression":
        return _final_atomic(condition, expression, kernel)
    if expression.type != "assignment_expression" or text(expression.child_by_field_name("operator")) != "=":
        return None
    target, result = unparen(expression.child_by_field_name("left")), expression.child_by_field_name("right")
    if target is None or target.type != "subscript_expression" or result is None:
        return None
    base, indices = subscript_parts(target)
    if len(indices) != 1 or not _output(base, kernel) or not _block_uniform(indices[0], kernel):
        return None
    return _Final(condition, expression, target, result, None)


def _final_atomic(condition: Node, call: Node, kernel: KernelSyntax) -> _Final | None:
    name, arguments = call_name(call), call_args(call)
    if name not in ATOMICS or len(arguments) != 2:
        return None
    address = unparen(arguments[0])
    if address is None:
        return None
    if address.type == "pointer_expression" and text(address.child_by_field_name("operator")) == "&":
        element = unparen(address.child_by_field_name("argument"))
        if element is None or element.type != "subscript_expression":
            return None
        base, indices = subscript_parts(element)
        if len(indices) != 1 or not _block_uniform(indices[0], kernel):
            return None
    elif address.type == "binary_expression" and text(address.child_by_field_name("operator")) == "+":
        base, offset = address.child_by_field_name("left"), address.child_by_field_name("right")
        if offset is None or not _block_uniform(offset, kernel):
            return None
    else:
        base = address
    if not _output(base, kernel):
        return None
    return _Final(condition, call, address, arguments[1], name)


def _output(base: Node | None, kernel: KernelSyntax) -> bool:
    """Whether `base` names a pointer parameter the kernel may write through."""
    base = unparen(base)
    param = kernel.param(text(base)) if base is not None and base.type == "identifier" else None
    return param is not None and param.is_pointer and not param.is_const


def _block_uniform(index: Node, kernel: KernelSyntax) -> bool:
    """Whether `index` is the same in every thread of a block: block and grid indices and the
    kernel's scalars, no memory read or call."""
    fields = {"".join(text(n).split()) for n in walk(index) if n.type == "field_expression"}
    names = {text(n) for n in walk(index) if n.type == "identifier" and n.parent is not None
             and n.parent.type != "field_expression"}
    return fields <= _BLOCK_FIELDS and names <= set(kernel.scalars) and is_pure(index) and \
        not any(n.type in ("subscript_expression", "pointer_expression", "call_expression") for n in walk(index))


def _per_thread(statement: Node) -> bool:
    """A prelude statement: declarations, expression statements and ifs that store to locals
    only and call nothing with an effect; no barrier, jump or shared array."""
    for node in walk(statement):
        if node.type in ("return_statement", "goto_statement", "asm_statement", "gnu_asm_expression",
                         "labeled_statement", "switch_statement"):
            return False
        if node.type == "call_expression" and (call_name(node) == _BARRIER or not is_pure(node)):
            return False
        if node.type in ("assignment_expression", "update_expression"):
            target = updated_target(node)
            if target is None or target.type != "identifier":
                return False
        if node.type == "declaration" and any(text(c) in ("static", "extern", "__shared__") for c in node.children):
            return False
    return statement.type in ("declaration", "expression_statement", "if_statement", "compound_statement",
                              "for_statement", "while_statement", "do_statement")


def _declared(statements: list[Node] | tuple[Node, ...]) -> set[str]:
    names: set[str] = set()
    for statement in statements:
        for node in walk(statement):
            if node.type == "init_declarator":
                target = node.child_by_field_name("declarator")
                if target is not None and target.type == "identifier":
                    names.add(text(target))
            elif node.type == "declaration":
                names |= {text(d) for d in node.children_by_field_name("declarator") if d.type == "identifier"}
    return names


def _type_of(statements: list[Node], name: str) -> str | None:
    for statement in statements:
        if statement.type == "declaration" and name in _declared([statement]):
            return " ".join(w for w in text(statement.child_by_field_name("type")).split() if w != "const")
    return None


def _reads_memory(node: Node) -> bool:
    return any(n.type in ("subscript_expression", "pointer_expression", "field_expression") and
               "".join(text(n).split()) not in _THREAD_FIELDS | _BLOCK_FIELDS for n in walk(node)) or \
        any(n.type == "call_expression" for n in walk(node))


def _memory_values(prelude: list[Node], declared: set[str]) -> set[str]:
    """The prelude's locals whose value may come from memory (or from another such local): a
    declaration or store that reads memory or one of them, to a fixed point."""
    values: set[str] = set()
    while True:
        grown = set(values)
        for statement in prelude:
            reads = _reads_memory(statement) or bool(identifiers_in(statement) & values)
            if not reads:
                continue
            grown |= _declared([statement]) & declared
            for node in walk(statement):
                if node.type in ("assignment_expression", "update_expression"):
                    target = updated_target(node)
                    if target is not None and text(target) in declared:
                        grown.add(text(target))
        if grown == values:
            return values
        values = grown


def _thread_only(prelude: list[Node], candidates: set[str], constants: set[str]) -> set[str]:
    """The prelude's locals declared once from the thread's own indices, constants and other
    such locals (never the block's index, a scalar or memory) and never changed after."""
    changed = {text(t) for s in prelude for n in walk(s) if n.type in ("assignment_expression", "update_expression")
               and (t := updated_target(n)) is not None}
    known: set[str] = set()
    for statement in prelude:
        if statement.type != "declaration":
            continue
        names = _declared([statement])
        if len(names) != 1 or not names <= candidates - changed:
            continue
        fields = {"".join(text(n).split()) for n in walk(statement) if n.type == "field_expression"}
        used = {text(n) for n in walk(statement) if n.type == "identifier" and n.parent is not None
                and n.parent.type != "field_expression"} - names
        if fields <= _THREAD_FIELDS and used <= known | constants and is_pure(statement):
            known |= names
    return known


def _names_allowed(node: Node, allowed: set[str]) -> bool:
    """Whether `node` names only `allowed` identifiers and the thread's own built-in indices."""
    for current in walk(node):
        if current.type == "field_expression":
            if "".join(text(current).split()) not in _THREAD_FIELDS:
                return False
        elif current.type == "identifier" and not _field_or_call(current) and text(current) not in allowed:
            return False
    return True


def _field_or_call(identifier: Node) -> bool:
    """Whether `identifier` is the object of a field (`threadIdx` of `threadIdx.x`) or the name
    of a barrier or min/max call."""
    parent = identifier.parent
    return parent is not None and (parent.type == "field_expression" or
                                   (parent.type == "call_expression" and call_name(parent) in _COMBINE_CALLS))


def _reads_global(node: Node, shared: set[str]) -> bool:
    for current in walk(node):
        if current.type == "subscript_expression":
            base, _ = subscript_parts(current)
            base = unparen(base)
            if base is None or base.type != "identifier" or text(base) not in shared:
                return True
        elif current.type == "pointer_expression":
            return True
    return False
