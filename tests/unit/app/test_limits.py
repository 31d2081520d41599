"""Defaults and limits are defined once (regrapht.limits) and the client agrees with them: the VS
Code settings schema (client-vscode/package.json), the client's own normalisation
(client-vscode/src/core/settings.ts), the CLI flags and the search engine's defaults."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from regrapht import limits
from regrapht.cli import build_parser
from regrapht.search.options import STRATEGIES
from regrapht.search.request import OptimizeRequest
from regrapht.settings import CHOICES, FOLDER_SCOPED, INT_RANGES, SEVERITIES, Settings, to_camel

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = json.loads((ROOT / "client-vscode" / "package.json").read_text(encoding="utf-8"))
# the settings are grouped in ordered sections (Environment, Analysis, Optimize, Model, Advanced)
SECTIONS: list[dict[str, Any]] = SCHEMA["contributes"]["configuration"]
PROPERTIES: dict[str, dict[str, Any]] = {k: v for section in SECTIONS for k, v in section["properties"].items()}
CLIENT_TS = (ROOT / "client-vscode" / "src" / "core" / "settings.ts").read_text(encoding="utf-8")
FIELDS = [f for f in dataclasses.fields(Settings)]
CLIENT_ONLY = {"regrapht.python", "regrapht.trace.server", "regrapht.codeLens.enabled", "regrapht.captureCommand", "regrapht.captureKernel",
               "regrapht.captureLaunches", "regrapht.captureData"}  # the capture command's, client-side
# the one server setting whose VS Code key is dotted (client-vscode/src/settings.ts maps it)
DOTTED = {"profileEnabled": "profile.enabled"}


def schema_key(field_name: str) -> str:
    wire = to_camel(field_name)
    return f"regrapht.{DOTTED.get(wire, wire)}"


def wire_default(value: object) -> object:
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    return value


def default_of(field: dataclasses.Field[Any]) -> object:
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return field.default


def test_every_server_setting_is_in_the_schema_and_nothing_else() -> None:
    server_keys = {schema_key(f.name) for f in FIELDS}
    assert set(PROPERTIES) - CLIENT_ONLY == server_keys


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_schema_default_range_and_choices_match_the_server(field: dataclasses.Field[Any]) -> None:
    entry = PROPERTIES[schema_key(field.name)]
    assert entry["default"] == wire_default(default_of(field))
    if field.name in INT_RANGES:
        assert entry["type"] == "integer"
        assert (entry.get("minimum"), entry.get("maximum")) == INT_RANGES[field.name]
    if field.name in CHOICES:
        assert tuple(entry["enum"]) == CHOICES[field.name]


def test_the_settings_a_folder_may_set_are_resource_scoped_and_the_others_window_scoped() -> None:
    """VS Code lets a workspace folder set a `resource` setting; the server uses a folder's value
    for exactly those (settings.FOLDER_SCOPED). modelPath is the exception: `resource` so that a
    remote window keeps the user's value (machine-overridable values are dropped there), while the
    server loads the one model of the window's settings."""
    scopes = {field.name: PROPERTIES[schema_key(field.name)].get("scope") for field in FIELDS}
    assert {name for name, scope in scopes.items() if scope == "resource"} - {"model_path"} == set(FOLDER_SCOPED)
    assert all(scope == "window" for name, scope in scopes.items() if name not in FOLDER_SCOPED and name != "model_path")
    assert PROPERTIES["regrapht.codeLens.enabled"]["scope"] == "resource"  # the client reads it per document


def test_patterns_and_severities_match_the_server() -> None:
    assert PROPERTIES["regrapht.arch"]["pattern"] == limits.ARCH_PATTERN
    assert PROPERTIES["regrapht.enabledRules"]["items"]["pattern"] == limits.RULE_CODE_PATTERN
    assert tuple(PROPERTIES["regrapht.severityOverrides"]["additionalProperties"]["enum"]) == SEVERITIES


def test_the_clients_own_defaults_and_clamps_match_the_server() -> None:
    block = CLIENT_TS[CLIENT_TS.index("DEFAULT_SETTINGS"):]
    block = block[: block.index("});")]
    for field in FIELDS:
        found = re.search(rf"^\s*{to_camel(field.name)}: (.+),$", block, re.M)
        assert found is not None, field.name
        assert json.loads(found.group(1).replace("'", '"')) == wire_default(default_of(field)), field.name
    for name, (low, high) in INT_RANGES.items():
        clamp = re.search(rf"int\(r\.{to_camel(name)}, '{to_camel(name)}', ([-\d_]+), ([-\d_]+), problems\)", CLIENT_TS)
        assert clamp is not None, name
        assert (int(clamp.group(1).replace("_", "")), int(clamp.group(2).replace("_", ""))) == (low, high), name
    strategies = re.search(r"const STRATEGIES: readonly SearchStrategy\[\] = \[(.*?)\];", CLIENT_TS)
    assert strategies is not None
    assert tuple(re.findall(r"'(\w+)'", strategies.group(1))) == limits.SEARCH_STRATEGIES


def test_cli_and_search_defaults_are_the_settings_defaults() -> None:
    parser = build_parser()
    optimize_args = parser.parse_args(["optimize", "x.cu", "--kernel", "k"])
    eval_args = parser.parse_args(["eval", "t", "--strategy", "mcgs", "--out", "o"])
    assert optimize_args.budget == eval_args.budget == Settings().search_budget == limits.DEFAULT_SEARCH_BUDGET
    assert optimize_args.strategy == Settings().search_strategy
    request = OptimizeRequest("k", "")
    assert (request.budget, request.strategy) == (limits.DEFAULT_SEARCH_BUDGET, limits.DEFAULT_SEARCH_STRATEGY)
    assert STRATEGIES == limits.SEARCH_STRATEGIES


def test_settings_sections_are_ordered_titled_and_rules_listed() -> None:
    from regrapht.rules.registry import ALL_RULES

    assert [(s["title"], s["order"]) for s in SECTIONS] == [
        ("Environment", 1), ("Analysis", 2), ("Optimize", 3), ("Model", 4), ("Advanced", 5)]
    assert all(isinstance(entry.get("order"), int) for entry in PROPERTIES.values())
    for key, entry in PROPERTIES.items():
        if "enum" in entry:
            assert len(entry.get("enumDescriptions", ())) == len(entry["enum"]), key
    rules = PROPERTIES["regrapht.enabledRules"]["items"]
    assert rules["enum"] == sorted(ALL_RULES) and len(rules["enumDescriptions"]) == len(ALL_RULES)
    assert PROPERTIES["regrapht.severityOverrides"]["propertyNames"]["enum"] == sorted(ALL_RULES)


def test_the_extension_readme_lists_every_setting_and_ships_no_developer_notes() -> None:
    readme = (ROOT / "client-vscode" / "README.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `(regrapht\.[\w.]+)` \|", readme, re.M))
    assert rows == set(PROPERTIES)
    assert "## Development" not in readme and (ROOT / "client-vscode" / "DEVELOPMENT.md").is_file()
    ignore = (ROOT / "client-vscode" / ".vscodeignore").read_text(encoding="utf-8").splitlines()
    assert ignore[ignore.index("**") if "**" in ignore else 0] == "**" and "!DEVELOPMENT.md" not in ignore
