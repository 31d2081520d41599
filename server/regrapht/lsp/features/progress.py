"""Cancellable work-done progress for long commands (optimize, validate).

pygls cannot stop a running thread and `$/cancelRequest` does not stop work that has started,
so long work runs in a worker and checks `progress.cancelled` between steps. The flag is set
by the user (window/workDoneProgress/cancel on the progress token) or by `cancel()` (for
example from a `regrapht.cancelOptimize` command).

    progress = CancellableProgress(server, state, "Optimizing saxpy")
    await progress.begin()                        # on the event loop (async handler)
    def work():                                   # in a worker: await in_worker(server, work)
        for step in steps:
            if progress.cancelled:
                return None
            progress.report(f"candidate {i}", percentage)   # any thread
        ...
    progress.end("3 candidates, best 1.8x")       # any thread
"""

from __future__ import annotations

import logging
import threading
import uuid

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from regrapht.lsp.features.common import on_loop
from regrapht.lsp.state import ServerState

log = logging.getLogger(__name__)


class CancellableProgress:
    def __init__(self, server: LanguageServer, state: ServerState, title: str, token: str | None = None) -> None:
        self.server = server
        self.state = state
        self.title = title
        self.token = token or f"regrapht-{uuid.uuid4()}"
        self._cancelled = threading.Event()
        self._enabled = False

    async def begin(self, message: str = "") -> None:
        """Create the token (if the client supports progress) and show the progress."""
        window = self.server.client_capabilities.window
        self._enabled = bool(window and window.work_done_progress)
        if not self._enabled:
            return
        await self.server.work_done_progress.create_async(self.token)
        self.server.work_done_progress.begin(
            self.token, types.WorkDoneProgressBegin(title=self.title, message=message or None, cancellable=True)
        )

    @property
    def cancelled(self) -> bool:
        if self._cancelled.is_set():
            return True
        future = self.server.work_done_progress.tokens.get(self.token)
        return future is not None and future.cancelled()

    def cancel(self) -> None:
        self._cancelled.set()

    def report(self, message: str, percentage: int | None = None) -> None:
        if self._enabled:
            value = types.WorkDoneProgressReport(message=message, percentage=percentage, cancellable=True)
            on_loop(self.state, self.server.work_done_progress.report, self.token, value)

    def end(self, message: str = "") -> None:
        if self._enabled:
            value = types.WorkDoneProgressEnd(message=message or None)
            on_loop(self.state, self.server.work_done_progress.end, self.token, value)
            on_loop(self.state, self.server.work_done_progress.tokens.pop, self.token, None)
