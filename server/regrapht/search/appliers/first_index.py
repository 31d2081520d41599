"""Predicate searches (`atomicMin(r, i)` where P(i) holds) -> an index min-reduction with early exit.

Matches what `idioms/first_index.py` recognises: one thread per index of [0, n), the least index
whose predicate holds kept in `*r` by `atomicMin`. Every hit of the original is an atomic on one
address (millions of them serialised when hits are common), and every index is tested even once
the answer is known. The rewrite:

- blocks visit tiles of `threads x items` indices in increasing order (tile b, b + G, ... of a
  grid of G blocks); each thread tests `items` indices of the tile, coalesced (`k * blockDim.x +
  threadIdx.x`), with the kernel's own declarations and predicate, and keeps the least hit;
- the block's least hit is combined by warp shuffles and one shared `atomicMin` per warp, and one
  global `atomicMin` per block publishes it;
- early exit: before a tile, thread 0 reads `*r`; when it is at or below the tile's first index no
  index of this tile, nor of any later tile of this block, can lower it, and the block stops.

The result is min(*r, least hit) as before, whatever the order blocks run in (the atomic keeps the
least; a skipped tile holds only indices at or above a value already there). Launch: the device's
resident blocks (SMs x blocks per SM) or, without a device, one block per 16 tiles, never more
than the tiles. Parameter grid: threads per block (128-1024) x indices per thread (1, 2, 4, 8).
"""

from __future__ import annotations

from regrapht.idioms.first_index import FirstIndexSearch, first_index_search
from regrapht.search.appliers.common import ApplierInput, Rewrite, body_change, edits
from regrapht.search.appliers.cooperative import (
    PREFIX,
    covers_everywhere,
    indent_code,
    resident_blocks,
    value_of,
)
from regrapht.search.appliers.grid import grid_order, thread_limit
from regrapht.search.source import find_kernel
from regrapht.spec.launch import LaunchConfig

FIRST = ((256, 4), (512, 2), (128, 8))  # the hand-picked points (threads, items): 1024 indices a tile
GRID_THREADS = (128, 256, 512, 1024)
GRID_ITEMS = (1, 2, 4, 8)
TILES_PER_BLOCK = 16  # without a device


class FirstIndexMin:
    technique = "early_exit_search"
    also: tuple[str, ...] = ()

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        located = find_kernel(given.source, given.kernel)
        if located is None or PREFIX + "tile_" in given.source:
            return []
        found = first_index_search(given.source, given.kernel)
        if found is None or not self._covers(given, found):
            return []
        limit = thread_limit(given)  # the device's, and the kernel's __launch_bounds__

        def variant(threads: int, items: int) -> Rewrite:
            tile = threads * items
            needed = f"({found.index.bound} + {tile - 1}) / {tile}"
            resident = resident_blocks(given, threads)
            grid = f"min({needed}, {resident})" if resident is not None else \
                f"({found.index.bound} + {tile * TILES_PER_BLOCK - 1}) / {tile * TILES_PER_BLOCK}"
            return Rewrite(given.source, LaunchConfig((grid,), (str(threads),), given.launch.shared_bytes),
                           f"first index by an index min-reduction with early exit: tiles of {threads}x{items} "
                           "in order, one atomicMin per block",
                           (("threads", threads), ("items", items)),
                           edits(given.source, body_change(located, search_body(found, items))))

        current = [variant(t, i) for t, i in FIRST if t <= limit]
        grid = [variant(t, i) for t in GRID_THREADS for i in GRID_ITEMS if t <= limit]
        return grid_order(current, grid)

    @staticmethod
    def _covers(given: ApplierInput, found: FirstIndexSearch) -> bool:
        """Whether the original launch tests every index of [0, n): a 1-D launch of at least n
        threads (any grid for a grid-stride loop)."""
        launch = given.launch
        if any(value_of(x, given) != 1 for x in (*launch.grid[1:], *launch.block[1:])):
            return False
        if found.form == "grid_stride":
            return True
        return covers_everywhere(given, (launch.grid[0], launch.block[0]), found.index.bound, found.kernel.constants)


def search_body(found: FirstIndexSearch, items: int) -> str:
    p = PREFIX
    r, t = found.result, found.result_type
    index = found.index
    prelude = "\n".join(found.prelude)
    decls = "\n".join(found.decls)
    code = f"""// The least index whose predicate holds: blocks take tiles of blockDim.x x {items} indices in
// increasing order, keep each tile's least hit (warp shuffles, a shared atomicMin per warp) and
// publish it with one atomicMin per block; a block stops once *{r} is at or below its next tile.
{prelude}
__shared__ long long {p}block_best_;
__shared__ int {p}stop_;
const long long {p}n_ = (long long)({index.bound});
const long long {p}span_ = (long long)blockDim.x * {items};
const long long {p}none_ = 0x7fffffffffffffffLL;
for (long long {p}tile_ = (long long)blockIdx.x * {p}span_; {p}tile_ < {p}n_; {p}tile_ += (long long)gridDim.x * {p}span_) {{
    if (threadIdx.x == 0) {{
        {p}block_best_ = {p}none_;
        // every index of this tile (and of this block's later tiles) is at least tile_
        {p}stop_ = *(volatile {t} *){r} <= ({t}){p}tile_;
    }}
    __syncthreads();
    if ({p}stop_) break;
    long long {p}mine_ = {p}none_;
#pragma unroll
    for (int {p}k_ = 0; {p}k_ < {items}; ++{p}k_) {{
        const long long {p}pos_ = {p}tile_ + (long long){p}k_ * blockDim.x + threadIdx.x;
        if ({p}pos_ < {p}n_ && {p}mine_ == {p}none_) {{
            const {index.type} {index.name} = ({index.type}){p}pos_;
{indent_code(decls, 12)}
            if ({found.predicate}) {p}mine_ = {p}pos_;
        }}
    }}
#pragma unroll
    for (int {p}offset_ = 16; {p}offset_ > 0; {p}offset_ >>= 1)
        {p}mine_ = min({p}mine_, __shfl_xor_sync(0xffffffffu, {p}mine_, {p}offset_));
    if ((threadIdx.x & 31u) == 0 && {p}mine_ != {p}none_) atomicMin(&{p}block_best_, {p}mine_);
    __syncthreads();
    if (threadIdx.x == 0 && {p}block_best_ != {p}none_) atomicMin({r}, ({t}){p}block_best_);
    __syncthreads();
}}"""
    return "\n" + indent_code(code) + "\n"
