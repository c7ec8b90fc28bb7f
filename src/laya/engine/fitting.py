"""Fitting calibration on labelled logits: temperatures by negative log-likelihood (laya's own on
a grid; the published runtime's records API at the exact optimum, so its numbers), confidence
maps (equal-width bins), and abstention cuts.

Pure NumPy over logits already read, so a runtime fits on records without the training package:
``laya calibrate`` (laya.training.fit_calibration) reads the logits and fits with these, and
``Agent.fit_temperatures`` / ``fit_binning`` call the records API (docs/calibration.md,
docs/migrating.md).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..checkpoint.config import TEMPERATURE_RANGE
from ..errors import InvalidRequest
from .calibration import Calibration, from_payload
from .decoding import Temperatures, binned
from .questions import QTYPE_NAMES, QTYPES, Question
from .scores import Record, ece_score, is_correct

__all__ = [
    "BINS",
    "ECE_HOLDOUT_FRAC",
    "MIN_ABSTAIN_BUCKET_N",
    "MIN_BINNING_ANSWERS",
    "MIN_BINNING_BUCKET_N",
    "MIN_BUCKET_ANSWERS",
    "MIN_BUCKET_N",
    "MIN_TYPE_N",
    "N_QTYPES",
    "PUBLISHED_BINS",
    "TEMPERATURE_GRID",
    "LOG_T_MARGIN",
    "TEMP_MAX",
    "TEMP_MIN",
    "Sample",
    "apply_binning_map",
    "apply_calibration_payload",
    "decoded_records",
    "fit_abstention_thresholds",
    "fit_binning",
    "fit_binning_map",
    "fit_grid_temperatures",
    "fit_one_temperature",
    "fit_temperature_map",
    "fit_temperatures",
    "gate_inputs",
    "parse_records",
]

TEMPERATURE_GRID = np.round(np.arange(0.5, 5.0001, 0.01), 2)
MIN_BUCKET_ANSWERS = 20  # a bucket temperature needs this many answers, else its type's applies
Target = int | np.integer | np.ndarray  # a gold option index, or a weight per option
MIN_BINNING_ANSWERS = 100
BINS = 10

# The published runtime's floors and constants (its laya.calibrate), for the records API below.
ECE_HOLDOUT_FRAC = 0.2
MIN_ABSTAIN_BUCKET_N = 100
MIN_BINNING_BUCKET_N = 200
MIN_BUCKET_N = 2000
MIN_TYPE_N = 10
N_QTYPES = len(QTYPES)
PUBLISHED_BINS = 15
TEMP_MIN, TEMP_MAX = TEMPERATURE_RANGE
LOG_T_MARGIN = 10.0  # the published fit searches log T in [-10, 10] before clamping


# --------------------------------------------------------------------------- temperatures


def _nll(logits: list[np.ndarray], targets: Sequence[Target], t: np.ndarray) -> np.ndarray:
    """Mean negative log-likelihood of the gold slots at each temperature in ``t``; a target is
    a gold index, or a weight per option (a soft target)."""
    total = np.zeros_like(t)
    for z, y in zip(logits, targets):
        scaled = z[None, :] / t[:, None]
        top = scaled.max(1)
        logsumexp = top + np.log(np.exp(scaled - top[:, None]).sum(1))
        if isinstance(y, (int, np.integer)):
            total += logsumexp - scaled[:, y]
        else:
            total += logsumexp * y.sum() - scaled @ y
    return total / max(1, len(logits))


def fit_grid_temperatures(
    logits: Sequence[np.ndarray],
    targets: Sequence[Target],
    questions: Sequence[Question],
    base: Sequence[float] | None = None,
    base_buckets: Mapping[str, float] | None = None,
    min_bucket: int = MIN_BUCKET_ANSWERS,
    min_type: int = 1,
) -> tuple[list[float], dict[str, float], dict[str, dict[str, float]]]:
    """Per-type and per-bucket temperatures minimising NLL on a grid in [0.5, 5].

    A question type the data does not ask (or asks fewer than ``min_type`` times) keeps the
    base's temperatures (``base``, ``base_buckets``; 1.0 without them), so data without score
    questions leaves a checkpoint's score calibration as it was; a bucket needs ``min_bucket``
    answers.
    """
    asked = {q.type for q in questions}
    by_type = [float(t) for t in (base or (1.0, 1.0, 1.0))]
    by_bucket = {k: v for k, v in (base_buckets or {}).items() if k.split(":")[0] not in asked}
    nll: dict[str, dict[str, float]] = {}
    groups: dict[str, list[int]] = {}
    for i, q in enumerate(questions):
        groups.setdefault(q.type, []).append(i)
        groups.setdefault(q.bucket, []).append(i)
    for name, idx in sorted(groups.items()):
        if len(idx) < (min_bucket if ":" in name else min_type):
            continue
        curve = _nll([logits[i] for i in idx], [targets[i] for i in idx], TEMPERATURE_GRID)
        best = float(TEMPERATURE_GRID[int(np.argmin(curve))])
        raw = float(_nll([logits[i] for i in idx], [targets[i] for i in idx], np.ones(1))[0])
        nll[name] = {"n": len(idx), "nll_t1": round(raw, 4), "nll": round(float(curve.min()), 4)}
        if ":" in name:
            by_bucket[name] = best
        else:
            by_type[questions[idx[0]].qtype] = best
    return by_type, by_bucket, nll


# --------------------------------------------------------------------------- samples


@dataclass(frozen=True)
class Sample:
    """One labelled answer: its question, domain, raw logits (criteria order) and gold index."""

    question: Question
    domain: str
    logits: np.ndarray
    gold: int


def decoded_records(samples: Sequence[Sample], temperatures: Temperatures) -> list[Record]:
    """The answers as metric records, with probabilities computed as the runtime decodes them."""
    out = []
    for s in samples:
        z = s.logits / np.float32(temperatures.for_question(s.question))
        p = np.exp(z - z.max())
        p = np.round((p / p.sum()).astype(np.float64), 4)
        out.append(Record(s.question.type, s.domain, p, s.gold))
    return out


def gate_inputs(
    samples: Sequence[Sample], temperatures: Temperatures, recs: Sequence[Record] | None = None
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Per answer: what the gate reads (``answer_confidence``), whether it is right, its bucket."""
    recs = decoded_records(samples, temperatures) if recs is None else recs
    buckets = [s.question.bucket for s in samples]
    conf = []
    for r, bucket in zip(recs, buckets):
        top, bins = float(r.probs.max()), temperatures.bins.get(bucket)
        conf.append(round(binned(top, bins), 4) if bins else top)
    return np.array(conf), np.array([is_correct(r) for r in recs], dtype=bool), buckets


# --------------------------------------------------------------------------- confidence map


def fit_binning(
    recs: Sequence[Record],
    buckets: Sequence[str],
    bins: int = BINS,
    min_answers: int = MIN_BINNING_ANSWERS,
    monotone: bool = True,
) -> dict[str, tuple[float, ...]]:
    """Per bucket with ``min_answers`` answers: accuracy per equal-width bin (an empty bin its
    centre), made non-decreasing unless ``monotone=False``."""
    groups: dict[str, list[Record]] = defaultdict(list)
    for r, b in zip(recs, buckets):
        groups[b].append(r)
    out = {}
    for bucket, group in sorted(groups.items()):
        if len(group) < min_answers:
            continue
        hits, counts = np.zeros(bins), np.zeros(bins)
        for r in group:
            slot = min(bins - 1, int(float(r.probs.max()) * bins))
            counts[slot] += 1
            hits[slot] += is_correct(r)
        centres = (np.arange(bins) + 0.5) / bins
        means = np.where(counts > 0, hits / np.maximum(counts, 1), centres)
        if monotone:
            means = _isotonic(means, np.maximum(counts, 1e-3))
        out[bucket] = tuple(round(float(v), 4) for v in means)
    return out


def _isotonic(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Pool-adjacent-violators: the non-decreasing sequence nearest ``values`` (weighted)."""
    blocks: list[list[float]] = []  # [mean, weight, length]
    for v, w in zip(values, weights):
        blocks.append([float(v), float(w), 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, w2, n2 = blocks.pop()
            m1, w1, n1 = blocks.pop()
            blocks.append([(m1 * w1 + m2 * w2) / (w1 + w2), w1 + w2, n1 + n2])
    return np.concatenate([np.full(int(n), m) for m, _, n in blocks])


# --------------------------------------------------------------------------- records API
# The published runtime's ``laya.calibrate`` functions (records ``(qtype, logits, target[, k])``),
# on the fitters above.


@dataclass(frozen=True)
class _Labelled:
    """One record: its question's shape (type and option count), logits and target weights."""

    question: Question
    logits: np.ndarray
    weights: np.ndarray

    @property
    def gold(self) -> int:
        return int(np.argmax(self.weights))


def parse_records(records: Iterable[object]) -> list[_Labelled]:
    """Records ``(qtype, logits, target[, k])`` checked; a bad one names its index."""
    parsed = []
    for i, record in enumerate(records):
        if not isinstance(record, (tuple, list)) or len(record) not in (3, 4):
            raise InvalidRequest(f"record {i} must be (qtype, logits, target[, k]), got {record!r}")
        qtype, logits, target = record[0], record[1], record[2]
        if isinstance(qtype, bool) or qtype not in QTYPE_NAMES:
            raise InvalidRequest(f"record {i}: qtype must be 0, 1 or 2, got {qtype!r}")
        z = np.asarray(logits, dtype=np.float64).ravel()
        k = int(record[3]) if len(record) == 4 else len(z)
        if not 1 <= k <= len(z) or not np.isfinite(z[:k]).all():
            raise InvalidRequest(f"record {i}: needs k (1..{len(z)}) finite logits, got k={k}")
        parsed.append(_Labelled(_shape(QTYPE_NAMES[qtype], k), z[:k], _weights(target, k, i)))
    return parsed


def _shape(qtype: str, k: int) -> Question:
    """A question of ``k`` options of a type: what bucket and temperature a record reads."""
    return Question("record", qtype, "", tuple(range(k)), ("",) * k, tuple(range(k)))


def _weights(target: object, k: int, i: int) -> np.ndarray:
    """A target as a weight per option: a gold index one-hot, a distribution as given (all zero:
    uniform)."""
    if isinstance(target, (int, np.integer)) and not isinstance(target, bool):
        if not 0 <= target < k:
            raise InvalidRequest(f"record {i}: target index {target} is not an option of {k}")
        return np.asarray(np.eye(k)[int(target)], dtype=np.float64)
    w = np.asarray(target, dtype=np.float64).ravel()[:k]
    if len(w) != k or not np.isfinite(w).all() or (w < 0).any():
        raise InvalidRequest(f"record {i}: target must be an index or {k} weights >= 0")
    return w / w.sum() if w.sum() > 0 else np.full(k, 1.0 / k)


def fit_one_temperature(pairs: Iterable[Sequence[object]], min_n: int | None = None) -> float:
    """The temperature minimising the NLL of ``(logits, target)`` pairs, found exactly (the
    published LBFGS fit's optimum) and clamped to [0.5, 5]; 1.0 under ``min_n`` pairs (default
    :data:`MIN_TYPE_N`) or when the fit is not finite."""
    parsed = parse_records([(0, logits, target) for logits, target in pairs])
    if len(parsed) < (MIN_TYPE_N if min_n is None else min_n):
        return 1.0
    return _clamp(_best_temperature(parsed))


def _best_temperature(records: Sequence[_Labelled]) -> float:
    """The unclamped temperature minimising the records' mean NLL over log T in
    [-LOG_T_MARGIN, LOG_T_MARGIN] (NaN when it cannot be computed).

    The NLL is convex in 1/T, so its derivative in 1/T (mean of E_p[z] * sum(y) - z.y) rises
    with 1/T and its root, found by bisection on log(1/T), is the one minimum: what the
    published runtime's LBFGS on log T converges to (docs/migrating.md, "Calibration").
    """
    by_size: dict[int, list[_Labelled]] = defaultdict(list)
    for r in records:
        by_size[len(r.logits)].append(r)
    stacks = [
        (np.stack([r.logits for r in group]), np.stack([r.weights for r in group]))
        for group in by_size.values()
    ]

    def slope(log_beta: float) -> float:
        total = 0.0
        for z, y in stacks:
            scaled = z * np.exp(log_beta)
            p = np.exp(scaled - scaled.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            total += float(((p * z).sum(1) * y.sum(1) - (z * y).sum(1)).sum())
        return total / max(1, len(records))

    if not np.isfinite(slope(0.0)):
        return float("nan")
    if abs(slope(0.0)) < 1e-12:  # flat: the fit stays where it starts, T = 1
        return 1.0
    low, high = -LOG_T_MARGIN, LOG_T_MARGIN
    if slope(low) >= 0:
        return float(np.exp(LOG_T_MARGIN))
    if slope(high) <= 0:
        return float(np.exp(-LOG_T_MARGIN))
    for _ in range(64):
        middle = (low + high) / 2
        low, high = (middle, high) if slope(middle) < 0 else (low, middle)
    return float(np.exp(-(low + high) / 2))


def _clamp(fitted: float) -> float:
    """A fitted temperature within [0.5, 5] (1.0 when not finite), as the published fit applies."""
    return float(np.clip(fitted, TEMP_MIN, TEMP_MAX)) if np.isfinite(fitted) else 1.0


def fit_temperature_map(
    records: Iterable[object], compute_ece: bool = False, seed: int = 0
) -> dict[str, Any]:
    """Per-type temperatures (a type needs :data:`MIN_TYPE_N` records, else 1.0) and per-bucket
    ones (:data:`MIN_BUCKET_N`), each the exact NLL optimum clamped to [0.5, 5]:
    ``{temperature, temperature_by_options, n_by_bucket, temperature_clamped: {name: {fitted,
    applied, bound}}}``. With ``compute_ece``, a seeded fifth of each bucket is held out and
    ``report`` gives its ECE before and after."""
    parsed = parse_records(records)
    fit_on, held, excluded = _holdout(parsed, seed) if compute_ece else (parsed, [], [])
    groups: dict[str, list[_Labelled]] = defaultdict(list)
    for r in fit_on:
        groups[r.question.type].append(r)
        groups[r.question.bucket].append(r)
    by_type, by_bucket = [1.0] * N_QTYPES, {}
    clamped: dict[str, dict[str, float]] = {}
    for name, group in sorted(groups.items()):
        if len(group) < (MIN_BUCKET_N if ":" in name else MIN_TYPE_N):
            continue
        fitted = _best_temperature(group)
        applied = _clamp(fitted)
        if ":" in name:
            by_bucket[name] = applied
        else:
            by_type[QTYPES[name]] = applied
        if np.isfinite(fitted) and fitted != applied:
            clamped[name] = {"fitted": round(fitted, 4), "applied": applied, "bound": applied}
    fitted_map: dict[str, object] = {
        "temperature": by_type,
        "temperature_by_options": by_bucket,
        "n_by_bucket": dict(Counter(r.question.bucket for r in parsed)),
        "temperature_clamped": clamped,
    }
    if compute_ece:
        after = Temperatures(tuple(by_type), dict(by_bucket))
        fitted_map["report"] = {
            "n": len(fit_on),
            "n_eval": len(held),
            "ece_before": _held_ece(held, Temperatures((1.0, 1.0, 1.0), {})),
            "ece_after": _held_ece(held, after),
            "excluded_buckets": excluded,
        }
    return fitted_map


fit_temperatures = fit_temperature_map  # the published runtime's other name for it


def _holdout(
    parsed: list[_Labelled], seed: int
) -> tuple[list[_Labelled], list[_Labelled], list[str]]:
    """A seeded :data:`ECE_HOLDOUT_FRAC` of every bucket held out (a bucket of fewer than five
    records is fitted whole and listed as excluded)."""
    rng = np.random.default_rng(seed)
    groups: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(parsed):
        groups[r.question.bucket].append(i)
    held: set[int] = set()
    excluded = []
    for bucket, members in sorted(groups.items()):
        if len(members) < 5:
            excluded.append(bucket)
            continue
        held.update(rng.permutation(members)[: round(len(members) * ECE_HOLDOUT_FRAC)].tolist())
    fit_on = [r for i, r in enumerate(parsed) if i not in held]
    return fit_on, [r for i, r in enumerate(parsed) if i in held], excluded


def _held_ece(held: list[_Labelled], temperatures: Temperatures) -> float | None:
    if not held:
        return None
    conf, right, _ = _record_gate(held, temperatures)
    return round(ece_score(conf, right), 4)


def _tempered(parsed: Sequence[_Labelled], temperatures: Temperatures) -> list[Record]:
    """The records' probabilities under ``temperatures``, in float64 and unrounded (the records
    API computes from logits, not from rounded answers)."""
    out = []
    for r in parsed:
        z = r.logits / temperatures.for_question(r.question)
        p = np.exp(z - z.max())
        out.append(Record(r.question.type, "records", p / p.sum(), r.gold))
    return out


def _record_gate(
    parsed: Sequence[_Labelled], temperatures: Temperatures
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Per record: its top probability (through the bucket's binning map, if any), whether it is
    right, its bucket."""
    recs = _tempered(parsed, temperatures)
    buckets = [r.question.bucket for r in parsed]
    conf = []
    for rec, bucket in zip(recs, buckets):
        top, bins = float(rec.probs.max()), temperatures.bins.get(bucket)
        conf.append(binned(top, bins) if bins else top)
    return np.array(conf), np.array([is_correct(r) for r in recs], dtype=bool), buckets


def _temperatures(
    temperature: Sequence[float],
    temperature_by_options: Mapping[str, float] | None,
    binning_map: Mapping[str, Mapping[str, Any]] | None = None,
) -> Temperatures:
    if len(temperature) != N_QTYPES:
        raise InvalidRequest(
            f"temperature must be 3 numbers (choice, score, noul), got {temperature!r}"
        )
    bins = {b: tuple(float(v) for v in e["values"]) for b, e in (binning_map or {}).items()}
    return Temperatures(
        tuple(float(t) for t in temperature), dict(temperature_by_options or {}), {}, bins
    )


def fit_binning_map(
    records: Iterable[object],
    temperature: Sequence[float],
    temperature_by_options: Mapping[str, float] | None,
    *,
    bins: int = PUBLISHED_BINS,
    min_bucket_n: int = MIN_BINNING_BUCKET_N,
) -> dict[str, dict[str, Any]]:
    """Per bucket of ``min_bucket_n`` records: the accuracy of each of ``bins`` equal-width
    confidence bins under these temperatures (an empty bin: its centre), as
    ``{bucket: {"bins", "values"}}``. Not made monotone (laya's own fit is: docs/calibration.md)."""
    parsed = parse_records(records)
    recs = _tempered(parsed, _temperatures(temperature, temperature_by_options))
    fitted = fit_binning(
        recs, [r.question.bucket for r in parsed], bins, min_bucket_n, monotone=False
    )
    return {b: {"bins": len(v), "values": list(v)} for b, v in fitted.items()}


def apply_binning_map(
    confidence: float, bucket: str, binning_map: Mapping[str, Mapping[str, Any]]
) -> float:
    """``confidence`` through the bucket's bins (unchanged when the map has no such bucket)."""
    entry = binning_map.get(bucket)
    return float(confidence) if entry is None else binned(confidence, entry["values"])


def fit_abstention_thresholds(
    records: Iterable[object],
    temperature: Sequence[float],
    temperature_by_options: Mapping[str, float] | None,
    *,
    binning_map: Mapping[str, Mapping[str, Any]] | None = None,
    target_error: float = 0.1,
    min_bucket_n: int = MIN_ABSTAIN_BUCKET_N,
    conservative: bool = True,
) -> dict[str, float]:
    """Per bucket of ``min_bucket_n`` records: the smallest confidence cut whose kept answers
    are wrong at most ``target_error`` of the time (``conservative`` counts one more error;
    1.0 when no cut does). A ``min_confidence`` map ({} when no bucket qualifies); laya's own
    thresholds bound the precision instead (docs/calibration.md)."""
    temps = _temperatures(temperature, temperature_by_options, binning_map)
    conf, right, buckets = _record_gate(parse_records(records), temps)
    groups: dict[str, list[int]] = defaultdict(list)
    for i, bucket in enumerate(buckets):
        groups[bucket].append(i)
    return {
        bucket: _error_cut(conf[idx], right[idx], target_error, conservative)
        for bucket, idx in sorted(groups.items())
        if len(idx) >= min_bucket_n
    }


def _error_cut(conf: np.ndarray, right: np.ndarray, target: float, conservative: bool) -> float:
    """The smallest cut whose answers at or above it have an error rate within ``target``."""
    order = np.argsort(-conf, kind="stable")
    conf, right = conf[order], right[order]
    errors = np.cumsum(~right) + (1 if conservative else 0)
    kept = np.arange(1, len(conf) + 1)
    last_of_tie = np.append(conf[1:] < conf[:-1], True)
    ok = last_of_tie & (errors / kept <= target)
    return float(conf[np.flatnonzero(ok)[-1]]) if ok.any() else 1.0


class Calibrated(Protocol):
    """What a calibration object is applied to: a runtime (laya.runtime.Agent)."""

    def apply_calibration(self, calibration: Calibration) -> None: ...


def apply_calibration_payload(obj: Calibrated, payload: Mapping[str, object]) -> None:
    """Apply a calibration object (as :func:`calibration_payload` builds it) to a runtime."""
    obj.apply_calibration(from_payload(dict(payload)))
