"""Specs from a capture, on the hand-made capture directory tests/data/capture/handmade/ (what the
injection library writes for six launches, and a line torn by a crash): reading it, one spec per
kernel and launch shape with exact launches and scalars, counts from the allocations, roles from
the write sets, captured data as file() inputs and expect outputs, and the kernels no spec can
express skipped with their reason."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from regrapht.capture.manifest import Allocation, Launch, Param, Written, load_capture, read_recorded
from regrapht.capture.run import CaptureOptions, finish
from regrapht.capture.specs import SpecWriter, file_stem, typed_signature
from regrapht.errors import InputError
from regrapht.spec.model import load_spec
from regrapht.spec.resolve import resolve
from regrapht.validate.mangle import mangle

HANDMADE = Path(__file__).resolve().parents[2] / "data" / "capture" / "handmade"
BLUR_SOURCE = """template <typename T, int R>
__global__ void blur(const T *__restrict__ in, T *out, int w, int h, float s)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h) out[y * w + x] = in[y * w + x] * R;
}
"""


@pytest.fixture
def capture_dir(tmp_path: Path) -> Path:
    out = tmp_path / "cap"
    shutil.copytree(HANDMADE, out)
    return out


def written(capture_dir: Path, sources: Path | None = None):
    return finish(CaptureOptions(("./app", "--frames", "2"), capture_dir, data=True,
                                 sources=sources or capture_dir / "no-sources"), 0, 0.0)


def test_reading_what_the_library_wrote(capture_dir: Path) -> None:
    recorded = read_recorded(capture_dir)
    assert [launch.id for launch in recorded.launches] == [1, 2, 3, 4, 5, 6]
    assert recorded.status.state == "capturing"
    assert recorded.seen == {"_Z4blurIfLi3EEvPKT_PS0_iif": 40, "_Z9histogramPKiPji": 1}
    assert any(note.startswith("launches.jsonl:8: unreadable line skipped") for note in recorded.notes)
    blur = recorded.launches[0]
    assert blur.complete and blur.grid == (1, 8, 1) and blur.params[1].allocation == 1


def test_one_spec_per_kernel_and_shape_with_the_captured_data(capture_dir: Path, tmp_path: Path) -> None:
    sources = tmp_path / "src"
    sources.mkdir()
    (sources / "blur.cu").write_text(BLUR_SOURCE)
    outcome = written(capture_dir, sources)
    manifest = load_capture(capture_dir)
    assert outcome.exit_code == 0 and manifest.command == ("./app", "--frames", "2")
    blur = manifest.specs_for("blur")[0]
    assert blur.kernel == "blur<float, 3>" and blur.launches == (1, 2) and blur.data
    assert blur.file == "specs/blur_float_3.regrapht.toml" and blur.source == str((sources / "blur.cu").resolve())
    text = (capture_dir / blur.file).read_text()
    assert 'count = "w * h"' in text  # the image's count spelled with the scalars that make it
    kernel = load_spec(capture_dir / blur.file).kernel("blur<float, 3>")
    assert [a.name for a in kernel.args] == ["in", "out", "w", "h", "s"]
    # no launch site in the source: y is the one scalar that gives it, x (1) stays literal
    assert kernel.grid == (1, "h") and kernel.block == (16,)
    resolved = resolve(kernel)
    assert resolved.scalars == {"w": 16, "h": 8, "s": 0.5} and resolved.grid == (1, 8, 1)
    src, dst = resolved.buffers
    assert (src.count, src.role, dst.count, dst.role) == (128, "in", 144, "inout")  # dst: to its allocation's end
    image = np.arange(128, dtype=np.float32) * np.float32(0.25)
    assert np.array_equal(np.load(src.init.path), image)
    assert np.array_equal(np.load(dst.init.path), np.zeros(144, np.float32))
    expected = np.load(dst.expect)
    assert np.array_equal(expected[:128], image * 3) and not expected[128:].any()


def test_what_cannot_be_captured_exactly_is_said(capture_dir: Path) -> None:
    written(capture_dir)
    manifest = load_capture(capture_dir)
    histogram = manifest.specs_for("histogram")[0]
    text = (capture_dir / histogram.file).read_text()
    assert "over the snapshot cap" in text and "point into one allocation" in text and "managed memory" in text
    kernel = load_spec(capture_dir / histogram.file).kernel("histogram")
    resolved = resolve(kernel)
    assert resolved.shared_bytes == 1024
    assert [(b.count, b.role, b.init.kind) for b in resolved.buffers] == [(2048, "in", "randint"),
                                                                         (1024, "inout", "randint")]
    assert 'count = "p2"' in text  # the histogram's 1024 bins are the scalar n, named by position
    reasons = {str(s["kernel"]): str(s["reason"]) for s in manifest.skipped}
    assert "null" in reasons["fill"]
    assert "extern \"C\"" in reasons["plain_c"]
    assert "step(Params)" not in reasons  # a struct by value is its bytes
    step = load_spec(capture_dir / manifest.specs_for("step")[0].file).kernel("step")
    (params,) = step.args
    assert params.is_struct and params.ctype.base == "Params" and params.raw == bytes(16) and params.align == 16
    assert mangle("step", [a.ctype for a in step.args]) == "_Z4step6Params"  # how the kernel is found
    assert any("over the snapshot cap" in note for note in manifest.notes)


def test_file_inputs_are_checked_against_the_buffer(capture_dir: Path) -> None:
    written(capture_dir)
    spec_path = capture_dir / "specs" / "blur_float_3.regrapht.toml"
    data = capture_dir / "specs" / "captures" / "L000001-p0.npy"
    np.save(data, np.zeros(128, dtype=np.float64))
    with pytest.raises(InputError, match=r"kernel\[0\]\.arg\[0\]\.init.*float64 elements, the buffer is float32"):
        load_spec(spec_path)
    np.save(data, np.zeros(100, dtype=np.float32))
    with pytest.raises(InputError, match="holds 100 elements, the buffer's count is 128"):
        load_spec(spec_path)
    data.write_bytes(b"not numpy")
    with pytest.raises(InputError, match="is not a .npy file"):
        load_spec(spec_path)
    data.unlink()
    with pytest.raises(InputError, match="No such file"):
        load_spec(spec_path)


def test_names_of_kernels_and_files() -> None:
    assert file_stem("ns::blur<float, 3>") == "ns_blur_float_3"
    recorded = read_recorded(HANDMADE)
    typed = typed_signature(recorded.launches[0])
    assert not isinstance(typed, str) and typed.name == "blur<float, 3>"
    assert [p.spelled() for p in typed.params] == ["const float*", "float*", "int", "int", "float"]


def _launch(mangled: str, demangled: str, params: list[Param], allocations: list[Allocation]) -> Launch:
    return Launch(1, "exit", "cuLaunchKernel", mangled, demangled, (64, 1, 1), (128, 1, 1), 0, 0, 0, False,
                  "driver", tuple(params), tuple(allocations))


def test_a_float_reduction_gets_a_reductions_tolerances(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "in.bin").write_bytes(np.ones(4096, np.float32).tobytes())
    (data / "out.before.bin").write_bytes(np.zeros(1, np.float32).tobytes())
    (data / "out.after.bin").write_bytes(np.float32([4096]).tobytes())
    allocations = [Allocation(0x1000, 4096 * 4, before="data/in.bin", written=Written(0, -1, -1)),
                   Allocation(0x90000, 4, before="data/out.before.bin", after="data/out.after.bin",
                              written=Written(2, 2, 3))]
    params = [Param(0, 8, (0x1000).to_bytes(8, "little"), 0), Param(8, 8, (0x90000).to_bytes(8, "little"), 1),
              Param(16, 4, np.int32(4096).tobytes()), Param(20, 4, np.int32(4096).tobytes())]
    writer = SpecWriter(tmp_path, "./app")
    result = writer.write_all([_launch("_Z3sumPKfPfii", "sum(float const*, float*, int, int)", params, allocations)])
    kernel = load_spec(tmp_path / result.entries[0].file).kernel("sum")
    assert (kernel.rtol, kernel.atol) == (1e-3, 1e-2)
    assert kernel.args[0].count == "p2"  # equal to two scalars: the first one names it
    square = [Param(0, 8, (0x1000).to_bytes(8, "little"), 0), Param(8, 4, np.int32(64).tobytes()),
              Param(12, 4, np.int32(64).tobytes()), Param(16, 4, np.int32(2).tobytes())]
    result = SpecWriter(tmp_path, "./app", rtol=1e-4).write_all(
        [_launch("_Z3blkPKfiii", "blk(float const*, int, int, int)", square, allocations[:1])])
    text = (tmp_path / result.entries[0].file).read_text()
    assert 'count = "p1 * p3"' not in text and 'count = "p1 * p2"' in text  # different scalars before a square
    assert load_spec(tmp_path / result.entries[0].file).kernel("blk").rtol == 1e-4  # --rtol wins


def test_a_captured_grid_is_written_as_the_expression_that_reproduces_it() -> None:
    from regrapht.capture.specs import grid_expressions

    # the launch site's expressions, where they give the captured grid
    assert grid_expressions((128, 128, 1), (32, 32, 1), {"rows": 4096, "cols": 4096},
                            ("(cols + 31) / 32", "(rows + 31) / 32")) == ["(cols + 31) / 32", "(rows + 31) / 32"]
    # no site: the one scalar whose ceiling division by the block gives it
    assert grid_expressions((4096, 1, 1), (256, 1, 1), {"n": 1048576, "level": 3}) == ["(n + 255) / 256"]
    # a site expression that does not reproduce it is not used; two scalars that would: the literal
    assert grid_expressions((128, 64, 1), (32, 32, 1), {"rows": 2048, "cols": 4096},
                            ("(rows + 31) / 32", "(cols + 31) / 32")) == ["(cols + 31) / 32", "(rows + 31) / 32"]
    assert grid_expressions((128, 1, 1), (32, 1, 1), {"a": 4096, "b": 4090}) == [128]
    # a fixed grid (a grid-stride kernel's) stays literal
    assert grid_expressions((264, 1, 1), (256, 1, 1), {"n": 1 << 24}) == [264]


def test_the_launch_site_grid_is_read_over_the_kernel_parameters() -> None:
    from regrapht.capture.specs import launch_site_grid

    program = Path(__file__).resolve().parents[2] / "data/capture/programs/image_pipeline/image_pipeline.cu"
    # transpose_image<<<dim3((width + 31) / 32, (height + 31) / 32), ...>>>(rotated, blurred, height, width)
    assert launch_site_grid(program, "transpose_image") == ("(cols + 31) / 32", "(rows + 31) / 32")
    assert launch_site_grid(program, "no_such_kernel") == ()
