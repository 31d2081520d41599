"""A small LSP client over stdio for tests and benchmarks that cannot use pytest-lsp.

The GPU host has pytest but not pytest-lsp (nor pytest-asyncio), so the GPU LSP tests drive the
real server (`python -m regrapht serve`) with this raw JSON-RPC client from plain tests
(`asyncio.run(scenario())`). bench/lsp_latency.py and bench/lsp_during_search.py use it too.

- Content-Length framing; requests matched to responses by id; every message from the server
  is stamped with `time.perf_counter()` when its bytes arrive, so client-side decoding does
  not count against the server in latency measurements.
- Notifications and server->client requests are kept in `received` (in order) and can be
  awaited with `wait_for(predicate)`, which also looks at what already arrived.
- Server->client requests are answered like an editor: `workspace/configuration` with the
  client's settings, `window/workDoneProgress/create` with null, `workspace/applyEdit` with
  `{applied: apply_edits}` (the edit is kept in `received`), anything else with null.

    async with LspClient.spawn(cwd=root, stderr=log_file) as client:
        await client.initialize(settings={"debounceMs": 0}, root_uri=root.as_uri())
        client.open(uri, text)
        diagnostics = await client.wait_for(published(uri, version=1))
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

SERVER_COMMAND = (sys.executable, "-m", "regrapht", "serve")

# What a full editor announces (VS Code-like): progress, applyEdit with versioned document
# changes and change annotations, markdown hover, pull configuration.
FULL_CAPABILITIES: dict[str, Any] = {
    "general": {"positionEncodings": ["utf-16"]},
    "window": {"workDoneProgress": True, "showMessage": {}},
    "workspace": {
        "configuration": True,
        "applyEdit": True,
        "workspaceEdit": {
            "documentChanges": True,
            "changeAnnotationSupport": {"groupsOnLabel": True},
            "resourceOperations": ["create", "rename", "delete"],
        },
        "didChangeConfiguration": {"dynamicRegistration": False},
    },
    "textDocument": {
        "synchronization": {"didSave": True, "dynamicRegistration": False},
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        "publishDiagnostics": {"versionSupport": True},
        "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "refactor"]}}},
    },
}

Predicate = Callable[[dict[str, Any]], bool]


class LspError(Exception):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, method: str, error: Mapping[str, Any]) -> None:
        super().__init__(f"{method}: {error.get('code')} {error.get('message')}")
        self.code = error.get("code")


@dataclass(frozen=True)
class Received:
    message: dict[str, Any]
    arrived: float  # time.perf_counter() when the message's bytes had arrived


@dataclass
class LspClient:
    process: asyncio.subprocess.Process
    settings: dict[str, Any] = field(default_factory=dict)
    apply_edits: bool = True  # the answer to workspace/applyEdit
    received: list[Received] = field(default_factory=list)
    _next_id: int = 0
    _responses: dict[int, asyncio.Future[Received]] = field(default_factory=dict)
    _waiters: list[tuple[Predicate, asyncio.Future[Received]]] = field(default_factory=list)
    _reader: asyncio.Task[None] | None = None

    @classmethod
    @contextlib.asynccontextmanager
    async def spawn(
        cls, command: Sequence[str] = SERVER_COMMAND, *, cwd: Path | None = None,
        env: Mapping[str, str] | None = None, stderr: IO[Any] | int | None = asyncio.subprocess.DEVNULL,
        settings: Mapping[str, Any] | None = None,
    ) -> AsyncIterator[LspClient]:
        """Start the server; on exit: shutdown + exit if it is still running, else kill it."""
        process = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr,
            cwd=cwd, env=dict(env) if env is not None else None, limit=64 * 1024 * 1024,
        )
        client = cls(process, settings=dict(settings or {}))
        client._reader = asyncio.get_running_loop().create_task(client._read())
        try:
            yield client
        finally:
            await client.close()

    # -- sending ----------------------------------------------------------------------------

    def send(self, message: Mapping[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def request_timed(self, method: str, params: Any, timeout: float = 60.0) -> tuple[Any, float]:
        """(result, arrival time of the response); LspError for an error response."""
        self._next_id += 1
        future: asyncio.Future[Received] = asyncio.get_running_loop().create_future()
        self._responses[self._next_id] = future
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        answer = await asyncio.wait_for(future, timeout)
        if "error" in answer.message:
            raise LspError(method, answer.message["error"])
        return answer.message.get("result"), answer.arrived

    async def request(self, method: str, params: Any, timeout: float = 60.0) -> Any:
        result, _ = await self.request_timed(method, params, timeout)
        return result

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    # -- receiving --------------------------------------------------------------------------

    def next_matching(self, predicate: Predicate) -> asyncio.Future[Received]:
        """A future for the next message from the server (notification or request) that matches;
        only messages arriving after this call count."""
        future: asyncio.Future[Received] = asyncio.get_running_loop().create_future()
        self._waiters.append((predicate, future))
        return future

    async def wait_for(self, predicate: Predicate, timeout: float = 60.0) -> dict[str, Any]:
        """The first message from the server, already received or still to come, that matches."""
        for item in self.received:
            if predicate(item.message):
                return item.message
        received = await asyncio.wait_for(self.next_matching(predicate), timeout)
        return received.message

    def messages(self, method: str) -> list[dict[str, Any]]:
        """The params of every message with `method` received so far."""
        return [r.message.get("params") or {} for r in self.received if r.message.get("method") == method]

    async def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = -1
            while True:
                header = await stream.readline()
                if not header:
                    return  # the server exited
                if header in (b"\r\n", b"\n"):
                    break
                if header.lower().startswith(b"content-length:"):
                    length = int(header.split(b":")[1])
            if length < 0:
                continue  # a stray blank line between messages
            body = await stream.readexactly(length)
            self._dispatch(Received(json.loads(body), time.perf_counter()))

    def _dispatch(self, received: Received) -> None:
        message = received.message
        if "method" not in message:
            future = self._responses.pop(message.get("id", -1), None)
            if future is not None and not future.done():
                future.set_result(received)
            return
        self.received.append(received)
        if "id" in message:
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": self.answer(message)})
        for waiter in list(self._waiters):
            predicate, future = waiter
            if future.done():
                self._waiters.remove(waiter)
            elif predicate(message):
                future.set_result(received)
                self._waiters.remove(waiter)

    def answer(self, message: Mapping[str, Any]) -> Any:
        """The result for a request from the server, as an editor would answer it."""
        method = message["method"]
        if method == "workspace/configuration":
            return [dict(self.settings) for _ in message["params"]["items"]]
        if method == "workspace/applyEdit":
            return {"applied": self.apply_edits}
        return None

    # -- LSP conveniences -------------------------------------------------------------------

    async def initialize(
        self, *, root_uri: str | None = None, capabilities: Mapping[str, Any] | None = None,
        settings: Mapping[str, Any] | None = None, timeout: float = 60.0,
    ) -> Any:
        """initialize (settings also as initializationOptions) + initialized; returns the result."""
        if settings is not None:
            self.settings = dict(settings)
        result = await self.request("initialize", {
            "processId": None, "rootUri": root_uri,
            "workspaceFolders": [{"uri": root_uri, "name": "workspace"}] if root_uri else None,
            "capabilities": dict(capabilities if capabilities is not None else FULL_CAPABILITIES),
            "initializationOptions": {"settings": self.settings},
        }, timeout)
        self.notify("initialized", {})
        return result

    def open(self, uri: str, text: str, version: int = 1, language: str = "cuda") -> None:
        self.notify("textDocument/didOpen",
                    {"textDocument": {"uri": uri, "languageId": language, "version": version, "text": text}})

    def save(self, uri: str, text: str | None = None) -> None:
        params: dict[str, Any] = {"textDocument": {"uri": uri}}
        if text is not None:
            params["text"] = text
        self.notify("textDocument/didSave", params)

    async def hover(self, uri: str, line: int, character: int, timeout: float = 60.0) -> Any:
        return await self.request("textDocument/hover",
                                  {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}},
                                  timeout)

    async def execute(self, command: str, *arguments: Any, timeout: float = 60.0) -> Any:
        return await self.request("workspace/executeCommand", {"command": command, "arguments": list(arguments)},
                                  timeout)

    def progress_of(self, token: Any) -> list[dict[str, Any]]:
        """The `value`s of $/progress for `token` so far (begin, reports, end)."""
        return [p["value"] for p in self.messages("$/progress") if p.get("token") == token]

    async def close(self, timeout: float = 10.0) -> None:
        """shutdown + exit if the server still runs; kill it if it does not exit in time."""
        if self.process.returncode is None:
            with contextlib.suppress(LspError, TimeoutError, ConnectionError):
                await self.request("shutdown", None, timeout)
                self.notify("exit", None)
            try:
                await asyncio.wait_for(self.process.wait(), timeout)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader


# -- predicates -------------------------------------------------------------------------------


def published(uri: str, version: int | None = None) -> Predicate:
    """publishDiagnostics for `uri` (for `version` when given)."""
    def match(m: dict[str, Any]) -> bool:
        params = m.get("params") or {}
        return (m.get("method") == "textDocument/publishDiagnostics" and params.get("uri") == uri
                and (version is None or params.get("version") == version))
    return match


def status(state: str) -> Predicate:
    return lambda m: m.get("method") == "regrapht/status" and (m.get("params") or {}).get("state") == state


def progress_end(token: Any) -> Predicate:
    return lambda m: (m.get("method") == "$/progress" and m["params"].get("token") == token
                      and m["params"].get("value", {}).get("kind") == "end")


def method(name: str) -> Predicate:
    return lambda m: m.get("method") == name


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..1) of a non-empty sequence."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


# -- edits ------------------------------------------------------------------------------------


def _offset(lines: Sequence[str], starts: Sequence[int], position: Mapping[str, int]) -> int:
    """Code-point offset of an LSP position (UTF-16 character offsets, the default encoding)."""
    line = lines[position["line"]]
    units, index = 0, 0
    while index < len(line) and units < position["character"]:
        units += 2 if ord(line[index]) > 0xFFFF else 1
        index += 1
    return starts[position["line"]] + index


def apply_text_edits(text: str, edits: Sequence[Mapping[str, Any]]) -> str:
    """`text` with LSP TextEdits (ranges on `text`, UTF-16 positions) applied."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    spans = sorted(((_offset(lines, starts, e["range"]["start"]), _offset(lines, starts, e["range"]["end"]),
                     e["newText"]) for e in edits), reverse=True)
    # Applied back to front so earlier offsets stay valid.
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text
