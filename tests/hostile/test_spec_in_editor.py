"""End-to-end (the real server over stdio): a hostile spec beside a file is a one-line error
naming the file and the key in the answer to `regrapht.validateKernel`, never a -32603 internal
error, and the server keeps serving."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from lsprotocol import types

# The pytest-lsp harness (the `client` fixture, one per client profile) of the end-to-end tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from lsp_harness import client, open_document, wait_for_publication  # noqa: E402, F401, F811

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SAXPY = (EXAMPLES / "saxpy.cu").read_text()
SPEC = (EXAMPLES / "saxpy.regrapht.toml").read_text()

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(("edit", "key", "message"), [
    (lambda spec: spec.replace("block = ", "blok = ", 1), "kernel[0].blok", "did you mean 'block'"),
    (lambda spec: spec.replace('value = "1 << 24"', 'value = "' + "(" * 300 + "1" + ")" * 300 + '"', 1),
     "kernel[0].arg[0].value", "nested more than"),
    (lambda spec: spec.replace('value = "1 << 24"', 'value = "' + "9" * 5001 + '"', 1),
     "kernel[0].arg[0].value", "does not fit in 64 bits"),
    (lambda spec: spec.replace("[[kernel]]", "[[kernel]]\nrtol = nan", 1), "kernel[0].rtol", "finite"),
], ids=["unknown key", "depth", "5001 digits", "nan tolerance"])
async def test_hostile_spec_is_a_clean_error(client, tmp_path, edit, key, message):  # noqa: F811
    spec = edit(SPEC)
    assert spec != SPEC, "the example spec changed: update the edit"
    path = tmp_path / "saxpy.cu"
    path.write_text(SAXPY)
    (tmp_path / "saxpy.regrapht.toml").write_text(spec)
    uri = path.as_uri()
    open_document(client, uri, SAXPY)
    await wait_for_publication(client, uri, version=1)
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="regrapht.validateKernel", arguments=[{"uri": uri, "kernel": "saxpy"}]))
    error = answer["error"]
    assert "saxpy.regrapht.toml" in error and f"[{key}]" in error and message in error, error
    assert "\n" not in error and len(error) < 400
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=SAXPY.splitlines().index(
            next(line for line in SAXPY.splitlines() if "__global__" in line)), character=20)))
    assert hover is not None


async def test_non_utf8_spec_is_a_clean_error(client, tmp_path):  # noqa: F811
    path = tmp_path / "saxpy.cu"
    path.write_text(SAXPY)
    (tmp_path / "saxpy.regrapht.toml").write_bytes(SPEC.encode().replace(b"uniform", b"unif\xff\xfeorm", 1))
    uri = path.as_uri()
    open_document(client, uri, SAXPY)
    await wait_for_publication(client, uri, version=1)
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="regrapht.validateKernel", arguments=[{"uri": uri, "kernel": "saxpy"}]))
    assert "saxpy.regrapht.toml" in answer["error"] and "not UTF-8" in answer["error"]


if shutil.which("nvcc") is None:  # the validation service starts the compiler before the spec is read
    pytestmark = [pytest.mark.slow, pytest.mark.skip(reason="needs nvcc on PATH")]
