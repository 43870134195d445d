"""What a speedup may claim: the paired ratio over rounds, its bootstrap interval, and the verdict.

A comparison group times its members in rounds (:mod:`mla_var3.evidence.group_run`). For a
member against the group's reference, each round gives one ratio ``t_reference / t_member``
(> 1: the member is faster) from the two medians of that round; the speedup is the geometric
mean of the ratios, and its 95 % interval the percentile bootstrap over rounds (resampling
whole rounds keeps each ratio paired, so clock drift between rounds cancels). Seeded: the
same times give the same interval.

The rule for words (:func:`verdict`), the one place it is written:

- the interval's relative half-width ``(high - low) / 2 / point`` above 3 %: **inconclusive**
  (the runner first adds rounds, up to its bound);
- else **faster** if the lower bound is above 1, **slower** if the upper bound is below 1,
  else **on par**.

A target "≥ X×" is met when the point estimate is ≥ X and the half-width is ≤ 3 %
(:func:`target_met`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MAX_HALF_WIDTH = 0.03
CONFIDENCE = 0.95
RESAMPLES = 10_000
SEED = 8
FASTER, SLOWER, ON_PAR, INCONCLUSIVE = "faster", "slower", "on par", "inconclusive"


def verdict(point: float, low: float, high: float, max_half_width: float = MAX_HALF_WIDTH) -> str:
    """``faster``, ``slower``, ``on par`` or ``inconclusive`` for a speedup and its interval."""
    if (high - low) / 2 / point > max_half_width:
        return INCONCLUSIVE
    if low > 1.0:
        return FASTER
    if high < 1.0:
        return SLOWER
    return ON_PAR


@dataclass(frozen=True)
class Speedup:
    """``t_reference / t_member`` as a geometric mean over ``rounds`` paired rounds, with its interval."""

    point: float
    low: float
    high: float
    rounds: int
    confidence: float = CONFIDENCE
    resamples: int = RESAMPLES
    seed: int = SEED

    def check(self) -> str | None:
        if not (0 < self.low <= self.point <= self.high and math.isfinite(self.high)):
            return f"speedup {self.point} must lie in its interval [{self.low}, {self.high}], all positive"
        return None

    @property
    def half_width(self) -> float:
        """Half the interval, relative to the point estimate (0.03 = ±3 %)."""
        return (self.high - self.low) / 2 / self.point

    @property
    def verdict(self) -> str:
        return verdict(self.point, self.low, self.high)

    def text(self) -> str:
        """``1.02× (0.99–1.05, on par)``."""
        return f"{self.point:.2f}× ({self.low:.2f}–{self.high:.2f}, {self.verdict})"


def target_met(speedup: Speedup, target: float) -> bool:
    """A target "≥ target×" is met: point ≥ target and the interval no wider than ±3 %."""
    return speedup.point >= target and speedup.half_width <= MAX_HALF_WIDTH


def paired_speedup(
    reference_us: Sequence[float],
    member_us: Sequence[float],
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Speedup:
    """The speedup of a member from per-round times (one per round, paired by position)."""
    ref = np.asarray(reference_us, dtype=np.float64)
    mem = np.asarray(member_us, dtype=np.float64)
    if ref.shape != mem.shape or ref.size < 2 or not (ref > 0).all() or not (mem > 0).all():
        raise ValueError("paired_speedup needs two equally long lists of >= 2 positive round times")
    log_ratios = np.log(ref) - np.log(mem)
    rng = np.random.default_rng(seed)
    means = log_ratios[rng.integers(0, log_ratios.size, size=(resamples, log_ratios.size))].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.exp(np.quantile(means, [tail, 1 - tail]))
    point = math.exp(float(log_ratios.mean()))
    return Speedup(point, min(float(low), point), max(float(high), point), int(ref.size), confidence, resamples, seed)
