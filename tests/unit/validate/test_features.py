"""The editor side of validation: the spec code action's edit, background validation results in
the kernel card and diagnostics (compile errors on the right line)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from lsprotocol import types

from regrapht.app.resources import GpuResources
from regrapht.app.validation import ValidationService
from regrapht.lsp.features.spec_action import spec_actions, spec_edit
from regrapht.lsp.features.validation import publish
from regrapht.lsp.server import create_server

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_create_spec_edit_and_action(tmp_path: Path) -> None:
    _server, state = create_server()
    source = tmp_path / "saxpy.cu"
    shutil.copy(EXAMPLES / "saxpy.cu", source)
    document = state.open(source.as_uri(), source.read_text(), 1)
    params = types.CodeActionParams(types.TextDocumentIdentifier(document.uri),
                                    types.Range(types.Position(6, 0), types.Position(6, 0)),
                                    types.CodeActionContext(diagnostics=[]))
    actions = spec_actions(state, document, params)
    assert [a.title for a in actions] == ["Create benchmark spec for saxpy"]
    edit, text = spec_edit(document, "saxpy")
    assert 'name = "saxpy"' in text
    assert edit.document_changes is not None
    create, insert = edit.document_changes
    assert isinstance(create, types.CreateFile) and create.uri.endswith("saxpy.regrapht.toml")
    assert isinstance(insert, types.TextDocumentEdit) and 'name = "saxpy"' in insert.edits[0].new_text


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_background_validation_fills_card_and_maps_errors(tmp_path: Path) -> None:
    _server, state = create_server()
    source = tmp_path / "saxpy.cu"
    shutil.copy(EXAMPLES / "saxpy.cu", source)
    shutil.copy(EXAMPLES / "saxpy.regrapht.toml", tmp_path / "saxpy.regrapht.toml")
    document = state.open(source.as_uri(), source.read_text(), 1)
    resources = GpuResources({**os.environ, "REGRAPHT_CACHE_DIR": str(tmp_path / "cache")}, tmp_path)
    service = ValidationService(resources)
    done = service.run(source, document.text, None)
    assert done is not None
    summary = publish(state, document.uri, *done)
    facts = state.facts_for(document.uri, "saxpy")
    assert facts is not None and facts.resources is not None and facts.resources.registers
    assert summary["kernels"][0]["occupancy"] == 1.0
    broken = document.text.replace("y[i] = a", "y[i] = zz + a")
    done = service.run(source, broken, None)
    assert done is not None
    path, result = done
    assert result.diagnostics[0].line == 9
    publish(state, document.uri, path, result)
    external = state.external_findings[document.uri]["validation"]
    assert external[0].span.start.line == 8 and "zz" in external[0].message
    # the one cache dir Optimize uses too (its GPU lock file), not one per workspace folder
    assert (tmp_path / "cache" / "validation").is_dir() and not (tmp_path / ".regrapht-cache").exists()
    assert resources.gpu_lock.path == tmp_path / "cache" / "gpu.lock"


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_a_spec_with_guesses_is_compiled_not_timed_and_shown(tmp_path: Path) -> None:
    _server, state = create_server()
    source = tmp_path / "saxpy.cu"
    shutil.copy(EXAMPLES / "saxpy.cu", source)
    spec = (EXAMPLES / "saxpy.regrapht.toml").read_text()
    (tmp_path / "saxpy.regrapht.toml").write_text(spec.replace("[[kernel.arg]]", 'guessed = ["grid", "x.count"]\n\n'
                                                                               "[[kernel.arg]]", 1))
    document = state.open(source.as_uri(), source.read_text(), 1)
    service = ValidationService(GpuResources({**os.environ, "REGRAPHT_CACHE_DIR": str(tmp_path / "cache")}, tmp_path))
    done = service.run(source, document.text, None)
    assert done is not None
    (kernel,) = done[1].kernels
    assert kernel.guessed == ("grid", "x.count") and kernel.report is not None and kernel.report["time_ms"] is None
    publish(state, document.uri, *done)
    (finding,) = [f for f in state.external_findings[document.uri]["validation"] if f.rule == "V002"]
    assert "grid, x.count are guesses" in finding.message and finding.severity == "information"
    again = service.run(source, document.text, None)  # from the validation cache: the guesses kept
    assert again is not None and again[1].cached and again[1].kernels[0].guessed == ("grid", "x.count")
