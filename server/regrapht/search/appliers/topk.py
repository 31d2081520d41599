"""Row top-k with one thread per row (`idioms.topk.row_topk`) -> one warp per row.

Each lane runs the original insertion on its own columns (lane, lane + 32, ...: coalesced reads
across the warp, in increasing order, so each lane's list is the stable top k of its columns),
then k rounds of a warp arg-max over the heads of the lanes' lists (value first, then the
earlier column, then the lower lane: a total order, so every lane agrees on the winner) merge
them; the winner's lane moves to its next entry. The global stable top k is the first k of that
merge, because it lies in the union of the lanes' top k. Lane 0 then runs the original stores.
The lists are indexed by constants only in the merge (unrolled), so they can stay in registers.
"""

from __future__ import annotations

from regrapht.idioms.syntax import kernel_syntax, text, walk
from regrapht.idioms.topk import RowTopK, row_topk
from regrapht.search.appliers.common import ApplierInput, Rewrite, block_dims, body_edits, ceil_parts
from regrapht.search.appliers.cooperative import (
    PREFIX,
    SHUFFLE_TYPES,
    covers_everywhere,
    indent_code,
    plain_type,
)
from regrapht.search.appliers.scan import resolved_type
from regrapht.search.source import find_kernel
from regrapht.spec.expr import names_in
from regrapht.spec.launch import LaunchConfig

WARPS_PER_BLOCK = 8


class WarpTopK:
    technique = "block_per_row"
    also: tuple[str, ...] = ("warp_shuffle_reduction", "memory_coalescing")

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        kernel = kernel_syntax(given.source, given.kernel)
        located = find_kernel(given.source, given.kernel)
        if kernel is None or located is None or any(
                text(n).startswith(PREFIX) for n in walk(kernel.function) if n.type == "identifier"):
            return []
        found = row_topk(kernel)
        if found is None or not self._covers(given, found):
            return []
        value_type = resolved_type(found.value_type, kernel, given.kernel)
        id_type = resolved_type(found.id_type, kernel, given.kernel)
        if value_type not in SHUFFLE_TYPES or id_type not in SHUFFLE_TYPES:
            return []
        kept = _kept_prelude(found)
        if kept is None:
            return []
        bound = " ".join(found.item.bound.split())
        scalars = set(kernel.scalars)
        if not names_in(bound) <= scalars:
            constant = found.item.bound_poly.constant
            if constant is None or constant <= 0:
                return []
            bound = str(constant)
        body = _warp_body(found, kept)
        grid = f"({bound} + {WARPS_PER_BLOCK - 1}) / {WARPS_PER_BLOCK}"
        launch = LaunchConfig((grid,), (str(32 * WARPS_PER_BLOCK),), given.launch.shared_bytes)
        return [Rewrite(given.source, launch,
                        f"one warp per row: per-lane top {found.k} lists merged by {found.k} warp arg-max rounds", edits=body_edits(given, located, body))]

    @staticmethod
    def _covers(given: ApplierInput, found: RowTopK) -> bool:
        """The original launch has one thread per row (1-D, ceil(rows / block) blocks, or any
        grid for a grid-stride loop)."""
        launch = given.launch
        if len(launch.block) > 1 or len(launch.grid) > 1:
            return False
        if found.mapping.form == "grid_stride":
            return True
        dims = block_dims(launch)
        parts = ceil_parts(launch.grid[0]) if launch.grid else None
        if dims is not None and parts is not None and parts[1] == dims[0] and \
                " ".join(parts[0].split()) == " ".join(found.item.bound.split()):
            return True
        return covers_everywhere(given, (launch.grid[0], launch.block[0]), found.item.bound, found.kernel.constants)


def _kept_prelude(found: RowTopK) -> str | None:
    """Declarations before the row guard that the work uses (none may depend on the thread)."""
    used = {text(n) for s in found.mapping.work for n in walk(s) if n.type == "identifier"}
    kept = []
    for declaration in found.mapping.prelude:
        names = {text(d.child_by_field_name("declarator") or d) for d in declaration.children_by_field_name("declarator")}
        if not names & used or names <= {found.item.name}:
            continue
        if any(n.type == "identifier" and text(n) in ("threadIdx", "blockIdx", "blockDim", "gridDim")
               for n in walk(declaration)):
            return None
        kept.append(text(declaration))
    return "\n".join(kept)


def _warp_body(found: RowTopK, kept: str) -> str:
    p = PREFIX
    k, v, i = found.k, found.values, found.ids
    vt, it = plain_type(found.value_type), plain_type(found.id_type)
    item_type = plain_type(found.item.type)
    declarations = "\n".join(text(d) for d in found.declarations)
    body = "\n".join(text(s) for s in found.body)
    code = f"""// One warp per row: each lane keeps the top {k} of its own columns with the original insertion,
// then {k} rounds of a warp arg-max over the lanes' list heads (larger value, then earlier
// column, then lower lane) merge the lists; lane 0 stores the row's result.
{kept}
const int {p}lane_ = threadIdx.x & 31;
for (long long {p}item_ = (long long)blockIdx.x * {WARPS_PER_BLOCK} + (threadIdx.x >> 5);
     {p}item_ < (long long)({" ".join(found.item.bound.split())}); {p}item_ += (long long)gridDim.x * {WARPS_PER_BLOCK}) {{
    const {item_type} {found.item.name} = ({item_type}){p}item_;
{indent_code(declarations)}
{indent_code(text(found.init))}
    for ({found.var_type} {found.var} = ({found.lower}) + {p}lane_; {found.var} < ({found.upper}); {found.var} += 32) {{
{indent_code(body, 8)}
    }}
    {vt} {p}best_v_[{k}];
    {it} {p}best_i_[{k}];
    int {p}head_ = 0;
#pragma unroll
    for (int {p}round_ = 0; {p}round_ < {k}; ++{p}round_) {{
        {vt} {p}v_ = ({vt})({found.start_value});
        {it} {p}i_ = ({it})({found.start_id});
#pragma unroll
        for (int {p}q_ = 0; {p}q_ < {k}; ++{p}q_) {{
            if ({p}q_ == {p}head_) {{
                {p}v_ = {v}[{p}q_];
                {p}i_ = {i}[{p}q_];
            }}
        }}
        int {p}l_ = {p}lane_;
#pragma unroll
        for (int {p}offset_ = 16; {p}offset_ > 0; {p}offset_ >>= 1) {{
            const {vt} {p}ov_ = __shfl_xor_sync(0xffffffffu, {p}v_, {p}offset_);
            const {it} {p}oi_ = __shfl_xor_sync(0xffffffffu, {p}i_, {p}offset_);
            const int {p}ol_ = __shfl_xor_sync(0xffffffffu, {p}l_, {p}offset_);
            if ({p}ov_ > {p}v_ || ({p}ov_ == {p}v_ && ({p}oi_ < {p}i_ || ({p}oi_ == {p}i_ && {p}ol_ < {p}l_)))) {{
                {p}v_ = {p}ov_;
                {p}i_ = {p}oi_;
                {p}l_ = {p}ol_;
            }}
        }}
        if ({p}l_ == {p}lane_) ++{p}head_;
        {p}best_v_[{p}round_] = {p}v_;
        {p}best_i_[{p}round_] = {p}i_;
    }}
#pragma unroll
    for (int {p}q_ = 0; {p}q_ < {k}; ++{p}q_) {{
        {v}[{p}q_] = {p}best_v_[{p}q_];
        {i}[{p}q_] = {p}best_i_[{p}q_];
    }}
    if ({p}lane_ == 0) {{
{indent_code(text(found.output), 8)}
    }}
}}"""
    return "\n" + indent_code(code) + "\n"
