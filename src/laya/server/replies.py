"""The replies of the decision routes: the Router's results in the wire's shape.

Each choice and score answer gains ``x_jev_confidence`` (Jev's own confidence formula on the same
probabilities), or, with ``LAYA_JEV_STRICT=1``, the result is projected onto the strict Jev
contract, whose ``confidence`` is Jev's formula (so thresholds tuned on Jev port unchanged). An
answer a tournament narrowed also carries the reference's ``x_tournament`` block, and the
answers of a checkpoint served with a certified calibration file carry ``automate`` and
``prediction_set`` as ``x_automate`` and ``x_prediction_set`` (outside the strict shape, which
drops them). Plain functions on plain dicts, shared by ``laya serve`` and its Ray replicas.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..engine.gate import jev_confidence

__all__ = ["render_batch", "render_result"]

_EXTENSIONS = {"automate": "x_automate", "prediction_set": "x_prediction_set"}
_STRICT_FIELDS = {
    "choice": ("type", "choice", "confidence", "probabilities", "x_tournament"),
    "score": ("type", "score", "confidence", "probabilities", "legend"),
    "noul": ("type", "noul"),
}


def render_result(result: Mapping[str, Any], strict: bool = False) -> dict[str, Any]:
    """The wire form of one Router result: ``x_jev_confidence`` added, or the strict Jev shape."""
    answers = result.get("answers") or {}
    if strict:
        usage = result.get("usage") or {}
        return {
            "model": result.get("model"),
            "answers": {qid: _strict_answer(a) for qid, a in answers.items()},
            "usage": {k: usage.get(k, 0) for k in ("input_tokens", "output_tokens")},
        }
    return {**result, "answers": {qid: _wide_answer(a) for qid, a in answers.items()}}


def _wide_answer(answer: Any) -> Any:
    """The answer with ``x_jev_confidence`` and laya's fields under their extension names."""
    wide = _with_jev_confidence(answer)
    if not isinstance(wide, dict) or not any(key in wide for key in _EXTENSIONS):
        return wide
    return {_EXTENSIONS.get(key, key): value for key, value in wide.items()}


def render_batch(results: Sequence[Mapping[str, Any]], strict: bool = False) -> dict[str, Any]:
    """The batch reply: every result rendered, plus the summed token usage."""
    total = {"input_tokens": 0, "output_tokens": 0}
    for result in results:
        usage = result.get("usage") or {}
        for key in total:
            total[key] += usage.get(key) or 0
    return {"results": [render_result(r, strict) for r in results], "total_usage": total}


def _strict_answer(answer: Any) -> Any:
    """The strict Jev fields of an answer, ``confidence`` being Jev's own formula."""
    kind = answer.get("type") if isinstance(answer, dict) else None
    fields = _STRICT_FIELDS.get(kind) if isinstance(kind, str) else None
    if fields is None:
        return answer
    wide = _with_jev_confidence(answer)
    strict = {k: wide[k] for k in fields if k in wide}
    if "x_jev_confidence" in wide:
        strict["confidence"] = wide["x_jev_confidence"]
    return strict


def _with_jev_confidence(answer: Any) -> Any:
    """The answer with ``x_jev_confidence`` (choice, score) and ``x_tournament`` (narrowed)."""
    if not isinstance(answer, dict) or answer.get("type") not in ("choice", "score"):
        return answer
    extra: dict[str, Any] = {}
    if isinstance(answer.get("tournament"), dict):
        extra["x_tournament"] = answer["tournament"]
    jev = jev_confidence(answer)
    if jev is not None:
        extra["x_jev_confidence"] = round(jev, 4)
    return {**answer, **extra} if extra else answer
