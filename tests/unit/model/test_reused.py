"""`ReusedAnswers`: the identical request is answered once, with the seconds of its generation."""

from __future__ import annotations

from regrapht.model.backend import ChatMessage
from regrapht.model.reused import ReusedAnswers
from regrapht.model.scripted import ScriptedModel


def test_an_identical_request_is_answered_once_and_carries_its_generation_time() -> None:
    ticks = iter([10.0, 17.5, 20.0, 21.0])
    scripted = ScriptedModel(["first answer", "second answer"])
    model = ReusedAnswers(scripted, lambda: next(ticks))
    ask = [ChatMessage("user", "rewrite this kernel")]
    one = model.complete(ask, max_tokens=64, temperature=0.7, seed=5)
    assert one.text == "first answer" and one.seconds is None  # generated now: the caller times it
    again = model.complete(ask, max_tokens=64, temperature=0.7, seed=5)
    assert again.text == "first answer" and again.seconds == 7.5
    other_seed = model.complete(ask, max_tokens=64, temperature=0.7, seed=6)
    assert other_seed.text == "second answer"
    assert (model.hits, model.misses, len(scripted.calls)) == (1, 2, 2)


def test_a_cancelled_answer_is_not_kept() -> None:
    scripted = ScriptedModel(["a long answer that is stopped", "the answer"])
    model = ReusedAnswers(scripted, lambda: 0.0)
    ask = [ChatMessage("user", "rewrite")]
    stopped = model.complete(ask, max_tokens=64, temperature=0.7, seed=1, should_stop=lambda: True)
    assert stopped.finish_reason == "cancelled"
    assert model.complete(ask, max_tokens=64, temperature=0.7, seed=1).text == "the answer"
