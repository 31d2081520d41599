"""End-to-end: one finding per cause over stdio. The real server publishes one R011 diagnostic for
the four butterflies of a radix-2 stage and one R007 diagnostic for the literals of one line, the
other locations as `relatedInformation` in the same document; the quick fix of the grouped R007
writes every literal of the line as float. With the real nvcc (marker `nvcc`), the editor drops the
R015 hint on a loop nvcc unrolled fully and keeps the one on a loop it kept, saying why."""

from __future__ import annotations

import shutil

import pytest
from lsp_harness import open_document, wait_for_publication, wait_until
from lsprotocol import types

URI = "file:///work/related/stage.cu"
TEXT = """__global__ void radix2(float *__restrict__ data, const float *__restrict__ w) {
    __shared__ float s[1024];
    int t = threadIdx.x;
    s[t] = data[t];
    __syncthreads();
    for (int half = 1; half < 512; half *= 2) {
        float a = s[2 * t];
        float b = s[2 * t + 1];
        s[2 * t] = a + b;
        s[2 * t + 1] = a - b;
        __syncthreads();
    }
    data[t] = s[t] * 0.7071067811 + s[t + 1] * 0.3826834324;
}
"""


async def test_grouped_findings_carry_related_information(client):
    open_document(client, URI, TEXT)
    published = await wait_for_publication(client, URI, version=1)
    r011 = [d for d in published.diagnostics if d.code == "R011"]
    assert len(r011) == 1, [d.message for d in r011]
    (stage,) = r011
    assert stage.range.start.line == 6
    assert "(4 accesses of 's' here)" in stage.message  # plain text: code quoted, no Markdown
    related = stage.related_information or []
    assert [r.location.range.start.line for r in related] == [7, 8, 9]
    assert all(r.location.uri == URI and "the same conflict" in r.message for r in related)

    r007 = [d for d in published.diagnostics if d.code == "R007"]
    assert len(r007) == 1 and r007[0].range.start.line == 12
    assert "'0.7071067811' and '0.3826834324' are double-precision literals" in r007[0].message
    (other,) = r007[0].related_information or []
    assert other.location.range.start.line == 12 and "'0.3826834324'" in other.message

    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI), range=r007[0].range,
        context=types.CodeActionContext(diagnostics=r007)))
    fixes = [a for a in actions or [] if isinstance(a, types.CodeAction) and a.title.startswith("Write the 2")]
    assert fixes, [getattr(a, "title", a) for a in actions or []]
    edit = fixes[0].edit
    assert edit is not None
    edits = [e for change in (edit.document_changes or []) for e in getattr(change, "edits", [])] or \
        [e for found in (edit.changes or {}).values() for e in found]
    assert sorted(e.new_text for e in edits) == ["f", "f"]


LOOPS_URI = "file:///work/related/loops.cu"
LOOPS = """__global__ void horner(float *__restrict__ y, const float *__restrict__ c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = y[i];
    float acc = 0.0f;
    for (int k = 0; k < 16; k++) {
        acc = acc * x + c[k];
    }
    y[i] = acc;
}

__global__ void staged(float *__restrict__ y, const float *__restrict__ c)
{
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = y[blockIdx.x * 256 + t];
    for (int k = 0; k < 32; k++) {
        __syncthreads();
        float v = s[(t + k * 7) & 255] * c[k] + sinf(s[(t * 3 + k) & 255]);
        __syncthreads();
        s[t] += v * expf(v) / (1.0f + v * v);
    }
    y[blockIdx.x * 256 + t] = s[t];
}
"""


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
async def test_the_editor_drops_an_unrolling_hint_nvcc_refutes(client):
    client.set_configuration({"debounceMs": 10, "compilerConfirmation": True}, section="regrapht")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    open_document(client, LOOPS_URI, LOOPS)
    first = await wait_for_publication(client, LOOPS_URI, version=1)
    assert sorted(d.range.start.line for d in first.diagnostics if d.code == "R015") == [5, 16]

    def confirmed():
        return next((p for p in reversed(client.published) if p.uri == LOOPS_URI
                     and any("nvcc shows: a backward branch" in d.message for d in p.diagnostics)), None)

    published = await wait_until(client, confirmed, 180.0, "the confirmed R015 publication")
    r015 = [d for d in published.diagnostics if d.code == "R015"]
    # nvcc unrolled the Horner loop fully: its hint is gone; the loop with barriers stayed a loop.
    assert [d.range.start.line for d in r015] == [16]
    assert "nvcc kept it as a loop" in r015[0].message and r015[0].severity == types.DiagnosticSeverity.Hint
