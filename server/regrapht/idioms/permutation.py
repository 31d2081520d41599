"""Which index permutation a copy applies: `out[P_out(c)] = f(in[P_in(c)])` over coordinates c.

A permutation copy is a point kernel (`pointwise.py`) whose work is one store of an expression
of one load of another array. Transposes, 3-D permutations and rotations (a transpose plus a
flip: a coordinate enters an index with a negative stride) all have this shape; what matters to
a rewrite is which coordinate is contiguous in the load (`fast_in`) and in the store
(`fast_out`). When they differ, one of the two sides is strided by a whole row and a tile
through shared memory makes both contiguous.
"""

from __future__ import annotations

from dataclasses import dataclass

from regrapht.cuda.parse import encode_source
from regrapht.idioms.pointwise import Access, PointKernel, unit_coordinate


@dataclass(frozen=True)
class PermutationCopy:
    kernel: PointKernel
    load: Access
    store: Access
    value: str  # the stored expression (reads `load` and scalars only)
    fast_in: str | None  # coordinate with a +-1 stride in the load's index
    fast_out: str | None  # the same for the store

    @property
    def transposing(self) -> bool:
        """Whether the contiguous coordinates of the two sides differ (strided on one side)."""
        return self.fast_in is not None and self.fast_out is not None and self.fast_in != self.fast_out


def permutation_copy(kernel: PointKernel) -> PermutationCopy | None:
    if len(kernel.work) != 1 or len(kernel.accesses) != 2:
        return None
    stores = [a for a in kernel.accesses if a.write]
    loads = [a for a in kernel.accesses if a.read and not a.write]
    if len(stores) != 1 or len(loads) != 1 or stores[0].read or stores[0].loop_vars or loads[0].loop_vars:
        return None
    store, load = stores[0], loads[0]
    if store.array == load.array or store.start != kernel.work_start:
        return None  # in-place or not `out[...] = value;`
    if store.index.memory_dependent or load.index.memory_dependent:
        return None  # a gather or scatter, not a permutation
    data = encode_source(kernel.text)
    rest = data[store.end : kernel.work_end].decode().strip()
    if not rest.startswith("=") or rest.startswith("==") or not rest.endswith(";"):
        return None
    value = rest[1:-1].strip()
    return PermutationCopy(kernel, load, store, value, unit_coordinate(load.index, kernel.coordinates),
                           unit_coordinate(store.index, kernel.coordinates))
