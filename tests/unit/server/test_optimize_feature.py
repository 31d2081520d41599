"""The optimize feature's pure parts: kernel lookup, the edit (kernel + launch sites), the confirmed
WorkspaceEdit, cancel-on-edit, the no-GPU outcome, and a whole worker run with test doubles."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pytest
from lsprotocol import types

from regrapht.converters import confirmed_workspace_edit
from regrapht.cuda.parse import parse_source
from regrapht.features import optimize as feature
from regrapht.graph import open_graph
from regrapht.model.scripted import ScriptedModel
from regrapht.search.pipeline import BestVersion
from regrapht.search.session import Progress, StepRecord
from regrapht.settings import Settings
from regrapht.state import Analysis, DocumentState
from regrapht.text import Position, Span, apply_edits
from regrapht.validate.types import Candidate, Evaluation, LaunchConfig, Timing

SOURCE = """#include <cuda_runtime.h>

__global__ void saxpy(int n, float a, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
    int N = 1 << 20;
    float *d_x, *d_y;
    cudaMalloc(&d_x, N * sizeof(float));
    cudaMalloc(&d_y, N * sizeof(float));
    saxpy<<<(N + 255) / 256, 256>>>(N, 2.0f, d_x, d_y);
    cudaDeviceSynchronize();
    return 0;
}
"""
NEW_KERNEL = """__global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}"""
BEFORE = LaunchConfig(("(n + 255) / 256",), ("256",), "0")


def best_version(source: str, launch: LaunchConfig, speedup: float = 3.1) -> BestVersion:
    steps = (StepRecord("restrict", "", 1.4), StepRecord("block_size", "", speedup))
    return BestVersion(0.1, speedup, ("restrict", "block_size"), launch, source, steps)


def optimized_source(source: str = SOURCE) -> str:
    start = source.index("__global__")
    end = source.index("}\n", start) + 1
    return source[:start] + NEW_KERNEL + source[end:]


def analysis_of(text: str, version: int = 1) -> Analysis:
    return Analysis(version, 0, tuple(text.split("\n")), parse_source(text), ())


# -- which kernel ------------------------------------------------------------------------------


def test_kernel_at_name_body_and_launch_site():
    analysis = analysis_of(SOURCE)
    lines = SOURCE.split("\n")
    assert feature.kernel_at(analysis, Position(2, lines[2].index("saxpy") + 2)) == "saxpy"
    assert feature.kernel_at(analysis, Position(4, 8)) == "saxpy"  # in the body
    launch_line = next(i for i, line in enumerate(lines) if "<<<" in line)
    assert feature.kernel_at(analysis, Position(launch_line, lines[launch_line].index("<<<") + 4)) == "saxpy"
    assert feature.kernel_at(analysis, Position(9, 4)) is None  # host code


def test_command_target_shapes():
    assert feature.command_target([{"uri": "file:///a.cu", "kernel": "k"}]) == ("file:///a.cu", "k", None)
    uri, kernel, position = feature.command_target([{"uri": "file:///a.cu", "position": {"line": 3, "character": 1}}])
    assert kernel is None and position == types.Position(line=3, character=1)
    with pytest.raises(Exception, match="expected"):
        feature.command_target([{"uri": "file:///a.cu"}])


# -- the edit ------------------------------------------------------------------------------------


def test_edit_replaces_kernel_and_updates_launch_site():
    after = LaunchConfig(("(n + 127) / 128",), ("128",), "0")
    built = feature.build_edit(SOURCE, SOURCE, "saxpy", best_version(optimized_source(), after), BEFORE)
    assert built.problems == ()
    result = apply_edits(SOURCE, built.edits)
    assert NEW_KERNEL in result
    assert "saxpy<<<(N + 127) / 128, 128>>>(N, 2.0f, d_x, d_y);" in result
    assert result.replace(NEW_KERNEL, "").count("__restrict__") == 0
    assert len(built.edits) == 2


def test_edit_keeps_launch_site_when_launch_unchanged():
    built = feature.build_edit(SOURCE, SOURCE, "saxpy", best_version(optimized_source(), BEFORE), BEFORE)
    assert len(built.edits) == 1
    assert "saxpy<<<(N + 255) / 256, 256>>>" in apply_edits(SOURCE, built.edits)


def test_edit_translates_ceil_div_dim3_shared_and_expression_arguments():
    source = SOURCE.replace("saxpy<<<(N + 255) / 256, 256>>>(N, 2.0f", "saxpy<<<(N + 255) / 256, 256>>>(N * 2, 2.0f")
    after = LaunchConfig(("ceil_div(n, 64)", "2"), ("64", "2"), "n * 4")
    built = feature.build_edit(source, source, "saxpy", best_version(optimized_source(source), after), BEFORE)
    assert built.problems == ()
    result = apply_edits(source, built.edits)
    assert "saxpy<<<dim3(((N * 2) + 64 - 1) / 64, 2), dim3(64, 2), (N * 2) * 4>>>(N * 2, 2.0f" in result


def test_edit_refuses_launch_it_cannot_express_and_a_changed_kernel():
    after = LaunchConfig(("(unknown + 127) / 128",), ("128",), "0")
    built = feature.build_edit(SOURCE, SOURCE, "saxpy", best_version(optimized_source(), after), BEFORE)
    assert built.problems and "line 13" in built.problems[0]
    edited = SOURCE.replace("a * x[i]", "a * x[i] * 1.0f")
    stale = feature.build_edit(edited, SOURCE, "saxpy", best_version(optimized_source(), BEFORE), BEFORE)
    assert stale.edits == () and "changed" in stale.problems[0]


def test_edit_rebased_on_text_changed_outside_the_kernel():
    current = "// a comment added above\n" + SOURCE.replace("return 0;", "return 1;")
    built = feature.build_edit(current, SOURCE, "saxpy", best_version(optimized_source(), BEFORE), BEFORE)
    result = apply_edits(current, built.edits)
    assert result.startswith("// a comment added above\n") and NEW_KERNEL in result and "return 1;" in result


def test_confirmed_workspace_edit_needs_confirmation_and_carries_title():
    after = LaunchConfig(("(n + 127) / 128",), ("128",), "0")
    best = best_version(optimized_source(), after)
    built = feature.build_edit(SOURCE, SOURCE, "saxpy", best, BEFORE)
    title = feature.edit_title("saxpy", best.speedup, "NVIDIA H200")
    assert title == "Apply 3.1x faster saxpy (verified on NVIDIA H200)"
    edit = confirmed_workspace_edit("file:///s.cu", 7, built.edits, SOURCE.split("\n"), "utf-16", title,
                                    "restrict -> block_size", document_changes=True, annotations=True)
    assert edit.document_changes is not None
    (document_edit,) = edit.document_changes
    assert isinstance(document_edit, types.TextDocumentEdit)
    assert document_edit.text_document.version == 7
    assert all(isinstance(e, types.AnnotatedTextEdit) for e in document_edit.edits)
    annotation = edit.change_annotations[document_edit.edits[0].annotation_id]
    assert annotation.needs_confirmation is True and annotation.label == title
    plain = confirmed_workspace_edit("file:///s.cu", 7, built.edits, SOURCE.split("\n"), "utf-16", title, "",
                                     document_changes=False, annotations=False)
    assert plain.changes is not None and len(plain.changes["file:///s.cu"]) == 2


def test_path_text_and_card_section_show_each_step_gain():
    best = best_version(optimized_source(), BEFORE)
    assert feature.path_text(best) == ("restrict (1.40x)", "block_size (3.10x)")
    result = SimpleNamespace(
        best=best, gpu="NVIDIA H200", baseline_ms=0.31, strategy="mcgs", reason="",
        counters=SimpleNamespace(generated=8, correct=5, faster=3),
    )
    section = feature.card_section(result, "applied")  # type: ignore[arg-type]
    assert section.title == feature.CARD_SECTION
    assert "3.10x faster on NVIDIA H200" in section.body and "1. `restrict`: 1.40x" in section.body


# -- cancel on edit ------------------------------------------------------------------------------


class FakeCancellable:
    def __init__(self) -> None:
        self.cancelled = False


def make_run(document: DocumentState) -> feature.Run:
    request = feature.SearchRequest(document.uri, "saxpy", SOURCE, document.version, document.open_id, Settings())
    kernel_text = SOURCE[SOURCE.index("__global__") : SOURCE.index("}\n") + 1]
    return feature.Run(request, kernel_text, FakeCancellable())  # type: ignore[arg-type]


def test_edit_inside_the_kernel_cancels_edit_outside_does_not():
    document = DocumentState("file:///s.cu", SOURCE, 1, "cuda", 1)
    run = make_run(document)
    assert not feature.should_cancel(run, document)
    document.apply(Span.of(9, 0, 9, 0), "    // note\n", 2)  # host code
    assert not feature.should_cancel(run, document)
    document.apply(Span.of(4, 4, 4, 4), "// touched\n    ", 3)  # the kernel body (shifted by one line)
    assert feature.should_cancel(run, document)
    assert feature.should_cancel(run, document)  # stays cancelled


def test_close_and_user_cancel_cancel():
    document = DocumentState("file:///s.cu", SOURCE, 1, "cuda", 1)
    run = make_run(document)
    assert feature.should_cancel(run, None)
    run.progress.cancelled = True  # type: ignore[misc]
    assert feature.should_cancel(make_run(document), document) is False
    assert feature.should_cancel(run, document)


def test_kernel_changed():
    kernel_text = SOURCE[SOURCE.index("__global__") : SOURCE.index("}\n") + 1]
    assert not feature.kernel_changed(kernel_text, "// x\n" + SOURCE, "saxpy")
    assert feature.kernel_changed(kernel_text, SOURCE.replace("i < n", "i <= n"), "saxpy")
    assert feature.kernel_changed(kernel_text, "int main() {}", "saxpy")


# -- the worker: no GPU, and a faster version with test doubles --------------------------------


@dataclass
class FakeEvaluator:
    gpu_name: str | None
    arch: str = "sm_90"
    no_device_reason: str = "no CUDA device present"
    seen: list[Candidate] = field(default_factory=list)
    gpu_lock: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(hold=lambda timeout: _Null()))

    def baseline(self) -> Timing | None:
        return Timing(1.0, 1.0, 1.0, 20) if self.gpu_name else None

    def evaluate(self, candidate: Candidate) -> Evaluation:
        self.seen.append(candidate)
        speedup = 2.0 if "__restrict__" in candidate.source else 0.9
        timing = Timing(1 / speedup, 1 / speedup, 1 / speedup, 20)
        return Evaluation("faster" if speedup > 1 else "slower", "", timing, speedup)


class _Null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *args: object) -> None:
        return None


def fake_wire(evaluator: FakeEvaluator, tmp_path: Path):
    def wire(source, file, kernel, spec, *, env, home, arch):
        from regrapht.search.wiring import kernel_target

        graph = open_graph(None, tmp_path / "overlay.json")
        run = SimpleNamespace(evaluator=evaluator, graph=graph, overlay_path=tmp_path / "overlay.json",
                              target=kernel_target(spec.kernel(kernel)))
        return _Context(run)

    return wire


class _Context:
    def __init__(self, value: object) -> None:
        self.value = value

    def __enter__(self) -> object:
        return self.value

    def __exit__(self, *args: object) -> None:
        return None


def request_for(settings: Settings) -> feature.SearchRequest:
    return feature.SearchRequest("untitled:saxpy", "saxpy", SOURCE, 1, 1, settings)


def test_no_gpu_outcome_and_message(tmp_path):
    reports: list[str] = []
    outcome = feature.run_search(request_for(Settings()), lambda m, p: reports.append(m), lambda: False,
                                 lambda s: pytest.fail("no model without a GPU"),
                                 wire=fake_wire(FakeEvaluator(None), tmp_path))
    assert outcome.kind == "no_gpu" and outcome.result is None
    assert any("inferred" in r for r in reports)
    message = feature.no_gpu_message("saxpy", outcome.message)
    assert "cannot verify" in message and "saxpy" in message and "no CUDA device" in message


def test_worker_finds_a_faster_version_with_scripted_model(tmp_path):
    answer = f"```cuda\n{NEW_KERNEL}\n```"
    model = ScriptedModel([answer] * 200)
    evaluator = FakeEvaluator("Fake GPU")
    progress: list[str] = []
    outcome = feature.run_search(request_for(Settings(search_budget=6)), lambda m, p: progress.append(m),
                                 lambda: False, lambda s: model, wire=fake_wire(evaluator, tmp_path))
    assert outcome.kind == "found", outcome.message
    assert outcome.result is not None and outcome.result.best is not None
    assert outcome.result.best.speedup == pytest.approx(2.0)
    assert any(m.startswith(("generating", "compiling", "checking", "timing")) for m in progress)
    built = feature.build_edit(SOURCE, SOURCE, "saxpy", outcome.result.best, outcome.launch)
    assert built.problems == ()
    assert "__restrict__" in apply_edits(SOURCE, built.edits)


def test_worker_stops_when_cancelled(tmp_path):
    outcome = feature.run_search(request_for(Settings(search_budget=6, search_strategy="rules")),
                                 lambda m, p: None, lambda: True, lambda s: None,
                                 wire=fake_wire(FakeEvaluator("Fake GPU"), tmp_path))
    assert outcome.kind == "cancelled"


def test_progress_message_names_stage_and_best():
    text = feature.progress_message(Progress("timing", "restrict", 3, 24, 1.8))
    assert text == "timing: restrict (3/24, best 1.80x)"


def test_code_action_offers_optimize_and_kept_result():
    registry = feature.Registry()
    document = DocumentState("file:///s.cu", SOURCE, 1, "cuda", 1)
    analysis = analysis_of(SOURCE)
    actions = feature.provide_actions(registry, document, analysis, Span.of(4, 4, 4, 4), True, "utf-16", True)
    assert [a.title for a in actions] == ["Optimize saxpy with ReGraphT"]
    assert actions[0].kind == types.CodeActionKind.RefactorRewrite
    assert actions[0].command.arguments == [{"uri": "file:///s.cu", "kernel": "saxpy"}]
    result = SimpleNamespace(best=best_version(optimized_source(), BEFORE), gpu="NVIDIA H200")
    kernel_text = SOURCE[SOURCE.index("__global__") : SOURCE.index("}\n") + 1]
    registry.kept[("file:///s.cu", "saxpy")] = feature.Kept(SOURCE, kernel_text, result, BEFORE)  # type: ignore[arg-type]
    actions = feature.provide_actions(registry, document, analysis, Span.of(4, 4, 4, 4), True, "utf-16", True)
    assert actions[1].title == "Apply 3.1x faster saxpy (verified on NVIDIA H200)"
    assert actions[1].edit.change_annotations  # needs confirmation
    assert feature.provide_actions(registry, document, analysis, Span.of(9, 0, 9, 0), True, "utf-16", True) == []


def test_spec_beside_the_file_is_used_and_a_bad_one_is_an_input_error(tmp_path):
    from regrapht.errors import InputError

    source = tmp_path / "saxpy.cu"
    source.write_text(SOURCE)
    inferred = feature.choose_spec(SOURCE, "saxpy", source)
    assert "inferred" in inferred.note and inferred.spec.kernel("saxpy").name == "saxpy"
    (tmp_path / "saxpy.regrapht.toml").write_text("[[kernel]]\nname = 'saxpy'\ngrid = [1]\nblock = [1]\n")
    assert feature.choose_spec(SOURCE, "saxpy", source).note == "spec saxpy.regrapht.toml"
    (tmp_path / "saxpy.regrapht.toml").write_text("not toml [")
    with pytest.raises(InputError, match="TOML"):
        feature.choose_spec(SOURCE, "saxpy", source)
