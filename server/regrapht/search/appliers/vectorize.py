"""Elementwise maps and gathers -> 16-byte vector loads and stores, four points per thread.

Recognised on the source model (`idioms/elementwise.py`): a point kernel in which every access
moving with the x coordinate moves one element per point and each written array is written
once per point, unconditionally. Each thread then takes four consecutive points: when all four
are inside the guard and every streamed address is aligned to four elements (checked at run
time, per thread: offset bases such as `tokens[t] * dim` are covered), it loads each array it
reads unconditionally as one `__align__(4 * sizeof(T))` vector, runs the kernel's own statements
for the four points on registers, and stores each written array as one vector; otherwise (the
tail, an unaligned row) it runs the original statements point by point. Reads under a
condition stay scalar. The grid along x shrinks by four; y and z are unchanged.

Then the parameter grid: points per thread (2, 4, 8) x vector width (2-8 elements, at most 16
bytes, dividing the points: a thread moves points / width vectors per array) x block size (1-D
launches); the alignment check is to the vector's size, the tail point by point, as above.
"""

from __future__ import annotations

from dataclasses import replace

from regrapht.cuda.tokens import word_id
from regrapht.idioms.elementwise import ElementwiseMap, Stream, elementwise_map
from regrapht.idioms.pointwise import AXES, PointKernel, fresh
from regrapht.search.appliers.common import ApplierInput, Rewrite, body_edits
from regrapht.search.appliers.grid import grid_order, thread_limit
from regrapht.search.appliers.points import bind, ceil_div, prelude, recognised
from regrapht.spec.launch import LaunchConfig

LANES = 4
GRID_POINTS = (2, 4, 8)
GRID_THREADS = (128, 256, 512, 1024)
ELEMENT_BYTES = {"char": 1, "signed char": 1, "unsigned char": 1, "int8_t": 1, "uint8_t": 1, "bool": 1,
                 "short": 2, "unsigned short": 2, "__half": 2, "half": 2, "__nv_bfloat16": 2, "int16_t": 2,
                 "uint16_t": 2, "float": 4, "int": 4, "unsigned int": 4, "unsigned": 4, "int32_t": 4, "uint32_t": 4,
                 "double": 8, "long long": 8, "unsigned long long": 8, "long": 8, "unsigned long": 8, "int64_t": 8,
                 "uint64_t": 8, "size_t": 8}


class VectorizedMap:
    technique = "vectorized_access"
    also: tuple[str, ...] = ()

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        found = recognised(given, elementwise_map)
        if found is None:
            return []
        kernel, shape = found
        view = shape.kernel
        vectors = [s for s in shape.streams if s.written or not any(a.conditional or a.conditions for a in s.accesses)]
        if not any(s.written for s in vectors):
            return []
        limit = thread_limit(given)  # the device's, and the kernel's __launch_bounds__
        x = AXES.index(view.coordinate(shape.fast).axis)  # type: ignore[union-attr]
        block = given.launch.block
        bx = int(block[0]) if block else 1

        def variant(points: int, width: int, threads: tuple[str, ...]) -> Rewrite:
            grid = list(given.launch.grid)
            grid[x] = ceil_div(view.bounds[shape.fast].upper, points * int(threads[0]))
            body = _vector_body(view, shape, vectors, points, width)
            note = (f"{points} points per thread, {_vector_bytes(width, vectors)} vector loads/stores of "
                    f"{', '.join(s.array for s in vectors)}")
            return Rewrite(given.source, LaunchConfig(tuple(grid), threads, given.launch.shared_bytes),
                           note, (("points", points), ("vector", width)), edits=body_edits(given, kernel, body))

        # As before the grid: four points per thread in one vector each, the launch's block, then 256.
        current = [variant(LANES, LANES, block)]
        if len(block) == 1 and bx != 256:
            current.append(replace(variant(LANES, LANES, ("256",)), note=current[0].note + ", 256 threads"))
        # The grid: points per thread x vector width (2+ elements, at most 16 bytes, dividing
        # the points) x block size (1-D blocks only: a 2-D block's shape is the kernel's own).
        widest = max(_size(s.element) for s in vectors)
        blocks = [(str(t),) for t in GRID_THREADS if t <= limit] if len(block) == 1 else [block]
        grid = [variant(points, width, threads) for points in GRID_POINTS for width in (2, 4, 8)
                if points % width == 0 and width * widest <= 16 for threads in blocks]
        return grid_order(current, grid)


def _size(element: str) -> int:
    """Bytes of an element type; 4 for a type it does not know (a template parameter): only the
    choice of vector widths depends on it, never correctness (alignment is checked at run time)."""
    return ELEMENT_BYTES.get(" ".join(element.replace("const ", "").split()), 4)


def _vector_bytes(width: int, vectors: list[Stream]) -> str:
    sizes = {_size(s.element) * width for s in vectors}
    return "16-byte" if width == LANES or sizes == {16} else "/".join(f"{n}-byte" for n in sorted(sizes))


def _vector_type(view: PointKernel, element: str) -> str:
    return fresh(view, "vec_" + word_id(element))


def _vector_body(view: PointKernel, shape: ElementwiseMap, vectors: list[Stream], lanes: int = LANES,
                 width: int = LANES) -> str:
    """`lanes` consecutive points per thread, each streamed array moved as `lanes / width`
    vectors of `width` elements (one named register when it is one vector)."""
    groups = lanes // width
    fast = view.coordinate(shape.fast)
    assert fast is not None
    ftype = fast.type.replace("const ", "")
    first, lane, ok = fresh(view, "first"), fresh(view, "lane"), fresh(view, "vector")
    others = {c.name: f"blockIdx.{c.axis} * blockDim.{c.axis} + threadIdx.{c.axis}"
              for c in view.coordinates if c.name != shape.fast}
    types = {s.element: _vector_type(view, s.element) for s in vectors}
    registers = {s.array: fresh(view, f"{s.array}_v") for s in vectors}
    structs = "\n".join(f"    struct __align__({width} * sizeof({e})) {t} {{ {e} v[{width}]; }};" for e, t in types.items())
    at_first = f"{bind(view, {**others, shape.fast: f'({ftype}){first}'})} {prelude(view)}"
    at_lane = f"{bind(view, {**others, shape.fast: f'({ftype})({first} + {lane})'})} {prelude(view)}"
    address = {s.array: f"&{s.array}[{s.accesses[0].index_text}]" for s in vectors}
    aligned = " && ".join(f"(reinterpret_cast<unsigned long long>({address[s.array]}) % sizeof({types[s.element]})) == 0"
                          for s in vectors)
    def register(s: Stream, group: int) -> str:
        return registers[s.array] if groups == 1 else f"{registers[s.array]}[{group}]"

    def at(s: Stream, group: int) -> str:
        return address[s.array] if group == 0 else f"{address[s.array]} + {group * width}"

    loads = "\n".join(f"        {register(s, g)} = *reinterpret_cast<const {types[s.element]} *>({at(s, g)});"
                      for s in vectors if s.read for g in range(groups))
    stores = "\n".join(f"        *reinterpret_cast<{types[s.element]} *>({at(s, g)}) = {register(s, g)};"
                       for s in vectors if s.written for g in range(groups))
    count = "" if groups == 1 else f"[{groups}]"
    declared = "\n".join(f"        {types[s.element]} {registers[s.array]}{count};" for s in vectors)
    element = f".v[{lane}]" if groups == 1 else f"[{lane} / {width}].v[{lane} % {width}]"
    replaced = view.work_with({(a.start, a.end): f"{registers[s.array]}{element}" for s in vectors for a in s.accesses})
    original = view.work_with({})
    bounds = view.bounds[shape.fast]
    moved = "one 16-byte vector" if groups == 1 else f"{groups} vectors of {width} elements"
    return f"""
    // {lanes} consecutive points per thread: {moved} per streamed array when all
    // {lanes} are in range and every address is aligned, else point by point.
{structs}
    const long long {first} = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * {lanes};
    bool {ok} = {first} >= (long long)({bounds.lower}) && {first} + {lanes - 1} < (long long)({bounds.upper});
    if ({ok}) {{
        {at_first}
        {ok} = ({view.guard}) && {aligned};
    }}
    if ({ok}) {{
{declared}
        {{
        {at_first}
{loads}
        }}
#pragma unroll
        for (int {lane} = 0; {lane} < {lanes}; {lane}++) {{
            {at_lane}
            {replaced}
        }}
        {at_first}
{stores}
    }} else {{
#pragma unroll
        for (int {lane} = 0; {lane} < {lanes}; {lane}++) {{
            {at_lane}
            if ({view.guard}) {{
                {original}
            }}
        }}
    }}
"""
