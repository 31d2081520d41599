"""The CUDA source model: what `parse_source` extracts from a .cu file, as plain frozen data.

Everything here is immutable and carries `regrapht.text.Span`s (0-based line, code-point
character). Facts found inside a function (loops, memory accesses, atomics, ...) hang off that
`Function`; `SourceModel` offers flattened views and look-ups (kernel at a position, launch
sites of a kernel). Thread-index analysis results are `Coefficient`s: how an index expression
moves when `threadIdx.x` grows by one.

Moving facts (`move_function`, `shift_rows`): the builder extracts each function with rows
relative to its first line and places it with `move_function`, which shifts only the header
(name, spans) at once; the fact tuples (`parameters`, `loops`, `accesses`, ...) are shifted on
first read. An edit above a function therefore costs O(1) for it, not O(facts).
`SourceModel.placements` keeps the unmoved facts and a memo per function so that consumers
(the rules engine) can cache derived results by function text and only translate them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from regrapht.text import Position, Span, SpanIndex

FunctionKind = Literal["global", "device", "host"]
MemorySpace = Literal["global", "shared", "local", "unknown"]
AccessKind = Literal["read", "write", "readwrite", "address"]  # "address": &a[i] (atomics, pointers)
CoefficientKind = Literal["none", "unit", "constant", "runtime", "nonaffine"]
LoopKind = Literal["for", "while", "do"]


@dataclass(frozen=True)
class Expr:
    """A source expression: its exact text and where it is."""

    text: str
    span: Span


@dataclass(frozen=True)
class Coefficient:
    """How an index changes per +1 of a thread index (usually threadIdx.x).

    kind: "none" (independent of it), "unit" (+-1: consecutive threads, consecutive elements),
    "constant" (a literal stride other than +-1, `value` holds it), "runtime" (a stride only
    known at run time, e.g. `N`; `text` spells it), "nonaffine" (it depends on the thread
    index through `%`, `/`, a load, ...).
    """

    kind: CoefficientKind
    value: int | None = None
    text: str = ""

    @property
    def depends(self) -> bool:
        return self.kind != "none"


NO_COEFFICIENT = Coefficient("none", 0, "0")


@dataclass(frozen=True)
class Parameter:
    name: str
    type_text: str  # the declaration without the name, e.g. "const float *__restrict__"
    base_type: str  # "float", "T", "unsigned int"
    is_pointer: bool
    is_const: bool  # the pointee (or, for a value, the value) is const
    is_restrict: bool
    span: Span  # the whole declaration
    name_span: Span | None
    star_end: Position | None  # just after the (last) `*`, where `__restrict__` would go


@dataclass(frozen=True)
class Loop:
    kind: LoopKind
    span: Span
    header_span: Span  # `for (...)` / `while (...)`; for `do`, the `do` keyword
    variable: str | None  # the induction variable, when one is recognisable
    init: str
    condition: str
    step: str
    depth: int  # 1 for an outermost loop of its function
    function: str
    unrolled: bool  # preceded by `#pragma unroll`
    trip_count: int | None  # when `for (i = 0; i < CONST; i++)`-shaped
    parent: int | None  # index of the enclosing loop in Function.loops


@dataclass(frozen=True)
class MemoryAccess:
    """`array[index]...` in device code."""

    array: str
    space: MemorySpace
    indices: tuple[Expr, ...]  # one per subscript, outermost first (`t[a][b]` -> a, b)
    span: Span  # the whole subscript expression
    access: AccessKind
    loop_depth: int
    loop: int | None  # innermost enclosing loop, an index into Function.loops
    loop_vars: tuple[str, ...]  # induction variables the (flattened) index uses
    tid_x: Coefficient  # per +1 of threadIdx.x, of the last index (after resolving locals)
    tid_y: Coefficient
    thread_dependent: bool  # any index depends on threadIdx
    data_dependent: bool  # some index is loaded from memory (`bins[data[i]]`)
    element_type: str  # "float", "float4", "" when unknown
    index_tid_x: tuple[Coefficient, ...] = ()  # tid_x per subscript, for multi-dim arrays
    unit_stride_loop_vars: tuple[str, ...] = ()  # variables of +-1-step loops that step the index by +-1
    # Bytes one thread moves per access (`*(float2 *)&a[i]`, `reinterpret_cast<float4 *>(p)[k]`:
    # the wider type), None when unknown (a template type); `stride_unit_bytes`: the size of the
    # elements the index counts (the pointer's own element type).
    access_bytes: int | None = None
    stride_unit_bytes: int | None = None
    written_as: str = ""  # the name subscripted in the code when it is an alias of `array` (`row` of `A + r * N`)


@dataclass(frozen=True)
class Atomic:
    function: str  # atomicAdd, atomicCAS, ...
    target: Expr  # the address argument
    span: Span
    space: MemorySpace
    array: str | None
    thread_dependent: bool  # the address differs between threads
    data_dependent: bool  # the address is computed from loaded data (histograms)
    single_thread_guard: bool  # under `if (tid == 0)`-like guards: runs once per warp/block
    loop_depth: int
    operand: str = ""  # the value argument (`1`, `x[i]`, `__popc(mask)`), "" when none
    result_used: bool = False  # the old value is read (`slot = atomicAdd(...)`): a ticket, not a sum
    guard: str = ""  # the condition of the innermost `if` whose then-branch holds the atomic


@dataclass(frozen=True)
class SyncCall:
    span: Span
    under_thread_branch: bool  # inside a branch whose condition depends on the thread (or after one's exit)
    branch_condition: str
    after_early_exit: bool = False  # reached after `if (<thread-dependent>) return;`
    exit_span: Span | None = None  # that `if` statement, when `after_early_exit`


@dataclass(frozen=True)
class Branch:
    kind: Literal["if", "while", "for", "do", "ternary"]
    condition: Expr
    span: Span  # the whole statement
    thread_dependent: bool
    modulus: Expr | None  # `k` of a `threadIdx.x % k` (or `& (k-1)`) in the condition
    modulus_value: int | None  # k when it is a constant
    statements: int = 0  # statements the branch guards (both arms of an `if`); 0 for loops, ternaries
    has_else: bool = False  # an `if` with an `else` arm: the warp runs both paths in turn
    modulus_operator: str = "%"  # "%" or "&" (`tid & 1`: `modulus_value` is then 2)
    # The modulus grows with an enclosing loop's variable (`tid % (2 * s)` in a loop over s): the
    # interleaved reduction, whose active lanes thin out within every warp.
    loop_stepped: bool = False


@dataclass(frozen=True)
class SharedArray:
    name: str
    element_type: str
    dims: tuple[str, ...]  # texts, "" for `[]`
    dim_values: tuple[int | None, ...]
    dim_spans: tuple[Span, ...]  # the size expressions (or the empty `[]` position)
    span: Span
    is_extern: bool
    function: str | None  # None at file scope


@dataclass(frozen=True)
class FloatLiteral:
    """A floating literal without an `f` suffix (double precision) in float-only code.

    `operations`: the arithmetic operators (+ - * /) of the expression the literal is an operand
    of, 0 when the literal is only converted (`float x = 0.0;`, `T(4.0)`, an argument, a
    comparison): then no double instruction results. `operand_types`: the other operands' types
    ("float", "int", "double", "" unknown). `exact_in_float`: the value is a float exactly.
    `operator`: the operator the literal is a direct operand of ("" when converted)."""

    text: str
    span: Span
    operations: int = 1
    operand_types: tuple[str, ...] = ()
    exact_in_float: bool = False
    operator: str = ""
    dividend: bool = False  # the left operand of its `/` (`1.0 / x` is a reciprocal, `x / 1.0` the identity)
    in_loop: bool = False  # inside a loop of its function


@dataclass(frozen=True)
class MathCall:
    """A double-precision math function (`sqrt`) called in float-only code."""

    name: str
    float_name: str  # "sqrtf"
    span: Span  # the name only
    call_span: Span
    # The overload C++ picks from the arguments' types: "float" (CUDA's float overload, the same
    # code as `sqrtf`), "double" (a double or integer argument), "" (unknown: a template type).
    overload: str = ""


@dataclass(frozen=True)
class HostCallContext:
    """Around a blocking CUDA call in a host loop (cuda/host_calls.py; R013 decides from it)."""

    once: bool = False  # not every iteration: under `if (i == 0)`/`if (i % k == c)`, or followed by an exit
    paired_variant: bool = False  # an if/else arm whose other arm holds the asynchronous variant
    timed_inside: bool = False  # timers inside the loop: per-iteration timing needs the wait
    timed_around: bool = False  # timers just before and after the loop: a benchmark of the loop
    host_reads: bool = False  # other host code in the loop reads memory or branches on data
    drain: bool = False  # the loop only waits (no launch, copy or other call): it is the one wait


@dataclass(frozen=True)
class Call:
    name: str
    span: Span
    args: tuple[Expr, ...]
    in_loop: bool
    loop: int | None = None  # innermost enclosing loop, an index into Function.loops
    host: HostCallContext | None = None  # blocking CUDA calls in host loops only


@dataclass(frozen=True)
class LaunchSite:
    kernel: str
    grid: Expr
    block: Expr
    shared: Expr | None
    stream: Expr | None
    args: tuple[Expr, ...]
    host_function: str | None
    span: Span
    in_loop: bool
    block_dims: tuple[int | None, ...] | None = None  # (16, 16) when resolvable
    grid_dims: tuple[int | None, ...] | None = None

    @property
    def threads_per_block(self) -> int | None:
        if not self.block_dims or any(d is None for d in self.block_dims):
            return None
        product = 1
        for dim in self.block_dims:
            product *= dim or 0
        return product


@dataclass(frozen=True)
class Dim3:
    """`dim3 name(x, y, z)` (or `= dim3(...)`, `= {...}`)."""

    name: str
    components: tuple[Expr, ...]
    values: tuple[int | None, ...]
    span: Span


@dataclass(frozen=True)
class MallocCall:
    function: str  # cudaMalloc, cudaMallocManaged, ...
    pointer: str | None
    size: str
    span: Span


@dataclass(frozen=True)
class Function:
    name: str
    kind: FunctionKind
    name_span: Span
    span: Span
    body_span: Span | None
    return_type: str
    template_parameters: tuple[str, ...]
    parameters: tuple[Parameter, ...]
    launch_bounds: tuple[str, ...]
    extern_c: bool
    uses_double: bool
    # facts inside the body, in source order
    loops: tuple[Loop, ...] = ()
    accesses: tuple[MemoryAccess, ...] = ()
    atomics: tuple[Atomic, ...] = ()
    syncs: tuple[SyncCall, ...] = ()
    branches: tuple[Branch, ...] = ()
    shared_arrays: tuple[SharedArray, ...] = ()
    float_literals: tuple[FloatLiteral, ...] = ()
    math_calls: tuple[MathCall, ...] = ()
    calls: tuple[Call, ...] = ()  # every plain call (cudaMemcpy, __shfl_down_sync, helpers)
    launches: tuple[LaunchSite, ...] = ()
    dim3s: tuple[Dim3, ...] = ()
    mallocs: tuple[MallocCall, ...] = ()
    written_pointers: frozenset[str] = frozenset()  # params written through or escaping
    # Host functions: scalar definitions in source order, `(name, initializer text)` (spec infer
    # follows launch arguments and dim3 components through them).
    local_values: tuple[tuple[str, str], ...] = ()

    @property
    def signature(self) -> str:
        template = f"template <{', '.join(self.template_parameters)}> " if self.template_parameters else ""
        qualifier = {"global": "__global__ ", "device": "__device__ ", "host": ""}[self.kind]
        params = ", ".join(f"{p.type_text} {p.name}".strip() for p in self.parameters)
        return f"{template}{qualifier}{self.return_type} {self.name}({params})"

    def parameter(self, name: str) -> Parameter | None:
        return next((p for p in self.parameters if p.name == name), None)


@dataclass(frozen=True)
class PlacedFunction:
    """A function as extracted (rows relative to its first line, `relative`), where it now
    starts (`row`), the same function in file coordinates (`absolute`, the object in
    `SourceModel.functions`), and `memo`: results derived from `relative` that stay valid while
    the function's text does not change (shared by every model of the same document)."""

    relative: Function
    row: int
    absolute: Function
    memo: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class SourceModel:
    functions: tuple[Function, ...]
    file_shared_arrays: tuple[SharedArray, ...] = ()
    constants: tuple[tuple[str, int], ...] = ()  # `#define N 256`, `constexpr int N = 256`
    warnings: tuple[str, ...] = ()  # what was skipped and why
    has_errors: bool = False  # the tree has syntax errors (half-typed code)
    line_count: int = 0
    # One per function (same order) when built by `ModelBuilder`; empty for hand-made models.
    placements: tuple[PlacedFunction, ...] = field(default=(), compare=False, repr=False)

    def placed_functions(self) -> tuple[PlacedFunction, ...] | None:
        """`placements` if they still describe `functions` (a `dataclasses.replace` may have
        swapped the functions), else None."""
        placements = self.placements
        if len(placements) != len(self.functions):
            return None
        if any(p.absolute is not f for p, f in zip(placements, self.functions, strict=True)):
            return None
        return placements

    @cached_property
    def kernels(self) -> tuple[Function, ...]:
        return tuple(f for f in self.functions if f.kind == "global")

    @property
    def device_functions(self) -> tuple[Function, ...]:
        return tuple(f for f in self.functions if f.kind == "device")

    @property
    def host_functions(self) -> tuple[Function, ...]:
        return tuple(f for f in self.functions if f.kind == "host")

    @property
    def launches(self) -> tuple[LaunchSite, ...]:
        return tuple(site for f in self.functions for site in f.launches)

    @property
    def dim3s(self) -> tuple[Dim3, ...]:
        return tuple(d for f in self.functions for d in f.dim3s)

    @property
    def mallocs(self) -> tuple[MallocCall, ...]:
        return tuple(m for f in self.functions for m in f.mallocs)

    @property
    def shared_arrays(self) -> tuple[SharedArray, ...]:
        return self.file_shared_arrays + tuple(s for f in self.functions for s in f.shared_arrays)

    def kernel(self, name: str) -> Function | None:
        """The first `__global__` function called `name`."""
        return self._kernels_by_name.get(name)

    @cached_property
    def _kernels_by_name(self) -> dict[str, Function]:
        found: dict[str, Function] = {}
        for function in self.kernels:
            found.setdefault(function.name, function)
        return found

    @cached_property
    def _function_index(self) -> SpanIndex[Function]:
        # Per model (one per edit): an O(n) pass over header spans, which moved functions
        # already have, so that each look-up after it is O(log n).
        return SpanIndex(self.functions, lambda function: function.span)

    def build_indexes(self) -> None:
        """Build the look-up indexes now (they are otherwise built on first use)."""
        _ = self._function_index, self._kernels_by_name, self._launches_by_kernel

    def functions_overlapping(self, span: Span) -> list[Function]:
        """The functions whose span overlaps `span`, in source order."""
        return self._function_index.overlapping(span)

    def function_at(self, position: Position) -> Function | None:
        """The innermost function whose whole span contains `position`."""
        found = self._function_index.containing(position)
        return found[-1] if found else None

    def launch_at(self, position: Position) -> LaunchSite | None:
        """The launch site `k<<<...>>>(...)` whose span holds `position`."""
        for function in self._function_index.containing(position):
            index = self._site_indexes.get(id(function))
            if index is None:
                # (id of a function this model holds: stable for the model's lifetime)
                index = self._site_indexes[id(function)] = SpanIndex(function.launches, lambda site: site.span)
            found = index.containing(position)
            if found:
                return found[0]
        return None

    @cached_property
    def _site_indexes(self) -> dict[int, SpanIndex[LaunchSite]]:
        return {}

    def kernel_at(self, position: Position) -> Function | None:
        function = self.function_at(position)
        return function if function is not None and function.kind == "global" else None

    def launches_of(self, kernel: str) -> tuple[LaunchSite, ...]:
        return tuple(site for site in self._launches_by_kernel.get(kernel, ()) if site.kernel == kernel)

    @cached_property
    def _launches_by_kernel(self) -> dict[str, tuple[LaunchSite, ...]]:
        # Read from the unmoved facts where the model has them: `launches` of a moved function
        # is shifted on first read, and most functions launch nothing.
        placements = self.placed_functions()
        if placements is None:
            return _launches_by_kernel(self.functions)
        launching = [p for p in placements if p.relative.launches]
        if len(launching) == 1:
            # The usual big file: one host function launches everything. Its grouping is kept
            # with the placement (reused while that function neither changes nor moves).
            placed = launching[0]
            cached = placed.memo.get(_LAUNCHES_MEMO)
            if cached is None or cached[0] is not placed.absolute:
                cached = (placed.absolute, _launches_by_kernel((placed.absolute,)))
                placed.memo[_LAUNCHES_MEMO] = cached
            return cached[1]
        return _launches_by_kernel([p.absolute for p in launching])

    def block_shapes(self, kernel: str) -> tuple[tuple[int | None, ...] | None, ...]:
        """The block dimensions of every launch of `kernel` in this file (None: unresolved)."""
        return self._block_shapes.get(kernel, ())

    @cached_property
    def _block_shapes(self) -> dict[str, tuple[tuple[int | None, ...] | None, ...]]:
        placements = self.placed_functions()
        if placements is None:
            return _block_shapes(self.functions)
        launching = [p for p in placements if p.relative.launches]
        if len(launching) == 1:
            # Block shapes do not depend on rows: kept for as long as the function's text.
            memo = launching[0].memo
            shapes = memo.get(_BLOCK_SHAPES_MEMO)
            if shapes is None:
                shapes = memo[_BLOCK_SHAPES_MEMO] = _block_shapes((launching[0].relative,))
            return shapes
        return _block_shapes([p.relative for p in launching])


_LAUNCHES_MEMO = "model.launches_by_kernel"  # PlacedFunction.memo: (absolute function, grouping)


_BLOCK_SHAPES_MEMO = "model.block_shapes"  # PlacedFunction.memo: block shapes by kernel


def _block_shapes(functions: Sequence[Function]) -> dict[str, tuple[tuple[int | None, ...] | None, ...]]:
    shapes: dict[str, list[tuple[int | None, ...] | None]] = {}
    for function in functions:
        for site in function.launches:
            shapes.setdefault(site.kernel.split("<", 1)[0], []).append(site.block_dims)
    return {kernel: tuple(found) for kernel, found in shapes.items()}


def _launches_by_kernel(functions: Sequence[Function]) -> dict[str, tuple[LaunchSite, ...]]:
    found: dict[str, list[LaunchSite]] = {}
    for function in functions:
        for site in function.launches:
            found.setdefault(site.kernel, []).append(site)
    return {kernel: tuple(sites) for kernel, sites in found.items()}


# ---------------------------------------------------------------------------------------------
# Moving facts to other rows.

# Which fields of each model class hold positions, and how: shifting is on the edit path of
# big files, so it is table-driven instead of introspecting every object.
_SHIFT_PLAN: dict[type, tuple[tuple[str, str], ...]] = {
    Expr: (("span", "span"),),
    Parameter: (("span", "span"), ("name_span", "span?"), ("star_end", "pos?")),
    Loop: (("span", "span"), ("header_span", "span")),
    MemoryAccess: (("indices", "objs"), ("span", "span")),
    Atomic: (("target", "obj"), ("span", "span")),
    SyncCall: (("span", "span"), ("exit_span", "span?")),
    Branch: (("condition", "obj"), ("span", "span"), ("modulus", "obj?")),
    SharedArray: (("dim_spans", "spans"), ("span", "span")),
    FloatLiteral: (("span", "span"),),
    MathCall: (("span", "span"), ("call_span", "span")),
    Call: (("span", "span"), ("args", "objs")),
    LaunchSite: (("grid", "obj"), ("block", "obj"), ("shared", "obj?"), ("stream", "obj?"), ("args", "objs"),
                 ("span", "span")),
    Dim3: (("components", "objs"), ("span", "span")),
    MallocCall: (("span", "span"),),
}
# Function fields shifted on first read (see `_ShiftedField`); the rest is copied or shifted at once.
_LAZY_FUNCTION_FIELDS = ("parameters", "loops", "accesses", "atomics", "syncs", "branches", "shared_arrays",
                         "float_literals", "math_calls", "calls", "launches", "dim3s", "mallocs")
_EAGER_FUNCTION_FIELDS = ("name", "kind", "return_type", "template_parameters", "launch_bounds", "extern_c",
                          "uses_double", "written_pointers", "local_values")
_MOVED_FROM = "_moved_from"  # instance attribute of a moved Function: (unmoved function, rows)


def _shift_span(span: Span, rows: int) -> Span:
    start, end = span.start, span.end
    return Span(Position(start.line + rows, start.character), Position(end.line + rows, end.character))


def shift_rows(value: Any, rows: int) -> Any:
    """A copy of a model object with every `Span`/`Position` moved down by `rows` lines."""
    if isinstance(value, Span):
        return _shift_span(value, rows)
    if isinstance(value, Position):
        return Position(value.line + rows, value.character)
    if isinstance(value, Function):
        return move_function(value, rows)
    plan = _SHIFT_PLAN[type(value)]
    attributes = dict(value.__dict__)
    for name, kind in plan:
        current = attributes[name]
        if current is None:
            continue
        if kind in ("span", "span?"):
            attributes[name] = _shift_span(current, rows)
        elif kind == "pos?":
            attributes[name] = Position(current.line + rows, current.character)
        elif kind in ("obj", "obj?"):
            attributes[name] = shift_rows(current, rows)
        elif kind == "spans":
            attributes[name] = tuple(_shift_span(item, rows) for item in current)
        else:
            attributes[name] = tuple(shift_rows(item, rows) for item in current)
    shifted = object.__new__(type(value))
    object.__setattr__(shifted, "__dict__", attributes)  # frozen dataclass: bypass its __setattr__
    return shifted


def move_function(function: Function, rows: int) -> Function:
    """`function` moved down by `rows` lines: header now, fact tuples on first read."""
    origin = function.__dict__.get(_MOVED_FROM)
    base, total = origin if origin is not None else (function, 0)
    total += rows
    if total == 0:
        return base
    attributes = {name: base.__dict__[name] for name in _EAGER_FUNCTION_FIELDS}
    attributes["name_span"] = _shift_span(base.name_span, total)
    attributes["span"] = _shift_span(base.span, total)
    attributes["body_span"] = _shift_span(base.body_span, total) if base.body_span is not None else None
    attributes[_MOVED_FROM] = (base, total)
    moved = object.__new__(Function)
    object.__setattr__(moved, "__dict__", attributes)  # frozen dataclass: bypass its __setattr__
    return moved


class _ShiftedField:
    """A fact tuple of a moved `Function`, shifted from the unmoved function on first read.

    A non-data descriptor: the computed tuple is stored in the instance's `__dict__`, which
    then shadows the descriptor, so later reads are plain attribute reads. Functions built by
    `__init__` have every field in `__dict__` and never reach `__get__`. The store is a memo of
    an immutable value (two threads racing compute the same tuple), so the dataclass stays
    frozen in every observable way.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, instance: Function | None, owner: type | None = None) -> Any:
        if instance is None:
            return ()  # the class attribute: the dataclass default
        base, rows = instance.__dict__[_MOVED_FROM]
        value = tuple(shift_rows(item, rows) for item in getattr(base, self.name))
        instance.__dict__[self.name] = value
        return value


def _install_shifted_fields() -> None:
    # After @dataclass has read the defaults: the generated __init__/__eq__ are unaffected.
    for name in _LAZY_FUNCTION_FIELDS:
        setattr(Function, name, _ShiftedField(name))


_install_shifted_fields()
