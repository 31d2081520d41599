"""`regrapht optimize` and the editor agree without a spec: both infer one, and neither times on
a spec whose `guessed` lists values not proven from the kernel unless that was accepted."""

from __future__ import annotations

from pathlib import Path

import pytest

from regrapht.app.optimize import choose_spec, refuse_guesses, spec_guesses
from regrapht.errors import InputError
from regrapht.search.request import OptimizeOptions, OptimizeRequest

PROVEN = """__global__ void scale(float* y, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2.0f * x[i]; }
void run(float* y, const float* x, int n) { scale<<<(n + 255) / 256, 256>>>(y, x, n); }
"""
GUESSED = "__global__ void lonely(float* y, int n) { y[blockIdx.x * blockDim.x + threadIdx.x] = n; }\n"


def test_an_inferred_spec_with_proven_counts_runs_and_one_with_guesses_is_refused(tmp_path: Path) -> None:
    options = OptimizeOptions(infer_spec=True)
    (tmp_path / "scale.cu").write_text(PROVEN)
    proven = choose_spec(OptimizeRequest("scale", PROVEN, tmp_path / "scale.cu", options=options))
    assert spec_guesses(proven, "scale") == () and "proven" in proven.note
    refuse_guesses(proven, "scale")
    (tmp_path / "lonely.cu").write_text(GUESSED)
    guessed = choose_spec(OptimizeRequest("lonely", GUESSED, tmp_path / "lonely.cu", options=options))
    assert {"grid", "block"} <= set(spec_guesses(guessed, "lonely"))
    with pytest.raises(InputError, match="--accept-guesses"):
        refuse_guesses(guessed, "lonely")
