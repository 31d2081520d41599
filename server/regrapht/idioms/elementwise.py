"""Elementwise maps and gathers: each point reads and writes elements at its own position.

An elementwise map is a point kernel (`pointwise.py`) in which every access that moves with the
contiguous coordinate `f` (the x coordinate) moves by exactly one element per step of `f`
(`x[i]`, `out[t * dim + d]`, `weight[tokens[t] * dim + d]`: the rest of the index may be anything
that does not involve `f`, loaded or not), and every other access does not move with `f` at
all (`tokens[t]`, a scalar table). Each array written is written once per point,
unconditionally, at its one index (its reads may sit under a condition: `y[i] = y[i] < 0 ? 0 :
y[i]`). Then four consecutive points touch four consecutive elements
of each such array, which a rewrite can move as one 16-byte vector when they are aligned.
"""

from __future__ import annotations

from dataclasses import dataclass

from regrapht.cuda.affine import Poly
from regrapht.idioms.pointwise import Access, PointKernel, coefficient_of


@dataclass(frozen=True)
class Stream:
    """One array accessed along the contiguous coordinate (one element per point)."""

    array: str
    element: str
    accesses: tuple[Access, ...]  # every access of it (same index)
    read: bool  # its old value is used (loaded as a vector first)
    written: bool


@dataclass(frozen=True)
class ElementwiseMap:
    kernel: PointKernel
    fast: str  # the contiguous coordinate
    streams: tuple[Stream, ...]


def elementwise_map(kernel: PointKernel) -> ElementwiseMap | None:
    if kernel.linear is not None or kernel.atomics:
        return None
    fast = next((c.name for c in kernel.coordinates if c.axis == "x"), None)
    if fast is None:
        return None
    by_array: dict[str, list[Access]] = {}
    for access in kernel.accesses:
        step = coefficient_of(access.index, fast)
        if not step.terms:
            if access.write:
                return None  # every point writes the same element: not a map
            continue
        if step.constant != 1 or fast in (access.index - Poly.atom(fast)).atoms():
            return None  # strided or non-linear along the contiguous coordinate
        if access.loop_vars:
            return None
        by_array.setdefault(access.array, []).append(access)
    streams = []
    for array, accesses in sorted(by_array.items()):
        if len({a.index for a in accesses}) != 1:
            return None  # `x[i]` and `x[i + 1]`: a stencil, not a map
        writes = [a for a in accesses if a.write]
        if len(writes) > 1 or any(w.conditional or w.conditions for w in writes):
            return None  # a lane could keep its old value: a vector store would overwrite it
        read = any(a.read for a in accesses)
        # Reads under a condition (`y[i] = y[i] < 0 ? 0 : y[i]`) of an array written here are fine:
        # the unconditional write touches the same element at every point, so loading it as a
        # vector is in bounds, and the reads see the registers as they saw memory.
        streams.append(Stream(array, kernel.pointers[array], tuple(accesses), read, bool(writes)))
    if not any(s.written for s in streams):
        return None
    return ElementwiseMap(kernel, fast, tuple(streams))

