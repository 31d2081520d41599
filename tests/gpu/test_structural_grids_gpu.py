"""GPU: every point of the parameter grids of BlockReduceAtomic, PrivatisedHistogram,
VectorizedMap and ParallelScan on one train kernel per applier and element size (issue 12).

Each rewrite (launch sized from the evaluator's device) is compiled, checked against the
original on fresh inputs by the evaluator (odd-size variant included) and timed; a wrong, failing
or crashing one fails the test, a slower one is reported (the search keeps only faster ones).
About 150 rewrites: run one kernel at a time with -k when device time is short. Set
REGRAPHT_APPLIER_RESULTS=<file> for one JSON line per rewrite (with its grid point).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from applier_results import report_result

from regrapht.app.optimize import kernel_target
from regrapht.search.appliers import ApplierInput, DeviceLimits, rewrites_of
from regrapht.search.appliers.common import Applier
from regrapht.search.appliers.full_reduction import BlockReduceAtomic
from regrapht.search.appliers.histogram import PrivatisedHistogram
from regrapht.search.appliers.scan import ParallelScan
from regrapht.search.appliers.vectorize import VectorizedMap
from regrapht.spec.model import load_spec
from regrapht.validate.compiler import Compiler
from regrapht.validate.evaluator import CheckSettings, CudaEvaluator
from regrapht.validate.types import Candidate
from regrapht.validate.worker import GpuWorker

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
GRIDS: dict[str, Applier] = {
    "float_sum_atomic": BlockReduceAtomic(),
    "global_argmax": BlockReduceAtomic(),
    "hist_unit_floats": PrivatisedHistogram(),
    "hist_4096_bins": PrivatisedHistogram(),
    "axpby_int": VectorizedMap(),
    "softplus_f64": VectorizedMap(),
    "scan_inplace_f32": ParallelScan(),
    "array_exclusive_f64": ParallelScan(),
    "row_exclusive_int": ParallelScan(),
}


@pytest.mark.parametrize("task", sorted(GRIDS))
def test_every_grid_point_matches_the_original(task: str, gpu_worker: GpuWorker, compiler: Compiler,
                                               cache_dir: Path) -> None:
    spec_path = ROOT / "bench/corpus/train" / task / f"{task}.regrapht.toml"
    source_path = spec_path.with_name(f"{task}.cu")
    source = source_path.read_text()
    spec = load_spec(spec_path)
    applier = GRIDS[task]
    checked = 0
    for kernel in spec.kernels:
        evaluator = CudaEvaluator(source, kernel.name, spec, arch=None, worker=gpu_worker, cache_dir=cache_dir,
                                  compiler=compiler, file=source_path.name,
                                  settings=CheckSettings(check_timeout_s=60.0), env=os.environ)
        target = kernel_target(kernel)
        given = ApplierInput(source, kernel.name, target.launch, target.constants, DeviceLimits.of(evaluator.device))
        for rewrite in rewrites_of(applier, given):
            evaluation = evaluator.evaluate(Candidate(rewrite.source, rewrite.launch, (applier.technique,)))
            line = {"task": task, "kernel": kernel.name, "applier": type(applier).__name__, "note": rewrite.note,
                    "params": dict(rewrite.params), "block": list(rewrite.launch.block),
                    "outcome": evaluation.outcome, "speedup": evaluation.speedup, "reason": evaluation.reason}
            report_result(line)
            assert evaluation.verified, f"{task}: {kernel.name}: {rewrite.note} {rewrite.params}: {evaluation}"
            checked += 1
    assert checked >= 12, f"{task}: only {checked} grid points"
