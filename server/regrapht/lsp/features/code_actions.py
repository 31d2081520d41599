"""Quick fixes: a `quickfix` code action per `Fix` of a finding in the requested range, then
"Disable Rxxx for this line / for this file" (suppression comments, rules/suppress.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from regrapht.lsp.converters import (
    finding_to_diagnostic,
    fix_to_code_action,
    from_lsp_range,
    insert_line_action,
)
from regrapht.lsp.features.common import edit_capabilities, in_worker, require_document
from regrapht.lsp.state import Analysis, DocumentState, ServerState
from regrapht.rules.suppress import suppression_comment
from regrapht.rules.types import Finding
from regrapht.text import Span


def actions_for(
    state: ServerState,
    document: DocumentState,
    params: types.CodeActionParams,
    document_changes: bool,
) -> list[types.CodeAction]:
    only = params.context.only
    wants_quickfix = _wanted(types.CodeActionKind.QuickFix, only)
    if not wants_quickfix and not state.code_action_providers:
        return []
    analysis = state.ensure_analysis(document)
    requested = from_lsp_range(params.range, analysis.lines, state.encoding)
    actions = quick_fixes(state, document, analysis, params, requested, document_changes) if wants_quickfix else []
    for provider in state.code_action_providers:
        actions += [a for a in provider(document, analysis, requested, document_changes) if _wanted(a.kind, only)]
    return actions


def _wanted(kind: Any, only: Sequence[Any] | None) -> bool:
    """Is an action of `kind` asked for by the request's `only` kinds (prefixes; empty = all)?"""
    value = getattr(kind, "value", kind) or ""
    return not only or any(value.startswith(getattr(k, "value", k)) for k in only)


def quick_fixes(
    state: ServerState,
    document: DocumentState,
    analysis: Analysis,
    params: types.CodeActionParams,
    requested: Span,
    document_changes: bool,
) -> list[types.CodeAction]:
    sent = {
        (str(d.code), d.range.start.line, d.range.start.character): d
        for d in params.context.diagnostics
        if d.source == "regrapht"
    }
    actions = []
    suppress: list[types.CodeAction] = []
    for finding in state.findings_overlapping(document.uri, analysis, requested):
        if finding.rule.startswith("R"):  # the rules' findings (not the profiler's or validation's)
            probe = finding_to_diagnostic(finding, analysis.lines, state.encoding, state.doc_link, document.uri,
                                          state.supports_related_information)
            probe = sent.get((finding.rule, probe.range.start.line, probe.range.start.character), probe)
            suppress += suppression_actions(document.uri, analysis, finding, probe, document_changes)
        if not finding.fixes:
            continue
        diagnostic = finding_to_diagnostic(finding, analysis.lines, state.encoding, state.doc_link, document.uri,
                                           state.supports_related_information)
        key = (finding.rule, diagnostic.range.start.line, diagnostic.range.start.character)
        diagnostic = sent.get(key, diagnostic)
        for index, fix in enumerate(finding.fixes):
            actions.append(
                fix_to_code_action(
                    document.uri, analysis.version, fix, diagnostic, analysis.lines, state.encoding,
                    document_changes, preferred=index == 0,
                )
            )
    return actions + list({a.title: a for a in suppress}.values())  # after the fixes; each once


def suppression_actions(uri: str, analysis: Analysis, finding: Finding, diagnostic: types.Diagnostic,
                        document_changes: bool) -> list[types.CodeAction]:
    """"Disable R007 for this line" (a comment above the finding's line, indented like it) and
    "Disable R007 for this file" (a comment on the first line): rules/suppress.py reads them."""
    line = finding.span.start.line
    text = analysis.lines[line] if line < len(analysis.lines) else ""
    indent = text[: len(text) - len(text.lstrip())]
    return [
        insert_line_action(uri, analysis.version, f"Disable {finding.rule} for this line", line,
                           indent + suppression_comment(finding.rule, "next-line"), diagnostic, document_changes),
        insert_line_action(uri, analysis.version, f"Disable {finding.rule} for this file", 0,
                           suppression_comment(finding.rule, "file"), diagnostic, document_changes),
    ]


def register(server: LanguageServer, state: ServerState) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorRewrite,
                               types.CodeActionKind.Source],
            resolve_provider=False,
        ),
    )
    async def code_action(params: types.CodeActionParams) -> list[types.CodeAction]:
        """Async; analysis and edit construction in a worker thread."""
        document = require_document(state, params.text_document.uri)
        document_changes = edit_capabilities(server).document_changes
        return await in_worker(server, actions_for, state, document, params, document_changes)
