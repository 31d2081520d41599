"""Search parameters the paper leaves open, with the values chosen (docs/search.md says why)."""

from __future__ import annotations

from dataclasses import dataclass

STRATEGIES = ("mcgs", "random", "greedy", "cot", "rules")


@dataclass(frozen=True)
class SearchOptions:
    # Rollout policy: argmax_a [Q(s,a) - visit_penalty * N(s,a)] with probability 1 - epsilon.
    visit_penalty: float = 0.5  # lambda
    epsilon: float = 0.2
    step_cap: int = 4  # rollout steps after the selected vertex
    max_depth: int = 6  # selection depth (techniques on the selected path)
    max_variants: int = 3  # applier rewrites judged per step (block sizes, tilings...)
    use_model: bool = True
    # Ask the model in a step even when an applier rewrite of that technique already improved
    # on the code (off: the budget goes to techniques the appliers cannot do).
    model_after_applier_gain: bool = False
    # Expansion also adds, as successors, techniques whose deterministic applier matches the
    # current code, so that the appliers stay reachable from a small or sparse graph.
    applier_edges: bool = True
    # Start the model's answer with "```cuda" and the kernel's own header (name, parameters,
    # opening brace), so it writes a body for this kernel rather than prose or another kernel.
    prefill_header: bool = True
    temperature: float = 0.7
    max_new_tokens: int = 1536
