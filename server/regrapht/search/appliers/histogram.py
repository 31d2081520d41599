"""Histograms (few and many bins) -> counts privatised per block (or per warp) in shared memory.

Recognised on the source model (`idioms/histogram.py`): a one-coordinate point kernel whose only
effect is one `atomicAdd` into a counts array nothing else touches, with the bin computed in any
pure way. The number of bins is the counts array's element count from the spec (only when it
does not depend on the problem size, so the odd-size check cannot change it).

Rewrites, most promising first:
- the byte histogram (`atomicAdd(&counts[data[i]], 1)` on `unsigned char` data): a grid-stride
  loop over 16-byte `uint4` loads (when `data` is 16-byte aligned; a scalar loop covers the rest
  and the tail), one shared 256-bin histogram per warp, summed and added once per block;
- batched (the atomic is a statement of its own): a grid-stride loop that computes the bins of
  BATCH points, all their loads in flight together, before their shared atomics; per-warp copies
  for few bins, one per block otherwise. Without it a thread waits for each point's load in turn:
  the compiler does not move the next point's global loads above the previous shared atomic;
- few bins (at most 1024, and the copies fit): one shared copy of the counts per warp, so a warp's
  atomics contend only with its own lanes; a grid-stride loop over the points;
- any bin count whose counts fit in shared memory (half of the device's per-block shared
  memory): one shared copy per block, grid-stride, then the same without the grid-stride loop.
Each block adds its non-zero counts to the global ones once at the end. The grid of the
grid-stride variants is the device's resident blocks (SM count x blocks per SM); without a
device, one block per 16 blocks' worth of points. More bins than fit (a scatter into a large
array) get no rewrite: privatising them would cost more than the atomics it saves.

Then the parameter grid: (uint4 byte loads) x copies per block or per warp x block size x points
per thread in flight, in lexicographic order.
"""

from __future__ import annotations

from regrapht.idioms.histogram import WIDE_COUNTER_TYPES, Histogram, histogram
from regrapht.idioms.pointwise import PointKernel, fresh
from regrapht.search.appliers.common import ApplierInput, DeviceLimits, Rewrite, body_edits
from regrapht.search.appliers.grid import grid_order, thread_limit
from regrapht.search.appliers.points import point_view, prelude
from regrapht.search.source import KernelText
from regrapht.spec.launch import LaunchConfig

THREADS = 256
FEW_BINS = 1024
STATIC_SHARED = 48 * 1024  # static __shared__ arrays are limited to this on every GPU
BYTE_THREADS = (256, 512, 1024)
POINTS_PER_THREAD = 16  # without a device: enough work per thread to amortise the flush
BATCH = 4  # points whose loads a thread issues before their atomics (memory-level parallelism)
GRID_THREADS = (128, 256, 512, 1024)
GRID_BATCHES = (1, 2, 4, 8)


class PrivatisedHistogram:
    technique = "shared_memory_privatization"
    also: tuple[str, ...] = ("atomic_reduction",)

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        found = point_view(given, atomics=True)
        if found is None:
            return []
        kernel, view = found
        shape = histogram(view)
        count = given.constants.get(shape.bins) if shape is not None else None
        if shape is None or count is None or count <= 0:
            return []
        budget = min(STATIC_SHARED, given.device.shared_bytes_per_block if given.device else STATIC_SHARED) // 2
        size = 8 if shape.element == "unsigned long long" or shape.element in WIDE_COUNTER_TYPES else 4
        if count * size > budget:
            return []
        upper = view.bounds[view.coordinates[0].name].upper
        limit = given.device.max_threads_per_block if given.device is not None else 1024
        grid_limit = thread_limit(given)  # the kernel's __launch_bounds__ too
        byte = shape.byte_data is not None and count == 256

        def fits(copies: int, threads: int) -> bool:
            """Per-warp copies (1) only for few bins whose copies fit; one per block (0) always."""
            return threads <= limit and (copies == 0 or (count <= FEW_BINS and count * size * (threads // 32) <= budget))

        def variant(vector: int, copies: int, threads: int, batch: int) -> Rewrite:
            return _variant(given, kernel, view, shape, count, upper, vector, copies, threads, batch)

        # As before the grid: uint4 per-warp byte histograms; batched per-warp, per-block; the
        # grid-stride per-warp, per-block; the original launch with a per-block copy.
        current = [variant(16, 1, t, 1) for t in BYTE_THREADS if byte and t <= limit]
        if shape.update.statement:
            current += [variant(1, c, THREADS, BATCH) for c in (1, 0) if fits(c, THREADS)]
        current += [variant(1, c, THREADS, 1) for c in (1, 0) if fits(c, THREADS)]
        body = _privatised_body(view, shape, count, 1, grid_stride=False)
        current.append(Rewrite(given.source, given.launch,
                               f"shared-memory private histogram ({count} bins)",
                               (("vector", 1), ("copies", 0), ("batch", 1), ("grid_stride", 0)), edits=body_edits(given, kernel, body)))
        # The grid: (uint4 loads of bytes) x copies per block/warp x block size x points per
        # thread in flight (batches need the atomic as a statement of its own).
        batches = (1,) if not shape.update.statement else (1, 4) if byte else GRID_BATCHES
        grid = [variant(16, c, t, 1) for c in (0, 1) for t in GRID_THREADS if byte and fits(c, t) and t <= grid_limit]
        grid += [variant(1, c, t, b) for c in (0, 1) for t in GRID_THREADS for b in batches
                 if fits(c, t) and t <= grid_limit]
        return grid_order(current, grid)


def _variant(given: ApplierInput, kernel: KernelText, view: PointKernel, shape: Histogram, count: int, upper: str,
             vector: int, copies: int, threads: int, batch: int) -> Rewrite:
    """One grid-stride grid point: `vector` 16 (uint4 loads of byte data) or 1, `copies` 1 per
    warp or 0 per block, `threads` per block, `batch` points per thread whose loads are in
    flight before their atomics (1: one at a time)."""
    warps = threads // 32 if copies else 1
    params = (("vector", vector), ("copies", copies), ("batch", batch), ("grid_stride", 1))
    if vector == 16:
        assert shape.byte_data is not None
        body = _byte_histogram_body(view, shape.byte_data, shape.bins, shape.element, upper, warps)
        grid = _grid(given.device, upper, threads, 16)
        copy = "per-warp shared histograms" if copies else "one shared histogram per block"
        note = f"uint4 loads, {copy}, grid {grid} x {threads}"
    elif batch > 1:
        body = _batched_body(view, shape, count, warps, batch)
        grid = _grid(given.device, upper, threads, batch)
        what = "per-warp shared histograms" if copies else "shared-memory private histogram"
        note = f"{what} ({count} bins), {batch} points per thread in flight"
    else:
        body = _privatised_body(view, shape, count, warps, grid_stride=True)
        grid = _grid(given.device, upper, threads, 1)
        what = "per-warp shared histograms" if copies else "shared-memory private histogram"
        note = f"{what} ({count} bins), grid-stride"
    if threads != THREADS and vector == 1:
        note += f", {threads} threads"
    return Rewrite(given.source, LaunchConfig((grid,), (str(threads),), given.launch.shared_bytes),
                   note, params, edits=body_edits(given, kernel, body))


def _grid(device: DeviceLimits | None, upper: str, threads: int, per_thread: int) -> str:
    """Enough blocks to fill the device once (or, without one, one per POINTS_PER_THREAD blocks'
    worth of points), never more than the points need."""
    needed = f"({upper} + {threads * per_thread - 1}) / {threads * per_thread}"
    if device is not None:
        return f"min({needed}, {device.resident_blocks(threads)})"
    spread = threads * per_thread * POINTS_PER_THREAD
    return f"({upper} + {spread - 1}) / {spread}"


def _privatised_body(view: PointKernel, shape: Histogram, count: int, warps: int, *, grid_stride: bool) -> str:
    mine, t = fresh(view, "mine"), fresh(view, "t")
    coordinate = view.coordinates[0]
    work = view.work_with({(shape.update.array_start, shape.update.array_end): mine})
    if grid_stride:
        upper = view.bounds[coordinate.name].upper
        ctype = coordinate.type.replace("const ", "")
        visit = (f"    for (long long {t} = (long long)blockIdx.x * blockDim.x + threadIdx.x; {t} < (long long)({upper});"
                 f" {t} += (long long)blockDim.x * gridDim.x) {{\n"
                 f"        {ctype} {coordinate.name} = ({ctype}){t}; {prelude(view)}\n"
                 f"        if ({view.guard}) {{\n            {work}\n        }}\n    }}")
    else:
        axis = coordinate.axis
        visit = (f"    {coordinate.type} {coordinate.name} = blockIdx.{axis} * blockDim.{axis} + threadIdx.{axis}; "
                 f"{prelude(view)}\n    if ({view.guard}) {{\n        {work}\n    }}")
    return _with_private_copies(view, shape, count, warps, mine, visit,
                                "Count into a private copy in shared memory (cheap shared atomics), then add the non-zero\n"
                                "    // counts to the global ones once per block.")


def _private_copies(local: str, mine: str, element: str, count: int, warps: int) -> tuple[str, str, str]:
    """The shared declaration, this thread's copy and the flat view of all copies."""
    if warps > 1:
        return (f"__shared__ {element} {local}[{warps}][{count}];",
                f"{element} *{mine} = {local}[(threadIdx.x >> 5) % {warps}];  // this warp's copy", f"{local}[0]")
    return f"__shared__ {element} {local}[{count}];", f"{element} *{mine} = {local};", local


def _batched_body(view: PointKernel, shape: Histogram, count: int, warps: int, batch: int = BATCH) -> str:
    """Grid-stride over the points, `batch` at a time: the bins of all `batch` points are computed
    (their loads in flight together) before any of their shared atomics, which the compiler would
    otherwise not move the next point's loads ahead of."""
    mine, t, p, stride, upper = (fresh(view, n) for n in ("mine", "t", "p", "stride", "upper"))
    keys = [fresh(view, f"key{k}") for k in range(batch)]
    amounts = [fresh(view, f"amount{k}") for k in range(batch)]
    has = [fresh(view, f"has{k}") for k in range(batch)]
    coordinate = view.coordinates[0]
    ctype = coordinate.type.replace("const ", "")
    element = shape.element
    update = shape.update
    points = []
    for k in range(batch):
        record = (f"({has[k]} = true, {keys[k]} = (long long)({update.index_text}), "
                  f"{amounts[k]} = ({element})({update.value_text}))")
        work = view.work_with({(update.call_start, update.call_end): record})
        points.append(
            f"        {{\n            const long long {p} = {t} + {k}LL * {stride};\n"
            f"            if ({p} < {upper}) {{\n                {ctype} {coordinate.name} = ({ctype}){p}; {prelude(view)}\n"
            f"                if ({view.guard}) {{\n                    {work}\n                }}\n            }}\n        }}")
    declare = "\n".join(f"        bool {has[k]} = false; long long {keys[k]} = 0; {element} {amounts[k]} = 0;"
                         for k in range(batch))
    flush = "\n".join(f"        if ({has[k]}) {added(f'&{mine}[{keys[k]}]', amounts[k], element)};" for k in range(batch))
    points_text = "\n".join(points)
    visit = f"""    const long long {upper} = (long long)({view.bounds[coordinate.name].upper});
    const long long {stride} = (long long)blockDim.x * gridDim.x;
    for (long long {t} = (long long)blockIdx.x * blockDim.x + threadIdx.x; {t} < {upper}; {t} += {batch}LL * {stride}) {{
{declare}
{points_text}
{flush}
    }}"""
    return _with_private_copies(view, shape, count, warps, mine, visit,
                                f"Count into a private copy in shared memory (cheap shared atomics), {batch} points per thread\n"
                                "    // in flight; then add the non-zero counts to the global ones once per block.")


def _with_private_copies(view: PointKernel, shape: Histogram, count: int, warps: int, mine: str, visit: str,
                         comment: str) -> str:
    """The body around `visit` (which counts into `mine`): the shared copies zeroed, this
    thread's copy picked, and after the visit each bin's total added to the global counts."""
    local, b, total = fresh(view, "local"), fresh(view, "b"), fresh(view, "total")
    element = shape.element
    shared, pick, flat = _private_copies(local, mine, element, count, warps)
    tid = "threadIdx.y * blockDim.x + threadIdx.x"
    threads = "blockDim.x * blockDim.y"
    sum_warps = " + ".join(f"{local}[{w}][{b}]" for w in range(warps)) if warps > 1 else f"{local}[{b}]"
    return f"""
    // {comment}
    {shared}
    for (int {b} = {tid}; {b} < {warps * count}; {b} += {threads})
        (&{flat}[0])[{b}] = 0;
    __syncthreads();
    {pick}
{visit}
    __syncthreads();
    for (int {b} = {tid}; {b} < {count}; {b} += {threads}) {{
        const {element} {total} = {sum_warps};
        if ({total} != 0)
            {added(f"&{shape.bins}[{b}]", total, element)};
    }}
"""


def added(address: str, value: str, element: str) -> str:
    """`atomicAdd(address, value)`; for a 64-bit counter type without an `atomicAdd` of its own
    (`size_t`, `uint64_t`, `unsigned long`) through `unsigned long long`, as the kernel wrote it."""
    if element in WIDE_COUNTER_TYPES:
        return f"atomicAdd((unsigned long long *)({address}), (unsigned long long)({value}))"
    return f"atomicAdd({address}, {value})"


def _byte_histogram_body(view: PointKernel, data: str, bins: str, element: str, bound: str, warps: int) -> str:
    n = {k: fresh(view, k) for k in ("warp_bins", "mine", "first", "stride", "total", "vectors", "data4", "v",
                                     "q", "words", "w", "word", "i", "b", "sum")}
    count_word = "\n".join(
        f"            atomicAdd(&{n['mine']}[({n['word']} >> {shift}) & 255u], ({element})1);" for shift in (0, 8, 16, 24))
    return f"""
    // One private 256-bin histogram per warp in shared memory: a warp's atomics contend only
    // with its own lanes. Summed over the warps and added to the global bins once per block.
    __shared__ {element} {n['warp_bins']}[{warps}][256];
    for (int {n['b']} = threadIdx.x; {n['b']} < {warps} * 256; {n['b']} += blockDim.x)
        {n['warp_bins']}[{n['b']} / 256][{n['b']} % 256] = 0;
    __syncthreads();
    {element} *{n['mine']} = {n['warp_bins']}[(threadIdx.x >> 5) % {warps}];
    const long long {n['first']} = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long {n['stride']} = (long long)blockDim.x * gridDim.x;
    const long long {n['total']} = (long long)({bound});
    // 16 bytes per load when the data is 16-byte aligned (cudaMalloc's is); else all scalar.
    const long long {n['vectors']} = (reinterpret_cast<unsigned long long>({data}) & 15) == 0 && {n['total']} > 0 ? {n['total']} / 16 : 0;
    const uint4 *{n['data4']} = reinterpret_cast<const uint4 *>({data});
    for (long long {n['v']} = {n['first']}; {n['v']} < {n['vectors']}; {n['v']} += {n['stride']}) {{
        const uint4 {n['q']} = {n['data4']}[{n['v']}];
        const unsigned int {n['words']}[4] = {{{n['q']}.x, {n['q']}.y, {n['q']}.z, {n['q']}.w}};
#pragma unroll
        for (int {n['w']} = 0; {n['w']} < 4; {n['w']}++) {{
            const unsigned int {n['word']} = {n['words']}[{n['w']}];
{count_word}
        }}
    }}
    for (long long {n['i']} = {n['vectors']} * 16 + {n['first']}; {n['i']} < {n['total']}; {n['i']} += {n['stride']})
        atomicAdd(&{n['mine']}[{data}[{n['i']}]], ({element})1);
    __syncthreads();
    for (int {n['b']} = threadIdx.x; {n['b']} < 256; {n['b']} += blockDim.x) {{
        {element} {n['sum']} = 0;
#pragma unroll
        for (int {n['w']} = 0; {n['w']} < {warps}; {n['w']}++)
            {n['sum']} += {n['warp_bins']}[{n['w']}][{n['b']}];
        if ({n['sum']} != 0)
            atomicAdd(&{bins}[{n['b']}], {n['sum']});
    }}
"""
