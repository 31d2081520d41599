"""Monte Carlo Graph Search over the reasoning graph (ReGraphT, arXiv 2510.19873), with the
changes docs/search.md explains and measures.

- Selection walks the expanded subgraph from START by P-UCB(s) = Q(s) + sqrt(2 ln N(parent) / N(s)),
  never revisiting a vertex on the same path. A child not yet visited scores as if visited once
  with the neutral reward 0 (first-play value; the paper gives it infinity, which made every
  untried sibling outrank a proven branch). Ties go by `GraphWalker.promise`.
- Expansion adds all graph successors of the selected vertex on its first visit.
- Structural techniques first: while a vertex's code state has a matching structural rewrite
  (an applier of a technique whose record is not a refinement, regrapht/techniques.py) not yet
  tried from it, the iteration's simulation is that one step (its first variant), so every
  matching structural technique is measured before a branch below it is refined.
- Variants are refinements: a step judges an applier's first variant only; the next variant of
  a technique (another block shape, tile size, unroll factor) is judged when selection passes
  through that step again and the step proved itself (verified faster than the code it
  rewrote), one variant per iteration, the untried one nearest the best judged variant in its
  applier's parameter grid (`search/variants.py`); once the best's neighbours are judged, the
  farther ones wait until nothing else is left (`far_variants`) but come before refinements that
  cannot beat the best (`when_all_dominated`); an unproven technique's variants come last, once
  every technique offered there has been tried. A structural technique's variants end with its
  rewrites under the launch applier's other block shapes (`variant_rewrites`): a rewrite that
  keeps the launch's block is tuned by it, in an order no fixed sweep takes.
- Rollout picks the next technique by argmax_a [Q(s,a) - lambda N(s,a)] with probability
  1 - epsilon, uniformly at random otherwise, up to a step cap, stopping at the first failed step.
- The iteration's reward is the maximum step reward along the whole path, back-propagated to
  every vertex on the selected path.

Statistics are per vertex (graph search: a technique reached by two paths shares them); the code
a technique path produced is cached per path, so re-selecting a path costs no budget.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from regrapht.graph import START, ReasoningGraph
from regrapht.search.appliers import Rewrite
from regrapht.search.appliers.common import block_dims
from regrapht.search.ledger import FAILED, StepRecord, reward_of
from regrapht.search.options import MCGS_STALE_ROUNDS, round_cap
from regrapht.search.profile_evidence import raised_prior
from regrapht.search.run import SearchRun, StepResult
from regrapht.search.variants import converged, next_variant
from regrapht.spec.launch import LaunchConfig
from regrapht.techniques import is_structural, technique_named
from regrapht.validate.types import Candidate

# Techniques that tune code rather than restructure it (`REFINEMENTS`: the records of kind
# "refinement", regrapht/techniques.py): their variants (block shapes, unroll factors, where a
# qualifier or intrinsic goes) refine a kernel whose algorithm is settled. Every other technique
# is structural (tiling, warp reductions, privatization, ...; `is_structural`).
# The technique whose variants are the block shapes a structural rewrite is also tried under.
BLOCK_SHAPES = technique_named("launch_configuration").name
# A structural step within this fraction of the code it rewrote (timing noise, or a grid's first
# point not its best) still has its grid neighbourhood judged (`MCGS.promising`).
PROMISING_MARGIN = 0.10
# The evidence features (search/evidence.py) a graph prior is conditioned on where its examples
# recorded them: those that set a kernel apart (every kernel has some finding or other).
DISTINGUISHING = ("proof:", "f64", "spills")


def state_key(state: Candidate) -> tuple[str, LaunchConfig]:
    return state.source, state.launch


@dataclass
class GraphWalker:
    """What every graph strategy shares: successors, priors, per-edge statistics, the path cache."""

    session: SearchRun
    graph: ReasoningGraph | None
    edge_visits: dict[tuple[str, str], int] = field(default_factory=dict)
    edge_value: dict[tuple[str, str], float] = field(default_factory=dict)
    paths: dict[tuple[str, ...], StepResult] = field(default_factory=dict)
    # the code state each cached path step was applied to (a refined parent makes it stale)
    parents: dict[tuple[str, ...], tuple[str, LaunchConfig]] = field(default_factory=dict)
    # the reward of each applier variant judged for each path step, by its index among the
    # applier's rewrites (MCGS: one per step, more when refined, nearest the best first)
    variants_judged: dict[tuple[str, ...], dict[int, float]] = field(default_factory=dict)
    # the path step that first produced each code state (two technique names of one applier, or
    # two orders of one pair of rewrites, give the same code: it is searched below one of them)
    reached: dict[tuple[str, LaunchConfig], tuple[str, ...]] = field(default_factory=dict)
    # None: each step judges up to `options.max_variants` applier variants at once (the
    # baselines); MCGS judges one of a structural technique and refines later, and every variant
    # of a refinement at once (`variants_for`, module docstring).
    variants_per_step: int | None = None

    def variants_for(self, technique: str) -> int:
        return self.variants_per_step or self.session.options.max_variants

    def successors(self, vertex: str, state: Candidate) -> list[str]:
        """The techniques offered after `vertex` on `state` now (`offered`)."""
        return self.offered(state, self.graph_successors(vertex, state))

    def graph_successors(self, vertex: str, state: Candidate) -> list[str]:
        """The graph's successors of `vertex` and (`applier_edges`) the techniques whose applier
        matches `state`, whether or not they can be applied now."""
        found = [v for v in (self.graph.successors(vertex) if self.graph is not None else []) if v != START]
        if self.session.options.applier_edges:
            found += [a.technique for a in self.session.applicable(state) if a.technique not in found]
        return found

    def offered(self, state: Candidate, techniques: list[str]) -> list[str]:
        """`techniques` less those only the model could write while it may not
        (`SearchRun.model_may_write`: no model, it kept failing, its time is spent, or an
        applier rewrite of `state` is still unjudged): such a step is a certain failure, or a delay."""
        if self.session.model_may_write(state):
            return techniques
        names = self.applier_names(state)
        return [t for t in techniques if t in names]

    def applier_names(self, state: Candidate) -> set[str]:
        return {name for a in self.session.applicable(state) for name in (a.technique, *a.also)}

    def applier_rank(self, state: Candidate, technique: str) -> int:
        """Higher for a technique whose applier matches `state` earlier in APPLIERS (pattern
        rewrites come first there); 0 when none matches. Breaks ties between equal scores: an
        applier rewrite is cheap, safe and, on a pattern it recognises, usually the big gain."""
        appliers = self.session.applicable(state)
        for position, applier in enumerate(appliers):
            if technique == applier.technique:
                return len(appliers) - position
        return 0

    def promise(self, vertex: str, state: Candidate, technique: str) -> tuple[bool, bool, float, int]:
        """How a technique not yet tried here ranks against the others (higher first): one whose
        deterministic applier matches `state` (evidence about this kernel), a structural one or
        one a proven finding names (`proven`) before a refinement, then the prior: the proof's
        bound for a proven one (search/evidence.py), else the graph's (a structural technique's
        mean reward over other kernels, which one 500x histogram can dominate; a refinement's
        largest measured gain, `gain_bound`), raised where the kernel's Nsight Compute profile
        names the technique on the code it measured (`profile_prior`, change 21), then the
        applier order. docs/search.md has the H200 runs behind this order."""
        rank = self.applier_rank(state, technique)
        structural = is_structural(technique)
        proof = self.session.evidence.proof_on(state.source, technique)
        # a refinement by the most it gained after `vertex` in the distilled graph: its mean reward
        # mixes failures and slower steps of other kernels, and says less about what it can gain
        if proof is not None:
            prior = proof.bound
        else:
            prior = self.prior(vertex, technique) if structural else self.gain_bound(vertex, technique)
        return rank > 0, rank > 0 and (structural or proof is not None), self.profile_prior(state, technique, prior), rank

    def profile_prior(self, state: Candidate, technique: str, prior: float) -> float:
        """`prior` raised by the boost the profile gives `technique` (or a technique its matching
        applier also implements) on `state` (search/profile_evidence.py); `prior` itself without
        a profile, or on code the profile did not measure."""
        if self.session.profile.boosts is None:
            return prior
        also = tuple(name for a in self.session.applicable(state) if a.technique == technique for name in a.also)
        return raised_prior(prior, self.session.profile.boost_on(state.source, technique, also))

    def proven(self, state: Candidate, technique: str) -> bool:
        """Whether a finding nvcc confirmed on the kernel names `technique` and still holds on `state`."""
        return self.session.evidence.proof_on(state.source, technique) is not None

    def prior(self, u: str, v: str) -> float:
        if self.graph is None:
            return 0.0
        stats = self.graph.edge_stats(u, v)
        if stats.visits > 0:
            return stats.mean_reward
        if stats.best_speedup:
            return max(stats.best_speedup.values())
        return 0.0

    def gain_bound(self, vertex: str, technique: str, state: Candidate | None = None) -> float:
        """The most `technique` can gain over the code it rewrites: on a `state` where a proof
        names it, the proof's bound from the kernel's own facts (search/evidence.py); else the
        best the graph measured for it on code with this kernel's distinguishing evidence
        (`conditioned_bound`); else the largest speedup the bundled graph measured for it after
        `vertex` (else after any technique); infinite when never measured."""
        proof = self.session.evidence.proof_on(state.source, technique) if state is not None else None
        if proof is not None:
            return proof.bound
        if self.graph is None:
            return math.inf
        conditioned = self.conditioned_bound(technique)
        if conditioned is not None:
            return conditioned
        stats = self.graph.prior_stats(vertex, technique)
        if stats.best_speedup:
            return max(stats.best_speedup.values())
        found = [max(other.best_speedup.values()) for u in self.graph.predecessors(technique)
                 if (other := self.graph.prior_stats(u, technique)).best_speedup]
        return max(found) if found else math.inf

    def conditioned_bound(self, technique: str) -> float | None:
        """The best speedup the graph measured for `technique` on code that shared one of this
        kernel's distinguishing evidence features (a proof, f64 code, spills: `DISTINGUISHING`),
        the prior conditioned on the kernel; None when the graph recorded none such."""
        if self.graph is None:
            return None
        features = [f for f in self.session.evidence.evidence.features() if f.startswith(DISTINGUISHING)]
        if not features:
            return None
        stats = self.graph.feature_stats(technique)
        found = [stats[f][1] for f in features if f in stats]
        return max(found) if found else None

    def dominated(self, vertex: str, state: Candidate, technique: str) -> bool:
        """Whether `technique` is a refinement that cannot make `state` beat the best verified
        version even with the largest gain the graph has measured for it (block shapes on the
        naive code once a tiled version is 3x faster): such steps come last (`live`)."""
        if is_structural(technique) or self.session.ledger.best is None:
            return False
        best = self.session.ledger.best.evaluation.speedup or 1.0
        return self.session.ledger.speedup_of(state) * self.gain_bound(vertex, technique, state) < best

    def live(self, vertex: str, state: Candidate, techniques: list[str]) -> list[str]:
        """The techniques with an applier rewrite of `state` that are not dominated; all of
        `techniques` when none is left. So the model (techniques only it could write) has its
        turn where the appliers have nothing left worth judging: its answers cost a candidate
        and seconds each, and SmolLM2's were correct 0 times of 51 in the budget-12 ablation."""
        names = self.applier_names(state)
        first = [t for t in techniques if t in names and not self.dominated(vertex, state, t)]
        return first or self.when_all_dominated(state, techniques)

    def when_all_dominated(self, state: Candidate, techniques: list[str]) -> list[str]:
        """What `live` offers when no applier rewrite worth judging is left: all of `techniques`."""
        return techniques

    def edge_q(self, u: str, v: str) -> float:
        """This search's mean reward for u -> v; 0 (neutral) before it is tried: a prior is a
        measure of other kernels, so it only orders untried techniques (`promise`)."""
        return self.edge_value.get((u, v), 0.0)

    def step(self, techniques: tuple[str, ...], vertex: str, technique: str, state: Candidate) -> StepResult:
        key = (*techniques, technique)
        cached = self.paths.get(key)
        if cached is not None and self.parents.get(key) == state_key(state):
            return cached
        if technique not in self.applier_names(state) and not self.session.model_may_write(state):
            # not now: the model's turn may come later, so the step is not remembered as failed
            return StepResult(technique, None, FAILED, None, "the model is not asked now")
        variants = self.variants_for(technique)
        result = self.session.apply_technique(state, vertex, technique, variants=variants)
        if result.evaluation is not None or result.state is None:
            self.paths[key] = result
            self.parents[key] = state_key(state)
            self.variants_judged[key] = {i: self.variant_reward(state, technique, rewrite)
                                         for i, rewrite in enumerate(self.session.applier_rewrites(state, technique)[:variants])}
        if result.state is not None:
            self.reached.setdefault(state_key(result.state), key)
        return result

    def variant_reward(self, parent: Candidate, technique: str, rewrite: Rewrite) -> float:
        """The reward the variant `rewrite` of `technique` on `parent` was judged at (FAILED if not
        judged: then it was past the budget, or its candidate was rejected before compiling)."""
        evaluation = self.session.ledger.evaluation_of(Candidate(rewrite.source, rewrite.launch, (*parent.techniques, technique)))
        return reward_of(evaluation) if evaluation is not None else FAILED

    def elsewhere(self, key: tuple[str, ...], result: StepResult) -> bool:
        """Whether the step `key` produced code that another path produced first."""
        return result.state is not None and self.reached.get(state_key(result.state), key) != key

    def dead_end(self, parent: Candidate, result: StepResult) -> bool:
        """Whether a step was measured and is not faster than the code it rewrote: whatever could
        follow it can follow its parent, faster (an unverified step, without a device, is not one)."""
        evaluation = result.evaluation
        return (result.state is not None and evaluation is not None and evaluation.verified
                and (evaluation.speedup or 0.0) <= self.session.ledger.speedup_of(parent))

    def spent(self, techniques: tuple[str, ...], technique: str, state: Candidate) -> bool:
        """Whether `technique` was tried on `state` after `techniques` and failed or did not gain."""
        key = (*techniques, technique)
        if not self.tried(key, state):
            return False
        result = self.paths[key]
        return result.state is None or result.reward <= FAILED or self.dead_end(state, result) or self.elsewhere(key, result)

    def tried(self, key: tuple[str, ...], state: Candidate) -> bool:
        """Whether the step `key` was applied to `state` itself (not to code a refinement of an
        earlier step has since replaced)."""
        return key in self.paths and self.parents.get(key) == state_key(state)

    def record_edge(self, u: str, v: str, reward: float) -> None:
        key = (u, v)
        n = self.edge_visits.get(key, 0) + 1
        self.edge_visits[key] = n
        value = self.edge_value.get(key, 0.0)
        self.edge_value[key] = value + (reward - value) / n


@dataclass
class MCGS(GraphWalker):
    visits: dict[str, int] = field(default_factory=dict)
    value: dict[str, float] = field(default_factory=dict)
    expanded: dict[str, list[str]] = field(default_factory=dict)
    # selection statistics of each edge u -> v taken by selection (what P-UCB's Q and n read)
    selected_visits: dict[tuple[str, str], int] = field(default_factory=dict)
    selected_value: dict[tuple[str, str], float] = field(default_factory=dict)
    # technique paths whose iterations judged nothing new: selection no longer enters them
    closed: set[tuple[str, ...]] = field(default_factory=set)
    # proven steps whose variants converged (every grid neighbour of the best judged), with the
    # code state they rewrote: their farther variants are judged once nothing else is left (`run`)
    tuned: dict[tuple[str, ...], Candidate] = field(default_factory=dict)
    # the code state each structural path step rewrote (what its variants are rewrites of)
    step_parents: dict[tuple[str, ...], Candidate] = field(default_factory=dict)
    iterations: int = 0
    last_path: list[str] = field(default_factory=list)
    # whether this iteration's selection or rollout passed over dominated refinements because a
    # tuned step had variants left (`when_all_dominated`)
    deferred: bool = False

    def variants_for(self, technique: str) -> int:
        """One variant of a structural technique (the others once it proved itself: `refine`);
        a refinement's `max_variants` at once, the best kept, as the baselines do: its variants
        are the technique (a block shape is only worth its best), and judging them later one per
        iteration lost the 1.3x block shape behind a slower first one."""
        return 1 if is_structural(technique) else self.session.options.max_variants

    def run(self) -> None:
        stale = 0
        limit = round_cap(self.session.ledger.budget)
        while not self.session.exhausted() and self.iterations < limit and stale < MCGS_STALE_ROUNDS:
            before = self.session.ledger.evaluated
            self.iteration()
            if self.session.ledger.evaluated == before:
                stale += 1
                if len(self.last_path) > 1:
                    self.closed.add(tuple(self.last_path[1:]))
            else:
                stale = 0
        # Budget left and nothing left to search: the farther variants of the tuned techniques,
        # then polish the fastest version (the steps the search does not repeat on one path,
        # unrolling an unrolled loop, are tried there) rather than leave the budget unspent.
        self.far_variants()
        best = self.session.ledger.best
        if not self.session.exhausted() and best is not None:
            rules_sweep(self.session, best.candidate, best.evaluation.speedup or 1.0)

    def step(self, techniques: tuple[str, ...], vertex: str, technique: str, state: Candidate) -> StepResult:
        if is_structural(technique):
            self.step_parents[(*techniques, technique)] = state
        return super().step(techniques, vertex, technique, state)

    def promising(self, key: tuple[str, ...]) -> bool:
        """Whether the structural step `key` was verified faster than the code it rewrote, or within
        PROMISING_MARGIN of it: one point of a grid that is not clearly slower says little about
        the grid (heat3d on the H200: the first coarsening 0.99x, a neighbour 1.04x)."""
        result = self.paths.get(key)
        parent = self.step_parents.get(key)
        if result is None or parent is None or result.state is None or result.evaluation is None:
            return False
        speedup = result.evaluation.speedup
        return (result.evaluation.verified and speedup is not None
                and speedup >= self.session.ledger.speedup_of(parent) * (1.0 - PROMISING_MARGIN)
                and not self.discharged_beside(key))

    def discharged_beside(self, key: tuple[str, ...]) -> bool:
        """Whether the step `key`'s code still carries a proof (search/evidence.py) whose technique,
        applied to the same parent, was verified faster than the step: its grid is then searched
        below that technique (where the step is offered again) rather than on code that keeps the
        proven loss, and waits here until nothing else is left (`far_variants`; change 19)."""
        result, parent = self.paths.get(key), self.step_parents.get(key)
        if result is None or result.state is None or parent is None:
            return False
        for technique in self.session.evidence.evidence.proofs:
            if technique == key[-1] or not self.proven(result.state, technique):
                continue
            sibling = (*key[:-1], technique)
            done = self.paths.get(sibling)
            if (done is not None and done.state is not None and self.tried(sibling, parent)
                    and done.reward > result.reward and not self.dead_end(parent, done)):
                return True
        return False

    def open_neighbourhood(self) -> tuple[tuple[str, ...], Candidate] | None:
        """The promising structural step (the fastest first) whose best variant has neighbours not
        yet judged (`search/variants.py`), or a verified step that is not promising yet whose
        applier's hand-picked variants (its first `max_variants`) are not all judged (change 20),
        with the code state it rewrote; None if none is left."""
        found = [(key, parent) for key, parent in self.step_parents.items()
                 if self.parents.get(key) == state_key(parent) and key not in self.tuned
                 and (self.promising(key) or self.hand_picked_left(key, parent))]
        for key, parent in sorted(found, key=lambda kp: -self.paths[kp[0]].reward):
            if self.next_variant_index(key, parent, anywhere=False) is not None:
                return key, parent
        return None

    def hand_picked_left(self, key: tuple[str, ...], parent: Candidate) -> bool:
        """Whether the structural step `key` was verified (correct, if slower) and some of its
        applier's first `max_variants` variants, the points its grid was built around, are not
        judged yet: a first point clearly slower says little of the second (on the train census
        the 1-D stencils' first tile was 0.66-0.79x, their second and third 0.98-1.19x). Not for a
        step whose proof was discharged beside it (`discharged_beside`), nor while another
        structural step from the same code is promising (its grid comes first, then change 18)."""
        result = self.paths.get(key)
        if result is None or result.state is None or result.evaluation is None or not result.evaluation.verified:
            return False
        if self.discharged_beside(key):
            return False
        if any(other != key and self.parents.get(other) == state_key(parent) and self.promising(other)
               for other, before in self.step_parents.items() if before == parent):
            return False  # a promising alternative from the same code is searched instead
        first = min(self.session.options.max_variants, len(self.variant_rewrites(parent, key[-1])))
        judged = self.variants_judged.get(key, {})
        return any(i not in judged for i in range(first))

    def next_variant_index(self, key: tuple[str, ...], parent: Candidate, *, anywhere: bool) -> int | None:
        """Which of the step `key`'s variants on `parent` (`variant_rewrites`) to judge next
        (`search/variants.py`: the applier's hand-picked ones, then nearest the best; farther ones
        only if `anywhere`); None if none is left."""
        rewrites = self.variant_rewrites(parent, key[-1])
        judged = self.variants_judged.setdefault(key, {})
        first = self.session.options.max_variants
        if not anywhere and not self.promising(key):
            # not promising: only its hand-picked variants (`hand_picked_left`), in the applier's order
            return next((i for i in range(min(first, len(rewrites))) if i not in judged), None)
        return next_variant(rewrites, judged, anywhere=anywhere, first=first)

    def iteration(self) -> float:
        self.iterations += 1
        # every matching structural technique of the original is measured first (change 1)
        root_probed = START in self.expanded and self.untried_structural([START], self.session.original) is None
        neighbourhood = self.open_neighbourhood() if root_probed else None
        if neighbourhood is not None:
            # A structural step's grid neighbourhood is judged before anything is refined
            # (docs/search.md change 16): the iteration's simulation is its next variant.
            key, parent = neighbourhood
            judged = self.judge_next_variant(key, parent, vertex_before(key), anywhere=False)
            if judged is not None:
                path = [START, *key]
                self.backpropagate(path, judged)
                self.last_path = path
                return judged
        before = self.session.ledger.evaluated
        self.deferred = False
        path, rewards, state = self.select()
        if state is not None:
            probe = self.untried_structural(path, state)
            if probe is not None:
                # The simulation of this iteration is the one structural step (module docstring).
                result = self.step(tuple(path[1:]), path[-1], probe, state)
                self.record_edge(path[-1], probe, result.reward)
                rewards.append(result.reward)
                path.append(probe)
            else:
                rewards += self.rollout(path, state)
        if self.session.ledger.evaluated == before and self.deferred:
            # only dominated refinements were left on the way (`when_all_dominated`): the
            # iteration judges a tuned step's farther variant instead (change 18)
            far = self.judge_far_variant(self.tuned)
            if far is not None:
                path, reward = far
                self.backpropagate(path, reward)
                self.last_path = path
                return reward
        reward = max(rewards) if rewards else 0.0
        self.backpropagate(path, reward)
        self.last_path = path
        return reward

    def ucb(self, parent: str, child: str) -> float:
        """P-UCB(child) = Q + sqrt(2 ln N(parent) / n), with Q and n those of the edge parent ->
        child (a vertex's own statistics mix in the rewards of paths through its other parents);
        an edge not yet selected counts as one visit of reward 0 (the first-play value)."""
        n = self.selected_visits.get((parent, child), 0)
        explore = 2.0 * math.log(max(self.visits.get(parent, 1), 1))
        if n == 0:
            return math.sqrt(explore)
        return self.selected_value.get((parent, child), 0.0) + math.sqrt(explore / n)

    def untried_structural(self, path: list[str], state: Candidate) -> str | None:
        """The most promising structural technique, or technique a proven finding names
        (`proven`: judged as early as a structural one, change 19), among the last vertex's
        successors whose applier matches `state` and which has not been tried from this path
        yet, if any."""
        vertex = path[-1]
        techniques = tuple(path[1:])
        matching = {a.technique for a in self.session.applicable(state)}
        untried = [t for t in self.expanded.get(vertex, ()) if t in matching and (is_structural(t) or self.proven(state, t))
                   and t not in path and not self.tried((*techniques, t), state)]
        if not untried:
            return None
        return max(untried, key=lambda t: self.promise(vertex, state, t))

    def select(self) -> tuple[list[str], list[float], Candidate | None]:
        """The selected path, the rewards of its steps, and the code state at its end (None if a
        step failed or the iteration's candidate was a refinement judged on the way)."""
        path = [START]
        rewards: list[float] = []
        state: Candidate | None = self.session.original
        vertex = START
        while state is not None:
            if vertex not in self.expanded:
                self.expanded[vertex] = self.graph_successors(vertex, state)
                break
            if self.untried_structural(path, state) is not None:
                break
            children = self.live(vertex, state, [c for c in self.offered(state, self.expanded[vertex])
                                                 if c not in path and (*path[1:], c) not in self.closed])
            if not children or len(path) > self.session.options.max_depth:
                break
            # Ties (unvisited children) go by promise, then the graph's order.
            here = state
            scores = {c: self.ucb(vertex, c) for c in children}
            child = max(children, key=lambda c: (scores[c], *self.promise(vertex, here, c)))
            child = self.model_choice(vertex, state, children, scores, child)
            seen_before = (*path[1:], child) in self.paths
            result = self.step(tuple(path[1:]), vertex, child, state)
            path.append(child)
            rewards.append(result.reward)
            # a step is refined when selection comes back to it, not the moment it is first judged
            refined = self.refine(path, state) if seen_before else None
            if refined is not None:
                rewards.append(refined)
                return path, rewards, None
            if self.dead_end(state, result) or self.elsewhere(tuple(path[1:]), result):
                # nothing below a step that did not gain (`dead_end`), or whose code is searched below another path
                return path, rewards, None
            state = result.state
            vertex = child
        return path, rewards, state

    def refine(self, path: list[str], parent: Candidate) -> float | None:
        """Judge the next applier variant of the path's last step if that step proved itself
        (verified faster than `parent`), or if nothing else is left to try from `parent`
        (`all_tried`); its reward, or None if nothing was judged. A better variant replaces the
        step's code, so the steps below it are applied afresh."""
        key = tuple(path[1:])
        result = self.paths.get(key)
        if result is None or result.state is None or result.evaluation is None:
            return None
        speedup = result.evaluation.speedup
        proven = result.evaluation.outcome == "faster" and speedup is not None and speedup > self.session.ledger.speedup_of(parent)
        if not proven and not self.all_tried(path, parent):
            return None
        # every variant, as the `rules` sweep judges them all (the best GEMM tile shape or block
        # shape is not always among the first `max_variants`), nearest the best judged one first;
        # a proven step's farther variants once its neighbourhood is judged and nothing else is left
        return self.judge_next_variant(key, parent, path[-2], anywhere=not proven)

    def judge_next_variant(self, key: tuple[str, ...], parent: Candidate, previous: str, *, anywhere: bool) -> float | None:
        """Judge the next variant (`search/variants.py`) of the step `key` on `parent`; its reward,
        or None if none is left (or, unless `anywhere`, none near the best). A better variant
        replaces the step's code."""
        technique = key[-1]
        rewrites = self.variant_rewrites(parent, technique)
        rewards = self.variants_judged.setdefault(key, {})
        index = self.next_variant_index(key, parent, anywhere=anywhere)
        if index is None:
            if converged(rewrites, rewards, self.session.options.max_variants):
                self.tuned[key] = parent
            return None
        judged = self.session.judge_variant(parent, previous, technique, rewrites[index])
        if judged is None:
            return None
        rewards[index] = judged.reward
        self.record_edge(previous, technique, judged.reward)
        result = self.paths[key]
        if judged.reward > result.reward:
            self.paths[key] = StepResult(technique, judged.candidate, judged.reward, judged.evaluation, judged.note)
        return judged.reward

    def when_all_dominated(self, state: Candidate, techniques: list[str]) -> list[str]:
        """Only the techniques no applier writes (the model's) while a tuned step has variants left
        (change 18): one of those can still beat the best version, a dominated refinement cannot
        even with its largest measured gain; its turn comes once they are judged."""
        if not self.far_variant_left():
            return techniques
        names = self.applier_names(state)
        self.deferred = True
        return [t for t in techniques if t not in names]

    def open_steps(self, steps: Mapping[tuple[str, ...], Candidate]) -> list[tuple[str, ...]]:
        """The structural steps of `steps` (step -> the code state its variants rewrite) whose code
        state is still that one and whose step produced code, fastest first."""
        keys = [key for key, parent in steps.items()
                if self.parents.get(key) == state_key(parent) and key in self.paths and self.paths[key].state is not None]
        return sorted(keys, key=lambda k: -self.paths[k].reward)

    def far_variant_left(self) -> bool:
        """Whether a tuned step has a variant not yet judged."""
        return any(self.next_variant_index(key, self.tuned[key], anywhere=True) is not None
                   for key in self.open_steps(self.tuned))

    def judge_far_variant(self, steps: Mapping[tuple[str, ...], Candidate]) -> tuple[list[str], float] | None:
        """Judge the next variant (nearest its best) of the fastest step of `steps` with any left;
        the step's path and the reward, or None if none is left or the budget is spent."""
        for key in self.open_steps(steps):
            judged = self.judge_next_variant(key, steps[key], vertex_before(key), anywhere=True)
            if judged is not None:
                return [START, *key], judged
        return None

    def far_variants(self) -> None:
        """With the search otherwise done and budget left: the variants not yet judged of every
        structural step (a tuned one's beyond its best's neighbours, and those of a step whose
        first variant was clearly slower), the fastest step's first, nearest its best first."""
        steps = {**self.step_parents, **self.tuned}
        while not self.session.exhausted() and self.judge_far_variant(steps) is not None:
            pass

    def variant_rewrites(self, parent: Candidate, technique: str) -> list[Rewrite]:
        """The variants of `technique` on `parent`: its applier's rewrites, then, for a structural
        technique, its rewrites of `parent` under each other block shape the launch applier
        offers, where they differ (a rewrite that keeps the launch's block, such as a vectorized
        map or a privatised histogram, is tuned by it). The `rules` sweep never reaches these: it
        tunes the launch after the structural rewrite, where the launch applier no longer matches;
        and a block shape judged alone is often slower, so no path through it is searched."""
        rewrites = [with_block(r) for r in self.session.applier_rewrites(parent, technique)]
        if not is_structural(technique):
            return rewrites
        seen = {(r.source, r.launch) for r in rewrites}
        for shape in self.session.applier_rewrites(parent, BLOCK_SHAPES):
            if shape.source != parent.source:
                continue  # not a block shape only
            shaped = Candidate(shape.source, shape.launch, parent.techniques)
            for rewrite in self.session.applier_rewrites(shaped, technique):
                if (rewrite.source, rewrite.launch) not in seen:
                    seen.add((rewrite.source, rewrite.launch))
                    # the shape changed only the launch, so the rewrite's edits still apply to `parent`
                    rewrites.append(with_block(replace(rewrite, note=f"{rewrite.note}, {shape.note}")))
        return rewrites

    def all_tried(self, path: list[str], parent: Candidate) -> bool:
        """Whether every technique the last step's parent offers has been tried from it: then the
        variants of a technique that has not proven itself are the only untried rewrites left
        there, and judging them beats leaving the budget unspent."""
        prefix = tuple(path[1:-1])
        offered = [c for c in self.offered(parent, self.expanded.get(path[-2], []))
                   if not self.dominated(path[-2], parent, c)]
        return all((*prefix, c) in self.paths for c in offered if c not in path[:-1])

    def rollout(self, path: list[str], state: Candidate) -> list[float]:
        rewards: list[float] = []
        techniques = tuple(path[1:])
        vertex = path[-1]
        options = self.session.options
        for _ in range(options.step_cap):
            if self.session.exhausted():
                break
            # a refinement already on this path (block shape, unrolling, ...) is not applied again:
            # re-tuning what was just tuned spent the GEMM run's budget (docs/search.md)
            # nor a step already tried here that failed or did not gain: it would end the rollout
            # having judged nothing (and close the path with untried steps left below it)
            offered = [t for t in self.successors(vertex, state) if (is_structural(t) or t not in techniques)
                       and not self.spent(techniques, t, state)]
            choices = self.live(vertex, state, self.no_model_delay(techniques, state, offered))
            if not choices:
                break
            if self.session.rng.random() < options.epsilon:
                technique = self.session.rng.choice(choices)
            else:
                scores = {a: self.edge_q(vertex, a) - options.visit_penalty * self.edge_visits.get((vertex, a), 0)
                          for a in choices}
                technique = max(choices, key=lambda a: (scores[a], *self.promise(vertex, state, a)))
                technique = self.model_choice(vertex, state, choices, scores, technique)
            result = self.step(techniques, vertex, technique, state)
            self.record_edge(vertex, technique, result.reward)
            rewards.append(result.reward)
            if (result.state is None or result.reward <= FAILED or self.dead_end(state, result)
                    or self.elsewhere((*techniques, technique), result)):
                break
            techniques = (*techniques, technique)
            state = result.state
            vertex = technique
        return rewards

    def no_model_delay(self, techniques: tuple[str, ...], state: Candidate, choices: list[str]) -> list[str]:
        """`choices` without the model-only techniques while one with an applier rewrite has not
        been tried from here: a model answer takes seconds to tens of seconds and seldom wins,
        an applier rewrite is ready now."""
        names = self.applier_names(state)
        if any(t in names and not self.tried((*techniques, t), state) for t in choices):
            return [t for t in choices if t in names]
        return choices

    def model_choice(self, vertex: str, state: Candidate, choices: list[str], scores: dict[str, float],
                     policy_pick: str) -> str:
        """Where the policy cannot tell the model-only techniques apart (equal scores, none with
        an applier), the model picks the one it would write, under a grammar of their names."""
        names = self.applier_names(state)
        tied = [t for t in choices if t not in names and scores[t] == scores[policy_pick]]
        if policy_pick in names or len(tied) < 2:
            return policy_pick
        descriptions = {t: self.graph.description(t) if self.graph is not None and self.graph.has_technique(t) else ""
                        for t in tied}
        return self.session.choose_technique(state, descriptions) or policy_pick

    def backpropagate(self, path: list[str], reward: float) -> None:
        for vertex in path:
            n = self.visits.get(vertex, 0) + 1
            self.visits[vertex] = n
            q = self.value.get(vertex, 0.0)
            self.value[vertex] = q + (reward - q) / n
        for edge in zip(path, path[1:], strict=False):
            n = self.selected_visits.get(edge, 0) + 1
            self.selected_visits[edge] = n
            q = self.selected_value.get(edge, 0.0)
            self.selected_value[edge] = q + (reward - q) / n


def vertex_before(key: tuple[str, ...]) -> str:
    """The graph vertex the last step of the technique path `key` was taken from."""
    return key[-2] if len(key) > 1 else START


def with_block(rewrite: Rewrite) -> Rewrite:
    """`rewrite` with its launch's block among its grid coordinates (`block_x`, `block_y`), where
    the block is literal: block shapes are an axis of every variant grid (`search/variants.py`)."""
    dims = block_dims(rewrite.launch)
    if dims is None:
        return rewrite
    return replace(rewrite, params=(*rewrite.params, ("block_x", dims[0]), ("block_y", dims[1])))


def rules_sweep(session: SearchRun, start: Candidate, start_speedup: float) -> None:
    """The `rules` strategy from `start`: every applier in order judges all its rewrites of the
    current code, the fastest verified gain is kept, and the sweep repeats while it gains."""
    current, current_speedup = start, start_speedup
    improved = True
    while improved and not session.exhausted():
        improved = False
        for index, applier in enumerate(session.applier_cache.appliers):
            best: tuple[Candidate, float] | None = None
            rewrites = session.applier_cache.by_applier(current)[index]  # computed once per code state
            # compiled in parallel where the evaluator can; shorter than `rewrites` once the budget is spent
            batch = session.judge_many([(Candidate(r.source, r.launch, (*current.techniques, applier.technique)), r.note)
                                        for r in rewrites])
            for judged in batch:
                speedup = judged.evaluation.speedup
                if (judged.evaluation.outcome == "faster" and speedup is not None and speedup > current_speedup
                        and (best is None or speedup > best[1])):
                    best = (judged.candidate, speedup)
                if judged.candidate not in session.ledger.history:
                    session.ledger.history[judged.candidate] = StepRecord(applier.technique, judged.note, speedup)
                    session.ledger.parents[judged.candidate] = current
            if best is not None:
                current, current_speedup = best
                improved = True
            if len(batch) < len(rewrites):
                return
