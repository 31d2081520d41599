"""The rule checks: one function per rule, `check(function, model, info) -> Iterable[Finding]`.

A check looks at ONE function of the model: its findings must depend only on that function's
facts, plus `model.file_shared_arrays` (R011) -- never on other functions, the tree or the
configuration. That is what lets the engine cache findings per function text and translate
them when the function moves (rules/engine.py). Cross-function facts come from the function
that holds them: a launch site (R009) is checked in the host function that contains it and
names the launched kernel by text. Checks report with the rule's default severity; the engine
applies overrides. Checks must stay quiet on well-optimised kernels (tests/data/rules/good):
when in doubt, do not report.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from regrapht.cuda.model import Coefficient, Function, MemoryAccess, SharedArray, SourceModel
from regrapht.rules.types import Finding, Fix
from regrapht.text import Span, TextEdit

if TYPE_CHECKING:
    from regrapht.rules.registry import RuleInfo

HOST_BLOCKING_CALLS = frozenset({
    "cudaMemcpy", "cudaMemcpy2D", "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol", "cudaDeviceSynchronize",
    "cudaThreadSynchronize", "cudaStreamSynchronize", "cudaMalloc", "cudaFree", "cudaMemset",
})
REDUCTION_COMBINERS = ("__shfl", "__reduce", "cub::", "cooperative_groups", "reduce")
FOUR_BYTE_TYPES = frozenset({"float", "int", "unsigned", "unsigned int", "uint32_t", "int32_t"})
MAX_UNROLL_TRIP = 64


def _finding(info: RuleInfo, span: Span, kernel: str | None, message: str,
             fixes: tuple[Fix, ...] = ()) -> Finding:
    return Finding(info.code, info.severity, span, kernel, message, info.technique, info.doc, fixes)


def _is_device(function: Function) -> bool:
    return function.kind != "host"


def _kernel_name(function: Function) -> str | None:
    return function.name if function.kind == "global" else None


def _stride_text(coefficient: Coefficient) -> str:
    return str(coefficient.value) if coefficient.kind == "constant" else f"`{coefficient.text}`"


def _index_text(access: MemoryAccess) -> str:
    return f"{access.array}" + "".join(f"[{i.text}]" for i in access.indices)


def _walks_row(access: MemoryAccess) -> bool:
    return access.tid_x.kind in ("constant", "runtime") and bool(access.unit_stride_loop_vars)


def _is_vector_type(element_type: str) -> bool:
    return element_type.rstrip("1234").endswith(("float", "int", "double", "half", "uint", "char", "short")) \
        and element_type[-1:] in "234"


# ---------------------------------------------------------------------------------------------- R001
def uncoalesced_access(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if not _is_device(function):
        return
    for access in function.accesses:
        if access.space != "global" or access.tid_x.kind not in ("constant", "runtime") or _walks_row(access):
            continue
        if access.tid_x.kind == "constant" and _is_vector_type(access.element_type) is False \
                and abs(access.tid_x.value or 0) <= 1:
            continue
        yield _finding(info, access.span, _kernel_name(function),
                       f"`{_index_text(access)}` strides by {_stride_text(access.tid_x)} elements between "
                       "neighbouring threads (threadIdx.x), so each warp access splits into many memory "
                       "transactions instead of one coalesced one.")


# ---------------------------------------------------------------------------------------------- R002
def row_per_thread(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if not _is_device(function):
        return
    for access in function.accesses:
        if access.space == "global" and _walks_row(access):
            variable = access.unit_stride_loop_vars[0]
            yield _finding(info, access.span, _kernel_name(function),
                           f"Each thread walks its own contiguous run of `{access.array}` (loop over "
                           f"`{variable}`, threads {_stride_text(access.tid_x)} elements apart), so at every "
                           "step a warp touches 32 scattered addresses; let neighbouring threads take "
                           "neighbouring elements instead.")


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
def single_address_atomic(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if not _is_device(function):
        return
    for atomic in function.atomics:
        if atomic.space == "global" and not atomic.thread_dependent and not atomic.data_dependent \
                and not atomic.single_thread_guard:
            yield _finding(info, atomic.span, _kernel_name(function),
                           f"Every thread runs `{atomic.function}` on the same global address "
                           f"`{atomic.target.text}`, so the updates of the whole grid serialise; reduce within "
                           "the warp (shuffles) and the block first and issue one atomic per block.")


def data_dependent_atomics(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if not _is_device(function):
        return
    for atomic in function.atomics:
        if atomic.space == "global" and atomic.data_dependent and not atomic.single_thread_guard:
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
        edits: list[TextEdit] = []
        missing: list[str] = []
        if not parameter.is_const:
            missing.append("const")
            edits.append(TextEdit(Span(parameter.span.start, parameter.span.start), "const "))
        if not parameter.is_restrict:
            missing.append("__restrict__")
            gap = Span(parameter.star_end, parameter.name_span.start)
            edits.append(TextEdit(gap, "__restrict__ " if gap.start == gap.end else " __restrict__ "))
        spelled = " and ".join(f"`{m}`" for m in missing)
        yield _finding(
            info, parameter.span, function.name,
            f"`{parameter.name}` is only read but lacks {spelled}, so the compiler must assume it aliases "
            "the written pointers: loads cannot be reordered or served by the read-only cache.",
            (Fix(f"Declare `{parameter.name}` as {' '.join(missing)}", tuple(edits)),),
        )


# ---------------------------------------------------------------------------------------------- R007, R008
def double_literal(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if not _is_device(function):
        return
    for literal in function.float_literals:
        fix = Fix(f"Write `{literal.text}f`", (TextEdit(Span(literal.span.end, literal.span.end), "f"),))
        yield _finding(info, literal.span, _kernel_name(function),
                       f"`{literal.text}` is a double-precision literal, so the float arithmetic around it "
                       f"is promoted to double (up to 64x slower on many GPUs); write `{literal.text}f`.",
                       (fix,))


def double_math_call(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if not _is_device(function):
        return
    for call in function.math_calls:
        fix = Fix(f"Call `{call.float_name}`", (TextEdit(call.span, call.float_name),))
        yield _finding(info, call.span, _kernel_name(function),
                       f"`{call.name}` is the double-precision function and can promote float code to "
                       f"double arithmetic; call `{call.float_name}` for float arguments.", (fix,))


# ---------------------------------------------------------------------------------------------- R009
def block_size(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    for launch in function.launches:
        threads = launch.threads_per_block
        if threads is None or threads <= 0:
            continue
        if threads % 32:
            why = (f"{threads} threads per block is not a multiple of the warp size (32): the last warp of every "
                   f"block runs with {32 - threads % 32} idle lanes")
        elif threads < 64:
            why = (f"{threads} threads per block is too few: the per-SM block limit caps occupancy and latency "
                   "cannot be hidden")
        else:
            continue
        yield _finding(info, launch.block.span, launch.kernel,
                       f"{why}; use a multiple of 32 between 128 and 512, e.g. 256.")


# ---------------------------------------------------------------------------------------------- R010
def divergent_modulo_branch(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if not _is_device(function):
        return
    for branch in function.branches:
        if branch.modulus is None or branch.kind not in ("if", "ternary"):
            continue
        if branch.modulus_value is not None and branch.modulus_value % 32 == 0:
            continue
        yield _finding(info, branch.condition.span, _kernel_name(function),
                       f"The branch on `{branch.condition.text}` alternates between neighbouring threads "
                       f"(modulo `{branch.modulus.text}`), so every warp runs both paths one after the other; "
                       "map the work so whole warps take the same path.")


# ---------------------------------------------------------------------------------------------- R011
def _shared_declaration(model: SourceModel, function: Function, name: str) -> SharedArray | None:
    for shared in function.shared_arrays + model.file_shared_arrays:
        if shared.name == name:
            return shared
    return None


def bank_conflicts(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if not _is_device(function):
        return
    for access in function.accesses:
        if access.space != "shared":
            continue
        shared = _shared_declaration(model, function, access.array)
        if shared is None:
            continue
        element_words = 2 if shared.element_type in ("double", "long long", "int64_t", "uint64_t") else 1
        if len(access.indices) >= 2 and len(shared.dims) == len(access.indices):
            row_words = shared.dim_values[-1]
            column_walk = any(c.kind in ("unit", "constant") for c in access.index_tid_x[:-1])
            if row_words is None or not column_walk or access.index_tid_x[-1].depends:
                continue
            if (row_words * element_words) % 32:
                continue
            last = shared.dims[-1]
            padded = str(row_words + 1) if last.strip().isdigit() else f"{last} + 1"
            fix = Fix(f"Pad `{shared.name}` rows to {padded}",
                      (TextEdit(shared.dim_spans[-1], padded),))
            yield _finding(info, access.span, _kernel_name(function),
                           f"`{_index_text(access)}` makes a warp read down a column of `{shared.name}`, whose "
                           f"rows are {row_words} elements wide: all 32 threads hit the same bank and are "
                           f"served one by one; pad each row by one element (`[{padded}]`).", (fix,))
        elif len(access.indices) == 1 and access.tid_x.kind == "constant" and element_words == 1 \
                and shared.element_type in FOUR_BYTE_TYPES and (access.tid_x.value or 0) % 2 == 0:
            stride = abs(access.tid_x.value or 0)
            ways = min(32, stride & -stride)
            yield _finding(info, access.span, _kernel_name(function),
                           f"`{_index_text(access)}` strides by {stride} words between neighbouring threads: "
                           f"a {ways}-way shared-memory bank conflict; use sequential addressing "
                           "(`s[tid + offset]`) or pad.")


# ---------------------------------------------------------------------------------------------- R012
def divergent_syncthreads(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if not _is_device(function):
        return
    for sync in function.syncs:
        if sync.after_early_exit:
            yield _finding(info, sync.span, _kernel_name(function),
                           f"`__syncthreads()` after the threads with `{sync.branch_condition}` returned early: "
                           "they never reach the barrier, which hangs the block or corrupts shared memory; keep "
                           "every thread alive to the barrier and guard only the work.")
        elif sync.under_thread_branch:
            yield _finding(info, sync.span, _kernel_name(function),
                           f"`__syncthreads()` inside a branch on `{sync.branch_condition}`, which not every "
                           "thread of the block takes: threads that skip it never reach the barrier, which "
                           "hangs the block or corrupts shared memory.")


# ---------------------------------------------------------------------------------------------- R013
def host_sync_in_loop(function: Function, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
    if function.kind != "host":
        return
    for call in function.calls:
        if call.in_loop and call.name in HOST_BLOCKING_CALLS:
            yield _finding(info, call.span, None,
                           f"`{call.name}` inside a loop blocks the host on every iteration and serialises "
                           "CPU and GPU; hoist it out of the loop (batch transfers, synchronise once).")


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
        if loop.unrolled or loop.trip_count is None or not 2 <= loop.trip_count <= MAX_UNROLL_TRIP:
            continue
        yield _finding(info, loop.header_span, _kernel_name(function),
                       f"This loop always runs {loop.trip_count} times; `#pragma unroll` removes the loop "
                       "overhead and lets the compiler keep indices and operands in registers.")


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
