"""Diagnostics: debounced per document, computed in a worker, published for their version.

`DiagnosticsPublisher.refresh(uri)` (any thread) restarts the document's debounce timer
(`debounceMs`). When it fires, the analysis runs in a worker thread; the result is published
with the document version it was computed for, and dropped if the document was closed,
reopened or changed meanwhile (a newer refresh is then already scheduled). Diagnostics from
other sources (`ServerState.set_external_findings`) are published with the rules' findings.
"""

from __future__ import annotations

import logging
import time

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from regrapht.converters import finding_to_diagnostic
from regrapht.features.common import in_worker, on_loop
from regrapht.state import Analysis, DocumentState, ServerState

log = logging.getLogger(__name__)


def diagnostics_for(state: ServerState, uri: str, analysis: Analysis) -> list[types.Diagnostic]:
    return [
        finding_to_diagnostic(f, analysis.lines, state.encoding, state.doc_link, analysis.version)
        for f in state.all_findings(uri, analysis)
    ]


class DiagnosticsPublisher:
    """Implements `state.Republisher`; installed as `state.publisher` by `register`."""

    def __init__(self, server: LanguageServer, state: ServerState) -> None:
        self.server = server
        self.state = state

    def refresh(self, uri: str) -> None:
        """Debounced re-analysis and publication of `uri`; callable from any thread."""
        on_loop(self.state, self._schedule, uri)

    def clear(self, uri: str) -> None:
        on_loop(self.state, self._send, uri, [], None)

    def _schedule(self, uri: str) -> None:
        document = self.state.get(uri)
        if document is None:
            return
        open_id = document.open_id
        delay = self.state.settings.debounce_ms / 1000
        self.state.debouncer.schedule(uri, delay, lambda: self._analyse_and_publish(uri, open_id))

    async def _analyse_and_publish(self, uri: str, open_id: int) -> None:
        document = self.state.get(uri)
        if document is None or document.open_id != open_id:
            return
        analysis, diagnostics = await in_worker(self.server, self._compute, document)
        if not self.state.is_current(uri, open_id, analysis.version):
            log.debug("dropped diagnostics of %s v%s (closed or changed)", uri, analysis.version)
            return
        self._send(uri, diagnostics, analysis.version)
        for listener in self.state.publish_listeners:
            listener(uri, analysis)
        log.debug(
            "published %d diagnostics for %s v%d: analysis %.1f ms, %.1f ms after the edit",
            len(diagnostics), uri, analysis.version, analysis.duration_ms,
            (time.perf_counter() - document.changed_at) * 1000,
        )

    def _compute(self, document: DocumentState) -> tuple[Analysis, list[types.Diagnostic]]:
        """Worker thread: analyse (incrementally) and convert, so the loop only sends."""
        analysis = self.state.ensure_analysis(document)
        return analysis, diagnostics_for(self.state, document.uri, analysis)

    def _send(self, uri: str, diagnostics: list[types.Diagnostic], version: int | None) -> None:
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )


def register(server: LanguageServer, state: ServerState) -> DiagnosticsPublisher:
    publisher = DiagnosticsPublisher(server, state)
    state.publisher = publisher
    return publisher
