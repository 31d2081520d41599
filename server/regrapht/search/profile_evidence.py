"""What an Nsight Compute profile of the kernel says the search should try first (issue 31):
per-technique prior boosts, each with its reasons (docs/search.md change 21).

`profile_boosts(profile)` (pure) reads one profiled launch (`validate/profile_report.Profile`:
DRAM and SM throughput as % of peak, achieved occupancy, the top warp stall reasons in cycles per
issued instruction, Nsight Compute's rule findings) and names the techniques of the registry
(regrapht/techniques.py) that answer what it measured, with a weight in (0, 1] per finding; a
technique's boost is the sum of its findings' weights. What each finding means is Nsight
Compute's own reading of its metrics (the Profiling Guide's "Speed Of Light", "Occupancy" and
"Warp Stall Reasons", and the guidance its rules print):

- **Speed of light.** Throughput as % of the peak sustained rate; below 60% on both the memory
  and the compute side "typically indicates latency issues" (the SOL rule), so a kernel is
  *memory-bound* when DRAM >= 60% and above SM, *compute-bound* when SM >= 60% and above DRAM,
  else *latency-bound*. Memory-bound raises what moves the same bytes in fewer, wider requests
  or fewer bytes (vectorized access, shared-memory tiling), by the DRAM share of peak
  (coalescing only where a rule measured wasted sectors, below); compute-bound raises what
  issues fewer or cheaper instructions per output (fast math, strength reduction, loop-invariant
  hoisting, thread coarsening: neighbouring outputs share their index arithmetic and loads), by
  the SM share; latency-bound raises nothing by itself: the SOL rule points to the warp stalls
  for the reason, and they are read below.
- **Warp stalls.** A reason counts when it holds at least `DOMINANT_STALL` of the reported stall
  cycles and at least one cycle per issued instruction; its weight is its share. Long scoreboard
  (waiting on an L1TEX: global or local memory, result: "increase data locality", "move
  frequently used data to shared memory") -> shared-memory tiling, vectorized access; LG
  throttle (the local/global queue is full: "combine multiple lower-width memory operations
  into fewer wider" ones, "avoid redundant global memory accesses") -> vectorized access,
  shared-memory tiling, thread coarsening (a neighbour loaded once into a register serves
  several outputs); MIO throttle ("fewer but wider" shared loads) ->
  vectorized access, bank-conflict padding; short scoreboard (shared memory: "reduce bank
  conflicts") -> bank-conflict padding; barrier (warps waiting for siblings at `__syncthreads`:
  uniform work, smaller blocks) -> warp-shuffle reduction, launch configuration; math pipe
  throttle (an oversubscribed pipeline: "change the instruction mix") -> fast math, strength
  reduction; wait (fixed-latency dependencies: "restructuring the code or unrolling loops") ->
  loop unrolling, instruction-level parallelism, thread coarsening; not selected (more eligible
  warps than issue slots: "reducing the number of active warps" for locality) -> thread
  coarsening; branch resolving ("reduce control flow divergence") -> divergence reduction. The
  other reasons name no technique.
- **Occupancy.** Achieved occupancy below `LOW_OCCUPANCY`% ("low occupancy always reduces the
  ability to hide latencies") -> launch configuration (block size, `__launch_bounds__` for the
  registers), weight 1 - occupancy.
- **Rules.** Each OPT or WRN rule whose text names a technique (`validate/profiler.py`
  `RULE_TECHNIQUES`), weight Nsight Compute's own estimate where the rule states one (`Est.
  Speedup: 36%` -> 0.36, else its `Est. Local Speedup`), else `RULE_WITHOUT_ESTIMATE`; a note
  about ncu itself (`ProfileRule.about_tool`: a metric it could not collect) counts for none. A rule
  saying the grid "is too small to fill" the device (fewer than one full wave: SMs left idle)
  also raises, at the same weight, the techniques that spread one thread's serial loop over a
  group of threads (`SPLIT_WORK`: column split, block or warp per row, block reduction).

The search (search/mcgs.py `GraphWalker.promise`) raises the prior of a boosted technique on the
code the profile measured (`ProfileView`, `raised_prior`): prior p becomes p + b max(|p|, 1) for a
boost b, so one full-strength finding doubles a prior of at least 1, and a technique the graph
never measured (p = 0) gets b. A strong prior the profile does not name stays ahead (block scan
over vectorizing an O(n^2) per-thread scan: the profile measures the bottleneck of the algorithm
it ran, the graph what other algorithms gained); between comparable priors the profile decides.
A technique whose applier also implements a raised one (`Applier.also`: a block-per-row rewrite
coalesces the row's loads) is raised by it too. It never removes a technique, and without a
profile every boost is 0 and the search is as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from regrapht.techniques import find_technique
from regrapht.validate.profile_report import Profile

__all__ = ["Boost", "COMPUTE_SIDE", "DOMINANT_STALL", "LOW_OCCUPANCY", "MEMORY_SIDE", "NO_PROFILE",
           "PRIOR_STRATEGIES", "ProfileBoosts", "ProfileView", "RULE_WITHOUT_ESTIMATE", "SPLIT_WORK", "STALL_TECHNIQUES",
           "THROUGHPUT_BOUND", "bottleneck_of", "profile_boosts", "profile_view", "raised_prior", "rule_estimate"]

Bottleneck = Literal["memory", "compute", "latency", "unknown"]

THROUGHPUT_BOUND = 60.0  # % of peak: below it on both sides, Nsight Compute's SOL rule reads latency issues
LOW_OCCUPANCY = 50.0  # % of the warps an SM can hold
DOMINANT_STALL = 0.3  # share of the reported stall cycles
MIN_STALL_CYCLES = 1.0  # per issued instruction
RULE_WITHOUT_ESTIMATE = 0.5
# The strategies whose choices read the boosts (`GraphWalker.promise`): the others ignore them.
PRIOR_STRATEGIES = ("mcgs", "greedy")

MEMORY_SIDE = ("vectorized_access", "shared_memory_tiling")
COMPUTE_SIDE = ("fast_math", "strength_reduction", "loop_invariant_hoisting", "thread_coarsening")
# more threads for the same work: what a grid too small to fill the device needs besides block shapes
SPLIT_WORK = ("column_split_reduction", "block_per_row", "warp_per_row_csr", "block_reduce_atomic")
TOO_SMALL_GRID = "too small to fill"
# warp stall reason -> (what the warps wait for, the techniques that answer it): module docstring
STALL_TECHNIQUES: dict[str, tuple[str, tuple[str, ...]]] = {
    "long_scoreboard": ("an L1TEX (global or local memory) result", ("shared_memory_tiling", "vectorized_access")),
    "lg_throttle": ("room in the local/global memory queue",
                    ("vectorized_access", "shared_memory_tiling", "thread_coarsening")),
    "mio_throttle": ("room in the MIO (shared memory, special math) queue", ("vectorized_access", "bank_conflict_padding")),
    "short_scoreboard": ("a shared-memory (MIO) result", ("bank_conflict_padding",)),
    "barrier": ("sibling warps at a block barrier", ("warp_shuffle_reduction", "launch_configuration")),
    "math_pipe_throttle": ("an oversubscribed math pipeline", ("fast_math", "strength_reduction")),
    "wait": ("fixed-latency dependencies", ("loop_unrolling", "instruction_level_parallelism", "thread_coarsening")),
    "not_selected": ("an issue slot (more eligible warps than the scheduler issues)", ("thread_coarsening",)),
    "branch_resolving": ("branch targets", ("divergence_reduction",)),
}
_ESTIMATE = re.compile(r"Est\.\s+(Global\s+|Local\s+)?Speedup:\s*([0-9]+(?:\.[0-9]+)?)\s*%", re.IGNORECASE)


@dataclass(frozen=True)
class Boost:
    technique: str  # canonical (regrapht/techniques.py)
    weight: float  # the sum of its findings' weights
    reasons: tuple[str, ...]  # one line per finding

    def to_json(self) -> dict[str, object]:
        return {"technique": self.technique, "boost": self.weight, "reasons": list(self.reasons)}


@dataclass(frozen=True)
class ProfileBoosts:
    kernel: str
    bottleneck: Bottleneck
    boosts: tuple[Boost, ...] = ()  # strongest first (then by name)

    def weight(self, technique: str) -> float:
        return next((b.weight for b in self.boosts if b.technique == technique), 0.0)

    def to_json(self) -> dict[str, object]:
        return {"kernel": self.kernel, "bottleneck": self.bottleneck, "boosts": [b.to_json() for b in self.boosts]}


def bottleneck_of(profile: Profile) -> Bottleneck:
    dram, sm = profile.dram_pct, profile.sm_pct
    if dram is None or sm is None:
        return "unknown"
    if dram >= THROUGHPUT_BOUND and dram >= sm:
        return "memory"
    if sm >= THROUGHPUT_BOUND:
        return "compute"
    return "latency"


def rule_estimate(text: str) -> float | None:
    """Nsight Compute's estimate in a rule's text as a fraction: the (global) `Est. Speedup`,
    else the `Est. Local Speedup`; None when it states none."""
    found = {(m.group(1) or "").strip().lower(): float(m.group(2)) for m in _ESTIMATE.finditer(text)}
    value = found.get("global", found.get("", found.get("local")))
    return None if value is None else min(value, 100.0) / 100.0


def _findings(profile: Profile) -> list[tuple[str, float, str]]:
    """(technique as named, weight, reason) per finding (module docstring)."""
    found: list[tuple[str, float, str]] = []
    bottleneck = bottleneck_of(profile)
    if bottleneck == "memory" and profile.dram_pct is not None:
        reason = f"memory-bound: DRAM {profile.dram_pct:.0f}% of peak, SM {profile.sm_pct:.0f}%"
        found += [(t, profile.dram_pct / 100.0, reason) for t in MEMORY_SIDE]
    elif bottleneck == "compute" and profile.sm_pct is not None:
        reason = f"compute-bound: SM {profile.sm_pct:.0f}% of peak, DRAM {profile.dram_pct:.0f}%"
        found += [(t, profile.sm_pct / 100.0, reason) for t in COMPUTE_SIDE]
    total = sum(cycles for _, cycles in profile.stalls if cycles > 0)
    for reason_name, cycles in profile.stalls:
        share = cycles / total if total > 0 else 0.0
        if reason_name not in STALL_TECHNIQUES or share < DOMINANT_STALL or cycles < MIN_STALL_CYCLES:
            continue
        waiting, techniques = STALL_TECHNIQUES[reason_name]
        reason = (f"warp stall {reason_name}: {cycles:g} cycles per issued instruction ({share:.0%} of the top "
                  f"stalls) waiting for {waiting}")
        found += [(t, share, reason) for t in techniques]
    occupancy = profile.occupancy_pct
    if occupancy is not None and occupancy < LOW_OCCUPANCY:
        found.append(("launch_configuration", 1.0 - occupancy / 100.0,
                      f"achieved occupancy {occupancy:.0f}% (below {LOW_OCCUPANCY:.0f}%): too few warps to hide latency"))
    for rule in profile.rules:
        if rule.kind not in ("OPT", "WRN") or not rule.technique or rule.about_tool:
            continue  # a note about ncu itself (a metric it lacks) raises nothing
        estimate = rule_estimate(rule.text)
        text = " ".join(rule.text.split())
        shown = text if len(text) <= 120 else text[:117] + "..."
        weight = RULE_WITHOUT_ESTIMATE if estimate is None or estimate <= 0 else estimate
        reason = f"Nsight Compute {rule.kind}: {shown}"
        found.append((rule.technique, weight, reason))
        if TOO_SMALL_GRID in text.lower():
            found += [(t, weight, reason) for t in SPLIT_WORK]
    return found


def profile_boosts(profile: Profile) -> ProfileBoosts:
    """The techniques `profile` raises, strongest first (module docstring). A technique name no
    record of the registry holds (a hand-edited profile) is left out."""
    weights: dict[str, float] = {}
    reasons: dict[str, list[str]] = {}
    for named, weight, reason in _findings(profile):
        record = find_technique(named)
        if record is None or weight <= 0:
            continue
        weights[record.name] = weights.get(record.name, 0.0) + weight
        reasons.setdefault(record.name, []).append(reason)
    boosts = tuple(Boost(name, round(weights[name], 3), tuple(reasons[name]))
                   for name in sorted(weights, key=lambda n: (-weights[n], n)))
    return ProfileBoosts(profile.kernel, bottleneck_of(profile), boosts)


@dataclass(frozen=True)
class ProfileView:
    """The boosts of one search, read per code state: they hold on the code the profile measured
    (the searched text), not on code a step rewrote (nothing measured that)."""

    boosts: ProfileBoosts | None = None
    source: str = ""

    def boost_on(self, source: str, technique: str, also: tuple[str, ...] = ()) -> float:
        """The boost of `technique` on `source`: its own, or the largest of the techniques its
        applier also implements (`also`); 0 on code the profile did not measure."""
        if self.boosts is None or source != self.source:
            return 0.0
        return max((self.boosts.weight(name) for name in (technique, *also)), default=0.0)


NO_PROFILE = ProfileView()


def raised_prior(prior: float, boost: float) -> float:
    """`prior` raised by `boost` (module docstring); exactly `prior` when `boost` is 0."""
    if boost <= 0:
        return prior
    return prior + boost * max(abs(prior), 1.0)


def profile_view(profile: Profile | None, source: str) -> ProfileView:
    """The search's view of `profile`, measured on `source` (NO_PROFILE without one)."""
    return NO_PROFILE if profile is None else ProfileView(profile_boosts(profile), source)
