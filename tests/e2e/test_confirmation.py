"""End-to-end: compiler confirmation over stdio with the real nvcc (marker `nvcc`): after the
rules' diagnostics settle, the server compiles the text to PTX in the background and republishes
R007 confirmed from the f64 instructions ("Confirmed by nvcc: ... f64 instructions in gelu") and
the one nvcc narrows to float (`y * 2.0`) left a hint that says so ("nvcc shows: no f64
instruction ... (narrowed to float)"); hovers keep being answered meanwhile."""

from __future__ import annotations

import shutil

import pytest
from lsp_harness import open_document, position_of, wait_for_publication, wait_until
from lsprotocol import types

pytestmark = [pytest.mark.nvcc, pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")]

URI = "file:///work/confirm/kernels.cu"
TEXT = """__global__ void gelu(const float *__restrict__ x, float *__restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = 0.5 * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
    }
}

__global__ void halve(float *__restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = y[i] * 0.1;
    }
}

__global__ void twice(float *__restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = y[i] * 2.0;
    }
}
"""


async def _publication_with(client, text: str, timeout: float = 180.0):
    def mentioning():
        return next((params for params in reversed(client.published)
                     if params.uri == URI and any(text in d.message for d in params.diagnostics)), None)

    return await wait_until(client, mentioning, timeout, f"a publication mentioning {text!r}")


async def test_nvcc_confirms_double_precision_in_the_background(client):
    client.set_configuration({"debounceMs": 10, "compilerConfirmation": True}, section="regrapht")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    open_document(client, URI, TEXT)
    first = await wait_for_publication(client, URI, version=1)
    r007 = [d for d in first.diagnostics if d.code == "R007"]
    assert r007 and not any("nvcc" in d.message for d in r007)
    # Hovers are answered while nvcc runs (the compile is off the event loop).
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=URI),
        position=position_of(TEXT, "gelu", "utf-16")))
    assert hover is not None
    confirmed = await _publication_with(client, "Confirmed by nvcc")
    gelu = next(d for d in confirmed.diagnostics if d.code == "R007" and d.range.start.line == 4)
    assert "f64 instructions in gelu" in gelu.message
    assert gelu.severity == types.DiagnosticSeverity.Warning
    halve = next(d for d in confirmed.diagnostics if d.code == "R007" and d.range.start.line == 11)
    assert "f64 instruction" in halve.message and halve.severity == types.DiagnosticSeverity.Warning
    twice = next(d for d in confirmed.diagnostics if d.code == "R007" and d.range.start.line == 18)
    assert "nvcc shows: no f64 instruction" in twice.message and "(narrowed to float)." in twice.message
    assert "Not confirmed" not in twice.message  # the hint said nvcc narrows it: nvcc agrees
    assert twice.severity == types.DiagnosticSeverity.Hint
