"""initialize / initialized: encoding, settings, the `regrapht/status` notification, warm-up."""

from __future__ import annotations

import asyncio
import logging

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from regrapht.lsp.converters import UTF32, negotiate_encoding
from regrapht.lsp.features import configuration
from regrapht.lsp.features.common import log_to_client, send_status
from regrapht.lsp.state import ServerState

log = logging.getLogger(__name__)


def _warm_up() -> None:
    """Import the parser and rules in a worker so the first analysis does not pay for it."""
    import regrapht.cuda.document  # noqa: F401
    import regrapht.rules.engine  # noqa: F401


def register(server: LanguageServer, state: ServerState) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(params: types.InitializeParams) -> None:
        """Sync (cheap): remembers the loop, the encoding and the initial settings."""
        state.loop = asyncio.get_running_loop()
        general = params.capabilities.general
        state.encoding = negotiate_encoding(general.position_encodings if general else None)
        workspace = params.capabilities.workspace
        state.supports_configuration = bool(workspace and workspace.configuration)
        state.apply_folder_settings(state.folder_settings.with_folders(configuration.initial_folders(params)))
        code_lens = workspace.code_lens if workspace is not None else None
        state.supports_code_lens_refresh = bool(code_lens and code_lens.refresh_support)
        state.command_links = configuration.command_links_option(params.initialization_options)
        document = params.capabilities.text_document
        publish = document.publish_diagnostics if document is not None else None
        state.supports_related_information = bool(publish and publish.related_information)
        options = params.initialization_options
        state.outcome_notifications = isinstance(options, dict) and options.get("outcomeNotifications") is True
        raw = configuration.settings_from_initialization_options(options)
        if raw is not None:
            configuration.apply_settings_object(server, state, raw, "initializationOptions")
        state.on_skip = lambda uri, reason: log_to_client(server, state, logging.WARNING, f"{uri}: {reason}")
        log.info("initialize: position encoding %s", "utf-32" if state.encoding == UTF32 else "utf-16")

    @server.feature(types.INITIALIZED)
    async def initialized(params: types.InitializedParams) -> None:
        """Async: pulls settings, reports ready, then warms the parser up in a worker thread."""
        send_status(server, state, "starting", "reading settings")
        await configuration.pull(server, state)
        send_status(server, state, "ready", "ReGraphT ready")
        future = asyncio.get_running_loop().run_in_executor(server.thread_pool, _warm_up)
        future.add_done_callback(lambda f: _warmed(server, state, f))

    @server.feature(types.SHUTDOWN)
    def shutdown(params: None) -> None:
        """Sync: stop pending debounced analyses."""
        for uri in list(state.documents):
            state.debouncer.cancel(uri)


def _warmed(server: LanguageServer, state: ServerState, future: asyncio.Future[None]) -> None:
    error = future.exception() if not future.cancelled() else None
    if error is not None:
        log.error("could not load the CUDA parser or the rules: %s", error)
        send_status(server, state, "error", f"could not load the CUDA parser or the rules: {error}")
