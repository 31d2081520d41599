"""End-to-end (stdio, no GPU needed): the regression warning's action. With a timing history in
the server's cache dir (what background validation records on a GPU; tests/gpu/test_lsp_gpu.py
covers the measured path), `regrapht.showFasterVersion` writes the fastest kept version of the
kernel's file and the client is asked to show it (window/showDocument); a kernel without a
history is a clear InvalidParams error, and the server keeps serving."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from lsp_harness import open_document, wait_for_publication
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from regrapht.validate.cache_dir import default_cache_dir
from regrapht.validate.timing_history import Measured, TimingHistory, text_digest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def measured(text: str, median: float, at: float) -> Measured:
    return Measured(text_digest(text), median, median * 0.98, median * 1.02, at, text)


async def test_show_faster_version_writes_and_shows_the_fastest_kept_version(client, tmp_path: Path) -> None:
    path = tmp_path / "saxpy.cu"
    shutil.copy(EXAMPLES / "saxpy.cu", path)
    text = path.read_text()
    faster_text = text.replace("y[i] * 1.0", "y[i]")
    history = TimingHistory(default_cache_dir(os.environ) / "timings")  # the server's own cache dir
    now = time.time()
    history.record(str(path), "saxpy", "Test GPU", measured(faster_text, 0.25, now - 600))
    history.record(str(path), "saxpy", "Test GPU", measured(text, 0.45, now))
    uri = path.as_uri()
    open_document(client, uri, text)
    await wait_for_publication(client, uri, version=1)
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="regrapht.showFasterVersion", arguments=[{"uri": uri, "kernel": "saxpy"}]))
    assert answer["shown"] is True and answer["gpu"] == "Test GPU" and answer["time_ms"] == 0.25
    assert Path(answer["path"]).read_text() == faster_text
    assert [p.uri for p in client.shown_documents] == [answer["uri"]]  # pytest-lsp records window/showDocument
    with pytest.raises(JsonRpcException, match="no measured version of other"):
        await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="regrapht.showFasterVersion", arguments=[{"uri": uri, "kernel": "other"}]))
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=4, character=18)))
    assert hover is not None  # still serving
