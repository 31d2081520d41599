"""The layering the application layer exists for, checked on the import statements of the package:
engines never import pygls, the editor settings or the application layer; only `regrapht.app`
joins the search engine with the settings; the optimize sequence has one home."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "server" / "regrapht"
ENGINES = ("cuda", "rules", "spec", "validate", "model", "graph", "search")  # evaluation/ runs on app/


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def modules() -> dict[str, set[str]]:
    return {str(path.relative_to(PACKAGE)): imports_of(path) for path in sorted(PACKAGE.rglob("*.py"))}


def uses(imports: set[str], package: str) -> bool:
    return any(name == package or name.startswith(package + ".") for name in imports)


def test_only_the_app_layer_imports_both_search_and_settings() -> None:
    both = [name for name, imports in modules().items()
            if not name.startswith("app/") and uses(imports, "regrapht.search") and uses(imports, "regrapht.settings")]
    assert both == []


def test_engines_import_neither_pygls_nor_settings_nor_the_app_layer() -> None:
    bad = {name: sorted(i for i in imports if i.split(".")[0] in ("pygls", "lsprotocol")
                        or uses({i}, "regrapht.settings") or uses({i}, "regrapht.app") or uses({i}, "regrapht.cards"))
           for name, imports in modules().items() if name.split("/")[0] in ENGINES}
    assert {name: found for name, found in bad.items() if found} == {}


def test_the_app_layer_never_imports_pygls_and_the_search_runs_in_one_place() -> None:
    app = {name: imports for name, imports in modules().items() if name.startswith("app/")}
    assert [name for name, imports in app.items() if any(i.split(".")[0] in ("pygls", "lsprotocol") for i in imports)] == []
    callers = [name for name, imports in modules().items() if "regrapht.search.pipeline.optimize" in imports
               or "regrapht.search.optimize" in imports]
    assert callers == ["app/optimize.py"]
