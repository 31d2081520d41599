"""The layering of the package, checked on the import statements of every module (module-level,
in functions and under TYPE_CHECKING alike): each package and root module of `server/regrapht`
has a declared layer in `LAYERS`, and a module imports only from layers below its own (or from
its own package). A package or root module missing from the table fails, so a new one must be
placed; an import against the order fails unless it is one of the few `EXCEPTIONS`, each with
the reason and the work that removes it, and an exception that no longer occurs fails too.

Beyond the order: only the LSP layer imports pygls or lsprotocol; only `regrapht.app` joins the
search engine with the editor settings; the optimize sequence has one home."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "server" / "regrapht"

# Lowest first. Units in one layer never import each other. `__init__` is the package root
# (`from regrapht import __version__`).
LAYERS: tuple[tuple[str, ...], ...] = (
    # shared contracts and process plumbing: stdlib only
    ("__init__", "text", "errors", "limits", "gpu_arch", "set_aside", "children", "techniques"),
    ("cuda",),  # the tree-sitter source model
    ("inputs",),  # reading source files (decoding through cuda)
    ("spec",),  # *.regrapht.toml, LaunchConfig; spec inference reads the source model
    ("idioms", "validate", "model"),  # idiom recognisers; nvcc/ptxas/GPU worker; the GGUF model process
    ("rules", "graph", "capture"),  # R001... (confirmed from validate's PTX facts); the reasoning graph (its
    # model); captured launches -> specs (reads validate's signature normaliser)
    ("search",),  # MCGS, baselines, appliers, the optimize() pipeline
    ("cards", "settings"),  # kernel-card formatting and the typed editor settings, shared by app/ and lsp/
    ("snapshot",),  # a document at one version under its settings, handed to background work
    ("app",),  # the two GPU workflows and what they share
    ("evaluation", "lsp"),  # `regrapht eval` on app/; the language server on app/
    ("cluster",),  # eval/distill jobs on a Ray cluster (Ray imported only when asked)
    ("commands",),  # the CLI's subcommands (`serve` starts lsp/)
    ("cli", "install"),  # the `regrapht` command and the installer
    ("__main__",),  # `python -m regrapht`
)

# (module, imported unit): an import against the order, allowed while a named change removes it.
EXCEPTIONS: dict[tuple[str, str], str] = {}

PYGLS = ("pygls", "lsprotocol")


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


def unit_of(module: str) -> str:
    """The package (first folder) or root module a module path belongs to."""
    first = module.split("/")[0]
    return first.removesuffix(".py")


def imported_unit(name: str) -> str | None:
    """The unit of `regrapht` an imported name is in, None for other distributions."""
    parts = name.split(".")
    if parts[0] != "regrapht":
        return None
    if len(parts) == 1 or not ((PACKAGE / parts[1]).is_dir() or (PACKAGE / f"{parts[1]}.py").is_file()):
        return "__init__"
    return parts[1]


def level() -> dict[str, int]:
    return {unit: index for index, layer in enumerate(LAYERS) for unit in layer}


def uses(imports: set[str], package: str) -> bool:
    return any(name == package or name.startswith(package + ".") for name in imports)


def test_every_package_and_root_module_has_a_layer() -> None:
    declared = [unit for layer in LAYERS for unit in layer]
    assert len(declared) == len(set(declared)), "a unit is declared twice"
    present = {unit_of(module) for module in modules()}
    assert sorted(present - set(declared)) == [], "place the new package or module in LAYERS"
    assert sorted(set(declared) - present) == [], "LAYERS names a package or module that is gone"


def test_imports_point_down_the_layers() -> None:
    levels = level()
    against: dict[str, list[str]] = {}
    seen_exceptions: set[tuple[str, str]] = set()
    for module, imports in modules().items():
        own = unit_of(module)
        for name in sorted(imports):
            target = imported_unit(name)
            if target is None or target == own or own not in levels or target not in levels:
                continue  # another distribution, the unit itself, or an undeclared unit (test above)
            if levels[target] < levels[own]:
                continue
            if (module, target) in EXCEPTIONS:
                seen_exceptions.add((module, target))
                continue
            against.setdefault(module, []).append(f"{name} ({target}: layer {levels[target]} >= {own}: "
                                                  f"layer {levels[own]})")
    assert against == {}
    assert sorted(set(EXCEPTIONS) - seen_exceptions) == [], "an exception no longer occurs: remove it"


def test_only_the_lsp_layer_imports_pygls() -> None:
    outside = {module: sorted(i for i in imports if i.split(".")[0] in PYGLS)
               for module, imports in modules().items() if unit_of(module) != "lsp"}
    assert {module: found for module, found in outside.items() if found} == {}


def test_only_the_app_layer_imports_both_search_and_settings() -> None:
    both = [name for name, imports in modules().items()
            if not name.startswith("app/") and uses(imports, "regrapht.search") and uses(imports, "regrapht.settings")]
    assert both == []


def test_the_search_runs_in_one_place() -> None:
    callers = [name for name, imports in modules().items() if "regrapht.search.pipeline.optimize" in imports
               or "regrapht.search.optimize" in imports]
    assert callers == ["app/optimize.py"]


def test_the_checker_sees_an_import_against_the_order(tmp_path: Path) -> None:
    """The rules above read real imports: an upward import in a module's function is found."""
    source = tmp_path / "upward.py"
    source.write_text("def f():\n    from regrapht.lsp.state import ServerState\n    import regrapht.app.optimize\n"
                      "    from regrapht import __version__\n", encoding="utf-8")
    found = {imported_unit(name) for name in imports_of(source)}
    assert found == {"lsp", "app", "__init__"}
    assert level()["lsp"] > level()["app"] > level()["search"] > level()["validate"] > level()["spec"] > level()["cuda"]
