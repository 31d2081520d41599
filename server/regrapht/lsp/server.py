"""Creates the language server and registers its features. Nothing else lives here.

To add a feature: write `regrapht/lsp/features/<name>.py` with `register(server, state)` that
defines thin handlers (get the document from `state`, call a pure function, convert with
`regrapht.lsp.converters`) and add it to `FEATURES` below. The features that compile or run on the
GPU (`GPU_FEATURES`: compiler confirmation, validation and Optimize) also get the server's one
`GpuResources` (cache dir, GPU lock, compiler, worker).
"""

from __future__ import annotations

import os
from pathlib import Path

from lsprotocol import types

from regrapht import __version__
from regrapht.app.resources import GpuResources
from regrapht.lsp.features import (
    code_actions,
    codelens,
    configuration,
    confirmation,
    diagnostics,
    documents,
    environment,
    hover,
    lifecycle,
    optimize,
    report,
    spec_action,
    symbols,
    validation,
)
from regrapht.lsp.features.common import log_to_client, send_status
from regrapht.lsp.protocol import RegraphtProtocol, RegraphtServer
from regrapht.lsp.state import Engine, ServerState, find_docs_root

FEATURES = (lifecycle, configuration, documents, diagnostics, hover, symbols, codelens, code_actions, report,
            spec_action)
GPU_FEATURES = (confirmation, validation, optimize, environment)  # on the one GpuResources: compiler, lock, worker


def create_server(engine: Engine | None = None) -> tuple[RegraphtServer, ServerState]:
    server = RegraphtServer(
        "regrapht",
        __version__,
        text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        protocol_cls=RegraphtProtocol,
    )
    state = ServerState(engine=engine, docs_root=find_docs_root())

    def analysis_failed(uri: object, error: BaseException) -> None:
        log_to_client(server, state, 40, f"regrapht: analysing {uri} failed: {error!r}")
        send_status(server, state, "error", f"analysing {uri} failed: {error}")

    state.debouncer.on_error = analysis_failed
    for feature in FEATURES:
        feature.register(server, state)
    resources = GpuResources(os.environ, Path.home())
    for gpu_feature in GPU_FEATURES:
        gpu_feature.register(server, state, resources)
    return server, state
