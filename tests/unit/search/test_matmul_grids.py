"""The parameter grids of MatmulTiling, BatchedSmallMatmul and JammedOutputs (issue 12).

Each offers its hand-picked variants exactly as before the grids (tests/data/grids/
matmul_first_variants.json holds their notes, launches and source hashes on every train and
red-team kernel they match, with and without a device, as main produced them at f655156), then
the rest of its grid in lexicographic order of `Rewrite.params`. Every rewrite carries its
applier's coordinates; no two share them or their code.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from regrapht.app.optimize import kernel_target
from regrapht.search.appliers import ApplierInput, DeviceLimits, rewrites_of
from regrapht.search.appliers.batched_matmul import BatchedSmallMatmul
from regrapht.search.appliers.common import Applier, Rewrite
from regrapht.search.appliers.matmul import MatmulTiling
from regrapht.search.appliers.output_jam import JammedOutputs
from regrapht.spec.model import load_spec

ROOT = Path(__file__).resolve().parents[3]
FIRST_VARIANTS: dict[str, list[str]] = json.loads((ROOT / "tests/data/grids/matmul_first_variants.json").read_text())
APPLIERS: dict[str, Applier] = {a.__class__.__name__: a for a in (MatmulTiling(), BatchedSmallMatmul(), JammedOutputs())}
PARAM_NAMES = {
    "MatmulTiling": ("tile_m", "tile_n", "tile_k", "thread_m", "thread_n", "double_buffer"),
    "BatchedSmallMatmul": ("thread_m", "thread_n", "passes"),
    "JammedOutputs": ("outputs_per_thread",),
}
DEVICES = {"dev": DeviceLimits(132, 2048, 1024, 48 * 1024), "nodev": None}
SPLITS = {"train": ROOT / "bench/corpus/train", "redteam": ROOT / "tests/data/redteam"}


def _input(key: str) -> tuple[Applier, ApplierInput]:
    """`key`: `<split>/<dir>/<stem>:<kernel>:<applier>:<dev|nodev>`."""
    path, kernel_name, applier, device = key.rsplit(":", 3)
    split, rest = path.split("/", 1)
    spec = SPLITS[split] / f"{rest}.regrapht.toml"
    [kernel] = [k for k in load_spec(spec).kernels if k.name == kernel_name]
    target = kernel_target(kernel)
    source = spec.with_name(spec.name.removesuffix(".regrapht.toml") + ".cu").read_text()
    return APPLIERS[applier], ApplierInput(source, kernel.name, target.launch, target.constants, DEVICES[device])


def _described(rewrite: Rewrite) -> str:
    source = hashlib.sha256(rewrite.source.encode()).hexdigest()[:16]
    return f"{rewrite.note} | {', '.join(rewrite.launch.grid)} | {', '.join(rewrite.launch.block)} | {source}"


@pytest.mark.parametrize("key", sorted(FIRST_VARIANTS))
def test_first_variants_unchanged_then_a_grid_of_distinct_coordinates(key: str) -> None:
    applier, given = _input(key)
    rewrites = rewrites_of(applier, given)
    first = FIRST_VARIANTS[key]
    assert [_described(r) for r in rewrites[: len(first)]] == first
    name = key.rsplit(":", 3)[2]
    assert all(tuple(n for n, _ in r.params) == PARAM_NAMES[name] for r in rewrites)
    assert len({r.params for r in rewrites}) == len(rewrites)
    assert len({(r.source, r.launch) for r in rewrites}) == len(rewrites)
    rest = [tuple(v for _, v in r.params) for r in rewrites[len(first):]]
    assert rest == sorted(rest)
    if name == "JammedOutputs":
        assert len(rewrites) == 4  # 4, 8, then 2, 16 (these convolutions fill any device at 16)
    else:
        assert 11 <= len(rewrites) <= 32, len(rewrites)


def test_every_train_kernel_the_appliers_matched_is_pinned() -> None:
    train = {key.split(":")[0] for key in FIRST_VARIANTS if key.startswith("train/")}
    assert train == {"train/bmm_fixed16/bmm_fixed16", "train/bmm_flat_f64/bmm_flat_f64",
                     "train/bmm_helper_alpha_beta/bmm_helper_alpha_beta", "train/bmm_tpl_gridstride/bmm_tpl_gridstride",
                     "train/bmm_z_tn/bmm_z_tn", "train/conv3x3_multichannel/conv3x3_multichannel",
                     "train/gemm_nt/gemm_nt", "train/ibmm_while_z/ibmm_while_z"}
