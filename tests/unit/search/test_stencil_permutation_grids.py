"""The grids of RegisterColumnStencil, HaloTiledStencil and TiledPermutation (issue 12) on the
train and red-team kernels: the variants offered before the grids come first, their text
unchanged (tests/data/grids/stencil_permutation_first_choices.json holds their notes, launches
and a sha256 prefix of their sources as main produced them before the grids, with the guard
terms in the coordinates' order; kernels recognized later, such as the red-team transposes read in
plain form by issue 30, pinned as they were first produced, after their GPU check), then the grid;
every rewrite carries its coordinates, and no two share them or their code."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from regrapht.app.optimize import kernel_target
from regrapht.search.appliers import ApplierInput, DeviceLimits, Rewrite, rewrites_of
from regrapht.search.appliers.permutation import TiledPermutation
from regrapht.search.appliers.stencil import HaloTiledStencil
from regrapht.search.appliers.stencil_columns import RegisterColumnStencil
from regrapht.spec.model import load_spec

ROOT = Path(__file__).resolve().parents[3]
FIRST_CHOICES: dict[str, list[str]] = json.loads(
    (ROOT / "tests/data/grids/stencil_permutation_first_choices.json").read_text())
H200_LIKE = DeviceLimits(132, 2048, 1024, 48 * 1024)
APPLIERS = (RegisterColumnStencil(), HaloTiledStencil(), TiledPermutation())
# "train/<kernel directory>" and "redteam/<family>"
SPECS = sorted({"/".join(key.split("/")[:2]) for key in FIRST_CHOICES})


def _spec_dir(group: str) -> Path:
    kind, name = group.split("/")
    return ROOT / ("bench/corpus/train" if kind == "train" else "tests/data/redteam") / name


def _inputs(group: str) -> list[tuple[str, ApplierInput]]:
    """(key prefix, input) of each kernel of the spec files under one train kernel or red-team family."""
    out = []
    for spec in sorted(_spec_dir(group).glob("*.regrapht.toml")):
        source = spec.with_name(spec.name.removesuffix(".regrapht.toml") + ".cu").read_text()
        for kernel in load_spec(spec).kernels:
            target = kernel_target(kernel)
            for device_name, device in (("h200", H200_LIKE), ("none", None)):
                given = ApplierInput(source, kernel.name, target.launch, target.constants, device)
                out.append((f"{group}/{kernel.name}/{device_name}", given))
    return out


def described(rewrite: Rewrite) -> str:
    source = hashlib.sha256(rewrite.source.encode()).hexdigest()[:16]
    return f"{rewrite.note} | {' , '.join(rewrite.launch.grid)} | {'x'.join(rewrite.launch.block)} | {source}"


@pytest.mark.parametrize("group", SPECS)
def test_first_choices_unchanged_then_a_grid_with_distinct_coordinates(group: str) -> None:
    seen = 0
    for prefix, given in _inputs(group):
        for applier in APPLIERS:
            key = f"{prefix}/{type(applier).__name__}"
            rewrites = rewrites_of(applier, given)
            if key not in FIRST_CHOICES:
                assert rewrites == [], key  # no applier matches a kernel it did not match before
                continue
            seen += 1
            first = FIRST_CHOICES[key]
            assert [described(r) for r in rewrites[: len(first)]] == first, key
            assert all(r.params for r in rewrites), key
            coordinates = [(r.params, r.launch.block) for r in rewrites]
            assert len(set(coordinates)) == len(coordinates), key
            assert len({(r.source, r.launch) for r in rewrites}) == len(rewrites), key
            rest = [(tuple(v for _, v in r.params), tuple(int(b) for b in r.launch.block)) for r in rewrites[len(first):]]
            assert rest == sorted(rest), key
    assert seen

