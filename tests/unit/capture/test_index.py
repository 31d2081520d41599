"""Finding captures: `--capture DIR` to a spec (renamed after the source where the capture could not
name its parameters), and the captures near a file for the editor (a spec that names another
source file is not this file's kernel)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from regrapht.capture.index import captures_near, kernel_captures, spec_for_source, spec_from_capture
from regrapht.capture.run import CaptureOptions, finish
from regrapht.errors import InputError

HANDMADE = Path(__file__).resolve().parents[2] / "data" / "capture" / "handmade"
BLUR = "template <typename T, int R>\n__global__ void blur(const T *a, T *b, int cols, int rows, float s) {}\n"


def make_capture(folder: Path, sources: Path) -> Path:
    out = folder / ".regrapht" / "captures" / "app"
    shutil.copytree(HANDMADE, out)
    finish(CaptureOptions(("./app",), out, data=True, sources=sources), 0, 0.0)
    return out


def test_the_spec_of_a_kernel_and_its_names(tmp_path: Path) -> None:
    out = make_capture(tmp_path, tmp_path / "nothing-here")
    assert spec_from_capture(out, "blur<float, 3>") == out / "specs" / "blur_float_3.regrapht.toml"
    assert spec_from_capture(out, "blur") == out / "specs" / "blur_float_3.regrapht.toml"  # by its base name
    named = spec_for_source(out, "blur", BLUR)
    assert named.name == "blur_float_3.named.regrapht.toml"
    assert 'name = "cols"' in named.read_text() and 'count = "cols * rows"' in named.read_text()
    # a source that does not declare the kernel keeps the positional names
    assert spec_for_source(out, "blur", "__global__ void other(int n) {}\n").name == "blur_float_3.regrapht.toml"
    with pytest.raises(InputError, match="no spec for kernel 'fill'.*skipped: pointer parameter 0 is null"):
        spec_from_capture(out, "fill")
    with pytest.raises(InputError, match="no spec for kernel 'missing'"):
        spec_from_capture(out, "missing")


def test_captures_near_a_file_and_whose_kernel_they_hold(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src" / "deep").mkdir(parents=True)
    (project / "src" / "blur.cu").write_text(BLUR)
    (project / "src" / "deep" / "blur.cu").write_text(BLUR)
    out = make_capture(project, project / "src")  # the parameter names from src/blur.cu: its spec names it
    assert captures_near(project / "src" / "deep" / "blur.cu") == [out]
    assert captures_near(tmp_path / "elsewhere.cu") == []
    found = kernel_captures(project / "src" / "blur.cu", "blur")
    assert [c.launches for c in found] == [2] and found[0].summary() == "captured from `./app` (2 launches)"
    assert kernel_captures(project / "src" / "blur.cu", "nothing") == []
    (out / "capture.json").write_text("not json")  # an unreadable capture is no capture, not an error
    assert kernel_captures(project / "src" / "blur.cu", "blur") == []


def test_the_editor_shows_a_capture_only_on_the_file_that_declares_the_kernel(tmp_path: Path) -> None:
    from regrapht.lsp.features.captured import captures_for

    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "blur.cu").write_text(BLUR)
    (project / "other.cu").write_text(BLUR)  # a kernel of the same name in another file
    make_capture(project, project / "src")
    assert [c.launches for c in captures_for((project / "src" / "blur.cu").as_uri(), "blur")] == [2]
    assert captures_for((project / "other.cu").as_uri(), "blur") == []
    assert captures_for("untitled:Untitled-1", "blur") == []
