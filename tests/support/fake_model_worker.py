"""A model worker test double: the real protocol loop (`model_worker.serve`) around a fake
backend that misbehaves on request.

Run as `python fake_model_worker.py PLAN`, PLAN a file of one behaviour per line; each start
of the worker takes (and removes) the first line, so a test can make the first worker abort
and the second one answer:
- `ok`: answers every request; the completion's text is the options it was given (JSON);
- `abort-on-load` / `abort-on-complete`: `os.abort()` at that point (as a GGML_ASSERT does);
- `stray-output`: writes text on the protocol stream, as a library printing to stdout would;
- `hang-on-complete`: never answers a completion;
- `error-on-complete`: the backend raises ValueError (the worker reports it and carries on);
- `balloon-on-load`: takes 400 MiB of memory while loading, and keeps loading.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from regrapht.model.backend import Completion, PromptSize
from regrapht.model.model_worker import serve


def take_behaviour(plan: Path) -> str:
    lines = plan.read_text().splitlines()
    plan.write_text("".join(line + "\n" for line in lines[1:]))
    return lines[0] if lines else "ok"


class FakeBackend:
    def __init__(self, behaviour: str, path: Path, out: Any) -> None:
        self.behaviour = behaviour
        self.name = path.name
        self.device = "cpu"
        self.out = out

    def load(self) -> None:
        sys.stderr.write(f"fake worker {os.getpid()} loading {self.name}\n")
        sys.stderr.flush()
        if self.behaviour == "balloon-on-load":
            self.ballast = bytearray(400 << 20)
            self.ballast[::4096] = b"x" * len(self.ballast[::4096])  # touched: resident
            time.sleep(60)
        if self.behaviour == "abort-on-load":
            sys.stderr.write("fake.cpp:1: GGML_ASSERT(n_layer <= LLAMA_MAX_LAYERS) failed\n")
            sys.stderr.flush()
            os.abort()

    def measure_prompt(self, messages: list[Any], *, prefill: str = "") -> PromptSize:
        """One token per word, in a context of 64."""
        return PromptSize(sum(len(m.content.split()) for m in messages) + len(prefill.split()), 64)

    def complete(self, messages: list[Any], *, should_stop: Any, on_token: Any, **options: Any) -> Completion:
        if self.behaviour == "abort-on-complete":
            os.abort()
        if self.behaviour == "stray-output":
            self.out.write(b"llama says hello\n")
            self.out.flush()
            time.sleep(30)
        if self.behaviour == "hang-on-complete":
            while not should_stop():
                time.sleep(0.05)
            return Completion("", 1, 0, "cancelled")
        if self.behaviour == "error-on-complete":
            raise ValueError("llama_decode returned -1")
        text = json.dumps({"pid": os.getpid(), "messages": [[m.role, m.content] for m in messages], **options},
                          sort_keys=True)
        if on_token is not None:
            for piece in ("he", "llo"):
                on_token(piece)
        return Completion(text, 7, 2, "stop")


def main() -> int:
    behaviour = take_behaviour(Path(sys.argv[1]))
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    return serve(sys.stdin.buffer, out, lambda settings, path: FakeBackend(behaviour, path, out))


if __name__ == "__main__":
    raise SystemExit(main())
