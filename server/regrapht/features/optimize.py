"""Optimize kernel: the code action, `regrapht.optimizeKernel` and `regrapht.cancelOptimize`.

The command returns at once; the search (`regrapht.search.jobs.run_search`: spec, evaluator,
model, search) runs in a daemon thread under cancellable work-done progress. The cancel flag
checked between steps is set by the progress's cancel button, by `regrapht.cancelOptimize`, and
by an edit of the kernel's text (compared with the text the search started from) or closing the
document (`jobs.should_cancel`). One search per (uri, kernel). A verified faster version is
offered as a `workspace/applyEdit` that the client asks the user to confirm; if the document
changed meanwhile the result is kept and offered as a code action built against the then
current text (`search.result_edits.build_edit`). Without a CUDA device nothing unverified is
offered: the user is told why.

Only registration and handlers live here: the logic is in `regrapht.search.jobs`,
`regrapht.search.result_edits` and `regrapht.search.messages`; LSP types come from
`regrapht.converters`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from regrapht.cards import kernel_at
from regrapht.converters import (
    confirmed_workspace_edit,
    from_lsp_position,
    refactor_command_action,
    refactor_edit_action,
)
from regrapht.errors import InputError
from regrapht.features.common import (
    edit_capabilities,
    file_path,
    in_worker,
    kernel_or_position_argument,
    log_to_client,
    require_document,
    send_status,
    show_message,
)
from regrapht.features.progress import CancellableProgress
from regrapht.search.jobs import (
    Kept,
    ModelCache,
    Registry,
    Run,
    SearchOutcome,
    SearchRequest,
    llama_model,
    run_search,
    should_cancel,
    start_daemon_thread,
)
from regrapht.search.messages import (
    KEPT,
    action_title,
    card_section,
    declined_message,
    edit_title,
    ended_messages,
    kept_message,
    no_gpu_message,
    not_applicable_message,
    path_description,
    path_text,
    with_section,
)
from regrapht.search.result_edits import build_edit, kernel_text
from regrapht.spec.launch import LaunchConfig
from regrapht.state import Analysis, DocumentState, ServerState
from regrapht.text import Span

if TYPE_CHECKING:  # annotations only: the server starts without the search engine
    from regrapht.search.pipeline import OptimizeResult

log = logging.getLogger(__name__)

OPTIMIZE_COMMAND = "regrapht.optimizeKernel"
CANCEL_COMMAND = "regrapht.cancelOptimize"


def provide_actions(
    registry: Registry, document: DocumentState, analysis: Analysis, span: Span, document_changes: bool,
    encoding: str, annotations: bool,
) -> list[types.CodeAction]:
    """The code-action provider (worker thread): Optimize (or Cancel) for the kernel at `span`,
    and Apply for a kept result (built against the analysed text, with its version)."""
    kernel = kernel_at(analysis.model, span.start)
    if kernel is None:
        return []
    running, kept = registry.status((document.uri, kernel))
    command = CANCEL_COMMAND if running else OPTIMIZE_COMMAND
    actions = [refactor_command_action(action_title(kernel, running), command, {"uri": document.uri, "kernel": kernel})]
    best = kept.result.best if kept is not None else None
    if kept is None or best is None:
        return actions
    built = build_edit("\n".join(analysis.lines), kept.snapshot, kernel, best, kept.launch)
    if built.edits and not built.problems:
        title = edit_title(kernel, best.speedup, kept.result.gpu)
        edit = confirmed_workspace_edit(document.uri, analysis.version, built.edits, analysis.lines, encoding, title,
                                        path_description(best), document_changes=document_changes,
                                        annotations=annotations)
        actions.append(refactor_edit_action(title, edit))
    return actions


def register(server: LanguageServer, state: ServerState) -> None:
    registry = Registry()
    models = ModelCache(llama_model)

    def provider(document: DocumentState, analysis: Analysis, span: Span, document_changes: bool) -> list[Any]:
        annotations = edit_capabilities(server).annotations
        return provide_actions(registry, document, analysis, span, document_changes, state.encoding, annotations)

    state.code_action_providers.append(provider)

    @server.command(OPTIMIZE_COMMAND)
    async def optimize_kernel(*arguments: Any) -> dict[str, Any]:
        """Async, returns at once: resolves the kernel (worker), starts the search in a daemon
        thread under cancellable progress; `finish` handles the outcome on the loop."""
        uri, kernel, position = kernel_or_position_argument(arguments)
        document = require_document(state, uri)
        analysis = await in_worker(server, state.ensure_analysis, document)
        if position is not None:
            kernel = kernel_at(analysis.model, from_lsp_position(position, analysis.lines, state.encoding))
        if kernel is None or analysis.kernel(kernel) is None:
            raise JsonRpcInvalidParams(f"no __global__ kernel {'at that position' if kernel is None else repr(kernel)} in {uri}")
        if registry.running((uri, kernel)) is not None:
            log_to_client(server, state, logging.INFO, f"regrapht: already optimizing {kernel}")
            return {"started": False, "reason": f"already optimizing {kernel}"}
        snapshot = "\n".join(analysis.lines)
        request = SearchRequest(uri, kernel, snapshot, analysis.version, document.open_id, state.settings, file_path(uri))
        progress = CancellableProgress(server, state, f"Optimizing {kernel}")
        run = Run(request, kernel_text(snapshot, kernel), progress)
        registry.add(run)
        await progress.begin("reading the spec")
        send_status(server, state, "searching", f"optimizing {kernel}")
        run.task = asyncio.ensure_future(finish(run))
        run.task.add_done_callback(lambda task: _failed(kernel, task))
        return {"started": True, "token": progress.token}

    def _failed(kernel: str, task: asyncio.Future[Any]) -> None:
        """On the loop (done callback): a bug in `finish` is logged and shown, not lost."""
        error = None if task.cancelled() else task.exception()
        if error is not None:
            log.error("optimizing %s failed", kernel, exc_info=error)
            show_message(server, state, logging.ERROR, f"ReGraphT: optimizing {kernel} failed: {error!r}")

    @server.command(CANCEL_COMMAND)
    def cancel_optimize(*arguments: Any) -> dict[str, Any]:
        """Sync on the loop: sets the run's cancel flag (the worker stops at the next step)."""
        uri, kernel, _ = kernel_or_position_argument(arguments)
        run = registry.running((uri, kernel or ""))
        if run is not None:
            run.progress.cancel()
        return {"cancelled": run is not None}

    async def finish(run: Run) -> None:
        """On the loop: awaits the search (daemon thread), then reports, applies or keeps the result."""
        request, progress = run.request, run.progress
        assert state.loop is not None

        def report(message: str, percentage: int | None) -> None:  # any thread
            progress.report(message, percentage)
            log.info("optimize %s: %s", request.kernel, message)

        def cancel() -> bool:  # the search's thread, between steps
            return should_cancel(run, state.get(request.uri))

        outcome: SearchOutcome | None = None
        try:
            outcome = await start_daemon_thread(state.loop, lambda: run_search(request, report, cancel, models.get))
        except InputError as error:
            show_message(server, state, logging.ERROR, f"ReGraphT could not optimize {request.kernel}: {error}")
        finally:
            registry.remove(request.key)
            if outcome is None:
                progress.end("failed")
            send_status(server, state, "ready", "ReGraphT ready")
        if outcome is not None:
            await handle_outcome(run, outcome)

    async def handle_outcome(run: Run, outcome: SearchOutcome) -> None:
        """On the loop: ends the progress, tells the user, keeps or offers a found version, and
        records the path and the card section."""
        request, kernel, result = run.request, run.request.kernel, outcome.result
        if outcome.kind == "no_gpu":
            run.progress.end("cannot verify on this machine")
            show_message(server, state, logging.WARNING, no_gpu_message(kernel, outcome.message))
            return
        if result is None or outcome.launch is None:
            return
        if result.best is not None and not run.kernel_edited:
            registry.keep(request.key, Kept(request.snapshot, run.kernel_text, result, outcome.launch))
        if result.best is not None:
            state.update_kernel_facts(request.uri, kernel, technique_path=path_text(result.best))
        ended, note = ended_messages(outcome.kind, outcome.message, kernel, run.kernel_edited)
        run.progress.end(ended)
        if note is not None:
            log_to_client(server, state, logging.INFO, note)
        applied = await offer(run, result, outcome.launch) if outcome.kind == "found" else "not applied"
        facts = state.facts_for(request.uri, kernel)
        sections = with_section(facts.sections if facts else (), card_section(result, applied))
        state.update_kernel_facts(request.uri, kernel, sections=sections)

    async def offer(run: Run, result: OptimizeResult, launch: LaunchConfig) -> str:
        """On the loop: sends the confirmed applyEdit if the document is still the searched
        version; returns what became of the result (for the card)."""
        request, kernel, best = run.request, run.request.kernel, result.best
        assert best is not None and run.kernel_text
        caps = edit_capabilities(server)
        title = edit_title(kernel, best.speedup, result.gpu)
        if not state.is_current(request.uri, request.open_id, request.version) or not caps.apply_edit:
            show_message(server, state, logging.WARNING, kept_message(kernel, best.speedup, title, caps.apply_edit))
            return KEPT
        built = build_edit(request.snapshot, request.snapshot, kernel, best, launch)
        if built.problems:
            show_message(server, state, logging.WARNING, not_applicable_message(kernel, best.speedup, built.problems))
            return "not applied"
        edit = confirmed_workspace_edit(request.uri, request.version, built.edits, request.snapshot.split("\n"),
                                        state.encoding, title, path_description(best),
                                        document_changes=caps.document_changes, annotations=caps.annotations)
        answer = await server.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label=title))
        # VS Code's refactor preview answers "applied" even when the user unticked every change:
        # the document then still has the searched version, and the result must stay on offer.
        unchanged = state.is_current(request.uri, request.open_id, request.version)
        if answer.applied and not unchanged:
            registry.forget_kept(request.key)
            return "applied"
        reason = answer.failure_reason or ("no change was selected" if answer.applied else None)
        log_to_client(server, state, logging.INFO, declined_message(title, reason))
        return KEPT
