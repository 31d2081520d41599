"""The model worker process (`python -m regrapht.model.model_worker`): llama.cpp lives only here.

llama.cpp may abort (`GGML_ASSERT`), crash or print on a file that passed the header check; in
this process that costs the process, never the language server or the CLI. The parent side is
`regrapht.model.process_backend.ProcessModelBackend`; the two speak framed msgpack maps
(`regrapht.children.encode_frame`) on stdin/stdout:

- `{"op": "load", "path", "settings"}` -> `{"status": "ok", "device", "name"}`: check and load;
- `{"op": "complete", "messages": [[role, content], ...], "options": {...}, "stream": bool}` ->
  `{"token": piece}` frames while generating (when `stream`), then
  `{"status": "ok", "completion": {...}}`; `options` are `LlamaBackend.complete`'s keyword
  arguments as the caller gave them;
- `{"op": "measure", "messages", "prefill"}` -> `{"status": "ok", "tokens", "context"}`: the
  prompt's size in tokens and the context's, nothing generated (`MeasuresPrompts`);
- `{"op": "stop"}` (any time): the running generation ends as "cancelled";
- `{"op": "exit"}` or end of input: the process ends.
A failure the backend reports is `{"status": "error", "message"}` and the worker carries on.
"""

from __future__ import annotations

import logging
import os
import queue
import sys
import threading
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, BinaryIO

import msgpack

from regrapht.children import FRAME_HEADER, encode_frame
from regrapht.errors import InputError
from regrapht.model.backend import ChatMessage

logger = logging.getLogger(__name__)

Backend = Any  # a LlamaBackend, or a test double with the same methods
BackendFactory = Callable[[dict[str, Any], Path], Backend]


def _llama_backend(settings: dict[str, Any], path: Path) -> Backend:
    from regrapht.model.llama_backend import LlamaBackend, ModelSettings

    return LlamaBackend(ModelSettings(**settings), model_path=path)


class _Requests:
    """Reads frames on a thread of its own, so that a `stop` arrives while a generation runs."""

    def __init__(self, read: BinaryIO) -> None:
        self.stop = threading.Event()
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, args=(read,), name="model-worker-requests", daemon=True).start()

    def _read(self, read: BinaryIO) -> None:
        while True:
            header = read.read(FRAME_HEADER.size)
            if len(header) < FRAME_HEADER.size:
                break
            (length,) = FRAME_HEADER.unpack(header)
            request = msgpack.unpackb(read.read(length), raw=False)
            if isinstance(request, dict) and request.get("op") == "stop":
                self.stop.set()
            elif isinstance(request, dict):
                self._queue.put(request)
        self.stop.set()
        self._queue.put(None)

    def next(self) -> dict[str, Any] | None:
        return self._queue.get()


def serve(read: BinaryIO, write: BinaryIO, factory: BackendFactory = _llama_backend) -> int:
    requests = _Requests(read)
    backend: Backend = None

    def send(message: dict[str, Any]) -> None:
        write.write(encode_frame(message))
        write.flush()

    while (request := requests.next()) is not None:
        op = request.get("op")
        if op == "exit":
            break
        try:
            if op == "load":
                backend = factory(dict(request.get("settings") or {}), Path(request["path"]))
                backend.load()
                send({"status": "ok", "device": backend.device, "name": backend.name})
            elif op == "complete" and backend is not None:
                requests.stop.clear()
                on_token = (lambda piece: send({"token": piece})) if request.get("stream") else None
                completion = backend.complete(
                    [ChatMessage(role, content) for role, content in request["messages"]],
                    should_stop=requests.stop.is_set, on_token=on_token, **request.get("options", {}),
                )
                send({"status": "ok", "completion": asdict(completion)})
            elif op == "measure" and backend is not None:
                size = backend.measure_prompt([ChatMessage(role, content) for role, content in request["messages"]],
                                              prefill=str(request.get("prefill", "")))
                send({"status": "ok", "tokens": size.tokens, "context": size.context})
            else:
                send({"status": "error", "message": f"unexpected request {op!r}"})
        except InputError as error:
            send({"status": "error", "message": str(error)})
        except Exception as error:  # noqa: BLE001 - llama-cpp-python raises bare ValueError/RuntimeError; the parent reports it
            logger.debug("model worker: %s failed", op, exc_info=True)
            send({"status": "error", "message": f"{type(error).__name__}: {error}"})
    return 0


def main() -> int:
    # Protocol frames use a private copy of stdout; fd 1 goes to stderr so that whatever
    # llama.cpp or llama-cpp-python prints cannot corrupt the protocol.
    protocol_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    logging.basicConfig(level=os.environ.get("REGRAPHT_MODEL_WORKER_LOG", "WARNING"), stream=sys.stderr,
                        format="model worker: %(levelname)s %(name)s: %(message)s")
    return serve(sys.stdin.buffer, protocol_out)


if __name__ == "__main__":
    raise SystemExit(main())
