"""Values read from Parquet or Ray as JSON holds them: the one place both readers and writers
turn a numpy value, a date or bytes into plain JSON."""

from __future__ import annotations

import base64
import json

__all__ = ["json_text", "plain_value"]


def plain_value(value: object) -> object:
    """A value Parquet or Ray hands back as JSON can hold it (``json.dumps``' ``default``):
    numpy values as Python, dates and times in ISO 8601, bytes as Base64, decimals as text."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    return str(value)


def json_text(value: object) -> str:
    """``value`` as JSON text, non-ASCII kept and anything else through :func:`plain_value`."""
    return json.dumps(value, ensure_ascii=False, default=plain_value)
