"""`ProcessModelBackend`: the `ModelBackend` that runs the GGUF model in a worker process.

llama.cpp aborts the whole process on some malformed files that pass any header check (a
`GGML_ASSERT`), and it may print on stdout, which in the language server is the JSON-RPC
stream. So the model lives in `regrapht.model.model_worker`, started on the first `complete`
(or `load`) as a `regrapht.children.Child`: its own process group and TMPDIR, stdin a pipe of
ours, anonymous memory watched. An abort, a crash, a hang or stray bytes there become an
`InputError` ("the model file X could not be loaded: ...", or "... stopped while generating:
..."), the worker is ended, and the next call starts a fresh one; the caller keeps running.

The GGUF header is checked here first (`validate_model`), so a file the pre-check rejects never
costs a process. Every keyword argument of `complete` other than the two callbacks is forwarded
to the worker's `LlamaBackend.complete` unchanged; `on_token` is fed from streamed frames and
`should_stop` is polled while waiting and turned into a `stop` message.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from regrapht.children import WORKER_MEMORY_BYTES, ChannelFault, Child, FrameChannel, python_module_env
from regrapht.errors import InputError, ModelLoadError
from regrapht.model.backend import ChatMessage, Completion, PromptSize
from regrapht.model.gguf import GgufInfo
from regrapht.model.llama_backend import ModelSettings, Usage
from regrapht.model.locate import locate_model, validate_model

logger = logging.getLogger(__name__)

MAX_MODEL_FRAME = 64 << 20  # a reply is one completion's text: far below this


def default_worker_command() -> list[str]:
    return [sys.executable, "-m", "regrapht.model.model_worker"]


class ProcessModelBackend:
    """A GGUF model run by llama.cpp in a worker process; implements `ModelBackend`.

    Construction is cheap (it only decides the file). Calls are serialised by a lock, like the
    in-process backend's; call off the event loop."""

    def __init__(
        self,
        settings: ModelSettings | None = None,
        *,
        model_path: Path | None = None,
        command: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        load_timeout_s: float = 600.0,
        silence_timeout_s: float = 300.0,
        memory_bytes: int = WORKER_MEMORY_BYTES,
    ) -> None:
        self.settings = settings or ModelSettings()
        self.path = model_path or locate_model(self.settings.path or None)
        self.name = self.path.name
        layers = self.settings.gpu_layers
        self.device = "cpu" if layers == 0 else ("gpu (all layers)" if layers < 0 else f"gpu ({layers} layers)")
        self.command = list(command) if command is not None else default_worker_command()
        self.env = python_module_env(env if env is not None else os.environ)
        # ggml's abort otherwise runs gdb on the dying worker for a backtrace: slow, and no use here
        self.env.setdefault("GGML_NO_BACKTRACE", "1")
        self.load_timeout_s = load_timeout_s
        self.silence_timeout_s = silence_timeout_s  # the longest pause between two frames
        self.memory_bytes = memory_bytes  # anonymous memory of the worker (the weights are mapped)
        self.starts = 0
        self._lock = threading.Lock()
        self._child: Child | None = None
        self._channel: FrameChannel | None = None
        self._stderr_tail: deque[str] = deque(maxlen=40)
        self._info: GgufInfo | None = None
        self._usage = Usage(0, 0, 0)

    @property
    def info(self) -> GgufInfo:
        """The checked GGUF header (checks the file now if not yet done)."""
        if self._info is None:
            self._info = validate_model(self.path)
        return self._info

    @property
    def loaded(self) -> bool:
        return self._child is not None and self._child.process.poll() is None

    @property
    def usage(self) -> Usage:
        return self._usage

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child is not None else None

    def load(self) -> None:
        """Check the file and start the worker with the model loaded (idempotent)."""
        with self._lock:
            self._ensure_worker()

    def close(self) -> None:
        with self._lock:
            if self._channel is not None:
                self._channel.send({"op": "exit"})
            self._end()

    def __enter__(self) -> ProcessModelBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_child", None) is not None:
            self._end()

    def complete(
        self,
        messages: list[ChatMessage],
        *,
        should_stop: Callable[[], bool] | None = None,
        on_token: Callable[[str], None] | None = None,
        **options: Any,
    ) -> Completion:
        """`ModelBackend.complete`, answered by the worker; InputError when the worker fails."""
        with self._lock:
            channel = self._ensure_worker()
            request = {"op": "complete", "messages": [[m.role, m.content] for m in messages],
                       "options": options, "stream": on_token is not None}
            if not channel.send(request):
                raise self._failure("stopped while generating", ChannelFault("exited", "it exited"))
            stop_sent = False

            def poll_stop() -> None:
                nonlocal stop_sent
                if should_stop is not None and not stop_sent and should_stop():
                    stop_sent = channel.send({"op": "stop"})

            while True:
                poll_stop()
                reply = channel.receive(self.silence_timeout_s, poll_stop)
                if isinstance(reply, ChannelFault):
                    raise self._failure("stopped while generating", reply)
                if "token" in reply:
                    if on_token is not None:
                        on_token(str(reply["token"]))
                    continue
                if reply.get("status") != "ok":
                    raise InputError(str(reply.get("message", "the model worker failed")))
                completion = Completion(**reply["completion"])
                self._usage = Usage(self._usage.prompt_tokens + completion.prompt_tokens,
                                    self._usage.completion_tokens + completion.completion_tokens,
                                    self._usage.calls + 1)
                return completion

    def measure_prompt(self, messages: list[ChatMessage], *, prefill: str = "") -> PromptSize:
        """`MeasuresPrompts.measure_prompt`, counted by the worker's tokenizer (nothing is
        generated); InputError when the worker fails."""
        with self._lock:
            channel = self._ensure_worker()
            if not channel.send({"op": "measure", "messages": [[m.role, m.content] for m in messages],
                                 "prefill": prefill}):
                raise self._failure("stopped while measuring a prompt", ChannelFault("exited", "it exited"))
            reply = channel.receive(self.silence_timeout_s)
            if isinstance(reply, ChannelFault):
                raise self._failure("stopped while measuring a prompt", reply)
            if reply.get("status") != "ok":
                raise InputError(str(reply.get("message", "the model worker failed")))
            return PromptSize(int(reply["tokens"]), int(reply["context"]))

    # -- the worker ---------------------------------------------------------------------------
    def _ensure_worker(self) -> FrameChannel:
        if self._channel is not None and self.loaded:
            return self._channel
        self._end()
        info = self.info  # a file the pre-check rejects never reaches llama.cpp
        self._stderr_tail.clear()
        child = Child(self.command, env=self.env, pipe_stdin=True, tmp_prefix="regrapht-model-worker-")
        self._child = child
        self._channel = FrameChannel(child, memory_bytes=self.memory_bytes, max_frame_bytes=MAX_MODEL_FRAME)
        self.starts += 1
        self._drain_stderr(child)
        started = time.monotonic()
        settings = {k: v for k, v in asdict(self.settings).items() if k != "path"}
        if not self._channel.send({"op": "load", "path": str(self.path), "settings": settings}):
            raise self._failure("could not be loaded", ChannelFault("exited", "it exited"))
        reply = self._channel.receive(self.load_timeout_s)
        if isinstance(reply, ChannelFault):
            raise self._failure("could not be loaded", reply)
        if reply.get("status") != "ok":
            self._end()
            raise ModelLoadError(f"the model file {self.path} could not be loaded: {reply.get('message')}")
        self.device = str(reply.get("device", self.device))
        logger.info("model worker %d loaded %s (%s) on %s in %.2f s", child.pid, info.name, self.path.name,
                    self.device, time.monotonic() - started)
        return self._channel

    def _drain_stderr(self, child: Child) -> None:
        stderr = child.process.stderr
        assert stderr is not None
        tail = self._stderr_tail

        def drain() -> None:
            for raw in iter(stderr.readline, b""):
                line = raw.decode("utf-8", "replace").rstrip()
                if line:
                    tail.append(line)
                    logger.debug("model worker: %s", line)
            stderr.close()

        threading.Thread(target=drain, name="model-worker-stderr", daemon=True).start()

    def _failure(self, what: str, fault: ChannelFault) -> InputError:
        """End the worker and describe why it failed: its fault, exit and last words."""
        child = self._child
        code = None
        if child is not None and fault.kind == "exited":
            with contextlib.suppress(subprocess.TimeoutExpired):  # closed its output, still running
                code = child.process.wait(timeout=5)
        self._end()
        time.sleep(0.05)  # let the stderr reader take the last lines
        detail = {"timeout": f"the model worker sent nothing for {self.silence_timeout_s:.0f} s and was stopped",
                  "memory": f"the model worker {fault.detail.removeprefix('it ')} and was stopped",
                  "garbled": f"the model worker wrote output that is not a reply ({fault.detail})",
                  "exited": "the model worker exited"}[fault.kind]
        if code is not None and code < 0:
            try:
                detail += f" (killed by {signal.Signals(-code).name})"
            except ValueError:
                detail += f" (killed by signal {-code})"
        elif code is not None:
            detail += f" (exit code {code})"
        last = _last_words(self._stderr_tail)
        if last:
            detail += f": {last}"
        if what == "could not be loaded":
            return ModelLoadError(f"the model file {self.path} {what}: {detail}")
        return InputError(f"the model {self.path} {what}: {detail}")

    def _end(self) -> None:
        child, self._child, self._channel = self._child, None, None
        if child is not None:
            child.end(close_stderr=False)


def _last_words(lines: deque[str]) -> str:
    """The most telling of the worker's last stderr lines: an assertion or error if any."""
    recent = [re.sub(r"(?<!\S)/\S*/([^/\s]+:\d+:)", r"\1", line.strip()) for line in list(lines)[-12:]]
    for marker in ("GGML_ASSERT", "error", "Error", "failed"):
        for line in reversed(recent):
            if marker in line:
                return line[-300:]
    return recent[-1][-300:] if recent else ""
