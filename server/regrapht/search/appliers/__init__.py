"""Deterministic appliers, one module per technique family, and their registry.

`APPLIERS` lists them in the fixed order the `rules` strategy uses: the pattern appliers that
change the algorithm's memory behaviour first (they give the large gains), then launch
configuration, then the local code-generation tweaks. It is built through `registered`, which
checks it against the technique records (regrapht/techniques.py): each applier's `technique`
and `also` names are records that name the applier's class back, and every applier a record
names is here.
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
from regrapht.search.appliers.first_index import FirstIndexMin
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
from regrapht.techniques import TECHNIQUES, find_technique


def registered(appliers: tuple[Applier, ...]) -> tuple[Applier, ...]:
    """`appliers` unchanged when they and the technique records agree on who implements what;
    else ValueError naming each disagreement (an applier added, renamed or re-pointed without
    its record, or the other way round)."""
    problems: list[str] = []
    classes = {type(a).__name__: a for a in appliers}
    for name, applier in classes.items():
        own = find_technique(applier.technique)
        if own is None or own.name != applier.technique or name not in own.appliers:
            problems.append(f"{name}.technique = {applier.technique!r}: no record of that name lists it in `appliers`")
        for other in applier.also:
            record = find_technique(other)
            if record is None or record.name != other or name not in record.also_by:
                problems.append(f"{name}.also holds {other!r}: no record of that name lists it in `also_by`")
    for record in TECHNIQUES:
        for name in record.appliers:
            if name not in classes or classes[name].technique != record.name:
                problems.append(f"record {record.name!r} lists {name} in `appliers`: no such applier of it")
        for name in record.also_by:
            if name not in classes or record.name not in classes[name].also:
                problems.append(f"record {record.name!r} lists {name} in `also_by`: no such applier of it")
    if problems:
        raise ValueError("the appliers and regrapht/techniques.py disagree: " + "; ".join(problems))
    return appliers


APPLIERS: tuple[Applier, ...] = registered((
    BatchedSmallMatmul(),  # before MatmulTiling: for small batched matrices its variants come first
    MatmulTiling(),
    BlockReduceAtomic(),
    GroupPerRow(),
    CsrGroupPerRow(),
    ColumnSplitReduction(),
    ParallelScan(),
    WarpTopK(),
    FirstIndexMin(),
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
))


def appliers_for(technique: str) -> tuple[Applier, ...]:
    """The appliers that implement the technique named `technique` (its record's `appliers` and
    `also_by`), in APPLIERS order; () for a name no record holds."""
    record = find_technique(technique)
    if record is None or record.name != technique:
        return ()
    names = {*record.appliers, *record.also_by}
    return tuple(a for a in APPLIERS if type(a).__name__ in names)


__all__ = ["APPLIERS", "Applier", "ApplierInput", "DeviceLimits", "Rewrite", "appliers_for", "plain_source",
           "rewrites_of"]
