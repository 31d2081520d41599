"""The evidence-led search (docs/search.md change 19): a float kernel promoted to double (a GELU
written with double literals and `tanh()`), with the real appliers, the bundled graph and fake
timings shaped as the H200 measured the case (float math 2.4x, vectorized double code 1.14x at
best). nvcc confirms R007/R008 on its PTX; the proof names fast_math with a bound from the f64
share, so mcgs judges the float version within budget 6 (before, it spent a budget of 12 on the
vectorized double code). The GPU version is tests/gpu/test_evidence_gpu.py."""

from __future__ import annotations

import shutil

import pytest

from regrapht.graph import load_bundled_graph
from regrapht.search.evidence import KernelEvidence, Proof, amdahl_bound, kernel_evidence
from regrapht.search.request import KernelTarget
from regrapht.search.run import SearchRun, SearchTools
from regrapht.search.strategies import RUNNERS
from regrapht.spec.launch import LaunchConfig
from regrapht.validate.ptx import LineCode, PtxFacts
from regrapht.validate.types import Candidate

from .fakes import FakeEvaluator, search_request

GELU = """__global__ void gelu_double(const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = 0.5 * v * (1.0 + tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
    }
}
"""
KERNEL = "gelu_double"
LAUNCH = LaunchConfig(("(n + 255) / 256",), ("256",))
FLOAT_SPEEDUP = 2.4


def is_float(source: str) -> bool:
    return "tanh(" not in source and "0.5 *" not in source


def speed(candidate: Candidate) -> float:
    """Float math removes the f64 bound (2.4x); on double code the memory-side rewrites gain
    little (vectorized 1.06-1.14x by block); on float code vectorizing gains 5% more."""
    source = candidate.source
    vector = "vec_float_rg" in source
    block = candidate.launch.block[0] if candidate.launch.block else "256"
    shape = {"256": 1.0, "128": 0.98, "512": 1.02, "1024": 0.97, "64": 0.96}.get(block, 0.99)
    if is_float(source):
        return FLOAT_SPEEDUP * (1.05 if vector else 1.0) * (shape if vector else 1.0)
    return (1.12 if vector else 0.99) * shape


def facts_for(source: str) -> PtxFacts:
    """Hand-made PTX facts: 78 f64 instructions on the arithmetic line, a few f32 ones around."""
    line = next(n for n, text in enumerate(source.splitlines(), start=1) if "tanh" in text)
    return PtxFacts({3: LineCode(instructions=6, functions={KERNEL}),
                     5: LineCode(instructions=2, global_widths=[4], functions={KERNEL}),
                     line: LineCode(instructions=86, f64=78, global_widths=[4], functions={KERNEL})})


def search(strategy: str, budget: int, seed: int, evidence: KernelEvidence | None) -> SearchRun:
    graph = load_bundled_graph()
    session = SearchRun.open(search_request(GELU, KERNEL, strategy, budget, seed), KernelTarget(LAUNCH),
                             SearchTools(FakeEvaluator(speed), None, graph, evidence=evidence))
    RUNNERS[strategy](session, graph)
    return session


def best_speedup(session: SearchRun) -> float:
    best = session.ledger.best
    return best.evaluation.speedup or 1.0 if best is not None else 1.0


def test_the_proof_names_fast_math_with_a_bound_from_the_f64_share() -> None:
    evidence = kernel_evidence(GELU, KERNEL, facts_for(GELU), arch="sm_90")
    proof = evidence.proofs["fast_math"]
    assert proof.rule in ("R007", "R008")
    assert "78 f64 instructions" in proof.evidence
    # 78 of 94 instructions on f64 values, each twice an f32 one's time on sm_90
    assert proof.bound == pytest.approx(amdahl_bound(78, 94, 2))
    assert proof.bound > 5.0
    assert "proof:fast_math" in evidence.features() and "f64" in evidence.features()


def test_no_ptx_no_proof() -> None:
    evidence = kernel_evidence(GELU, KERNEL, None)
    assert evidence.proofs == {}
    assert {"rule:R007", "rule:R008"} & set(evidence.features())


def test_a_line_nvcc_narrowed_to_float_proves_nothing() -> None:
    line = next(n for n, text in enumerate(GELU.splitlines(), start=1) if "tanh" in text)
    facts = PtxFacts({line: LineCode(instructions=20, f64=0, functions={KERNEL})})
    assert "fast_math" not in kernel_evidence(GELU, KERNEL, facts).proofs


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mcgs_reaches_the_float_version_within_budget_6(seed: int) -> None:
    evidence = kernel_evidence(GELU, KERNEL, facts_for(GELU), arch="sm_90")
    session = search("mcgs", 6, seed, evidence)
    assert best_speedup(session) >= FLOAT_SPEEDUP
    assert is_float(session.ledger.best.candidate.source)  # type: ignore[union-attr]


@pytest.mark.parametrize("budget", [6, 12, 24])
def test_with_the_proof_mcgs_is_not_behind_rules(budget: int) -> None:
    evidence = kernel_evidence(GELU, KERNEL, facts_for(GELU), arch="sm_90")
    mcgs = best_speedup(search("mcgs", budget, 0, evidence))
    rules = best_speedup(search("rules", budget, 0, evidence))
    assert mcgs >= rules * 0.999


def test_at_budget_12_the_float_code_is_vectorized_too() -> None:
    """After the proven technique, the structural step is judged again below it (its grid on the
    double code waits: `discharged_beside`)."""
    evidence = kernel_evidence(GELU, KERNEL, facts_for(GELU), arch="sm_90")
    session = search("mcgs", 12, 0, evidence)
    assert best_speedup(session) > FLOAT_SPEEDUP


def test_without_the_evidence_the_graph_wide_prior_decides() -> None:
    """The same search without the proof: the bundled graph's priors alone (what the H200 run of
    issue 26 saw) do not bring the float version into budget 6 on every seed; with the proof
    they do. If the graph's priors change so that they do, this test says so (and the evidence
    test above still holds)."""
    without = [best_speedup(search("mcgs", 6, seed, None)) for seed in (0, 1, 2)]
    with_proof = [best_speedup(search("mcgs", 6, seed, kernel_evidence(GELU, KERNEL, facts_for(GELU))))
                  for seed in (0, 1, 2)]
    assert min(with_proof) >= FLOAT_SPEEDUP
    assert min(without) < FLOAT_SPEEDUP


def test_a_proof_is_dropped_once_its_rule_is_gone() -> None:
    evidence = KernelEvidence(KERNEL, {"fast_math": Proof("fast_math", "R008", "78 f64 instructions", 8.0)},
                              ("R007", "R008"))
    session = SearchRun.open(search_request(GELU, KERNEL, "mcgs", 6), KernelTarget(LAUNCH),
                             SearchTools(FakeEvaluator(speed), None, None, evidence=evidence))
    assert session.evidence.proof_on(GELU, "fast_math") is not None
    written = GELU.replace("0.5 *", "0.5f *").replace("1.0 +", "1.0f +").replace("tanh(", "tanhf(") \
        .replace("0.7978845608 *", "0.7978845608f *").replace("0.044715 *", "0.044715f *")
    assert session.evidence.proof_on(written, "fast_math") is None


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_nvcc_confirms_the_f64_instructions_of_the_real_gelu() -> None:
    from regrapht.search.evidence import compiled_evidence
    from regrapht.validate.compiler import Compiler

    compiler = Compiler.from_environment(__import__("os").environ, None)
    evidence = compiled_evidence(compiler, GELU, KERNEL, None, "sm_90")
    assert "fast_math" in evidence.proofs, evidence
    assert evidence.f64_instructions > 10
    assert evidence.proofs["fast_math"].bound > 2.0
    session = search("mcgs", 6, 0, evidence)
    assert best_speedup(session) >= FLOAT_SPEEDUP
