"""The optimize feature's LSP side: command arguments, the kernel an action is about, the
confirmed WorkspaceEdit, and the code actions (Optimize, and Apply for a kept result).

The logic underneath is tested in tests/unit/search (test_result_edits.py, test_optimize_jobs.py).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from lsprotocol import types
from tests.unit.app.optimize_fixtures import BEFORE, KERNEL_TEXT, SOURCE, best_version, optimized_source

from regrapht.app.jobs import Kept, Registry
from regrapht.app.messages import edit_title
from regrapht.app.result_edits import build_edit
from regrapht.cards import kernel_at
from regrapht.cuda.parse import parse_source
from regrapht.lsp.converters import confirmed_workspace_edit
from regrapht.lsp.features import optimize as feature
from regrapht.lsp.features.common import kernel_or_position_argument
from regrapht.lsp.state import Analysis, DocumentState
from regrapht.spec.launch import LaunchConfig
from regrapht.text import Position, Span


def analysis_of(text: str, version: int = 1) -> Analysis:
    return Analysis(version, 0, tuple(text.split("\n")), parse_source(text), ())


def test_kernel_at_name_body_and_launch_site():
    model = analysis_of(SOURCE).model
    lines = SOURCE.split("\n")
    assert kernel_at(model, Position(2, lines[2].index("saxpy") + 2)) == "saxpy"
    assert kernel_at(model, Position(4, 8)) == "saxpy"  # in the body
    launch_line = next(i for i, line in enumerate(lines) if "<<<" in line)
    assert kernel_at(model, Position(launch_line, lines[launch_line].index("<<<") + 4)) == "saxpy"
    assert kernel_at(model, Position(9, 4)) is None  # host code
    assert kernel_at(None, Position(4, 8)) is None  # not analysed


def test_command_target_shapes():
    assert kernel_or_position_argument([{"uri": "file:///a.cu", "kernel": "k"}]) == ("file:///a.cu", "k", None)
    uri, kernel, position = kernel_or_position_argument([{"uri": "file:///a.cu", "position": {"line": 3, "character": 1}}])
    assert kernel is None and position == types.Position(line=3, character=1)
    with pytest.raises(Exception, match="expected"):
        kernel_or_position_argument([{"uri": "file:///a.cu"}])


def test_confirmed_workspace_edit_needs_confirmation_and_carries_title():
    after = LaunchConfig(("(n + 127) / 128",), ("128",), "0")
    best = best_version(optimized_source(), after)
    built = build_edit(SOURCE, SOURCE, "saxpy", best, BEFORE)
    title = edit_title("saxpy", best.speedup, "NVIDIA H200")
    edit = confirmed_workspace_edit("file:///s.cu", 7, built.edits, SOURCE.split("\n"), "utf-16", title,
                                    "restrict -> block_size", document_changes=True, annotations=True)
    assert edit.document_changes is not None
    (document_edit,) = edit.document_changes
    assert isinstance(document_edit, types.TextDocumentEdit)
    assert document_edit.text_document.version == 7
    assert all(isinstance(e, types.AnnotatedTextEdit) for e in document_edit.edits)
    annotation = edit.change_annotations[document_edit.edits[0].annotation_id]
    assert annotation.needs_confirmation is True and annotation.label == title
    plain = confirmed_workspace_edit("file:///s.cu", 7, built.edits, SOURCE.split("\n"), "utf-16", title, "",
                                     document_changes=False, annotations=False)
    assert plain.changes is not None and len(plain.changes["file:///s.cu"]) == 2


def test_code_action_offers_optimize_and_kept_result():
    registry = Registry()
    document = DocumentState("file:///s.cu", SOURCE, 1, "cuda", 1)
    analysis = analysis_of(SOURCE)
    actions = feature.provide_actions(registry, document, analysis, Span.of(4, 4, 4, 4), True, "utf-16", True)
    assert [a.title for a in actions] == ["Optimize saxpy with ReGraphT"]
    assert actions[0].kind == types.CodeActionKind.RefactorRewrite
    assert actions[0].command.arguments == [{"uri": "file:///s.cu", "kernel": "saxpy"}]
    result = SimpleNamespace(best=best_version(optimized_source(), BEFORE), gpu="NVIDIA H200")
    registry.keep(("file:///s.cu", "saxpy"), Kept(SOURCE, KERNEL_TEXT, result, BEFORE))  # type: ignore[arg-type]
    actions = feature.provide_actions(registry, document, analysis, Span.of(4, 4, 4, 4), True, "utf-16", True)
    assert actions[1].title == "Apply 3.1x faster saxpy on NVIDIA H200, verified, restrict -> block_size"
    assert actions[1].edit.change_annotations  # needs confirmation
    assert feature.provide_actions(registry, document, analysis, Span.of(9, 0, 9, 0), True, "utf-16", True) == []


def test_code_action_offers_cancel_while_running():
    registry = Registry()
    document = DocumentState("file:///s.cu", SOURCE, 1, "cuda", 1)
    registry.runs[("file:///s.cu", "saxpy")] = SimpleNamespace()  # type: ignore[assignment]
    (action,) = feature.provide_actions(registry, document, analysis_of(SOURCE), Span.of(4, 4, 4, 4), True,
                                        "utf-16", True)
    assert action.title == "Cancel optimizing saxpy" and action.command.command == feature.CANCEL_COMMAND
