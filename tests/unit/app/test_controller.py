"""The editor's Optimize workflow driven directly through `OptimizeController`, with a recording
editor connection instead of a language server: a found version is offered as a confirmed edit
and recorded in the card; a declined edit is kept; no device tells the user why; a second start
of the same kernel is refused; cancel reaches the running search."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from regrapht.app.controller import EditAnswer, EditSupport, OptimizeController
from regrapht.app.optimize import ModelCache, OptimizeRun, kernel_target
from regrapht.app.resources import GpuResources
from regrapht.graph import open_graph
from regrapht.lsp.features.optimize import kernel_to_optimize
from regrapht.lsp.state import DocumentState, ServerState
from regrapht.model.scripted import ScriptedModel
from regrapht.settings import Settings
from regrapht.snapshot import DocumentSnapshot
from regrapht.text import TextEdit, apply_edits
from regrapht.validate.types import Evaluation

from .optimize_fixtures import NEW_KERNEL, SOURCE
from .test_optimize_jobs import FakeEvaluator

T = TypeVar("T")


@dataclass
class RecordedProgress:
    title: str
    token: str = "token-1"
    cancelled: bool = False
    reports: list[str] = field(default_factory=list)
    ended: str | None = None

    async def begin(self, message: str = "") -> None:
        self.reports.append(message)

    def cancel(self) -> None:
        self.cancelled = True

    def report(self, message: str, percentage: int | None = None) -> None:
        self.reports.append(message)

    def end(self, message: str = "") -> None:
        self.ended = message


@dataclass
class RecordingEditor:
    """`OptimizeEditor` that records what the user would see and answers applyEdit as told."""

    state: ServerState
    accept: bool = True
    progresses: list[RecordedProgress] = field(default_factory=list)
    shown: list[tuple[int, str]] = field(default_factory=list)
    logged: list[str] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    edits: list[tuple[str, int, str]] = field(default_factory=list)
    outcomes: list[tuple[str, str, str]] = field(default_factory=list)

    def new_progress(self, title: str) -> RecordedProgress:
        self.progresses.append(RecordedProgress(title))
        return self.progresses[-1]

    def show(self, level: int, message: str) -> None:
        self.shown.append((level, message))

    def log(self, level: int, message: str) -> None:
        self.logged.append(message)

    def status(self, status: str, message: str) -> None:
        self.statuses.append(status)

    def outcome(self, level: int, message: str, uri: str, kernel: str) -> None:
        self.outcomes.append((uri, kernel, message))

    def edit_support(self) -> EditSupport:
        return EditSupport(apply_edit=True, document_changes=True, annotations=True)

    async def apply_edit(self, uri: str, version: int, edits: tuple[TextEdit, ...], lines: list[str], title: str,
                         description: str) -> EditAnswer:
        text = apply_edits("\n".join(lines), edits)
        self.edits.append((uri, version, title))
        if self.accept:  # the client applies it: the document is no longer the searched version
            self.state.open(uri, text, version + 1)
        return EditAnswer(self.accept, None if self.accept else "declined")

    async def in_worker(self, function: Callable[..., T], *args: Any) -> T:
        return function(*args)


def controller_for(tmp_path: Path, evaluator: FakeEvaluator, model: object, settings: Settings,
                   accept: bool = True) -> tuple[OptimizeController, RecordingEditor, ServerState]:
    state = ServerState()
    state.settings = settings
    state.loop = asyncio.get_running_loop()
    editor = RecordingEditor(state, accept)

    def wire(source: str, file: str, kernel: str, spec: Any, resources: GpuResources, *, arch: str | None,
             graph_path: Path | None, flags: Any = None) -> OptimizeRun:
        graph = open_graph(None, tmp_path / "overlay.json")
        return OptimizeRun(evaluator, graph, tmp_path / "overlay.json", kernel_target(spec.kernel(kernel)))

    controller = OptimizeController(state, editor, cast(GpuResources, None),
                                    models=ModelCache(lambda config: cast(Any, model)), wire=wire)
    return controller, editor, state


def snapshot_of(state: ServerState, document: DocumentState) -> DocumentSnapshot:
    """What the Optimize command hands the controller: the document as analysed, untitled."""
    return state.snapshot(document, state.ensure_analysis(document), None)


async def test_a_found_version_is_offered_applied_and_recorded_in_the_card(tmp_path: Path) -> None:
    model = ScriptedModel([f"```cuda\n{NEW_KERNEL}\n```"] * 200)
    controller, editor, state = controller_for(tmp_path, FakeEvaluator("Fake GPU"), model, Settings(search_budget=40))
    document = state.open("untitled:saxpy", SOURCE, 1)
    started = await controller.start(snapshot_of(state, document), "saxpy")
    assert started == {"started": True, "token": "token-1"}
    run = controller.registry.running(("untitled:saxpy", "saxpy"))
    assert run is not None and run.task is not None
    await run.task
    assert editor.edits and editor.edits[0][2].startswith("Apply 2.0x faster saxpy on Fake GPU, verified")
    assert editor.progresses[0].ended == "2.00x faster"
    assert editor.statuses == ["searching", "ready"]
    facts = state.facts_for("untitled:saxpy", "saxpy")
    assert facts is not None and any("applied" in str(section) for section in facts.sections)
    assert controller.registry.status(("untitled:saxpy", "saxpy")) == (False, None)  # applied: nothing kept
    # Apply is confirmed, and the run's history (every judged candidate) stays for the report
    assert len(editor.outcomes) == 1 and editor.outcomes[0][:2] == ("untitled:saxpy", "saxpy")
    assert editor.outcomes[0][2].startswith("ReGraphT applied the 2.0x faster saxpy (verified on Fake GPU")
    assert facts.last_run is not None and facts.last_run.kind == "found" and facts.last_run.applied == "applied"
    history = facts.last_run.result.history
    assert history and len(history) == facts.last_run.result.counters.generated
    assert [r.index for r in history] == list(range(1, len(history) + 1))
    assert {r.outcome for r in history} <= {"faster", "slower", "rejected"}
    assert all(r.time_ms is not None for r in history if r.outcome in ("faster", "slower"))
    assert facts.last_run.original == SOURCE


async def test_a_declined_edit_is_kept_as_a_code_action(tmp_path: Path) -> None:
    model = ScriptedModel([f"```cuda\n{NEW_KERNEL}\n```"] * 200)
    controller, editor, state = controller_for(tmp_path, FakeEvaluator("Fake GPU"), model, Settings(search_budget=40),
                                               accept=False)
    document = state.open("untitled:saxpy", SOURCE, 1)
    await controller.start(snapshot_of(state, document), "saxpy")
    run = controller.registry.running(("untitled:saxpy", "saxpy"))
    assert run is not None and run.task is not None
    await run.task
    running, kept = controller.registry.status(("untitled:saxpy", "saxpy"))
    assert not running and kept is not None and kept.result.best is not None
    assert any("declined" in line for line in editor.logged)


async def test_no_faster_version_says_so_with_the_history(tmp_path: Path) -> None:
    """A run that finds nothing tells the user (not only the log), and keeps its history."""
    evaluator = FakeEvaluator("Fake GPU")
    evaluator.evaluate = lambda candidate: Evaluation("wrong", "out[3]: 1.0 != 2.0 (seed 2)")  # type: ignore[method-assign]
    controller, editor, state = controller_for(tmp_path, evaluator, None, Settings(search_strategy="rules"))
    document = state.open("untitled:saxpy", SOURCE, 1)
    await controller.start(snapshot_of(state, document), "saxpy")
    run = controller.registry.running(("untitled:saxpy", "saxpy"))
    assert run is not None and run.task is not None
    await run.task
    assert editor.edits == []
    assert len(editor.outcomes) == 1
    assert editor.outcomes[0][2].startswith("ReGraphT found no faster verified version of saxpy: ")
    facts = state.facts_for("untitled:saxpy", "saxpy")
    assert facts is not None and facts.last_run is not None and facts.last_run.kind == "nothing"
    assert facts.last_run.result.history
    assert all(r.outcome == "wrong" and r.reason.startswith("out[3]") for r in facts.last_run.result.history)


async def test_no_device_tells_the_user_and_judges_nothing(tmp_path: Path) -> None:
    evaluator = FakeEvaluator(None)
    controller, editor, state = controller_for(tmp_path, evaluator, None, Settings())
    document = state.open("untitled:saxpy", SOURCE, 1)
    await controller.start(snapshot_of(state, document), "saxpy")
    run = controller.registry.running(("untitled:saxpy", "saxpy"))
    assert run is not None and run.task is not None
    await run.task
    assert evaluator.seen == [] and editor.edits == []
    assert editor.progresses[0].ended == "cannot verify on this machine"
    assert editor.shown and editor.shown[0][0] == logging.WARNING and "cannot verify" in editor.shown[0][1]


async def test_unknown_kernel_second_start_and_cancel(tmp_path: Path) -> None:
    release = asyncio.Event()
    evaluator = FakeEvaluator("Fake GPU")
    controller, editor, state = controller_for(tmp_path, evaluator, None, Settings(search_strategy="rules"))
    document = state.open("untitled:saxpy", SOURCE, 1)
    with pytest.raises(JsonRpcInvalidParams, match="no __global__ kernel 'nope'"):  # the command answers so
        kernel_to_optimize(document.uri, state.ensure_analysis(document), "nope", None)
    loop = asyncio.get_running_loop()
    original = evaluator.baseline

    def slow_baseline() -> Any:  # the search's thread waits until the test has tried a second start
        asyncio.run_coroutine_threadsafe(release.wait(), loop).result(timeout=30)
        return original()

    evaluator.baseline = slow_baseline  # type: ignore[method-assign]
    await controller.start(snapshot_of(state, document), "saxpy")
    assert (await controller.start(snapshot_of(state, document), "saxpy"))["started"] is False
    assert controller.cancel("untitled:saxpy", "saxpy") is True
    release.set()
    run = controller.registry.running(("untitled:saxpy", "saxpy"))
    assert run is not None and run.task is not None
    await run.task
    assert editor.progresses[0].cancelled
    assert controller.cancel("untitled:saxpy", "saxpy") is False  # finished: nothing to cancel
    assert editor.outcomes and "optimizing saxpy was cancelled" in editor.outcomes[-1][2]


async def test_the_lsp_editor_sends_outcomes_as_the_client_asked() -> None:
    """`LspOptimizeEditor.outcome`: `regrapht/optimizeOutcome` to a client that asked for it
    (initializationOptions.outcomeNotifications), an Info popup to any other."""
    from types import SimpleNamespace

    from lsprotocol import types

    from regrapht.lsp.features.optimize import OUTCOME_NOTIFICATION, LspOptimizeEditor

    sent: list[tuple[str, Any]] = []
    server = SimpleNamespace(protocol=SimpleNamespace(notify=lambda method, params: sent.append((method, params))),
                             window_show_message=lambda params: sent.append(("window/showMessage", params)))
    state = ServerState()
    state.loop = asyncio.get_running_loop()
    editor = LspOptimizeEditor(cast(Any, server), state)
    editor.outcome(logging.INFO, "ReGraphT found no faster verified version of saxpy: x", "file:///s.cu", "saxpy")
    state.outcome_notifications = True
    editor.outcome(logging.INFO, "ReGraphT applied the 2.0x faster saxpy", "file:///s.cu", "saxpy")
    await asyncio.sleep(0.05)
    (popup_method, popup), (method, params) = sent
    assert popup_method == "window/showMessage" and popup.type == types.MessageType.Info
    assert method == OUTCOME_NOTIFICATION
    assert params == {"uri": "file:///s.cu", "kernel": "saxpy", "message": "ReGraphT applied the 2.0x faster saxpy"}


async def test_the_kernels_profile_of_this_very_text_goes_with_the_request(tmp_path: Path) -> None:
    """Background validation keeps the kernel's last Nsight Compute profile in its facts with the
    digest of the text it measured; Optimize passes it to the search for that text only, and the
    card's last run then carries the boosts (issue 31)."""
    from regrapht.validate.profile_report import Profile, ProfiledSource, source_digest

    profile = Profile("saxpy", 91.0, 12.0, 87.0, (("long_scoreboard", 30.0),), ())
    controller, _editor, state = controller_for(tmp_path, FakeEvaluator("Fake GPU"), None,
                                                Settings(search_strategy="mcgs", search_budget=2))
    document = state.open("untitled:saxpy", SOURCE, 1)
    state.update_kernel_facts(document.uri, "saxpy", profile=ProfiledSource(source_digest(SOURCE), profile))
    await controller.start(snapshot_of(state, document), "saxpy")
    run = controller.registry.running((document.uri, "saxpy"))
    assert run is not None and run.task is not None and run.request.profile == profile
    await run.task
    facts = state.facts_for(document.uri, "saxpy")
    assert facts is not None and facts.last_run is not None and facts.last_run.result.profile is not None
    assert {b.technique for b in facts.last_run.result.profile.boosts} == {"shared_memory_tiling", "vectorized_access"}
    assert any("Tried first, from the Nsight Compute profile (memory-bound): `shared_memory_tiling`, "
               "`vectorized_access`." in section.body for section in facts.sections), facts.sections
    # once the text changed, the profile of the old text is not passed on
    edited = state.open("untitled:saxpy2", SOURCE.replace("y[i] = a", "y[i] = 1.0f * a"), 1)
    state.update_kernel_facts(edited.uri, "saxpy", profile=ProfiledSource(source_digest(SOURCE), profile))
    await controller.start(snapshot_of(state, edited), "saxpy")
    again = controller.registry.running((edited.uri, "saxpy"))
    assert again is not None and again.task is not None and again.request.profile is None
    await again.task
