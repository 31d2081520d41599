"""Document symbols: kernels, __device__ and host functions (parameters, launch sites inside)."""

from __future__ import annotations

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from regrapht.lsp.converters import flat_symbols, function_symbols
from regrapht.lsp.features.common import in_worker, require_document
from regrapht.lsp.state import DocumentState, ServerState


def symbols_for(
    state: ServerState, document: DocumentState, hierarchical: bool
) -> list[types.DocumentSymbol] | list[types.SymbolInformation]:
    analysis = state.ensure_analysis(document)
    if analysis.model is None:
        return []
    symbols = function_symbols(analysis.model.functions, analysis.lines, state.encoding)
    return symbols if hierarchical else flat_symbols(document.uri, symbols)


def register(server: LanguageServer, state: ServerState) -> None:
    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def document_symbol(
        params: types.DocumentSymbolParams,
    ) -> list[types.DocumentSymbol] | list[types.SymbolInformation]:
        """Async; analysis and conversion in a worker thread."""
        document = require_document(state, params.text_document.uri)
        caps = server.client_capabilities.text_document
        symbol_caps = caps.document_symbol if caps else None
        hierarchical = bool(symbol_caps and symbol_caps.hierarchical_document_symbol_support)
        return await in_worker(server, symbols_for, state, document, hierarchical)
