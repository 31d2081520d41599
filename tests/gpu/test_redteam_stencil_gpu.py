"""Every rewrite of the red-team stencils and convolutions (tests/data/redteam/{stencil,conv}/, the
kernels their appliers recognise: grid-stride loops and marches read as coordinates, clamped
neighbours, accessors, local plane pointers, template sizes, flat batch-channel planes) checked
against its original on the GPU by the search's own evaluator, on each kernel's own spec (fresh
inputs, the spec size and an odd size), and timed. Marker gpu: skips cleanly without a device;
the lead runs it on the H200."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "search"))

from test_redteam_recognition import BY_NAME, CASES, DATA, MISSES, case_input  # noqa: E402

from regrapht.search.appliers import DeviceLimits, rewrites_of  # noqa: E402
from regrapht.spec.model import load_spec  # noqa: E402
from regrapht.validate.compiler import Compiler  # noqa: E402
from regrapht.validate.evaluator import CheckSettings, CudaEvaluator  # noqa: E402
from regrapht.validate.types import Candidate  # noqa: E402
from regrapht.validate.worker import GpuWorker  # noqa: E402

pytestmark = pytest.mark.gpu

STENCILS = [c for c in CASES if c.split("/")[0] in ("stencil", "conv") and c not in MISSES]


@pytest.mark.parametrize("case", STENCILS)
def test_red_team_rewrite_matches_the_original(case: str, gpu_worker: GpuWorker, compiler: Compiler,
                                               cache_dir: Path) -> None:
    expected, given = case_input(case)
    spec = load_spec(DATA / f"{case}.regrapht.toml")
    evaluator = CudaEvaluator(given.source, given.kernel, spec, arch=None, worker=gpu_worker, cache_dir=cache_dir,
                              compiler=compiler, file=f"{case}.cu", settings=CheckSettings(check_timeout_s=60.0),
                              env=os.environ)
    device = DeviceLimits.of(evaluator.device)
    measured = replace(given, device=device)  # what the search hands the appliers
    rewrites = [r for name in expected for r in rewrites_of(BY_NAME[name], measured)]
    assert rewrites, f"{case}: no rewrite"
    for rewrite in rewrites:
        result = evaluator.evaluate(Candidate(rewrite.source, rewrite.launch))
        print(f"{case}: {rewrite.note}: {result.outcome} speedup {result.speedup}")
        assert result.verified, f"{case} / {rewrite.note}: {result.outcome}: {result.reason}"
