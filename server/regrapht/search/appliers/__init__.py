"""Deterministic appliers, one module per technique family, and their registry.

`APPLIERS` lists them in the fixed order the `rules` strategy uses: the pattern appliers that
change the algorithm's memory behaviour first (they give the large gains), then launch
configuration, then the local code-generation tweaks.
"""

from __future__ import annotations

from regrapht.search.appliers.batched_matmul import BatchedSmallMatmul
from regrapht.search.appliers.column_reduction import ColumnSplitReduction
from regrapht.search.appliers.common import (
    Applier,
    ApplierInput,
    DeviceLimits,
    Rewrite,
    plain_source,
    rewrites_of,
)
from regrapht.search.appliers.csr_rows import CsrGroupPerRow
from regrapht.search.appliers.fast_math import FastMath
from regrapht.search.appliers.full_reduction import BlockReduceAtomic
from regrapht.search.appliers.histogram import PrivatisedHistogram
from regrapht.search.appliers.launch import BlockSizeTuning, GridStrideLoop
from regrapht.search.appliers.loops import LoopUnrolling
from regrapht.search.appliers.matmul import MatmulTiling
from regrapht.search.appliers.output_jam import JammedOutputs
from regrapht.search.appliers.permutation import TiledPermutation
from regrapht.search.appliers.qualifiers import RestrictPointers
from regrapht.search.appliers.row_ops import GroupPerRow
from regrapht.search.appliers.scan import ParallelScan
from regrapht.search.appliers.shared_padding import SharedMemoryPadding
from regrapht.search.appliers.stencil import HaloTiledStencil
from regrapht.search.appliers.stencil_columns import RegisterColumnStencil
from regrapht.search.appliers.topk import WarpTopK
from regrapht.search.appliers.vectorize import VectorizedMap

APPLIERS: tuple[Applier, ...] = (
    BatchedSmallMatmul(),  # before MatmulTiling: for small batched matrices its variants come first
    MatmulTiling(),
    BlockReduceAtomic(),
    GroupPerRow(),
    CsrGroupPerRow(),
    ColumnSplitReduction(),
    ParallelScan(),
    WarpTopK(),
    PrivatisedHistogram(),
    TiledPermutation(),
    JammedOutputs(),
    RegisterColumnStencil(),
    HaloTiledStencil(),
    VectorizedMap(),
    GridStrideLoop(),
    BlockSizeTuning(),
    RestrictPointers(),
    LoopUnrolling(),
    FastMath(),
    SharedMemoryPadding(),
)


def appliers_for(technique: str) -> tuple[Applier, ...]:
    return tuple(a for a in APPLIERS if technique == a.technique or technique in a.also)


__all__ = ["APPLIERS", "Applier", "ApplierInput", "DeviceLimits", "Rewrite", "appliers_for", "plain_source",
           "rewrites_of"]
