"""The rewrites of the idiom appliers' test kernels (tiled permutations, halo-tiled stencils,
register-blocked matmuls, privatised histograms, vectorized maps, grid-stride loops,
stencils coarsened down a column, outputs jammed along a channel), a deterministic sample per
kernel (`applier_results.gpu_sample`: the applier's first two, its grid's middle and last point;
whole grids are checked by test_structural_grids_gpu.py), checked against their original
on the GPU by the search's own evaluator (fresh inputs, the spec size and an odd size), and
timed. Marker gpu: skips cleanly without a device; the lead runs it on the H200."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "search"))

import test_histogram_applier as histogram_cases  # noqa: E402
import test_matmul_applier as matmul_cases  # noqa: E402
import test_output_jam_applier as jam_cases  # noqa: E402
import test_permutation_applier as permutation_cases  # noqa: E402
import test_stencil_applier as stencil_cases  # noqa: E402
import test_stencil_columns_applier as column_cases  # noqa: E402
import test_vectorize_applier as vectorize_cases  # noqa: E402
from applier_results import gpu_sample  # noqa: E402

from regrapht.app.optimize import kernel_target  # noqa: E402
from regrapht.search.appliers import ApplierInput, DeviceLimits  # noqa: E402
from regrapht.search.appliers.histogram import PrivatisedHistogram  # noqa: E402
from regrapht.search.appliers.launch import GridStrideLoop  # noqa: E402
from regrapht.search.appliers.matmul import MatmulTiling  # noqa: E402
from regrapht.search.appliers.output_jam import JammedOutputs  # noqa: E402
from regrapht.search.appliers.permutation import TiledPermutation  # noqa: E402
from regrapht.search.appliers.stencil import HaloTiledStencil  # noqa: E402
from regrapht.search.appliers.stencil_columns import RegisterColumnStencil  # noqa: E402
from regrapht.search.appliers.vectorize import VectorizedMap  # noqa: E402
from regrapht.search.source import find_kernel  # noqa: E402
from regrapht.spec.launch import LaunchConfig  # noqa: E402
from regrapht.spec.model import parse_spec  # noqa: E402
from regrapht.validate.compiler import Compiler  # noqa: E402
from regrapht.validate.evaluator import CheckSettings, CudaEvaluator  # noqa: E402
from regrapht.validate.types import Candidate  # noqa: E402
from regrapht.validate.worker import GpuWorker  # noqa: E402

pytestmark = pytest.mark.gpu

# Per case: scalar values, then per pointer (count, init); pointers not listed are outputs of
# the size named by `out`. Sizes are odd on purpose (edges of every tile are exercised).
FLOAT = "uniform(-1, 1)"
SIZES: dict[str, tuple[dict[str, str], dict[str, tuple[str, str]]]] = {
    # permutations
    "textbook": ({"rows": "1999", "cols": "3001"}, {"in": ("rows * cols", FLOAT), "out": ("rows * cols", "zeros")}),
    "early_return_locals": ({"rows": "1025", "cols": "2049"},
                            {"src": ("rows * cols", FLOAT), "dst": ("rows * cols", "zeros")}),
    "rotation_90": ({"h": "1537", "w": "2047"}, {"img": ("h * w", "randint(-100, 100)"), "rot": ("h * w", "zeros")}),
    "permute_3d": ({"D0": "37", "D1": "301", "D2": "257"},
                   {"a": ("D0 * D1 * D2", FLOAT), "b": ("D0 * D1 * D2", "zeros")}),
    "linear_index_rotation": ({"h": "1001", "w": "3003"}, {"src": ("h * w", FLOAT), "dst": ("h * w", "zeros")}),
    # stencils
    "jacobi_5pt_interior": ({"W": "2049", "H": "1537"}, {"in": ("W * H", FLOAT), "out": ("W * H", "zeros")}),
    "conv3x3_zero_padded": ({"W": "2047", "H": "1025"},
                            {"img": ("W * H", FLOAT), "k": ("9", FLOAT), "res": ("W * H", "zeros")}),
    "stencil_1d_radius": ({"n": "4000037"}, {"in": ("n", FLOAT), "out": ("n", "zeros")}),
    "heat_3d_7pt": ({"nx": "131", "ny": "67", "nz": "45", "c": "0.1"},
                    {"u": ("nx * ny * nz", FLOAT), "v": ("nx * ny * nz", "zeros")}),
    "depthwise_conv": ({"C": "7", "H": "301", "W": "517"},
                       {"x": ("C * H * W", FLOAT), "w": ("C * 9", FLOAT), "y": ("C * H * W", "zeros")}),
    "life_step_interior": ({"W": "1031", "H": "777"}, {"cur": ("W * H", "randint(0, 2)"), "next": ("W * H", "zeros")}),
    "conv3x3_continue_padding": ({"h": "1023", "w": "2047"},
                                 {"in": ("h * w", FLOAT), "wt": ("9", FLOAT), "out": ("h * w", "zeros")}),
    "blur_flat_index": ({"rows": "999", "cols": "1501"}, {"a": ("rows * cols", FLOAT), "b": ("rows * cols", "zeros")}),
    # stencils coarsened down a column (and the halo-tile cases above)
    "jacobi9_double": ({"W": "1029", "H": "1027"}, {"src": ("W * H", FLOAT), "dst": ("W * H", "zeros")}),
    "sobel_int_flat": ({"rows": "1001", "cols": "1503"},
                       {"img": ("rows * cols", "randint(-100, 100)"), "mag": ("rows * cols", "zeros")}),
    "box27_3d_loops": ({"nx": "131", "ny": "67", "nz": "45"}, {"f": ("nx * ny * nz", FLOAT), "g": ("nx * ny * nz", "zeros")}),
    "heat7_3d_offsets": ({"nx": "133", "ny": "65", "nz": "47", "alpha": "0.1"},
                         {"u": ("nx * ny * nz", FLOAT), "v": ("nx * ny * nz", "zeros")}),
    "depthwise_hwc_3d_launch": ({"H": "67", "W": "71", "C": "45"},
                                {"in": ("H * W * C", FLOAT), "filt": ("9 * C", FLOAT), "out": ("H * W * C", "zeros")}),
    "depthwise_chw_slices": ({"C": "7", "H": "301", "W": "517"},
                             {"x": ("C * H * W", FLOAT), "w": ("C * 9", FLOAT), "y": ("C * H * W", "zeros")}),
    "life_bytes": ({"W": "1031", "H": "777"}, {"cur": ("W * H", "randint(0, 2)"), "nxt": ("W * H", "zeros")}),
    "boundary_copy_else": ({"W": "1031", "H": "777"}, {"a": ("W * H", FLOAT), "b": ("W * H", "zeros")}),
    "depthwise_channel_from_the_grid": ({"C": "7", "H": "301", "W": "517"},
                                        {"in": ("C * H * W", FLOAT), "w": ("C * 9", FLOAT), "out": ("C * H * W", "zeros")}),
    "boundary_copy_then_return": ({"NX": "131", "NY": "67", "NZ": "45", "r": "0.1"},
                                  {"u": ("NX * NY * NZ", FLOAT), "v": ("NX * NY * NZ", "zeros")}),
    "march_z_from_a_2d_launch": ({"nx": "131", "ny": "67", "nz": "45", "c0": "0.4", "c1": "0.1"},
                                 {"in": ("nx * ny * nz", FLOAT), "out": ("nx * ny * nz", "zeros")}),
    "grid_stride_2d_interior": ({"nx": "1031", "ny": "777"}, {"u": ("nx * ny", FLOAT), "un": ("nx * ny", "zeros")}),
    "march_coordinate_named_t": ({"n": "2049", "steps": "1031"}, {"u": ("n * steps", FLOAT), "v": ("n * steps", "zeros")}),
    # outputs jammed along a channel (counts not multiples of 4 or 8: the clamped copies)
    "conv3x3_mc_guarded": ({"nin": "13", "nout": "27", "H": "129", "W": "257"},
                           {"x": ("nin * H * W", FLOAT), "wt": ("nout * nin * 9", FLOAT), "b": ("nout", FLOAT),
                            "y": ("nout * H * W", "zeros")}),
    "pointwise_conv_1x1_double": ({"cin": "37", "cout": "29", "pixels": "40001"},
                                  {"in": ("cin * pixels", FLOAT), "w": ("cout * cin", FLOAT),
                                   "out": ("cout * pixels", "zeros")}),
    "filter_bank_1d": ({"n": "200003", "filters": "21"},
                       {"signal": ("n", FLOAT), "taps": ("filters * 7", FLOAT), "responses": ("filters * n", "zeros")}),
    # matmuls
    "alpha_beta_fmaf_early_return": ({"M": "517", "N": "389", "K": "263", "alpha": "1.5", "beta": "-0.5"},
                                     {"A": ("M * K", FLOAT), "B": ("K * N", FLOAT), "C": ("M * N", FLOAT)}),
    "transposed_a": ({"M": "512", "N": "384", "K": "260"},
                     {"At": ("K * M", FLOAT), "B": ("K * N", FLOAT), "C": ("M * N", "zeros")}),
    "transposed_b_lda": ({"M": "301", "N": "257", "K": "129", "lda": "132", "ldb": "131", "ldc": "260"},
                         {"A": ("M * lda", FLOAT), "Bt": ("N * ldb", FLOAT), "C": ("M * ldc", "zeros")}),
    "pragma_unroll": ({"M": "517", "N": "389", "K": "263"},
                      {"A": ("M * K", FLOAT), "B": ("K * N", FLOAT), "C": ("M * N", "zeros")}),
    "batched_small": ({"batch": "301", "M": "32", "N": "32", "K": "32"},
                      {"A": ("batch * M * K", FLOAT), "B": ("batch * K * N", FLOAT), "C": ("batch * M * N", "zeros")}),
    # histograms
    "bytes": ({"n": "9000001"}, {"text": ("n", "randint(0, 256)"), "freq": ("256", "zeros")}),
    "top_bits_pointer_form": ({"n": "9000001"}, {"keys": ("n", "randint(0, 2147483647)"), "bins": ("4096", "zeros")}),
    "clamped_float_bins": ({"n": "9000001", "nb": "64"}, {"x": ("n", "uniform(-0.1, 1.1)"), "h": ("nb", "zeros")}),
    # maps
    "template_swish": ({"n": "5000003"}, {"x": ("n", FLOAT), "y": ("n", "zeros")}),
    "double_long_index": ({"n": "5000003"}, {"in": ("n", FLOAT), "out": ("n", "zeros")}),
    "in_place_axpy": ({"n": "5000003", "a": "0.75"}, {"x": ("n", FLOAT), "y": ("n", FLOAT)}),
    "gs_map": ({"n": "5000003"}, {"in": ("n", FLOAT), "out": ("n", "zeros")}),
    "gs_histogram": ({"n": "5000003"}, {"d": ("n", "randint(0, 256)"), "bins": ("256", "zeros")}),
    "gs_unsigned_with_locals": ({"n": "5000003"}, {"x": ("n", FLOAT), "y": ("n", "zeros")}),
    "row_gather": ({"count": "4001", "width": "257"},
                   {"table": ("1000 * width", FLOAT), "rows": ("count", "randint(0, 1000)"),
                    "out": ("count * width", "zeros")}),
}

def _name(source: str) -> str:
    """The kernel's spec name: `rotate90<int>` for a template instantiated in the file."""
    name = source.split("void ", 1)[1].split("(", 1)[0].strip()
    instance = source.split(f"template __global__ void {name}<", 1)
    return f"{name}<{instance[1].split('>', 1)[0]}>" if len(instance) == 2 else name


# (applier, case, source, kernel name, launch)
CASES: list[tuple[type, str, str, str, LaunchConfig]] = [
    *[(TiledPermutation, c, v[0], _name(v[0]), v[1]) for c, v in permutation_cases.MATCHES.items()],
    *[(HaloTiledStencil, c, v[0], _name(v[0]), v[1]) for c, v in stencil_cases.MATCHES.items()],
    *[(RegisterColumnStencil, c, v[0], _name(v[0]), v[1]) for c, v in column_cases.MATCHES.items()],
    *[(RegisterColumnStencil, f"columns_{c}", v[0], _name(v[0]), v[1]) for c, v in stencil_cases.MATCHES.items()
      if c != "stencil_1d_radius"],
    *[(MatmulTiling, c, v[0], _name(v[0]), v[1]) for c, v in matmul_cases.MATCHES.items()],
    *[(JammedOutputs, c, v[0], _name(v[0]), v[1]) for c, v in jam_cases.MATCHES.items()],
    *[(VectorizedMap, c, v[0], v[1], v[2]) for c, v in vectorize_cases.MATCHES.items()],
    *[(PrivatisedHistogram, c, v[0], _name(v[0]), histogram_cases.LAUNCH) for c, v in histogram_cases.MATCHES.items()],
    *[(GridStrideLoop, f"gs_{c}", v, _name(v), vectorize_cases.LAUNCH)
      for c, v in vectorize_cases.GRID_STRIDE_MATCHES.items()],
]


def _spec(source: str, kernel: str, launch: LaunchConfig, case: str) -> str:
    scalars, pointers = SIZES[case.removeprefix("columns_")]
    found = find_kernel(source, kernel)
    assert found is not None
    instance = kernel.split("<", 1)[1].rstrip(">") if "<" in kernel else "float"
    grid = ", ".join(f'"{g}"' for g in launch.grid)
    block = ", ".join(launch.block)
    lines = [f'[[kernel]]\nname = "{kernel}"\ngrid = [{grid}]\nblock = [{block}]\nrtol = 1e-4\natol = 1e-4\n']
    for param in found.params:
        type_text = param.type.replace("T *", f"{instance} *").replace("T*", f"{instance}*")
        lines.append(f'[[kernel.arg]]\nname = "{param.name}"\ntype = "{type_text}"')
        if param.is_pointer:
            count, init = pointers[param.name]
            role = "in" if "const" in type_text else "inout"
            lines.append(f'count = "{count}"\ninit = "{init}"\nrole = "{role}"')
        else:
            lines.append(f'value = "{scalars[param.name]}"')
        lines.append("")
    return "\n".join(lines)


def _check(applier: object, source: str, kernel: str, launch: LaunchConfig, case: str, worker: GpuWorker,
           compiler: Compiler, cache_dir: Path) -> None:
    spec = parse_spec(_spec(source, kernel, launch, case), file=f"{case}.regrapht.toml")
    evaluator = CudaEvaluator(source, kernel, spec, arch=None, worker=worker, cache_dir=cache_dir, compiler=compiler,
                              file=f"{case}.cu", settings=CheckSettings(check_timeout_s=30.0), env=os.environ)
    device = DeviceLimits.of(evaluator.device)
    constants = kernel_target(spec.kernels[0]).constants  # what the search hands the appliers
    rewrites = applier.apply(ApplierInput(source, kernel, launch, constants, device))  # type: ignore[attr-defined]
    assert rewrites, f"{case}: no rewrite"
    for rewrite in gpu_sample(rewrites):
        result = evaluator.evaluate(Candidate(rewrite.source, rewrite.launch))
        print(f"{case}: {rewrite.note}: {result.outcome} speedup {result.speedup}")
        assert result.verified, f"{case} / {rewrite.note}: {result.outcome}: {result.reason}"


@pytest.mark.parametrize("applier,case,source,kernel,launch", CASES, ids=[c[1] for c in CASES])
def test_rewrite_matches_the_original(applier: type, case: str, source: str, kernel: str, launch: LaunchConfig,
                                      gpu_worker: GpuWorker, compiler: Compiler, cache_dir: Path) -> None:
    _check(applier(), source, kernel, launch, case, gpu_worker, compiler, cache_dir)
