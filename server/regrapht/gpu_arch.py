"""The per-architecture limits of NVIDIA GPUs (threads, blocks, registers and shared memory per
SM and per block; FP32:FP64 throughput): one table, read by the occupancy calculation
(validate/occupancy.py), by the bounds a spec's launch configuration must keep (spec/resolve.py)
and by the search's evidence (search/evidence.py). Pure constants.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ArchLimits:
    max_threads_per_sm: int
    max_blocks_per_sm: int
    regs_per_sm: int = 65536
    max_regs_per_thread: int = 255
    reg_alloc_unit: int = 256  # registers, per warp
    sub_partitions: int = 4
    smem_per_sm: int = 0  # bytes, the largest carve-out
    max_smem_per_block: int = 0  # bytes, opt-in maximum
    smem_alloc_unit: int = 128
    reserved_smem_per_block: int = 0
    warp_size: int = 32
    # FP32 over FP64 arithmetic throughput per SM (2 on the data-centre parts, 32-64 elsewhere):
    # how much more of a kernel's time each f64 instruction can take than an f32 one
    f32_per_f64: int = 2

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // self.warp_size


ARCH_LIMITS: dict[str, ArchLimits] = {
    "sm_70": ArchLimits(2048, 32, smem_per_sm=96 * 1024, max_smem_per_block=96 * 1024),
    "sm_75": ArchLimits(1024, 16, smem_per_sm=64 * 1024, max_smem_per_block=64 * 1024, f32_per_f64=32),
    "sm_80": ArchLimits(2048, 32, smem_per_sm=164 * 1024, max_smem_per_block=163 * 1024,
                        reserved_smem_per_block=1024),
    "sm_86": ArchLimits(1536, 16, smem_per_sm=100 * 1024, max_smem_per_block=99 * 1024,
                        reserved_smem_per_block=1024, f32_per_f64=64),
    "sm_87": ArchLimits(1536, 16, smem_per_sm=164 * 1024, max_smem_per_block=163 * 1024,
                        reserved_smem_per_block=1024, f32_per_f64=64),
    "sm_89": ArchLimits(1536, 24, smem_per_sm=100 * 1024, max_smem_per_block=99 * 1024,
                        reserved_smem_per_block=1024, f32_per_f64=64),
    "sm_90": ArchLimits(2048, 32, smem_per_sm=228 * 1024, max_smem_per_block=227 * 1024,
                        reserved_smem_per_block=1024),
}

# No GPU gives one block more dynamic shared memory than the largest opt-in maximum of the
# architectures here; the device a check runs on may allow less (its own limit applies there).
MAX_SHARED_BYTES_PER_BLOCK = max(limits.max_smem_per_block for limits in ARCH_LIMITS.values())


def limits_for(arch: str) -> ArchLimits | None:
    plain = arch.rstrip("af")
    return ARCH_LIMITS.get(plain)

# The most memory any GPU ReGraphT knows has (B300: 288 GB of HBM3e): a spec whose buffers need
# more can never run; a check on a device applies that device's own total memory.
MAX_DEVICE_MEMORY_BYTES = 288 * 10**9
