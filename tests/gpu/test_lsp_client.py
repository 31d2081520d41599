"""The raw LSP client of the GPU tests (lsp_client.py) against the real server, on any machine.

Not marked gpu: it proves the helper here (no GPU) and on the GPU host before the GPU tests use
it. Plain pytest, no pytest-lsp or pytest-asyncio.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsp_client import LspClient, apply_text_edits, published, status

SOURCE = """__global__ void scale(int n, float *x)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * 2.0;
}
"""


def test_client_opens_a_file_gets_diagnostics_hover_and_settings(tmp_path: Path) -> None:
    path = tmp_path / "scale.cu"
    path.write_text(SOURCE)
    uri = path.as_uri()

    async def scenario() -> tuple[dict[str, Any], Any, list[Any], int | None]:
        async with LspClient.spawn(cwd=tmp_path, settings={"debounceMs": 0}) as client:
            result = await client.initialize(root_uri=tmp_path.as_uri())
            assert "capabilities" in result
            await client.wait_for(status("ready"), 30)
            client.open(uri, SOURCE)
            diagnostics = await client.wait_for(published(uri, 1), 30)
            hover = await client.hover(uri, 0, len("__global__ void "))
            configuration = [m for m in client.received if m.message.get("method") == "workspace/configuration"]
            process = client.process
        return diagnostics, hover, configuration, process.returncode

    diagnostics, hover, configuration, returncode = asyncio.run(scenario())
    codes = {d["code"] for d in diagnostics["params"]["diagnostics"]}
    assert codes, diagnostics  # the double literal in a float kernel is reported
    assert "scale" in hover["contents"]["value"]
    assert configuration, "the server pulled settings (answered by the client)"
    assert returncode == 0  # shutdown + exit on leaving the context


def test_apply_text_edits_back_to_front_in_utf16() -> None:
    text = "a😀b\nline two\n"
    edits = [
        {"range": {"start": {"line": 0, "character": 3}, "end": {"line": 0, "character": 4}}, "newText": "B"},
        {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 4}}, "newText": "LINE"},
    ]
    assert apply_text_edits(text, edits) == "a😀B\nLINE two\n"
