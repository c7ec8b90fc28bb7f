"""The replies of the decision routes: the Router's results in the wire's shape.

Each choice and score answer gains ``x_jev_confidence`` (Jev's own confidence formula on the same
probabilities), or, with ``LAYA_JEV_STRICT=1``, the result is projected onto the strict Jev
contract, whose ``confidence`` is Jev's formula (so thresholds tuned on Jev port unchanged). An
answer a tournament narrowed also carries the reference's ``x_tournament`` block. Plain functions
on plain dicts, shared by ``laya serve`` and its Ray replicas.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["render_batch", "render_result"]

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
    return {**result, "answers": {qid: _with_jev_confidence(a) for qid, a in answers.items()}}


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
    values = _probabilities(answer)
    if values is not None:
        jev = _jev_choice(values) if answer["type"] == "choice" else _jev_score(values)
        extra["x_jev_confidence"] = round(jev, 4)
    return {**answer, **extra} if extra else answer


def _probabilities(answer: dict[str, Any]) -> list[float] | None:
    """The answer's probabilities in option order (score levels by index), or None if unusable."""
    probs = answer.get("probabilities")
    if not isinstance(probs, dict) or not probs:
        return None
    items = list(probs.items())
    if answer["type"] == "score":
        try:
            items.sort(key=lambda kv: int(kv[0]))
        except ValueError:
            return None
    values = [v for _, v in items]
    usable = all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values
    )
    return [float(v) for v in values] if usable else None


def _jev_choice(p: list[float]) -> float:
    """Jev's choice confidence: how far the top probability sits above uniform, in [0, 1]."""
    n = len(p)
    return 1.0 if n == 1 else (max(p) - 1 / n) / (1 - 1 / n)


def _jev_score(p: list[float]) -> float:
    """Jev's score confidence: 1 - spread around the mode / the uniform spread around it."""
    mode = max(range(len(p)), key=p.__getitem__)
    uniform = sum(abs(i - mode) for i in range(len(p))) / len(p)
    if uniform == 0:
        return 1.0
    spread = sum(pi * abs(i - mode) for i, pi in enumerate(p))
    return max(0.0, 1 - spread / uniform)
