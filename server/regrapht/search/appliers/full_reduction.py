"""Whole-array reductions -> grid-stride partial sums, `cub::BlockReduce`, one atomic per block.

Matches (through `idioms.reductions.full_reduction`) kernels that combine one value per element
of [0, N) into a single address with `atomicAdd`/`atomicMax`/`atomicMin`: one atomic per
element (thousands of threads serialised on one address), or one per thread after a
grid-stride or chunked private loop (chunks make a warp read 32 cache lines per step). The
rewrite keeps each element's own statements verbatim, visits elements with a coalesced
grid-stride loop that keeps four independent loads in flight (or 16-byte `float4` loads when
the contribution is a plain `float` load from an aligned array), combines the block with
`cub::BlockReduce` and issues one atomic per block.

Also matches one thread reducing the whole array (`if (threadIdx.x == 0 && blockIdx.x == 0)
{ for (...) s += x[i]; *out = s; }`, `idioms.items.single_program`): there the output is not
an accumulator, so the rewrite runs one 1024-thread block with the same CUB combine.

Also matches a per-block sum, maximum or minimum through a shared-memory tree ending in one
thread's store or atomic (`if (tid == 0) out[blockIdx.x] = sdata[0];`, `if (tid == 0)
atomicAdd(out, sdata[0]);`, `atomicMax` of ints; `block_partials.py`): the same final statement,
the block combined by `cub::BlockReduce`.

Launch: enough blocks to fill the device once or twice (`DeviceLimits`: SMs x blocks per SM); without
a known device, 16 or 64 elements per thread.

Parameter grid (after the earlier variants, unchanged): block size x loads in flight (float4
loads, or the scalar loop unrolled 1-8x) x grid fill; the one-thread form, one block of each size.
"""

from __future__ import annotations

from regrapht.idioms.items import single_program
from regrapht.idioms.reductions import FullReduction, full_reduction
from regrapht.idioms.syntax import identifiers_in, kernel_syntax, subscript_parts, text, unparen
from regrapht.search.appliers.block_partials import block_partial_rewrites
from regrapht.search.appliers.common import ApplierInput, Rewrite, block_dims, body_change, ceil_parts, edits
from regrapht.search.appliers.cooperative import (
    PREFIX,
    Group,
    cooperative_body,
    covers_everywhere,
    cub_change,
    indent_code,
    plain_type,
    resident_blocks,
    runs_once,
    template_arguments,
    value_of,
)
from regrapht.search.appliers.grid import grid_order, thread_limit
from regrapht.search.source import find_kernel
from regrapht.spec.expr import names_in
from regrapht.spec.launch import LaunchConfig

BLOCK = 256
UNROLL = 4
GRID_BLOCKS = (128, 256, 512, 1024)
GRID_UNROLLS = (1, 2, 4, 8)
SUMMABLE = frozenset({"float", "double", "int", "unsigned int", "unsigned", "unsigned long long", "long long"})
ORDERED = frozenset({"int", "unsigned int", "unsigned", "unsigned long long", "long long"})


def _one_dimensional(given: ApplierInput) -> bool:
    extra = (*given.launch.grid[1:], *given.launch.block[1:])
    return all(value_of(x, given) == 1 for x in extra)


def covers(given: ApplierInput, found: FullReduction) -> bool:
    """Whether the original launch visits every element of [0, N) exactly once."""
    if not _one_dimensional(given):
        return False
    if found.form == "grid_stride":
        return True
    if found.form == "block_stride":
        return value_of(given.launch.grid[0], given) == 1  # one block strides over the whole array
    factors = (given.launch.grid[0], given.launch.block[0])
    macros = found.kernel.constants
    if found.form == "chunked":
        return covers_everywhere(given, (*factors, found.chunk or ""), found.count, macros)
    dims = block_dims(given.launch)
    parts = ceil_parts(given.launch.grid[0])
    if dims is not None and parts is not None and parts[1] == dims[0] and \
            " ".join(parts[0].split()) == found.count:
        return True
    return covers_everywhere(given, factors, found.count, macros)


def _count_expr(given: ApplierInput, found: FullReduction) -> str | None:
    scalars = set(found.kernel.scalars)
    if names_in(found.count) <= scalars:
        return found.count
    value = value_of(found.count, dict(found.kernel.constants))
    return str(value) if value is not None else None


def _identity(found: FullReduction) -> str:
    value_type = found.value_type
    if found.op == "sum":
        return f"({value_type})0"
    if found.start is not None:
        return f"({value_type})({text(found.start)})"  # the original's per-thread start, combined once
    limit = "lowest" if found.op == "max" else "max"
    return f"::cuda::std::numeric_limits<{value_type}>::{limit}()"


def _element(found: FullReduction, position: str, accumulator: str) -> str:
    """One element's statements with the element index declared as in the original."""
    value_type = found.value_type
    element_type = plain_type(found.element_type)
    update = (f"{accumulator} += ({value_type})({text(found.contribution)});" if found.op == "sum" else
              f"{accumulator} = {found.op}({accumulator}, ({value_type})({text(found.contribution)}));")
    if found.condition is not None:
        update = f"if ({text(found.condition)}) {update}"
    lines = [f"const {element_type} {found.element} = ({element_type})({position});",
             *(text(s) for s in found.statements), update]
    return "{\n" + indent_code("\n".join(lines)) + "\n}"


def _scalar_loop(found: FullReduction, count: str, unroll: int = UNROLL) -> str:
    stride = f"{PREFIX}stride_"
    accs = [f"{PREFIX}acc{u}_" for u in range(unroll)]
    unrolled = "\n".join(_element(found, f"{PREFIX}e_" + (f" + {u} * {stride}" if u else ""), acc)
                         for u, acc in enumerate(accs))
    combine = accs[0]
    for acc in accs[1:]:
        combine = f"{combine} + {acc}" if found.op == "sum" else f"{found.op}({combine}, {acc})"
    identity = _identity(found)
    return f"""// Coalesced grid-stride loop, {unroll} independent elements (loads in flight) per iteration.
{found.value_type} {", ".join(f"{a} = {identity}" for a in accs)};
const long long {stride} = (long long)blockDim.x * gridDim.x;
const long long {PREFIX}count_ = (long long)({count});
long long {PREFIX}e_ = (long long)blockIdx.x * blockDim.x + threadIdx.x;
for (; {PREFIX}e_ + {unroll - 1} * {stride} < {PREFIX}count_; {PREFIX}e_ += {unroll} * {stride}) {{
{indent_code(unrolled)}
}}
for (; {PREFIX}e_ < {PREFIX}count_; {PREFIX}e_ += {stride})
{indent_code(_element(found, PREFIX + "e_", accs[0]))}
{found.value_type} {PREFIX}acc_ = {combine};"""


def _plain_float_load(found: FullReduction) -> str | None:
    """The array of a contribution that is exactly `P[i]` of a float pointer, with nothing else."""
    node = unparen(found.contribution)
    if found.statements or found.condition is not None or found.value_type != "float" or node is None or \
            node.type != "subscript_expression":
        return None
    base, indices = subscript_parts(node)
    base = unparen(base)
    if base is None or len(indices) != 1 or text(unparen(indices[0])) != found.element:
        return None
    param = found.kernel.param(text(base))
    return param.name if param is not None and param.is_pointer and param.base_type == "float" else None


def _vector_loop(array: str, count: str) -> str:
    p = PREFIX
    return f"""// 16-byte loads (when the array is 16-byte aligned), two in flight per iteration, scalar tail.
float {p}acc_ = 0.0f, {p}acc1_ = 0.0f;
const long long {p}first_ = (long long)blockIdx.x * blockDim.x + threadIdx.x;
const long long {p}stride_ = (long long)blockDim.x * gridDim.x;
const long long {p}count_ = (long long)({count});
const long long {p}vectors_ = (reinterpret_cast<unsigned long long>({array}) & 15) == 0 ? {p}count_ / 4 : 0;
const float4 *{p}vec_ = reinterpret_cast<const float4 *>({array});
long long {p}v_ = {p}first_;
for (; {p}v_ + {p}stride_ < {p}vectors_; {p}v_ += 2 * {p}stride_) {{
    const float4 {p}a_ = {p}vec_[{p}v_], {p}b_ = {p}vec_[{p}v_ + {p}stride_];
    {p}acc_ += ({p}a_.x + {p}a_.y) + ({p}a_.z + {p}a_.w);
    {p}acc1_ += ({p}b_.x + {p}b_.y) + ({p}b_.z + {p}b_.w);
}}
if ({p}v_ < {p}vectors_) {{
    const float4 {p}a_ = {p}vec_[{p}v_];
    {p}acc_ += ({p}a_.x + {p}a_.y) + ({p}a_.z + {p}a_.w);
}}
for (long long {p}e_ = {p}vectors_ * 4 + {p}first_; {p}e_ < {p}count_; {p}e_ += {p}stride_)
    {p}acc_ += {array}[{p}e_];
{p}acc_ += {p}acc1_;"""


def _fills(given: ApplierInput) -> tuple[tuple[str, int], ...]:
    """How full the grid is: waves of the device's resident blocks (1, 2), or without a device,
    elements per thread (16, 64)."""
    if given.device is not None:
        return (("waves", 1), ("waves", 2))
    return (("elements_per_thread", 16), ("elements_per_thread", 64))


def _variant(given: ApplierInput, found: FullReduction, count: str, array: str | None, vector: int, unroll: int,
             threads: int, fill: tuple[str, int]) -> Rewrite:
    """One grid point: `vector` elements per load (4: float4 loads of `array`, two in flight;
    1: the scalar loop unrolled `unroll` times), `threads` per block, the grid as `fill` says."""
    located = find_kernel(given.source, given.kernel)
    assert located is not None
    if vector == 4 and array is not None:
        body, how = _body(found, _vector_loop(array, count), threads), "float4 grid-stride loads"
    else:
        body, how = _body(found, _scalar_loop(found, count, unroll), threads), f"grid-stride loop unrolled {unroll}x"
    name, k = fill
    resident = resident_blocks(given, threads)
    if name == "waves" and resident is not None:
        per_block = threads * vector
        grid = f"min(({count} + {per_block - 1}) / {per_block}, {resident * k})"
    else:
        grid = f"({count} + {threads * k - 1}) / {threads * k}"
    note = f"{how} + cub::BlockReduce, one {found.atomic} per block, grid {grid}"
    if threads != BLOCK:
        note += f", {threads} threads"
    return Rewrite(given.source, LaunchConfig((grid,), (str(threads),), given.launch.shared_bytes), note,
                   (("vector", vector), ("unroll", unroll), fill),
                   edits(given.source, *cub_change(given.source), body_change(located, body)))


def _finish(found: FullReduction) -> str:
    value_type = found.value_type
    reduce = f"{PREFIX}block_reduce_"
    total = f"{reduce}({PREFIX}temp_).Sum({PREFIX}acc_)" if found.op == "sum" else \
        f"{reduce}({PREFIX}temp_).Reduce({PREFIX}acc_, {PREFIX}op_())"
    return f"""
// The block's partial results combined by CUB; one atomic per block instead of one per element.
const {value_type} {PREFIX}total_ = {total};
if (threadIdx.x == 0)
    {found.atomic}({text(found.target)}, {PREFIX}total_);"""


def _body(found: FullReduction, loop: str, threads: int = BLOCK) -> str:
    value_type = found.value_type
    head = [text(d) for d in found.kept_prelude]
    head.append(f"typedef cub::BlockReduce<{value_type}, {threads}> {PREFIX}block_reduce_;")
    head.append(f"__shared__ typename {PREFIX}block_reduce_::TempStorage {PREFIX}temp_;")
    if found.op != "sum":
        head.append(f"struct {PREFIX}op_ {{ __device__ __forceinline__ {value_type} operator()(const {value_type} &a, "
                    f"const {value_type} &b) const {{ return {found.op}(a, b); }} }};")
    return "\n" + indent_code("\n".join(head) + "\n" + loop + "\n" + _finish(found)) + "\n"


class BlockReduceAtomic:
    technique = "block_reduce_atomic"
    also: tuple[str, ...] = ("warp_shuffle_reduction", "atomic_reduction", "memory_coalescing")

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        kernel = kernel_syntax(given.source, given.kernel)
        located = find_kernel(given.source, given.kernel)
        if kernel is None or located is None:
            return []
        found = full_reduction(kernel)
        if found is None:
            return self._single_thread(given, kernel, located) or block_partial_rewrites(given, kernel, located)
        # a template parameter counts as the type the spec's instance gives it (`reduce_sum<float>`)
        instance = template_arguments(given.kernel, kernel.template_parameters)
        usable = instance.get(found.value_type, found.value_type) in (SUMMABLE if found.op == "sum" else ORDERED)
        if not usable or any(n.startswith(PREFIX) for n in identifiers_in(kernel.body)) or not covers(given, found):
            return []
        count = _count_expr(given, found)
        if count is None:
            return []
        array = _plain_float_load(found)
        return grid_order(self._current(given, found, count, array), self._grid(given, found, count, array))

    @staticmethod
    def _current(given: ApplierInput, found: FullReduction, count: str, array: str | None) -> list[Rewrite]:
        """The variants offered before the grid, in their order: float4 loads (plain float
        loads only) at one wave, then the 4x unrolled scalar loop at one wave (and two, alone)."""
        shapes = ([(4, 2)] if array is not None else []) + [(1, UNROLL)]
        rewrites = []
        for vector, unroll in shapes:
            for fill in _fills(given)[: 2 if len(shapes) == 1 else 1]:
                rewrites.append(_variant(given, found, count, array, vector, unroll, BLOCK, fill))
        return rewrites

    @staticmethod
    def _grid(given: ApplierInput, found: FullReduction, count: str, array: str | None) -> list[Rewrite]:
        """Block size x (loads per thread in flight: float4 loads two at a time, or a scalar
        loop unrolled 1-8x; 1x only without float4 loads) x grid fill (waves of resident
        blocks, or elements per thread without a device)."""
        shapes = [(4, 2)] if array is not None else []
        shapes += [(1, u) for u in GRID_UNROLLS if array is None or u > 1]
        limit = thread_limit(given)  # the device's, and the kernel's __launch_bounds__
        return [_variant(given, found, count, array, vector, unroll, threads, fill)
                for vector, unroll in shapes for threads in GRID_BLOCKS if threads <= limit for fill in _fills(given)]

    @staticmethod
    def _single_thread(given: ApplierInput, kernel: object, located: object) -> list[Rewrite]:
        from regrapht.idioms.syntax import KernelSyntax
        from regrapht.search.source import KernelText

        assert isinstance(kernel, KernelSyntax) and isinstance(located, KernelText)
        program = single_program(kernel)
        if program is None or any(loop.scan is not None or loop.writes for loop in program.loops):
            return []
        if not runs_once(given, program.single) or not _one_dimensional(given):
            return []
        # One block whatever its size: 1024 threads first (as before the grid), then smaller
        # blocks, which finish their combine sooner on short arrays.
        limit = thread_limit(given)  # the device's, and the kernel's __launch_bounds__
        rewrites = []
        for threads in (1024, *(t for t in GRID_BLOCKS if t < 1024)):
            body = cooperative_body(program, Group("block", threads)) if threads == 1024 or threads <= limit else None
            if body is None:
                continue
            launch = LaunchConfig(("1",), (str(threads),), given.launch.shared_bytes)
            rewrites.append(Rewrite(given.source, launch,
                                    f"one {threads}-thread block instead of one thread, cub::BlockReduce",
                                    (("one_block", 1),), edits=edits(given.source, *cub_change(given.source), body_change(located, body))))
        return grid_order(rewrites[:1], rewrites[1:])
