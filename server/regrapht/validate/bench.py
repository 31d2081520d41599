"""Benchmarking one kernel of a file per its spec: what `regrapht bench` and the editor show.

Owns the bench report (resources, occupancy for the spec's launch, timing, achieved bandwidth
and FLOP rate against the device's measured peaks) and its JSON form, the fixed keys of
docs/cli-contract.md. The default cache dir is validate/cache_dir.py's.
"""

from __future__ import annotations

from dataclasses import dataclass

from regrapht.spec.model import KernelSpec
from regrapht.validate.compiler import KernelResources
from regrapht.validate.evaluator import CudaEvaluator, resources_dict
from regrapht.validate.occupancy import Occupancy
from regrapht.validate.peaks import DevicePeaks, device_peaks
from regrapht.validate.types import Timing


@dataclass(frozen=True)
class BenchReport:
    kernel: str
    arch: str
    gpu: str | None
    resources: KernelResources
    occupancy: Occupancy | None
    timing: Timing | None
    bytes_moved: int
    flops: float | None
    peaks: DevicePeaks | None
    reason: str = ""  # why there is no timing

    @property
    def achieved_gbps(self) -> float | None:
        if self.timing is None or self.timing.median_ms <= 0:
            return None
        return self.bytes_moved / (self.timing.median_ms * 1e-3) / 1e9

    @property
    def achieved_gflops(self) -> float | None:
        if self.timing is None or self.flops is None or self.timing.median_ms <= 0:
            return None
        return self.flops / (self.timing.median_ms * 1e-3) / 1e9

    def to_json(self) -> dict[str, object]:
        def rounded(value: float | None, digits: int) -> float | None:
            return None if value is None else round(value, digits)

        return {
            "kernel": self.kernel, "arch": self.arch, "gpu": self.gpu,
            "resources": resources_dict(self.resources),
            "occupancy": None if self.occupancy is None else round(self.occupancy.occupancy, 4),
            "time_ms": rounded(self.timing.median_ms if self.timing else None, 5),
            "achieved_gbps": rounded(self.achieved_gbps, 1),
            "peak_gbps": rounded(self.peaks.gbps if self.peaks else None, 1),
            # additions (the contract allows new keys)
            "time_p10_ms": rounded(self.timing.p10_ms if self.timing else None, 5),
            "time_p90_ms": rounded(self.timing.p90_ms if self.timing else None, 5),
            "runs": self.timing.runs if self.timing else 0,
            "achieved_gflops": rounded(self.achieved_gflops, 1),
            "peak_gflops": rounded(self.peaks.gflops if self.peaks else None, 1),
            "bytes_moved": self.bytes_moved,
            "flops": self.flops,
            "mangled": self.resources.mangled,
            "spill_store_bytes": self.resources.spill_store_bytes,
            "spill_load_bytes": self.resources.spill_load_bytes,
            "occupancy_limited_by": self.occupancy.limited_by if self.occupancy else None,
            "reason": self.reason,
        }


def bench(evaluator: CudaEvaluator, *, measure: bool = True) -> BenchReport:
    """Resources and occupancy always; timing and peaks only with a device and `measure`."""
    kernel: KernelSpec = evaluator.kernel
    timing = evaluator.baseline() if measure and evaluator.has_device else None
    peaks = None
    if timing is not None and evaluator.worker is not None:
        peaks = device_peaks(evaluator.worker, evaluator.compiler, evaluator.cache_dir, arch=evaluator.arch,
                             gpu_lock=evaluator.gpu_lock)
    return BenchReport(
        kernel=kernel.name, arch=evaluator.arch, gpu=evaluator.gpu_name, resources=evaluator.resources(),
        occupancy=evaluator.occupancy(), timing=timing, bytes_moved=evaluator.resolved.bytes_moved,
        flops=evaluator.resolved.flops, peaks=peaks,
        reason="" if timing is not None else (evaluator.no_device_reason or "not measured"),
    )


def slow_kernel_message(report: BenchReport) -> str | None:
    """`saxpy reaches 12% of this GPU's memory bandwidth (410 of 3300 GB/s measured on NVIDIA H200)`."""
    if report.peaks is None or report.achieved_gbps is None:
        return None
    parts = [f"{report.kernel} reaches {100 * report.achieved_gbps / report.peaks.gbps:.0f}% of this GPU's "
             f"memory bandwidth ({report.achieved_gbps:.0f} of {report.peaks.gbps:.0f} GB/s measured on "
             f"{report.peaks.gpu})"]
    if report.achieved_gflops is not None:
        parts.append(f"and {100 * report.achieved_gflops / report.peaks.gflops:.0f}% of its FP32 rate "
                     f"({report.achieved_gflops:.0f} of {report.peaks.gflops:.0f} GFLOP/s)")
    assert report.timing is not None
    return " ".join(parts) + f"; {report.timing.median_ms:.3f} ms per launch"
