"""Code generation shared by the item appliers: one cooperative group (a warp or a block) per item.

Given an `idioms.items.ItemProgram` (what one thread did for its row), `cooperative_body` writes
the kernel body where a whole group works on each item: element loops are strided over the
group's lanes, each accumulator is combined with `cub::WarpReduce`/`cub::BlockReduce` (sum, max,
min with the original's own combine function, argmax/argmin as value-index pairs with the
original's tie rule) and handed back to every lane, a running sum written per element becomes a
`cub::BlockScan`/`cub::WarpScan` over tiles with a carry, and statements that write an item
result run on lane 0 only. Items are visited by a group-stride loop, so any grid is correct and
the grid is only a performance choice. The original statements are kept verbatim: the loop
variable, the item index and every local keep their names, so their expressions need no edits.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from regrapht.cuda.tokens import includes, word_id
from regrapht.errors import InputError
from regrapht.idioms.items import Accumulator, ItemLoop, ItemProgram, ItemStatement, SingleThread
from regrapht.idioms.syntax import text, walk
from regrapht.idioms.threads import AXIS_DIMENSIONS
from regrapht.search.appliers.common import ApplierInput, block_dims, ceil_parts
from regrapht.spec.expr import evaluate_int, names_in

CUB_INCLUDE = "#include <cub/cub.cuh>\n"
# Types a lane can hand to the others with __shfl_sync.
SHUFFLE_TYPES = frozenset({"float", "double", "int", "unsigned int", "unsigned", "long long", "long long int",
                           "unsigned long long", "unsigned long long int", "long", "unsigned long"})
PREFIX = "rg_"  # every generated name starts with it (a kernel already using it is left alone)


@dataclass(frozen=True)
class Group:
    kind: Literal["warp", "block"]
    block: int  # threads per block
    lanes: int = 32  # threads per item of a "warp" group: 32, or 16/8/4 (a part of a warp)

    @property
    def size(self) -> int:
        return self.lanes if self.kind == "warp" else self.block

    @property
    def per_block(self) -> int:
        return self.block // self.lanes if self.kind == "warp" else 1

    @property
    def mask(self) -> str:
        """The lanes of this group within its warp, for __shfl_sync/__syncwarp."""
        if self.kind == "block" or self.lanes == 32:
            return "0xffffffffu"
        return f"({hex((1 << self.lanes) - 1)}u << ((threadIdx.x & 31) & ~{self.lanes - 1}u))"

    def describe(self, item: str) -> str:
        """Who works on each `item` ("row", "CSR row"), for a rewrite's note."""
        if self.kind == "block":
            return f"one {self.block}-thread block per {item}"
        who = "one warp" if self.lanes == 32 else f"{self.lanes} lanes"
        return f"{who} per {item} ({self.block}-thread blocks)"


def cub_change(source: str) -> tuple[tuple[int, int, str], ...]:
    """The change including the CUB header at the top of `source`; none when it is included."""
    return () if includes(source, "cub/cub.cuh") else ((0, 0, CUB_INCLUDE),)


def type_id(type_text: str) -> str:
    return word_id(type_text.replace("const", "").strip())


def plain_type(type_text: str) -> str:
    return " ".join(w for w in type_text.split() if w not in ("const", "volatile"))


def usable(program: ItemProgram, group: Group, instance: Mapping[str, str] | None = None) -> bool:
    """Whether the generator can express `program` for `group`: no name clashes with generated
    names, and every accumulator type can be broadcast (a template parameter counts as the type
    `instance` gives it: see `template_instance`)."""
    names = {text(n) for n in walk(program.kernel.function) if n.type == "identifier"}
    if any(n.startswith(PREFIX) for n in names):
        return False

    def broadcast(type_text: str) -> bool:
        plain = plain_type(type_text)
        return plain in SHUFFLE_TYPES or (instance or {}).get(plain) in SHUFFLE_TYPES

    for accumulator in program.accumulators:
        types = [accumulator.type] + ([accumulator.index_type] if accumulator.index_type else [])
        if not all(broadcast(t) for t in types if t):
            return False
    return all(loop.scan is None or broadcast(loop.scan.type) for loop in program.loops)


def template_instance(kernel_name: str, program: ItemProgram) -> dict[str, str]:
    """The type arguments of a spec's template instance (`spmv<double>`) by parameter name."""
    return template_arguments(kernel_name, program.kernel.template_parameters)


def template_arguments(kernel_name: str, parameters: tuple[str, ...]) -> dict[str, str]:
    """`template_instance` for any kernel's template parameters."""
    if "<" not in kernel_name or not kernel_name.rstrip().endswith(">"):
        return {}
    inside = kernel_name[kernel_name.index("<") + 1:kernel_name.rstrip().rindex(">")]
    if "<" in inside:
        return {}  # nested template arguments: not needed by any shape handled here
    arguments = [" ".join(a.split()) for a in inside.split(",")]
    return dict(zip(parameters, arguments, strict=False)) if len(parameters) == len(arguments) else {}


class ItemEmitter:
    def __init__(self, program: ItemProgram, group: Group) -> None:
        self.program = program
        self.group = group
        self.declarations: list[str] = []
        self.declared: set[str] = set()
        self.counter = 0

    # ---------------------------------------------------------------- shared declarations
    def declare_once(self, key: str, code: str) -> None:
        if key not in self.declared:
            self.declared.add(key)
            self.declarations.append(code)

    def _reducer(self, value_type: str) -> tuple[str, str]:
        """(reducer type name, temp storage expression) for values of `value_type`."""
        tid = type_id(value_type)
        if self.group.kind == "block":
            name = f"{PREFIX}block_reduce_{tid}_"
            self.declare_once(name, f"typedef cub::BlockReduce<{value_type}, {self.group.block}> {name};\n"
                                     f"__shared__ typename {name}::TempStorage {name}temp;\n"
                                     f"__shared__ {value_type} {name}result;")
            return name, f"{name}temp"
        name = f"{PREFIX}warp_reduce_{tid}_"
        self.declare_once(name, f"typedef cub::WarpReduce<{value_type}, {self.group.lanes}> {name};\n"
                                 f"__shared__ typename {name}::TempStorage {name}temp[{self.group.per_block}];")
        return name, f"{name}temp[threadIdx.x / {self.group.lanes}]"

    def functor(self, accumulator: Accumulator) -> str:
        value_type = plain_type(accumulator.type)
        if accumulator.op in ("argmax", "argmin"):
            return self._pair_functor(accumulator)
        name = f"{PREFIX}{accumulator.op}_{type_id(value_type)}_{accumulator.combine or 'cmp'}_"
        if accumulator.combine:
            body = f"return {accumulator.combine}(a, b);"
        else:
            body = f"return b {'>' if accumulator.op == 'max' else '<'} a ? b : a;"
        self.declare_once(name, f"struct {name} {{\n    __device__ __forceinline__ {value_type} operator()"
                                 f"(const {value_type} &a, const {value_type} &b) const {{ {body} }}\n}};")
        return name

    def _pair_type(self, accumulator: Accumulator) -> str:
        value_type, index_type = plain_type(accumulator.type), plain_type(accumulator.index_type or "int")
        name = f"{PREFIX}pair_{type_id(value_type)}_{type_id(index_type)}_"
        self.declare_once(name, f"struct {name} {{ {value_type} value; {index_type} index; }};")
        return name

    def _pair_functor(self, accumulator: Accumulator) -> str:
        pair = self._pair_type(accumulator)
        better = ">" if accumulator.op == "argmax" else "<"
        tie = ">" if accumulator.last else "<"  # the original's `>=` keeps the last of equal values
        name = f"{PREFIX}{accumulator.op}_{'last' if accumulator.last else 'first'}_{pair}"
        self.declare_once(name, f"struct {name} {{\n    __device__ __forceinline__ {pair} operator()"
                                 f"(const {pair} &a, const {pair} &b) const {{\n"
                                 f"        return (b.value {better} a.value || (b.value == a.value && b.index {tie} a.index)) ? b : a;\n"
                                 f"    }}\n}};")
        return name

    # ---------------------------------------------------------------- pieces
    def combine(self, accumulator: Accumulator) -> str:
        """Code that replaces every lane's partial `accumulator` by the group's result."""
        x = accumulator.name
        sync = "__syncthreads();" if self.group.kind == "block" else f"__syncwarp({self.group.mask});"
        width = "" if self.group.lanes == 32 else f", {self.group.lanes}"
        mask = self.group.mask
        if accumulator.op in ("argmax", "argmin"):
            pair = self._pair_type(accumulator)
            reducer, temp = self._reducer(pair)
            functor = self.functor(accumulator)
            index = accumulator.index
            lines = [f"{pair} {PREFIX}mine_;", f"{PREFIX}mine_.value = {x};", f"{PREFIX}mine_.index = {index};",
                     f"const {pair} {PREFIX}best_ = {reducer}({temp}).Reduce({PREFIX}mine_, {functor}());"]
            if self.group.kind == "block":
                lines += [f"if (threadIdx.x == 0) {reducer}result = {PREFIX}best_;", sync,
                          f"{x} = {reducer}result.value;", f"{index} = {reducer}result.index;", sync]
            else:
                lines += [f"{x} = __shfl_sync({mask}, {PREFIX}best_.value, 0{width});",
                          f"{index} = __shfl_sync({mask}, {PREFIX}best_.index, 0{width});", sync]
            return "{\n" + indent_code("\n".join(lines)) + "\n}"
        value_type = plain_type(accumulator.type)
        reducer, temp = self._reducer(value_type)
        if accumulator.op == "sum":
            total = f"{reducer}({temp}).Sum({x})"
        else:
            total = f"{reducer}({temp}).Reduce({x}, {self.functor(accumulator)}())"
        base = f"{PREFIX}init_{x}_ + " if accumulator.op == "sum" else ""
        lines = [f"const {value_type} {PREFIX}total_ = {total};"]
        if self.group.kind == "block":
            lines += [f"if (threadIdx.x == 0) {reducer}result = {PREFIX}total_;", sync, f"{x} = {base}{reducer}result;", sync]
        else:
            lines += [f"{x} = {base}__shfl_sync({mask}, {PREFIX}total_, 0{width});", sync]
        return "{\n" + indent_code("\n".join(lines)) + "\n}"

    def loop(self, loop: ItemLoop) -> str:
        if loop.scan is not None:
            return self.scan_loop(loop)
        lane, size = f"{PREFIX}lane_", self.group.size
        before = []
        for accumulator in loop.accumulators:
            if accumulator.op == "sum":
                value_type = plain_type(accumulator.type)
                before.append(f"const {value_type} {PREFIX}init_{accumulator.name}_ = {accumulator.name};")
                before.append(f"{accumulator.name} = ({value_type})0;")
        var_type = plain_type(loop.var_type)
        body = "\n".join(text(s) for s in loop.body)
        # Unrolled so that several of a lane's loads are in flight at once.
        code = [*before, "#pragma unroll 4",
                f"for ({var_type} {loop.var} = ({text(loop.lower)}) + {lane}; {loop.var} < ({loop.end}); "
                f"{loop.var} += {size}) {{", indent_code(body), "}"]
        code += [self.combine(a) for a in loop.accumulators]
        if len(before) + len(loop.accumulators) == 0:
            return "\n".join(code)
        return "{\n" + indent_code("\n".join(code)) + "\n}"

    def scan_loop(self, loop: ItemLoop) -> str:
        scan = loop.scan
        assert scan is not None
        value_type = plain_type(scan.type)
        tid = type_id(value_type)
        if self.group.kind == "block":
            scanner = f"{PREFIX}block_scan_{tid}_"
            self.declare_once(scanner, f"typedef cub::BlockScan<{value_type}, {self.group.block}> {scanner};\n"
                                        f"__shared__ typename {scanner}::TempStorage {scanner}temp;")
            temp, sync = f"{scanner}temp", "__syncthreads();"
        else:
            scanner = f"{PREFIX}warp_scan_{tid}_"
            self.declare_once(scanner, f"typedef cub::WarpScan<{value_type}, {self.group.lanes}> {scanner};\n"
                                        f"__shared__ typename {scanner}::TempStorage {scanner}temp[{self.group.per_block}];")
            temp, sync = f"{scanner}temp[threadIdx.x / {self.group.lanes}]", f"__syncwarp({self.group.mask});"
        statements = list(loop.body)
        update_at = statements.index(scan.update)
        users_after = any(scan.accumulator in _names(s) for s in statements[update_at + 1:])
        users_before = any(scan.accumulator in _names(s) for s in statements[:update_at])
        exclusive = users_before and not users_after
        var_type = plain_type(loop.var_type)
        x, upper = scan.accumulator, loop.end
        decls = "\n".join(text(s) for s in statements[:update_at] if s.type == "declaration")
        prefix_value = f"{PREFIX}carry_ + {PREFIX}scanned_"
        replaced = []
        for position, statement in enumerate(statements):
            if position == update_at:
                replaced.append(f"{x} = {prefix_value}{' + ' + PREFIX + 'value_' if exclusive else ''};")
            else:
                replaced.append(text(statement))
        start = f"{x} = {prefix_value}{'' if exclusive else ' - ' + PREFIX + 'value_'};"
        method = "ExclusiveSum" if exclusive else "InclusiveSum"
        code = f"""{{
    {value_type} {PREFIX}carry_ = {x};
    for ({var_type} {PREFIX}tile_ = ({text(loop.lower)}); {PREFIX}tile_ < ({upper}); {PREFIX}tile_ += {self.group.size}) {{
        const {var_type} {loop.var} = {PREFIX}tile_ + {PREFIX}lane_;
        {value_type} {PREFIX}value_ = ({value_type})0;
        if ({loop.var} < ({upper})) {{
{indent_code(decls, 12)}
            {PREFIX}value_ = ({text(scan.contribution)});
        }}
        {value_type} {PREFIX}scanned_, {PREFIX}tile_total_;
        {scanner}({temp}).{method}({PREFIX}value_, {PREFIX}scanned_, {PREFIX}tile_total_);
        if ({loop.var} < ({upper})) {{
            {start}
{indent_code(chr(10).join(replaced), 12)}
        }}
        {PREFIX}carry_ += {PREFIX}tile_total_;
        {sync}
    }}
    {x} = {PREFIX}carry_;
}}"""
        return code

    def statement(self, statement: ItemStatement) -> str:
        code = text(statement.node)
        if statement.writes:
            return f"if ({PREFIX}lane_ == 0) {{\n{indent_code(code)}\n}}"
        return code

    # ---------------------------------------------------------------- whole body
    def body(self) -> str:
        program = self.program
        group = self.group
        code: list[str] = []
        for position, step in enumerate(program.steps):
            code.append(self.loop(step) if isinstance(step, ItemLoop) else self.statement(step))
            later: set[str] = set()
            for other in program.steps[position + 1:]:
                later |= _names(other.node)
            if isinstance(step, ItemLoop) and step.writes & later:
                # Another lane may read what this loop wrote (loops may start at other offsets).
                code.append("__syncthreads();" if group.kind == "block" else f"__syncwarp({group.mask});")
        work = "\n".join(code)
        lane = "threadIdx.x" if group.kind == "block" else f"(threadIdx.x & {group.lanes - 1})"
        head = [f"const int {PREFIX}lane_ = {lane};"]
        item = program.item
        if item is None:
            loop_head = "if (blockIdx.x == 0) {"
            item_decl = ""
        else:
            item_type = plain_type(item.type)
            if group.kind == "block":
                first, stride = "(long long)blockIdx.x", "(long long)gridDim.x"
            else:
                first = f"(long long)blockIdx.x * {group.per_block} + threadIdx.x / {group.lanes}"
                stride = f"(long long)gridDim.x * {group.per_block}"
            loop_head = (f"for (long long {PREFIX}item_ = {first}; {PREFIX}item_ < (long long)({item.bound}); "
                         f"{PREFIX}item_ += {stride}) {{")
            item_decl = f"const {item_type} {item.name} = ({item_type}){PREFIX}item_;\n"
        kept = "\n".join(text(d) for d in program.kept_prelude)
        declarations = "\n".join(self.declarations)
        parts = [p for p in (kept, declarations, "\n".join(head)) if p]
        comment = (f"// {group.describe('item')}: lanes stride over the item's elements "
                   f"(coalesced), CUB combines the lanes' partial results.")
        return ("\n" + indent_code(comment + "\n" + "\n".join(parts) + "\n" + loop_head + "\n" +
                               indent_code(item_decl + work) + "\n}") + "\n")


def cooperative_body(program: ItemProgram, group: Group, instance: Mapping[str, str] | None = None) -> str | None:
    """The kernel body for `program` run by one `group` per item, or None if not expressible."""
    if not usable(program, group, instance):
        return None
    return ItemEmitter(program, group).body()


def _names(node: object) -> set[str]:
    from tree_sitter import Node

    if not isinstance(node, Node):
        return set()
    return {text(n) for n in walk(node) if n.type == "identifier"}


def indent_code(code: str, spaces: int = 4) -> str:
    pad = " " * spaces
    return "\n".join(pad + line if line.strip() else line for line in code.splitlines())


# -------------------------------------------------------------------------------- launches
def value_of(expression: str, names: ApplierInput | Mapping[str, int]) -> int | None:
    """The value of an expression over the spec's constant scalars (or `names`), None when unknown."""
    known = names.constants if isinstance(names, ApplierInput) else names
    try:
        return evaluate_int(expression, known)
    except (InputError, ZeroDivisionError, OverflowError, ValueError, TypeError):
        return None


def original_covers(given: ApplierInput, program: ItemProgram) -> bool:
    """Whether the original launch runs exactly one thread per item index in [0, bound): a
    1-D block, and a grid of ceil(bound / block) (or any grid for a grid-stride loop)."""
    launch = given.launch
    mapping, item = program.mapping, program.item
    if mapping is None or item is None:
        return False
    if item.axis != "x":
        return _covers_along(given, program, item.axis)
    if len(launch.block) > 1 and any(value_of(b, given) != 1 for b in launch.block[1:]):
        return False
    if len(launch.grid) > 1 and any(value_of(g, given) != 1 for g in launch.grid[1:]):
        return False
    if mapping.form == "grid_stride":
        return True
    dims = block_dims(launch)
    parts = ceil_parts(launch.grid[0]) if launch.grid else None
    if dims is not None and parts is not None and parts[1] == dims[0] and \
            " ".join(parts[0].split()) == " ".join(item.bound.split()):
        return True
    return covers_everywhere(given, (launch.grid[0], launch.block[0]), _bound_of(program), program.kernel.constants)


def _covers_along(given: ApplierInput, program: ItemProgram, axis: str) -> bool:
    """`original_covers` for an item index along y or z, or linear over two launch dimensions:
    the dimensions it spans cover the bound, every other dimension is 1."""
    item = program.item
    spanned = AXIS_DIMENSIONS.get(axis)
    if item is None or spanned is None or (program.mapping is not None and program.mapping.form == "grid_stride"):
        return False
    launch = given.launch
    factors = []
    for kind, dims in (("grid", launch.grid), ("block", launch.block)):
        for position, expression in enumerate(dims):
            if (kind, position) in spanned:
                factors.append(expression)
            elif value_of(expression, given) != 1:
                return False
    if len(factors) != len(spanned):
        return False
    return covers_everywhere(given, tuple(factors), _bound_of(program), program.kernel.constants)


def _bound_of(program: ItemProgram) -> str:
    """The item bound as a spec expression: as written, or through casts and local copies
    (`(size_t)n`, `cols` for `const int cols = n`) its value over the kernel's scalars."""
    item = program.item
    assert item is not None
    scalars = set(program.kernel.scalars) | set(program.kernel.constants)
    if names_in_safe(item.bound) <= scalars:
        return item.bound
    resolved = item.bound_poly
    return resolved.text() if resolved.atoms() <= scalars and not resolved.memory_dependent else item.bound


def names_in_safe(expression: str) -> set[str]:
    """The names of a spec expression; a name that is not one (a cast) for text it cannot read."""
    try:
        return set(names_in(expression))
    except (InputError, ValueError):
        return {expression}


# Values tried for a scalar the spec leaves free (the problem size that the odd-size check changes).
SAMPLE_SIZES = (1, 2, 3, 31, 32, 33, 255, 256, 257, 1000, 4097, 65537, 1000003, 1 << 24, (1 << 24) + 1)


def covers_everywhere(given: ApplierInput, factors: tuple[str, ...], bound: str,
                      macros: Mapping[str, int] | None = None) -> bool:
    """Whether the product of `factors` (grid, block, ...) is at least `bound` for the spec's
    fixed values and, when one name is left free, for sampled values of it."""
    names: set[str] = set()
    for expression in (*factors, bound):
        names |= names_in(expression)
    known = {**(macros or {}), **given.constants}
    missing = sorted(n for n in names if n not in known)
    if len(missing) > 1:
        return False
    for size in SAMPLE_SIZES if missing else (0,):
        values = {**known, **({missing[0]: size} if missing else {})}
        product = 1
        for factor in factors:
            value = value_of(factor, values)
            if value is None:
                return False
            product *= value
        needed = value_of(bound, values)
        if needed is None or product < needed:
            return False
    return True


def one_thread_launch(given: ApplierInput) -> bool:
    """Whether the original runs on a single thread (`<<<1, 1>>>`)."""
    return all(value_of(x, given) == 1 for x in (*given.launch.grid, *given.launch.block))


def runs_once(given: ApplierInput, single: SingleThread | None) -> bool:
    """Whether a `single_program`'s work runs exactly once under the original launch: its guard
    singles out one thread of the grid (on a 1-D launch), of each block (on one block), or it
    has no guard (on one thread)."""
    if single is None:
        return False
    if single == "none":
        return one_thread_launch(given)
    extra = (*given.launch.grid[1:], *given.launch.block[1:])
    if any(value_of(x, given) != 1 for x in extra):
        return False  # threadIdx.y/z or blockIdx.y/z would run the work again
    return single == "grid" or all(value_of(x, given) == 1 for x in given.launch.grid)


def resident_blocks(given: ApplierInput, threads: int) -> int | None:
    """Blocks of `threads` threads that fill the device once (None without a known device)."""
    return given.device.resident_blocks(threads) if given.device is not None else None


def resident_warps(given: ApplierInput) -> int | None:
    """Warps the device holds at once (None without a known device)."""
    device = given.device
    return device.sms * (device.max_threads_per_sm // 32) if device is not None else None


def item_count(given: ApplierInput, program: ItemProgram) -> str | None:
    """The item count as a spec expression: the bound as written when it uses only the
    kernel's scalar parameters, else its value (`#define ROWS 4096`); None if neither."""
    item = program.item
    if item is None:
        return None
    scalars = set(program.kernel.scalars)
    if names_in(item.bound) <= scalars and value_of(item.bound, {name: 1 for name in scalars}) is not None:
        return " ".join(item.bound.split())
    # Through casts and local copies (`j < (size_t)n`, `const int cols = n; ... j < cols`): the
    # bound's value over the kernel's scalars.
    resolved = item.bound_poly
    if resolved.atoms() and resolved.atoms() <= scalars and \
            value_of(resolved.text(), {name: 1 for name in scalars}) is not None:
        return resolved.text()
    constant = item.bound_poly.constant
    return str(constant) if constant is not None and constant > 0 else None


def extent_of(given: ApplierInput, loop: ItemLoop, program: ItemProgram) -> int | None:
    """How many elements the loop visits per item, when the spec's constants fix it."""
    names = dict(program.kernel.constants) | dict(given.constants)
    low = value_of(text(loop.lower), names)
    high = value_of(loop.end, names)
    return high - low if low is not None and high is not None else None
