"""Search parameters the paper leaves open, with the values chosen (docs/search.md says why)."""

from __future__ import annotations

from dataclasses import dataclass

from regrapht.limits import SEARCH_STRATEGIES as STRATEGIES

__all__ = ["MCGS_STALE_ROUNDS", "STALE_ROUNDS", "STRATEGIES", "SearchOptions", "round_cap"]

# Loop caps shared by the strategies (a round is one MCGS iteration, one walk, one CoT answer):
# a search stops after this many rounds in a row that judge nothing new, or after `round_cap`
# rounds in all, even with budget left (every candidate may already be cached).
STALE_ROUNDS = 25
MCGS_STALE_ROUNDS = 60  # MCGS closes a dead branch per stale round: it needs more of them


def round_cap(budget: int) -> int:
    return 10 * budget + 20


@dataclass(frozen=True)
class SearchOptions:
    # Rollout policy: argmax_a [Q(s,a) - visit_penalty * N(s,a)] with probability 1 - epsilon.
    visit_penalty: float = 0.5  # lambda
    epsilon: float = 0.2
    step_cap: int = 4  # rollout steps after the selected vertex
    max_depth: int = 6  # selection depth (techniques on the selected path)
    # Applier variants judged per technique and code state (block sizes, tilings...): the
    # baselines judge them in one step; MCGS judges the first and refines a proven technique.
    max_variants: int = 3
    # Ask the model also for a technique that has applier rewrites for the code, unless one of
    # them already improved on it (off: the model is asked only for techniques no applier can
    # do, so it never delays a rewrite an applier can produce now).
    model_after_applier_gain: bool = False
    # Stop asking the model for kernel rewrites in one search after this many answers in a row
    # gave no correct candidate (0: never stop).
    model_give_up: int = 2
    # Seconds of model calls one search may spend (checked before each call, so the last call
    # may end past it; None: no bound). With SmolLM2 on 4 CPU threads a rewrite takes ~8 s.
    model_time_budget_s: float | None = 20.0
    # Let the model pick among model-only techniques the search cannot tell apart (a short
    # answer under a grammar of their names) before it is asked to write one.
    model_choice: bool = True
    # Expansion also adds, as successors, techniques whose deterministic applier matches the
    # current code, so that the appliers stay reachable from a small or sparse graph.
    applier_edges: bool = True
    # Start the model's answer with "```cuda" and the kernel's own header (name, parameters,
    # opening brace), so it writes a body for this kernel rather than prose or another kernel.
    prefill_header: bool = True
    # Techniques whose rewrites approximate (`numerics == "approximates"` in regrapht/techniques.py:
    # fast-math intrinsics, float for double) are searched; False: neither applier nor model writes them.
    allow_approximations: bool = True
    temperature: float = 0.7
    max_new_tokens: int = 1536
