"""Which neighbourhood a stencil reads: `out(c) = f(in(c + d) for d in D)` over coordinates c.

A stencil is a point kernel (`pointwise.py`) that reads one array, the *field*, at its own
point shifted by small offsets: constants (`in[(y - 1) * W + x]`) or loop variables with
constant ranges (`for (int dy = -1; dy <= 1; dy++) ... in[(y + dy) * W + x + dx]`). Each read of
the field is split along the field's layout: index = base + sum over coordinates of
stride_c * (c + offset_c), with one coordinate of stride 1 (the contiguous one). From the
offsets' ranges come the halo a tile needs on each side; from the kernel's guard and the
comparisons each read runs under (`if (iy >= 0 && iy < H)` with `iy = y + ky - 1`) come the
exact coordinates each read can touch, so a tile loads only elements the kernel itself reads.

Reads that do not split this way (clamped or wrapped indices, reads under conditions that are
not bounds, reads after a `continue`) are not part of the stencil: they keep reading global
memory, which stays correct because a stencil never writes an array it reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from regrapht.cuda.affine import Poly, monomial_quotient
from regrapht.idioms.pointwise import Access, Condition, PointKernel, coefficient_of

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
    # The layout, from the first read: stride per coordinate, which must be one-term.
    strides = {c: coefficient_of(reads[0].index, c) for c in names}
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
        found.append(read)
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
                                   {c: r.high[c] for c in tiled}, r.limits) for r in found)
    return Stencil(kernel, array, strides, base, tiled, slices, narrowed)


def _points(reads: list[NeighbourRead], tiled: tuple[str, ...]) -> int:
    """How many distinct offsets the reads cover (a loop-bounded read counts its whole box)."""
    fixed: set[tuple[int, ...]] = set()
    boxes = 0
    for read in reads:
        if all(read.offsets[c].constant is not None for c in tiled):
            fixed.add(tuple(read.low[c] for c in tiled))
        else:
            size = 1
            for c in tiled:
                size *= read.high[c] - read.low[c] + 1
            boxes += size
    return len(fixed) + boxes


def _split(kernel: PointKernel, access: Access, strides: dict[str, Poly],
           tiled: tuple[str, ...]) -> tuple[Poly, NeighbourRead] | None:
    index = access.index
    rest = index
    for c in tiled:
        if coefficient_of(index, c) != strides[c]:
            return None
        rest = rest - strides[c] * Poly.atom(c)  # type: ignore[operator]
    if any(c in rest.atoms() for c in (k.name for k in kernel.coordinates)):
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
    return Poly.of(base), NeighbourRead(access, shifts, low, high, limits)


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
