"""Bad input never crashes or hangs the server; it logs what it skipped."""

from __future__ import annotations

import pytest
from lsp_harness import DATA, open_document, wait_for_publication
from lsprotocol import types

ROBUSTNESS = sorted((DATA / "robustness").glob("*.cu"))


def read_like_an_editor(path) -> str:
    # Editors decode undecodable bytes somehow; surrogateescape sends lone surrogates on the wire.
    return path.read_bytes().decode("utf-8", errors="surrogateescape")


async def still_serving(client, uri: str) -> None:
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=1)
        )
    )
    assert hover is None or hover.contents
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert isinstance(symbols, (list, tuple))
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert isinstance(lenses, (list, tuple))


@pytest.mark.parametrize("path", ROBUSTNESS, ids=[p.name for p in ROBUSTNESS])
async def test_bad_input_file(client, path):
    uri = f"file:///work/{path.name}"
    open_document(client, uri, read_like_an_editor(path))
    await wait_for_publication(client, uri, version=1, timeout=20)
    await still_serving(client, uri)


async def test_ten_megabyte_file_is_skipped_and_logged(client):
    uri = "file:///work/huge.cu"
    block = "__global__ void k(float *x) { x[threadIdx.x * 2] = 1.0; }\n"
    text = block * (10_000_000 // len(block))
    open_document(client, uri, text)
    published = await wait_for_publication(client, uri, version=1, timeout=20)
    assert list(published.diagnostics) == []
    assert any("not analysed" in m.message for m in client.log_messages)
    await still_serving(client, uri)
    # an edit of the huge document is cheap and still answered
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)),
                    text="// edited\n",
                )
            ],
        )
    )
    await wait_for_publication(client, uri, version=2, timeout=20)
