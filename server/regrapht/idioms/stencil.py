"""Which neighbourhood a stencil reads: `out(c) = f(in(c + d) for d in D)` over coordinates c.

A stencil is a point kernel (`pointwise.py`) that reads one array, the *field*, at its own
point shifted by small offsets: constants (`in[(y - 1) * W + x]`) or loop variables with
constant ranges (`for (int dy = -1; dy <= 1; dy++) ... in[(y + dy) * W + x + dx]`). Each read of
the field is split along the field's layout: index = base + sum over coordinates of
stride_c * (c + offset_c), with one coordinate of stride 1 (the contiguous one). From the
offsets' ranges come the halo a tile needs on each side; from the kernel's guard and the
comparisons each read runs under (`if (iy >= 0 && iy < H)` with `iy = y + ky - 1`) come the
exact coordinates each read can touch, so a tile loads only elements the kernel itself reads.

A read whose coordinate is clamped to a range (`t[y * nx + max(x - 1, 0)]`, `x > 0 ? x - 1 : 0`,
`Clamp` in `pointwise.py`) is a neighbour read too, when the guard keeps the point itself inside
the range: then `max(x + d, L)` is the element at offset d where `x + d >= L`, else the first
offset above it where the position is exactly L (`clamped_read` writes that choice over the
tile's or window's elements). Besides its box, such a read contributes the positions equal to
the bound at the offsets between d and 0 (`fallback` reads), so a tile loads only what the
kernel reads.

Reads that do not split this way (wrapped indices, reads under conditions that are not bounds,
reads after a `continue`) are not part of the stencil: they keep reading global memory, which
stays correct because a stencil never writes an array it reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import product

from regrapht.cuda.affine import Poly, monomial_quotient
from regrapht.idioms.pointwise import Access, Clamp, Condition, PointKernel, coefficient_of, expression_poly

MAX_HALO = 8  # elements per side; wider neighbourhoods are not what a tile with halos is for
MIN_POINTS = 3  # distinct offsets read: fewer gain nothing from sharing loads through a tile


@dataclass(frozen=True)
class NeighbourRead:
    access: Access
    offsets: dict[str, Poly]  # per tiled coordinate: the shift (loop variables, constants)
    low: dict[str, int]  # the shift's range per tiled coordinate
    high: dict[str, int]
    # Bounds the read's own coordinate g_c satisfies whenever it runs: (coordinate, op, text),
    # read as `g_c op text` (from the guard, shifted by the offsets, and from its conditions).
    limits: tuple[tuple[str, str, str], ...]
    # Clamped coordinates: coordinate -> ("lower" | "upper", the bound's text); offsets constant.
    clamped: tuple[tuple[str, str, str], ...] = ()
    # The positions a clamped read takes at its bound (only loaded, never a read of its own).
    fallback: bool = False


@dataclass(frozen=True)
class Stencil:
    kernel: PointKernel
    field: str
    strides: dict[str, Poly]  # per coordinate the field varies along (non-zero strides only)
    base: Poly  # the field's index at coordinates 0 (scalars and constants)
    tiled: tuple[str, ...]  # coordinates the field varies along, contiguous one first
    slices: tuple[str, ...]  # the other coordinates
    reads: tuple[NeighbourRead, ...]

    def halo(self, coordinate: str) -> tuple[int, int]:
        """Elements needed below and above a tile along `coordinate`."""
        low = max(0, *(-r.low[coordinate] for r in self.reads))
        high = max(0, *(r.high[coordinate] for r in self.reads))
        return low, high


def stencil(kernel: PointKernel) -> Stencil | None:
    read_arrays = {a.array for a in kernel.accesses if a.read}
    if any(a.read and a.write for a in kernel.accesses) or read_arrays & kernel.written or not kernel.written:
        return None  # in-place updates and read-modify-writes are not stencils
    best: Stencil | None = None
    for array in sorted(read_arrays):
        found = _stencil_of(kernel, array)
        if found is not None and (best is None or len(found.reads) > len(best.reads)):
            best = found
    return best


def _stencil_of(kernel: PointKernel, array: str) -> Stencil | None:
    reads = [a for a in kernel.reads(array) if not a.conditional and not a.index.memory_dependent]
    if not reads:
        return None
    names = [c.name for c in kernel.coordinates]
    # The layout, from the first read: stride per coordinate (or per its clamp), one-term.
    strides = {c: _stride(kernel, reads[0].index, c) for c in names}
    strides = {c: s for c, s in strides.items() if s.terms}
    if any(len(s.terms) != 1 or s.terms[0][1] < 0 for s in strides.values()):
        return None
    fast = [c for c, s in strides.items() if s.constant == 1]
    if len(fast) != 1:
        return None
    tiled = tuple(sorted(strides, key=lambda c: (len(strides[c].terms[0][0]), strides[c].terms[0][1])))
    if tiled[0] != fast[0] or len({s.terms[0][0] for s in strides.values()}) != len(strides):
        return None  # two coordinates with one stride: an offset could belong to either
    slices = tuple(c for c in names if c not in strides)
    base: Poly | None = None
    found: list[NeighbourRead] = []
    for access in reads:
        split = _split(kernel, access, strides, tiled)
        if split is None:
            continue
        read_base, read = split
        if base is None:
            base = read_base
        elif read_base != base:
            continue
        found.extend(read)
    if base is None or not found or _points(found, tiled) < MIN_POINTS:
        return None  # `rowptr[row]`, `rowptr[row + 1]` is no neighbourhood worth a tile
    if not base.atoms() <= set(kernel.params):
        return None
    # A coordinate no read shifts (a depthwise convolution's channel) needs no tile: the block
    # takes one value of it at a time, like a coordinate the field does not vary along.
    flat = tuple(c for c in tiled[1:] if all(r.low[c] == 0 == r.high[c] for r in found))
    tiled = tuple(c for c in tiled if c not in flat)
    slices = tuple(c for c in names if c in flat or c in slices)
    narrowed = tuple(NeighbourRead(r.access, {c: r.offsets[c] for c in tiled}, {c: r.low[c] for c in tiled},
                                   {c: r.high[c] for c in tiled}, r.limits, r.clamped, r.fallback) for r in found)
    return Stencil(kernel, array, strides, base, tiled, slices, narrowed)


def _points(reads: list[NeighbourRead], tiled: tuple[str, ...]) -> int:
    """How many distinct offsets the reads cover (a loop-bounded read counts its whole box)."""
    fixed: set[tuple[int, ...]] = set()
    boxes = 0
    for read in reads:
        if read.fallback:
            continue
        if all(read.offsets[c].constant is not None for c in tiled):
            fixed.add(tuple(read.low[c] for c in tiled))
        else:
            size = 1
            for c in tiled:
                size *= read.high[c] - read.low[c] + 1
            boxes += size
    return len(fixed) + boxes


def _stride(kernel: PointKernel, index: Poly, coordinate: str) -> Poly:
    """How far `index` moves per +1 of `coordinate`, or of the one clamp of it the index uses."""
    stride = coefficient_of(index, coordinate)
    if stride.terms:
        return stride
    clamps = [a for a in index.atoms() if a in kernel.clamps and kernel.clamps[a].coordinate == coordinate]
    return coefficient_of(index, clamps[0]) if len(clamps) == 1 else stride


def _split(kernel: PointKernel, access: Access, strides: dict[str, Poly],
           tiled: tuple[str, ...]) -> tuple[Poly, list[NeighbourRead]] | None:
    """The read's base and its neighbour reads (itself, and for a clamped read the positions it
    takes at the bound), or None when it does not split along the layout."""
    index = access.index
    rest = index
    clamps: dict[str, Clamp] = {}
    for c in tiled:
        if coefficient_of(index, c) == strides[c]:
            rest = rest - strides[c] * Poly.atom(c)  # type: ignore[operator]
            continue
        atoms = [a for a in index.atoms() if a in kernel.clamps and kernel.clamps[a].coordinate == c]
        if coefficient_of(index, c).terms or len(atoms) != 1 or coefficient_of(index, atoms[0]) != strides[c]:
            return None
        clamps[c] = kernel.clamps[atoms[0]]
        rest = rest - strides[c] * Poly.atom(atoms[0]) + strides[c] * Poly.const(clamps[c].shift)  # type: ignore[operator]
    if any(c in rest.atoms() for c in (k.name for k in kernel.coordinates)) or rest.atoms() & set(kernel.clamps):
        return None  # a coordinate in a non-linear term
    # Each remaining term that is a stride times loop variables or a constant is an offset of
    # that coordinate (largest stride first); the rest is the base, which must hold scalars only.
    offsets: dict[str, dict[tuple[str, ...], int]] = {c: {} for c in tiled}
    base: dict[tuple[str, ...], int] = {}
    for monomial, value in rest.terms:
        owner = None
        for c in reversed(tiled):
            (stride_monomial, stride_value), = strides[c].terms
            remaining = monomial_quotient(monomial, stride_monomial)
            if remaining is not None and value % stride_value == 0 and all(a in kernel.loops for a in remaining):
                owner = c
                offsets[c][remaining] = offsets[c].get(remaining, 0) + value // stride_value
                break
        if owner is None:
            if any(a in kernel.loops for a in monomial):
                return None
            base[monomial] = base.get(monomial, 0) + value
    shifts = {c: Poly.of(o) for c, o in offsets.items()}
    low: dict[str, int] = {}
    high: dict[str, int] = {}
    for c, shift in shifts.items():
        bounds = _range(kernel, shift)
        if bounds is None or max(-bounds[0], bounds[1]) > MAX_HALO:
            return None
        low[c], high[c] = bounds
    limits = _limits(kernel, access, shifts, low, high)
    if limits is None:
        return None
    if not clamps:
        return Poly.of(base), [NeighbourRead(access, shifts, low, high, limits)]
    clamped = _clamp_sides(kernel, clamps)
    if clamped is None or any(shift.constant is None for shift in shifts.values()):
        return None
    main = NeighbourRead(access, shifts, low, high, limits + tuple(_at_bound(c, side, text, main=True)[0]
                                                                   for c, side, text in clamped), clamped)
    reads = [main]
    # the positions at the bound: offsets strictly between the shift and 0, where g == bound
    for choice in product((False, True), repeat=len(clamped)):
        if not any(choice):
            continue
        f_low, f_high, extra = dict(low), dict(high), []
        for (c, side, text), at_bound in zip(clamped, choice, strict=True):
            if at_bound:
                d = low[c]
                f_low[c], f_high[c] = (d + 1, 0) if side == "lower" else (0, d - 1)
                extra.extend(_at_bound(c, side, text, main=False))
            else:
                extra.extend(_at_bound(c, side, text, main=True))
        f_limits = _limits(kernel, access, shifts, f_low, f_high)
        if f_limits is None:
            return None
        reads.append(NeighbourRead(access, shifts, f_low, f_high, f_limits + tuple(extra), clamped, True))
    return Poly.of(base), reads


def _clamp_sides(kernel: PointKernel, clamps: dict[str, Clamp]) -> tuple[tuple[str, str, str], ...] | None:
    """Per clamped coordinate, the side that can bind ("lower" for `max(x - 1, 0)`) and its
    bound, when the guard keeps the point itself inside the range (so the clamped position is
    the bound at an offset between the shift and 0); None otherwise. A side that cannot bind
    (`max(x + 1, 0)` with x >= 0) is dropped: the read is plain there."""
    sides = []
    for c, clamp in clamps.items():
        bound = kernel.bounds[c]
        lower, upper = expression_poly(bound.lower), expression_poly(bound.upper)
        if lower is None or upper is None:
            return None
        if clamp.lower is not None:
            low_end = expression_poly(clamp.lower)
            margin = (lower - low_end).constant if low_end is not None else None
            if margin is None or margin < 0:
                return None  # the point itself may lie below the clamp's range
            if clamp.shift < 0:
                sides.append((c, "lower", clamp.lower))
        if clamp.upper is not None:
            high_end = expression_poly(clamp.upper)
            margin = (high_end + Poly.const(1) - upper).constant if high_end is not None else None
            if margin is None or margin < 0:
                return None
            if clamp.shift > 0:
                sides.append((c, "upper", clamp.upper))
    return tuple(sides) if len({c for c, _, _ in sides}) == len(sides) else None


def _at_bound(c: str, side: str, text: str, *, main: bool) -> list[tuple[str, str, str]]:
    """The limits of a clamped read's position: inside the range (`main`), or on its bound."""
    bound = f"(long long)({text})"
    if main:
        return [(c, ">=" if side == "lower" else "<=", bound)]
    return [(c, ">=", bound), (c, "<=", bound)]


def clamped_read(read: NeighbourRead, element: Callable[[dict[str, int]], str],
                 position: Callable[[str, int], str]) -> str:
    """The value `read` takes, over elements at constant offsets (`element(offsets)`): along a
    clamped coordinate, the element at the read's shift d where the position (`position(c, j)`,
    the point's coordinate plus j) is inside the range, else at the first offset between d and
    0 where it is (the bound)."""
    sides = {c: (side, text) for c, side, text in read.clamped}
    base = {c: shift.constant for c, shift in read.offsets.items()}

    def choose(coordinates: list[str], chosen: dict[str, int]) -> str:
        if not coordinates:
            return element(chosen)
        c, rest = coordinates[0], coordinates[1:]
        side, text = sides[c]
        d = base[c]
        assert d is not None
        steps = list(range(d, 1)) if side == "lower" else list(range(d, -1, -1))
        op = ">=" if side == "lower" else "<="
        out = choose(rest, {**chosen, c: 0})
        for j in reversed(steps[:-1]):
            out = f"({position(c, j)} {op} (long long)({text}) ? {choose(rest, {**chosen, c: j})} : {out})"
        return out

    fixed = {c: d for c, d in base.items() if c not in sides and d is not None}
    return choose(list(sides), fixed)


def _range(kernel: PointKernel, shift: Poly) -> tuple[int, int] | None:
    """The constant range of an offset that is linear in constant-range loop variables."""
    low = high = 0
    for monomial, value in shift.terms:
        if not monomial:
            low += value
            high += value
            continue
        if len(monomial) != 1 or monomial[0] not in kernel.loops:
            return None
        loop = kernel.loops[monomial[0]]
        ends = (value * loop.first, value * loop.last)
        low += min(ends)
        high += max(ends)
    return low, high


def _limits(kernel: PointKernel, access: Access, shifts: dict[str, Poly], low: dict[str, int],
            high: dict[str, int]) -> tuple[tuple[str, str, str], ...] | None:
    out: list[tuple[str, str, str]] = []
    for c, bound in kernel.bounds.items():
        if c in shifts:
            out.append((c, ">=", f"({bound.lower}) + ({low[c]})"))
            out.append((c, "<", f"({bound.upper}) + ({high[c]})"))
    for condition in access.conditions:
        limit = _limit(kernel, condition, shifts, low, high)
        if limit is None:
            return None
        out.extend(limit)
    return tuple(out)


def _limit(kernel: PointKernel, condition: Condition, shifts: dict[str, Poly], low: dict[str, int],
           high: dict[str, int]) -> list[tuple[str, str, str]] | None:
    """What a comparison the read runs under says about the read's coordinates; None when it
    is not a bound on one (then the read may rely on it in ways a tile cannot see)."""
    left, op, right, right_text = condition.left, condition.op, condition.right, condition.right_text
    scalars = set(kernel.params)
    if not right.atoms() <= scalars:
        if not left.atoms() <= scalars:
            return None
        left, right, right_text = right, left, condition.left_text
        op = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}[op]
    for c, shift in shifts.items():
        if left == Poly.atom(c) + shift:  # a bound on the coordinate the read touches
            return [(c, op, right_text)]
        # A bound on the point itself, maybe moved by a constant (`i + R < n`): shift it by the
        # read's offsets.
        moved_by = (left - Poly.atom(c)).constant
        if moved_by is not None:
            moved = high[c] if op in ("<", "<=") else low[c]
            return [(c, op, f"({right_text}) + ({moved - moved_by})")]
    names = {k.name for k in kernel.coordinates}
    if left.atoms() <= names and len(left.terms) == 1 and left.terms[0][1] == 1 and len(left.terms[0][0]) == 1:
        return []  # a bound on a coordinate the field does not vary along: the slice's own
    return None
