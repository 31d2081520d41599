"""What starting the language server imports: the editor waits on it ("server ready after
initialize" <= 1 s, bench/lsp_latency.py). The parser and rules load in a worker right after
"ready" (lsp/features/lifecycle.py warm-up); the GPU workflows' engines (compiler, GPU worker,
evaluator, numpy), the search, the graph and the model load when first used; so do the Optimize
workflow (controller, jobs, spec parser: built at the first Optimize command) and the spec model
(first validation, first spec code action). A module that starts importing one of them at module
level puts its cost back into every editor start; this test names it. `regrapht analyze` likewise
loads the parser and rules only (the compile stack only with --confirm). Each check runs in a
fresh interpreter, so other tests' imports do not count.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HEAVY = (
    "numpy", "networkx", "msgpack", "tree_sitter", "tree_sitter_cuda", "llama_cpp", "pycuda",
    "regrapht.cuda.document", "regrapht.rules.engine", "regrapht.spec.infer", "regrapht.spec.resolve",
    "regrapht.validate.compiler", "regrapht.validate.worker", "regrapht.validate.evaluator",
    "regrapht.validate.background", "regrapht.search.pipeline", "regrapht.graph", "regrapht.idioms",
    "regrapht.model", "tomllib",
    # the Optimize workflow and the spec model: first Optimize command, validation or spec action
    "regrapht.app.controller", "regrapht.app.jobs", "regrapht.app.optimize", "regrapht.app.result_edits",
    "regrapht.spec.model", "regrapht.spec.expr", "regrapht.search.options", "regrapht.search.source",
    "difflib", "hashlib",
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
    loaded = loaded_after("from regrapht.lsp.server import create_server\ncreate_server()")
    assert "regrapht.lsp.features.validation" in loaded and "regrapht.lsp.features.optimize" in loaded
    assert sorted(m for m in HEAVY if m in loaded) == []


# The real server over stdio, with the modules it has loaded written out when it reports "ready"
# (the warm-up is started after that report): what `initialize` and `initialized` load counts too.
READY_PROBE = """
import json, sys
import regrapht.lsp.features.lifecycle as lifecycle
send_status = lifecycle.send_status
def recording(server, state, status, message):
    if status == "ready":
        with open(sys.argv[1], "w") as out:
            json.dump(sorted(sys.modules), out)
    send_status(server, state, status, message)
lifecycle.send_status = recording
from regrapht.cli import main
sys.exit(main(["serve"]))
"""


async def _exchange(stdin: asyncio.StreamWriter, stdout: asyncio.StreamReader) -> list[dict[str, Any]]:
    """initialize, initialized, the settings pulled, until "ready"; then shutdown and exit."""
    def send(message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def receive() -> dict[str, Any]:
        length = 0
        while (header := await stdout.readline()).strip():
            if header.lower().startswith(b"content-length:"):
                length = int(header.split(b":")[1])
        assert length, "the server closed its output"
        return json.loads(await stdout.readexactly(length))  # type: ignore[no-any-return]

    capabilities = {"workspace": {"configuration": True}, "general": {"positionEncodings": ["utf-16"]}}
    send({"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": capabilities,
                                                      "initializationOptions": {"settings": {"debounceMs": 0}}}})
    received = [await receive()]
    send({"method": "initialized", "params": {}})
    while not (received[-1].get("method") == "regrapht/status" and received[-1]["params"]["state"] == "ready"):
        received.append(await receive())
        if received[-1].get("method") == "workspace/configuration":
            send({"id": received[-1]["id"], "result": [{}] * len(received[-1]["params"]["items"])})
    send({"id": 2, "method": "shutdown"})
    while received[-1].get("id") != 2:
        received.append(await receive())
    send({"method": "exit"})
    return received


async def test_the_server_reports_ready_without_any_of_the_heavy_modules(tmp_path: Path) -> None:
    loaded_file = tmp_path / "loaded.json"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", READY_PROBE, str(loaded_file), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL)
    assert process.stdin is not None and process.stdout is not None
    try:
        received = await asyncio.wait_for(_exchange(process.stdin, process.stdout), 120)
        assert await asyncio.wait_for(process.wait(), 60) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert "capabilities" in received[0]["result"]
    loaded = set(json.loads(loaded_file.read_text()))
    assert "regrapht.lsp.features.optimize" in loaded and "regrapht.settings" in loaded
    assert sorted(m for m in HEAVY if m in loaded) == []


def test_the_warm_up_after_ready_loads_the_parser_and_rules() -> None:
    """The other side of the check above: the same probe sees the parser once it is loaded."""
    loaded = loaded_after("from regrapht.lsp.features.lifecycle import _warm_up\n_warm_up()")
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
