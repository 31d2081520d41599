"""Appliers return edits, not files: every rewrite's edits apply to its input to give its
`source`, never overlap, and touch the text outside the kernel only where an applier means to
(an `#include` at the top, helpers or state just before the kernel)."""

from __future__ import annotations

from pathlib import Path

from regrapht.app.optimize import kernel_target
from regrapht.search.appliers import APPLIERS, ApplierInput, DeviceLimits, Rewrite, rewrites_of
from regrapht.search.appliers.common import body_edits, edits
from regrapht.search.source import find_kernel
from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import load_spec
from regrapht.text import apply_edits, edit_offsets

ROOT = Path(__file__).resolve().parents[3]
H200 = DeviceLimits(132, 2048, 1024, 48 * 1024)
# One spec of each red-team family, the tasks and the examples: every applier has rewrites here.
SPECS = sorted({*ROOT.glob("examples/*.regrapht.toml"), *ROOT.glob("bench/tasks/*/*.regrapht.toml"),
                *(sorted(d.glob("*.regrapht.toml"))[0] for d in (ROOT / "tests/data/redteam").iterdir()
                  if d.is_dir() and any(d.glob("*.regrapht.toml"))),
                ROOT / "tests/data/redteam/argmax/row_top4_insertion.regrapht.toml",
                ROOT / "tests/data/redteam/conv/dw_nhwc_channel_fastest.regrapht.toml",
                # FirstIndexMin's (issue 26): a train kernel, no example or task has its shape
                ROOT / "bench/corpus/train/first_negative_f32/first_negative_f32.regrapht.toml"})


def inputs_of(spec_path: Path) -> list[ApplierInput]:
    source = spec_path.with_name(spec_path.name.removesuffix(".regrapht.toml") + ".cu").read_text(encoding="utf-8")
    out = []
    for kernel in load_spec(spec_path).kernels:
        target = kernel_target(kernel)
        out.append(ApplierInput(source, kernel.name, target.launch, target.constants, H200))
    return out


def check_edits(given: ApplierInput, rewrite: Rewrite) -> None:
    assert rewrite.base == given.source
    located = edit_offsets(given.source, rewrite.edits)  # raises when two overlap
    assert apply_edits(given.source, rewrite.edits) == rewrite.source
    assert rewrite.edits or rewrite.launch != given.launch, "a rewrite that changes nothing"
    kernel = find_kernel(given.source, given.kernel)
    assert kernel is not None
    for start, end, new_text in located:
        inside = kernel.start <= start and end <= kernel.end
        include_at_top = start == end == 0 and new_text.startswith("#include")
        before_kernel = start == end == kernel.start
        assert inside or include_at_top or before_kernel, (start, end, new_text[:80])


def rewrites_by_applier() -> dict[str, int]:
    counts: dict[str, int] = {}
    for spec in SPECS:
        for given in inputs_of(spec):
            for applier in APPLIERS:
                rewrites = rewrites_of(applier, given)
                for rewrite in rewrites:
                    check_edits(given, rewrite)
                counts[type(applier).__name__] = counts.get(type(applier).__name__, 0) + len(rewrites)
    return counts


def test_every_applier_returns_edits_that_give_its_source() -> None:
    counts = rewrites_by_applier()
    assert set(counts) == {type(a).__name__ for a in APPLIERS}
    assert all(counts.values()), f"appliers without a rewrite to check: {[n for n, c in counts.items() if not c]}"


def test_a_rewrite_without_edits_is_its_base() -> None:
    text = "__global__ void k(float *x) {\n    x[0] = 1.0;\n}\n"
    rewrite = Rewrite(text, LaunchConfig(("1",), ("64",)), "launch only")
    assert rewrite.source == text and rewrite.edits == ()


def test_then_and_rebased_compose_edits() -> None:
    text = "a\n__global__ void k(float *x) {\n    x[0] = 1.0;\n}\n"
    kernel = find_kernel(text, "k")
    assert kernel is not None
    given = ApplierInput(text, "k", LaunchConfig(("1",), ("64",)))
    rewrite = Rewrite(text, given.launch, "body", edits=body_edits(given, kernel, "\n    x[0] = 2.0f;\n"))
    then = rewrite.then(edits(rewrite.source, (0, 0, "#include <cub/cub.cuh>\n")))
    assert then.base == text and then.source == "#include <cub/cub.cuh>\n" + rewrite.source
    derived = text.replace("x[0] = 1.0;", "x[0] = 1.0;   ")  # an input written differently in the kernel
    moved = Rewrite(derived, given.launch, "body", edits=edits(derived, (0, 1, "b"))).rebased(text)
    assert moved.base == text and moved.source == "b" + derived[1:]
