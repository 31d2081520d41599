"""Helpers shared by the feature modules: document look-up errors, command arguments, client
capabilities, worker threads, messages."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from regrapht.lsp.state import DocumentState, ServerState

T = TypeVar("T")
log = logging.getLogger(__name__)

STATUS_NOTIFICATION = "regrapht/status"


def require_document(state: ServerState, uri: str) -> DocumentState:
    """The open document `uri`, or an InvalidParams error response for the request."""
    document = state.get(uri)
    if document is None:
        raise JsonRpcInvalidParams(f"document is not open: {uri}")
    return document


def kernel_argument(arguments: Sequence[Any]) -> tuple[str, str]:
    """(uri, kernel) from the single `{uri, kernel}` argument of a kernel command."""
    if len(arguments) != 1 or not isinstance(arguments[0], dict):
        raise JsonRpcInvalidParams("expected one argument {uri, kernel}")
    uri, kernel = arguments[0].get("uri"), arguments[0].get("kernel")
    if not isinstance(uri, str) or not isinstance(kernel, str):
        raise JsonRpcInvalidParams("expected one argument {uri: string, kernel: string}")
    return uri, kernel


def kernel_or_position_argument(arguments: Sequence[Any]) -> tuple[str, str | None, types.Position | None]:
    """(uri, kernel, position) from `{uri, kernel}` or `{uri, position: {line, character}}`."""
    if len(arguments) != 1 or not isinstance(arguments[0], dict) or not isinstance(arguments[0].get("uri"), str):
        raise JsonRpcInvalidParams("expected one argument {uri, kernel} or {uri, position}")
    argument = arguments[0]
    kernel, position = argument.get("kernel"), argument.get("position")
    if isinstance(kernel, str):
        return argument["uri"], kernel, None
    if isinstance(position, dict) and all(isinstance(position.get(k), int) for k in ("line", "character")):
        return argument["uri"], None, types.Position(line=position["line"], character=position["character"])
    raise JsonRpcInvalidParams("expected {uri, kernel: string} or {uri, position: {line, character}}")


def file_path(uri: str) -> Path | None:
    """The file a `file:` URI names; None for other schemes (untitled documents)."""
    path = to_fs_path(uri) if uri.startswith("file:") else None
    return Path(path) if path else None


@dataclass(frozen=True)
class EditCapabilities:
    """What the client supports of workspace edits."""

    apply_edit: bool  # workspace/applyEdit requests
    document_changes: bool  # versioned TextDocumentEdits
    annotations: bool  # change annotations (needsConfirmation)


def edit_capabilities(server: LanguageServer) -> EditCapabilities:
    workspace = server.client_capabilities.workspace
    edit = workspace.workspace_edit if workspace else None
    return EditCapabilities(
        apply_edit=bool(workspace and workspace.apply_edit),
        document_changes=bool(edit and edit.document_changes),
        annotations=bool(edit and edit.change_annotation_support),
    )


async def in_worker(server: LanguageServer, function: Callable[..., T], *args: Any) -> T:
    """Run blocking work (parsing, analysis, formatting) off the event loop."""
    return await asyncio.get_running_loop().run_in_executor(server.thread_pool, function, *args)


def on_loop(state: ServerState, callback: Callable[..., Any], *args: Any) -> None:
    """Run `callback` on the server's event loop; safe to call from any thread."""
    if state.loop is None:
        log.debug("no event loop yet; dropped %s", getattr(callback, "__name__", callback))
        return
    state.loop.call_soon_threadsafe(callback, *args)


def send_status(server: LanguageServer, state: ServerState, status: str, message: str = "") -> None:
    """The `regrapht/status` notification (docs/architecture.md); callable from any thread.

    status: starting, ready, modelLoading, searching, validating, error.
    """
    on_loop(state, server.protocol.notify, STATUS_NOTIFICATION, {"state": status, "message": message})


def refresh_code_lenses(server: LanguageServer, state: ServerState) -> None:
    """`workspace/codeLens/refresh` where the client supports it (the lens counts findings and
    reads settings, so it is asked again when either changes); callable from any thread."""
    if state.supports_code_lens_refresh:
        on_loop(state, _send_code_lens_refresh, server)


def _send_code_lens_refresh(server: LanguageServer) -> None:
    future = server.workspace_code_lens_refresh(None)
    future.add_done_callback(_log_refresh_failure)


def _log_refresh_failure(future: Any) -> None:
    error = future.exception() if not future.cancelled() else None
    if error is not None:
        log.debug("workspace/codeLens/refresh failed: %s", error)


def log_to_client(server: LanguageServer, state: ServerState, level: int, message: str) -> None:
    """window/logMessage (the client's output panel) plus stderr; callable from any thread."""
    log.log(level, "%s", message)
    kind = {
        logging.ERROR: types.MessageType.Error,
        logging.WARNING: types.MessageType.Warning,
        logging.INFO: types.MessageType.Info,
    }.get(level, types.MessageType.Log)
    on_loop(state, server.window_log_message, types.LogMessageParams(type=kind, message=message))


def show_message(server: LanguageServer, state: ServerState, level: int, message: str) -> None:
    """window/showMessage: a popup, only for what the user must act on."""
    log.log(level, "%s", message)
    kind = (types.MessageType.Error if level >= logging.ERROR else
            types.MessageType.Warning if level >= logging.WARNING else types.MessageType.Info)
    on_loop(state, server.window_show_message, types.ShowMessageParams(type=kind, message=message))
