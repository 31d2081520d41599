"""Optimize runs from the editor, without an editor: spec choice, cancel-on-edit, the registry,
a whole search with test doubles (no GPU, found, cancelled), and the texts the user reads."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from regrapht.app import jobs, messages
from regrapht.app.optimize import (
    ModelCache,
    ModelConfig,
    OptimizeRequest,
    OptimizeRun,
    choose_spec,
    kernel_target,
)
from regrapht.app.resources import GpuResources
from regrapht.app.result_edits import build_edit
from regrapht.cards import CardSection
from regrapht.errors import InputError
from regrapht.graph import open_graph
from regrapht.lsp.state import DocumentState
from regrapht.model.scripted import ScriptedModel
from regrapht.search.run import Progress
from regrapht.settings import Settings
from regrapht.snapshot import DocumentSnapshot
from regrapht.text import Span, apply_edits
from regrapht.validate.types import Candidate, Evaluation, Timing

from .optimize_fixtures import BEFORE, KERNEL_TEXT, NEW_KERNEL, SOURCE, best_version, optimized_source

# -- the spec ------------------------------------------------------------------------------------


def test_spec_beside_the_file_is_used_and_a_bad_one_is_an_input_error(tmp_path):
    source = tmp_path / "saxpy.cu"
    source.write_text(SOURCE)
    editor = jobs.optimize_request(DocumentSnapshot("file:///saxpy.cu", 1, 1, SOURCE, source, Settings()), "saxpy")
    inferred = choose_spec(editor)
    assert "inferred" in inferred.note and inferred.spec.kernel("saxpy").name == "saxpy"
    with pytest.raises(InputError, match="no spec saxpy.regrapht.toml beside the file"):
        choose_spec(OptimizeRequest("saxpy", SOURCE, source))  # the CLI does not guess sizes
    (tmp_path / "saxpy.regrapht.toml").write_text("[[kernel]]\nname = 'saxpy'\ngrid = [1]\nblock = [1]\n")
    assert choose_spec(editor).note == "spec saxpy.regrapht.toml"
    (tmp_path / "saxpy.regrapht.toml").write_text("not toml [")
    with pytest.raises(InputError, match="TOML"):
        choose_spec(editor)


# -- cancel on edit, the registry ----------------------------------------------------------------


class FakeCancellable:
    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    def report(self, message: str, percentage: int | None = None) -> None:
        pass

    def end(self, message: str = "") -> None:
        pass


def make_run(document: DocumentState) -> jobs.Run:
    snapshot = DocumentSnapshot(document.uri, document.version, document.open_id, SOURCE, None, Settings())
    return jobs.Run(snapshot, jobs.optimize_request(snapshot, "saxpy"), KERNEL_TEXT, FakeCancellable())


def test_edit_inside_the_kernel_cancels_edit_outside_does_not():
    document = DocumentState("file:///s.cu", SOURCE, 1, "cuda", 1)
    run = make_run(document)
    assert not jobs.should_cancel(run, document)
    document.apply(Span.of(9, 0, 9, 0), "    // note\n", 2)  # host code
    assert not jobs.should_cancel(run, document)
    document.apply(Span.of(4, 4, 4, 4), "// touched\n    ", 3)  # the kernel body (shifted by one line)
    assert jobs.should_cancel(run, document)
    assert jobs.should_cancel(run, document)  # stays cancelled


def test_close_reopen_and_user_cancel_cancel():
    document = DocumentState("file:///s.cu", SOURCE, 1, "cuda", 1)
    run = make_run(document)
    assert jobs.should_cancel(run, None)
    assert jobs.should_cancel(run, DocumentState("file:///s.cu", SOURCE, 1, "cuda", 2))  # reopened
    run.progress.cancel()
    assert jobs.should_cancel(make_run(document), document) is False
    assert jobs.should_cancel(run, document)


def test_registry_tracks_runs_and_kept_results():
    registry = jobs.Registry()
    run = make_run(DocumentState("file:///s.cu", SOURCE, 1, "cuda", 1))
    key = ("file:///s.cu", "saxpy")
    assert registry.running(key) is None and registry.status(key) == (False, None)
    registry.add(run)
    assert registry.running(key) is run and registry.status(key) == (True, None)
    kept = jobs.Kept(SOURCE, KERNEL_TEXT, SimpleNamespace(best=None), BEFORE)  # type: ignore[arg-type]
    registry.keep(key, kept)
    registry.remove(key)
    assert registry.status(key) == (False, kept)
    registry.forget_kept(key)
    assert registry.status(key) == (False, None)


def test_model_cache_reuses_the_model_while_its_settings_stay():
    made: list[ModelConfig] = []
    cache = ModelCache(lambda c: made.append(c) or ScriptedModel([]))
    first = cache.get(jobs.model_config(Settings()))
    assert cache.get(jobs.model_config(Settings(search_budget=3))) is first  # not a model setting
    assert cache.get(jobs.model_config(Settings(model_threads=3))) is not first
    assert len(made) == 2


async def test_daemon_thread_settles_value_and_exception():
    loop = asyncio.get_running_loop()
    assert await jobs.start_daemon_thread(loop, lambda: 42) == 42
    with pytest.raises(InputError):
        await jobs.start_daemon_thread(loop, lambda: (_ for _ in ()).throw(InputError("bad")))


# -- the search: no GPU, and a faster version with test doubles -----------------------------------


@dataclass
class FakeEvaluator:
    gpu_name: str | None
    arch: str = "sm_90"
    no_device_reason: str = "no CUDA device present"
    device: None = None
    seen: list[Candidate] = field(default_factory=list)

    def hold_gpu(self) -> _Null:
        return _Null()

    def baseline(self) -> Timing | None:
        return Timing(1.0, 1.0, 1.0, 20) if self.gpu_name else None

    def evaluate(self, candidate: Candidate) -> Evaluation:
        self.seen.append(candidate)
        speedup = 2.0 if "__restrict__" in candidate.source else 0.9
        timing = Timing(1 / speedup, 1 / speedup, 1 / speedup, 20)
        return Evaluation("faster" if speedup > 1 else "slower", "", timing, speedup)


class _Null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *args: object) -> None:
        return None


def fake_wire(evaluator: FakeEvaluator, tmp_path: Path):
    def wire(source, file, kernel, spec, resources, *, arch, graph_path, flags):
        graph = open_graph(None, tmp_path / "overlay.json")
        return OptimizeRun(evaluator, graph, tmp_path / "overlay.json", kernel_target(spec.kernel(kernel)))

    return wire


NO_RESOURCES = cast(GpuResources, None)  # the fake wire builds no evaluator on real resources


def models_of(model: object) -> ModelCache:
    return ModelCache(lambda config: model)  # type: ignore[arg-type, return-value]


def request_for(settings: Settings) -> OptimizeRequest:
    return jobs.optimize_request(DocumentSnapshot("untitled:saxpy", 1, 1, SOURCE, None, settings), "saxpy")


def test_no_gpu_outcome_and_message(tmp_path):
    reports: list[str] = []
    outcome = jobs.run_search(request_for(Settings()), NO_RESOURCES, lambda m, p: reports.append(m), lambda: False,
                              ModelCache(lambda c: pytest.fail("no model without a GPU")),
                              wire=fake_wire(FakeEvaluator(None), tmp_path))
    assert outcome.kind == "no_gpu" and outcome.result is None
    assert any("inferred" in r for r in reports)
    message = messages.no_gpu_message("saxpy", outcome.message)
    assert "cannot verify" in message and "saxpy" in message and "no CUDA device" in message


def test_worker_finds_a_faster_version_with_scripted_model(tmp_path):
    # budget 40: the appliers' parameter grids on saxpy are judged before the model (MCGS never
    # lets the model delay an applier rewrite; here every applier rewrite is as fast as the original)
    answer = f"```cuda\n{NEW_KERNEL}\n```"
    model = ScriptedModel([answer] * 200)
    evaluator = FakeEvaluator("Fake GPU")
    progress: list[str] = []
    outcome = jobs.run_search(request_for(Settings(search_budget=40)), NO_RESOURCES, lambda m, p: progress.append(m),
                              lambda: False, models_of(model), wire=fake_wire(evaluator, tmp_path))
    assert outcome.kind == "found", outcome.message
    assert outcome.result is not None and outcome.result.best is not None
    assert outcome.result.best.speedup == pytest.approx(2.0)
    assert any(m.startswith(("generating", "compiling", "checking", "timing")) for m in progress)
    assert outcome.launch is not None
    built = build_edit(SOURCE, SOURCE, "saxpy", outcome.result.best, outcome.launch)
    assert built.problems == ()
    assert "__restrict__" in apply_edits(SOURCE, built.edits)


def test_worker_stops_when_cancelled(tmp_path):
    outcome = jobs.run_search(request_for(Settings(search_budget=6, search_strategy="rules")), NO_RESOURCES,
                              lambda m, p: None, lambda: True, models_of(None),
                              wire=fake_wire(FakeEvaluator("Fake GPU"), tmp_path))
    assert outcome.kind == "cancelled"


# -- what the user reads ---------------------------------------------------------------------------


def test_progress_message_names_stage_and_best():
    progress = Progress("timing", "restrict", 3, 24, 1.8)
    assert messages.progress_message(progress) == "timing: restrict (3/24, best 1.80x)"
    assert messages.progress_percentage(progress) == 12


def test_titles():
    assert messages.edit_title("saxpy", 3.1, "NVIDIA H200") == "Apply 3.1x faster saxpy on NVIDIA H200, verified"
    assert messages.edit_title("saxpy", 3.1, None).endswith("on this GPU, verified")
    assert messages.action_title("saxpy", running=False) == "Optimize saxpy with ReGraphT"
    assert messages.action_title("saxpy", running=True) == "Cancel optimizing saxpy"


def test_ended_messages_by_kind():
    assert messages.ended_messages("cancelled", "2 tried", "k", True) == (
        "cancelled (the kernel was edited)", "regrapht: optimizing k cancelled; 2 tried")
    assert messages.ended_messages("nothing", "none faster", "k", False) == (
        "none faster", "regrapht: k: no faster verified version: none faster")
    assert messages.ended_messages("found", "2.00x faster", "k", False) == ("2.00x faster", None)


def test_path_text_and_card_section_show_each_step_gain():
    best = best_version(optimized_source(), BEFORE)
    assert messages.path_text(best) == ("restrict (1.40x)", "block_size (3.10x)")
    assert messages.path_description(best) == "restrict (1.40x) -> block_size (3.10x)"
    result = SimpleNamespace(
        best=best, gpu="NVIDIA H200", baseline_ms=0.31, strategy="mcgs", reason="",
        counters=SimpleNamespace(generated=8, correct=5, faster=3), profile=None,
    )
    section = messages.card_section(result, "applied")  # type: ignore[arg-type]
    assert section.title == messages.CARD_SECTION
    assert "3.10x faster on NVIDIA H200" in section.body and "1. `restrict`: 1.40x" in section.body
    other, old = CardSection("Timing", "t"), CardSection(messages.CARD_SECTION, "old")
    assert messages.with_section((old, other), section) == (other, section)
