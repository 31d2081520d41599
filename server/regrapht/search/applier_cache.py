"""`ApplierCache`: every deterministic applier's rewrites of a code state, computed once per state.

The graph strategies ask which appliers match a state, then for the chosen technique's
rewrites; both read the one list per state computed here (the appliers in `APPLIERS` order,
each given the kernel, its spec constants and the device's limits). The memo may be shared by
searches of one kernel with the same constants and device (bench/replay_ablation.py does).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from regrapht.search.appliers import (
    APPLIERS,
    Applier,
    ApplierInput,
    DeviceLimits,
    Rewrite,
    plain_source,
    rewrites_of,
)
from regrapht.spec.launch import LaunchConfig
from regrapht.validate.types import Candidate

# every applier's rewrites of a code state, by (source, launch), in APPLIERS order
RewriteMemo = dict[tuple[str, LaunchConfig], list[list[Rewrite]]]


@dataclass
class ApplierCache:
    kernel: str
    constants: Mapping[str, int] = field(default_factory=dict)  # the spec's fixed counts (KernelTarget)
    device: DeviceLimits | None = None  # None: no device, the appliers' defaults
    appliers: tuple[Applier, ...] = APPLIERS  # in the `rules` order; tests pass their own
    memo: RewriteMemo = field(default_factory=dict)

    def by_applier(self, state: Candidate) -> list[list[Rewrite]]:
        """Every applier's rewrites of `state`, in `appliers` order; computed once per state."""
        key = (state.source, state.launch)
        found = self.memo.get(key)
        if found is None:
            given = ApplierInput(state.source, self.kernel, state.launch, self.constants, self.device)
            plain = plain_source(given)  # written plainly once for every applier of this state
            found = [rewrites_of(applier, given, plain) for applier in self.appliers]
            self.memo[key] = found
        return found

    def rewrites(self, state: Candidate, technique: str) -> list[Rewrite]:
        """The rewrites of `technique`'s appliers for `state`."""
        return [r for applier, rewrites in zip(self.appliers, self.by_applier(state), strict=True)
                if technique == applier.technique or technique in applier.also for r in rewrites]

    def applicable(self, state: Candidate) -> list[Applier]:
        """The deterministic appliers that have a rewrite for `state`."""
        return [a for a, rewrites in zip(self.appliers, self.by_applier(state), strict=True) if rewrites]
