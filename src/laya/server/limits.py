"""Bounds on what one request may cost before the model sees it: bytes, time, JSON.

* :func:`read_body` reads the whole body within a size cap; past the cap it keeps reading and
  discarding up to :data:`DRAIN_BYTES` so a client that writes its whole body before reading
  still receives the 413 (closing on unread data would reset the connection instead).
* :func:`decode_body` parses JSON after two checks on the raw bytes, both linear in them
  (:mod:`laya.server.shape`): a cap on its values (:data:`MAX_JSON_VALUES`) and on its nesting
  (:data:`MAX_BODY_DEPTH`); it refuses ``NaN``, ``Infinity`` and numbers that overflow to infinity
  (``1e400``), and strings that cannot be UTF-8 encoded. It is CPU work: the app runs it off the
  event loop.

The work a request asks of the model is counted where its rows are built (:mod:`laya.engine.work`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from ..engine.nesting import MAX_DEPTH, TOO_DEEP
from ..errors import InvalidRequest
from .shape import deepest_field, measure, neutral
from .statuses import CrossSite, MalformedBody, TooLarge

__all__ = [
    "DRAIN_BYTES",
    "MAX_BODY_BYTES",
    "MAX_BODY_DEPTH",
    "MAX_JSON_VALUES",
    "check_same_origin",
    "decode_body",
    "read_body",
]

MAX_BODY_BYTES = 2 * 1024 * 1024
DRAIN_BYTES = 8 * 1024 * 1024
MAX_JSON_VALUES = 100_000
# a value laya serialises nests at most MAX_DEPTH levels (laya.engine.nesting); the wire puts the deepest
# of them three containers down (the body, questions, a question, then its criteria)
MAX_BODY_DEPTH = MAX_DEPTH + 3
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def check_same_origin(headers: Mapping[str, str]) -> None:
    """Refuse a browser's cross-site request (403): ``Sec-Fetch-Site`` other than ``same-origin``
    or ``none``, or, from a browser that does not send it, an ``Origin`` that is not this
    server's ``Host``. A body is read as JSON whatever its ``Content-Type`` (as the reference
    does), so this, not the media type, keeps pages on other sites from spending the model."""
    site = (headers.get("sec-fetch-site") or "").strip().lower()
    origin = (headers.get("origin") or "").strip()
    if site:
        if site in ("same-origin", "none"):
            return
        where = f"Sec-Fetch-Site: {site}"
    elif origin and urlsplit(origin).netloc.lower() != (headers.get("host") or "").lower():
        where = f"Origin {origin[:100]!r} is not this server's host"
    else:
        return
    raise CrossSite(
        f"cross-site request refused ({where}); call the API from a server or from a page "
        "this server serves"
    )


async def read_body(chunks: AsyncIterator[bytes], length: str | None, limit: int) -> bytes:
    """The whole body, or 413 once it passes ``limit`` bytes (declared or streamed)."""
    if length is not None:
        if not length.strip().isdigit():
            raise MalformedBody(f"Content-Length must be a number of bytes, got {length!r}")
        if int(length) > limit:
            await _drain(chunks, 0)
            raise _too_large(f"{length} bytes", limit)
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if len(body) > limit:
            await _drain(chunks, len(body))
            raise _too_large(f"more than {limit} bytes", limit)
    return bytes(body)


def _too_large(size: str, limit: int) -> TooLarge:
    error = TooLarge(f"request body too large: {size}; at most {limit}")
    error.close = True  # the rest of the body is not read: the connection cannot be reused
    return error


async def _drain(chunks: AsyncIterator[bytes], seen: int) -> None:
    """Read and discard the body up to :data:`DRAIN_BYTES`, so the 413 can reach the client."""
    async for chunk in chunks:
        seen += len(chunk)
        if seen > DRAIN_BYTES:
            return


def decode_body(raw: bytes) -> dict[str, Any]:
    """The body as a JSON object: 400 for bad JSON or non-finite numbers, 413 past the value cap,
    422 naming the field past the nesting cap."""
    _check_shape(raw)
    try:  # UTF-8 only (RFC 8259): the byte scan reads the structure the parser will
        body = json.loads(raw.decode("utf-8"), parse_constant=_no_constant, parse_float=_finite)
    except ValueError as exc:
        raise MalformedBody(f"request body must be valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise MalformedBody(f"request body must be a JSON object, got {json_type(body)}")
    if _SURROGATE_ESCAPE.search(raw):  # only a \uD800-\uDFFF escape decodes to a surrogate
        _check_encodable(body)
    return body


def _check_shape(raw: bytes) -> None:
    """The value and nesting caps, on the bytes; counting with the strings in (commas and brackets
    inside them too) is an upper bound, so most bodies need no second look."""
    opens = raw.count(b"[") + raw.count(b"{")
    if raw.count(b",") + opens <= MAX_JSON_VALUES and opens <= MAX_BODY_DEPTH:
        return
    shape = measure(neutral(raw))
    if shape.values > MAX_JSON_VALUES:
        raise TooLarge(
            f"request body holds about {shape.values} JSON values; at most {MAX_JSON_VALUES}"
        )
    if shape.depth > MAX_BODY_DEPTH:
        raise InvalidRequest(f"{deepest_field(raw, MAX_BODY_DEPTH)} {TOO_DEEP}")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range (it is not a finite double)")
    return value


def json_type(value: Any) -> str:
    """The JSON name of a decoded value's type."""
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def _check_encodable(body: dict[str, Any]) -> None:
    """400 naming the field when a string holds an unpaired UTF-16 surrogate."""
    try:
        json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        where = _surrogate_path(body) or "request body"
        raise MalformedBody(
            f"{where} holds an unpaired UTF-16 surrogate and cannot be UTF-8 encoded"
        ) from None


def _surrogate_path(body: Any) -> str | None:
    """Where the first unencodable string sits (``questions.q.instructions``), iteratively."""
    pending: list[tuple[Any, str]] = [(body, "")]
    while pending:
        value, path = pending.pop()
        if isinstance(value, str):
            if not _encodes(value):
                return path or "request body"
            continue
        if not isinstance(value, (dict, list)):
            continue
        items = value.items() if isinstance(value, dict) else enumerate(value)
        children = []
        for key, item in items:
            if isinstance(key, str) and not _encodes(key):
                return f"a key in {path or 'the body'}"
            here = f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}".lstrip(".")
            children.append((item, here))
        pending.extend(reversed(children))
    return None


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
