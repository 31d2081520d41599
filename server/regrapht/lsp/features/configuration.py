"""Settings: from initializationOptions, then pulled with workspace/configuration.

The `regrapht` section is pulled on `initialized` and again on every
workspace/didChangeConfiguration (clients that cannot be asked push it in the notification
instead). New settings apply at once: the log level, the debounce, and, when the rule settings
changed, every open document is re-analysed. A bad value is logged, shown once (a popup: the
user must fix it) and replaced by its default.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from regrapht.lsp.features.common import log_to_client, refresh_code_lenses, show_message
from regrapht.lsp.state import ServerState
from regrapht.settings import parse_settings, unknown_keys

log = logging.getLogger(__name__)
SECTION = "regrapht"


def apply_settings_object(server: LanguageServer, state: ServerState, raw: object, origin: str) -> None:
    """Parse, report new problems once, install; re-analyse open documents if rules changed."""
    settings, problems = parse_settings(raw)
    for key in unknown_keys(raw):
        log.debug("ignoring unknown setting regrapht.%s (%s)", key, origin)
    fresh = state.problem_memory.new(problems)
    for problem in problems:
        log.warning("%s (%s)", problem.describe(), origin)
    if fresh:
        show_message(server, state, logging.WARNING, "; ".join(p.describe() for p in fresh))
    logging.getLogger("regrapht").setLevel(settings.log_level.upper())
    if state.apply_settings(settings) and state.publisher is not None:
        for uri in list(state.documents):
            state.publisher.refresh(uri)
    refresh_code_lenses(server, state)
    log.debug("settings from %s: %s", origin, settings)


def settings_from_initialization_options(options: object) -> object:
    """`{"settings": {...}}` per docs/architecture.md; a bare settings object is accepted too."""
    if isinstance(options, Mapping):
        inner = options.get("settings", options)
        return inner
    return None


def command_links_option(options: object) -> bool:
    """initializationOptions `{"commandLinks": true}`: the client (VS Code) runs `command:` links
    in hovers, so the hover card may link to the kernel report."""
    return isinstance(options, Mapping) and options.get("commandLinks") is True


async def pull(server: LanguageServer, state: ServerState) -> None:
    """Ask the client for the `regrapht` section (no-op for clients that cannot be asked)."""
    if not state.supports_configuration:
        return
    params = types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
    try:
        result = await server.workspace_configuration_async(params)
    except Exception as error:  # the client answered with an error: keep the current settings
        log.exception("workspace/configuration failed")
        log_to_client(server, state, logging.WARNING, f"regrapht: could not read settings: {error}")
        return
    raw = result[0] if result else None
    if raw is not None:
        apply_settings_object(server, state, raw, "workspace/configuration")


def register(server: LanguageServer, state: ServerState) -> None:
    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(params: types.DidChangeConfigurationParams) -> None:
        """Async on the loop: pulls the section (or reads the pushed one) and applies it."""
        if state.supports_configuration:
            await pull(server, state)
            return
        pushed: Any = params.settings
        if isinstance(pushed, Mapping) and SECTION in pushed:
            apply_settings_object(server, state, pushed[SECTION], "didChangeConfiguration")
