"""The replies of the decision routes: the Router's results in the wire's shape.

A reply keeps the published runtime's fields under their published names; every field laya
adds to a result or an answer (``warnings``, ``calibration``, ``unsure``, ``abstain``,
``tournament``, ``shortlist``: those of :mod:`laya.engine.result`'s types that the published
shapes lack) goes out prefixed ``x_``, as Jev's spec asks of extensions. Each choice and score
answer gains ``x_jev_confidence`` (Jev's own confidence formula on the same probabilities), and
a choice not read in one plain pass ``x_strategy``. With ``LAYA_JEV_STRICT=1`` the result is
projected onto the strict Jev contract instead, whose ``confidence`` is Jev's formula (so
thresholds tuned on Jev port unchanged). A usage whose questions ``head_max_len`` cut says so as
``x_question_tokens_dropped`` (the strict shape has no room for it). Fields a hook adds pass as
they are. Plain functions on
plain dicts, shared by ``laya serve`` and its Ray replicas.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..engine import result as shapes
from ..engine.gate import jev_confidence

__all__ = ["laya_fields", "render_batch", "render_result"]

_STRICT_FIELDS = {
    "choice": ("type", "choice", "confidence", "probabilities", "x_tournament", "x_strategy"),
    "score": ("type", "score", "confidence", "probabilities", "legend"),
    "noul": ("type", "noul"),
}
_PUBLISHED_RESULT = frozenset({"model", "answers", "usage", "routing"})


def _keys(*types: Any) -> frozenset[str]:
    return frozenset().union(*(t.__required_keys__ | t.__optional_keys__ for t in types))


def laya_fields() -> tuple[frozenset[str], frozenset[str]]:
    """The fields laya adds to a result and to an answer, beyond the published shapes: what a
    reply prefixes with ``x_``."""
    answers = _keys(shapes.ChoiceAnswer, shapes.ScoreAnswer, shapes.NoulAnswer)
    published = _keys(shapes.ChoiceFields, shapes.ScoreFields, shapes.NoulFields)
    return _keys(shapes.Result) - _PUBLISHED_RESULT, answers - published


_RESULT_EXTRAS, _ANSWER_EXTRAS = laya_fields()
_USAGE_EXTRAS = frozenset({"question_tokens_dropped"})  # laya's, inside reporting_question_cuts


def render_result(result: Mapping[str, Any], strict: bool = False) -> dict[str, Any]:
    """The wire form of one Router result: laya's fields prefixed ``x_`` and
    ``x_jev_confidence`` added, or the strict Jev shape."""
    answers = result.get("answers") or {}
    if strict:
        usage = result.get("usage") or {}
        return {
            "model": result.get("model"),
            "answers": {qid: _strict_answer(a) for qid, a in answers.items()},
            "usage": {k: usage.get(k, 0) for k in ("input_tokens", "output_tokens")},
        }
    wire = _prefixed(result, _RESULT_EXTRAS)
    wire["answers"] = {qid: _wire_answer(a) for qid, a in answers.items()}
    usage = wire.get("usage")
    if isinstance(usage, Mapping):
        wire["usage"] = _prefixed(usage, _USAGE_EXTRAS)
    return wire


def render_batch(results: Sequence[Mapping[str, Any]], strict: bool = False) -> dict[str, Any]:
    """The batch reply: every result rendered, plus the summed token usage."""
    total = {"input_tokens": 0, "output_tokens": 0}
    for result in results:
        usage = result.get("usage") or {}
        for key in total:
            total[key] += usage.get(key) or 0
    return {"results": [render_result(r, strict) for r in results], "total_usage": total}


def _prefixed(fields: Mapping[str, object], extras: frozenset[str]) -> dict[str, object]:
    """``fields`` with each of ``extras`` renamed ``x_<name>``, in the same order."""
    return {f"x_{key}" if key in extras else key: value for key, value in fields.items()}


def _strict_answer(answer: object) -> object:
    """The strict Jev fields of an answer, ``confidence`` being Jev's own formula."""
    kind = answer.get("type") if isinstance(answer, dict) else None
    fields = _STRICT_FIELDS.get(kind) if isinstance(kind, str) else None
    if fields is None or not isinstance(answer, dict):
        return answer
    wide = _wire_dict(answer)
    strict = {k: wide[k] for k in fields if k in wide}
    if "x_jev_confidence" in wide:
        strict["confidence"] = wide["x_jev_confidence"]
    return strict


def _wire_answer(answer: object) -> object:
    """An answer in its wire form (:func:`_wire_dict`); anything but a dict as it is."""
    return _wire_dict(answer) if isinstance(answer, dict) else answer


def _wire_dict(answer: Mapping[str, object]) -> dict[str, object]:
    """An answer with laya's fields prefixed, ``x_jev_confidence`` (choice, score) and
    ``x_strategy`` (a choice answered by tournament or shortlist)."""
    wire = _prefixed(answer, _ANSWER_EXTRAS)
    if answer.get("type") not in ("choice", "score"):
        return wire
    strategy = "+".join(s for s in ("shortlist", "tournament") if isinstance(answer.get(s), dict))
    if strategy:
        wire["x_strategy"] = strategy
    jev = jev_confidence(answer)
    if jev is not None:
        wire["x_jev_confidence"] = round(jev, 4)
    return wire
