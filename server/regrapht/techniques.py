"""The techniques ReGraphT knows: one `Technique` record each, the list every engine reads.

A technique is a reasoning-graph vertex (graph/), the target of rules (R001... point to one), the
name of what a deterministic applier writes (search/appliers), and a page under docs/techniques/.
Its record holds all of that in one place: the canonical name; its kind (a `refinement` tunes
code whose algorithm is settled, MCGS judges all of its variants at once; everything else is
`structural`, the techniques only the model writes included); the appliers that implement it, by
class name (`appliers`: those whose `technique` it is; `also_by`: those that name it in `also`);
the rule codes that point to it; the synonyms step names are mapped from (graph/canon.py); the
names of its parameter space (the `Rewrite.params` keys its appliers' grid points use).

Stdlib only and no imports from the engines, so every layer may read it; the engines check their
own registries against it (search/appliers builds APPLIERS through it, rules/registry.py takes
each rule's technique from it, tests/unit/test_techniques.py checks graph vertices and pages).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

Kind = Literal["structural", "refinement"]
# How a technique's rewrites may change a kernel's floating-point results (the edit's title says
# so; the `allowFastMath` setting off keeps the approximating ones out of the search): "exact",
# the same operations in the same order; "reorders", the same operations in another order (a
# parallel reduction or scan sums in a tree: exact for integers, rounded differently for floats);
# "approximates", other operations (fast-math intrinsics, float literals and functions where
# the source wrote double ones).
Numerics = Literal["exact", "reorders", "approximates"]


@dataclass(frozen=True)
class Technique:
    name: str  # canonical, snake_case: the graph vertex, `Finding.technique`, `Applier.technique`
    kind: Kind
    appliers: tuple[str, ...] = ()  # applier classes whose `technique` this is
    also_by: tuple[str, ...] = ()  # applier classes that implement it besides their own (`also`)
    rules: tuple[str, ...] = ()  # codes of the rules whose findings name it
    synonyms: tuple[str, ...] = ()  # normalised step names (graph/canon.py `normalise`) meaning it
    params: tuple[str, ...] = ()  # `Rewrite.params` keys of its appliers' grid points
    numerics: Numerics = "exact"  # what its rewrites may do to floating-point results

    @property
    def doc(self) -> str:
        """The technique's page, relative to docs/."""
        return f"techniques/{self.name}.md"

    @property
    def is_structural(self) -> bool:
        return self.kind == "structural"


TECHNIQUES: tuple[Technique, ...] = (
    # Structural techniques with an applier (they change the algorithm's memory behaviour).
    Technique(
        "shared_memory_tiling", "structural",
        appliers=("BatchedSmallMatmul", "MatmulTiling", "HaloTiledStencil"),
        also_by=("TiledPermutation", "JammedOutputs", "RegisterColumnStencil"),
        rules=("R003",),
        synonyms=("tiling", "shared_tiling", "smem_tiling", "shared_memory_tiles", "shared_memory_blocking",
                  "stencil_tiling", "halo_tiling", "shared_memory_halo"),
        params=("thread_m", "thread_n", "passes", "tile_m", "tile_n", "tile_k", "double_buffer",
                "tile_x", "tile_y", "tile_z"),
    ),
    Technique(
        "block_reduce_atomic", "structural",
        appliers=("BlockReduceAtomic",),
        synonyms=("block_reduce", "cub_block_reduce", "block_reduction_atomic", "one_atomic_per_block"),
        params=("vector", "unroll", "elements_per_thread", "waves", "one_block", "block_items"),
        numerics="reorders",
    ),
    Technique(
        "block_per_row", "structural",
        appliers=("GroupPerRow", "WarpTopK"),
        synonyms=("row_per_block", "warp_per_row", "cooperative_rows", "fused_row_reduction"),
        params=("threads_per_row", "rows_per_block"),
        numerics="reorders",
    ),
    Technique(
        "warp_per_row_csr", "structural",
        appliers=("CsrGroupPerRow",),
        synonyms=("csr_vector", "vector_csr", "spmv_warp_per_row"),
        params=("threads_per_row", "rows_per_block"),
        numerics="reorders",
    ),
    Technique(
        "column_split_reduction", "structural",
        appliers=("ColumnSplitReduction",),
        synonyms=("column_reduction_split", "split_column_reduction"),
        params=("tile_columns", "columns_per_thread", "threads_per_column"),
        numerics="reorders",
    ),
    Technique(
        "block_scan", "structural",
        appliers=("ParallelScan",),
        synonyms=("parallel_scan", "prefix_sum", "cub_block_scan", "decoupled_lookback"),
        params=("group", "items", "algorithm"),
        numerics="reorders",
    ),
    Technique(
        "early_exit_search", "structural",
        appliers=("FirstIndexMin",),
        synonyms=("first_index_search", "predicate_search", "find_first", "index_min_reduction", "early_exit"),
        params=("threads", "items"),
    ),
    Technique(
        "shared_memory_privatization", "structural",
        appliers=("PrivatisedHistogram",),
        rules=("R005",),
        synonyms=("privatization", "shared_privatization", "privatized_histogram", "shared_memory_atomics"),
        params=("vector", "copies", "batch", "grid_stride"),
    ),
    Technique(
        "memory_coalescing", "structural",
        appliers=("TiledPermutation",),
        also_by=("BlockReduceAtomic", "GroupPerRow", "CsrGroupPerRow", "ColumnSplitReduction", "ParallelScan",
                 "WarpTopK"),
        rules=("R001", "R002"),
        synonyms=("coalescing", "coalesced_access", "coalesced_memory_access", "memory_coalesce",
                  "global_memory_coalescing", "transpose_tiling"),
        params=("tile", "items"),
    ),
    Technique(
        "thread_coarsening", "structural",
        appliers=("JammedOutputs", "RegisterColumnStencil"),
        params=("outputs_per_thread", "points"),
    ),
    Technique(
        "vectorized_access", "structural",
        appliers=("VectorizedMap",),
        synonyms=("vectorization", "vectorized_loads", "vectorized_memory_access", "vector_loads", "float4"),
        params=("points", "vector"),
    ),
    # Refinements: they tune code whose algorithm is settled (block shapes, unroll factors, where a
    # qualifier or intrinsic goes).
    Technique(
        "grid_stride_loop", "refinement",
        appliers=("GridStrideLoop",),
        rules=("R016",),
        synonyms=("grid_stride", "grid_stride_loops"),
    ),
    Technique(
        "launch_configuration", "refinement",
        appliers=("BlockSizeTuning",),
        rules=("R009",),
        synonyms=("launch_config", "block_size_tuning", "launch_bounds"),
    ),
    Technique(
        "restrict_const", "refinement",
        appliers=("RestrictPointers",),
        rules=("R006",),
        synonyms=("restrict", "restrict_pointers", "const_restrict", "restrict_qualifiers", "read_only_cache", "ldg"),
    ),
    Technique(
        "loop_unrolling", "refinement",
        appliers=("LoopUnrolling",),
        rules=("R015",),
        synonyms=("unrolling", "unroll", "loop_unroll", "pragma_unroll"),
    ),
    Technique(
        "fast_math", "refinement",
        appliers=("FastMath",),
        rules=("R007", "R008"),
        synonyms=("fast_math_intrinsics", "intrinsics", "use_fast_math"),
        numerics="approximates",
    ),
    Technique(
        "bank_conflict_padding", "refinement",
        appliers=("SharedMemoryPadding",),
        also_by=("TiledPermutation",),
        rules=("R011",),
        synonyms=("padding", "shared_memory_padding", "smem_padding", "bank_conflict_avoidance", "bank_conflicts"),
    ),
    # Implemented only as a part of another technique's applier (`also`).
    Technique(
        "register_blocking", "structural",
        also_by=("BatchedSmallMatmul", "MatmulTiling"),
        synonyms=("register_tiling", "register_tile", "thread_tiling"),
    ),
    Technique(
        "warp_shuffle_reduction", "structural",
        also_by=("BlockReduceAtomic", "GroupPerRow", "CsrGroupPerRow", "WarpTopK"),
        rules=("R004", "R014"),
        synonyms=("warp_shuffle", "warp_reduce", "warp_reduction", "shfl_reduction", "shuffle_reduction"),
        numerics="reorders",
    ),
    Technique("atomic_reduction", "structural", also_by=("BlockReduceAtomic", "PrivatisedHistogram")),
    Technique("register_promotion", "structural", also_by=("JammedOutputs", "RegisterColumnStencil")),
    # Only the model writes these (graph vertices without an applier).
    Technique(
        "divergence_reduction", "structural",
        rules=("R010",),
        synonyms=("divergence", "warp_divergence", "branch_divergence", "warp_divergence_reduction"),
    ),
    Technique("instruction_level_parallelism", "structural"),
    Technique("kernel_fusion", "structural"),
    Technique("loop_invariant_hoisting", "structural"),
    Technique("strength_reduction", "structural"),
    Technique("warp_aggregated_atomics", "structural"),
    # Named by rules only (correctness and host-side fixes, not graph vertices).
    Technique("thread_sync_correctness", "structural", rules=("R012",)),
    Technique("host_sync_hoisting", "structural", rules=("R013",)),
)

_BY_NAME: Mapping[str, Technique] = MappingProxyType({t.name: t for t in TECHNIQUES})
_BY_RULE: Mapping[str, Technique] = MappingProxyType({code: t for t in TECHNIQUES for code in t.rules})

# alias (normalised) -> canonical name, for graph/canon.py
SYNONYMS: Mapping[str, str] = MappingProxyType({alias: t.name for t in TECHNIQUES for alias in t.synonyms})
# The names MCGS refines rather than restructures with (search/mcgs.py).
REFINEMENTS: frozenset[str] = frozenset(t.name for t in TECHNIQUES if t.kind == "refinement")


def find_technique(name: str) -> Technique | None:
    """The record named `name` (canonical) or, failing that, the one `name` is a synonym of."""
    found = _BY_NAME.get(name)
    if found is None and name in SYNONYMS:
        return _BY_NAME[SYNONYMS[name]]
    return found


def technique_named(name: str) -> Technique:
    """The record of the canonical name `name`; KeyError naming it when there is none (a name
    in code that no record holds is a programming error)."""
    found = _BY_NAME.get(name)
    if found is None:
        raise KeyError(f"no technique record named {name!r} (regrapht/techniques.py)")
    return found


def technique_of_rule(code: str) -> Technique:
    """The record whose `rules` hold `code`; KeyError naming the code when none does."""
    found = _BY_RULE.get(code)
    if found is None:
        raise KeyError(f"no technique record lists rule {code} (regrapht/techniques.py)")
    return found


def is_structural(name: str) -> bool:
    """Whether `name` restructures code: every name but a refinement's, a name no record holds
    (a vertex a user's trajectories added) included."""
    return name not in REFINEMENTS


def numerics_of(names: tuple[str, ...]) -> Numerics:
    """What a path of techniques may do to floating-point results: its strongest technique's
    `numerics` (a name without a record, a model-only step, counts as exact: the differential
    check against the spec's tolerance is what bounds the model's text)."""
    order = ("exact", "reorders", "approximates")
    found = [_BY_NAME[n].numerics for n in names if n in _BY_NAME]
    return max(found, key=order.index, default="exact")
