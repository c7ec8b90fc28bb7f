"""Raw answers of a trained model as records ``(qtype, logits, target, k)``, and what they say:
accuracy, loss, calibration, and whether the model collapsed to the class prior (the published
``laya.train`` record functions; docs/training.md, "The published loop").

Records are what ``laya.calibrate`` fits temperatures on (``laya.engine.fitting``): logits and
targets in option order, so a fit, an evaluation and a collapse check read the same thing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..engine.decoding import Temperatures
from ..engine.fitting import parse_records
from ..engine.questions import QTYPE_NAMES
from ..engine.scores import ece_score
from ..errors import InvalidRequest
from .items import TrainingItem, collate, encode_item

if TYPE_CHECKING:
    import torch

    from ..checkpoint import Tokenizer
    from ..engine.backends.torch import DecisionModel

__all__ = [
    "CALIB_WARN_N",
    "COLLAPSE_CE_REL",
    "CalibrationRecord",
    "COLLAPSE_LOGIT_RANGE",
    "calibration_records",
    "calibration_report",
    "collapse_stats",
    "evaluate_records",
    "prior_collapse_message",
]

CALIB_WARN_N = 50  # a question type with fewer calibration records is flagged as weakly fitted
# (qtype, logits, target, k): logits and target in option order (a target: weights, or the gold index)
CalibrationRecord = tuple[int, Sequence[float], Sequence[float] | int, int]
COLLAPSE_CE_REL = 0.02  # loss within 2 % of the class prior's: nothing learnt beyond the prior
COLLAPSE_LOGIT_RANGE = 0.05  # logits moving less than this across inputs: a constant answer


def calibration_records(
    model: DecisionModel,
    tok: Tokenizer,
    items: Sequence[TrainingItem],
    device: str | torch.device,
    max_len: int,
    head_max_len: int,
    batch_size: int = 16,
    parallel: bool = False,
) -> list[CalibrationRecord]:
    """``(qtype, logits, target, k)`` of every item (``laya.training.items``), logits read by
    ``model`` without gradients and put back in option order."""
    import torch

    encoded = [encode_item(tok, item, max_len, head_max_len, None, parallel) for item in items]
    model.eval()
    records: list[CalibrationRecord] = []
    with torch.no_grad():
        for start in range(0, len(encoded), batch_size):
            chunk = encoded[start : start + batch_size]
            inputs, _ = collate(chunk, tok.pad_id, device)
            logits, _ = model(*inputs)
            for row, z in zip(chunk, logits.float().cpu().numpy().astype(np.float64)):
                order = row["option_order"]
                canonical = np.empty(len(order))
                canonical[order] = z[: len(order)]
                target = np.empty(len(order))
                target[order] = row["target"]
                records.append((row["qtype"], canonical.tolist(), target.tolist(), len(order)))
    return records


def _probabilities(z: np.ndarray, t: float) -> np.ndarray:
    scaled = z / t
    p = np.exp(scaled - scaled.max())
    return np.asarray(p / p.sum(), dtype=np.float64)


def evaluate_records(
    records: Sequence[CalibrationRecord],
    temperature: Sequence[float] | None = None,
    temperature_by_options: dict[str, float] | None = None,
) -> dict[str, Any]:
    """The records' answers under the temperatures (1.0 without them; a bucket's replaces its
    type's): ``n``, ``accuracy``, ``loss`` (cross-entropy of the target), ``ece``, ``brier``
    (multi-class), ``top1_brier`` and ``mean_confidence``."""
    parsed = parse_records(records)
    if not parsed:
        return {"n": 0}
    temperatures = Temperatures(
        _per_type(temperature or (1.0, 1.0, 1.0)), dict(temperature_by_options or {})
    )
    conf, right, loss, brier = [], [], [], []
    for r in parsed:
        p = _probabilities(r.logits, temperatures.for_question(r.question))
        conf.append(float(p.max()))
        right.append(float(int(np.argmax(p)) == r.gold))
        loss.append(float(-(r.weights * np.log(np.maximum(p, 1e-12))).sum()))
        brier.append(float(((p - r.weights) ** 2).sum()))
    c, ok = np.array(conf), np.array(right)
    return {
        "n": len(parsed),
        "accuracy": round(float(ok.mean()), 4),
        "loss": round(float(np.mean(loss)), 4),
        "ece": round(ece_score(c, ok), 4),
        "brier": round(float(np.mean(brier)), 4),
        "top1_brier": round(float(((c - ok) ** 2).mean()), 4),
        "mean_confidence": round(float(c.mean()), 4),
    }


def _per_type(temperature: Sequence[float]) -> tuple[float, ...]:
    """``[choice, score, noul]`` temperatures as floats; anything else is refused."""
    try:
        values = tuple(float(t) for t in temperature)
    except (TypeError, ValueError):
        values = ()
    if len(values) != len(QTYPE_NAMES) or not all(t > 0 for t in values):
        raise InvalidRequest(
            f"temperature must be 3 positive numbers [choice, score, noul], got {temperature!r}"
        )
    return values


def calibration_report(
    records: Sequence[CalibrationRecord], temperature: Sequence[float]
) -> dict[str, dict[str, Any]]:
    """Per question type asked: ``n``, its fitted ``temperature``, the figures ``before`` (1.0)
    and ``after`` it, and ``weak`` when fewer than :data:`CALIB_WARN_N` records fitted it."""
    temperature = _per_type(temperature)
    by_type: dict[int, list[CalibrationRecord]] = defaultdict(list)
    for record in records:
        by_type[record[0]].append(record)
    report = {}
    for qtype, group in sorted(by_type.items()):
        report[QTYPE_NAMES[qtype]] = {
            "n": len(group),
            "temperature": float(temperature[qtype]),
            "before": evaluate_records(group),
            "after": evaluate_records(group, temperature),
            "weak": len(group) < CALIB_WARN_N,
        }
    return report


def collapse_stats(records: Sequence[CalibrationRecord]) -> dict[str, float] | None:
    """How far the answers are from the class prior (None for fewer than two records):
    ``ce_model`` and ``ce_prior`` (the loss of always answering each question shape's mean
    target), ``ce_rel`` (the model's gain over the prior, relative) and ``logit_range`` (the
    most any option's centred logit moves across inputs of one question shape)."""
    parsed = parse_records(records)
    if len(parsed) < 2:
        return None
    groups = defaultdict(list)
    for r in parsed:
        groups[r.question.bucket, len(r.logits)].append(r)
    ce_model = ce_prior = logit_range = 0.0
    for group in groups.values():
        prior = np.mean([r.weights for r in group], axis=0)
        for r in group:
            p = _probabilities(r.logits, 1.0)
            ce_model += float(-(r.weights * np.log(np.maximum(p, 1e-12))).sum())
            ce_prior += float(-(r.weights * np.log(np.maximum(prior, 1e-12))).sum())
        centred = np.array([r.logits - r.logits.mean() for r in group])
        logit_range = max(logit_range, float((centred.max(0) - centred.min(0)).max()))
    n = len(parsed)
    ce_model, ce_prior = ce_model / n, ce_prior / n
    ce_rel = (ce_prior - ce_model) / ce_prior if ce_prior > 0 else 0.0
    return {
        "ce_model": round(ce_model, 4),
        "ce_prior": round(ce_prior, 4),
        "ce_rel": round(ce_rel, 4),
        "logit_range": round(logit_range, 4),
    }


def prior_collapse_message(records: Sequence[CalibrationRecord]) -> str | None:
    """One line when the model does no better than the class prior: its loss not
    :data:`COLLAPSE_CE_REL` below the prior's, or logits moving less than
    :data:`COLLAPSE_LOGIT_RANGE`; None when it does not (or with too few records to tell)."""
    stats = collapse_stats(records)
    if stats is None:
        return None
    if stats["ce_rel"] >= COLLAPSE_CE_REL and stats["logit_range"] >= COLLAPSE_LOGIT_RANGE:
        return None
    return (
        f"the model does no better than the class prior (loss {stats['ce_model']} vs the "
        f"prior's {stats['ce_prior']}; logits move by {stats['logit_range']} at most): "
        "train longer or with a higher learning rate, or check that the labels match the states"
    )
