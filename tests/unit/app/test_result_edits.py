"""Turning an optimize run's best version into edits of the current document: the kernel
replaced, launch sites rewritten for a new launch configuration (ceil_div as C), refusals."""

from __future__ import annotations

from dataclasses import replace

from regrapht.app.result_edits import (
    build_edit,
    ceil_div_to_c,
    host_expression,
    kernel_changed,
    kernel_text,
)
from regrapht.spec.launch import LaunchConfig
from regrapht.text import apply_edits, edit_of

from .optimize_fixtures import BEFORE, KERNEL_TEXT, NEW_KERNEL, SOURCE, best_version, optimized_source


def test_edit_replaces_kernel_and_updates_launch_site():
    after = LaunchConfig(("(n + 127) / 128",), ("128",), "0")
    built = build_edit(SOURCE, SOURCE, "saxpy", best_version(optimized_source(), after), BEFORE)
    assert built.problems == ()
    result = apply_edits(SOURCE, built.edits)
    assert NEW_KERNEL in result
    assert "saxpy<<<(N + 127) / 128, 128>>>(N, 2.0f, d_x, d_y);" in result
    assert result.replace(NEW_KERNEL, "").count("__restrict__") == 0
    assert len(built.edits) == 2


def test_edit_keeps_launch_site_when_launch_unchanged():
    built = build_edit(SOURCE, SOURCE, "saxpy", best_version(optimized_source(), BEFORE), BEFORE)
    assert len(built.edits) == 1
    assert "saxpy<<<(N + 255) / 256, 256>>>" in apply_edits(SOURCE, built.edits)


def test_edit_translates_ceil_div_dim3_shared_and_expression_arguments():
    source = SOURCE.replace("saxpy<<<(N + 255) / 256, 256>>>(N, 2.0f", "saxpy<<<(N + 255) / 256, 256>>>(N * 2, 2.0f")
    after = LaunchConfig(("ceil_div(n, 64)", "2"), ("64", "2"), "n * 4")
    built = build_edit(source, source, "saxpy", best_version(optimized_source(source), after), BEFORE)
    assert built.problems == ()
    result = apply_edits(source, built.edits)
    assert "saxpy<<<dim3(((N * 2) + 64 - 1) / 64, 2), dim3(64, 2), (N * 2) * 4>>>(N * 2, 2.0f" in result


def test_edit_refuses_launch_it_cannot_express_and_a_changed_kernel():
    after = LaunchConfig(("(unknown + 127) / 128",), ("128",), "0")
    built = build_edit(SOURCE, SOURCE, "saxpy", best_version(optimized_source(), after), BEFORE)
    assert built.problems and "line 13" in built.problems[0]
    edited = SOURCE.replace("a * x[i]", "a * x[i] * 1.0f")
    stale = build_edit(edited, SOURCE, "saxpy", best_version(optimized_source(), BEFORE), BEFORE)
    assert stale.edits == () and "changed" in stale.problems[0]


def test_edit_refuses_a_version_that_differs_outside_the_kernel():
    best = best_version(optimized_source().replace("return 0;", "return 2;"), BEFORE)
    built = build_edit(SOURCE, SOURCE, "saxpy", best, BEFORE)
    assert built.edits == () and "outside the kernel" in built.problems[0]


def test_edit_rebased_on_text_changed_outside_the_kernel():
    current = "// a comment added above\n" + SOURCE.replace("return 0;", "return 1;")
    built = build_edit(current, SOURCE, "saxpy", best_version(optimized_source(), BEFORE), BEFORE)
    result = apply_edits(current, built.edits)
    assert result.startswith("// a comment added above\n") and NEW_KERNEL in result and "return 1;" in result


def test_host_expression_and_ceil_div():
    assert ceil_div_to_c("ceil_div(n, 256)") == "(n + 256 - 1) / 256"
    assert ceil_div_to_c("ceil_div(ceil_div(n, 2), 4)") == "(((n + 2 - 1) / 2) + 4 - 1) / 4"
    assert ceil_div_to_c("ceil_div(n)") is None
    assert host_expression("min(n, 1024)", {"n": "N * 2"}) == "min((N * 2), 1024)"
    assert host_expression("m + 1", {"n": "N"}) is None


def test_kernel_changed_and_kernel_text():
    assert kernel_text(SOURCE, "saxpy") == KERNEL_TEXT
    assert kernel_text(SOURCE, "missing") == ""
    assert not kernel_changed(KERNEL_TEXT, "// x\n" + SOURCE, "saxpy")
    assert kernel_changed(KERNEL_TEXT, SOURCE.replace("i < n", "i <= n"), "saxpy")
    assert kernel_changed(KERNEL_TEXT, "int main() {}", "saxpy")


def test_an_applier_version_carries_its_edits_and_they_move_with_the_kernel():
    """An applier's version brings its edits (an include at the top and the kernel's body here):
    they are applied as they are, no comparison of texts, and follow the kernel when the user
    has typed above it since the search started."""
    kernel_at = SOURCE.index("__global__")
    body_at = SOURCE.index("{", kernel_at) + 1
    body_end = SOURCE.index("}\n", kernel_at)
    new_body = "\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = a * x[i] + y[i] + 0.0f;\n"
    edits = (edit_of(SOURCE, 0, 0, "#include <cub/cub.cuh>\n"), edit_of(SOURCE, body_at, body_end, new_body))
    best = replace(best_version(apply_edits(SOURCE, edits), BEFORE), edits=edits)
    built = build_edit(SOURCE, SOURCE, "saxpy", best, BEFORE)
    assert built.problems == () and apply_edits(SOURCE, built.edits) == best.source
    typed = "// typed since\n" + SOURCE
    moved = build_edit(typed, SOURCE, "saxpy", best, BEFORE)
    assert moved.problems == ()
    assert apply_edits(typed, moved.edits) == "#include <cub/cub.cuh>\n// typed since\n" + SOURCE[:body_at] + new_body + \
        SOURCE[body_end:]


def test_an_applier_version_that_edits_text_the_user_changed_is_refused():
    helper_at = SOURCE.index("__global__")
    edits = (edit_of(SOURCE, helper_at - 1, helper_at - 1, "\n// helper\n"),)
    best = replace(best_version(apply_edits(SOURCE, edits), BEFORE), edits=edits)
    built = build_edit("// typed since\n" + SOURCE, SOURCE, "saxpy", best, BEFORE)
    assert built.edits == () and built.problems
