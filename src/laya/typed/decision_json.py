"""A Decision as JSON (what an agent reads): the typed values, then per field its probability,
confidence and abstention (and ``automate``, with a certified calibration file); the MCP tools
and the framework tools send it (docs/decide.md)."""

from __future__ import annotations

import json
from typing import Any

from .decisions import Decision

__all__ = ["decision_json"]


def decision_json(decision: Decision[Any]) -> dict[str, Any]:
    """``decision`` as plain JSON values (enums as their values, models as objects)."""
    document: dict[str, object] = {
        "value": decision.value,
        "fields": {
            name: {
                "value": f.value,
                "probability": f.probability,
                "confidence": f.confidence,
                "abstained": f.abstained,
                "threshold": f.threshold,
                **({} if f.automate is None else {"automate": f.automate}),
            }
            for name, f in decision.fields.items()
        },
        **{k: decision.raw[k] for k in ("routing", "calibration") if k in decision.raw},
    }
    return dict(json.loads(json.dumps(document, default=_plain)))


def _plain(value: object) -> object:
    """A value json cannot write: a set as a list, an enum as its value, a model as its fields."""
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return getattr(value, "value", str(value))
