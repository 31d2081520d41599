"""End-to-end (stdio, real nvcc, no GPU needed): a CMake project opened in the server. Its kernel
includes a project header that needs the project's include dir and define, which the server
takes from the project's build/compile_commands.json: validation compiles it (no "does not
compile" for the include), the kernel card names the flags, and a file the database lacks takes
its neighbour's flags with one window/logMessage notice."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from lsp_harness import encoding_of, open_document, position_of, wait_for_publication
from lsprotocol import types

PROJECT = Path(__file__).resolve().parents[1] / "data" / "cmake_project"

pytestmark = [
    pytest.mark.nvcc,
    pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc on PATH"),
]

TWICE_SPEC = (PROJECT / "src" / "scale.regrapht.toml").read_text().replace('name = "scale"', 'name = "twice"')


async def validate(client, uri: str, kernel: str) -> dict:
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="regrapht.validateKernel", arguments=[{"uri": uri, "kernel": kernel}]))


async def test_a_cmake_project_compiles_with_its_database_and_the_card_names_the_flags(client, tmp_path):
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)  # the database's paths are relative to its folder
    path = project / "src" / "scale.cu"
    text = path.read_text()
    uri = path.as_uri()
    open_document(client, uri, text)
    await wait_for_publication(client, uri, version=1)
    answer = await validate(client, uri, "scale")
    assert answer.get("error") is None, answer
    assert not answer["summary"].startswith("does not compile"), answer["summary"]
    (report,) = answer["kernels"]
    assert report["resources"]["registers"] > 0
    assert not [d for p in client.published if p.uri == uri for d in p.diagnostics if "scale.cuh" in d.message]
    encoding = encoding_of(client)
    card = ""
    for _ in range(100):  # the facts are recorded in the worker that validated
        hover = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=position_of(text, "scale(float", encoding)))
        card = hover.contents.value if hover is not None else ""
        if "Compiled with" in card:
            break
        await asyncio.sleep(0.05)
    assert "**Compiled with**" in card and "-DPROJ_SCALE=3.0f" in card and "compile_commands.json" in card
    assert str(project / "include") in card


async def test_a_file_missing_from_the_database_takes_its_neighbours_flags_with_one_notice(client, tmp_path):
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    path = project / "src" / "extra.cu"
    (project / "src" / "extra.regrapht.toml").write_text(TWICE_SPEC)
    text = path.read_text()
    uri = path.as_uri()
    open_document(client, uri, text)
    await wait_for_publication(client, uri, version=1)
    for _ in range(2):
        answer = await validate(client, uri, "twice")
        assert answer.get("error") is None and not answer["summary"].startswith("does not compile"), answer
    notices = [m.message for m in client.log_messages if "is not in" in m.message]
    assert len(notices) == 1 and "extra.cu" in notices[0] and "scale.cu" in notices[0], notices


async def test_without_the_database_the_include_does_not_compile(client, tmp_path):
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns("build"))
    path = project / "src" / "scale.cu"
    text = path.read_text()
    uri = path.as_uri()
    open_document(client, uri, text)
    await wait_for_publication(client, uri, version=1)
    answer = await validate(client, uri, "scale")
    assert answer["summary"].startswith("does not compile") and "proj/scale.cuh" in answer["summary"]
