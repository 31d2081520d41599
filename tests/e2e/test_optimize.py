"""End-to-end: Optimize kernel over stdio on a machine without a CUDA device (real nvcc).

The code action is offered on a kernel; running `regrapht.optimizeKernel` reports cancellable
work-done progress (begin/report/end) and explains that nothing can be verified here, and no
workspace/applyEdit is sent. The applyEdit path is covered by unit tests and the GPU suite.
"""

from __future__ import annotations

import shutil
import time

import pytest
from lsp_harness import (
    DATA,
    open_document,
    raw_code_actions,
    wait_for_publication,
    wait_until,
)
from lsprotocol import types

SAXPY = (DATA / "optimize" / "saxpy.cu").read_text()

pytestmark = [
    pytest.mark.nvcc,
    pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc on PATH"),
]


async def test_optimize_action_and_no_gpu_run(client, tmp_path):
    path = tmp_path / "saxpy.cu"
    path.write_text(SAXPY)
    uri = path.as_uri()
    applied: list[object] = []

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        applied.append(params)
        return types.ApplyWorkspaceEditResult(applied=False, failure_reason="test client")

    open_document(client, uri, SAXPY)
    await wait_for_publication(client, uri, version=1)
    actions = await raw_code_actions(client, uri, SAXPY, "blockIdx.x", "refactor")
    assert [a["title"] for a in actions] == ["Optimize saxpy with ReGraphT"]
    (action,) = actions
    assert action["kind"] == "refactor.rewrite"
    command = types.Command(**action["command"])
    assert command.command == "regrapht.optimizeKernel"

    started = time.monotonic()
    answer = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command.command, arguments=command.arguments)
    )
    assert answer["started"] is True
    assert time.monotonic() - started < 5  # returns at once; the search runs in the background
    token = answer["token"]

    def ended():
        reports = client.progress_reports.get(token, [])
        return reports if reports and isinstance(reports[-1], types.WorkDoneProgressEnd) else None

    reports = await wait_until(client, ended, 180, "the search's progress to end")
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].cancellable
    assert "saxpy" in reports[0].title
    middle = [r.message for r in reports[1:-1] if isinstance(r, types.WorkDoneProgressReport)]
    assert any("inferred" in (m or "") for m in middle), middle
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert "cannot verify" in (reports[-1].message or "")

    explained = await wait_until(client, lambda: [m for m in client.messages if "cannot verify" in m.message], 5,
                                 "the popup saying it cannot verify")
    assert explained and "saxpy" in explained[0].message
    states = [s["state"] for s in client.statuses]
    assert "searching" in states and states[-1] == "ready"
    assert applied == []

    # the server keeps serving; a second run may start once the first is done
    again = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="regrapht.cancelOptimize", arguments=[{"uri": uri, "kernel": "saxpy"}])
    )
    assert again == {"cancelled": False}
