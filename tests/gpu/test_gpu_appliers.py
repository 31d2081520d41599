"""GPU suite: the rewrites of the reduction/row/CSR/column/scan and GEMM appliers against their original.

For each kernel under tests/data/appliers/, tests/data/batched_gemm/ and tests/data/redteam/batched_gemm/
(and each kernel of bench/corpus/train that one of these appliers rewrites), a deterministic
sample of the rewrites each applier gives (`rewrites_of`: the kernel as written, else in plain
form; `applier_results.gpu_sample`: its first two, its grid's middle and last point) is compiled,
checked against the original on fresh inputs by the evaluator (odd-size variant included) and
timed; the kernels whose whole grid test_structural_grids_gpu.py checks are left to it. A
rewrite that is wrong, does not compile or crashes fails the test; slower is allowed here (the
search keeps only faster ones) and reported. Launches come from the device the evaluator runs on
(`DeviceLimits.of(evaluator.device)`). Set REGRAPHT_APPLIER_RESULTS=<file> to get one JSON line
per rewrite.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from applier_results import checked_whole, gpu_sample, report_result

from regrapht.app.optimize import kernel_target
from regrapht.search.appliers import ApplierInput, DeviceLimits, rewrites_of
from regrapht.search.appliers.batched_matmul import BatchedSmallMatmul
from regrapht.search.appliers.column_reduction import ColumnSplitReduction
from regrapht.search.appliers.common import Applier
from regrapht.search.appliers.csr_rows import CsrGroupPerRow
from regrapht.search.appliers.full_reduction import BlockReduceAtomic
from regrapht.search.appliers.matmul import MatmulTiling
from regrapht.search.appliers.row_ops import GroupPerRow
from regrapht.search.appliers.scan import ParallelScan
from regrapht.search.appliers.topk import WarpTopK
from regrapht.spec.model import load_spec
from regrapht.validate.compiler import Compiler
from regrapht.validate.evaluator import CheckSettings, CudaEvaluator
from regrapht.validate.types import Candidate
from regrapht.validate.worker import GpuWorker

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
APPLIERS: tuple[Applier, ...] = (BlockReduceAtomic(), GroupPerRow(), CsrGroupPerRow(), ColumnSplitReduction(),
                                 ParallelScan(), BatchedSmallMatmul(), MatmulTiling(), WarpTopK())
SPECS = sorted([*(ROOT / "tests/data/appliers").glob("*.regrapht.toml"),
                *(ROOT / "tests/data/batched_gemm").glob("*.regrapht.toml"),
                *(ROOT / "tests/data/redteam/batched_gemm").glob("*.regrapht.toml"),
                *(ROOT / "bench/corpus/train").glob("**/*.regrapht.toml")])


def _source_of(spec: Path) -> Path:
    return spec.with_name(spec.name.removesuffix(".regrapht.toml") + ".cu")


@pytest.mark.parametrize("spec_path", SPECS, ids=[p.parent.name + "/" + p.name.removesuffix(".regrapht.toml")
                                                   for p in SPECS])
def test_every_rewrite_matches_the_original(spec_path: Path, gpu_worker: GpuWorker, compiler: Compiler,
                                            cache_dir: Path) -> None:
    source = _source_of(spec_path).read_text()
    spec = load_spec(spec_path)
    checked = elsewhere = 0
    for kernel in spec.kernels:
        evaluator = CudaEvaluator(source, kernel.name, spec, arch=None, worker=gpu_worker, cache_dir=cache_dir,
                                  compiler=compiler, file=_source_of(spec_path).name,
                                  settings=CheckSettings(check_timeout_s=60.0), env=os.environ)
        target = kernel_target(kernel)
        given = ApplierInput(source, kernel.name, target.launch, target.constants, DeviceLimits.of(evaluator.device))
        for applier in APPLIERS:
            if checked_whole(spec_path, type(applier).__name__):
                elsewhere += 1
                continue
            for rewrite in gpu_sample(rewrites_of(applier, given)):
                evaluation = evaluator.evaluate(Candidate(rewrite.source, rewrite.launch, (applier.technique,)))
                _report(spec_path, kernel.name, applier, rewrite.note, evaluation.outcome, evaluation.speedup,
                        evaluation.reason)
                assert evaluation.verified, f"{spec_path.name}: {kernel.name}: {rewrite.note}: {evaluation}"
                checked += 1
    if "tests/data/appliers" in str(spec_path) or "tests/data/batched_gemm" in str(spec_path):
        assert checked + elsewhere > 0, "an applier test kernel got no rewrite"


def _report(spec: Path, kernel: str, applier: Applier, note: str, outcome: str, speedup: float | None,
            reason: str) -> None:
    line = {"spec": str(spec.relative_to(ROOT)), "kernel": kernel, "applier": type(applier).__name__,
            "note": note, "outcome": outcome, "speedup": speedup, "reason": reason}
    report_result(line)
