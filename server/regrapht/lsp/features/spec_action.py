""""Create benchmark spec for <kernel>": `regrapht.createSpec {uri, kernel}` writes
`<file>.regrapht.toml` beside the file through a WorkspaceEdit (CreateFile + insert).

The edit is sent only to a client that advertised `workspace.applyEdit`; otherwise, and when
the client answers the request with `null`, the command completes with `applied: false`, the
reason, and the spec's text (`spec`) for the client to show or save. The spec is inferred with
the file's project flags (typedefs in the project's headers); what it guessed is in `guessed`.

`spec_actions` gives the code actions (kind `source`: the action acts on the project, not on
the code under the cursor) that run the command; `register` adds them to the code-action
handler through `state.code_action_providers`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from regrapht.errors import InputError
from regrapht.lsp.converters import create_file_edit
from regrapht.lsp.features.common import (
    edit_capabilities,
    file_path,
    in_worker,
    kernel_argument,
    require_document,
)
from regrapht.lsp.state import Analysis, DocumentState, ServerState
from regrapht.text import Span

CREATE_SPEC_COMMAND = "regrapht.createSpec"


def spec_uri(uri: str) -> tuple[str, Path] | None:
    """Where the spec of the file at `uri` goes; None for documents that are not files."""
    from regrapht.spec.model import spec_path_for  # worker thread; the spec parser is not needed to start

    path = file_path(uri)
    if path is None:
        return None
    target = spec_path_for(path)
    target_uri = from_fs_path(str(target))
    return (target_uri, target) if target_uri else None


def spec_actions(state: ServerState, document: DocumentState, params: types.CodeActionParams) -> list[types.CodeAction]:
    """One `source` action per kernel at the requested range when the file has no spec yet."""
    return spec_actions_at(document, state.ensure_analysis(document), params.range.start.line)


def spec_actions_at(document: DocumentState, analysis: Analysis, line: int) -> list[types.CodeAction]:
    """`spec_actions` for a 0-based line of an analysed document."""
    located = spec_uri(document.uri)
    if located is None or located[1].exists() or analysis.model is None:
        return []
    actions = []
    for kernel in analysis.model.functions_overlapping(Span.of(line, 0, line, 1 << 30)):  # the whole line
        if kernel.kind != "global":
            continue
        actions.append(types.CodeAction(
            title=f"Create benchmark spec for {kernel.name}",
            kind=types.CodeActionKind.Source,
            command=types.Command(title=f"Create benchmark spec for {kernel.name}", command=CREATE_SPEC_COMMAND,
                                  arguments=[{"uri": document.uri, "kernel": kernel.name}]),
        ))
    return actions


def spec_edit(document: DocumentState, kernel: str, include_dirs: tuple[str, ...] = (),
              context: str | None = None) -> tuple[types.WorkspaceEdit, str]:
    """In a worker thread: inference parses the file (tree-sitter), loaded on first use, not at start."""
    from regrapht.spec.infer import infer_spec

    located = spec_uri(document.uri)
    if located is None:
        raise JsonRpcInvalidParams(f"not a file URI: {document.uri}")
    if located[1].exists():
        raise JsonRpcInvalidParams(f"{located[1].name} already exists")
    try:
        text = infer_spec(document.text, kernel, file=to_fs_path(document.uri) or document.uri,
                          include_dirs=include_dirs, context=context)
    except InputError as error:
        raise JsonRpcInvalidParams(str(error)) from error
    return create_file_edit(located[0], text), text


def _project(state: ServerState, document: DocumentState, open_files: list[tuple[Path, str]]
             ) -> tuple[tuple[str, ...], str | None]:
    """The -I dirs of the file's compile (the project's database and extraCompilerArgs) and, for a
    header, the text of a `.cu` that includes it (an open editor's first, else the database's),
    whose launches are read."""
    from regrapht.spec.infer_types import HEADER_SUFFIXES, including_source
    from regrapht.validate.compile_db import compile_setup, load_database

    path = file_path(document.uri)
    if path is None:
        return (), None
    settings = state.settings_for(document.uri)
    lookup = compile_setup(settings.compile_commands, settings.extra_compiler_args).lookup(path)
    context = None
    if path.suffix in HEADER_SUFFIXES:
        opened = including_source(path, [p for p, _ in open_files])
        if opened is not None:
            context = dict(open_files)[opened]
        elif lookup.database is not None:
            try:
                including = including_source(path, [e.file for e in load_database(lookup.database).entries])
            except InputError:
                including = None
            if including is not None:
                context = including.read_text(encoding="utf-8", errors="replace")
    return lookup.flags.include_dirs, context


def register(server: LanguageServer, state: ServerState) -> None:
    def provider(document: DocumentState, analysis: Analysis, span: Span, document_changes: bool) -> list[Any]:
        return spec_actions_at(document, analysis, span.start.line)

    state.code_action_providers.append(provider)

    @server.command(CREATE_SPEC_COMMAND)
    async def create_spec(*arguments: Any) -> dict[str, Any]:
        uri, kernel = kernel_argument(arguments)
        document = require_document(state, uri)
        open_files = [(p, d.text) for d in state.documents.values() if (p := file_path(d.uri)) is not None]
        include_dirs, context = await in_worker(server, _project, state, document, open_files)
        edit, text = await in_worker(server, spec_edit, document, kernel, include_dirs, context)
        if not edit_capabilities(server).apply_edit:
            return {"applied": False, "reason": "the client does not apply workspace edits "
                    "(workspace.applyEdit); the spec is in 'spec'", "spec": text}
        result = await server.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(
            edit=edit, label=f"Create benchmark spec for {kernel}"))
        if result is None:
            return {"applied": False, "reason": "the client answered the edit with null", "spec": text}
        return {"applied": bool(result.applied), "reason": result.failure_reason or "", "spec": text}
