"""`regrapht.showKernelReport {uri, kernel}` -> the long-form kernel card (markdown string)."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from regrapht.cards import kernel_card
from regrapht.features.common import in_worker, kernel_argument, require_document
from regrapht.state import DocumentState, ServerState

REPORT_COMMAND = "regrapht.showKernelReport"


def report_for(state: ServerState, document: DocumentState, kernel_name: str) -> str | None:
    analysis = state.ensure_analysis(document)
    kernel = analysis.kernel(kernel_name)
    if analysis.model is None or kernel is None:
        return None
    return kernel_card(
        kernel,
        analysis.model.launches_of(kernel_name),
        state.kernel_findings(document.uri, analysis, kernel_name),
        state.facts_for(document.uri, kernel_name),
        long=True,
        doc_link=state.doc_link,
    )


def register(server: LanguageServer, state: ServerState) -> None:
    @server.command(REPORT_COMMAND)
    async def show_kernel_report(*arguments: Any) -> str:
        """Async; the analysis and formatting run in a worker thread."""
        uri, kernel = kernel_argument(arguments)
        document = require_document(state, uri)
        report = await in_worker(server, report_for, state, document, kernel)
        if report is None:
            raise JsonRpcInvalidParams(f"no kernel {kernel!r} in {uri}")
        return report
