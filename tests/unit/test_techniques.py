"""The technique records (regrapht/techniques.py) are the one list of techniques: every name the
graph, the rules and the appliers use resolves to a record, each record's cross-references hold,
and each record has its page under docs/techniques/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from regrapht.app.optimize import kernel_target
from regrapht.graph import load_bundled_graph, normalise
from regrapht.rules import ALL_RULES
from regrapht.search.appliers import APPLIERS, ApplierInput, DeviceLimits, appliers_for, registered
from regrapht.spec.model import load_spec
from regrapht.techniques import (
    REFINEMENTS,
    SYNONYMS,
    TECHNIQUES,
    Technique,
    find_technique,
    is_structural,
    technique_named,
    technique_of_rule,
)

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def test_names_and_synonyms_are_normalised_and_unique() -> None:
    names = [t.name for t in TECHNIQUES]
    assert len(names) == len(set(names))
    aliases = [alias for t in TECHNIQUES for alias in t.synonyms]
    assert len(aliases) == len(set(aliases))
    assert set(aliases).isdisjoint(names)
    for name in [*names, *aliases]:
        assert normalise(name) == name, name
    assert dict(SYNONYMS) == {alias: t.name for t in TECHNIQUES for alias in t.synonyms}


def test_look_ups_by_name_and_synonym() -> None:
    assert find_technique("bank_conflict_padding") is technique_named("bank_conflict_padding")
    assert find_technique("shared_memory_padding") is technique_named("bank_conflict_padding")
    assert find_technique("no_such_technique") is None
    with pytest.raises(KeyError, match="no_such_technique"):
        technique_named("no_such_technique")
    with pytest.raises(KeyError, match="R999"):
        technique_of_rule("R999")


def test_kinds_give_the_refinements_and_unknown_names_are_structural() -> None:
    assert {t.kind for t in TECHNIQUES} == {"structural", "refinement"}
    assert {t.name for t in TECHNIQUES if not t.is_structural} == REFINEMENTS
    assert not is_structural("launch_configuration") and is_structural("shared_memory_tiling")
    assert is_structural("a_vertex_a_users_trajectories_added")


def test_every_graph_vertex_is_a_record() -> None:
    vertices = sorted(load_bundled_graph().techniques())
    assert [v for v in vertices if (found := find_technique(v)) is None or found.name != v] == []


def test_rules_and_records_point_at_each_other() -> None:
    for code, rule in ALL_RULES.items():
        assert rule.info.technique is technique_of_rule(code)
    claimed = [code for t in TECHNIQUES for code in t.rules]
    assert len(claimed) == len(set(claimed))
    assert sorted(claimed) == sorted(ALL_RULES)


def test_the_rules_table_names_each_rules_technique() -> None:
    rows = re.findall(r"^\| \[(R\d{3})\]\(R\d{3}\.md\) \|.*\| `([a-z_]+)` \|$",
                      (DOCS / "rules" / "README.md").read_text(encoding="utf-8"), re.M)
    assert dict(rows) == {code: rule.info.technique.name for code, rule in ALL_RULES.items()}


def test_every_applier_is_named_by_the_record_of_its_techniques() -> None:
    assert registered(APPLIERS) is APPLIERS
    for applier in APPLIERS:
        name = type(applier).__name__
        assert name in technique_named(applier.technique).appliers
        assert all(name in technique_named(other).also_by for other in applier.also)
        assert applier in appliers_for(applier.technique)


def test_a_registry_that_disagrees_with_the_records_is_refused() -> None:
    stray = type("StrayApplier", (), {"technique": "fast_math", "also": ("not_a_technique",)})()
    with pytest.raises(ValueError, match="StrayApplier.technique = 'fast_math'.*StrayApplier.also holds 'not_a_technique'"):
        registered((*APPLIERS, stray))
    with pytest.raises(ValueError, match="record 'fast_math' lists FastMath in `appliers`"):
        registered(tuple(a for a in APPLIERS if type(a).__name__ != "FastMath"))
    assert appliers_for("shared_memory_padding") == ()  # a synonym is not the name an applier writes


@pytest.mark.parametrize("record", TECHNIQUES, ids=[t.name for t in TECHNIQUES])
def test_each_record_has_its_page(record: Technique) -> None:
    page = DOCS / record.doc
    assert page.is_file(), record.doc
    text = page.read_text(encoding="utf-8")
    assert f"`{record.name}`" in text.splitlines()[0]
    for name in (*record.appliers, *record.also_by, *record.synonyms, *record.params):
        assert f"`{name}`" in text, f"{record.doc} does not name `{name}`"
    for code in record.rules:
        assert f"[{code}](../rules/{code}.md)" in text, f"{record.doc} does not link {code}"


def test_grid_points_use_their_techniques_parameter_names() -> None:
    device = DeviceLimits(132, 2048, 1024, 48 * 1024)
    seen: set[str] = set()
    for spec_path in sorted((ROOT / "bench" / "tasks").rglob("*.regrapht.toml")):
        source = spec_path.with_name(spec_path.name.removesuffix(".regrapht.toml") + ".cu").read_text(encoding="utf-8")
        for kernel in load_spec(spec_path).kernels:
            target = kernel_target(kernel)
            given = ApplierInput(source, kernel.name, target.launch, target.constants, device)
            for applier in APPLIERS:
                space = technique_named(applier.technique).params
                for rewrite in applier.apply(given):
                    keys = [key for key, _ in rewrite.params]
                    assert set(keys) <= set(space), (type(applier).__name__, keys, space)
                    seen.update(keys)
    assert len(seen) >= 10  # the tasks reach several grids, not only the refinements'
