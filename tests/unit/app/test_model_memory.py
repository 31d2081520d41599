"""The model failure memory: kept per (model, kernel, kind of call) in the cache dir; searches of
a kernel stop asking the model after MODEL_FAILURE_LIMIT answers with none correct."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from regrapht.app.model_memory import (
    MODEL_FAILURE_LIMIT,
    KernelModelMemory,
    KindRecord,
    kernel_identity,
    model_identity,
    open_model_memory,
    skip_reason,
)
from regrapht.graph import START
from regrapht.graph.types import Example
from regrapht.model.scripted import ScriptedModel
from regrapht.search import SearchOptions, SearchTools, optimize

from ..search.fakes import FakeEvaluator, search_request
from ..search.test_pipeline import SAXPY, TARGET, graph, speed_by_text

WRONG = "    /* WRONG */\n}\n```"


def test_the_model_is_skipped_after_the_limit_of_answers_with_none_correct() -> None:
    assert MODEL_FAILURE_LIMIT == 3
    assert skip_reason(KindRecord(2, 0)) is None
    reason = skip_reason(KindRecord(3, 0))
    assert reason is not None and "3 earlier answers" in reason and "none correct" in reason
    assert skip_reason(KindRecord(30, 1)) is None  # it did it once: keep asking
    assert skip_reason(KindRecord(30, 0), limit=0) is None  # 0: never skip


def gguf(path: Path, body: bytes) -> Path:
    path.write_bytes(b"GGUF" + body)
    return path


def test_the_memory_persists_per_model_and_kernel(tmp_path: Path) -> None:
    model = gguf(tmp_path / "smol.gguf", b"weights" * 1000)
    memory = open_model_memory(tmp_path / "cache", model, SAXPY, "saxpy")
    for _ in range(3):
        assert memory.skip_reason("rewrite") is None
        memory.record("rewrite", correct=False)
    assert memory.skip_reason("rewrite") is not None and memory.skip_reason("cot") is None
    # a later search (another process) reads it back
    again = open_model_memory(tmp_path / "cache", model, SAXPY, "saxpy")
    assert again.record_of("rewrite") == KindRecord(3, 0) and again.skip_reason("rewrite") is not None
    # another kernel, an edited source, another model: asked afresh
    assert open_model_memory(tmp_path / "cache", model, SAXPY, "other").skip_reason("rewrite") is None
    assert open_model_memory(tmp_path / "cache", model, SAXPY + "\n// edited\n", "saxpy").skip_reason("rewrite") is None
    other_model = gguf(tmp_path / "smol2.gguf", b"weights" * 1000 + b"!")
    assert model_identity(other_model) != model_identity(model)
    assert open_model_memory(tmp_path / "cache", other_model, SAXPY, "saxpy").skip_reason("rewrite") is None
    assert kernel_identity(SAXPY, "saxpy") != kernel_identity(SAXPY, "other")


def test_writers_in_parallel_lose_no_counts(tmp_path: Path) -> None:
    first = KernelModelMemory(tmp_path, "m", "k", "saxpy")
    second = KernelModelMemory(tmp_path, "m", "k", "saxpy")  # loaded before either wrote
    first.record("rewrite", correct=False)
    second.record("rewrite", correct=False)
    second.record("cot", correct=True)
    first.record("rewrite", correct=False)
    assert KernelModelMemory(tmp_path, "m", "k", "saxpy").record_of("rewrite") == KindRecord(3, 0)
    assert first.record_of("cot") == KindRecord(1, 1)  # merged on write


def test_an_unreadable_memory_is_started_afresh(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    memory = KernelModelMemory(tmp_path, "m", "k", "saxpy")
    memory.path.write_text("{not json")
    with caplog.at_level(logging.WARNING):
        again = KernelModelMemory(tmp_path, "m", "k", "saxpy")
        again.record("rewrite", correct=False)
    assert "unreadable" in caplog.text
    assert KernelModelMemory(tmp_path, "m", "k", "saxpy").record_of("rewrite") == KindRecord(1, 0)


def model_graph():  # type: ignore[no-untyped-def]
    g = graph()
    g.add_technique("divergence_reduction", "no applier does this")
    g.add_example(START, "divergence_reduction", Example("k", "because", "", "before", "after", 9.0))
    return g


def search(memory: KernelModelMemory, model: ScriptedModel, strategy: str = "mcgs", *, device: bool = True):  # type: ignore[no-untyped-def]
    evaluator = FakeEvaluator(speed_by_text, gpu_name="Fake GPU" if device else None)
    return optimize(search_request(SAXPY, "saxpy", strategy, 40, 0,
                                   options=SearchOptions(model_give_up=0, model_time_budget_s=None, model_choice=False)),
                    TARGET, SearchTools(evaluator, model, model_graph(), model_memory=memory))


def test_later_searches_of_a_kernel_do_not_ask_a_model_that_kept_failing(tmp_path: Path,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    memory = KernelModelMemory(tmp_path, "m", "k", "saxpy")
    asked = 0
    while memory.skip_reason("rewrite") is None:
        model = ScriptedModel([WRONG] * 60)
        result = search(memory, model)
        asked += len(model.calls)
        assert len(model.calls) >= 1 and result.best is not None
    assert asked >= MODEL_FAILURE_LIMIT
    model = ScriptedModel([])  # would raise if asked
    with caplog.at_level(logging.INFO, logger="regrapht.search.model_policy"):
        result = search(memory, model)
        cot = search(memory, ScriptedModel([WRONG] * 60), "cot")  # another kind: asked
    assert model.calls == [] and result.best is not None
    rewrite = result.model_use["rewrite"]
    assert rewrite.calls == 0 and "none correct" in rewrite.skipped
    shown = result.to_json()["model_calls"]
    assert isinstance(shown, dict) and "model failure memory" in shown["rewrite"]["skipped"]
    assert "not asking the model (rewrite)" in caplog.text
    # another kind is asked afresh, up to the limit (then, within this search too, no more)
    assert cot.model_use["cot"].calls == MODEL_FAILURE_LIMIT and cot.model_use["cot"].skipped


def test_a_correct_answer_or_no_device_keeps_the_model_asked(tmp_path: Path) -> None:
    right = "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = a * x[i] + y[i];\n}\n```"
    memory = KernelModelMemory(tmp_path, "m", "k", "saxpy")
    search(memory, ScriptedModel([right] + [WRONG] * 60))
    for _ in range(3):
        search(memory, ScriptedModel([WRONG] * 60))
    assert memory.record_of("rewrite").correct >= 1 and memory.skip_reason("rewrite") is None
    # without a device nothing is verified: the answers say nothing about the model
    blind = KernelModelMemory(tmp_path / "blind", "m", "k", "saxpy")
    for _ in range(4):
        search(blind, ScriptedModel([WRONG.replace("WRONG", "unjudged")] * 60), device=False)
    assert blind.record_of("rewrite").asked == 0


def test_run_optimize_keeps_the_memory_in_the_shared_cache_dir(tmp_path: Path) -> None:
    from dataclasses import dataclass

    from regrapht.app.optimize import OptimizeRequest, _model_memory
    from regrapht.app.resources import GpuResources

    @dataclass
    class FileModel(ScriptedModel):
        path: Path = tmp_path / "smol.gguf"

    gguf(tmp_path / "smol.gguf", b"weights")
    resources = GpuResources({"REGRAPHT_CACHE_DIR": str(tmp_path / "cache")}, tmp_path)
    request = OptimizeRequest("saxpy", SAXPY)
    memory = _model_memory(request, resources, FileModel([]))
    assert memory is not None and memory.path.parent == tmp_path / "cache" / "model-outcomes"
    assert _model_memory(request, resources, ScriptedModel([])) is None  # no file: no memory
