"""A document's project compile flags in the editor: settings `compileCommands` ("" = the nearest
`compile_commands.json`) and `extraCompilerArgs`, read by validate/compile_db.py.

`project_flags` is what validation and the compiler confirmation compile with; a bad database
and a file that takes its neighbour's flags are told once each (window/logMessage and the log,
`ServerState.flag_notices`). `record_flags` puts the flags used on the file's kernel cards.
Called from worker threads only (the database is read from disk).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from pygls.lsp.server import LanguageServer

from regrapht.lsp.features.common import file_path, log_to_client
from regrapht.lsp.state import ServerState
from regrapht.settings import Settings
from regrapht.validate.compile_db import CompileFlags, compile_setup


def project_flags(server: LanguageServer, state: ServerState, uri: str, settings: Settings) -> CompileFlags:
    """The flags of the file `uri` under `settings` (a snapshot's: its workspace folder's)."""
    lookup = compile_setup(settings.compile_commands, settings.extra_compiler_args).lookup(file_path(uri))
    for message in state.flag_notices.fresh(lookup):
        level = logging.INFO if message == lookup.notice else logging.WARNING
        log_to_client(server, state, level, f"regrapht: {message}")
    return lookup.flags


def record_flags(state: ServerState, uri: str, kernels: Iterable[str], flags: CompileFlags) -> None:
    """The kernel cards of `uri` name the flags they were compiled with (none when the compile
    added no flag to nvcc's defaults: the card says nothing then)."""
    line = "" if flags.empty else flags.describe()
    for kernel in kernels:
        state.update_kernel_facts(uri, kernel, compile_flags=line)
