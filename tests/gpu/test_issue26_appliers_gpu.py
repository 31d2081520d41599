"""GPU: the differential checks of issue 26's new rewrites, every variant against its original.

- `ParallelScan` min/max scans of per-element prefix loops (tests/data/appliers/prefix_min_f32,
  prefix_max_int, prefix_max_exclusive_f64);
- `FirstIndexMin`, the early-exit predicate search (corpus train first_negative_f32, find_key_i32,
  first_above_f64);
- `PrivatisedHistogram` with 64-bit counters (corpus train hist_size_t_bytes, hist_u64_mod_bins,
  hist_uint64_float_bins).

Each rewrite (every grid point, launch sized from the evaluator's device) is compiled, checked
against the original on fresh inputs by the evaluator (odd-size variant included) and timed; a
wrong, failing or crashing one fails the test, a slower one is reported (the search keeps only
faster ones). REGRAPHT_APPLIER_RESULTS=<file> gives one JSON line per rewrite.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from applier_results import report_result

from regrapht.app.optimize import kernel_target
from regrapht.search.appliers import ApplierInput, DeviceLimits, rewrites_of
from regrapht.search.appliers.common import Applier
from regrapht.search.appliers.first_index import FirstIndexMin
from regrapht.search.appliers.histogram import PrivatisedHistogram
from regrapht.search.appliers.scan import ParallelScan
from regrapht.spec.model import load_spec
from regrapht.validate.compiler import Compiler
from regrapht.validate.evaluator import CheckSettings, CudaEvaluator
from regrapht.validate.types import Candidate
from regrapht.validate.worker import GpuWorker

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
CASES: dict[str, tuple[Applier, int]] = {  # spec (without .regrapht.toml) -> applier, least rewrites
    "tests/data/appliers/prefix_min_f32": (ParallelScan(), 10),
    "tests/data/appliers/prefix_max_int": (ParallelScan(), 10),
    "tests/data/appliers/prefix_max_exclusive_f64": (ParallelScan(), 10),
    "bench/corpus/train/first_negative_f32/first_negative_f32": (FirstIndexMin(), 16),
    "bench/corpus/train/find_key_i32/find_key_i32": (FirstIndexMin(), 16),
    "bench/corpus/train/first_above_f64/first_above_f64": (FirstIndexMin(), 16),
    "bench/corpus/train/hist_size_t_bytes/hist_size_t_bytes": (PrivatisedHistogram(), 12),
    "bench/corpus/train/hist_u64_mod_bins/hist_u64_mod_bins": (PrivatisedHistogram(), 12),
    "bench/corpus/train/hist_uint64_float_bins/hist_uint64_float_bins": (PrivatisedHistogram(), 12),
}


@pytest.mark.parametrize("case", sorted(CASES), ids=[Path(c).name for c in sorted(CASES)])
def test_every_rewrite_matches_the_original(case: str, gpu_worker: GpuWorker, compiler: Compiler,
                                            cache_dir: Path) -> None:
    applier, least = CASES[case]
    source_path = ROOT / f"{case}.cu"
    source = source_path.read_text()
    spec = load_spec(ROOT / f"{case}.regrapht.toml")
    [kernel] = spec.kernels
    evaluator = CudaEvaluator(source, kernel.name, spec, arch=None, worker=gpu_worker, cache_dir=cache_dir,
                              compiler=compiler, file=source_path.name,
                              settings=CheckSettings(check_timeout_s=60.0), env=os.environ)
    target = kernel_target(kernel)
    given = ApplierInput(source, kernel.name, target.launch, target.constants, DeviceLimits.of(evaluator.device))
    rewrites = rewrites_of(applier, given)
    assert len(rewrites) >= least, f"{case}: {len(rewrites)} rewrites"
    for rewrite in rewrites:
        evaluation = evaluator.evaluate(Candidate(rewrite.source, rewrite.launch, (applier.technique,)))
        report_result({"task": Path(case).name, "kernel": kernel.name, "applier": type(applier).__name__,
                       "note": rewrite.note, "params": dict(rewrite.params), "block": list(rewrite.launch.block),
                       "outcome": evaluation.outcome, "speedup": evaluation.speedup, "reason": evaluation.reason})
        assert evaluation.verified, f"{case}: {rewrite.note} {rewrite.params}: {evaluation}"
