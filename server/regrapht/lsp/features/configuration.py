"""Settings: from initializationOptions, then pulled with workspace/configuration, per folder.

The `regrapht` section is pulled on `initialized`, again on every
workspace/didChangeConfiguration (clients that cannot be asked push it in the notification
instead) and when workspace folders are added or removed. One request asks for the window's
section (no `scopeUri`) and for each workspace folder's (`scopeUri` = the folder): a document
takes its folder's `settings.FOLDER_SCOPED` keys (arch, rules, compile flags, ...) and the
window's for the rest (lsp/folders.py; outside every folder, the window's). New settings apply
at once: the log level, the debounce, and, when the rule settings of an open document changed,
every open document is re-analysed. A bad value is logged, shown once (a popup: the user must
fix it) and replaced by its default.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from regrapht.lsp.features.common import log_to_client, refresh_code_lenses, show_message
from regrapht.lsp.folders import FolderAnswer, folders_after
from regrapht.lsp.state import ServerState
from regrapht.settings import SettingProblem, folder_problems, given_fields, parse_settings, unknown_keys

log = logging.getLogger(__name__)
SECTION = "regrapht"


def _report(server: LanguageServer, state: ServerState, problems: Sequence[SettingProblem], origin: str) -> None:
    """Each problem logged; the ones not shown yet in one popup (a value wrong in the window and
    in a folder alike is shown once)."""
    for problem in problems:
        log.warning("%s (%s)", problem.describe(), origin)
    fresh = state.problem_memory.new(problems)
    if fresh:
        show_message(server, state, logging.WARNING, "; ".join(p.describe() for p in fresh))


def _install_window(server: LanguageServer, state: ServerState, raw: object, origin: str) -> bool:
    """Parse, report, install the window's settings; True if analyses must be redone."""
    settings, problems = parse_settings(raw)
    for key in unknown_keys(raw):
        log.debug("ignoring unknown setting regrapht.%s (%s)", key, origin)
    _report(server, state, problems, origin)
    logging.getLogger("regrapht").setLevel(settings.log_level.upper())
    log.debug("settings from %s: %s", origin, settings)
    return state.apply_settings(settings)


def _install_folders(server: LanguageServer, state: ServerState, raws: Mapping[str, object], origin: str) -> bool:
    """Parse, report (the folder-scoped keys only: the rest are the window's) and install the
    folders' settings; True if analyses must be redone."""
    answers: dict[str, FolderAnswer | None] = {}
    for folder, raw in raws.items():
        if raw is None:
            answers[folder] = None
            continue
        settings, problems = parse_settings(raw)
        _report(server, state, folder_problems(problems), f"{origin} for {folder}")
        answers[folder] = FolderAnswer(settings, given_fields(raw))
        log.debug("settings of %s: %s", folder, settings)
    return state.apply_folder_settings(state.folder_settings.with_pulled(answers))


def _reanalyse(server: LanguageServer, state: ServerState, rules_changed: bool) -> None:
    if rules_changed and state.publisher is not None:
        for uri in list(state.documents):
            state.publisher.refresh(uri)
    refresh_code_lenses(server, state)


def apply_settings_object(server: LanguageServer, state: ServerState, raw: object, origin: str) -> None:
    """The window's settings (initializationOptions, a pushed didChangeConfiguration): parse,
    report new problems once, install; re-analyse open documents if rules changed."""
    _reanalyse(server, state, _install_window(server, state, raw, origin))


def apply_pulled(server: LanguageServer, state: ServerState, window: object,
                 folders: Mapping[str, object], origin: str = "workspace/configuration") -> None:
    """A pull's answers: the window's section (None: keep the current) and each folder's."""
    changed = _install_window(server, state, window, origin) if window is not None else False
    changed = _install_folders(server, state, folders, origin) or changed
    _reanalyse(server, state, changed)


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


def configuration_items(folders: Sequence[str]) -> list[types.ConfigurationItem]:
    """The window's section, then each folder's."""
    return [types.ConfigurationItem(section=SECTION),
            *(types.ConfigurationItem(scope_uri=folder, section=SECTION) for folder in folders)]


async def pull(server: LanguageServer, state: ServerState) -> None:
    """Ask the client for the `regrapht` section of the window and of every workspace folder
    (no-op for clients that cannot be asked). When pulls overlap, only the latest one's answer
    is installed: it is at least as new."""
    if not state.supports_configuration:
        return
    state.configuration_pulls += 1
    pull_number = state.configuration_pulls
    folders = state.folder_settings.folders
    params = types.ConfigurationParams(items=configuration_items(folders))
    try:
        result = await server.workspace_configuration_async(params)
    except JsonRpcException as error:  # the client answered with an error: keep the current settings
        log.warning("workspace/configuration failed: %s", error)
        log_to_client(server, state, logging.WARNING, f"regrapht: could not read settings: {error}")
        return
    if pull_number != state.configuration_pulls:
        log.debug("settings pull %d superseded by pull %d", pull_number, state.configuration_pulls)
        return
    answers: list[Any] = list(result or [])
    apply_pulled(server, state, answers[0] if answers else None, dict(zip(folders, answers[1:], strict=False)))


def initial_folders(params: types.InitializeParams) -> tuple[str, ...]:
    """The workspace folders the client starts with (none: every document takes the window's)."""
    return folders_after((), (folder.uri for folder in params.workspace_folders or ()), ())


def register(server: LanguageServer, state: ServerState) -> None:
    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(params: types.DidChangeConfigurationParams) -> None:
        """Async on the loop: pulls the sections (or reads the pushed one) and applies them."""
        if state.supports_configuration:
            await pull(server, state)
            return
        pushed: Any = params.settings
        if isinstance(pushed, Mapping) and SECTION in pushed:
            apply_settings_object(server, state, pushed[SECTION], "didChangeConfiguration")

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_workspace_folders(params: types.DidChangeWorkspaceFoldersParams) -> None:
        """Async on the loop: the removed folders' settings are dropped at once (their documents
        take the window's), then every folder's are pulled again."""
        event = params.event
        folders = folders_after(state.folder_settings.folders, (f.uri for f in event.added),
                                (f.uri for f in event.removed))
        if state.apply_folder_settings(state.folder_settings.with_folders(folders)):
            _reanalyse(server, state, True)
        await pull(server, state)
