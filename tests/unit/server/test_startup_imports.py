"""What starting the language server imports: the editor waits on it ("server ready after
initialize" <= 1 s, bench/lsp_latency.py). The parser and rules load in a worker right after
"ready" (features/lifecycle.py warm-up); the GPU workflows' engines (compiler, GPU worker,
evaluator, numpy), the search, the graph and the model load when first used. A module that
starts importing one of them at module level puts its cost back into every editor start; this
test names it. `regrapht analyze` likewise loads the parser and rules only (the compile stack
only with --confirm). Each check runs in a fresh interpreter, so other tests' imports do not count.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = (
    "numpy", "networkx", "msgpack", "tree_sitter", "tree_sitter_cuda", "llama_cpp", "pycuda",
    "regrapht.cuda.document", "regrapht.rules.engine", "regrapht.spec.infer", "regrapht.spec.resolve",
    "regrapht.validate.compiler", "regrapht.validate.worker", "regrapht.validate.evaluator",
    "regrapht.validate.background", "regrapht.search.pipeline", "regrapht.graph", "regrapht.idioms",
    "regrapht.model", "tomllib",
)
HEAVY_FOR_ANALYZE = (
    "numpy", "networkx", "msgpack", "llama_cpp", "pycuda", "pygls", "lsprotocol", "regrapht.validate.compiler",
    "regrapht.search", "regrapht.graph", "regrapht.model", "regrapht.app",
)
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "saxpy.cu"


def loaded_after(code: str) -> set[str]:
    program = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_creating_the_language_server_loads_none_of_the_heavy_modules() -> None:
    loaded = loaded_after("from regrapht.server import create_server\ncreate_server()")
    assert "regrapht.features.validation" in loaded and "regrapht.features.optimize" in loaded
    assert sorted(m for m in HEAVY if m in loaded) == []


def test_the_warm_up_after_ready_loads_the_parser_and_rules() -> None:
    """The other side of the check above: the same probe sees the parser once it is loaded."""
    loaded = loaded_after("from regrapht.features.lifecycle import _warm_up\n_warm_up()")
    assert {"tree_sitter", "regrapht.cuda.document", "regrapht.rules.engine"} <= loaded


def test_regrapht_analyze_loads_the_parser_and_rules_only() -> None:
    loaded = loaded_after("import contextlib, io\nfrom regrapht.cli import main\n"
                          f"with contextlib.redirect_stdout(io.StringIO()):\n    assert main(['analyze', {str(EXAMPLE)!r}]) == 0")
    assert {"tree_sitter", "regrapht.rules.engine"} <= loaded
    assert sorted(m for m in HEAVY_FOR_ANALYZE if m in loaded) == []


def test_the_rules_package_still_exports_its_engine_names() -> None:
    import regrapht.rules as rules
    from regrapht.rules import ALL_RULES, RuleConfig, analyze_text
    from regrapht.rules.engine import analyze_text as engine_analyze_text

    assert analyze_text is engine_analyze_text and "R001" in ALL_RULES and RuleConfig().enabled is None
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = rules.no_such_name  # type: ignore[attr-defined]
