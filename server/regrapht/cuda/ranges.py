"""What a kernel touches of each pointer parameter at one concrete launch: the access-range proofs.

Owns `access_ranges(text, kernel, launch)`: a walk of the kernel's body (and of the `__device__`
helpers it calls, with their pointer parameters bound to the caller's buffers) that records
every read and write through a pointer parameter or an `extern __shared__` array, following
pointer aliases (`const float *row = A + r * N`, `&a[i]`), casts to wider or narrower element
types (`reinterpret_cast<float4 *>(p)[k]`: bytes, then elements of the buffer), dereferences,
atomics and `__ldg`. For each buffer it gives:

- `reads` / `writes`, and `complete`: every use was followed (no pointer passed to a function
  the walk cannot see, no reassigned pointer); with `complete`, the role is proven;
- `lowest` / `highest`: bounds on every element index any thread may touch (interval arithmetic
  over the launch's thread and block indices, scalar arguments, loop bounds and the path's guards,
  `intervals.py`), None where some index is not bounded;
- `touched`: an element index that some thread provably touches (a witness: one concrete
  thread and loop iteration that satisfies every guard on the path to an access), None if none
  is found.

`highest < count` proves a buffer large enough; `touched >= count` proves it too small. The walk
itself (statements, bindings, escapes) is `range_walk.py`; the arithmetic `intervals.py`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from tree_sitter import Node

from regrapht.cuda.intervals import (
    INF,
    UNKNOWN,
    Env,
    Evaluator,
    Fixed,
    Frame,
    Interval,
    Opaque,
    Pointer,
    normal_text,
    truth,
)
from regrapht.cuda.nodes import declarator_name, find_function_declarator, node_text, unparen, walk
from regrapht.cuda.range_walk import (
    SHARED_PREFIX,
    Access,
    Ctx,
    Walker,
    device_functions,
    element_of,
    split_template_args,
    template_integer,
    template_values,
)
from regrapht.cuda.view import kernels_of

__all__ = ["BufferUse", "KernelRanges", "Launch", "access_ranges", "split_template_args", "template_integer",
           "template_values"]

MAX_ITERATION = 1 << 31  # loop iterations a witness may pick



@dataclass(frozen=True)
class Launch:
    """A concrete launch: dimensions, the scalar arguments by parameter name, the template
    arguments as the instance's name writes them, and each pointer's element (type, bytes)."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    scalars: Mapping[str, int | float]
    template_args: tuple[str, ...] = ()
    elements: Mapping[str, tuple[str, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class BufferUse:
    name: str
    element_bytes: int
    reads: bool = False
    writes: bool = False
    complete: bool = True
    reasons: tuple[str, ...] = ()  # why something is not proven
    lowest: int | None = None
    highest: int | None = None
    touched: int | None = None
    accesses: int = 0
    atomic_only: bool = False  # every access is an atomic read-modify-write (an accumulator)

    @property
    def bounded(self) -> bool:
        return self.complete and self.lowest is not None and self.highest is not None


@dataclass(frozen=True)
class KernelRanges:
    buffers: dict[str, BufferUse]  # pointer parameters by name
    shared: BufferUse | None  # every `extern __shared__` array, in bytes (element_bytes 1)


# ---------------------------------------------------------------------------------------------
# Proofs over the recorded accesses


def _narrowing(evaluator: Evaluator, conditions: tuple[tuple[Node, Env, bool], ...]) -> None:
    for node, env, holds in conditions:
        _narrow(evaluator, node, env, holds)


_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def _narrow(evaluator: Evaluator, node: Node | None, env: Env, holds: bool) -> None:
    node = unparen(node)
    if node is None:
        return
    if node.type == "unary_expression" and node_text(node.child_by_field_name("operator")) == "!":
        _narrow(evaluator, node.child_by_field_name("argument"), env, not holds)
        return
    if node.type != "binary_expression":
        return
    operator = node_text(node.child_by_field_name("operator"))
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None or right is None:
        return
    if operator in ("&&", "||"):
        if (operator == "&&") == holds:
            _narrow(evaluator, left, env, holds)
            _narrow(evaluator, right, env, holds)
        else:  # `a || b` holds (or `a && b` fails) with one side known: the other decides
            for known, other in ((left, right), (right, left)):
                if truth(evaluator.value(known, env)) is (not holds):
                    _narrow(evaluator, other, env, holds)
        return
    if operator not in _NEGATED:
        return
    if not holds:
        operator = _NEGATED[operator]
    lv, rv = evaluator.value(left, env), evaluator.value(right, env)
    bounds = {
        "<": (Interval(-INF, rv.hi - 1), Interval(lv.lo + 1, INF)),
        "<=": (Interval(-INF, rv.hi), Interval(lv.lo, INF)),
        ">": (Interval(rv.lo + 1, INF), Interval(-INF, lv.hi - 1)),
        ">=": (Interval(rv.lo, INF), Interval(-INF, lv.hi)),
        "==": (rv, lv),
    }.get(operator)
    if bounds is None:
        return
    narrowed = evaluator.narrowed.setdefault(id(env.frame), {})
    for side, bound in zip((left, right), bounds, strict=True):
        key = normal_text(side)
        narrowed[key] = narrowed.get(key, UNKNOWN).meet(bound)


def _bytes(evaluator: Evaluator, access: Access) -> Interval:
    total = Interval(0, 0)
    for node, env, scale in access.parts:
        value = evaluator.value(node, env)
        lo, hi = (value.lo * scale, value.hi * scale) if scale >= 0 else (value.hi * scale, value.lo * scale)
        total = Interval(total.lo + lo, total.hi + hi)
    return Interval(total.lo, total.hi + access.width - 1)


class _Prover:
    def __init__(self, launch: Launch, helpers: dict[str, Node]) -> None:
        self.dims = {f"blockDim.{d}": launch.block[i] for i, d in enumerate("xyz")}
        self.dims.update({f"gridDim.{d}": launch.grid[i] for i, d in enumerate("xyz")})
        self.helpers = helpers

    def bound(self, access: Access) -> Interval:
        evaluator = Evaluator(self.dims, None, self.helpers)
        _narrowing(evaluator, access.ctx.conditions)
        return _bytes(evaluator, access)

    def holds(self, access: Access, atoms: Mapping[object, int]) -> Interval | None:
        evaluator = Evaluator(self.dims, atoms, self.helpers)
        for node, env, holds in access.ctx.conditions:
            if truth(evaluator.value(node, env)) is not holds:
                return None
        value = _bytes(evaluator, access)
        return value if value.finite and value.hi - value.lo == access.width - 1 else None

    def witness(self, access: Access) -> int | None:
        """The largest byte some thread provably touches through `access`, else None."""
        if not access.ctx.witness_ok or not all(loop.witnessable for loop in access.ctx.loops):
            return None
        limits: list[tuple[object, int]] = []
        for name in ("blockIdx.z", "blockIdx.y", "blockIdx.x", "threadIdx.z", "threadIdx.y", "threadIdx.x"):
            key = ("blockDim." if name.startswith("threadIdx") else "gridDim.") + name[-1]
            limits.append((name, self.dims[key] - 1))
        limits += [(loop.id, MAX_ITERATION) for loop in access.ctx.loops]
        atoms: dict[object, int] = {atom: 0 for atom, _ in limits}
        for atom, top in limits:
            if top == 0:
                continue
            if self.holds(access, {**atoms, atom: top}) is not None:
                atoms[atom] = top
                continue
            if self.holds(access, atoms) is None:
                continue
            low, high = atoms[atom], top
            while high - low > 1:
                middle = (low + high) // 2
                if self.holds(access, {**atoms, atom: middle}) is not None:
                    low = middle
                else:
                    high = middle
            atoms[atom] = low
        value = self.holds(access, atoms)
        return int(value.hi) if value is not None else None


def access_ranges(text: str, kernel: str, launch: Launch) -> KernelRanges | None:
    """The ranges of kernel `kernel` (a template instance's name may carry its arguments) of the
    CUDA source `text` at `launch`; None when the kernel's definition is not in the text."""
    view = kernels_of(text)
    found = view.function_node(kernel)
    if found is None:
        return None
    function, template_names = found
    types, values = template_values(launch.template_args or split_template_args(kernel), template_names)
    constants = dict(view.model.constants)
    constants.update(values)
    frame = Frame(types, constants)
    env = Env(frame)
    elements: dict[str, int] = {}
    declarator = find_function_declarator(function.child_by_field_name("declarator"))
    parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
    for parameter in parameters.named_children if parameters is not None else []:
        if parameter.type not in ("parameter_declaration", "optional_parameter_declaration"):
            continue
        name_node = declarator_name(parameter.child_by_field_name("declarator"))
        if name_node is None:
            continue
        name = node_text(name_node)
        type_text = node_text(parameter.child_by_field_name("type"))
        if "*" in node_text(parameter.child_by_field_name("declarator")):
            element, size = launch.elements.get(name, (None, None)) if name in launch.elements else \
                element_of(type_text, types)
            env.names[name] = Pointer(name, (), size or 1, element or type_text)
            elements[name] = size or 1
        elif name in launch.scalars:
            env.names[name] = Fixed(Interval.point(launch.scalars[name]))
        else:
            env.names[name] = Opaque()
    for shared_name, element in _extern_shared(view.tree.root_node, function):
        resolved_element, size = element_of(element, types)
        env.names[shared_name] = Pointer(SHARED_PREFIX + shared_name, (), size or 1, resolved_element)
    helpers = device_functions(view.tree.root_node)
    walker = Walker(helpers)
    walker.function(function, Ctx(env))
    prover = _Prover(launch, helpers)
    uses = {name: _use(name, size, [a for a in walker.accesses if a.buffer == name], walker, prover, size)
            for name, size in elements.items()}
    shared_accesses = [a for a in walker.accesses if a.buffer.startswith(SHARED_PREFIX)]
    shared = _use("extern __shared__", 1, shared_accesses, walker, prover, 1,
                  incomplete=[w for b, ws in walker.incomplete.items() if b.startswith(SHARED_PREFIX) for w in ws]) \
        if any(isinstance(b, Pointer) and b.buffer.startswith(SHARED_PREFIX) for b in env.names.values()) else None
    return KernelRanges(uses, shared)


def _use(name: str, element_bytes: int, accesses: list[Access], walker: Walker, prover: _Prover, unit: int,
         incomplete: list[str] | None = None) -> BufferUse:
    reasons = list(walker.incomplete.get(name, []) if incomplete is None else incomplete)
    lowest: float = INF
    highest: float = -INF
    touched: int | None = None
    for access in accesses:
        span = prover.bound(access)
        if not span.finite:
            reasons.append(f"line {access.line}: the index of {name} is not bounded at this launch")
        lowest, highest = min(lowest, span.lo), max(highest, span.hi)
        byte = prover.witness(access)
        if byte is not None:
            element = byte // unit
            touched = element if touched is None else max(touched, element)
    bounded = bool(accesses) and lowest != -INF and highest != INF
    return BufferUse(
        name=name, element_bytes=element_bytes,
        reads=any(a.kind in ("read", "readwrite", "atomic") for a in accesses),
        writes=any(a.kind in ("write", "readwrite", "atomic") for a in accesses),
        atomic_only=bool(accesses) and all(a.kind == "atomic" for a in accesses),
        complete=not (walker.incomplete.get(name) if incomplete is None else incomplete),
        reasons=tuple(dict.fromkeys(reasons)),
        lowest=int(lowest) // unit if bounded else None,
        highest=int(highest) // unit if bounded else None,
        touched=touched, accesses=len(accesses),
    )


def _extern_shared(root: Node, function: Node) -> Iterator[tuple[str, str]]:
    """`extern __shared__ T name[]` of the file or of `function`: (name, T)."""
    for scope in (root, function):
        for node in walk(scope) if scope is function else scope.named_children:
            if node.type != "declaration":
                continue
            text = node_text(node)
            if "extern" not in text or "__shared__" not in text:
                continue
            element = node_text(node.child_by_field_name("type"))
            for declarator in node.named_children:
                if declarator.type == "array_declarator":
                    name_node = declarator_name(declarator)
                    if name_node is not None:
                        yield node_text(name_node), element
