"""The rule registry: per-rule metadata (`RuleInfo`), the user's `RuleConfig`, and `ALL_RULES`.

`ALL_RULES` maps each stable code (R001...) to its `Rule`: metadata that the server, the docs
and CodeLens read (code, title, default severity, technique, doc path) plus the per-function
check (rules/checks.py); `Rule.check(model, info)` runs it over a whole model. Codes are never
reused or renumbered. A rule's technique is the record that lists its code (regrapht/techniques.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from regrapht.cuda.model import Function, SourceModel
from regrapht.rules import checks
from regrapht.rules.types import Finding, Severity
from regrapht.techniques import Technique, technique_of_rule


@dataclass(frozen=True)
class RuleInfo:
    code: str
    title: str
    severity: Severity  # the default
    technique: Technique  # the record listing this rule's code
    summary: str  # one line for listings

    @property
    def doc(self) -> str:
        """The rule's page, relative to docs/."""
        return f"rules/{self.code}.md"


# Findings of one function; may read `model.file_shared_arrays`, nothing else of the model.
FunctionCheck = Callable[[Function, SourceModel, RuleInfo], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    info: RuleInfo
    check_function: FunctionCheck

    def check(self, model: SourceModel, info: RuleInfo) -> Iterator[Finding]:
        """The findings over every function of `model`, in function order."""
        for function in model.functions:
            yield from self.check_function(function, model, info)


@dataclass(frozen=True)
class RuleConfig:
    """Which rules run and with what severity. `enabled=None` means all rules."""

    enabled: frozenset[str] | None = None
    severity_overrides: dict[str, Severity] = field(default_factory=dict)

    def is_enabled(self, code: str) -> bool:
        return self.enabled is None or code in self.enabled


def _rule(code: str, title: str, severity: Severity, summary: str, check: FunctionCheck) -> Rule:
    return Rule(RuleInfo(code, title, severity, technique_of_rule(code), summary), check)


ALL_RULES: dict[str, Rule] = {rule.info.code: rule for rule in (
    _rule("R001", "Uncoalesced global memory access", "warning",
          "Neighbouring threads access global memory with a stride, so warps need many transactions.",
          checks.uncoalesced_access),
    _rule("R002", "Each thread walks its own row", "warning",
          "A loop walks a contiguous row per thread; at any step the warp touches 32 different rows.",
          checks.row_per_thread),
    _rule("R003", "Repeated global loads in a loop", "information",
          "Threads of a block reload the same global elements every iteration; tile them in shared memory.",
          checks.repeated_global_loads),
    _rule("R004", "Global atomic on a single address", "warning",
          "Every thread atomically updates the same global address, serialising the whole grid.",
          checks.single_address_atomic),
    _rule("R005", "Data-dependent global atomics", "warning",
          "Per-element global atomics into a few hot bins; privatise the bins in shared memory.",
          checks.data_dependent_atomics),
    _rule("R006", "Read-only pointer without const __restrict__", "information",
          "A pointer the kernel only reads is not declared `const T *__restrict__`.",
          checks.missing_restrict_const),
    _rule("R007", "Double-precision literal in float code", "warning",
          "A literal without the `f` suffix promotes float arithmetic to double precision.",
          checks.double_literal),
    _rule("R008", "Double-precision math function in float code", "warning",
          "`sqrt`, `exp`, `pow`... are the double versions; float code should call `sqrtf`, `expf`...",
          checks.double_math_call),
    _rule("R009", "Block size not a multiple of 32 or too small", "warning",
          "Blocks whose size is not a multiple of the warp size, or below 64 threads, waste lanes or occupancy.",
          checks.block_size),
    _rule("R010", "Warp-divergent branch on threadIdx % k", "warning",
          "A branch on `threadIdx.x % k` sends alternate lanes of every warp down different paths.",
          checks.divergent_modulo_branch),
    _rule("R011", "Shared-memory bank conflicts", "warning",
          "Threads of a warp access one column of a shared tile whose rows are a multiple of 32 banks.",
          checks.bank_conflicts),
    _rule("R012", "__syncthreads() in a thread-dependent branch", "error",
          "A barrier that only some threads of the block reach deadlocks or corrupts shared memory.",
          checks.divergent_syncthreads),
    _rule("R013", "Host transfer or synchronisation inside a loop", "warning",
          "cudaMemcpy / cudaDeviceSynchronize in a host loop stalls the CPU and the GPU every iteration.",
          checks.host_sync_in_loop),
    _rule("R014", "Sequential per-thread reduction", "warning",
          "Each thread sums a chunk in a loop and then one value goes to a single address.",
          checks.sequential_reduction),
    _rule("R015", "Fixed-count loop without #pragma unroll", "hint",
          "A small loop with a compile-time trip count is not marked `#pragma unroll`.",
          checks.unroll_candidate),
    _rule("R016", "One element per thread (no grid-stride loop)", "hint",
          "The grid must be sized to the data; a grid-stride loop lets any grid cover any size.",
          checks.missing_grid_stride),
)}
