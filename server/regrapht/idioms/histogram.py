"""Histograms: every point adds to one bin, `atomicAdd(&bins[f(x)], v)`, chosen by its data.

A histogram is a point kernel (`pointwise.py`, with atomics allowed) over one coordinate whose
only effect on memory is one `atomicAdd` into an array that nothing else in the kernel reads or
writes (`&bins[b]` or `bins + b`); the bin may be computed in any pure way (a shift, a clamped
scale of a float). The atomics commute, so the points may be visited in any order and counted
in any grouping: that is what privatisation needs. The byte histogram (the bin is `data[i]` of
`unsigned char` data, the increment 1) is marked, for a rewrite with 16-byte loads.
"""

from __future__ import annotations

from dataclasses import dataclass

from regrapht.cuda.affine import Poly
from regrapht.idioms.pointwise import AtomicUpdate, PointKernel

COUNTER_TYPES = frozenset({"unsigned int", "int", "unsigned long long", "float", "unsigned"})
# 64-bit counters whose atomics go through `unsigned long long` (`atomicAdd((unsigned long long *)&c[b], 1ULL)`
# on `size_t` counts: idioms/point_work.py `COUNTERS_64`)
WIDE_COUNTER_TYPES = frozenset({"size_t", "uint64_t", "unsigned long", "unsigned long int", "unsigned long long int"})


@dataclass(frozen=True)
class Histogram:
    kernel: PointKernel
    update: AtomicUpdate
    bins: str
    element: str
    byte_data: str | None  # the `unsigned char` array of a plain byte histogram


def histogram(kernel: PointKernel) -> Histogram | None:
    if len(kernel.atomics) != 1 or kernel.written or len(kernel.coordinates) != 1 or kernel.linear is not None:
        return None
    update = kernel.atomics[0]
    if update.index.atoms() <= set(kernel.params):
        return None  # the same address for every point is a reduction, not a histogram
    if any(a.array == update.array for a in kernel.accesses):
        return None  # the counts are also read or written directly
    element = kernel.pointers[update.array]
    if element not in COUNTER_TYPES and element not in WIDE_COUNTER_TYPES:
        return None
    coordinate = kernel.coordinates[0].name
    byte_data = None
    loads = [a for a in kernel.accesses if f"{a.array}[{' '.join(a.index_text.split())}]" ==
             " ".join(update.index_text.split())]
    if len(loads) == 1 and kernel.pointers[loads[0].array] == "unsigned char" and \
            loads[0].index == Poly.atom(coordinate) and update.value_text.strip() in ("1", "1u", "1U") and \
            not update.conditional and len(kernel.work) == 1 and element in ("unsigned int", "int", "unsigned"):
        byte_data = loads[0].array
    return Histogram(kernel, update, update.array, element, byte_data)
