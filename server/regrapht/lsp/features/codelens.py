"""CodeLens above each kernel: its findings (opens the kernel report), "Optimize", and one
"Optimize against capture (captured from `./app` (3 launches))" per capture of the kernel."""

from __future__ import annotations

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from regrapht.cards import lens_title
from regrapht.lsp.converters import kernel_lenses, to_lsp_range
from regrapht.lsp.features.captured import capture_lenses
from regrapht.lsp.features.common import in_worker, require_document
from regrapht.lsp.features.optimize import OPTIMIZE_COMMAND
from regrapht.lsp.features.report import REPORT_COMMAND
from regrapht.lsp.state import DocumentState, ServerState


def lenses_for(state: ServerState, document: DocumentState) -> list[types.CodeLens]:
    analysis = state.ensure_analysis(document)
    if analysis.model is None:
        return []
    lenses: list[types.CodeLens] = []
    for kernel in analysis.model.kernels:
        title = lens_title(state.kernel_findings(document.uri, analysis, kernel.name))
        lenses += kernel_lenses(
            document.uri, kernel, title, analysis.lines, state.encoding, REPORT_COMMAND, OPTIMIZE_COMMAND
        )
        line = to_lsp_range(kernel.name_span, analysis.lines, state.encoding)
        lenses += capture_lenses(document.uri, kernel.name, line, OPTIMIZE_COMMAND)
    return lenses


def register(server: LanguageServer, state: ServerState) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    async def code_lens(params: types.CodeLensParams) -> list[types.CodeLens]:
        """Async; analysis and conversion in a worker thread."""
        document = require_document(state, params.text_document.uri)
        return await in_worker(server, lenses_for, state, document)
