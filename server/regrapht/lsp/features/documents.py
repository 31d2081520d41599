"""Text synchronisation (incremental): didOpen, didChange, didClose.

All three run synchronously on the event loop and only do cheap work: splice the changed
lines into `DocumentState` (converting the client's columns to code points) and queue the edit
for the incremental parser. Parsing and the rules run later, debounced, in a worker thread
(see features/diagnostics.py).
"""

from __future__ import annotations

import logging

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from regrapht.lsp.converters import from_lsp_range
from regrapht.lsp.state import ServerState

log = logging.getLogger(__name__)


def register(server: LanguageServer, state: ServerState) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        """Sync on the loop: store the text, schedule diagnostics."""
        item = params.text_document
        state.open(item.uri, item.text, item.version, item.language_id)
        if state.publisher is not None:
            state.publisher.refresh(item.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        """Sync on the loop: splice each change into the lines, queue it, reschedule diagnostics."""
        uri, version = params.text_document.uri, params.text_document.version
        document = state.get(uri)
        if document is None:
            log.warning("didChange for a document that is not open: %s", uri)
            return
        for change in params.content_changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                span = from_lsp_range(change.range, document.lines, state.encoding)
                document.apply(span, change.text, version)
            else:
                document.replace_all(change.text, version)
        if state.publisher is not None:
            state.publisher.refresh(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        """Sync on the loop: forget the document, cancel its analysis, clear its diagnostics."""
        uri = params.text_document.uri
        if state.close(uri) is not None and state.publisher is not None:
            state.publisher.clear(uri)
