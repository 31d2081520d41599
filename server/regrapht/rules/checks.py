"""The rule checks: one function per rule, `check(function, model, info) -> Iterable[Finding]`.

A check looks at ONE function of the model: its findings must depend only on that function's
facts, plus `model.file_shared_arrays` (R011) and the block shapes of the file's launches of it
(`model.block_shapes(name)`, part of the engine's memo key) -- never on other functions'
bodies, the tree or the configuration. That is what lets the engine cache findings per function text and translate
them when the function moves (rules/engine.py). Cross-function facts come from the function
that holds them: a launch site (R009) is checked in the host function that contains it and
names the launched kernel by text. Severity policy (docs/rules/README.md): a check reports `error` only for a correctness hazard
it proved on the code, `warning` for a performance loss it proved from the source facts (types
and overloads, memory space, access widths, symbolic strides and trip counts), and downgrades
to `hint` what it suspects but cannot establish; the engine applies the user's overrides.
Checks must stay quiet on well-optimised kernels (tests/data/rules/good, tests/data/realworld):
when in doubt, do not report. One finding per cause: locations that share a cause (one array and
stride, one row-per-thread pass, the literals of one line, one tile's conflict in one loop) give
one finding at the first of them, the others in `Finding.related`; the engine drops a finding of
another rule of the same technique that stands at such a related location (rules/engine.py).
A message states only what the facts show (tests/unit/rules/test_messages.py checks them against
the code); a hedged hint says in `proven_message` what it claims once the compiler proves it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from regrapht.cuda.model import (
    Atomic,
    Branch,
    Coefficient,
    FloatLiteral,
    Function,
    HostCallContext,
    MemoryAccess,
    SourceModel,
)
from regrapht.rules.fixes import (
    column_walks,
    element_words,
    float_call_edit,
    float_literal_edit,
    qualifier_edits,
    shared_declaration,
    unroll_edit,
)
from regrapht.rules.types import Finding, Fix, Related, Severity
from regrapht.text import Span

if TYPE_CHECKING:
    from regrapht.rules.registry import RuleInfo

# Calls that make the host wait for the GPU. cudaMemset and device-to-device copies do not
# block the host; cudaMalloc/cudaFree in a loop are an allocation pattern (a hint).
HOST_BLOCKING_CALLS = frozenset({
    "cudaMemcpy", "cudaMemcpy2D", "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol", "cudaDeviceSynchronize",
    "cudaThreadSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
})
HOST_ALLOCATION_CALLS = frozenset({"cudaMalloc", "cudaFree", "cudaMallocHost", "cudaFreeHost"})
DEVICE_SELECTION = ("cudaSetDevice", "set_device", "SetDevice")
# A run-time multiplier named like a stride (`s00`, `nb01`, `stride_col`, `ld`): its value may be 1.
STRIDE_NAME = re.compile(r"(?i)stride|pitch|^ld[a-z]?$|^s[a-z]?\d*$|^nb[a-z]?\d*$")
SECTOR_BYTES = 32
DEFAULT_ELEMENT_BYTES = 4  # a template element type: assume a 4-byte float
REDUCTION_COMBINERS = ("__shfl", "__reduce", "cub::", "cooperative_groups", "reduce")
FOUR_BYTE_TYPES = frozenset({"float", "int", "unsigned", "unsigned int", "uint32_t", "int32_t"})
MAX_UNROLL_TRIP = 64
# nvcc fully unrolls constant loops this short by itself (tests/unit/rules/test_confirm_nvcc.py shows it).
COMPILER_UNROLLED_TRIP = 8
TINY_LAUNCH_THREADS = 256  # a constant grid with fewer threads in all: bookkeeping, not throughput


def _finding(info: RuleInfo, span: Span, kernel: str | None, message: str,
             fixes: tuple[Fix, ...] = (), severity: Severity | None = None, *,
             related: tuple[Related, ...] = (), proven_message: str = "", scope: Span | None = None) -> Finding:
    return Finding(info.code, severity or info.severity, span, kernel, message, info.technique.name, info.doc, fixes,
                   related, proven_message, scope)


def _names(texts: list[str], limit: int = 3) -> str:
    """`a`, `b` and `c` (at most `limit` named, then "and N more")."""
    quoted = [f"`{t}`" for t in texts]
    if len(quoted) > limit:
        return ", ".join(quoted[:limit]) + f" and {len(quoted) - limit} more"
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _inside(function: Function, loop: int | None, outer: int) -> bool:
    """Loop `loop` is `outer` or nested in it."""
    while loop is not None:
        if loop == outer:
            return True
        loop = function.loops[loop].parent
    return False


def _is_device(function: Function) -> bool:
    return function.kind != "host"


def _kernel_name(function: Function) -> str | None:
    return function.name if function.kind == "global" else None


def _stride_text(coefficient: Coefficient) -> str:
    return str(coefficient.value) if coefficient.kind == "constant" else f"`{coefficient.text}`"


def _index_text(access: MemoryAccess) -> str:
    """The subscript as written (`row[k]`, even where `row` is an alias of `A`)."""
    return (access.written_as or access.array) + "".join(f"[{i.text}]" for i in access.indices)


def _walks_row(access: MemoryAccess) -> bool:
    return access.tid_x.kind in ("constant", "runtime") and bool(access.unit_stride_loop_vars)


def _is_vector_type(element_type: str) -> bool:
    return element_type.rstrip("1234").endswith(("float", "int", "double", "half", "uint", "char", "short")) \
        and element_type[-1:] in "234"


def _runtime_stride_is_extent(coefficient: Coefficient) -> bool:
    """A run-time stride spelled as sizes (`N`, `rows`, `ncols * 4`), not as a stride parameter
    (`s00`, `stride_col`) whose value may well be 1, nor a call."""
    names = re.findall(r"[A-Za-z_]\w*", coefficient.text)
    return bool(names) and "(" not in coefficient.text and not any(STRIDE_NAME.search(n) for n in names)


def _stride_severity(access: MemoryAccess) -> Severity | None:
    """warning: threads provably land >= 4x as many sectors as they use; hint: a smaller or
    unproven waste; None: the warp's accesses are contiguous (the stride is the access width)."""
    coefficient = access.tid_x
    width = access.access_bytes or DEFAULT_ELEMENT_BYTES
    if access.access_bytes is None and access.stride_unit_bytes is not None:
        return None  # read as a type of unknown size (`reinterpret_cast<const float8 *>`): not judged
    if coefficient.kind == "runtime":
        return "warning" if _runtime_stride_is_extent(coefficient) else "hint"
    if coefficient.kind != "constant":
        return None
    stride_bytes = abs(coefficient.value or 0) * (access.stride_unit_bytes or DEFAULT_ELEMENT_BYTES)
    if stride_bytes <= width:
        return None  # e.g. float4 loads one float4 apart, or `*(float2 *)&a[2 * i]`
    return "warning" if min(stride_bytes, SECTOR_BYTES) >= 4 * width else "hint"


def _strided_global(access: MemoryAccess) -> bool:
    # `&a[i]` handed to a copy (memcpy, cp.async) moves an unknown number of bytes: not judged.
    return access.space == "global" and access.access != "address"


def _one_thread_wide(function: Function, model: SourceModel) -> bool:
    """Every launch of the kernel in this file has blockDim.x == 1: threadIdx.x is always 0."""
    shapes = model.block_shapes(function.name) if function.kind == "global" else ()
    return bool(shapes) and all(s is not None and len(s) > 1 and s[0] == 1 for s in shapes)


# ---------------------------------------------------------------------------------------------- R001
def uncoalesced_access(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if not _is_device(function) or _one_thread_wide(function, model):
        return
    causes: dict[tuple[str, str], tuple[MemoryAccess, Severity, list[MemoryAccess]]] = {}
    for access in function.accesses:
        if not _strided_global(access) or access.tid_x.kind not in ("constant", "runtime") or _walks_row(access):
            continue
        severity = _stride_severity(access)
        if severity is None:
            continue
        cause = (access.array, access.tid_x.text)
        if cause in causes:
            causes[cause][2].append(access)  # the same array and stride: one cause, one finding
        else:
            causes[cause] = (access, severity, [])
    for access, severity, others in causes.values():
        maybe = "" if severity == "warning" else (
            f" if `{access.tid_x.text}` is not 1" if access.tid_x.kind == "runtime" else
            " (partly served by the same sectors)")
        also = f" ({len(others) + 1} accesses of `{access.array}` with this stride)" if others else ""
        yield _finding(info, access.span, _kernel_name(function),
                       f"`{_index_text(access)}` strides by {_stride_text(access.tid_x)} elements between "
                       f"neighbouring threads (threadIdx.x){maybe}, so each warp access splits into many memory "
                       f"transactions instead of one coalesced one{also}.", severity=severity,
                       related=tuple(Related(o.span, f"`{_index_text(o)}`: the same stride") for o in others))


# ---------------------------------------------------------------------------------------------- R002
def row_per_thread(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if not _is_device(function) or _one_thread_wide(function, model):
        return
    reported: set[int | None] = set()
    for access in function.accesses:
        if not _strided_global(access) or not _walks_row(access) or access.loop in reported:
            continue
        severity = _stride_severity(access)
        if severity is None:
            continue
        loop = function.loops[access.loop] if access.loop is not None else None
        if loop is not None and (loop.unrolled or (loop.trip_count is not None and loop.trip_count <= 8)):
            severity = "hint"  # a short per-thread chunk: vectorisable, and the next steps hit L1
        reported.add(access.loop)
        arrays = sorted({a.array for a in function.accesses if a.loop == access.loop and _walks_row(a)
                         and a.space == "global"})
        variable = access.unit_stride_loop_vars[0]
        named = ", ".join(f"`{a}`" for a in arrays)
        yield _finding(info, access.span, _kernel_name(function),
                       f"Each thread walks its own contiguous run of {named} (loop over "
                       f"`{variable}`, threads {_stride_text(access.tid_x)} elements apart), so at every "
                       "step a warp touches 32 scattered addresses; let neighbouring threads take "
                       "neighbouring elements instead.", severity=severity,
                       related=tuple(_pass_members(function, access)))


def _pass_members(function: Function, first: MemoryAccess) -> Iterator[Related]:
    """The other global accesses of one row-per-thread pass: in its loop (or loops nested in it),
    threads the same stride apart. R001 findings at these locations are this cause (rules/engine.py)."""
    if first.loop is None:
        return
    for access in function.accesses:
        if access is first or not _strided_global(access) or access.tid_x.text != first.tid_x.text:
            continue
        in_pass = _inside(function, access.loop, first.loop)
        # The same array's row outside any row walk (its first element, read before the loop).
        same_row = access.array == first.array and not _walks_row(access)
        if in_pass or same_row:
            yield Related(access.span, f"`{_index_text(access)}`: the same per-thread run")


# ---------------------------------------------------------------------------------------------- R003
def repeated_global_loads(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if not _is_device(function):
        return
    two_dimensional = any(a.tid_y.depends for a in function.accesses)
    reported: set[tuple[int | None, str]] = set()
    for access in function.accesses:
        if access.space != "global" or access.access != "read" or access.loop is None \
                or not access.loop_vars or access.data_dependent:
            continue
        trip_count = function.loops[access.loop].trip_count
        if trip_count is not None and trip_count <= MAX_UNROLL_TRIP:
            continue  # a few broadcast coefficients stay in cache; tiling pays off for long loops
        shared_across = "x" if not access.tid_x.depends else \
            "y" if two_dimensional and not access.tid_y.depends else None
        if shared_across is None or (access.loop, access.array) in reported:
            continue
        reported.add((access.loop, access.array))
        yield _finding(info, access.span, _kernel_name(function),
                       f"All threads along threadIdx.{shared_across} load the same `{access.array}` element "
                       "from global memory in every iteration of this loop; stage tiles in shared memory "
                       "so each element is fetched once per block.")


# ---------------------------------------------------------------------------------------------- R004, R005
# Atomics a warp or block reduction (R004) or a shared-memory copy (R005) can replace: commutative
# read-modify-writes. atomicExch/atomicCAS (locks, flags, hand-rolled updates) and the wrapping
# atomicInc/atomicDec have no such rewrite.
REDUCIBLE_ATOMICS = ("atomicAdd", "atomicSub", "atomicMax", "atomicMin", "atomicAnd", "atomicOr", "atomicXor")
# A value already combined across the warp or block: a vote count, a group size, a shuffle or
# `__reduce_*_sync` / `cg::reduce` result.
WARP_AGGREGATE = re.compile(r"__popc|\.size\(\)|\.num_threads\(\)|__reduce_\w+_sync|\breduce\s*\(|__shfl")
# Calls that pick one lane of a warp or group: with an equality guard they make a leader.
LANE_SELECTION = ("__activemask", "__ballot_sync", "__ballot", "__ffs", "__lane_id", "lanemask", "laneid",
                  "thread_rank", "coalesced_threads", "__match_any_sync", "__popc")

LANE_NAME = re.compile(r"(?i)lane|leader|rank")


def _atomic_base(name: str) -> str:
    """`atomicAdd_block` -> `atomicAdd`."""
    return name.split("_", 1)[0]


def _leader_only(atomic: Atomic, function: Function) -> bool:
    """Run by one lane per warp or group: `if (lane == 0)` (the extractor's guard), or an equality
    guard in a function that elects its lane from a warp vote (`__ffs(__activemask()) - 1`,
    `__popc(mask & lanemask_lt)`, `g.thread_rank() == 0`): the warp-aggregated atomic."""
    if atomic.single_thread_guard:
        return True
    if "==" not in atomic.guard and not atomic.guard.lstrip("( ").startswith("!"):
        return False
    return any(token in atomic.guard for token in LANE_SELECTION) or (
        LANE_NAME.search(atomic.guard) is not None
        and any(any(token in call.name for token in LANE_SELECTION) for call in function.calls))


def single_address_atomic(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if not _is_device(function):
        return
    for atomic in function.atomics:
        if atomic.space != "global" or atomic.thread_dependent or atomic.data_dependent \
                or _atomic_base(atomic.function) not in REDUCIBLE_ATOMICS or _leader_only(atomic, function) \
                or WARP_AGGREGATE.search(atomic.operand):
            continue
        if atomic.result_used:
            # `slot = atomicAdd(count, 1)`: each thread takes a ticket; a warp-aggregated increment
            # (one atomic of the warp's count by a leader, the base broadcast) gives the same slots.
            message = (f"Every thread runs `{atomic.function}` on the same global address `{atomic.target.text}` "
                       "and uses the old value, so the whole grid serialises on one counter; a warp-aggregated "
                       "update (one lane adds the warp's total, `__shfl_sync` broadcasts the base, each lane adds "
                       "its rank) issues one atomic per warp.")
        else:
            message = (f"Every thread runs `{atomic.function}` on the same global address `{atomic.target.text}`, "
                       "so the updates of the whole grid serialise; reduce within the warp (shuffles) and the "
                       "block first and issue one atomic per block.")
        yield _finding(info, atomic.span, _kernel_name(function), message)


def data_dependent_atomics(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if not _is_device(function):
        return
    for atomic in function.atomics:
        # `atomicAdd_block` on global memory is only correct when no other block updates the
        # address: the bins are already private to the block (a fallback for bins too many for
        # shared memory). A used old value is a ticket or an arrival count (the last of two
        # children refits a tree node), not a histogram.
        if atomic.space == "global" and atomic.data_dependent and not atomic.single_thread_guard \
                and _atomic_base(atomic.function) in REDUCIBLE_ATOMICS and not atomic.function.endswith("_block") \
                and not atomic.result_used:
            yield _finding(info, atomic.span, _kernel_name(function),
                           f"Per-element global `{atomic.function}` into `{atomic.array}` at data-dependent "
                           "addresses: many threads contend on a few hot addresses in slow global memory; "
                           "accumulate a private copy in shared memory and merge it once per block.")


# ---------------------------------------------------------------------------------------------- R006
def missing_restrict_const(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if function.kind != "global":
        return
    read = {a.array for a in function.accesses if a.space == "global"}
    for parameter in function.parameters:
        if not parameter.is_pointer or parameter.name in function.written_pointers or \
                parameter.name not in read or parameter.star_end is None or parameter.name_span is None:
            continue
        if parameter.is_const and parameter.is_restrict:
            continue
        missing = [q for q, present in (("const", parameter.is_const), ("__restrict__", parameter.is_restrict))
                   if not present]
        edits = qualifier_edits(parameter, const=True, restrict=True)
        spelled = " and ".join(f"`{m}`" for m in missing)
        yield _finding(
            info, parameter.span, function.name,
            f"`{parameter.name}` is only read but lacks {spelled}, so the compiler must assume it aliases "
            "the written pointers: loads cannot be reordered or served by the read-only cache.",
            (Fix(f"Declare `{parameter.name}` as {' '.join(missing)}", edits),),
        )


# ---------------------------------------------------------------------------------------------- R007, R008
def _power_of_two(text: str) -> bool:
    try:
        value = abs(float(text.rstrip("lL")))
    except ValueError:
        return False
    return value == 0 or (math.frexp(value)[0] == 0.5)


def _literal_severity(literal: FloatLiteral) -> Severity | None:
    """warning when the literal makes double instructions, hint when nvcc narrows them back to
    float, None when the literal is only converted (`float x = 0.0;`, `T(2.0)`, an argument).

    Double rounding is innocuous for one +, -, *, / of floats (53 >= 2 * 24 + 2 bits), so nvcc
    narrows `x * 0.75`, `x * 0.5` or `x + 1.5` (an exact literal, one operation) to float, and
    `y * 1.0` anywhere; an inexact literal (`0.1`), an integer or double operand, or a chain of
    two or more operations around any literal (`0.5 * a + 0.5 * b`, `acc * 0.5 * x`) stays in
    f64 (tests/unit/rules/test_confirm_nvcc.py checks each case against nvcc's PTX)."""
    if literal.operations == 0:
        return None
    others = literal.operand_types
    if "int" in others or "double" in others:
        return "warning"  # an integer converted to double, or double data: f64 instructions remain
    if (literal.operator == "*" or (literal.operator == "/" and not literal.dividend)) and _is_one(literal.text):
        return "hint"  # the identity: nothing is computed in double
    if literal.operations >= 2:
        return "warning"
    if not literal.exact_in_float and not (literal.operator in ("*", "/") and _power_of_two(literal.text)):
        return "warning"
    return "hint"  # one operation with an exact literal (or a template / unknown operand type)


def _is_one(text: str) -> bool:
    try:
        return float(text.rstrip("lL")) == 1.0
    except ValueError:
        return False


def double_literal(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if not _is_device(function):
        return
    lines: dict[int, list[tuple[FloatLiteral, Severity]]] = {}
    for literal in function.float_literals:
        severity = _literal_severity(literal)
        if severity is not None:
            lines.setdefault(literal.span.start.line, []).append((literal, severity))
    repeats = function.kind == "global" and _memory_work_repeats(function)
    for found in lines.values():
        # One finding per line: nvcc's code for a line is what confirms or refutes it (rules/confirm.py).
        yield _line_of_literals(info, function, found, repeats and not any(literal.in_loop for literal, _ in found))


def _memory_work_repeats(function: Function) -> bool:
    """Every global memory access of the kernel sits in a loop that may run more than once: each
    thread's memory work repeats, so code outside the loops runs once per several elements."""
    accesses = [a for a in function.accesses if a.space == "global"]
    return bool(accesses) and all(_may_repeat(function, a.loop) for a in accesses)


def _may_repeat(function: Function, loop: int | None) -> bool:
    """Loop `loop` or one around it is not known to run at most once."""
    while loop is not None:
        trips = function.loops[loop].trip_count
        if trips is None or trips > 1:
            return True
        loop = function.loops[loop].parent
    return False


def _line_of_literals(info: RuleInfo, function: Function, found: list[tuple[FloatLiteral, Severity]],
                      once_per_thread: bool = False) -> Finding:
    """`once_per_thread`: the line is outside every loop of a kernel whose memory work repeats in
    loops (`_memory_work_repeats`): its double instructions run once per thread, not per element,
    so a warning becomes a hint (and nvcc's f64 code keeps it one: it claims no more than that)."""
    warns = any(s == "warning" for _, s in found)
    once = once_per_thread and warns
    severity: Severity = "warning" if warns and not once else "hint"
    # Name the literals that make the claim: for a warning (or a once-per-thread hint), those that promote.
    named = [literal for literal, s in found if s == ("warning" if warns else "hint")]
    texts = list(dict.fromkeys(literal.text for literal in named))  # each spelling once
    fixed = _names([t + "f" for t in texts])
    counted = f" ({len(named)} literals)" if len(named) > len(texts) else ""
    subject = f"`{texts[0]}` is a double-precision literal" if len(named) == 1 else \
        f"{_names(texts)}{counted} are double-precision literals"
    it = "it" if len(named) == 1 else "them"
    if once:
        message = (f"{subject}, so the float arithmetic around {it} is computed in double, but once per thread: "
                   f"the line is outside every loop of `{function.name}`, whose global memory accesses all "
                   f"repeat in loops; write {fixed} to say what is meant.")
        proven = ""
    elif severity == "hint":
        these = "this exact operation" if len(named) == 1 else "these exact operations"
        says = "says" if len(texts) == 1 else "say"
        message = f"{subject}; the compiler can narrow {these} back to float, but {fixed} {says} what is meant."
        proven = f"{subject} and the float arithmetic around {it} stays in double precision; write {fixed}."
    else:
        message = (f"{subject}, so the float arithmetic around {it} is promoted "
                   f"to double (up to 64x slower on many GPUs); write {fixed}.")
        proven = ""
    title = f"Write `{found[0][0].text}f`" if len(found) == 1 else \
        f"Write the {len(found)} literals of this line as float"
    fix = Fix(title, tuple(float_literal_edit(literal) for literal, _ in found))
    first = named[0]
    related = tuple(Related(literal.span, f"`{literal.text}` on the same line, also without `f`")
                    for literal, _ in found if literal is not first)
    return _finding(info, first.span, _kernel_name(function), message, (fix,), severity, related=related,
                    proven_message=proven)


def double_math_call(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if not _is_device(function):
        return
    for call in function.math_calls:
        # On float arguments CUDA C++ calls the float overload (`sqrt(float)` is `sqrtf`): nothing to say.
        if call.overload != "double":
            continue
        fix = Fix(f"Call `{call.float_name}`", (float_call_edit(call),))
        yield _finding(info, call.span, _kernel_name(function),
                       f"`{call.name}` gets a double or integer argument here, so the double-precision "
                       f"function runs; call `{call.float_name}` (with float arguments) in float code.", (fix,))


# ---------------------------------------------------------------------------------------------- R009
def block_size(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    for launch in function.launches:
        threads = launch.threads_per_block
        if threads is None or threads <= 1:
            continue  # `<<<1, 1>>>`: a deliberate one-thread helper (a final division, a flag)
        blocks = math.prod(v for v in launch.grid_dims or () if v is not None) \
            if launch.grid_dims and all(v is not None for v in launch.grid_dims) else None
        if blocks is not None and blocks * threads < TINY_LAUNCH_THREADS:
            continue  # `<<<3, 5>>>`: a fixed handful of threads doing bookkeeping, no throughput to lose
        severity: Severity = "warning"
        if threads % 32:
            why = (f"{threads} threads per block is not a multiple of the warp size (32): the last warp of every "
                   f"block runs with {32 - threads % 32} idle lanes")
        elif threads < 64:
            severity = "hint"  # a warp per block can be right (one row per warp); it caps occupancy
            why = (f"{threads} threads per block is few: the per-SM block limit caps occupancy at "
                   f"{threads} x 32 threads per SM")
        else:
            continue
        yield _finding(info, launch.block.span, launch.kernel,
                       f"{why}; use a multiple of 32 between 128 and 512, e.g. 256.", severity=severity)


# ---------------------------------------------------------------------------------------------- R010
def _modulo(branch: Branch) -> str:
    """`modulo 2` for `% 2` and `& 1`, `modulo `k`` for a run-time `% k`."""
    if branch.modulus_value is not None:
        return f"modulo {branch.modulus_value}"
    if branch.modulus_operator == "&":
        mask = branch.modulus.text if branch.modulus is not None else ""
        if mask.startswith("(") and mask.endswith(")") and mask.count("(") == 1:
            mask = mask[1:-1]  # `(width - 1)` -> `width - 1`
        return f"masked by `{mask}`"
    return f"modulo `{branch.modulus.text if branch.modulus is not None else ''}`"


def divergent_modulo_branch(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if not _is_device(function):
        return
    for branch in function.branches:
        if branch.modulus is None or branch.kind != "if":
            continue
        if branch.modulus_value is not None and branch.modulus_value % 32 == 0:
            continue
        if branch.modulus_value is None and re.search(r"(?i)warp_?size", branch.modulus.text):
            continue
        if branch.loop_stepped and not branch.has_else:
            # `if (tid % (2 * s) == 0)` in a loop over s: the interleaved reduction. Each step keeps
            # fewer lanes of every warp working, and no warp finishes early, however short the body.
            yield _finding(info, branch.condition.span, _kernel_name(function),
                           f"`{branch.condition.text}` keeps ever fewer lanes of every warp working as "
                           f"`{branch.modulus.text}` grows (interleaved addressing), so all warps stay busy "
                           "until the last step; index by `2 * s * tid` or use sequential addressing "
                           "(`if (tid < s)`) so that whole warps finish early.")
            continue
        # Ternaries and one-statement guards compile to selects or predicated instructions.
        if branch.statements < 2:
            continue
        if not branch.has_else:
            # `if (tid % k == 0) {...}`: leader lanes work while the rest wait; no second path.
            yield _finding(info, branch.condition.span, _kernel_name(function),
                           f"Only the lanes with `{branch.condition.text}` run this block ({_modulo(branch)}) "
                           "while the rest of each warp idles; if it is long, give the work to whole warps "
                           "instead.", severity="hint")
            continue
        yield _finding(info, branch.condition.span, _kernel_name(function),
                       f"The branch on `{branch.condition.text}` alternates between neighbouring threads "
                       f"({_modulo(branch)}), so every warp runs both paths one after the other; "
                       "map the work so whole warps take the same path.")


# ---------------------------------------------------------------------------------------------- R011
def bank_conflicts(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if not _is_device(function):
        return
    walks = {id(walk.access): walk for walk in column_walks(function, model)}
    # One finding per cause: the accesses of one loop to one tile with one conflict (the four
    # butterflies of a radix-2 stage) are related locations of the first.
    causes: dict[tuple[object, ...], tuple[MemoryAccess, str, tuple[Fix, ...], list[MemoryAccess]]] = {}
    for access in function.accesses:
        if access.space != "shared":
            continue
        walk = walks.get(id(access))
        if walk is not None:
            key: tuple[object, ...] = ("column", walk.shared.name, access.loop)
            if key in causes:
                causes[key][3].append(access)
                continue
            fix = Fix(f"Pad `{walk.shared.name}` rows to {walk.padded}", (walk.edit,))
            causes[key] = (access,
                           f"`{_index_text(access)}` makes a warp read down a column of `{walk.shared.name}`, whose "
                           f"rows are {walk.row_words} elements wide: all 32 threads hit the same bank and are "
                           f"served one by one; pad each row by one element (`[{walk.padded}]`)", (fix,), [])
            continue
        shared = shared_declaration(model, function, access.array)
        if shared is None or len(access.indices) != 1:
            continue
        if access.tid_x.kind == "constant" and element_words(shared) == 1 \
                and shared.element_type in FOUR_BYTE_TYPES and (access.tid_x.value or 0) % 2 == 0:
            stride = abs(access.tid_x.value or 0)
            key = ("stride", access.array, stride, access.loop)
            if key in causes:
                causes[key][3].append(access)
                continue
            ways = min(32, stride & -stride)
            causes[key] = (access,
                           f"`{_index_text(access)}` strides by {stride} words between neighbouring threads: "
                           f"a {ways}-way shared-memory bank conflict; use sequential addressing "
                           "(`s[tid + offset]`) or pad", (), [])
    for access, message, fixes, others in causes.values():
        also = f" ({len(others) + 1} accesses of `{access.array}` here)" if others else ""
        yield _finding(info, access.span, _kernel_name(function), f"{message}{also}.", fixes,
                       related=tuple(Related(o.span, f"`{_index_text(o)}`: the same conflict") for o in others))


# ---------------------------------------------------------------------------------------------- R012
def divergent_syncthreads(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if not _is_device(function):
        return
    for sync in function.syncs:
        if sync.after_early_exit:
            # Exited threads do not hold up a barrier on NVIDIA GPUs, and the guard is often one the
            # launch makes impossible: not a proven hazard, so a hint about portability.
            related = (Related(sync.exit_span, f"the threads with `{sync.branch_condition}` return here"),) \
                if sync.exit_span is not None else ()
            yield _finding(info, sync.span, _kernel_name(function),
                           f"`__syncthreads()` after the threads with `{sync.branch_condition}` returned early: "
                           "NVIDIA GPUs do not wait for exited threads, but the CUDA programming model requires "
                           "every thread of the block to reach the barrier; keep them alive and guard only the "
                           "work if this must be portable.", severity="hint", related=related)
        elif sync.under_thread_branch:
            yield _finding(info, sync.span, _kernel_name(function),
                           f"`__syncthreads()` inside a branch on `{sync.branch_condition}`, which not every "
                           "thread of the block takes: threads that skip it never reach the barrier, which "
                           "hangs the block or corrupts shared memory.")


# ---------------------------------------------------------------------------------------------- R013
def _loops_over_devices(function: Function, loop_index: int | None) -> bool:
    """The loop (or one around it) selects a device per iteration: its work cannot be hoisted."""
    while loop_index is not None:
        loop = function.loops[loop_index]
        if any(c.name.endswith(DEVICE_SELECTION) and loop.span.contains(c.span.start) for c in function.calls) \
                or re.search(r"(?i)device", loop.condition):
            return True
        loop_index = loop.parent
    return False


def _wait_advice(call_name: str, args: tuple[str, ...]) -> str:
    if call_name.startswith("cudaMemcpy"):
        if any("HostToDevice" in a for a in args):
            return "upload with `cudaMemcpyAsync` from pinned memory, or batch the uploads before the loop"
        return "batch the copies after the loop, or `cudaMemcpyAsync` into pinned memory and wait once"
    return "kernels of one stream run in order without it: synchronise once after the loop"


def _asynchronous_variant(name: str) -> str:
    """`cudaMemcpy` -> `cudaMemcpyAsync`; the waits' counterpart is an event or stream query."""
    return name + "Async" if name.startswith("cudaMemcpy") else "cudaStreamQuery" if "Stream" in name \
        else "cudaEventQuery"


def host_sync_in_loop(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    """Warning only when the wait is proven avoidable: the loop is no timing harness, the call
    runs every iteration and is no arm of a sync/async pair, and no other host code in the loop
    reads memory or branches on data (which the wait may be there for); a hint otherwise."""
    if function.kind != "host":
        return
    for call in function.calls:
        if not call.in_loop or _loops_over_devices(function, call.loop):
            continue
        context = call.host or HostCallContext()
        if context.once or context.paired_variant:
            continue  # `if (i == 0)`, `...; break;`, `if (async) ...Async(...); else ...(...)`
        if context.drain and "Synchronize" in call.name:
            continue  # `for (s...) cudaStreamSynchronize(streams[s]);`: this loop is the one wait
        if call.name in HOST_BLOCKING_CALLS:
            args = tuple(a.text for a in call.args)
            if call.name.startswith("cudaMemcpy") and any("DeviceToDevice" in a for a in args):
                continue  # a device-to-device copy is queued on the stream; the host goes on
            if context.timed_inside:
                continue  # timers in the loop: each iteration is measured, the wait belongs to it
            asynchronous = _asynchronous_variant(call.name)
            if any(other.name == asynchronous and other.loop != call.loop for other in function.calls):
                yield _finding(info, call.span, None,
                               f"`{call.name}` blocks the host in every iteration while another loop of this "
                               f"function uses `{asynchronous}`: if this loop is the synchronous baseline of a "
                               "comparison, nothing to change; otherwise use the asynchronous variant here too.",
                               severity="hint")
            elif context.timed_around:
                yield _finding(info, call.span, None,
                               f"The loop is timed and `{call.name}` waits in every iteration, so the figure "
                               "is each iteration's latency; if throughput is meant, synchronise once after "
                               "the loop.", severity="hint")
            elif context.host_reads:
                yield _finding(info, call.span, None,
                               f"`{call.name}` blocks the host in every iteration; host code in the loop may "
                               "need what it waits for. If it does not, "
                               f"{_wait_advice(call.name, args)}.", severity="hint")
            else:
                yield _finding(info, call.span, None,
                               f"`{call.name}` blocks the host in every iteration and no host code in the loop "
                               f"reads what it waits for, so CPU and GPU take turns; {_wait_advice(call.name, args)}.")
        elif call.name in HOST_ALLOCATION_CALLS:
            yield _finding(info, call.span, None,
                           f"`{call.name}` inside a loop allocates or frees device memory (and synchronises) on "
                           "every iteration; allocate once outside the loop or use a pool.", severity="hint")


# ---------------------------------------------------------------------------------------------- R014
def sequential_reduction(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if function.kind != "global":
        return
    if function.shared_arrays or any(c.name.startswith(REDUCTION_COMBINERS) for c in function.calls):
        return
    single_targets = [a for a in function.atomics if a.space == "global" and a.loop_depth == 0
                      and not a.thread_dependent and not a.data_dependent and not a.single_thread_guard]
    if not single_targets:
        return
    loop_reads = [a for a in function.accesses
                  if a.space == "global" and a.access == "read" and a.loop is not None]
    if not loop_reads:
        return
    loop = function.loops[loop_reads[0].loop or 0]
    while loop.parent is not None:
        loop = function.loops[loop.parent]
    yield _finding(info, loop.header_span, function.name,
                   f"Each thread sums `{loop_reads[0].array}` in a sequential loop and then adds its total "
                   f"to `{single_targets[0].target.text}`: long serial chains per thread plus contended "
                   "atomics; use a grid-stride loop, a warp-shuffle reduction and one atomic per block.")


# ---------------------------------------------------------------------------------------------- R015
def unroll_candidate(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if not _is_device(function):
        return
    for loop in function.loops:
        # nvcc unrolls the shortest constant loops fully without being asked: nothing to gain.
        if loop.unrolled or loop.trip_count is None or \
                not COMPILER_UNROLLED_TRIP < loop.trip_count <= MAX_UNROLL_TRIP:
            continue
        yield _finding(info, loop.header_span, _kernel_name(function),
                       f"This loop always runs {loop.trip_count} times; unless nvcc unrolls it by itself, "
                       "`#pragma unroll` removes the loop overhead and lets the compiler keep indices and "
                       "operands in registers.",
                       (Fix("Add `#pragma unroll`", (unroll_edit(loop, None),)),), scope=loop.span,
                       proven_message=f"This loop always runs {loop.trip_count} times and nvcc kept it as a "
                       "loop; `#pragma unroll` removes the loop overhead and lets the compiler keep indices "
                       "and operands in registers.")


# ---------------------------------------------------------------------------------------------- R016
def missing_grid_stride(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if function.kind != "global":
        return
    if function.loops or function.shared_arrays or not function.accesses:
        return
    if any(a.tid_y.depends for a in function.accesses):
        return
    bound_checks = [b for b in function.branches if b.kind == "if" and "<" in b.condition.text]
    unit_accesses = [a for a in function.accesses if a.space == "global" and a.tid_x.kind == "unit"]
    if not bound_checks or not unit_accesses:
        return
    yield _finding(info, bound_checks[0].condition.span, function.name,
                   "Each thread handles exactly one element, so the grid must be sized to the data and "
                   "per-thread setup is paid per element; a grid-stride loop lets a fixed grid of a few "
                   "blocks per SM cover any size.")
