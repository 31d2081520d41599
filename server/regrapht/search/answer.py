"""Which verified candidate a search offers: the one answer-selection rule of every strategy.

The answer is the simplest verified faster candidate (fewest techniques on its path) whose
median time is within the timing noise of the fastest verified one; among equally simple ones
the fastest. A third `#pragma unroll` that measured 0.2% faster is not a measured improvement,
and the user should get the smaller diff. The search itself still follows the fastest version
(`CandidateLedger.best`); only what is offered at the end is chosen here.

The noise band between the fastest candidate F and a candidate C comes from their own
measurements (`Timing`: median, p10, p90 of `runs` timed launches): the standard error of a
median of n runs is ~1.2533 sigma / sqrt(n), sigma estimated from the interdecile range
(p90 - p10 = 2.563 sigma for a normal spread); two medians differ by noise alone within about
two standard errors of their difference, 2 sqrt(se_F^2 + se_C^2). Measurements taken minutes
apart also drift (clocks, temperature) by more than the within-run spread shows, so the band is
never below `NOISE_FLOOR` = 1% of F's median; it is kept that small because the product's
figures are the verified best times (the answer is at most ~1% slower than the fastest found
when the runs are steady).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from regrapht.validate.types import Timing

if TYPE_CHECKING:
    from regrapht.search.ledger import Judged

NOISE_FLOOR = 0.01  # relative to the fastest median
_MEDIAN_SE = 1.2533  # standard error of a median, in sigma / sqrt(n), for a normal spread
_INTERDECILE_SIGMAS = 2.563  # p90 - p10 of a normal spread, in sigma


def median_error(timing: Timing) -> float:
    """The standard error of `timing`'s median (ms), from its interdecile spread and run count."""
    sigma = max(timing.p90_ms - timing.p10_ms, 0.0) / _INTERDECILE_SIGMAS
    return _MEDIAN_SE * sigma / math.sqrt(max(timing.runs, 1))


def noise_band(fastest: Timing, other: Timing) -> float:
    """How much slower than `fastest` (relative to its median) `other` may measure and still be
    within the noise of the two measurements (at least `NOISE_FLOOR`)."""
    if fastest.median_ms <= 0:
        return NOISE_FLOOR
    band = 2.0 * math.hypot(median_error(fastest), median_error(other)) / fastest.median_ms
    return max(NOISE_FLOOR, band)


def within_noise(fastest: Timing, other: Timing) -> bool:
    return other.median_ms <= fastest.median_ms * (1.0 + noise_band(fastest, other))


def choose_answer(verified_faster: Iterable[Judged]) -> Judged | None:
    """The answer among verified faster candidates (module docstring); None if there are none."""
    timed = [j for j in verified_faster if j.evaluation.outcome == "faster" and j.evaluation.timing is not None]
    if not timed:
        return None

    def time_of(judged: Judged) -> float:
        assert judged.evaluation.timing is not None
        return judged.evaluation.timing.median_ms

    fastest = min(timed, key=lambda j: (time_of(j), len(j.candidate.techniques)))
    assert fastest.evaluation.timing is not None
    close = [j for j in timed if j.evaluation.timing is not None and within_noise(fastest.evaluation.timing,
                                                                                  j.evaluation.timing)]
    return min(close, key=lambda j: (len(j.candidate.techniques), time_of(j)))
