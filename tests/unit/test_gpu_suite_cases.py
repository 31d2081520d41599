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
