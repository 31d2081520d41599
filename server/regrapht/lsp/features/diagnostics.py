"""Diagnostics: debounced per document, computed in a worker, published for their version.

`DiagnosticsPublisher.refresh(uri)` (any thread) restarts the document's debounce timer
(`debounceMs`). When it fires, the document is frozen on the loop (`ServerState.analysis_request`:
a `DocumentSnapshot` and the edits it includes) and analysed in a worker thread from that
request, never from the live document (`ServerState.analysis_of`); the result is published
with the document version it was computed for, and dropped if the document was closed,
reopened or changed meanwhile (a newer refresh is then already scheduled). Diagnostics from
other sources (`ServerState.set_external_findings`) are published with the rules' findings.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from regrapht.lsp.converters import finding_to_diagnostic
from regrapht.lsp.features.common import file_path, in_worker, on_loop, refresh_code_lenses
from regrapht.lsp.state import Analysis, AnalysisRequest, DocumentState, ServerState
from regrapht.rules.types import Finding

log = logging.getLogger(__name__)


def diagnostics_for(state: ServerState, uri: str, analysis: Analysis,
                    previous: ConvertedDiagnostics | None = None) -> list[types.Diagnostic]:
    """The diagnostics of `analysis`; with `previous` (the last publication's conversions),
    findings that did not change (same object, same line texts) are not converted again: after
    an edit in a file of 5,000 kernels only the edited kernel's findings are new."""
    diagnostics = []
    converted: dict[int, tuple[Finding, str, str, types.Diagnostic]] = {}
    last = len(analysis.lines) - 1
    for finding in state.all_findings(uri, analysis):
        start_line = analysis.lines[min(finding.span.start.line, last)] if last >= 0 else ""
        end_line = analysis.lines[min(finding.span.end.line, last)] if last >= 0 else ""
        known = previous.entries.get(id(finding)) if previous is not None else None
        if known is not None and known[0] is finding and known[1] == start_line and known[2] == end_line:
            diagnostic = known[3]
        else:
            diagnostic = finding_to_diagnostic(finding, analysis.lines, state.encoding, state.doc_link, uri,
                                               state.supports_related_information)
        converted[id(finding)] = (finding, start_line, end_line, diagnostic)
        diagnostics.append(diagnostic)
    if previous is not None:
        previous.entries = converted  # only the current findings: bounded by the file
    return diagnostics


class ConvertedDiagnostics:
    """One document's last conversions, by finding identity (the finding is kept alive with its
    entry, so the identity cannot be reused by another object)."""

    def __init__(self) -> None:
        self.entries: dict[int, tuple[Finding, str, str, types.Diagnostic]] = {}


class DiagnosticsPublisher:
    """Implements `state.Republisher`; installed as `state.publisher` by `register`."""

    def __init__(self, server: LanguageServer, state: ServerState) -> None:
        self.server = server
        self.state = state
        self._lock = threading.Lock()
        # (uri, open_id) -> the last conversions; one worker at a time per document uses it
        self._converted: dict[tuple[str, int], ConvertedDiagnostics] = {}
        # uri -> (kernel, rule, severity) counts of the last publication (CodeLens refresh)
        self._lens_counts: dict[str, Counter[tuple[str, str, Any]]] = {}

    def refresh(self, uri: str) -> None:
        """Debounced re-analysis and publication of `uri`; callable from any thread."""
        on_loop(self.state, self._schedule, uri)

    def clear(self, uri: str) -> None:
        with self._lock:
            for key in [k for k in self._converted if k[0] == uri]:
                del self._converted[key]
        self._lens_counts.pop(uri, None)
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
        # frozen on the loop: the worker reads the snapshot, not the live document
        request = self.state.analysis_request(document, file_path(uri))
        analysis, diagnostics = await in_worker(self.server, self._compute, document, request)
        if not self.state.is_current(uri, open_id, analysis.version):
            log.debug("dropped diagnostics of %s v%s (closed or changed)", uri, analysis.version)
            return
        self._send(uri, diagnostics, analysis.version)
        self._refresh_lenses_if_changed(uri, diagnostics)
        for listener in self.state.publish_listeners:
            listener(uri, analysis)
        log.debug(
            "published %d diagnostics for %s v%d: analysis %.1f ms, %.1f ms after the edit",
            len(diagnostics), uri, analysis.version, analysis.duration_ms,
            (time.perf_counter() - document.changed_at) * 1000,
        )

    def _refresh_lenses_if_changed(self, uri: str, diagnostics: list[types.Diagnostic]) -> None:
        """The CodeLens counts findings per kernel: ask for lenses again when those counts changed."""
        counts = Counter((str((d.data or {}).get("kernel")), str(d.code), d.severity) for d in diagnostics)
        if self._lens_counts.get(uri) != counts:
            self._lens_counts[uri] = counts
            refresh_code_lenses(self.server, self.state)

    def _compute(self, document: DocumentState, request: AnalysisRequest) -> tuple[Analysis, list[types.Diagnostic]]:
        """Worker thread: analyse the request's snapshot (incrementally), convert and index, so
        the loop only sends."""
        analysis = self.state.analysis_of(document, request)
        with self._lock:
            previous = self._converted.setdefault((document.uri, document.open_id), ConvertedDiagnostics())
        diagnostics = diagnostics_for(self.state, document.uri, analysis, previous)
        analysis.build_indexes()
        return analysis, diagnostics

    def _send(self, uri: str, diagnostics: list[types.Diagnostic], version: int | None) -> None:
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )


def register(server: LanguageServer, state: ServerState) -> DiagnosticsPublisher:
    publisher = DiagnosticsPublisher(server, state)
    state.publisher = publisher
    return publisher
