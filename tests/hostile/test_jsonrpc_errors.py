"""JSON-RPC errors over a real stdio connection (issue 13, item 4): a body that is not JSON gets
a Parse error (-32700) and one that is JSON but not a message an Invalid Request (-32600), both
with id null; the server answers the next request as usual and logs no traceback."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


class RawClient:
    """Frames bytes onto the server's stdin and reads its framed messages on a thread."""

    def __init__(self, tmp_path: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT / "server"), "XDG_CACHE_HOME": str(tmp_path / "cache"),
               "XDG_DATA_HOME": str(tmp_path / "data")}
        self.process = subprocess.Popen([sys.executable, "-m", "regrapht", "serve"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.stderr: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(iter(self.process.stderr.readline, b"")),  # type: ignore[union-attr]
                         daemon=True).start()

    def _read(self) -> None:
        out = self.process.stdout
        assert out is not None
        while True:
            length = None
            while (line := out.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line or length is None:
                return
            self.messages.put(json.loads(out.read(length)))

    def send_body(self, body: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def request(self, id_: int, method: str, params: Any) -> None:
        self.send_body(json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}).encode())

    def response(self, timeout: float = 30) -> dict[str, Any]:
        while True:
            message = self.messages.get(timeout=timeout)
            if "id" in message and "method" not in message:
                return message

    def close(self) -> None:
        self.request(99, "shutdown", None)
        self.send_body(b'{"jsonrpc": "2.0", "method": "exit"}')
        try:
            self.process.wait(timeout=20)
        finally:
            self.process.kill()


@pytest.fixture
def server(tmp_path: Path):
    client = RawClient(tmp_path)
    client.request(1, "initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    assert client.response()["id"] == 1
    client.send_body(b'{"jsonrpc": "2.0", "method": "initialized", "params": {}}')
    yield client
    client.close()


def hover_still_answered(client: RawClient, id_: int) -> None:
    client.send_body(json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": "file:///work/k.cu", "languageId": "cuda", "version": 1,
        "text": "__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n"}}}).encode())
    client.request(id_, "textDocument/hover", {"textDocument": {"uri": "file:///work/k.cu"},
                                                "position": {"line": 0, "character": 18}})
    answer = client.response()
    assert answer["id"] == id_ and "error" not in answer


@pytest.mark.parametrize("body", [b'{"jsonrpc": "2.0", "id": 5, "method": "textDocument/hover", "params": {',
                                  b"\xff\xfe not utf-8", b"Content-Length: 12", b"{'single': 'quotes'}"],
                         ids=["cut-short", "not-utf8", "header-as-body", "python-repr"])
def test_body_that_is_not_json_gets_parse_error_and_the_server_goes_on(server: RawClient, body: bytes) -> None:
    server.send_body(body)
    answer = server.response()
    assert answer["id"] is None and answer["error"]["code"] == -32700
    assert answer["error"]["message"].startswith("Parse error: ")
    hover_still_answered(server, 7)
    assert not any(b"Traceback" in line for line in server.stderr), b"".join(server.stderr)[-2000:]


@pytest.mark.parametrize("body", [b"42", b"[]", b'"text"', b'{"id": 3, "method": "shutdown"}'],
                         ids=["number", "list", "string", "no-jsonrpc"])
def test_json_that_is_not_a_message_gets_invalid_request(server: RawClient, body: bytes) -> None:
    server.send_body(body)
    answer = server.response()
    assert answer["id"] is None and answer["error"]["code"] == -32600
    hover_still_answered(server, 8)
