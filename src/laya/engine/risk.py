"""Risk control with finite-sample guarantees: exact binomial tails, Learn-then-Test thresholds
and split-conformal quantiles (docs/calibration.md, "Certified automation").

* :func:`binomial_cdf` / :func:`binomial_upper`: the exact binomial tail and the one-sided
  Clopper-Pearson upper bound it inverts to, summed from the binomial pmf in log space;
* :func:`learn_then_test`: the lowest confidence threshold whose error rate among the answers it
  keeps is at most ``risk`` with probability at least ``1 - delta`` (Angelopoulos, Bates, Candès,
  Jordan, Lei 2021, "Learn then Test"): fixed-sequence testing over a fixed grid of thresholds,
  from the most confident down, each with the exact binomial p-value of "error rate > risk",
  stopping at the first it cannot reject;
* :func:`conformal_level`: the split-conformal cut of a prediction set (Vovk et al.; Angelopoulos
  and Bates, "A Gentle Introduction to Conformal Prediction"), score 1 - p(true label);
* :func:`automation_summary`: what a certificate did on labelled answers (``laya calibrate
  --eval``, ``laya eval run --calibration``).

NumPy only: the two binomial functions are short sums over the pmf, checked against exact
rational arithmetic in tests/test_certified.py, so fitting needs no SciPy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InvalidRequest

__all__ = [
    "GRID",
    "SUMMARY_DELTA",
    "Certified",
    "automation_summary",
    "binomial_cdf",
    "binomial_upper",
    "check_level",
    "conformal_level",
    "learn_then_test",
    "min_labels",
]

# The thresholds tested, fixed before any data is seen (as the guarantee needs): every multiple
# of 0.01, and 0.995, 0.999, 0.9995, 0.9999 and 1 for models sure of most answers; in units of
# 1e-4, the resolution answers report (answer_confidence has four decimals). A finer grid tests
# more thresholds on few answers at the top, where one early error ends the sequence.
_UNITS = 10_000
GRID = tuple(sorted({*range(0, _UNITS, 100), 9950, 9990, 9995, 9999, _UNITS}, reverse=True))
SUMMARY_DELTA = 0.05  # an evaluation's upper bound of the automated error is one-sided 95 %


def check_level(name: str, value: object) -> float:
    """``value`` as a level strictly inside (0, 1), else an :class:`InvalidRequest` naming it."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not 0 < value < 1
    ):
        raise InvalidRequest(f"{name} must be a number strictly between 0 and 1, got {value!r}")
    return float(value)


def _log_pmf(n: int, p: float) -> np.ndarray:
    """log P(Bin(n, p) = k) for k = 0..n."""
    k = np.arange(n + 1, dtype=np.float64)
    log_fact = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=np.float64)))))
    log_choose = log_fact[n] - log_fact - log_fact[::-1]
    if p <= 0.0:
        return np.where(k == 0, 0.0, -np.inf)
    if p >= 1.0:
        return np.where(k == n, 0.0, -np.inf)
    terms: np.ndarray = log_choose + k * math.log(p) + (n - k) * math.log1p(-p)
    return terms


def binomial_cdf(k: int, n: int, p: float) -> float:
    """P(Bin(n, p) <= k), exact up to floating point (1.0 for k >= n)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    terms = _log_pmf(n, p)[: k + 1]
    return float(min(1.0, math.exp(float(np.logaddexp.reduce(terms)))))


def binomial_upper(errors: int, n: int, delta: float) -> float:
    """The one-sided Clopper-Pearson upper bound of an error rate at level ``1 - delta``: the
    largest rate under which ``errors`` or fewer in ``n`` has probability at least ``delta``
    (1.0 when ``n`` is 0 or every answer was wrong)."""
    if n == 0 or errors >= n:
        return 1.0
    low, high = errors / n, 1.0
    for _ in range(100):  # P(Bin(n, p) <= errors) falls as p rises: bisect where it is delta
        middle = (low + high) / 2
        if binomial_cdf(errors, n, middle) > delta:
            low = middle
        else:
            high = middle
    return high


def min_labels(risk: float, delta: float) -> int:
    """The fewest answers at which any threshold can be certified: n with no errors has p-value
    (1 - risk)^n, which must reach ``delta``."""
    n = max(1, math.ceil(math.log(delta) / math.log1p(-risk)))
    while n > 1 and (1 - risk) ** (n - 1) <= delta:
        n -= 1
    while (1 - risk) ** n > delta:
        n += 1
    return n


@dataclass(frozen=True)
class Certified:
    """What Learn-then-Test found for one group of answers: ``threshold`` (None when none could
    be certified), and at it the answers ``automated``, their ``errors`` and the Clopper-Pearson
    ``error_upper`` bound at ``1 - delta``; ``n`` answers in all."""

    threshold: float | None
    n: int
    automated: int
    errors: int
    error_upper: float


def learn_then_test(
    confidence: np.ndarray,
    wrong: np.ndarray,
    risk: float,
    delta: float,
    *,
    grid: Sequence[int] = GRID,
    start: int | None = None,
) -> Certified:
    """The lowest ``grid`` threshold (in units of 1e-4, descending; :data:`GRID`) certified to
    keep the error rate among the answers at or above it at most ``risk``, with probability at
    least ``1 - delta`` over the draw of the data.

    Thresholds are tested from the first down; one keeping fewer answers than ``start`` (default
    :func:`min_labels`, under which no outcome could be rejected) is passed over (only the top
    of the grid, where the kept sets are smallest); the first one tested and not rejected ends
    the sequence. ``grid`` and ``start`` are there to measure other choices
    (benchmarks/certified.py); laya certifies with the defaults.
    """
    units = np.rint(np.asarray(confidence, dtype=np.float64) * _UNITS).astype(np.int64)
    order = np.argsort(-units, kind="stable")
    ranked, misses = units[order], np.cumsum(np.asarray(wrong, dtype=bool)[order])
    floor = min_labels(risk, delta) if start is None else max(start, 1)
    best: tuple[int, int, int] | None = None
    for threshold in grid:
        n = int(np.searchsorted(-ranked, -threshold, side="right"))  # answers at or above it
        if n < floor:
            continue
        e = int(misses[n - 1])
        if binomial_cdf(e, n, risk) > delta:
            break
        best = (threshold, n, e)
    if best is None:
        return Certified(None, len(units), 0, 0, 1.0)
    threshold, n, e = best
    return Certified(threshold / _UNITS, len(units), n, e, binomial_upper(e, n, delta))


def conformal_level(true_probability: np.ndarray, risk: float) -> float:
    """The least probability an option needs to enter a prediction set that holds the right
    option with probability at least ``1 - risk``: with scores 1 - p(true label) on n answers,
    their ``ceil((n + 1)(1 - risk))``-th smallest, turned back into a probability (0.0, every
    option, when n is too small for that rank to exist)."""
    p = np.sort(np.asarray(true_probability, dtype=np.float64))[::-1]  # score order ascending
    rank = math.ceil((len(p) + 1) * (1 - risk))
    if rank > len(p):
        return 0.0
    return float(p[rank - 1])


def automation_summary(
    automate: Sequence[bool | None],
    right: Sequence[bool],
    in_set: Sequence[bool | None] = (),
    set_sizes: Sequence[int | None] = (),
) -> dict[str, float]:
    """What automation did on the labelled answers that say whether they automate ({} for
    none): ``automated`` (their share), ``automated_error`` (NaN when none was automated) and its
    Clopper-Pearson ``automated_error_upper`` (95 %); with prediction sets, ``set_coverage``
    (the share holding the right option) and ``set_size`` (their mean size)."""
    said = [(a, r) for a, r in zip(automate, right) if a is not None]
    if not said:
        return {}
    kept = [r for a, r in said if a]
    errors = sum(not r for r in kept)
    out = {
        "automated": len(kept) / len(said),
        "automated_error": errors / len(kept) if kept else math.nan,
        "automated_error_upper": binomial_upper(errors, len(kept), SUMMARY_DELTA),
    }
    sets = [(c, s) for c, s in zip(in_set, set_sizes) if c is not None and s is not None]
    if sets:
        out["set_coverage"] = sum(bool(c) for c, _ in sets) / len(sets)
        out["set_size"] = sum(s for _, s in sets) / len(sets)
    return out
