"""End-to-end (stdio, no GPU): `regrapht.createSpec` on a kernel of a CMake project whose
parameter types are typedefs in a project header (found through the compile database's include
dir). The spec comes back with the resolved types and proven counts/roles; the workspace edit is
sent (the client advertises applyEdit) and the command completes when the client answers null."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsp_harness import open_document, wait_for_publication
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

PROJECT = Path(__file__).resolve().parents[1] / "data" / "cmake_project"
TYPED = """#include "proj/types.cuh"
#include "proj/scale.cuh"

__global__ void typed(real_t* out, const real_t* in, int n, int* unused = nullptr) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = proj_scale(in[i]);
}

void launch_typed(real_t* out, const real_t* in, int n) {
    typed<<<(n + 255) / 256, 256>>>(out, in, n);
}
"""


async def test_create_spec_in_a_cmake_project_resolves_header_typedefs(client, tmp_path):
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    (project / "include" / "proj" / "types.cuh").write_text("#pragma once\ntypedef float real_t;\n")
    path = project / "src" / "typed.cu"
    path.write_text(TYPED)
    uri = path.as_uri()
    edits: list[types.ApplyWorkspaceEditParams] = []

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> None:
        edits.append(params)
        return None  # a client that answers null: the command must still complete

    open_document(client, uri, TYPED)
    await wait_for_publication(client, uri, version=1)
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="regrapht.createSpec", arguments=[{"uri": uri, "kernel": "typed"}]))
    assert answer["applied"] is False and "null" in answer["reason"]
    assert len(edits) == 1
    spec = answer["spec"]
    assert 'type = "float*"' in spec and 'type = "const float*"' in spec and 'type = "int*"' in spec
    assert "\nguessed = " not in spec  # counts and roles proven from the accesses at the launch
    assert 'role = "out"' in spec


async def test_did_change_of_a_document_that_is_not_open_is_ignored(client, tmp_path):
    uri = (tmp_path / "never_opened.cu").as_uri()
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text="int x;")]))
    # the server keeps serving (a request about the document is answered: it is not open) and
    # sends the client no error message about the change
    with pytest.raises(JsonRpcInvalidParams, match="not open"):
        await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="regrapht.showKernelReport", arguments=[{"uri": uri, "kernel": "k"}]))
    assert not [m for m in client.log_messages if "KeyError" in m.message]


GUESSED = """__global__ void lonely(float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 1.0f; }
"""


async def test_optimize_asks_before_timing_on_guesses(client, tmp_path):
    """No spec and no launch: the inferred spec's grid and block are guesses; the editor's
    Optimize asks first (window/showMessageRequest) and starts nothing when declined, as
    `regrapht optimize` refuses without --accept-guesses."""
    path = tmp_path / "lonely.cu"
    path.write_text(GUESSED)
    uri = path.as_uri()
    asked: list[types.ShowMessageRequestParams] = []

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    def show_message_request(params: types.ShowMessageRequestParams) -> types.MessageActionItem:
        asked.append(params)
        return types.MessageActionItem(title="Cancel")

    open_document(client, uri, GUESSED)
    await wait_for_publication(client, uri, version=1)
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="regrapht.optimizeKernel", arguments=[{"uri": uri, "kernel": "lonely"}]))
    assert answer["started"] is False and "guesses" in answer["reason"]
    (question,) = asked
    assert "grid" in question.message and "block" in question.message
    assert [a.title for a in question.actions or []] == ["Optimize with the guesses", "Cancel"]


async def test_create_spec_for_a_header_kernel_reads_the_launch_of_an_open_cu(client, tmp_path):
    header = tmp_path / "ops.cuh"
    header_text = ("#pragma once\n__global__ void twice(float* y, const float* x, int n) {\n"
                   "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2.0f * x[i]; }\n")
    header.write_text(header_text)
    main = tmp_path / "main.cu"
    main_text = '#include "ops.cuh"\nvoid run(float* y, const float* x, int n) { twice<<<(n + 63) / 64, 64>>>(y, x, n); }\n'
    main.write_text(main_text)

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        return types.ApplyWorkspaceEditResult(applied=False, failure_reason="test client")

    open_document(client, main.as_uri(), main_text)
    open_document(client, header.as_uri(), header_text)
    await wait_for_publication(client, header.as_uri(), version=1)
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="regrapht.createSpec", arguments=[{"uri": header.as_uri(), "kernel": "twice"}]))
    spec = answer["spec"]
    assert 'grid = ["(n + 63) / 64"]' in spec and "block = [64]" in spec and "\nguessed = " not in spec
