"""What the model may cost a search: its time budget, its turn (after the appliers' rewrites of the
code state), request seeds that make identical questions identical; and batch judging."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from regrapht.graph import START
from regrapht.graph.types import Example
from regrapht.model.backend import Completion
from regrapht.model.scripted import ScriptedModel
from regrapht.search import SearchOptions, SearchTools, optimize
from regrapht.validate.types import Candidate, Evaluation

from .fakes import FakeEvaluator, search_request
from .test_pipeline import SAXPY, TARGET, graph, speed_by_text

WRONG = "    /* WRONG */\n}\n```"


@dataclass
class SlowScriptedModel(ScriptedModel):
    """Answers as ScriptedModel does, each reported as `seconds` long (`Completion.seconds`)."""

    seconds: float = 5.0

    def complete(self, *args: object, **kwargs: object) -> Completion:
        return replace(super().complete(*args, **kwargs), seconds=self.seconds)  # type: ignore[arg-type]


def test_the_model_stops_being_asked_once_its_time_budget_is_spent() -> None:
    model = SlowScriptedModel([WRONG] * 40, seconds=5.0)
    options = SearchOptions(model_time_budget_s=8.0, model_give_up=0)
    result = optimize(search_request(SAXPY, "saxpy", "cot", 12, 0, options=options), TARGET,
                      SearchTools(FakeEvaluator(speed_by_text), model))
    assert result.model_use["cot"].calls == 2 and result.model_use["cot"].seconds == 10.0
    unbounded = SlowScriptedModel([WRONG] * 40, seconds=5.0)
    optimize(search_request(SAXPY, "saxpy", "cot", 12, 0,
                            options=SearchOptions(model_time_budget_s=None, model_give_up=0)),
             TARGET, SearchTools(FakeEvaluator(speed_by_text), unbounded))
    assert len(unbounded.calls) == 12


def test_the_model_writes_on_a_code_state_only_after_its_applier_rewrites() -> None:
    g = graph()
    g.add_technique("divergence_reduction", "no applier does this")
    g.add_example(START, "divergence_reduction", Example("k", "because", "", "before", "after", 9.0))
    for strategy in ("mcgs", "greedy", "random"):
        for seed in (0, 1, 2):
            evaluator = FakeEvaluator(speed_by_text)
            optimize(search_request(SAXPY, "saxpy", strategy, 24, seed,
                                    options=SearchOptions(model_give_up=0, model_time_budget_s=None)),
                     TARGET, SearchTools(evaluator, ScriptedModel([WRONG] * 40), g))
            first_answer = next((i for i, c in enumerate(evaluator.seen) if "WRONG" in c.source), None)
            if first_answer is None:
                continue
            # every applier's first rewrite of the original was judged before the model wrote on it
            parent_techniques = evaluator.seen[first_answer].techniques[:-1]
            if parent_techniques == ():
                judged_first = {c.techniques for c in evaluator.seen[:first_answer]}
                assert {("vectorized_access",), ("restrict_const",), ("launch_configuration",)} <= judged_first, strategy


def test_identical_model_requests_of_one_seed_have_identical_seeds() -> None:
    def first_request(strategy: str, budget: int, seed: int) -> tuple[int, str]:
        model = ScriptedModel([WRONG] * 40)
        g = graph()
        g.add_technique("divergence_reduction", "no applier does this")
        g.add_example(START, "divergence_reduction", Example("k", "because", "", "before", "after", 9.0))
        optimize(search_request(SAXPY, "saxpy", strategy, budget, seed,
                                options=SearchOptions(model_choice=False)),
                 TARGET, SearchTools(FakeEvaluator(speed_by_text), model, g))
        return model.calls[0].seed, model.calls[0].messages[-1].content

    assert first_request("mcgs", 24, 0) == first_request("mcgs", 30, 0)
    assert first_request("mcgs", 24, 0)[0] != first_request("mcgs", 24, 1)[0]


@dataclass
class BatchFakeEvaluator(FakeEvaluator):
    batches: list[int] = field(default_factory=list)

    def evaluate_many(self, candidates: Sequence[Candidate]) -> list[Evaluation]:
        self.batches.append(len(candidates))
        return [self.evaluate(c) for c in candidates]


def test_several_rewrites_are_judged_as_one_batch_within_the_budget() -> None:
    evaluator = BatchFakeEvaluator(speed_by_text)
    result = optimize(search_request(SAXPY, "saxpy", "rules", 5), TARGET, SearchTools(evaluator))
    assert result.counters.generated == 5 == len(evaluator.seen)
    assert evaluator.batches and all(size > 1 for size in evaluator.batches)  # single ones: evaluate()
