"""The editor's Optimize workflow: start, cancel, and what becomes of a result.

`OptimizeController` holds what `lsp/features/optimize.py` used to keep in closures: the registry of
running searches and kept results, the model cache, the shared `GpuResources`, and the steps
of one run on the event loop - start the search in a daemon thread under cancellable progress
(`start`), settle it (`finish`), tell the user and keep or offer a found version
(`handle_outcome`), and send the confirmed edit (`offer`). A run starts from a frozen
`DocumentSnapshot` (the text, version and settings the search reads) that the feature module
takes; the controller speaks to the editor only through `OptimizeEditor` (progress, messages,
status, applyEdit) and `EditorDocuments` (the live document, kernel facts), which the feature
module implements over pygls and the server state and tests implement with recorders, so tests
drive the workflow directly, without a language server.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from regrapht.app.jobs import (
    Kept,
    OpenDocument,
    Registry,
    Run,
    RunProgress,
    optimize_request,
    profile_of_text,
    run_search,
    should_cancel,
    start_daemon_thread,
)
from regrapht.app.messages import (
    KEPT,
    applied_message,
    best_title,
    card_section,
    declined_message,
    ended_messages,
    kept_message,
    no_gpu_message,
    not_applicable_message,
    outcome_message,
    path_description,
    path_text,
    with_section,
)
from regrapht.app.optimize import ModelCache, OptimizeOutcome, Wire, open_run
from regrapht.app.result_edits import build_edit, kernel_text
from regrapht.cards import KernelFacts, LastRun
from regrapht.errors import InputError
from regrapht.snapshot import DocumentSnapshot
from regrapht.spec.launch import LaunchConfig
from regrapht.text import TextEdit

if TYPE_CHECKING:
    from regrapht.app.resources import GpuResources
    from regrapht.search.pipeline import OptimizeResult

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EditSupport:
    """What the client supports of workspace edits."""

    apply_edit: bool  # workspace/applyEdit requests
    document_changes: bool  # versioned TextDocumentEdits
    annotations: bool  # change annotations (needsConfirmation)


@dataclass(frozen=True)
class EditAnswer:
    applied: bool
    failure_reason: str | None = None


class EditorProgress(RunProgress, Protocol):
    @property
    def token(self) -> str: ...

    async def begin(self, message: str = "") -> None: ...


class OptimizeEditor(Protocol):
    """The editor connection, as the Optimize workflow uses it."""

    def new_progress(self, title: str) -> EditorProgress: ...

    def show(self, level: int, message: str) -> None:  # a popup: only for what the user must act on
        ...

    def log(self, level: int, message: str) -> None:  # the client's output panel
        ...

    def status(self, status: str, message: str) -> None:  # the `regrapht/status` notification
        ...

    def outcome(self, level: int, message: str, uri: str, kernel: str) -> None:
        """How a run ended (applied, no faster version, cancelled), told the user: with a "Show
        why" action opening the run's history where the client offers it, else as a popup."""
        ...

    def edit_support(self) -> EditSupport: ...

    async def apply_edit(self, uri: str, version: int, edits: tuple[TextEdit, ...], lines: list[str], title: str,
                         description: str) -> EditAnswer: ...


class EditorDocuments(Protocol):
    """What the workflow reads and writes of the editor's open documents (the LSP layer's
    `ServerState`): the live document (an edit of the kernel cancels its run), whether a version
    is still current, and the kernel facts the card shows."""

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None: ...

    def get(self, uri: str) -> OpenDocument | None: ...

    def is_current(self, uri: str, open_id: int, version: int) -> bool: ...

    def facts_for(self, uri: str, kernel: str) -> KernelFacts | None: ...

    def update_kernel_facts(self, uri: str, kernel: str, **changes: Any) -> KernelFacts: ...


class OptimizeController:
    """One server's Optimize runs (see the module docstring)."""

    def __init__(self, documents: EditorDocuments, editor: OptimizeEditor, resources: GpuResources, *,
                 models: ModelCache | None = None, wire: Wire = open_run) -> None:
        self.documents = documents
        self.editor = editor
        self.resources = resources
        self.models = models or ModelCache()
        self.wire = wire
        self.registry = Registry()

    async def start(self, snapshot: DocumentSnapshot, kernel: str, spec: Path | None = None, *,
                    accept_guesses: bool = False) -> dict[str, Any]:
        """Returns at once: starts the search of `kernel` (a kernel of the snapshot, found by the
        caller; against `spec` when given, e.g. a capture's) in a daemon thread under cancellable
        progress; `finish` handles the outcome on the loop. `accept_guesses`: the user agreed to
        time on a spec with guesses. The kernel's last Nsight Compute profile (its facts) goes with
        the request when it measured exactly the snapshot's text (`profile_of_text`)."""
        if self.registry.running((snapshot.uri, kernel)) is not None:
            self.editor.log(logging.INFO, f"regrapht: already optimizing {kernel}")
            return {"started": False, "reason": f"already optimizing {kernel}"}
        progress = self.editor.new_progress(f"Optimizing {kernel}")
        # the background validation's profile of this very text raises the techniques it names
        profile = profile_of_text(self.documents.facts_for(snapshot.uri, kernel), snapshot.text)
        run = Run(snapshot, optimize_request(snapshot, kernel, spec, accept_guesses=accept_guesses, profile=profile),
                  kernel_text(snapshot.text, kernel), progress)
        self.registry.add(run)
        await progress.begin("reading the spec")
        self.editor.status("searching", f"optimizing {kernel}")
        run.task = asyncio.ensure_future(self.finish(run))
        run.task.add_done_callback(lambda task: self._failed(kernel, task))
        return {"started": True, "token": progress.token}

    def cancel(self, uri: str, kernel: str) -> bool:
        """Sets the run's cancel flag (its search stops at the next step); False if none runs."""
        run = self.registry.running((uri, kernel))
        if run is not None:
            run.progress.cancel()
        return run is not None

    def _failed(self, kernel: str, task: asyncio.Future[Any]) -> None:
        """On the loop (done callback): a bug in `finish` is logged and shown, not lost."""
        error = None if task.cancelled() else task.exception()
        if error is not None:
            log.error("optimizing %s failed", kernel, exc_info=error)
            self.editor.show(logging.ERROR, f"ReGraphT: optimizing {kernel} failed: {error!r}")

    async def finish(self, run: Run) -> None:
        """On the loop: awaits the search (daemon thread), then reports, applies or keeps the result."""
        request, progress = run.request, run.progress
        uri = run.document.uri
        loop = self.documents.loop or asyncio.get_running_loop()

        def report(message: str, percentage: int | None) -> None:  # any thread
            progress.report(message, percentage)
            log.info("optimize %s: %s", request.kernel, message)

        def cancel() -> bool:  # the search's thread, between steps
            return should_cancel(run, self.documents.get(uri))

        def search() -> OptimizeOutcome:
            return run_search(request, self.resources, report, cancel, self.models, self.wire)

        outcome: OptimizeOutcome | None = None
        try:
            outcome = await start_daemon_thread(loop, search)
        except InputError as error:
            self.editor.show(logging.ERROR, f"ReGraphT could not optimize {request.kernel}: {error}")
        finally:
            self.registry.remove(run.key)
            if outcome is None:
                progress.end("failed")
            self.editor.status("ready", "ReGraphT ready")
        if outcome is not None:
            await self.handle_outcome(run, outcome)

    async def handle_outcome(self, run: Run, outcome: OptimizeOutcome) -> None:
        """On the loop: ends the progress, tells the user, keeps or offers a found version, and
        records the path and the card section."""
        document, kernel, result = run.document, run.request.kernel, outcome.result
        if outcome.kind == "no_gpu":
            run.progress.end("cannot verify on this machine")
            self.editor.show(logging.WARNING, no_gpu_message(kernel, outcome.message))
            return
        if result is None or outcome.launch is None:
            return
        if result.best is not None and not run.kernel_edited:
            self.registry.keep(run.key, Kept(document.text, run.kernel_text, result, outcome.launch))
        if result.best is not None:
            self.documents.update_kernel_facts(document.uri, kernel, technique_path=path_text(result.best))
        ended, note = ended_messages(outcome.kind, outcome.message, kernel, run.kernel_edited)
        run.progress.end(ended)
        if note is not None:
            self.editor.log(logging.INFO, note)
        # the history is there before the user is told, so that "Show why" finds it
        self.documents.update_kernel_facts(document.uri, kernel,
                                           last_run=LastRun(outcome.kind, outcome.message, result,
                                                            original=document.text))
        if outcome.kind in ("nothing", "cancelled"):
            told = outcome_message(outcome.kind, outcome.message, kernel, run.kernel_edited)
            self.editor.outcome(logging.INFO, told, document.uri, kernel)
        applied = await self.offer(run, result, outcome.launch) if outcome.kind == "found" else "not applied"
        facts = self.documents.facts_for(document.uri, kernel)
        sections = with_section(facts.sections if facts else (), card_section(result, applied))
        self.documents.update_kernel_facts(document.uri, kernel, sections=sections,
                                           last_run=LastRun(outcome.kind, outcome.message, result, applied,
                                                            original=document.text))

    async def offer(self, run: Run, result: OptimizeResult, launch: LaunchConfig) -> str:
        """On the loop: sends the confirmed applyEdit if the document is still the searched
        version; returns what became of the result (for the card)."""
        document, kernel, best = run.document, run.request.kernel, result.best
        assert best is not None and run.kernel_text
        support = self.editor.edit_support()
        title = best_title(kernel, best, result.gpu)
        if not self.documents.is_current(document.uri, document.open_id, document.version) or not support.apply_edit:
            self.editor.show(logging.WARNING, kept_message(kernel, best.speedup, title, support.apply_edit))
            return KEPT
        built = build_edit(document.text, document.text, kernel, best, launch)
        if built.problems:
            self.editor.show(logging.WARNING, not_applicable_message(kernel, best.speedup, built.problems))
            return "not applied"
        answer = await self.editor.apply_edit(document.uri, document.version, built.edits, document.text.split("\n"),
                                              title, path_description(best))
        # VS Code's refactor preview answers "applied" even when the user unticked every change:
        # the document then still has the searched version, and the result must stay on offer.
        unchanged = self.documents.is_current(document.uri, document.open_id, document.version)
        if answer.applied and not unchanged:
            self.registry.forget_kept(run.key)
            self.editor.outcome(logging.INFO, applied_message(kernel, best, result.gpu), document.uri, kernel)
            return "applied"
        reason = answer.failure_reason or ("no change was selected" if answer.applied else None)
        self.editor.log(logging.INFO, declined_message(title, reason))
        return KEPT
