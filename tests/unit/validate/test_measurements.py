"""The measurement cache shared by the searches of one kernel (validate/measurements.py): an
identical candidate reuses its verdict and timing (no compile, check or timing again), a wrong one
stays wrong, a candidate that differs by one character is judged afresh, and a crash is never kept.
The evaluators run on the numpy stand-in for the GPU (fake_cuda.py) with real nvcc."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from tests.unit.validate.fake_cuda import CHECKER, FakeCuda
from tests.unit.validate.test_gpu_worker_fake import CASES, GOOD, ORIGINAL, SPEC, InProcessWorker, scale

from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import parse_spec
from regrapht.validate.checker import CHECK_KERNELS
from regrapht.validate.compiler import CompileCache, Compiler, find_demangler, find_nvcc
from regrapht.validate.evaluator import CheckSettings, CudaEvaluator
from regrapht.validate.measurements import MeasurementCache, measurement_identity
from regrapht.validate.types import Candidate, Evaluation, Timing

LAUNCH = LaunchConfig(("ceil_div(n, 128)",), ("128",))


def test_only_verdicts_the_identical_text_would_get_again_are_kept() -> None:
    cache = MeasurementCache()
    identity = measurement_identity("original", "spec", "sm_90", "H200")
    good = Candidate("good", LAUNCH)
    cache.put(identity, good, Evaluation("faster", timing=Timing(1.0, 0.9, 1.1, 20), speedup=2.0))
    cache.put(identity, Candidate("wrong", LAUNCH), Evaluation("wrong", "y[0]: 3 != 2"))
    cache.put(identity, Candidate("crash", LAUNCH), Evaluation("crashed", "worker died"))
    cache.put(identity, Candidate("hang", LAUNCH), Evaluation("timeout", "killed"))
    reused = cache.get(identity, good)
    assert reused is not None and reused.speedup == 2.0 and reused.details["measurement_reused"] is True
    wrong = cache.get(identity, Candidate("wrong", LAUNCH))
    assert wrong is not None and wrong.outcome == "wrong" and not wrong.verified
    assert cache.get(identity, Candidate("crash", LAUNCH)) is None and cache.get(identity, Candidate("hang", LAUNCH)) is None
    # another launch, another character, another kernel, GPU or spec: judged on its own
    assert cache.get(identity, Candidate("good", LaunchConfig(("ceil_div(n, 256)",), ("256",)))) is None
    assert cache.get(identity, Candidate("good ", LAUNCH)) is None
    for other in (measurement_identity("original2", "spec", "sm_90", "H200"),
                  measurement_identity("original", "spec2", "sm_90", "H200"),
                  measurement_identity("original", "spec", "sm_80", "H200"),
                  measurement_identity("original", "spec", "sm_90", "A100")):
        assert cache.get(other, good) is None
    stats = cache.stats()
    assert (stats.hits, stats.stored) == (2, 2)


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_evaluators_sharing_a_cache_judge_an_identical_candidate_once(tmp_path: Path) -> None:
    cuda = FakeCuda()
    nvcc = find_nvcc(os.environ)
    assert nvcc is not None
    compiler = Compiler(nvcc, cache=CompileCache(tmp_path), demangler=find_demangler(nvcc, os.environ))
    checker = compiler.compile(CHECK_KERNELS, arch="sm_90", file="regrapht_check.cu")
    assert checker.cubin is not None
    cuda.modules[checker.cubin] = CHECKER
    sources = {case: ORIGINAL + f"__device__ int marker_{case};\n" for case in ("good", "wrong_value")}
    sources["good_edited"] = sources["good"] + "__device__ int one_more;\n"
    behaviour = {"good": GOOD, "wrong_value": CASES["wrong_value"][0], "good_edited": CASES["wrong_value"][0]}
    for case, text in sources.items():
        compiled = compiler.compile(text, arch="sm_90", file="candidate.cu")
        assert compiled.cubin is not None
        cuda.modules[compiled.cubin] = {"*": scale(behaviour[case])}
    original = compiler.compile(ORIGINAL, arch="sm_90", file="scale.cu")
    assert original.cubin is not None
    cuda.modules[original.cubin] = {"*": scale(GOOD)}
    spec = parse_spec(SPEC, file="scale.regrapht.toml")
    shared = MeasurementCache()

    def evaluator(worker: InProcessWorker) -> CudaEvaluator:
        return CudaEvaluator(ORIGINAL, "scale", spec, arch=None, worker=worker,  # type: ignore[arg-type]
                             cache_dir=tmp_path, compiler=compiler, file="scale.cu",
                             settings=CheckSettings(odd_size_cap=700), measurements=shared)

    first_worker, second_worker = InProcessWorker(cuda), InProcessWorker(cuda)
    first, second = evaluator(first_worker), evaluator(second_worker)
    good = first.evaluate(Candidate(sources["good"], LAUNCH))
    wrong = first.evaluate(Candidate(sources["wrong_value"], LAUNCH))
    assert good.verified and wrong.outcome == "wrong"
    assert second.baseline() == first.baseline()  # the original is timed once
    again = second.evaluate(Candidate(sources["good"], LAUNCH))
    assert again.details.get("measurement_reused") is True
    assert (again.outcome, again.timing, again.speedup) == (good.outcome, good.timing, good.speedup)
    still_wrong = second.evaluate(Candidate(sources["wrong_value"], LAUNCH))
    assert still_wrong.outcome == "wrong" and still_wrong.reason == wrong.reason
    assert not [r for r in second_worker.requests if r["op"] in ("check", "time")]
    # one more line: a new candidate, checked on the second evaluator's own inputs (it is wrong there)
    edited = second.evaluate(Candidate(sources["good_edited"], LAUNCH))
    assert edited.outcome == "wrong" and "measurement_reused" not in edited.details
    assert [r["op"] for r in second_worker.requests if r["op"] == "check"] == ["check"]
