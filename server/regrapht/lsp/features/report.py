"""`regrapht.showKernelReport {uri, kernel[, detail]}` -> the long-form kernel card (a Markdown
string), or with `detail: true` the report's data (`regrapht.app.report_data`: the card's
Markdown plus findings, resources, timing, roofline and the last Optimize run's candidates)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from regrapht.app.report_data import report_data
from regrapht.cards import kernel_card
from regrapht.lsp.features.captured import card_captures
from regrapht.lsp.features.common import in_worker, kernel_argument, require_document
from regrapht.lsp.state import Analysis, DocumentState, ServerState

if TYPE_CHECKING:
    from regrapht.cuda.model import Function

REPORT_COMMAND = "regrapht.showKernelReport"


REPORT_AT_CURSOR = "regrapht.showKernelReportAtCursor"  # the VS Code client's command (its `{uri, kernel}`)


def report_link(uri: str, kernel: str) -> str:
    """A `command:` URI that opens the kernel report (VS Code runs it from a hover link)."""
    return f"command:{REPORT_AT_CURSOR}?{quote(json.dumps([{'uri': uri, 'kernel': kernel}]))}"


def card_for(state: ServerState, uri: str, analysis: Analysis, kernel: Function, *, long: bool = False) -> str:
    """The kernel card from everything the server knows: launches, all findings, facts, and the
    captures of the kernel near the file (read from disk: call it in a worker thread). The short
    card links to the report where the client runs `command:` links (`state.command_links`)."""
    assert analysis.model is not None  # `kernel` comes from it
    return kernel_card(
        kernel,
        analysis.model.launches_of(kernel.name),
        state.kernel_findings(uri, analysis, kernel.name),
        state.facts_for(uri, kernel.name),
        long=long,
        doc_link=state.doc_link,
        captures=card_captures(uri, kernel.name),
        report_link=report_link(uri, kernel.name) if state.command_links and not long else "",
    )


def report_for(state: ServerState, document: DocumentState, kernel_name: str) -> str | None:
    analysis = state.ensure_analysis(document)
    kernel = analysis.kernel(kernel_name)
    if kernel is None:
        return None
    return card_for(state, document.uri, analysis, kernel, long=True)


def report_data_for(state: ServerState, document: DocumentState, kernel_name: str) -> dict[str, object] | None:
    """The report's data (worker thread): the long card and the structured parts."""
    analysis = state.ensure_analysis(document)
    kernel = analysis.kernel(kernel_name)
    if kernel is None:
        return None
    markdown = card_for(state, document.uri, analysis, kernel, long=True)
    return report_data(document.uri, kernel_name, markdown, state.facts_for(document.uri, kernel_name),
                       state.kernel_findings(document.uri, analysis, kernel_name), state.doc_link)


def register(server: LanguageServer, state: ServerState) -> None:
    @server.command(REPORT_COMMAND)
    async def show_kernel_report(*arguments: Any) -> str | dict[str, object]:
        """Async; the analysis and formatting run in a worker thread."""
        uri, kernel = kernel_argument(arguments)
        document = require_document(state, uri)
        detail = isinstance(arguments[0], dict) and arguments[0].get("detail") is True
        report = await in_worker(server, report_data_for if detail else report_for, state, document, kernel)
        if report is None:
            raise JsonRpcInvalidParams(f"no kernel {kernel!r} in {uri}")
        return report
