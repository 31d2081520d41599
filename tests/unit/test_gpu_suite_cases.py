"""The GPU suite's case tables are complete: checked here, without a GPU, so a case added to the
appliers' unit tests cannot reach the H200 run without the sizes its GPU check needs (a missing
entry once failed only on the GPU host, `KeyError: 'pragma_unroll'`)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

GPU_SUITE = Path(__file__).resolve().parents[1] / "gpu" / "test_appliers_gpu.py"


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpu_appliers_cases", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_gpu_applier_case_has_sizes_for_each_parameter() -> None:
    suite = _load(GPU_SUITE)
    for applier, case, source, kernel, launch in suite.CASES:
        spec_text = suite._spec(source, kernel, launch, case)  # raises KeyError on a missing size
        assert f'name = "{kernel}"' in spec_text, (applier.__name__, case)


def test_the_whole_grid_kernels_have_their_grids() -> None:
    """tests/gpu/test_structural_grids_gpu.py checks whole grids on `WHOLE_GRIDS` only (the other GPU
    files a sample): every applier with a grid (its module orders one with `grid_order`) has a
    kernel there, and each kernel still gets the grid points listed for it on an H200's limits."""
    import inspect

    from applier_results import ROOT, WHOLE_GRIDS

    from regrapht.app.optimize import kernel_target
    from regrapht.search.appliers import APPLIERS, ApplierInput, DeviceLimits, rewrites_of
    from regrapht.spec.model import load_spec

    by_name = {type(a).__name__: a for a in APPLIERS}
    with_grids = {name for name, a in by_name.items() if "grid_order(" in inspect.getsource(inspect.getmodule(a) or a)}
    assert with_grids == {name for name, _ in WHOLE_GRIDS.values()}
    for case, (name, points) in WHOLE_GRIDS.items():
        [kernel] = load_spec(ROOT / f"{case}.regrapht.toml").kernels
        target = kernel_target(kernel)
        given = ApplierInput((ROOT / f"{case}.cu").read_text(), kernel.name, target.launch, target.constants,
                             DeviceLimits(132, 2048, 1024, 48 * 1024))
        rewrites = rewrites_of(by_name[name], given)
        assert len(rewrites) == points and any(r.params for r in rewrites), (case, name, len(rewrites))
