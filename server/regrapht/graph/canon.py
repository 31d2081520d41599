"""Canonical technique names, so that steps meaning the same technique share one vertex.

The paper asks an LLM to relabel each step to an existing vertex name when it means the same
thing. Here: normalise to snake_case; then a synonym table; then, for names still unknown and
only if a model is given, a constrained question listing the existing names. The model's answer
is accepted only when it is exactly one of those names; otherwise the step keeps its own
normalised name (a new vertex).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from regrapht.model.backend import ChatMessage, ModelBackend

# alias (normalised) -> canonical name. Canonical names are those the rule engine uses.
SYNONYMS: dict[str, str] = {
    "coalescing": "memory_coalescing",
    "coalesced_access": "memory_coalescing",
    "coalesced_memory_access": "memory_coalescing",
    "memory_coalesce": "memory_coalescing",
    "global_memory_coalescing": "memory_coalescing",
    "tiling": "shared_memory_tiling",
    "shared_tiling": "shared_memory_tiling",
    "smem_tiling": "shared_memory_tiling",
    "shared_memory_tiles": "shared_memory_tiling",
    "shared_memory_blocking": "shared_memory_tiling",
    "restrict": "restrict_const",
    "restrict_pointers": "restrict_const",
    "const_restrict": "restrict_const",
    "restrict_qualifiers": "restrict_const",
    "read_only_cache": "restrict_const",
    "ldg": "restrict_const",
    "vectorization": "vectorized_access",
    "vectorized_loads": "vectorized_access",
    "vectorized_memory_access": "vectorized_access",
    "vector_loads": "vectorized_access",
    "float4": "vectorized_access",
    "warp_shuffle": "warp_shuffle_reduction",
    "warp_reduce": "warp_shuffle_reduction",
    "warp_reduction": "warp_shuffle_reduction",
    "shfl_reduction": "warp_shuffle_reduction",
    "shuffle_reduction": "warp_shuffle_reduction",
    "privatization": "shared_memory_privatization",
    "shared_privatization": "shared_memory_privatization",
    "privatized_histogram": "shared_memory_privatization",
    "shared_memory_atomics": "shared_memory_privatization",
    "unrolling": "loop_unrolling",
    "unroll": "loop_unrolling",
    "loop_unroll": "loop_unrolling",
    "pragma_unroll": "loop_unrolling",
    "fast_math_intrinsics": "fast_math",
    "intrinsics": "fast_math",
    "use_fast_math": "fast_math",
    "launch_config": "launch_configuration",
    "block_size_tuning": "launch_configuration",
    "launch_bounds": "launch_configuration",
    "grid_stride": "grid_stride_loop",
    "block_reduce": "block_reduce_atomic",
    "cub_block_reduce": "block_reduce_atomic",
    "block_reduction_atomic": "block_reduce_atomic",
    "one_atomic_per_block": "block_reduce_atomic",
    "row_per_block": "block_per_row",
    "warp_per_row": "block_per_row",
    "cooperative_rows": "block_per_row",
    "fused_row_reduction": "block_per_row",
    "csr_vector": "warp_per_row_csr",
    "vector_csr": "warp_per_row_csr",
    "spmv_warp_per_row": "warp_per_row_csr",
    "column_reduction_split": "column_split_reduction",
    "split_column_reduction": "column_split_reduction",
    "parallel_scan": "block_scan",
    "prefix_sum": "block_scan",
    "cub_block_scan": "block_scan",
    "decoupled_lookback": "block_scan",
    "grid_stride_loops": "grid_stride_loop",
    "padding": "bank_conflict_padding",
    "shared_memory_padding": "bank_conflict_padding",
    "smem_padding": "bank_conflict_padding",
    "bank_conflict_avoidance": "bank_conflict_padding",
    "bank_conflicts": "bank_conflict_padding",
    "divergence": "divergence_reduction",
    "warp_divergence": "divergence_reduction",
    "branch_divergence": "divergence_reduction",
    "warp_divergence_reduction": "divergence_reduction",
    "register_tiling": "register_blocking",
    "register_tile": "register_blocking",
    "thread_tiling": "register_blocking",
    "stencil_tiling": "shared_memory_tiling",
    "halo_tiling": "shared_memory_tiling",
    "shared_memory_halo": "shared_memory_tiling",
    "transpose_tiling": "memory_coalescing",
}

RELABEL_SYSTEM = (
    "You map names of CUDA optimization techniques onto a fixed list. "
    "Reply with exactly one name copied from the list, or NONE. No other words."
)


def normalise(name: str) -> str:
    """snake_case: lowercase, every run of other characters becomes one underscore."""
    return re.sub(r"[^a-z0-9]+", "_", name.strip().lower()).strip("_")


def relabel_prompt(name: str, description: str, existing: list[str]) -> list[ChatMessage]:
    listing = "\n".join(f"- {t}" for t in existing)
    return [
        ChatMessage("system", RELABEL_SYSTEM),
        ChatMessage(
            "user",
            f"Techniques:\n{listing}\n\nNew step: {name}\nWhat it does: {description}\n\n"
            "If the new step is the same technique as one in the list, reply with that name. "
            "Otherwise reply NONE.",
        ),
    ]


@dataclass
class Canonicaliser:
    """Maps step names onto canonical vertex names; `known` grows as vertices are added."""

    known: set[str] = field(default_factory=set)
    model: ModelBackend | None = None
    synonyms: dict[str, str] = field(default_factory=lambda: dict(SYNONYMS))
    seed: int = 0
    relabels: list[tuple[str, str]] = field(default_factory=list)  # (asked, accepted) by the model

    def add_known(self, names: Iterable[str]) -> None:
        self.known.update(names)

    def canonical(self, name: str, description: str = "") -> str:
        own = normalise(name)
        if not own:
            return own
        if own in self.known:
            return own
        if own in self.synonyms:
            return self.synonyms[own]
        if self.model is not None and self.known:
            chosen = self._ask_model(self.model, own, description)
            if chosen is not None:
                self.relabels.append((own, chosen))
                return chosen
        return own

    def _ask_model(self, model: ModelBackend, name: str, description: str) -> str | None:
        existing = sorted(self.known)
        answer = model.complete(
            relabel_prompt(name, description, existing), max_tokens=16, temperature=0.0, seed=self.seed
        ).text
        # Only surrounding whitespace and quoting are forgiven; anything else is not "exactly".
        cleaned = answer.strip().strip("`'\"").strip()
        return cleaned if cleaned in self.known else None
