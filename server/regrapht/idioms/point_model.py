"""The point-kernel description: coordinates, bounds, accesses, conditions, clamps, atomics.

`PointKernel` is what `pointwise.point_kernel` reads from a kernel (see that module); the
records here are plain frozen data over `affine.Poly` index polynomials, with the helpers that
rewrites built on them share: fresh names (`fresh`, `FreshNames`), the part of an index linear
in a coordinate (`coefficient_of`, `unit_coordinate`) and a literal launch block.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.cuda.intexpr import int_literal
from regrapht.cuda.nodes import encode_source

AXES = ("x", "y", "z")
# Calls that only compute a value from their arguments: work calling anything else is not
# known to be pointwise (it might write memory or synchronise).
PURE_CALLS = frozenset({
    "min", "max", "fminf", "fmaxf", "fmin", "fmax", "abs", "fabsf", "fabs", "sqrtf", "sqrt", "rsqrtf", "expf",
    "exp", "__expf", "logf", "log", "__logf", "log1pf", "expm1f", "sinf", "cosf", "tanf", "tanhf", "tanh",
    "sin", "cos", "erff", "erf", "powf", "pow", "floorf", "ceilf", "roundf", "truncf", "fmaf", "fma",
    "exp2f", "log2f", "__fdividef", "__saturatef", "__ldg", "copysignf", "hypotf", "cbrtf", "rintf",
    "__float2int_rn", "__int2float_rn", "static_cast", "float", "int", "double", "unsigned",
})


@dataclass(frozen=True)
class Coordinate:
    name: str
    type: str  # as declared, e.g. "int", "const unsigned int"
    axis: str  # "x", "y" or "z": the thread-id axis it comes from


@dataclass(frozen=True)
class LinearIndex:
    """A 1-D global thread index that the kernel decodes into coordinates (`i = t / n`,
    `j = t % n`): the rewrites bind the coordinates and re-define it from them."""

    name: str
    type: str
    total: str  # its exclusive bound, as written (a launch covers it)
    definition: str  # `int t = i * n + j;`: the index from the coordinates


@dataclass(frozen=True)
class Bound:
    """`lower <= coordinate < upper`; `upper` is a launch-expressible text (scalars, literals)."""

    lower: str  # "0" when the guard gives none
    upper: str


@dataclass(frozen=True)
class Access:
    array: str  # the pointer parameter
    index: Poly  # over coordinates, loop variables, scalars (opaque atoms for the rest)
    index_text: str
    start: int  # byte offsets of the whole subscript expression in `PointKernel.text`
    end: int
    write: bool
    read: bool
    loop_vars: tuple[str, ...]  # enclosing loop variables, outermost first
    # Comparisons that must hold for the access to run (enclosing `if`s, `?:`), and whether it
    # also runs under some condition not listed (an `else`, `continue`, `&&` operand, `while`).
    conditions: tuple[Condition, ...] = ()
    conditional: bool = False


@dataclass(frozen=True)
class Condition:
    """`left op right` with both sides as index polynomials; texts for re-emitting them."""

    left: Poly
    op: str  # "<", "<=", ">", ">="
    right: Poly
    right_text: str
    left_text: str


@dataclass(frozen=True)
class AtomicUpdate:
    """`atomicAdd(&array[index], value)` (or `array + index`) in the work."""

    array: str
    index: Poly
    index_text: str
    array_start: int  # byte offsets of the array's name in the call (to redirect it)
    array_end: int
    value_text: str
    conditional: bool  # under any condition or loop
    # byte offsets of the whole `atomicAdd(...)` call, and whether it is a statement of its own
    # (its old value unused), so a rewrite may replace the call by recording its operands
    call_start: int = -1
    call_end: int = -1
    statement: bool = False


@dataclass(frozen=True)
class LoopRange:
    variable: str
    first: int  # inclusive constant range of the variable
    last: int


@dataclass(frozen=True)
class Clamp:
    """An index clamped to a range, `min(max(c + shift, lower), upper)` of a coordinate `c`
    (either side may be absent), written with `min`/`max` or as `c > 0 ? c - 1 : 0`."""

    coordinate: str
    shift: int
    lower: str | None  # scalars and literals (launch-expressible)
    upper: str | None


@dataclass(frozen=True)
class PointKernel:
    text: str  # the kernel's whole definition
    params: Mapping[str, str]  # parameter name -> type text ("const float *")
    pointers: Mapping[str, str]  # pointer parameter name -> element type ("float")
    coordinates: tuple[Coordinate, ...]
    bounds: Mapping[str, Bound]  # per coordinate name
    guard: str  # condition text under which the work runs, over coordinates and scalars
    prelude: tuple[str, ...]  # pure declarations (statement texts) the guard or work may use
    work: tuple[str, ...]  # the statements run at each point, in order
    work_start: int  # byte offsets of the work statements in `text` (first start, last end)
    work_end: int
    accesses: tuple[Access, ...]  # subscripts of pointer parameters in the work
    loops: Mapping[str, LoopRange]  # constant-range loop variables of the work
    identifiers: frozenset[str]  # every identifier in the kernel (to pick fresh names)
    linear: LinearIndex | None = None  # the 1-D thread index the coordinates were decoded from
    atomics: tuple[AtomicUpdate, ...] = ()  # only when asked for (`point_kernel(atomics=True)`)
    work_nodes: tuple[Node, ...] = field(default=(), compare=False, repr=False)  # the statements' trees
    symbols: Mapping[str, Poly] = field(default_factory=dict, compare=False, repr=False)  # locals at the end
    clamps: Mapping[str, Clamp] = field(default_factory=dict, compare=False, repr=False)  # opaque atom -> clamp

    def coordinate(self, name: str) -> Coordinate | None:
        return next((c for c in self.coordinates if c.name == name), None)

    def reads(self, array: str) -> tuple[Access, ...]:
        return tuple(a for a in self.accesses if a.array == array and a.read)

    def writes(self, array: str) -> tuple[Access, ...]:
        return tuple(a for a in self.accesses if a.array == array and a.write)

    @property
    def written(self) -> frozenset[str]:
        return frozenset(a.array for a in self.accesses if a.write)

    def work_with(self, replacements: Mapping[tuple[int, int], str]) -> str:
        """The work statements' text with the byte ranges `(start, end)` replaced."""
        data = encode_source(self.text)
        out = []
        cursor = self.work_start
        for (start, end), text in sorted(replacements.items()):
            out.append(data[cursor:start].decode())
            out.append(text)
            cursor = end
        out.append(data[cursor : self.work_end].decode())
        return "".join(out)


def fresh(kernel: PointKernel, base: str) -> str:
    """`base` with a suffix that no identifier of the kernel has."""
    name = f"{base}_rg"
    while name in kernel.identifiers:
        name += "_"
    return name


class FreshNames:
    """Fresh names for one rewrite: each free in the kernel and distinct from every name given
    before. Bases built from the kernel's own names (`f"{coordinate}0"`) can meet fixed ones
    (`l0`, a tile counter, for a coordinate `l`); `fresh` alone would give both the same name."""

    def __init__(self, kernel: PointKernel) -> None:
        self._taken = set(kernel.identifiers)

    def __call__(self, base: str) -> str:
        name = f"{base}_rg"
        while name in self._taken:
            name += "_"
        self._taken.add(name)
        return name


def coefficient_of(poly: Poly, atom: str) -> Poly:
    """The part of `poly` linear in `atom`, divided by it (`W*y + x` -> W for y); zero when
    `atom` does not occur linearly."""
    out: dict[tuple[str, ...], int] = {}
    for monomial, value in poly.terms:
        if monomial.count(atom) == 1:
            rest = list(monomial)
            rest.remove(atom)
            out[tuple(rest)] = out.get(tuple(rest), 0) + value
    return Poly.of(out)


def unit_coordinate(poly: Poly, coordinates: tuple[Coordinate, ...]) -> str | None:
    """The coordinate whose +1 moves the index by +-1 element (the fast, contiguous one)."""
    found = [c.name for c in coordinates if coefficient_of(poly, c.name).constant in (1, -1)]
    return found[0] if len(found) == 1 else None


def launch_block(block: tuple[str, ...]) -> tuple[int, int, int] | None:
    values = []
    for text in block:
        value = int_literal(text)
        if value is None:
            return None
        values.append(value)
    return tuple((values + [1, 1, 1])[:3])  # type: ignore[return-value]

