"""The single-pass prefix scan with decoupled look-back (Merrill and Garland) that replaces a
whole-array scan: the generated kernel body and the `__device__` state it needs.

A `ScanPlan` says what the original computes per position `var` of [lower, end): declarations,
a contribution to the running sum, and statements that use the running sum. The body:

- blocks take tiles of `block * items` positions in order from an atomic ticket (a block loops
  until the tickets run out, so any grid is correct and the grid is only a performance choice);
- each thread loads `items` contributions warp-striped (coalesced), `cub::BlockExchange` turns
  them into a blocked arrangement in shared memory (the warp transpose of
  `cub::BLOCK_LOAD_WARP_TRANSPOSE`), `cub::BlockScan` scans the tile with `items` per thread,
  and the scanned values go back warp-striped, so the statements that use the running sum run
  in coalesced order;
- the first warp publishes the tile's total, then looks back 32 tiles at a time (one per lane)
  for their totals or inclusive prefixes, and publishes the tile's inclusive prefix.

Per tile the state is a flag word (30-bit launch epoch, 2-bit state: 1 total, 2 inclusive) and
two 8-byte value slots, each value written before its flag with a fence. The last block of a
launch resets the ticket and advances the epoch, so flags of earlier launches never read as
current and no launch has to clear anything. Launches of the same kernel must not overlap in
time (different streams); the state is per kernel name, shared by a template's instantiations.
"""

from __future__ import annotations

from dataclasses import dataclass

from regrapht.search.appliers.common import DeviceLimits
from regrapht.search.appliers.cooperative import PREFIX, indent_code

SCAN_BLOCK = 256
# How cub::BlockScan combines a block's warps, by the code a grid point names it with.
SCAN_ALGORITHMS = ("cub::BLOCK_SCAN_WARP_SCANS", "cub::BLOCK_SCAN_RAKING", "cub::BLOCK_SCAN_RAKING_MEMOIZE")
MAX_TILES = 1 << 20  # status words per kernel: 2^32 positions in tiles of 4096
# Types the scan handles (`value_slot` is 8 bytes) and their sizes.
SCANNABLE = {"float": 4, "double": 8, "int": 4, "unsigned int": 4, "unsigned": 4, "long long": 8,
             "long long int": 8, "unsigned long long": 8, "unsigned long long int": 8, "long": 8,
             "unsigned long": 8, "size_t": 8, "int64_t": 8, "uint64_t": 8, "int32_t": 4, "uint32_t": 4}


@dataclass(frozen=True)
class ScanOp:
    """The associative, commutative operator a scan combines with: `+` (the running sum), or the
    running minimum / maximum (`combine`: the function the original calls, e.g. `fminf`, or ""
    for a comparison), each with its identity for the value type."""

    name: str = "sum"  # "sum" | "min" | "max"
    combine: str = ""

    def apply(self, a: str, b: str) -> str:
        """`a` combined with `b`; the comparison form evaluates each twice, so both must be
        expressions without side effects (no shuffles, loads through volatile, calls)."""
        if self.name == "sum":
            return f"{a} + {b}"
        if self.combine:
            return f"{self.combine}({a}, {b})"
        return f"(({b}) < ({a}) ? ({b}) : ({a}))" if self.name == "min" else f"(({a}) < ({b}) ? ({b}) : ({a}))"

    def identity(self, t: str) -> str:
        """The value that changes nothing: 0, or the type's largest (min) / lowest (max) value
        (an infinity for floating types, so an input holding one still scans right)."""
        if self.name == "sum":
            return f"({t})0"
        if t in ("float", "double"):
            return f"{'' if self.name == 'min' else '-'}::cuda::std::numeric_limits<{t}>::infinity()"
        return f"::cuda::std::numeric_limits<{t}>::{'max' if self.name == 'min' else 'lowest'}()"


SUM = ScanOp()


@dataclass(frozen=True)
class ScanPlan:
    """What the single-pass generator needs: per element position `var` in [lower, end), the
    declarations and the contribution to the running sum, and the statements that use the
    running sum (`accumulator`, set to its inclusive or exclusive value first)."""

    kernel: str
    value_type: str  # as the kernel spells it (may be a template parameter)
    var: str
    var_type: str
    lower: str
    end: str
    accumulator: str
    head: str  # before the scan, in every thread (declares the accumulator with its start value)
    position_decls: str  # declared at every position before the declarations (another index name)
    decls: str
    contribution: str
    element_code: str  # per position; `rg_scanned_[rg_k_]`/`rg_values_[rg_k_]` hold its sums
    exclusive: bool  # rg_scanned_ is the sum before the position's own contribution
    tail: str  # once, with the accumulator at the total, in the block of the last tile
    op: ScanOp = SUM  # how positions combine (the running sum unless told)
    # once, in block 0's thread 0, before any tile (positions before `lower` whose loop is empty)
    first: str = ""


def items_per_thread(value_bytes: int, device: DeviceLimits | None, block: int = SCAN_BLOCK) -> int:
    """Positions per thread: 16 of 4 bytes or 8 of 8 (64 bytes in flight per thread), fewer
    when the block's exchange buffer would not fit in the device's shared memory per block."""
    items = 64 // value_bytes
    shared = device.shared_bytes_per_block if device is not None else 48 * 1024
    while items > 1 and block * items * value_bytes + 4096 > shared:
        items //= 2
    return items


def state_globals(kernel: str) -> str:
    p = f"{PREFIX}{kernel}_"
    return (f"// Look-back state of {kernel}'s single-pass scan: per tile a flag (launch epoch, state) and\n"
            f"// its total and inclusive prefix (8-byte slots); the tile ticket, finished blocks, launch epoch.\n"
            f"__device__ unsigned int {p}flag[{MAX_TILES}];\n"
            f"__device__ unsigned long long {p}aggregate[{MAX_TILES}], {p}inclusive[{MAX_TILES}];\n"
            f"__device__ unsigned int {p}ticket, {p}finished, {p}epoch;\n\n")


def single_pass_body(plan: ScanPlan, items: int, block: int = SCAN_BLOCK, algorithm: int = 0) -> str:
    """`block` threads per block (a multiple of 32), `items` per thread, `algorithm` an index
    of `SCAN_ALGORITHMS` (how `cub::BlockScan` combines the warps)."""
    p = PREFIX
    g = f"{PREFIX}{plan.kernel}_"
    t, var_type, x = plan.value_type, plan.var_type, plan.accumulator
    op = plan.op
    zero = op.identity(t)
    tile = block * items
    warp_span = 32 * items
    first = "" if not plan.first else f"""if (blockIdx.x == 0 && threadIdx.x == 0) {{
{indent_code(plan.first)}
}}
"""
    code = f"""// Single-pass scan: blocks take tiles of {tile} positions in order (atomic ticket), load them
// warp-striped, scan them with cub::BlockScan ({items} per thread) and find the tile's prefix by
// looking back at earlier tiles, 32 at a time.
{plan.head}
static_assert(sizeof({t}) <= sizeof(unsigned long long), "look-back slots hold 8 bytes");
{_cub_tile_types(t, items, block, algorithm, op)}
__shared__ unsigned int {p}tile_shared_, {p}epoch_shared_;
__shared__ {t} {p}prefix_shared_;
const {t} {p}start_ = {x};
const long long {p}lower_ = (long long)({plan.lower}), {p}upper_ = (long long)({plan.end});
const long long {p}tiles_ = {p}upper_ > {p}lower_ ? ({p}upper_ - {p}lower_ + {tile - 1}) / {tile} : 0;
if ({p}tiles_ > {MAX_TILES}) __trap();  // more tiles than status words
const unsigned int {p}lane_ = threadIdx.x & 31u, {p}warp_ = threadIdx.x >> 5;
if (threadIdx.x == 0) {p}epoch_shared_ = *(volatile unsigned int *)&{g}epoch;
__syncthreads();
const unsigned int {p}tag_ = ({p}epoch_shared_ % 0x3fffffffu) + 1u;  // 30 bits, never 0 (a cleared flag)
if ({p}tiles_ == 0 && blockIdx.x == 0 && threadIdx.x == 0) {{
{indent_code(plan.tail)}
}}
{first}while (true) {{
    if (threadIdx.x == 0) {p}tile_shared_ = atomicAdd(&{g}ticket, 1u);
    __syncthreads();
    const long long {p}tile_ = {p}tile_shared_;
    if ({p}tile_ >= {p}tiles_) break;
    // Warp-striped positions: warp w holds [w * {warp_span}, (w + 1) * {warp_span}) of the tile.
{_load_and_scan(plan, items, f"{p}lower_ + {p}tile_ * {tile} + (long long){p}warp_ * {warp_span} + {p}lane_", 4)}
    if ({p}warp_ == 0) {{
        {t} {p}exclusive_ = {zero};
        if ({p}tile_ == 0) {{
            if ({p}lane_ == 0) {{
                *(volatile {t} *)&{g}inclusive[0] = {p}tile_total_;
                __threadfence();
                atomicExch(&{g}flag[0], ({p}tag_ << 2) | 2u);
            }}
        }} else {{
            if ({p}lane_ == 0) {{
                *(volatile {t} *)&{g}aggregate[{p}tile_] = {p}tile_total_;
                __threadfence();
                atomicExch(&{g}flag[{p}tile_], ({p}tag_ << 2) | 1u);
            }}
            // Lane l looks at tile (end - l); the nearest inclusive prefix ends the walk.
            for (long long {p}end_ = {p}tile_ - 1; ; {p}end_ -= 32) {{
                const long long {p}look_ = {p}end_ - (long long){p}lane_;
                unsigned int {p}state_ = 2u;
                {t} {p}found_ = {zero};
                if ({p}look_ >= 0) {{
                    do {{
                        {p}state_ = *(volatile unsigned int *)&{g}flag[{p}look_];
                    }} while (({p}state_ >> 2) != {p}tag_);
                    __threadfence();
                    {p}state_ &= 3u;
                    {p}found_ = {p}state_ == 2u ? *(volatile {t} *)&{g}inclusive[{p}look_]
                                                : *(volatile {t} *)&{g}aggregate[{p}look_];
                }}
                const unsigned int {p}done_ = __ballot_sync(0xffffffffu, {p}state_ == 2u);
                if ({p}done_ != 0u && {p}lane_ > (unsigned int)(__ffs({p}done_) - 1)) {p}found_ = {zero};
#pragma unroll
                for (int {p}offset_ = 16; {p}offset_ > 0; {p}offset_ >>= 1) {{
                    // every lane shuffles, unconditionally: a comparison operator names its
                    // arguments twice, and a __shfl_xor_sync on one side of `?:` would be
                    // reached by some lanes only (a warp-synchronous hang)
                    const {t} {p}other_ = __shfl_xor_sync(0xffffffffu, {p}found_, {p}offset_);
                    {_combined(op, f"{p}found_", f"{p}other_")}
                }}
                {_combined(op, f"{p}exclusive_", f"{p}found_")}
                if ({p}done_ != 0u) break;
            }}
            if ({p}lane_ == 0) {{
                *(volatile {t} *)&{g}inclusive[{p}tile_] = {op.apply(f"{p}exclusive_", f"{p}tile_total_")};
                __threadfence();
                atomicExch(&{g}flag[{p}tile_], ({p}tag_ << 2) | 2u);
            }}
        }}
        if ({p}lane_ == 0) {p}prefix_shared_ = {p}exclusive_;
    }}
    __syncthreads();
    {p}exchange_t_({p}temp_.exchange).BlockedToWarpStriped({p}scanned_);
    const {t} {p}prefix_ = {op.apply(f"{p}start_", f"{p}prefix_shared_")};
#pragma unroll
    for (int {p}k_ = 0; {p}k_ < {items}; ++{p}k_) {{
        const long long {p}pos_ = {p}first_ + {p}k_ * 32;
        if ({p}pos_ < {p}upper_) {{
            const {var_type} {plan.var} = ({var_type}){p}pos_;
{indent_code(plan.position_decls, 12)}
{indent_code(plan.element_code, 12)}
        }}
    }}
    if ({p}tile_ == {p}tiles_ - 1 && threadIdx.x == 0) {{
        {x} = {op.apply(f"{p}prefix_", f"{p}tile_total_")};
{indent_code(plan.tail, 8)}
    }}
    __syncthreads();
}}
// The last block to finish readies the ticket for the next launch and advances the epoch.
if (threadIdx.x == 0) {{
    __threadfence();
    if (atomicAdd(&{g}finished, 1u) == gridDim.x - 1) {{
        {g}ticket = 0;
        {g}finished = 0;
        atomicAdd(&{g}epoch, 1u);
        __threadfence();
    }}
}}"""
    return "\n" + indent_code(code) + "\n"


def row_tiles_body(plan: ScanPlan, items: int, item: str, item_type: str, bound: str, kept: str,
                   block: int = SCAN_BLOCK, algorithm: int = 0) -> str:
    """A block per item (row) scanning its [lower, end) in tiles of `block * items`
    positions: warp-striped loads, `cub::BlockExchange` to a blocked arrangement,
    `cub::BlockScan` with `items` per thread, back to warp-striped for the element statements,
    and the tile's total carried to the next tile. Statements after the loop (`plan.tail`) run
    once per item, on thread 0, with the accumulator at the row's total."""
    p = PREFIX
    t, var_type, x = plan.value_type, plan.var_type, plan.accumulator
    tile = block * items
    warp_span = 32 * items
    code = f"""// One block per row: tiles of {tile} positions loaded warp-striped (coalesced), scanned by
// cub::BlockScan ({items} per thread) after a cub::BlockExchange, the tile total carried on.
{kept}
{_cub_tile_types(t, items, block, algorithm, plan.op)}
const unsigned int {p}lane_ = threadIdx.x & 31u, {p}warp_ = threadIdx.x >> 5;
for (long long {p}item_ = blockIdx.x; {p}item_ < (long long)({bound}); {p}item_ += gridDim.x) {{
    const {item_type} {item} = ({item_type}){p}item_;
{indent_code(plan.head)}
    {t} {p}carry_ = {x};
    const long long {p}lower_ = (long long)({plan.lower}), {p}upper_ = (long long)({plan.end});
    for (long long {p}tile_ = {p}lower_; {p}tile_ < {p}upper_; {p}tile_ += {tile}) {{
{_load_and_scan(plan, items, f"{p}tile_ + (long long){p}warp_ * {warp_span} + {p}lane_", 8)}
        __syncthreads();
        {p}exchange_t_({p}temp_.exchange).BlockedToWarpStriped({p}scanned_);
        const {t} {p}prefix_ = {p}carry_;
#pragma unroll
        for (int {p}k_ = 0; {p}k_ < {items}; ++{p}k_) {{
            const long long {p}pos_ = {p}first_ + {p}k_ * 32;
            if ({p}pos_ < {p}upper_) {{
                const {var_type} {plan.var} = ({var_type}){p}pos_;
{indent_code(plan.position_decls, 16)}
{indent_code(plan.element_code, 16)}
            }}
        }}
        {p}carry_ = {plan.op.apply(f"{p}carry_", f"{p}tile_total_")};
        __syncthreads();
    }}
    if (threadIdx.x == 0) {{
        {x} = {p}carry_;
{indent_code(plan.tail, 8)}
    }}
}}"""
    return "\n" + indent_code(code) + "\n"


def _load_and_scan(plan: ScanPlan, items: int, first: str, indent: int) -> str:
    """One tile's positions from `first` on, `items` per thread 32 apart (warp-striped: coalesced),
    each position's contribution computed by the kernel's own statements (0 past the end), then
    blocked by `cub::BlockExchange` and scanned by `cub::BlockScan` into `scanned_` with the
    tile's total; `values_` keeps the contributions. Indented by `indent` spaces (pragmas at 0)."""
    p = PREFIX
    t, var_type = plan.value_type, plan.var_type
    decls = (plan.position_decls + "\n" + plan.decls).strip()
    i = " " * indent
    op = plan.op
    if op.name == "sum":
        scan = f"{'ExclusiveSum' if plan.exclusive else 'InclusiveSum'}({p}scanned_, {p}scanned_, {p}tile_total_)"
    else:  # a functor of the generated code, `scan_op_` (`_op_functor`)
        scan = (f"ExclusiveScan({p}scanned_, {p}scanned_, {op.identity(t)}, {p}scan_op_(), {p}tile_total_)"
                if plan.exclusive else f"InclusiveScan({p}scanned_, {p}scanned_, {p}scan_op_(), {p}tile_total_)")
    return f"""{i}const long long {p}first_ = {first};
{i}{t} {p}values_[{items}], {p}scanned_[{items}];
#pragma unroll
{i}for (int {p}k_ = 0; {p}k_ < {items}; ++{p}k_) {{
{i}    const long long {p}pos_ = {p}first_ + {p}k_ * 32;
{i}    {t} {p}value_ = {op.identity(t)};
{i}    if ({p}pos_ < {p}upper_) {{
{i}        const {var_type} {plan.var} = ({var_type}){p}pos_;
{indent_code(decls, indent + 8)}
{i}        {p}value_ = ({plan.contribution});
{i}    }}
{i}    {p}values_[{p}k_] = {p}value_;
{i}    {p}scanned_[{p}k_] = {p}value_;
{i}}}
{i}{p}exchange_t_({p}temp_.exchange).WarpStripedToBlocked({p}scanned_);
{i}__syncthreads();
{i}{t} {p}tile_total_;
{i}{p}scan_t_({p}temp_.scan).{scan};"""


def _combined(op: ScanOp, target: str, value: str) -> str:
    """`target` combined with `value` in place: `a += b;` for a sum, `a = min(a, b);` otherwise."""
    return f"{target} += {value};" if op.name == "sum" else f"{target} = {op.apply(target, value)};"


def _op_functor(t: str, op: ScanOp) -> str:
    """The scan operator as a functor type `cub::BlockScan` takes (a local struct; "" for a sum,
    which CUB's own ExclusiveSum/InclusiveSum do)."""
    if op.name == "sum":
        return ""
    p = PREFIX
    return (f"struct {p}scan_op_ {{\n    __device__ __forceinline__ {t} operator()(const {t} &a, const {t} &b) const "
            f"{{ return {op.apply('a', 'b')}; }}\n}};\n")


def _cub_tile_types(t: str, items: int, block: int = SCAN_BLOCK, algorithm: int = 0, op: ScanOp = SUM) -> str:
    """The CUB exchange and block-scan types of a tile and their shared storage (one union: the
    exchange and the scan are never live at the same time), and the operator's functor."""
    p = PREFIX
    return _op_functor(t, op) + f"""typedef cub::BlockExchange<{t}, {block}, {items}> {p}exchange_t_;
typedef cub::BlockScan<{t}, {block}, {SCAN_ALGORITHMS[algorithm]}> {p}scan_t_;
__shared__ union {{
    typename {p}exchange_t_::TempStorage exchange;
    typename {p}scan_t_::TempStorage scan;
}} {p}temp_;"""
