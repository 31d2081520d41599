"""Per-item programs: what one thread computes for its row (or column, or the whole array).

`item_program(kernel)` recognises kernels where each thread owns one item (a row of a matrix, a
column, a CSR row; `thread_mapping` finds which) and runs, for it, a sequence of

- item-level statements: scalar declarations and assignments, and writes of item results
  (`out[row] = sum / n`), with no loops;
- loops `for (int j = L; j < U; j++)` over the item's elements, whose statements are only local
  declarations, accumulator updates and element writes. An accumulator is a scalar declared
  at item level and updated with an associative operator: `+=`/`-=`/`++`/`X = X + e` (sum),
  `X = fmaxf(X, e)`/`max`/`if (e > X) X = e`/`X = e > X ? e : X` (max; min alike), or
  `if (e > X) { X = e; I = j; }` (argmax with its index; argmin alike). A loop whose running
  sum is also written out per element (`acc += x[j]; y[j] = acc;`) is a scan.
  L and U must not depend on the thread beyond the item, nor on loaded data, except the CSR
  range `ptr[row]` .. `ptr[row + 1]` of a read-only pointer.

`single_program(kernel)` recognises the same statements run by one thread for the whole array
(`if (threadIdx.x == 0 && blockIdx.x == 0) { ... }`, or a kernel launched on one thread).

Near-misses are refused: another `return`, `break`, `continue`, nested loops, barriers, shared
memory, atomics, calls with effects, updates that read the accumulator (`s = s * 0.5f + x[j]`,
an online softmax), and any array both written and accessed at another index (or at item and
element level): these change meaning when the item's elements are split over threads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.idioms.access import PURE_CALLS, Access, accesses, identifiers, is_pure
from regrapht.idioms.syntax import (
    GLOBAL_X,
    KernelSyntax,
    Symbols,
    call_args,
    call_name,
    condition_of,
    depends_on,
    named_statements,
    subscript_parts,
    text,
    unparen,
    updated_target,
    walk,
)
from regrapht.idioms.threads import ItemIndex, ThreadMapping, thread_mapping

ReduceOp = Literal["sum", "max", "min", "argmax", "argmin"]
ITEM_AXES = frozenset({"x", "y", "z", "grid_xy", "block_xy"})
SingleThread = Literal["grid", "block", "none"]
ELEMENT = "@element"  # the loop variable of every item loop, in canonical index polynomials
_FMA_CALLS = frozenset({"fmaf", "fma", "__fmaf_rn", "__fma_rn"})
_MAX_CALLS = {"fmaxf": "max", "fmax": "max", "max": "max", "fminf": "min", "fmin": "min", "min": "min"}
_FORBIDDEN_CALL_PREFIXES = ("atomic", "__syncthreads", "__shfl", "__syncwarp", "printf", "__threadfence", "assert")


@dataclass(frozen=True)
class Accumulator:
    name: str
    type: str  # its declared type ("float")
    op: ReduceOp
    combine: str  # max/min: the function the original uses ("fmaxf", "max"), "" for a comparison
    index: str | None = None  # argmax/argmin: the index variable updated with the value
    index_type: str | None = None
    last: bool = False  # argmax/argmin with `>=`/`<=`: the last of equal values wins


@dataclass(frozen=True)
class Scan:
    accumulator: str
    type: str
    update: Node  # the statement `acc += e` (replaced by the rewrite)
    contribution: Node  # e


@dataclass(frozen=True)
class ItemLoop:
    node: Node  # the for statement
    var: str
    var_type: str
    lower: Node
    upper: Node
    body: tuple[Node, ...]
    accumulators: tuple[Accumulator, ...]
    scan: Scan | None
    writes: frozenset[str]  # arrays written per element
    reads: tuple[Access, ...]  # loads in the loop (index in terms of ELEMENT)
    unit_stride: frozenset[str]  # arrays read or written at unit stride in the element index
    inclusive_upper: bool = False  # `j <= upper` instead of `j < upper`

    @property
    def end(self) -> str:
        """The exclusive end of the element range, as code."""
        upper = " ".join(text(self.upper).split())
        return f"({upper}) + 1" if self.inclusive_upper else upper


@dataclass(frozen=True)
class ItemStatement:
    node: Node
    writes: frozenset[str]  # arrays written at item level (by one thread of a cooperative group)


Step = ItemLoop | ItemStatement


@dataclass(frozen=True)
class CsrRange:
    pointer: str  # `row_ptr` of `row_ptr[row] .. row_ptr[row + 1]`


@dataclass(frozen=True)
class ItemProgram:
    kernel: KernelSyntax
    mapping: ThreadMapping | None  # None: one thread does everything (`single_program`)
    item: ItemIndex | None
    steps: tuple[Step, ...]
    kept_prelude: tuple[Node, ...]  # declarations before the guard that the work still needs
    csr: CsrRange | None
    locals: frozenset[str] = field(default_factory=frozenset)  # names the work declares
    single: SingleThread | None = None  # `single_program`: which thread runs it (single_thread_work)

    @property
    def loops(self) -> tuple[ItemLoop, ...]:
        return tuple(s for s in self.steps if isinstance(s, ItemLoop))

    @property
    def accumulators(self) -> tuple[Accumulator, ...]:
        return tuple(a for loop in self.loops for a in loop.accumulators)

    @property
    def written(self) -> frozenset[str]:
        out: set[str] = set()
        for step in self.steps:
            out |= step.writes
        return frozenset(out)


class _Refused(Exception):
    """Internal: the kernel is not an item program (raised and caught inside this module only)."""


def item_program(kernel: KernelSyntax) -> ItemProgram | None:
    """The per-item program of a kernel with one thread per item (see ITEM_AXES), or None."""
    if not _plain_kernel(kernel):
        return None
    mapping = thread_mapping(kernel)
    # One thread per item along x, y or z, or a linear id over a 2-D grid of 1-D blocks or a
    # 1-D grid of 2-D blocks (the appliers check that the launch runs one thread per item).
    if mapping is None or len(mapping.indices) != 1 or mapping.indices[0].axis not in ITEM_AXES:
        return None
    item = mapping.indices[0]
    kept = _kept_prelude(mapping)
    if kept is None:
        return None
    try:
        return _Builder(kernel, mapping.symbols.copy(), item).build(mapping.work, mapping, kept)
    except _Refused:
        return None


def single_program(kernel: KernelSyntax) -> ItemProgram | None:
    """The program of a kernel whose work is done by one thread (see `single_thread_work`); its
    `single` field says which launches keep that true (the applier checks the launch)."""
    found = single_thread_work(kernel)
    if found is None:
        return None
    work, single = found
    if not all(_plain_kernel(statement) for statement in work):
        return None
    try:
        program = _Builder(kernel, Symbols(kernel.constants), None).build(work, None, ())
    except _Refused:
        return None
    return ItemProgram(program.kernel, None, None, program.steps, (), program.csr, program.locals, single)


def scan_loop(kernel: KernelSyntax, loop: Node, accumulator: str, accumulator_type: str) -> ItemLoop | None:
    """`loop` read as one thread's loop whose running sum `accumulator` (declared before it) is
    written per element; None unless it is such a scan loop by the rules of `item_program`. The
    loop's bounds are taken as given (the caller has checked what range they cover)."""
    builder = _Builder(kernel, Symbols(kernel.constants), None)
    builder.scalars[accumulator] = accumulator_type
    builder.checked_range = True
    try:
        found = builder._loop(loop)
    except _Refused:
        return None
    return found if found.scan is not None and found.scan.accumulator == accumulator else None


def single_thread_work(kernel: KernelSyntax) -> tuple[tuple[Node, ...], SingleThread] | None:
    """The statements a kernel runs on one thread, and which one:

    - "grid": one thread of the whole grid: `if (threadIdx.x == 0 && blockIdx.x == 0) { WORK }`,
      `if (gid == 0)`, `if (tid != 0 || blockIdx.x != 0) return; WORK`, `if (gid > 0) return;`;
    - "block": thread 0 of every block (`if (threadIdx.x == 0)`, `if (tid) return;`): one thread
      only on a one-block launch;
    - "none": unguarded, one thread only on a `<<<1, 1>>>` launch.

    Declarations of thread indices (`int tid = threadIdx.x;`) may come first; the work itself
    must not use the thread's position (it would be the same for every thread)."""
    statements = _flatten(kernel.statements())
    symbols = Symbols(kernel.constants)
    thread_names: set[str] = set()
    position = 0
    while position < len(statements) and statements[position].type == "declaration" and \
            _thread_declaration(statements[position], symbols, thread_names):
        position += 1
    head, rest = statements[:position], statements[position:]
    single: SingleThread = "none"
    if rest and rest[0].type == "if_statement" and rest[0].child_by_field_name("alternative") is None:
        consequence = named_statements(rest[0].child_by_field_name("consequence"))
        returns = len(consequence) == 1 and consequence[0].type == "return_statement" and \
            not consequence[0].named_children
        if returns:
            guard = _thread_test(condition_of(rest[0]), symbols, "||", "!=")
            if guard is not None:
                single, rest = guard, rest[1:]
        elif all(_is_barrier(s) for s in rest[1:]):  # barriers after the work wait for it: no effect
            guard = _thread_test(condition_of(rest[0]), symbols, "&&", "==")
            if guard is not None:
                single, rest = guard, _flatten(consequence)
    work = [s for s in head if not _declared_names(s) <= thread_names] + list(rest)
    for statement in work:
        for node in walk(statement):
            if node.type == "identifier" and (text(node) in thread_names or _thread_dependent(node)):
                return None
    return tuple(work), single


def _thread_declaration(declaration: Node, symbols: Symbols, thread_names: set[str]) -> bool:
    """Record `int tid = threadIdx.x;` and friends (pure scalar declarations); False for others."""
    if any(text(c) in ("__shared__", "static", "extern") for c in declaration.children):
        return False
    for declarator in declaration.children_by_field_name("declarator"):
        if declarator.type != "init_declarator":
            return False
        target, value = declarator.child_by_field_name("declarator"), declarator.child_by_field_name("value")
        if target is None or target.type != "identifier" or not is_pure(value):
            return False
        poly = symbols.poly(value)
        if not any(a.startswith(("threadIdx", "blockIdx")) for a in poly.atoms()) or poly.memory_dependent:
            return False  # a plain declaration: part of the work
        symbols.define(text(target), value)
        thread_names.add(text(target))
    return True


def _declared_names(declaration: Node) -> set[str]:
    return {text(d.child_by_field_name("declarator") or d) for d in declaration.children_by_field_name("declarator")}


def _thread_test(condition: Node | None, symbols: Symbols, joiner: str, relation: str) -> SingleThread | None:
    """Which thread `threadIdx.x == 0 && blockIdx.x == 0` (relation "==", terms joined by &&)
    or its negation `tid != 0 || blockIdx.x > 0` (relation "!=", joined by ||) singles out."""
    atoms: set[Poly] = set()

    def terms(node: Node | None) -> bool:
        node = unparen(node)
        if node is None:
            return False
        if node.type == "binary_expression" and text(node.child_by_field_name("operator")) == joiner:
            return terms(node.child_by_field_name("left")) and terms(node.child_by_field_name("right"))
        if node.type == "unary_expression" and text(node.child_by_field_name("operator")) == "!" and relation == "==":
            atoms.add(symbols.poly(node.child_by_field_name("argument")))
            return True
        if relation == "!=" and node.type in ("identifier", "field_expression"):
            atoms.add(symbols.poly(node))  # `if (tid) return;`
            return True
        if node.type != "binary_expression":
            return False
        operator = text(node.child_by_field_name("operator"))
        left, right = symbols.poly(node.child_by_field_name("left")), symbols.poly(node.child_by_field_name("right"))
        # Thread positions are never negative: `x > 0`, `x >= 1` and `x != 0` all mean x is not 0.
        accepted = {"==": {"==": 0, "<=": 0, "<": 1}, "!=": {"!=": 0, ">": 0, ">=": 1}}[relation]
        flipped = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(operator, operator)
        if operator in accepted and right.constant == accepted[operator]:
            atoms.add(left)
        elif flipped in accepted and left.constant == accepted[flipped]:
            atoms.add(right)
        else:
            return False
        return True

    if not terms(condition):
        return None
    thread, block = Poly.atom("threadIdx.x"), Poly.atom("blockIdx.x")
    if atoms in ({thread, block}, {GLOBAL_X}, {GLOBAL_X, thread}, {GLOBAL_X, block}):
        return "grid"
    if atoms == {thread}:
        return "block"
    return None


def _is_barrier(statement: Node) -> bool:
    call = unparen(statement.named_children[0]) if statement.type == "expression_statement" and \
        statement.named_children else None
    return call is not None and call.type == "call_expression" and call_name(call) == "__syncthreads" and \
        not call_args(call)


def _plain_kernel(kernel: KernelSyntax | Node) -> bool:
    """No barriers, shared memory, atomics, shuffles, inline asm, gotos or labels anywhere."""
    for node in walk(kernel.body if isinstance(kernel, KernelSyntax) else kernel):
        if node.type in ("goto_statement", "labeled_statement", "gnu_asm_expression", "asm_statement",
                         "switch_statement", "lambda_expression"):
            return False
        if node.type == "call_expression" and call_name(node).startswith(_FORBIDDEN_CALL_PREFIXES):
            return False
        if node.type == "declaration" and any(text(c) in ("__shared__", "static") for c in node.children):
            return False
    return True


def _kept_prelude(mapping: ThreadMapping) -> tuple[Node, ...] | None:
    """Prelude declarations the work needs; None if the work uses a thread-dependent one other
    than the item index (the rewrite re-derives only the item index)."""
    names_used: set[str] = set()
    for statement in mapping.work:
        names_used |= identifiers(statement)
    item_names = {i.name for i in mapping.indices}
    kept = []
    for declaration in mapping.prelude:
        declared = {text(d.child_by_field_name("declarator") or d) for d in declaration.children_by_field_name("declarator")}
        if not declared & names_used or declared <= item_names:
            continue
        if any(_thread_dependent(n) for n in walk(declaration)):
            return None
        kept.append(declaration)
    return tuple(kept)


def _thread_dependent(node: Node) -> bool:
    return node.type == "identifier" and text(node) in ("threadIdx", "blockIdx", "blockDim", "gridDim")


class _Builder:
    def __init__(self, kernel: KernelSyntax, symbols: Symbols, item: ItemIndex | None) -> None:
        self.kernel = kernel
        self.symbols = symbols
        self.item = item
        self.scalars: dict[str, str] = {}  # item-level scalars -> type
        self.assigned: set[str] = set()  # item-level scalars assigned after their declaration
        self.locals: set[str] = set()
        self.csr: CsrRange | None = None
        self.dense = False
        self.checked_range = False  # the caller has checked what the loops' ranges cover
        # every access to a written array: (array, canonical index, level)
        self.touches: list[tuple[str, Poly | None, str]] = []
        self.loaded: set[str] = set()  # arrays read (or updated in place) anywhere

    # -------------------------------------------------------------------------------- driver
    def build(self, work: tuple[Node, ...], mapping: ThreadMapping | None, kept: tuple[Node, ...]) -> ItemProgram:
        steps: list[Step] = []
        statements = _flatten(work)
        for position, statement in enumerate(statements):
            if statement.type == "for_statement":
                steps.append(self._loop(statement))
            elif statement.type == "while_statement":
                steps.append(self._while_loop(statement, statements[position + 1:]))
            else:
                steps.append(self._statement(statement))
        if not any(isinstance(s, ItemLoop) for s in steps):
            raise _Refused
        self._check_ownership(steps)
        return ItemProgram(self.kernel, mapping, self.item, tuple(steps), kept, self.csr, frozenset(self.locals))

    def _check_ownership(self, steps: list[Step]) -> None:
        """Every array written is touched at exactly one index, all at element or all at item
        level; and nothing is written twice at item level through different statements."""
        written = {name for s in steps for name in s.writes}
        for name in written:
            seen = {(index, level) for array, index, level in self.touches if array == name}
            if (len(seen) != 1 or next(iter(seen))[0] is None) and not self._disjoint_item_stores(name, seen):
                raise _Refused
        for name, param in self.kernel.pointers.items():
            if name in written and param.is_const:
                raise _Refused

    def _disjoint_item_stores(self, name: str, seen: set[tuple[Poly | None, str]]) -> bool:
        """Whether an array stored at several indices is only stored (never read), at item
        level, at `s * item + o + d` for one constant stride s and constant offsets d spanning
        less than |s|: no two items store the same element (`C[row * 8 + 0]` .. `C[row * 8 + 7]`
        of a jammed SpMM row), so any grouping of the items' work stores the same."""
        indices = [index for index, level in seen if level == "item" and index is not None]
        if self.item is None or name in self.loaded or len(indices) != len(seen):
            return False
        first = indices[0]
        stride = first.coefficient(self.item.name)
        offsets = [(index - first).constant for index in indices]
        if stride.value is None or stride.kind not in ("unit", "constant") or \
                any(offset is None for offset in offsets) or \
                depends_on(first.without(self.item.name), self.item.name):
            return False
        known = [offset for offset in offsets if offset is not None]
        return max(known) - min(known) < abs(stride.value)

    # -------------------------------------------------------------------------------- item level
    def _statement(self, statement: Node) -> ItemStatement:
        for node in walk(statement):
            if node.type in ("for_statement", "while_statement", "do_statement", "return_statement",
                             "break_statement", "continue_statement"):
                raise _Refused
        if statement.type == "declaration":
            self._declare(statement, self.scalars, item_level=True)
            return ItemStatement(statement, frozenset())
        writes = self._effects(statement, level="item", allowed_scalars=set(self.scalars) | self.locals)
        return ItemStatement(statement, frozenset(writes))

    def _declare(self, declaration: Node, scope: dict[str, str], *, item_level: bool) -> None:
        type_text = " ".join(text(declaration.child_by_field_name("type")).split())
        if any(text(c) in ("__shared__", "static", "extern") for c in declaration.children):
            raise _Refused
        for declarator in declaration.children_by_field_name("declarator"):
            if declarator.type == "init_declarator":
                target, value = declarator.child_by_field_name("declarator"), declarator.child_by_field_name("value")
            else:
                target, value = declarator, None
            if target is not None and target.type == "pointer_declarator":
                name_node = target.child_by_field_name("declarator")
                if name_node is None or name_node.type != "identifier" or \
                        not self.symbols.define_alias(text(name_node), value, self.kernel.pointers):
                    raise _Refused
                self.locals.add(text(name_node))
                continue
            if target is None or target.type != "identifier" or not is_pure(value):
                raise _Refused
            name = text(target)
            if value is not None:
                self._record_reads(value, "item" if item_level else "element")
            self.symbols.define(name, value)
            scope[name] = type_text
            self.locals.add(name)

    def _effects(self, statement: Node, *, level: str, allowed_scalars: set[str]) -> set[str]:
        """Check an item-level statement (assignments to known scalars, writes through
        pointers, `if` of those) and return the arrays it writes."""
        writes: set[str] = set()
        for node in walk(statement):
            if node.type == "call_expression" and call_name(node).split("<")[0] not in PURE_CALLS:
                raise _Refused
            if node.type in ("assignment_expression", "update_expression"):
                target = updated_target(node)
                if target is None:
                    raise _Refused
                if target.type == "identifier":
                    name = text(target)
                    if name not in allowed_scalars or (self.item is not None and name == self.item.name):
                        raise _Refused
                    self.assigned.add(name)
                    self.symbols.forget(name)
                    continue
                if target.type == "pointer_expression" and text(target.child_by_field_name("operator")) == "*":
                    base = unparen(target.child_by_field_name("argument"))
                    if base is not None and base.type == "binary_expression":
                        base = unparen(base.child_by_field_name("left"))
                elif target.type == "subscript_expression":
                    base, _ = subscript_parts(target)
                else:
                    raise _Refused
                array = self._array_of(base)
                if array is None:
                    raise _Refused
                writes.add(array)
        if statement.type not in ("expression_statement", "if_statement", "compound_statement"):
            raise _Refused
        for access in accesses(statement, self.symbols):
            if access.kind == "address" or not access.array:
                raise _Refused
            index = access.index
            if index is not None and level == "item" and self.item is not None and \
                    access.kind != "read" and not depends_on(index, self.item.name):
                raise _Refused  # every item would write the same element: a race in the original
            if access.kind != "write":
                self.loaded.add(access.array)
            self.touches.append((access.array, index, level))
        return writes

    def _array_of(self, base: Node | None) -> str | None:
        base = unparen(base)
        if base is None or base.type != "identifier":
            return None
        name = text(base)
        if name in self.symbols.aliases:
            return self.symbols.aliases[name][0]
        return name if name in self.kernel.pointers else None

    def _record_reads(self, node: Node, level: str) -> None:
        for access in accesses(node, self.symbols):
            if access.kind != "read" or not access.array:
                raise _Refused
            self.loaded.add(access.array)
            self.touches.append((access.array, access.index, level))

    # -------------------------------------------------------------------------------- loops
    def _loop(self, loop: Node) -> ItemLoop:
        var, var_type, lower = self._loop_init(loop.child_by_field_name("initializer"))
        upper, inclusive = self._loop_bound(loop.child_by_field_name("condition"), var)
        if not _unit_step(unparen(loop.child_by_field_name("update")), var):
            raise _Refused
        return self._loop_parts(loop, var, var_type, lower, upper,
                                _flatten(named_statements(loop.child_by_field_name("body"))), inclusive)

    def _while_loop(self, loop: Node, rest: list[Node]) -> ItemLoop:
        """`T j = L; ... while (j < U) { BODY; ++j; }` with j declared at item level, changed
        only by the final increment and not used after the loop: the loop `for (j = L; ...)`."""
        condition = unparen(condition_of(loop))
        if condition is None or condition.type != "binary_expression":
            raise _Refused
        var = text(unparen(condition.child_by_field_name("left")))
        body = _flatten(named_statements(loop.child_by_field_name("body")))
        if not body or var not in self.scalars or var in self.assigned or var not in self.symbols.definitions:
            raise _Refused
        last = body[-1]
        step = unparen(last.named_children[0]) if last.type == "expression_statement" and last.named_children else None
        if not _unit_step(step, var) or any(var in identifiers(s) for s in rest):
            raise _Refused
        for statement in body[:-1]:
            for node in walk(statement):
                if node.type in ("assignment_expression", "update_expression") and \
                        text(updated_target(node)) == var:
                    raise _Refused
        upper, inclusive = self._loop_bound(condition, var)
        return self._loop_parts(loop, var, self.scalars[var], self.symbols.definitions[var], upper, body[:-1],
                                inclusive)

    def _loop_parts(self, loop: Node, var: str, var_type: str, lower: Node, upper: Node, body: list[Node],
                    inclusive: bool = False) -> ItemLoop:
        self._check_range(lower, upper, inclusive)
        outer = dict(self.scalars)
        saved_symbols = self.symbols.copy()
        self.symbols.forget(var)
        self.symbols.env[var] = Poly.atom(ELEMENT)
        loop_locals: dict[str, str] = {}
        updates: dict[str, list[tuple[Node, ReduceOp, str, Node | None]]] = {}
        pair_updates: list[Accumulator] = []
        writes: set[str] = set()
        reads: list[Access] = []
        plain: list[Node] = []  # statements other than accumulator updates (element writes, locals)
        for statement in body:
            if statement.type == "declaration":
                self._declare(statement, loop_locals, item_level=False)
                plain.append(statement)
                continue
            if statement.type == "if_statement":
                pair = self._compare_update(statement, var, outer)
                if pair is None:
                    raise _Refused
                if pair.index is None:
                    updates.setdefault(pair.name, []).append((statement, pair.op, "", None))
                else:
                    pair_updates.append(pair)
                continue
            if statement.type != "expression_statement":
                raise _Refused
            expression = unparen(statement.named_children[0]) if statement.named_children else None
            if expression is None:
                raise _Refused
            update = self._accumulation(expression, outer)
            if update is not None:
                name, op, combine, contribution = update
                updates.setdefault(name, []).append((statement, op, combine, contribution))
                continue
            target = unparen(expression.child_by_field_name("left") or expression.child_by_field_name("argument"))
            if target is not None and target.type == "identifier" and text(target) in loop_locals:
                if not is_pure(expression.child_by_field_name("right")):
                    raise _Refused
                self.symbols.forget(text(target))
                plain.append(statement)
                continue
            written = _written_base(target)
            if written is None or expression.type != "assignment_expression" or \
                    not is_pure(expression.child_by_field_name("right")):
                raise _Refused
            array = self._array_of(written)
            if array is None:
                raise _Refused
            writes.add(array)
            plain.append(statement)
        accumulators, scan = self._accumulators(updates, pair_updates, outer, plain)
        for statement in body:
            for access in accesses(statement, self.symbols):
                if access.kind == "address" or not access.array:
                    raise _Refused
                if access.index is None or not depends_on(access.index, ELEMENT) and access.array in writes:
                    raise _Refused
                self.touches.append((access.array, access.index, "element"))
                if access.kind != "write":
                    self.loaded.add(access.array)
                if access.kind == "read":
                    reads.append(access)
        unit = frozenset(a.array for a in accesses(loop, self.symbols)
                         if a.index is not None and a.index.coefficient(ELEMENT).kind == "unit")
        self.symbols = saved_symbols
        for name in loop_locals:
            self.symbols.forget(name)
        return ItemLoop(loop, var, var_type, lower, upper, tuple(body), accumulators, scan, frozenset(writes),
                        tuple(reads), unit, inclusive)

    def _loop_init(self, init: Node | None) -> tuple[str, str, Node]:
        if init is None or init.type != "declaration":
            raise _Refused
        declarators = init.children_by_field_name("declarator")
        if len(declarators) != 1 or declarators[0].type != "init_declarator":
            raise _Refused
        target = declarators[0].child_by_field_name("declarator")
        value = declarators[0].child_by_field_name("value")
        if target is None or target.type != "identifier" or value is None:
            raise _Refused
        return text(target), " ".join(text(init.child_by_field_name("type")).split()), value

    def _loop_bound(self, condition: Node | None, var: str) -> tuple[Node, bool]:
        """The bound of `var < U` (False) or `var <= U` (True). `var != U` counts as `var < U`:
        with a unit step from below U it stops at U, and from above U the original never ends."""
        condition = unparen(condition)
        if condition is None or condition.type != "binary_expression" or \
                text(condition.child_by_field_name("operator")) not in ("<", "<=", "!=") or \
                text(unparen(condition.child_by_field_name("left"))) != var:
            raise _Refused
        right = condition.child_by_field_name("right")
        if right is None:
            raise _Refused
        return right, text(condition.child_by_field_name("operator")) == "<="

    def _check_range(self, lower: Node, upper: Node, inclusive: bool = False) -> None:
        """Bounds may use the item index and scalars, not the thread beyond it, not loaded
        data (except the CSR row range), not accumulators."""
        if self.checked_range:
            return
        low, high = self.symbols.poly(lower), self.symbols.poly(upper)
        for poly in (low, high):
            if poly.thread_dependent or any(depends_on(poly, name) for name in self.assigned):
                raise _Refused
        if not (low.memory_dependent or high.memory_dependent):
            self.dense = True
            if self.csr is not None:
                raise _Refused
            return
        csr_low, csr_high = self._csr_read(lower), self._csr_read(upper)
        if inclusive or csr_low is None or csr_high is None or csr_low[0] != csr_high[0] or self.item is None:
            raise _Refused
        pointer, low_index = csr_low
        high_index = csr_high[1]
        if low_index != Poly.atom(self.item.name) or high_index != Poly.atom(self.item.name) + Poly.const(1):
            raise _Refused
        param = self.kernel.param(pointer)
        if param is None or not param.is_pointer or self.dense or (self.csr and self.csr.pointer != pointer):
            raise _Refused
        self.csr = CsrRange(pointer)

    def _csr_read(self, given: Node) -> tuple[str, Poly] | None:
        """(P, index) when `given` is `P[index]` (directly or through one local definition)."""
        node = unparen(given)
        if node is not None and node.type == "identifier" and text(node) in self.symbols.definitions \
                and text(node) not in self.assigned:
            node = unparen(self.symbols.definitions[text(node)])
        if node is None or node.type != "subscript_expression":
            return None
        base, indices = subscript_parts(node)
        base = unparen(base)
        if base is None or base.type != "identifier" or len(indices) != 1:
            return None
        return text(base), self.symbols.poly(indices[0])

    def _accumulation(self, expression: Node, outer: dict[str, str]) -> tuple[str, ReduceOp, str, Node | None] | None:
        """(accumulator, op, combine function, contribution) of `X += e` and friends, when X
        is an item-level scalar; None for anything else."""
        if expression.type == "update_expression":
            target = text(expression.child_by_field_name("argument"))
            if target in outer and text(expression.child_by_field_name("operator")) == "++":
                return target, "sum", "", None
            return None
        if expression.type != "assignment_expression":
            return None
        left = unparen(expression.child_by_field_name("left"))
        if left is None or left.type != "identifier" or text(left) not in outer:
            return None
        name = text(left)
        operator = text(expression.child_by_field_name("operator"))
        right = unparen(expression.child_by_field_name("right"))
        if right is None:
            return None
        if operator in ("+=", "-="):
            return name, "sum", "", right
        if operator != "=":
            return None
        if right.type == "binary_expression" and text(right.child_by_field_name("operator")) == "+":
            a, b = unparen(right.child_by_field_name("left")), unparen(right.child_by_field_name("right"))
            if a is not None and a.type == "identifier" and text(a) == name:
                return name, "sum", "", b
            if b is not None and b.type == "identifier" and text(b) == name:
                return name, "sum", "", a
        if right.type == "call_expression" and call_name(right) in _FMA_CALLS and len(call_args(right)) == 3:
            # `X = fmaf(a, b, X)`: a sum of a * b (checked here: the update has no contribution node)
            a, b, c = (unparen(x) for x in call_args(right))
            if c is not None and c.type == "identifier" and text(c) == name and \
                    not (identifiers(a) | identifiers(b)) & set(outer) and is_pure(a) and is_pure(b):
                for factor in (a, b):
                    if factor is not None:
                        self._record_reads(factor, "element")
                return name, "sum", "", None
        if right.type == "call_expression" and call_name(right) in _MAX_CALLS and len(call_args(right)) == 2:
            a, b = (unparen(x) for x in call_args(right))
            op: ReduceOp = "max" if _MAX_CALLS[call_name(right)] == "max" else "min"
            if a is not None and text(a) == name:
                return name, op, call_name(right), b
            if b is not None and text(b) == name:
                return name, op, call_name(right), a
        if right.type == "conditional_expression":
            found = _ternary_extreme(right, name)
            if found is not None:
                return name, found[0], "", found[1]
        return None

    def _compare_update(self, statement: Node, var: str, outer: dict[str, str]) -> Accumulator | None:
        """`if (e > X) X = e;` (max), `if (e < X) ...` (min), and the argmax/argmin form
        `if (e > X) { X = e; I = j; }` where I is an item-level integer scalar."""
        if statement.child_by_field_name("alternative") is not None:
            return None
        condition = condition_of(statement)
        if condition is None or condition.type != "binary_expression":
            return None
        operator = text(condition.child_by_field_name("operator"))
        left, right = unparen(condition.child_by_field_name("left")), unparen(condition.child_by_field_name("right"))
        if left is None or right is None:
            return None
        if right.type == "identifier" and text(right) in outer:
            name, value = text(right), left
            flipped = operator
        elif left.type == "identifier" and text(left) in outer:
            name, value = text(left), right
            flipped = {">": "<", "<": ">", ">=": "<=", "<=": ">="}.get(operator, "")
        else:
            return None
        if flipped not in (">", ">=", "<", "<="):
            return None
        body = named_statements(statement.child_by_field_name("consequence"))
        assigned: dict[str, Node | None] = {}
        for item in body:
            expression = unparen(item.named_children[0]) if item.type == "expression_statement" and \
                item.named_children else None
            if expression is None or expression.type != "assignment_expression" or \
                    text(expression.child_by_field_name("operator")) != "=":
                return None
            target = unparen(expression.child_by_field_name("left"))
            if target is None or target.type != "identifier" or text(target) in assigned:
                return None
            assigned[text(target)] = expression.child_by_field_name("right")
        if name not in assigned or " ".join(text(assigned[name]).split()) != " ".join(text(value).split()):
            return None
        if not is_pure(value) or name in identifiers(value):
            return None
        maximum = flipped in (">", ">=")
        others = [n for n in assigned if n != name]
        if not others:
            if flipped in (">=", "<="):
                return None  # same as the strict form for values, but keep the shapes few
            return Accumulator(name, outer[name], "max" if maximum else "min", "")
        if len(others) != 1 or others[0] not in outer or text(unparen(assigned[others[0]])) != var:
            return None
        index = others[0]
        return Accumulator(name, outer[name], "argmax" if maximum else "argmin", "", index, outer[index],
                           last=flipped in (">=", "<="))

    def _accumulators(self, updates: dict[str, list[tuple[Node, ReduceOp, str, Node | None]]],
                      pairs: list[Accumulator], outer: dict[str, str],
                      plain: list[Node]) -> tuple[tuple[Accumulator, ...], Scan | None]:
        names = set(updates) | {p.name for p in pairs} | {p.index for p in pairs if p.index}
        if len(names) != len(updates) + 2 * len(pairs):
            raise _Refused  # one variable updated in two ways
        found: list[Accumulator] = list(pairs)
        scan: Scan | None = None
        for name, forms in updates.items():
            ops = {op for _, op, _, _ in forms}
            combines = {c for _, _, c, _ in forms}
            if len(ops) != 1 or len(combines) != 1:
                raise _Refused
            op = ops.pop()
            for _statement, _, _, contribution in forms:
                if contribution is not None and identifiers(contribution) & names:
                    raise _Refused  # a non-associative update (reads an accumulator)
                if contribution is not None and not is_pure(contribution):
                    raise _Refused
                if contribution is not None:
                    self._record_reads(contribution, "element")
            used_elsewhere = any(name in identifiers(s) for s in plain)
            if used_elsewhere:
                if op != "sum" or len(forms) != 1 or len(updates) != 1 or pairs or forms[0][3] is None:
                    raise _Refused
                statement, _, _, contribution = forms[0]
                expression = unparen(statement.named_children[0])
                if expression is None or text(expression.child_by_field_name("operator")) not in ("+=", "="):
                    raise _Refused
                if any(name in identifiers(s) for s in plain if s.type == "declaration"):
                    raise _Refused
                assert contribution is not None
                scan = Scan(name, outer[name], statement, contribution)
                continue
            found.append(Accumulator(name, outer[name], op, combines.pop()))
        for accumulator in found:
            self.assigned.add(accumulator.name)
            if accumulator.index:
                self.assigned.add(accumulator.index)
        if scan is not None:
            self.assigned.add(scan.accumulator)
        return tuple(found), scan


def _ternary_extreme(node: Node, name: str) -> tuple[ReduceOp, Node] | None:
    """`X = e > X ? e : X` (max) and its spellings."""
    condition = unparen(node.child_by_field_name("condition"))
    consequence = unparen(node.child_by_field_name("consequence"))
    alternative = unparen(node.child_by_field_name("alternative"))
    if condition is None or consequence is None or alternative is None or condition.type != "binary_expression":
        return None
    operator = text(condition.child_by_field_name("operator"))
    a, b = unparen(condition.child_by_field_name("left")), unparen(condition.child_by_field_name("right"))
    if a is None or b is None:
        return None
    if text(b) == name:
        value, operator = a, operator
    elif text(a) == name:
        value, operator = b, {">": "<", "<": ">", ">=": "<=", "<=": ">="}.get(operator, "")
    else:
        return None
    if operator not in (">", "<", ">=", "<="):
        return None
    picks_value = text(consequence) == text(value) and text(alternative) == name
    picks_name = text(consequence) == name and text(alternative) == text(value)
    if not (picks_value or picks_name):
        return None
    # (value > X) ? value : X is the max; (value > X) ? X : value is the min.
    greater = operator in (">", ">=")
    return ("max" if greater == picks_value else "min"), value


def _written_base(target: Node | None) -> Node | None:
    """The pointer of an element store `p[i] = ...` or `*(p + i) = ...` (or `*p = ...`)."""
    if target is not None and target.type == "subscript_expression":
        return subscript_parts(target)[0]
    if target is not None and target.type == "pointer_expression" and text(target.child_by_field_name("operator")) == "*":
        base = unparen(target.child_by_field_name("argument"))
        while base is not None and base.type == "binary_expression" and text(base.child_by_field_name("operator")) == "+":
            base = unparen(base.child_by_field_name("left"))
        return base
    return None


def _unit_step(update: Node | None, var: str) -> bool:
    if update is None:
        return False
    if update.type == "update_expression":
        return text(update.child_by_field_name("argument")) == var and text(update.child_by_field_name("operator")) == "++"
    if update.type == "assignment_expression" and text(update.child_by_field_name("left")) == var:
        operator = text(update.child_by_field_name("operator"))
        right = unparen(update.child_by_field_name("right"))
        if operator == "+=":
            return text(right) == "1"
        if operator == "=" and right is not None and right.type == "binary_expression":
            return {text(right.child_by_field_name("left")), text(right.child_by_field_name("right"))} == {var, "1"} \
                and text(right.child_by_field_name("operator")) == "+"
    return False


def _flatten(statements: tuple[Node, ...] | list[Node]) -> list[Node]:
    """The statements without comments, empty statements and `#pragma` lines (`#pragma unroll`
    is a hint about the loop the rewrite replaces; it never changes what is computed)."""
    return [s for s in statements if s.type not in ("comment", ";") and text(s) != ";" and not _pragma(s)]


def _pragma(statement: Node) -> bool:
    return statement.type == "preproc_call" and \
        text(statement.child_by_field_name("directive")).strip() == "#pragma"
