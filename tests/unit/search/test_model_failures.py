"""A model call that cannot be made (a prompt over the context, a crashed or hung worker) never
costs the search what it has verified: it is a failed call of its kind, and the search goes on."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from regrapht.errors import InputError, ModelLoadError
from regrapht.graph import START, ReasoningGraph
from regrapht.graph.types import Example
from regrapht.model.backend import ChatMessage, Completion, PromptSize
from regrapht.model.scripted import ScriptedModel, count_tokens
from regrapht.search import SearchOptions, SearchTools, optimize

from .fakes import FakeEvaluator, search_request
from .test_pipeline import SAXPY, TARGET, graph, speed_by_text

WRONG = "    /* WRONG */\n}\n```"
NO_LIMITS = SearchOptions(model_give_up=0, model_time_budget_s=None)


def model_only_graph(example_words: int = 3) -> ReasoningGraph:
    """The pipeline tests' graph plus a technique only the model can write, with an example of
    `example_words` words (a long example makes the prompt not fit)."""
    g = graph()
    g.add_technique("divergence_reduction", "no applier does this")
    after = " ".join(["x"] * example_words)
    g.add_example(START, "divergence_reduction", Example("k", "because", "", "before", after, 9.0))
    return g


@dataclass
class CountingModel(ScriptedModel):
    """ScriptedModel that counts prompts with its whitespace tokenizer in a context of
    `context` tokens (`MeasuresPrompts`), and raises `fail` (if set) on every `complete`."""

    context: int = 10_000
    fail: Callable[[], Exception] | None = None
    measured: list[int] = field(default_factory=list)

    def measure_prompt(self, messages: list[ChatMessage], *, prefill: str = "") -> PromptSize:
        tokens = sum(count_tokens(m.content) for m in messages) + count_tokens(prefill)
        self.measured.append(tokens)
        return PromptSize(tokens, self.context)

    def complete(self, messages: list[ChatMessage], **kwargs: object) -> Completion:  # type: ignore[override]
        if self.fail is not None:
            raise self.fail()
        return super().complete(messages, **kwargs)  # type: ignore[arg-type]


def crash() -> Exception:
    return InputError("the model /tmp/model/smol.gguf stopped while generating: the model worker exited "
                      "(killed by SIGSEGV)")


def over_context() -> Exception:
    return InputError("prompt of 4186 tokens does not fit the model context of 4096 (raise the context setting)",
                      file="/tmp/model/smol.gguf")


@pytest.mark.parametrize("strategy", ["mcgs", "greedy", "random", "cot"])
@pytest.mark.parametrize("failure", [crash, over_context])
def test_a_failing_model_call_keeps_the_verified_best(strategy: str, failure: Callable[[], Exception],
                                                     caplog: pytest.LogCaptureFixture) -> None:
    model = CountingModel([], fail=failure)
    with caplog.at_level(logging.WARNING, logger="regrapht.search.model_policy"):
        result = optimize(search_request(SAXPY, "saxpy", strategy, 24, 0, options=NO_LIMITS), TARGET,
                          SearchTools(FakeEvaluator(speed_by_text), model, model_only_graph()))
    uses = result.model_use
    assert all(use.failed == use.calls and use.answered == 0 for use in uses.values())
    if strategy in ("mcgs", "cot"):  # the others may spend the budget before the model's turn
        assert sum(use.failed for use in uses.values()) >= 1
    if strategy != "cot":  # cot has only the model: nothing verified to keep
        assert result.best is not None and result.best.speedup > 1.0
        assert result.to_json()["best"] is not None
    json_calls = result.to_json()["model_calls"]
    assert isinstance(json_calls, dict) and all(kind["failed"] == kind["calls"] for kind in json_calls.values())
    # logged once per kind of call and reason, however often it recurs
    warnings = [r for r in caplog.records if "could not be made" in r.getMessage()]
    assert len(warnings) == len([use for use in uses.values() if use.failed])
    assert len({r.getMessage() for r in warnings}) == len(warnings)


@pytest.mark.parametrize("strategy", ["mcgs", "cot"])
def test_a_model_file_that_cannot_be_loaded_is_the_users_error_not_a_failed_call(strategy: str) -> None:
    """An unusable model file is a setting to fix: it reaches the user (CLI exit 2, a message in
    the editor) instead of being shrugged off as one failed call while the search goes on."""
    def unloadable() -> Exception:
        return ModelLoadError("the model file /tmp/dup.gguf could not be loaded: the model worker exited "
                              "(killed by SIGABRT): GGML_ASSERT(id_to_token.size() == token_to_id.size()) failed")

    model = CountingModel([], fail=unloadable)
    with pytest.raises(ModelLoadError, match="could not be loaded"):
        optimize(search_request(SAXPY, "saxpy", strategy, 24, 0, options=NO_LIMITS), TARGET,
                 SearchTools(FakeEvaluator(speed_by_text), model, model_only_graph()))


def test_a_prompt_over_the_context_is_never_sent() -> None:
    model = CountingModel([WRONG] * 40, context=60)  # every prompt here is longer than 60 "tokens"
    result = optimize(search_request(SAXPY, "saxpy", "mcgs", 24, 0, options=NO_LIMITS), TARGET,
                      SearchTools(FakeEvaluator(speed_by_text), model, model_only_graph()))
    assert model.measured and model.calls == []
    assert result.best is not None and result.best.speedup > 1.0
    rewrite = result.model_use["rewrite"]
    assert rewrite.failed == rewrite.calls >= 1 and rewrite.answered == 0
    # a failed call costs no budget: only applier candidates were judged
    assert result.counters.generated == result.counters.compiled


def test_a_prompt_is_trimmed_of_its_example_before_it_is_given_up() -> None:
    g = ReasoningGraph()  # one example in all, 2000 characters (within the prompt's example limit)
    g.add_technique("divergence_reduction", "no applier does this")
    g.add_example(START, "divergence_reduction", Example("k", "because", "", "before", " ".join(["x"] * 1000), 9.0))
    options = SearchOptions(model_give_up=0, model_time_budget_s=None, model_choice=False)
    fits_without_example = CountingModel([WRONG] * 40, context=1200)
    # budget 200: the appliers' parameter grids come first (the model never delays an applier
    # rewrite), so the model's turn comes late
    optimize(search_request(SAXPY, "saxpy", "mcgs", 200, 0, options=options), TARGET,
             SearchTools(FakeEvaluator(speed_by_text), fits_without_example, g))
    assert fits_without_example.calls, "the trimmed prompt was sent"
    for sent in fits_without_example.calls:
        assert not any("Example of this technique" in m.content for m in sent.messages)
        assert sum(count_tokens(m.content) for m in sent.messages) + sent.max_tokens <= 1200
    # with room for the example it stays in the prompt
    roomy = CountingModel([WRONG] * 40, context=100_000)
    optimize(search_request(SAXPY, "saxpy", "mcgs", 200, 0, options=options), TARGET,
             SearchTools(FakeEvaluator(speed_by_text), roomy, g))
    assert any("x x x x" in m.content for sent in roomy.calls for m in sent.messages)


def test_failed_calls_count_towards_giving_up_the_model() -> None:
    model = CountingModel([], fail=crash)
    # budget 200: the applier variants that can still beat the best come before the model's turns
    result = optimize(search_request(SAXPY, "saxpy", "mcgs", 200, 0,
                                     options=SearchOptions(model_give_up=2, model_time_budget_s=None, model_choice=False)),
                      TARGET, SearchTools(FakeEvaluator(speed_by_text), model, model_only_graph()))
    rewrite = result.model_use["rewrite"]
    assert rewrite.failed == rewrite.calls == 2 and rewrite.gave_up


def model_available() -> bool:
    from regrapht.model.locate import embedded_model_path

    return bool(os.environ.get("REGRAPHT_MODEL")) or embedded_model_path() is not None


def long_saxpy(lines: int) -> str:
    """saxpy with a long comment in its body: a kernel whose text fills a small context."""
    comment = "".join(f"    // step {i}: scale x by a and add it to y, element by element, in order\n"
                      for i in range(lines))
    return SAXPY.replace("{\n", "{\n" + comment, 1)


@pytest.mark.model
@pytest.mark.skipif(not model_available(), reason="no SmolLM2 GGUF")
def test_the_real_model_is_not_sent_a_prompt_over_its_context() -> None:
    from regrapht.model import ModelSettings, ProcessModelBackend

    with ProcessModelBackend(ModelSettings(threads=2, context=1024)) as backend:
        sent: list[int] = []

        @dataclass
        class Watched:
            name: str = backend.name
            device: str = backend.device

            def measure_prompt(self, messages: list[ChatMessage], *, prefill: str = "") -> PromptSize:
                return backend.measure_prompt(messages, prefill=prefill)

            def complete(self, messages: list[ChatMessage], **kwargs: Any) -> Completion:
                size = backend.measure_prompt(messages, prefill=kwargs.get("prefill", ""))
                sent.append(size.tokens + kwargs["max_tokens"])
                return backend.complete(messages, **kwargs)

        source = long_saxpy(60)
        size = backend.measure_prompt([ChatMessage("user", source)])
        assert size.context == 1024 and size.tokens > 1024
        # the real backend refuses what does not fit: the search must not send it
        with pytest.raises(InputError, match="does not fit the model context"):
            backend.complete([ChatMessage("user", source)], max_tokens=8, temperature=0.0, seed=0)
        result = optimize(search_request(source, "saxpy", "mcgs", 40, 0,
                                         options=SearchOptions(model_give_up=0, model_time_budget_s=None)),
                          TARGET, SearchTools(FakeEvaluator(speed_by_text), Watched(), model_only_graph()))
        assert all(tokens <= 1024 for tokens in sent), sent  # only what fits was sent (a short choice may)
        assert result.best is not None and result.best.speedup > 1.0
        rewrite = result.model_use["rewrite"]
        assert rewrite.failed >= 1  # the long states' prompts (a rewritten state may be short enough)
