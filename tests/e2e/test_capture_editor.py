"""End-to-end: captures in the editor (the real server over stdio). A capture of `./app` beside a
file (`.regrapht/captures/app/`, made from the hand-made capture directory) shows on the kernel's
card as "captured from `./app` (2 launches)", gives a CodeLens that optimizes against it, and a
capture argument that is not a capture is answered with the error naming the folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsp_harness import DATA, encoding_of, open_document, position_of, wait_for_publication
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from regrapht.capture.run import CaptureOptions, finish

HANDMADE = DATA / "capture" / "handmade"
BLUR = """template <typename T, int R>
__global__ void blur(const T *in, T *out, int w, int h, float s)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h) out[y * w + x] = in[y * w + x] * R;
}

void run(const float *in, float *out, int w, int h)
{
    blur<float, 3><<<dim3(1, h), 16>>>(in, out, w, h, 0.5f);
}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "blur.cu").write_text(BLUR)
    capture = tmp_path / ".regrapht" / "captures" / "app"
    shutil.copytree(HANDMADE, capture)
    finish(CaptureOptions(("./app",), capture, data=True, sources=tmp_path), 0, 0.0)
    return tmp_path


async def test_the_card_and_lens_of_a_captured_kernel(client, project: Path):
    uri = (project / "blur.cu").as_uri()
    open_document(client, uri, BLUR)
    await wait_for_publication(client, uri, version=1)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=position_of(BLUR, "blur(", encoding_of(client))))
    assert hover is not None
    card = hover.contents.value
    assert "**Captured launches**" in card and "captured from `./app` (2 launches)" in card
    assert "blur_float_3.regrapht.toml" in card
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    captured = [lens.command for lens in lenses if lens.command and lens.command.title.startswith("Optimize against")]
    assert [c.title for c in captured] == ["Optimize against capture (captured from './app' (2 launches))"]
    assert captured[0].command == "regrapht.optimizeKernel"
    argument = captured[0].arguments[0]
    assert argument["kernel"] == "blur" and Path(argument["capture"]) == project / ".regrapht" / "captures" / "app"
    with pytest.raises(JsonRpcException) as refused:
        await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="regrapht.optimizeKernel", arguments=[{**argument, "capture": str(project / "nowhere")}]))
    assert "not a capture directory" in str(refused.value)


async def test_a_kernel_without_captures_has_no_capture_lens(client, tmp_path: Path):
    (tmp_path / "blur.cu").write_text(BLUR)
    uri = (tmp_path / "blur.cu").as_uri()
    open_document(client, uri, BLUR)
    await wait_for_publication(client, uri, version=1)
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert not [lens for lens in lenses if lens.command and lens.command.title.startswith("Optimize against")]
