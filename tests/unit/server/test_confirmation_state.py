"""Compiler confirmations in the server state: applied to analyses of the compiled text only,
never to rules the user overrode, dropped on close; the confirmation service decides when a
compile is worth it and compiles with the server's one compiler (no pygls, no nvcc)."""

from __future__ import annotations

import dataclasses
from typing import Any, cast

import pytest

from regrapht.app.resources import GpuResources
from regrapht.errors import InputError
from regrapht.lsp.features.confirmation import ConfirmationService
from regrapht.lsp.folders import FolderAnswer, FolderSettings
from regrapht.lsp.server import create_server
from regrapht.lsp.state import ServerState
from regrapht.settings import Settings
from regrapht.validate.ptx import LineCode, PtxFacts

TEXT = """__global__ void k(float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = y[i] * 0.1;
}"""
F64 = PtxFacts({3: LineCode(instructions=4, f64=3, functions={"k"})})
NONE = PtxFacts({3: LineCode(instructions=4, f64=0, functions={"k"})})


def _opened(state: ServerState):
    document = state.open("file:///w/k.cu", TEXT, 1)
    return document, state.ensure_analysis(document)


def _r007(state: ServerState, analysis):
    return next(f for f in state.all_findings("file:///w/k.cu", analysis) if f.rule == "R007")


def test_confirmation_applies_to_the_same_text_only() -> None:
    state = ServerState()
    document, analysis = _opened(state)
    assert "nvcc" not in _r007(state, analysis).message
    state.set_confirmation(document.uri, analysis.lines, F64)
    confirmed = _r007(state, analysis)
    assert confirmed.severity == "warning" and "Confirmed by nvcc: 3 f64 instructions in k." in confirmed.message
    assert _r007(state, analysis) is confirmed  # memoised for the same analysis and confirmation
    state.set_confirmation(document.uri, ("other text",), NONE)
    assert "nvcc" not in _r007(state, analysis).message


def test_refuted_becomes_a_hint_unless_the_user_overrode_the_rule() -> None:
    state = ServerState()
    document, analysis = _opened(state)
    state.set_confirmation(document.uri, analysis.lines, NONE)
    assert _r007(state, analysis).severity == "hint"
    state.apply_settings(Settings(severity_overrides={"R007": "error"}))
    analysis = state.ensure_analysis(document)
    overridden = _r007(state, analysis)
    assert overridden.severity == "error" and "nvcc" not in overridden.message


def test_the_documents_folder_decides_the_override_and_whether_to_compile() -> None:
    """A folder that overrides R007 keeps its own finding; one that turns the confirmation off
    asks for no compile; a document outside both follows the window."""
    state = ServerState()
    service = ConfirmationService(state, lambda: None, cast(Any, None))
    state.apply_folder_settings(FolderSettings(("file:///w", "file:///q")).with_pulled({
        "file:///w": FolderAnswer(Settings(severity_overrides={"R007": "error"})),
        "file:///q": FolderAnswer(Settings(compiler_confirmation=False))}))
    document, analysis = _opened(state)  # file:///w/k.cu
    state.set_confirmation(document.uri, analysis.lines, NONE)
    overridden = _r007(state, analysis)
    assert overridden.severity == "error" and "nvcc" not in overridden.message
    quiet = state.open("file:///q/k.cu", TEXT, 1)
    outside = state.open("file:///elsewhere/k.cu", TEXT, 1)
    assert not service.wanted(quiet.uri, state.ensure_analysis(quiet))
    assert service.wanted(outside.uri, state.ensure_analysis(outside))
    state.set_confirmation(outside.uri, state.ensure_analysis(outside).lines, NONE)
    refuted = next(f for f in state.all_findings(outside.uri, state.ensure_analysis(outside)) if f.rule == "R007")
    assert refuted.severity == "hint"


def test_close_drops_the_confirmation() -> None:
    state = ServerState()
    document, analysis = _opened(state)
    state.set_confirmation(document.uri, analysis.lines, F64)
    state.close(document.uri)
    assert document.uri not in state.confirmations


def test_a_compile_is_wanted_for_confirmable_findings_on_unconfirmed_text() -> None:
    state = ServerState()
    service = ConfirmationService(state, lambda: None, cast(Any, None))  # no compile here: no notices to send
    document, analysis = _opened(state)
    assert service.wanted(document.uri, analysis)
    state.set_confirmation(document.uri, analysis.lines, F64)
    assert not service.wanted(document.uri, analysis)
    state.apply_settings(dataclasses.replace(state.settings, compiler_confirmation=False))
    other = state.open("file:///w/other.cu", TEXT, 1)
    assert not service.wanted(other.uri, state.ensure_analysis(other))
    quiet = state.open("file:///w/quiet.cu", "__global__ void q(float *y) { y[threadIdx.x] = 1.0f; }", 1)
    state.apply_settings(dataclasses.replace(state.settings, compiler_confirmation=True))
    assert not service.wanted(quiet.uri, state.ensure_analysis(quiet))


def test_the_server_confirms_with_the_one_compiler_of_its_gpu_resources(tmp_path) -> None:
    _server, state = create_server()
    services = [listener.__self__ for listener in state.publish_listeners
                if isinstance(getattr(listener, "__self__", None), ConfirmationService)]
    assert len(services) == 1 and isinstance(services[0].compiler.__self__, GpuResources)

    made: list[object] = []
    compiler = object()

    def make_compiler(env, cache_dir):
        made.append(cache_dir)
        return compiler

    resources = GpuResources({"REGRAPHT_CACHE_DIR": str(tmp_path)}, tmp_path, make_compiler=make_compiler)
    service = ConfirmationService(ServerState(), resources.compiler_if_found, cast(Any, None))
    assert service.compiler() is compiler and resources.compiler() is compiler and len(made) == 1


def test_without_nvcc_confirmation_gets_none_and_the_workflows_a_clear_error(tmp_path) -> None:
    resources = GpuResources({"REGRAPHT_CACHE_DIR": str(tmp_path)}, tmp_path, make_compiler=lambda env, cache_dir: None)
    assert resources.compiler_if_found() is None
    with pytest.raises(InputError, match="nvcc not found"):
        resources.compiler()
