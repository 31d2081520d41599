"""Optimize kernel: the code action, `regrapht.optimizeKernel` and `regrapht.cancelOptimize`.

The command returns at once; the search (`regrapht.app.optimize.run_optimize`: spec,
evaluator, model, search) runs in a daemon thread under cancellable work-done progress. The cancel flag
checked between steps is set by the progress's cancel button, by `regrapht.cancelOptimize`, and
by an edit of the kernel's text (compared with the text the search started from) or closing the
document (`jobs.should_cancel`). One search per (uri, kernel). A verified faster version is
offered as a `workspace/applyEdit` that the client asks the user to confirm; if the document
changed meanwhile the result is kept and offered as a code action built against the then
current text (`app.result_edits.build_edit`). Without a CUDA device nothing unverified is
offered: the user is told why.

Only registration, thin handlers and `LspOptimizeEditor` (the controller's editor connection
over pygls) live here: the workflow is `regrapht.app.controller.OptimizeController`, which
tests drive directly; LSP types come from `regrapht.lsp.converters`. The controller is built at the
first Optimize command (`LazyController`), so the server starts without the workflow's modules.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from regrapht.app.messages import action_title
from regrapht.cards import kernel_at
from regrapht.errors import InputError
from regrapht.lsp.converters import (
    confirmed_workspace_edit,
    from_lsp_position,
    refactor_command_action,
    refactor_edit_action,
)
from regrapht.lsp.features.captured import capture_spec
from regrapht.lsp.features.common import (
    edit_capabilities,
    file_path,
    in_worker,
    kernel_or_position_argument,
    log_to_client,
    on_loop,
    require_document,
    send_status,
    show_message,
)
from regrapht.lsp.features.progress import CancellableProgress
from regrapht.lsp.state import Analysis, DocumentState, ServerState
from regrapht.text import Position, Span, TextEdit

if TYPE_CHECKING:  # the workflow (spec model, search options, jobs) loads at the first Optimize command
    from regrapht.app.controller import EditAnswer, EditSupport, OptimizeController
    from regrapht.app.jobs import Registry
    from regrapht.app.resources import GpuResources

T = TypeVar("T")

log = logging.getLogger(__name__)
ACCEPT_GUESSES = "Optimize with the guesses"

OPTIMIZE_COMMAND = "regrapht.optimizeKernel"
CANCEL_COMMAND = "regrapht.cancelOptimize"
# {uri, kernel, message}: how a run ended, to a client that asked (initializationOptions.outcomeNotifications)
OUTCOME_NOTIFICATION = "regrapht/optimizeOutcome"


def provide_actions(
    registry: Registry | None, document: DocumentState, analysis: Analysis, span: Span, document_changes: bool,
    encoding: str, annotations: bool,
) -> list[types.CodeAction]:
    """The code-action provider (worker thread): Optimize (or Cancel) for the kernel at `span`,
    and Apply for a kept result (built against the analysed text, with its version). No
    registry: no search was started yet, so none runs and no result is kept."""
    kernel = kernel_at(analysis.model, span.start)
    if kernel is None:
        return []
    running, kept = registry.status((document.uri, kernel)) if registry is not None else (False, None)
    command = CANCEL_COMMAND if running else OPTIMIZE_COMMAND
    actions = [refactor_command_action(action_title(kernel, running), command, {"uri": document.uri, "kernel": kernel})]
    best = kept.result.best if kept is not None else None
    if kept is None or best is None:
        return actions
    from regrapht.app.messages import best_title, path_description
    from regrapht.app.result_edits import build_edit

    built = build_edit("\n".join(analysis.lines), kept.snapshot, kernel, best, kept.launch)
    if built.edits and not built.problems:
        title = best_title(kernel, best, kept.result.gpu)
        edit = confirmed_workspace_edit(document.uri, analysis.version, built.edits, analysis.lines, encoding, title,
                                        path_description(best), document_changes=document_changes,
                                        annotations=annotations)
        actions.append(refactor_edit_action(title, edit))
    return actions


def kernel_to_optimize(uri: str, analysis: Analysis, kernel: str | None, position: Position | None) -> str:
    """The kernel the command names, by name or at `position` (InvalidParams: none there)."""
    if position is not None:
        kernel = kernel_at(analysis.model, position)
    if kernel is None or analysis.kernel(kernel) is None:
        raise JsonRpcInvalidParams(f"no __global__ kernel {'at that position' if kernel is None else repr(kernel)} "
                                   f"in {uri}")
    return kernel


class LspOptimizeEditor:
    """`OptimizeEditor` over pygls: progress, messages, status and applyEdit of one server."""

    def __init__(self, server: LanguageServer, state: ServerState) -> None:
        self.server = server
        self.state = state

    def new_progress(self, title: str) -> CancellableProgress:
        return CancellableProgress(self.server, self.state, title)

    def show(self, level: int, message: str) -> None:
        show_message(self.server, self.state, level, message)

    def log(self, level: int, message: str) -> None:
        log_to_client(self.server, self.state, level, message)

    def status(self, status: str, message: str) -> None:
        send_status(self.server, self.state, status, message)

    def outcome(self, level: int, message: str, uri: str, kernel: str) -> None:
        if self.state.outcome_notifications:  # the client shows it, with "Show why" (the run's history)
            log.log(level, "%s", message)
            on_loop(self.state, self.server.protocol.notify, OUTCOME_NOTIFICATION,
                    {"uri": uri, "kernel": kernel, "message": message})
        else:
            show_message(self.server, self.state, level, message)

    def edit_support(self) -> EditSupport:
        from regrapht.app.controller import EditSupport  # loaded with the controller that calls this

        caps = edit_capabilities(self.server)
        return EditSupport(caps.apply_edit, caps.document_changes, caps.annotations)

    async def apply_edit(self, uri: str, version: int, edits: tuple[TextEdit, ...], lines: list[str], title: str,
                         description: str) -> EditAnswer:
        support = self.edit_support()
        edit = confirmed_workspace_edit(uri, version, edits, lines, self.state.encoding, title, description,
                                        document_changes=support.document_changes, annotations=support.annotations)
        answer = await self.server.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label=title))
        from regrapht.app.controller import EditAnswer  # loaded with the controller that calls this

        return EditAnswer(answer.applied, answer.failure_reason)



def _load_workflow() -> None:
    """In a worker thread: the Optimize workflow's modules, so their import does not block the loop."""
    import regrapht.app.controller  # noqa: F401


class LazyController:
    """The server's one `OptimizeController`, built at the first Optimize command (the server
    starts without the workflow's modules). `built` is None until then: no search has run."""

    def __init__(self, server: LanguageServer, state: ServerState, resources: GpuResources) -> None:
        self.server = server
        self.state = state
        self.resources = resources
        self.built: OptimizeController | None = None

    async def get(self) -> OptimizeController:
        """On the loop."""
        if self.built is None:
            await in_worker(self.server, _load_workflow)
            from regrapht.app.controller import OptimizeController

            if self.built is None:  # another command may have built it while this one waited
                self.built = OptimizeController(self.state, LspOptimizeEditor(self.server, self.state),
                                                self.resources)
        return self.built


def register(server: LanguageServer, state: ServerState, resources: GpuResources) -> None:
    controller = LazyController(server, state, resources)

    def provider(document: DocumentState, analysis: Analysis, span: Span, document_changes: bool) -> list[Any]:
        annotations = edit_capabilities(server).annotations
        built = controller.built
        return provide_actions(built.registry if built is not None else None, document, analysis, span,
                               document_changes, state.encoding, annotations)

    state.code_action_providers.append(provider)

    @server.command(OPTIMIZE_COMMAND)
    async def optimize_kernel(*arguments: Any) -> dict[str, Any]:
        """Async, returns at once (`OptimizeController.start`)."""
        uri, kernel, position = kernel_or_position_argument(arguments)
        document = require_document(state, uri)
        optimize = await controller.get()
        analysis = await in_worker(server, state.ensure_analysis, document)
        at = from_lsp_position(position, analysis.lines, state.encoding) if position is not None else None
        found = kernel_to_optimize(uri, analysis, kernel, at)
        snapshot = state.snapshot(document, analysis, file_path(uri))
        try:  # `{uri, kernel, capture: DIR}` (the capture CodeLens): that capture's spec and data
            spec = await in_worker(server, capture_spec, arguments[0], found, snapshot.text)
        except InputError as error:
            raise JsonRpcInvalidParams(str(error)) from None
        if spec is not None:  # a capture's spec is exact: nothing guessed
            return await optimize.start(snapshot, found, spec)
        from regrapht.app.jobs import guesses_of  # loaded with the controller above

        guesses, where = await in_worker(server, guesses_of, snapshot, found)
        if guesses:
            question = (f"ReGraphT: the spec of {found} has values not proven from the kernel: "
                        f"{', '.join(guesses)} ({where}). Time the kernel on them anyway?")
            answer = await server.window_show_message_request_async(types.ShowMessageRequestParams(
                type=types.MessageType.Warning, message=question,
                actions=[types.MessageActionItem(title=ACCEPT_GUESSES), types.MessageActionItem(title="Cancel")]))
            if answer is None or answer.title != ACCEPT_GUESSES:
                return {"started": False, "reason": f"not optimized: the spec's {', '.join(guesses)} are guesses "
                        "(check them in a spec beside the file, e.g. with \"Create benchmark spec\")"}
        return await optimize.start(snapshot, found, accept_guesses=bool(guesses))

    @server.command(CANCEL_COMMAND)
    def cancel_optimize(*arguments: Any) -> dict[str, Any]:
        """Sync on the loop: sets the run's cancel flag (the worker stops at the next step)."""
        uri, kernel, _ = kernel_or_position_argument(arguments)
        built = controller.built
        return {"cancelled": built is not None and built.cancel(uri, kernel or "")}
