"""GPU suite: the rewrites of every red-team kernel (tests/data/redteam/) against its original.

The red team is recognition's breadth test (tests/unit/search/test_redteam_recognition.py: which
applier must recognise each kernel, and that its rewrites compile). Here a deterministic sample of
the rewrites each named applier gives (`rewrites_of`, the plain-form fallback included;
`applier_results.gpu_sample`: its first two, its grid's middle and last point; the kernels whose
whole grid test_structural_grids_gpu.py checks are left to it, and the batched GEMMs to
test_gpu_appliers.py, which checks them with every GEMM applier) is compiled, checked against the
original on fresh inputs by the evaluator (odd-size variant included) and timed, with launches
from the device the evaluator runs on. A wrong, uncompilable or crashing rewrite fails; slower
is reported, not failed (the search keeps only faster ones). Select families with `-k`, e.g.
`-k "reduction or row_ops or gemv"`. Set REGRAPHT_APPLIER_RESULTS=<file> for one JSON line per
rewrite.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from applier_results import checked_whole, gpu_sample, report_result

from regrapht.app.optimize import kernel_target
from regrapht.search.appliers import APPLIERS, ApplierInput, DeviceLimits, rewrites_of
from regrapht.spec.model import load_spec
from regrapht.validate.compiler import Compiler
from regrapht.validate.evaluator import CheckSettings, CudaEvaluator
from regrapht.validate.types import Candidate
from regrapht.validate.worker import GpuWorker

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests/data/redteam"
BY_NAME = {type(a).__name__: a for a in APPLIERS}
CASES = sorted(f"{p.parent.name}/{p.name.removesuffix('.regrapht.toml')}" for p in DATA.glob("*/*.regrapht.toml")
               if p.parent.name != "batched_gemm")


@pytest.mark.parametrize("case", CASES)
def test_every_redteam_rewrite_matches_the_original(case: str, gpu_worker: GpuWorker, compiler: Compiler,
                                                    cache_dir: Path) -> None:
    source_path = DATA / f"{case}.cu"
    source = source_path.read_text()
    spec = load_spec(DATA / f"{case}.regrapht.toml")
    expected = re.search(r"// applier: (\w+(?: or \w+)*)", source)
    assert expected is not None, case
    [kernel] = spec.kernels
    evaluator = CudaEvaluator(source, kernel.name, spec, arch=None, worker=gpu_worker, cache_dir=cache_dir,
                              compiler=compiler, file=source_path.name, settings=CheckSettings(check_timeout_s=60.0),
                              env=os.environ)
    target = kernel_target(kernel)
    given = ApplierInput(source, kernel.name, target.launch, target.constants, DeviceLimits.of(evaluator.device))
    for name in expected.group(1).split(" or "):
        if checked_whole(DATA / f"{case}.regrapht.toml", name):
            continue
        for rewrite in gpu_sample(rewrites_of(BY_NAME[name], given)):
            evaluation = evaluator.evaluate(Candidate(rewrite.source, rewrite.launch, (BY_NAME[name].technique,)))
            line = {"case": case, "applier": name, "note": rewrite.note, "outcome": evaluation.outcome,
                    "speedup": evaluation.speedup, "reason": evaluation.reason}
            report_result(line)
            assert evaluation.verified, f"{case}: {rewrite.note}: {evaluation}"
