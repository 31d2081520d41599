"""The judged sequence of one search on a corpus train task: the real appliers, the bundled graph
and synthetic timings (each candidate's speedup made up from its digest, 0.5x-3x, as
test_ablation_replay.py's), every candidate the evaluator was asked for, in order, as
"technique+path digest". tests/data/profiles/search_traces.json holds these sequences as the
search wrote them before profile priors existed (`test_profile_priors.py`: without a profile, and
with a profile of other code, the search judges exactly the same candidates in the same order)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from regrapht.app.optimize import kernel_target
from regrapht.evaluation.runner import load_task
from regrapht.graph import load_bundled_graph
from regrapht.inputs import read_source
from regrapht.search.request import OptimizeRequest
from regrapht.search.run import SearchRun, SearchTools
from regrapht.search.strategies import RUNNERS
from regrapht.validate.measurements import candidate_digest
from regrapht.validate.types import Candidate

from .fakes import FakeEvaluator, search_request

ROOT = Path(__file__).resolve().parents[3]
TRAIN = ROOT / "bench/corpus/train"
# kernels one or two structural appliers match (permutation, coarsening and tiling, halo tiling,
# matmul tiling, rows, columns and vectorizing, reduction and early exit, vectorizing)
TASKS = ("transpose_i32", "conv3x3_multichannel", "jacobi2d_f64_flat", "stencil1d_r4", "gemm_nt", "layernorm",
         "dgemv_colmajor_ld", "find_key_i32", "swish_template")
SEARCHES = (("mcgs", 12, 0), ("mcgs", 6, 1), ("greedy", 12, 0))


def synthetic_speed(candidate: Candidate) -> float:
    digest = candidate_digest(candidate.source, candidate.launch)
    return 0.5 + int(hashlib.sha256(digest.encode()).hexdigest()[:6], 16) / 0xFFFFFF * 2.5


def task_request(task: str, strategy: str, budget: int, seed: int) -> tuple[OptimizeRequest, SearchTools, object]:
    """The request of `task`'s first kernel, the tools (synthetic evaluator, bundled graph) and its target."""
    loaded = load_task(TRAIN / task)
    source, _ = read_source(loaded.source_path)
    kernel = loaded.spec.kernels[0]
    tools = SearchTools(FakeEvaluator(synthetic_speed), None, load_bundled_graph())
    return search_request(source, kernel.name, strategy, budget, seed), tools, kernel_target(kernel)


def trace(request: OptimizeRequest, tools: SearchTools, target: object) -> list[str]:
    """Every candidate the search judged, in order."""
    session = SearchRun.open(request, target, tools)  # type: ignore[arg-type]
    RUNNERS[request.strategy](session, tools.graph)
    assert isinstance(tools.evaluator, FakeEvaluator)
    return [f"{'+'.join(c.techniques)} {candidate_digest(c.source, c.launch)[:16]}" for c in tools.evaluator.seen]


def key_of(task: str, strategy: str, budget: int, seed: int) -> str:
    return f"{task}:{strategy}:{budget}:{seed}"
