"""pytest-lsp harness: the real server over stdio (`python -m regrapht serve`), one client per
capability profile (VS Code negotiates UTF-16 columns, Neovim 0.11 UTF-32)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

DATA = Path(__file__).resolve().parents[1] / "data"
SERVER_COMMAND = [sys.executable, "-m", "regrapht", "serve"]
PROFILES = ["visual-studio-code", "neovim"]
# Compiler confirmation republishes diagnostics a second after they settle (where nvcc exists);
# tests that count publications turn it off, tests/e2e/test_confirmation.py turns it on.
INIT_SETTINGS = {"debounceMs": 10, "compilerConfirmation": False}


T = TypeVar("T")


def _record_publish(ls: Any, params: types.PublishDiagnosticsParams) -> None:
    ls.diagnostics[params.uri] = params.diagnostics
    ls.published.append(params)


def _record_status(ls: Any, params: Any) -> None:
    ls.statuses.append({"state": getattr(params, "state", None), "message": getattr(params, "message", None)})


def _record_lens_refresh(ls: Any, params: Any) -> None:
    ls.lens_refreshes += 1


def _signalling(method: str, handler: Callable[..., Any]) -> Callable[..., Any]:
    """`handler` (a client feature), then `arrived` set: what `wait_until` waits on. The first
    parameter is named `ls` so that pygls passes the client."""

    def ls_handler(ls: Any, params: Any) -> Any:
        if method == types.WORKSPACE_CONFIGURATION:
            ls.configuration_requests += 1
            ls.configuration_params.append(params)
        try:
            return handler(ls, params)
        finally:
            ls.arrived.set()

    return ls_handler


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter)
    client.published = []  # type: ignore[attr-defined]
    client.statuses = []  # type: ignore[attr-defined]
    client.configuration_requests = 0  # type: ignore[attr-defined]
    client.configuration_params = []  # type: ignore[attr-defined]  # of each workspace/configuration request
    client.lens_refreshes = 0  # type: ignore[attr-defined]  # workspace/codeLens/refresh requests
    client.arrived = asyncio.Event()  # type: ignore[attr-defined]  # set after every message from the server
    features = dict(DEFAULT_CLIENT_FEATURES)
    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = _record_publish
    features["regrapht/status"] = _record_status
    features[types.WORKSPACE_CODE_LENS_REFRESH] = _record_lens_refresh
    register_lsp_features(client, {method: _signalling(method, f) for method, f in features.items()})
    return client


async def wait_until(client: Any, condition: Callable[[], T], timeout: float, what: str) -> T:
    """`condition()`'s first truthy value, checked again each time the server sends the client a
    notification or request (no polling interval); TimeoutError naming `what` after `timeout` s."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        client.arrived.clear()
        found = condition()
        if found:
            return found
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise TimeoutError(f"{what}: not within {timeout} s")
        waiter = asyncio.ensure_future(client.arrived.wait())
        await asyncio.wait({waiter}, timeout=remaining)
        waiter.cancel()


CONFIG = ClientServerConfig(server_command=SERVER_COMMAND, client_factory=make_client)


@pytest_lsp.fixture(config=CONFIG, params=PROFILES)
async def client(request, lsp_client: LanguageClient):
    started = time.perf_counter()
    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(request.param),
            initialization_options={"settings": INIT_SETTINGS},
            root_uri=DATA.as_uri(),
        )
    )
    lsp_client.init_result = result  # type: ignore[attr-defined]
    lsp_client.init_seconds = time.perf_counter() - started  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


def encoding_of(client: Any) -> str:
    return str(client.init_result.capabilities.position_encoding or "utf-16")


def lsp_column(line: str, code_points: int, encoding: str) -> int:
    if encoding == "utf-32":
        return code_points
    return len(line[:code_points].encode("utf-16-le", "surrogatepass")) // 2


def position_of(text: str, needle: str, encoding: str, occurrence: int = 0, offset: int = 0) -> types.Position:
    index = -1
    for _ in range(occurrence + 1):
        index = text.index(needle, index + 1)
    index += offset
    line = text.count("\n", 0, index)
    line_start = text.rfind("\n", 0, index) + 1
    line_text = text[line_start:].split("\n", 1)[0]
    return types.Position(line=line, character=lsp_column(line_text, index - line_start, encoding))


def offset_of(text: str, position: types.Position, encoding: str) -> int:
    lines = text.split("\n")
    start = sum(len(x) + 1 for x in lines[: position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    if encoding == "utf-32":
        return start + min(position.character, len(line))
    units = 0
    for i, ch in enumerate(line):
        if units >= position.character:
            return start + i
        units += 2 if ord(ch) > 0xFFFF else 1
    return start + len(line)


def open_document(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="cuda", version=version, text=text)
        )
    )


async def wait_for_publication(client: Any, uri: str, version: int | None = None, timeout: float = 10.0):
    """The latest diagnostics publication for `uri` (with `version`, if given)."""

    def latest() -> types.PublishDiagnosticsParams | None:
        return next((params for params in reversed(client.published)
                     if params.uri == uri and (version is None or params.version == version)), None)

    return await wait_until(client, latest, timeout, f"diagnostics for {uri} version {version}")


def _write_raw(client: Any, message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()
    client.protocol.writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))


async def send_raw_request(client: Any, method: str, params: Any, timeout: float = 10.0) -> Any:
    """A request whose params are sent as given (the typed client cannot send malformed ones)."""
    msg_id = f"raw-{uuid.uuid4()}"
    future: Future[Any] = Future()
    client.protocol._request_futures[msg_id] = future
    _write_raw(client, {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    return await asyncio.wait_for(asyncio.wrap_future(future), timeout)


async def raw_code_actions(client: Any, uri: str, text: str, needle: str, only: str) -> Any:
    """The code actions of kind `only` at the first `needle` of `text`, as raw JSON: the typed
    client deserialises a CodeAction that carries a command as a Command."""
    position = position_of(text, needle, encoding_of(client))
    where = {"line": position.line, "character": position.character}
    return await send_raw_request(client, types.TEXT_DOCUMENT_CODE_ACTION, {
        "textDocument": {"uri": uri}, "range": {"start": where, "end": where},
        "context": {"diagnostics": [], "only": [only]},
    })


def send_raw_notification(client: Any, method: str, params: Any) -> None:
    _write_raw(client, {"jsonrpc": "2.0", "method": method, "params": params})
