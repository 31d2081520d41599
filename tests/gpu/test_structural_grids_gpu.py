"""GPU: every point of the parameter grid of every applier that has one, on a fixed set of kernels
(issue 12).

The kernels (`applier_results.WHOLE_GRIDS`: 22 train, red-team and applier-test kernels, most
appliers on one, about 430 rewrites on an H200) are chosen so that every grid point
(`Rewrite.params`) of every applier runs on some kernel; the other GPU applier files check a
sample of each kernel's rewrites (`applier_results.gpu_sample`). Each rewrite (launch sized from
the evaluator's device) is compiled, checked against the original on fresh inputs by the
evaluator (odd-size variant included) and timed; a wrong, failing or crashing one fails the test,
a slower one is reported (the search keeps only faster ones). Set REGRAPHT_APPLIER_RESULTS=<file>
for one JSON line per rewrite (with its grid point).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from applier_results import WHOLE_GRIDS, report_result

from regrapht.app.optimize import kernel_target
from regrapht.search.appliers import APPLIERS, ApplierInput, DeviceLimits, rewrites_of
from regrapht.spec.model import load_spec
from regrapht.validate.compiler import Compiler
from regrapht.validate.evaluator import CheckSettings, CudaEvaluator
from regrapht.validate.types import Candidate
from regrapht.validate.worker import GpuWorker

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
BY_NAME = {type(a).__name__: a for a in APPLIERS}


@pytest.mark.parametrize("case", sorted(WHOLE_GRIDS), ids=[Path(c).name for c in sorted(WHOLE_GRIDS)])
def test_every_grid_point_matches_the_original(case: str, gpu_worker: GpuWorker, compiler: Compiler,
                                               cache_dir: Path) -> None:
    spec_path = ROOT / f"{case}.regrapht.toml"
    source_path = ROOT / f"{case}.cu"
    source = source_path.read_text()
    spec = load_spec(spec_path)
    name, points = WHOLE_GRIDS[case]
    applier = BY_NAME[name]
    checked = 0
    for kernel in spec.kernels:
        evaluator = CudaEvaluator(source, kernel.name, spec, arch=None, worker=gpu_worker, cache_dir=cache_dir,
                                  compiler=compiler, file=source_path.name,
                                  settings=CheckSettings(check_timeout_s=60.0), env=os.environ)
        target = kernel_target(kernel)
        given = ApplierInput(source, kernel.name, target.launch, target.constants, DeviceLimits.of(evaluator.device))
        for rewrite in rewrites_of(applier, given):
            evaluation = evaluator.evaluate(Candidate(rewrite.source, rewrite.launch, (applier.technique,)))
            line = {"task": Path(case).name, "kernel": kernel.name, "applier": name, "note": rewrite.note,
                    "params": dict(rewrite.params), "block": list(rewrite.launch.block),
                    "outcome": evaluation.outcome, "speedup": evaluation.speedup, "reason": evaluation.reason}
            report_result(line)
            assert evaluation.verified, f"{case}: {kernel.name}: {rewrite.note} {rewrite.params}: {evaluation}"
            checked += 1
    # a device with smaller limits than the H200's may have fewer points
    assert checked >= min(points, 12), f"{case}: only {checked} grid points ({points} on an H200)"
