"""The ScriptedModel test double."""

from __future__ import annotations

import pytest

from regrapht.model import ChatMessage, ModelBackend, ScriptedModel


def test_answers_in_order_and_prompts_recorded() -> None:
    model = ScriptedModel.of("first answer", "second")
    backend: ModelBackend = model
    one = backend.complete([ChatMessage("user", "hello there")], max_tokens=10, temperature=0.0, seed=1)
    two = backend.complete([ChatMessage("user", "again")], max_tokens=10, temperature=0.0, seed=2)
    assert (one.text, two.text) == ("first answer", "second")
    assert model.prompts[0][0].content == "hello there"
    assert one.prompt_tokens == 2 and one.completion_tokens == 2
    assert model.prompt_tokens == 3 and model.completion_tokens == 3
    with pytest.raises(IndexError):
        model.complete([], max_tokens=1, temperature=0.0, seed=0)


def test_streaming_length_and_cancel() -> None:
    model = ScriptedModel.of("a b c d", "a b c d", "a b c d")
    streamed: list[str] = []
    done = model.complete([], max_tokens=10, temperature=0.0, seed=0, on_token=streamed.append)
    assert streamed == ["a", " b", " c", " d"] and done.finish_reason == "stop"
    cut = model.complete([], max_tokens=2, temperature=0.0, seed=0)
    assert (cut.text, cut.finish_reason) == ("a b", "length")
    seen: list[str] = []
    cancelled = model.complete(
        [], max_tokens=10, temperature=0.0, seed=0, on_token=seen.append, should_stop=lambda: len(seen) >= 1
    )
    assert (cancelled.text, cancelled.finish_reason) == ("a", "cancelled")


def test_prefill_starts_the_answer() -> None:
    model = ScriptedModel.of("body }", "```cuda\nvoid k() { body }")
    continued = model.complete([], max_tokens=10, temperature=0.0, seed=0, prefill="```cuda\nvoid k() {\n")
    assert continued.text == "```cuda\nvoid k() {\nbody }" and continued.completion_tokens == 2
    whole = model.complete([], max_tokens=10, temperature=0.0, seed=0, prefill="```cuda\nvoid k() {")
    assert whole.text == "```cuda\nvoid k() { body }" and whole.completion_tokens == 2  # scripted whole
    assert [c.prefill for c in model.calls] == ["```cuda\nvoid k() {\n", "```cuda\nvoid k() {"]
