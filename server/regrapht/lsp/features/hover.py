"""Hover: the kernel card on a kernel's name or on a launch site."""

from __future__ import annotations

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from regrapht.cards import card_target
from regrapht.lsp.converters import from_lsp_position, markdown_hover
from regrapht.lsp.features.common import in_worker, require_document
from regrapht.lsp.features.report import card_for
from regrapht.lsp.state import DocumentState, ServerState


def hover_for(state: ServerState, document: DocumentState, position: types.Position, plain: bool) -> types.Hover | None:
    analysis = state.ensure_analysis(document)
    if analysis.model is None:
        return None
    target = card_target(analysis.model, from_lsp_position(position, analysis.lines, state.encoding))
    if target is None:
        return None
    kernel, span = target
    card = card_for(state, document.uri, analysis, kernel)
    return markdown_hover(card, span, analysis.lines, state.encoding, plain)


def register(server: LanguageServer, state: ServerState) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(params: types.HoverParams) -> types.Hover | None:
        """Async; the analysis and formatting run in a worker thread (never block the loop)."""
        document = require_document(state, params.text_document.uri)
        hover_caps = server.client_capabilities.text_document
        formats = hover_caps.hover.content_format if hover_caps and hover_caps.hover else None
        plain = bool(formats) and types.MarkupKind.Markdown not in (formats or [])
        return await in_worker(server, hover_for, state, document, params.position, plain)
