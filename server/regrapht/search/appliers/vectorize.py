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
"""

from __future__ import annotations

import re

from regrapht.idioms.elementwise import ElementwiseMap, Stream, elementwise_map
from regrapht.idioms.pointwise import AXES, PointKernel, fresh
from regrapht.search.appliers.common import ApplierInput, Rewrite, with_body
from regrapht.search.appliers.points import bind, ceil_div, prelude, recognised
from regrapht.spec.launch import LaunchConfig

LANES = 4


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
        body = _vector_body(view, shape, vectors)
        block = given.launch.block
        x = AXES.index(view.coordinate(shape.fast).axis)  # type: ignore[union-attr]
        grid = list(given.launch.grid)
        bx = int(block[0]) if block else 1
        grid[x] = ceil_div(view.bounds[shape.fast].upper, LANES * bx)
        rewrites = [Rewrite(with_body(given, kernel, body), LaunchConfig(tuple(grid), block, given.launch.shared_bytes),
                            f"{LANES} points per thread, 16-byte vector loads/stores of "
                            f"{', '.join(s.array for s in vectors)}")]
        if len(block) == 1 and bx != 256:
            grid[x] = ceil_div(view.bounds[shape.fast].upper, LANES * 256)
            rewrites.append(Rewrite(rewrites[0].source, LaunchConfig(tuple(grid), ("256",), given.launch.shared_bytes),
                                    rewrites[0].note + ", 256 threads"))
        return rewrites


def _vector_type(view: PointKernel, element: str) -> str:
    return fresh(view, "vec_" + re.sub(r"\W+", "_", element))


def _vector_body(view: PointKernel, shape: ElementwiseMap, vectors: list[Stream]) -> str:
    fast = view.coordinate(shape.fast)
    assert fast is not None
    ftype = fast.type.replace("const ", "")
    first, lane, ok = fresh(view, "first"), fresh(view, "lane"), fresh(view, "vector")
    others = {c.name: f"blockIdx.{c.axis} * blockDim.{c.axis} + threadIdx.{c.axis}"
              for c in view.coordinates if c.name != shape.fast}
    types = {s.element: _vector_type(view, s.element) for s in vectors}
    registers = {s.array: fresh(view, f"{s.array}_v") for s in vectors}
    structs = "\n".join(f"    struct __align__({LANES} * sizeof({e})) {t} {{ {e} v[{LANES}]; }};" for e, t in types.items())
    at_first = f"{bind(view, {**others, shape.fast: f'({ftype}){first}'})} {prelude(view)}"
    at_lane = f"{bind(view, {**others, shape.fast: f'({ftype})({first} + {lane})'})} {prelude(view)}"
    address = {s.array: f"&{s.array}[{s.accesses[0].index_text}]" for s in vectors}
    aligned = " && ".join(f"(reinterpret_cast<unsigned long long>({address[s.array]}) % sizeof({types[s.element]})) == 0"
                          for s in vectors)
    loads = "\n".join(f"        {registers[s.array]} = *reinterpret_cast<const {types[s.element]} *>({address[s.array]});"
                      for s in vectors if s.read)
    stores = "\n".join(f"        *reinterpret_cast<{types[s.element]} *>({address[s.array]}) = {registers[s.array]};"
                       for s in vectors if s.written)
    declared = "\n".join(f"        {types[s.element]} {registers[s.array]};" for s in vectors)
    replaced = view.work_with({(a.start, a.end): f"{registers[s.array]}.v[{lane}]" for s in vectors for a in s.accesses})
    original = view.work_with({})
    bounds = view.bounds[shape.fast]
    return f"""
    // {LANES} consecutive points per thread: one 16-byte vector per streamed array when all
    // {LANES} are in range and every address is aligned, else point by point.
{structs}
    const long long {first} = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * {LANES};
    bool {ok} = {first} >= (long long)({bounds.lower}) && {first} + {LANES - 1} < (long long)({bounds.upper});
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
        for (int {lane} = 0; {lane} < {LANES}; {lane}++) {{
            {at_lane}
            {replaced}
        }}
        {at_first}
{stores}
    }} else {{
#pragma unroll
        for (int {lane} = 0; {lane} < {LANES}; {lane}++) {{
            {at_lane}
            if ({view.guard}) {{
                {original}
            }}
        }}
    }}
"""
