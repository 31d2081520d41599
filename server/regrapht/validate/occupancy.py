"""Theoretical occupancy of a kernel launch, the CUDA occupancy calculation for one arch.

Owns the calculation over the per-architecture limits of `regrapht.gpu_arch`: resident blocks
per SM limited by warps, blocks, registers (allocated per warp in units of 256, split over 4
sub-partitions) and shared memory (static + dynamic + 1 KB reserved per block on sm_80+, in
128-byte units, against the largest carve-out). Occupancy = resident warps / maximum warps per SM.
"""

from __future__ import annotations

from dataclasses import dataclass

from regrapht.gpu_arch import limits_for


@dataclass(frozen=True)
class Occupancy:
    occupancy: float  # 0..1
    blocks_per_sm: int
    active_warps: int
    limited_by: str  # "warps", "blocks", "registers", "shared memory", or why it cannot launch
    limits: dict[str, int]


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def occupancy(arch: str, *, threads_per_block: int, registers: int, shared_static: int = 0,
              shared_dynamic: int = 0) -> Occupancy | None:
    """Theoretical occupancy of a launch; None for an arch not in the table."""
    limits = limits_for(arch)
    if limits is None:
        return None
    if threads_per_block <= 0 or threads_per_block > 1024:
        return Occupancy(0.0, 0, 0, f"a block of {threads_per_block} threads cannot launch", {})
    warps_per_block = -(-threads_per_block // limits.warp_size)
    found = {
        "warps": limits.max_warps_per_sm // warps_per_block,
        "blocks": limits.max_blocks_per_sm,
    }
    if registers > limits.max_regs_per_thread:
        return Occupancy(0.0, 0, 0, f"{registers} registers per thread exceed {limits.max_regs_per_thread}", found)
    if registers > 0:
        regs_per_warp = _round_up(registers * limits.warp_size, limits.reg_alloc_unit)
        per_partition = limits.regs_per_sm // limits.sub_partitions
        warps = (per_partition // regs_per_warp) * limits.sub_partitions
        found["registers"] = warps // warps_per_block
    shared = shared_static + shared_dynamic
    if shared > limits.max_smem_per_block:
        return Occupancy(0.0, 0, 0, f"{shared} bytes of shared memory exceed {limits.max_smem_per_block} per block",
                         found)
    per_block = _round_up(shared + limits.reserved_smem_per_block, limits.smem_alloc_unit)
    if per_block > 0:
        found["shared memory"] = limits.smem_per_sm // per_block
    limited_by = min(found, key=lambda k: found[k])
    blocks = found[limited_by]
    if blocks == 0:
        return Occupancy(0.0, 0, 0, f"{limited_by}: not even one block fits on an SM", found)
    warps = blocks * warps_per_block
    return Occupancy(warps / limits.max_warps_per_sm, blocks, warps, limited_by, found)
