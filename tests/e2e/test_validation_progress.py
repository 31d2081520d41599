"""End-to-end (stdio, real nvcc, no GPU): the "Create benchmark spec" source action is offered
for a kernel without a spec; `regrapht.validateKernel` reports cancellable work-done progress,
publishes compile errors as diagnostics, fills resources, and says plainly that nothing was
timed because there is no CUDA device."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsp_harness import (
    open_document,
    raw_code_actions,
    wait_for_publication,
    wait_until,
)
from lsprotocol import types

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SAXPY = (EXAMPLES / "saxpy.cu").read_text()

pytestmark = [
    pytest.mark.nvcc,
    pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc on PATH"),
]


async def test_create_spec_action_is_offered_without_a_spec(client, tmp_path):
    path = tmp_path / "saxpy.cu"
    path.write_text(SAXPY)
    uri = path.as_uri()
    open_document(client, uri, SAXPY)
    await wait_for_publication(client, uri, version=1)
    actions = await raw_code_actions(client, uri, SAXPY, "blockIdx.x", "source")
    assert [a["title"] for a in actions] == ["Create benchmark spec for saxpy"]
    assert actions[0]["kind"] == "source"
    assert actions[0]["command"]["command"] == "regrapht.createSpec"
    kinds = client.init_result.capabilities.code_action_provider.code_action_kinds
    assert types.CodeActionKind.Source in kinds


async def test_validate_kernel_progress_and_no_device(client, tmp_path):
    path = tmp_path / "saxpy.cu"
    path.write_text(SAXPY)
    shutil.copy(EXAMPLES / "saxpy.regrapht.toml", tmp_path / "saxpy.regrapht.toml")
    uri = path.as_uri()
    open_document(client, uri, SAXPY)
    await wait_for_publication(client, uri, version=1)
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="regrapht.validateKernel", arguments=[{"uri": uri, "kernel": "saxpy"}]), )
    assert answer.get("error") is None, answer
    (report,) = answer["kernels"]
    assert report["resources"]["registers"] > 0 and report["time_ms"] is None
    assert "no CUDA device" in report["reason"]
    assert "not timed: no CUDA device" in answer["summary"] and answer["cancelled"] is False
    reports = client.progress_reports[answer["token"]]
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].cancellable
    assert "saxpy.cu" in reports[0].title
    steps = [r.message or "" for r in reports[1:-1] if isinstance(r, types.WorkDoneProgressReport)]
    assert any("compiling" in s for s in steps) and any("checking saxpy" in s for s in steps), steps
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert "no CUDA device" in (reports[-1].message or "")

    broken = SAXPY.replace("y[i] = a * x[i]", "y[i] = zz * x[i]")
    path.write_text(broken)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=broken)]))
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="regrapht.validateKernel", arguments=[{"uri": uri, "kernel": "saxpy"}]))
    assert answer["summary"].startswith("does not compile") and "zz" in answer["summary"]
    assert isinstance(client.progress_reports[answer["token"]][-1], types.WorkDoneProgressEnd)
    nvcc_errors = await wait_until(  # the publisher refreshes asynchronously
        client, lambda: [d for p in client.published if p.uri == uri for d in p.diagnostics if "zz" in d.message],
        5, "nvcc's error in the diagnostics")
    assert nvcc_errors and nvcc_errors[0].range.start.line == SAXPY.splitlines().index(
        next(line for line in SAXPY.splitlines() if "y[i] = a * x[i]" in line))


async def test_untitled_document_gets_no_spec_action_and_no_validation(client):
    uri = "untitled:Untitled-1"
    open_document(client, uri, SAXPY)
    await wait_for_publication(client, uri, version=1)
    actions = await raw_code_actions(client, uri, SAXPY, "blockIdx.x", "source")
    assert actions == []  # nowhere to write a spec beside an unsaved buffer
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="regrapht.validateKernel", arguments=[{"uri": uri, "kernel": "saxpy"}]))
    assert answer["error"] == "untitled:Untitled-1 is not a file: save it, then create its benchmark spec"
