"""The one place where engine types become lsprotocol types (and LSP positions become engine ones).

Engines speak code-point columns (`regrapht.text`). On the wire the column unit is the
negotiated position encoding: the server asks for UTF-32 when the client offers it (then columns
pass through unchanged) and otherwise uses UTF-16, the LSP default, converting per line.
UTF-8 is never negotiated (see `negotiate_encoding`).

Every function here is pure: it gets the document's lines (a sequence of `str`, with or
without line endings) and the encoding as arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from regrapht.cards import plain_text
from regrapht.rules.types import Finding, Fix
from regrapht.text import Position, Span, TextEdit

if TYPE_CHECKING:
    from regrapht.cuda.model import Function

UTF16 = "utf-16"
UTF32 = "utf-32"


def negotiate_encoding(offered: Sequence[str] | None) -> str:
    """UTF-32 if the client offers it (columns are code points, no conversion), else UTF-16."""
    if offered and UTF32 in [str(e) for e in offered]:
        return UTF32
    return UTF16


# ---------------------------------------------------------------------------------------------
# Columns


def _line(lines: Sequence[str], index: int) -> str:
    if index < 0 or index >= len(lines):
        return ""
    line = lines[index]
    if line.endswith("\n"):
        line = line[:-2] if line.endswith("\r\n") else line[:-1]
    elif line.endswith("\r"):
        line = line[:-1]
    return line


def utf16_length(text: str) -> int:
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def code_points_to_utf16(line: str, character: int) -> int:
    return utf16_length(line[: max(character, 0)])


def utf16_to_code_points(line: str, units: int) -> int:
    """The code-point column of a UTF-16 column; inside a surrogate pair rounds up; clamps."""
    if units <= 0:
        return 0
    if line.isascii():
        return min(units, len(line))
    count = 0
    for index, char in enumerate(line):
        if count >= units:
            return index
        count += 2 if ord(char) > 0xFFFF else 1
    return len(line)


def to_lsp_position(position: Position, lines: Sequence[str], encoding: str) -> types.Position:
    line = max(position.line, 0)
    character = max(position.character, 0)
    if encoding != UTF32:
        character = code_points_to_utf16(_line(lines, line), character)
    return types.Position(line=line, character=character)


def from_lsp_position(position: types.Position, lines: Sequence[str], encoding: str) -> Position:
    """Engine position of a client position; clamped to the document (clients send stale ones)."""
    if not lines:
        return Position(0, 0)
    line = min(max(position.line, 0), len(lines) - 1)
    if position.line >= len(lines):
        return Position(line, len(_line(lines, line)))
    text = _line(lines, line)
    if encoding == UTF32:
        return Position(line, min(max(position.character, 0), len(text)))
    return Position(line, utf16_to_code_points(text, position.character))


def to_lsp_range(span: Span, lines: Sequence[str], encoding: str) -> types.Range:
    return types.Range(
        start=to_lsp_position(span.start, lines, encoding),
        end=to_lsp_position(span.end, lines, encoding),
    )


def from_lsp_range(range_: types.Range, lines: Sequence[str], encoding: str) -> Span:
    return Span(
        from_lsp_position(range_.start, lines, encoding),
        from_lsp_position(range_.end, lines, encoding),
    )


# ---------------------------------------------------------------------------------------------
# Engine types -> LSP

_SEVERITIES = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


def finding_to_diagnostic(
    finding: Finding, lines: Sequence[str], encoding: str, doc_link: Callable[[str], str], uri: str = "",
    related_information: bool = True,
) -> types.Diagnostic:
    """A diagnostic whose `data` says what code actions need to find the finding again, and the
    other locations of its cause (`finding.related`, in document `uri`) as related information;
    for a client without related information (`related_information` False) the message names
    their lines instead. (The document version is the publication's, not each diagnostic's: a
    diagnostic of an unchanged kernel is reused as it is by the next publication.)"""
    message = plain_text(finding.message)
    related: list[types.DiagnosticRelatedInformation] = []
    if finding.related and uri and related_information:
        related = [types.DiagnosticRelatedInformation(types.Location(uri, to_lsp_range(r.span, lines, encoding)),
                                                      plain_text(r.message)) for r in finding.related]
    elif finding.related:
        message = f"{message} {related_lines(finding)}"
    return types.Diagnostic(
        related_information=related or None,
        range=to_lsp_range(finding.span, lines, encoding),
        message=message,
        severity=_SEVERITIES.get(finding.severity, types.DiagnosticSeverity.Warning),
        code=finding.rule,
        code_description=types.CodeDescription(href=doc_link(finding.doc)) if finding.doc else None,
        source="regrapht",
        data={
            "rule": finding.rule,
            "kernel": finding.kernel,
            "technique": finding.technique,
            "fixes": [fix.title for fix in finding.fixes],
        },
    )


def related_lines(finding: Finding) -> str:
    """"Also at line 8." / "Also at lines 8, 9 and 10." (1-based, each line once)."""
    numbers = list(dict.fromkeys(r.span.start.line + 1 for r in finding.related))
    if len(numbers) == 1:
        return f"Also at line {numbers[0]}."
    return "Also at lines " + ", ".join(str(n) for n in numbers[:-1]) + f" and {numbers[-1]}."


def markdown_hover(markdown: str, span: Span, lines: Sequence[str], encoding: str, plain: bool) -> types.Hover:
    kind = types.MarkupKind.PlainText if plain else types.MarkupKind.Markdown
    return types.Hover(
        contents=types.MarkupContent(kind=kind, value=markdown),
        range=to_lsp_range(span, lines, encoding),
    )


_FUNCTION_DETAIL = {"global": "__global__", "device": "__device__", "host": "host"}


def _symbol_range(span: Span, inner: Span | None, lines: Sequence[str], encoding: str) -> tuple[types.Range, types.Range]:
    """(range, selectionRange) with selectionRange inside range, as clients require."""
    outer = to_lsp_range(span, lines, encoding)
    selection = to_lsp_range(inner, lines, encoding) if inner is not None else outer
    start = (selection.start.line, selection.start.character)
    end = (selection.end.line, selection.end.character)
    if start < (outer.start.line, outer.start.character) or end > (outer.end.line, outer.end.character):
        selection = outer
    return outer, selection


def function_symbols(functions: Sequence[Function], lines: Sequence[str], encoding: str) -> list[types.DocumentSymbol]:
    """Kernels, __device__ and host functions; parameters and launch sites as children."""
    symbols = []
    for function in functions:
        children = []
        for parameter in function.parameters:
            outer, selection = _symbol_range(parameter.span, parameter.name_span, lines, encoding)
            children.append(
                types.DocumentSymbol(
                    name=parameter.name or "(unnamed)",
                    detail=parameter.type_text,
                    kind=types.SymbolKind.Variable,
                    range=outer,
                    selection_range=selection,
                )
            )
        for site in function.launches:
            outer, selection = _symbol_range(site.span, None, lines, encoding)
            children.append(
                types.DocumentSymbol(
                    name=f"{site.kernel}<<<{' '.join(site.grid.text.split())}, {' '.join(site.block.text.split())}>>>",
                    detail="launch",
                    kind=types.SymbolKind.Event,
                    range=outer,
                    selection_range=selection,
                )
            )
        outer, selection = _symbol_range(function.span, function.name_span, lines, encoding)
        symbols.append(
            types.DocumentSymbol(
                name=function.name,
                detail=_FUNCTION_DETAIL.get(function.kind, function.kind),
                kind=types.SymbolKind.Function,
                range=outer,
                selection_range=selection,
                children=children,
            )
        )
    return symbols


def flat_symbols(uri: str, symbols: Sequence[types.DocumentSymbol]) -> list[types.SymbolInformation]:
    """SymbolInformation for clients without hierarchical document symbols."""
    flat = []
    for symbol in symbols:
        flat.append(
            types.SymbolInformation(
                name=symbol.name, kind=symbol.kind, location=types.Location(uri=uri, range=symbol.range)
            )
        )
        for child in symbol.children or ():
            flat.append(
                types.SymbolInformation(
                    name=child.name,
                    kind=child.kind,
                    location=types.Location(uri=uri, range=child.range),
                    container_name=symbol.name,
                )
            )
    return flat


def kernel_lenses(
    uri: str, kernel: Function, title: str, lines: Sequence[str], encoding: str,
    report_command: str, optimize_command: str,
) -> list[types.CodeLens]:
    line = to_lsp_range(kernel.name_span, lines, encoding)
    argument = {"uri": uri, "kernel": kernel.name}
    return [
        types.CodeLens(range=line, command=types.Command(title=title, command=report_command, arguments=[argument])),
        types.CodeLens(
            range=line, command=types.Command(title="Optimize", command=optimize_command, arguments=[argument])
        ),
    ]


def fix_to_code_action(
    uri: str,
    version: int,
    fix: Fix,
    diagnostic: types.Diagnostic,
    lines: Sequence[str],
    encoding: str,
    document_changes: bool,
    preferred: bool,
) -> types.CodeAction:
    edits = [types.TextEdit(range=to_lsp_range(e.span, lines, encoding), new_text=e.new_text) for e in fix.edits]
    return types.CodeAction(
        title=plain_text(fix.title),
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=_document_edit(uri, version, edits, document_changes),
        is_preferred=preferred,
    )


def insert_line_action(
    uri: str, version: int, title: str, line: int, text: str, diagnostic: types.Diagnostic, document_changes: bool,
) -> types.CodeAction:
    """A quick fix that inserts the whole line `text` before line `line` (column 0 is the same
    in every position encoding): the suppression comments' "Disable R007 for this line"."""
    start = types.Position(line=line, character=0)
    edit = types.TextEdit(range=types.Range(start, start), new_text=text + "\n")
    return types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                            edit=_document_edit(uri, version, [edit], document_changes), is_preferred=False)


def _document_edit(uri: str, version: int, edits: list[types.TextEdit], document_changes: bool) -> types.WorkspaceEdit:
    """`edits` to one document: versioned `documentChanges` when the client supports them, else `changes`."""
    if not document_changes:
        return types.WorkspaceEdit(changes={uri: edits})
    identifier = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
    return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=identifier, edits=edits)])


def refactor_command_action(title: str, command: str, argument: dict[str, Any]) -> types.CodeAction:
    """A `refactor.rewrite` code action that runs `command` with the one `argument`."""
    return types.CodeAction(
        title=title, kind=types.CodeActionKind.RefactorRewrite,
        command=types.Command(title=title, command=command, arguments=[argument]),
    )


def refactor_edit_action(title: str, edit: types.WorkspaceEdit) -> types.CodeAction:
    """A `refactor.rewrite` code action that applies `edit`."""
    return types.CodeAction(title=title, kind=types.CodeActionKind.RefactorRewrite, edit=edit)


def create_file_edit(uri: str, text: str) -> types.WorkspaceEdit:
    """A WorkspaceEdit that creates `uri` (failing if it exists) and inserts `text` into it."""
    return types.WorkspaceEdit(document_changes=[
        types.CreateFile(uri=uri, options=types.CreateFileOptions(overwrite=False, ignore_if_exists=False)),
        types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None),
            edits=[types.TextEdit(range=types.Range(types.Position(0, 0), types.Position(0, 0)), new_text=text)],
        ),
    ])


def confirmed_workspace_edit(
    uri: str,
    version: int,
    edits: Sequence[TextEdit],
    lines: Sequence[str],
    encoding: str,
    label: str,
    description: str,
    *,
    document_changes: bool,
    annotations: bool,
    annotation_id: str = "regrapht.optimize",
) -> types.WorkspaceEdit:
    """A versioned edit the client asks the user to confirm (`needsConfirmation`) when it can.

    Falls back to a versioned edit without annotations, then to plain `changes`, for clients
    without change-annotation or documentChanges support.
    """
    ranges = [(to_lsp_range(e.span, lines, encoding), e.new_text) for e in edits]
    if not (document_changes and annotations):
        plain = [types.TextEdit(range=r, new_text=t) for r, t in ranges]
        return _document_edit(uri, version, plain, document_changes)
    identifier = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
    annotated = [types.AnnotatedTextEdit(range=r, new_text=t, annotation_id=annotation_id) for r, t in ranges]
    return types.WorkspaceEdit(
        document_changes=[types.TextDocumentEdit(text_document=identifier, edits=list(annotated))],
        change_annotations={
            annotation_id: types.ChangeAnnotation(label=label, needs_confirmation=True, description=description)
        },
    )
