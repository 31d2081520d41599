"""Helpers shared by the feature modules: document look-up errors, worker threads, messages."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from regrapht.state import DocumentState, ServerState

T = TypeVar("T")
log = logging.getLogger(__name__)

STATUS_NOTIFICATION = "regrapht/status"


def require_document(state: ServerState, uri: str) -> DocumentState:
    """The open document `uri`, or an InvalidParams error response for the request."""
    document = state.get(uri)
    if document is None:
        raise JsonRpcInvalidParams(f"document is not open: {uri}")
    return document


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
    kind = types.MessageType.Error if level >= logging.ERROR else types.MessageType.Warning
    on_loop(state, server.window_show_message, types.ShowMessageParams(type=kind, message=message))
