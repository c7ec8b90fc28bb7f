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

import ipaddress
import json
import math
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn
from urllib.parse import urlsplit

from ..engine.nesting import MAX_DEPTH, TOO_DEEP
from ..errors import InvalidRequest
from .shape import deepest_field, measure, neutral
from .statuses import CrossSite, MalformedBody, TooLarge, WrongHost

__all__ = [
    "DRAIN_BYTES",
    "Hosts",
    "MAX_BODY_BYTES",
    "MAX_BODY_DEPTH",
    "MAX_JSON_VALUES",
    "check_framing",
    "check_host",
    "check_same_origin",
    "decode_body",
    "over_network",
    "read_body",
]

MAX_BODY_BYTES = 2 * 1024 * 1024
DRAIN_BYTES = 8 * 1024 * 1024
MAX_JSON_VALUES = 100_000
# a value laya serialises nests at most MAX_DEPTH levels (laya.engine.nesting); the wire puts the deepest
# of them three containers down (the body, questions, a question, then its criteria)
MAX_BODY_DEPTH = MAX_DEPTH + 3
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


@dataclass(frozen=True)
class Hosts:
    """The host names a ``Host`` (or ``Origin``) header may carry: ``names`` (None: any), each a
    name or a ``.domain`` (it and its subdomains). IP addresses and loopback names (``localhost``,
    ``*.localhost``) always pass: a page reaching this server through a rebound DNS name (DNS
    rebinding) sends that name, never an address (docs/server.md#host-names)."""

    names: tuple[str, ...] | None = ()

    @classmethod
    def serving(cls, bound: str, allowed: tuple[str, ...] | None) -> Hosts:
        """The rule of a server bound to ``bound`` with ``--allowed-hosts`` (None: not set):
        loopback names only when bound to a loopback address, as Jupyter does; else any."""
        if allowed is not None:
            return cls(None if "*" in allowed else allowed)
        return cls(() if _loopback(bound) else None)

    def allows(self, authority: str) -> bool:
        """Whether ``authority`` (a ``Host`` value: ``name``, ``name:port``, ``[::1]:port``)
        names a host this server answers to."""
        name = _host_name(authority)
        if self.names is None or _loopback(name) or _address(name):
            return True
        return any(name == n or (n.startswith(".") and (name == n[1:] or name.endswith(n)))
                   for n in self.names)  # fmt: skip


def _host_name(authority: str) -> str:
    text = authority.strip().lower()
    if text.startswith("["):
        return text[1 : text.find("]")] if "]" in text else text
    name, sep, port = text.rpartition(":")
    return (name if sep and port.isdigit() else text).rstrip(".")


def _address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _loopback(name: str) -> bool:
    if name in ("localhost", "") or name.endswith(".localhost"):
        return name != ""
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


def over_network(scope: Mapping[str, object]) -> bool:
    """Whether a request came from a peer with an IP address, as every request over TCP does
    (what DNS rebinding needs); an in-process client (Starlette's TestClient, whose peer is
    ``testclient`` and whose host is ``testserver``) calls the app directly, from no browser."""
    client = scope.get("client")  # ASGI: (host, port), or None
    return isinstance(client, Sequence) and bool(client) and _address(str(client[0]))


def check_host(headers: Mapping[str, str], hosts: Hosts) -> None:
    """Refuse (403) a ``Host`` header, or a browser's ``Origin``, naming a host not in ``hosts``."""
    host = headers.get("host")
    if host and not hosts.allows(host):
        raise WrongHost(
            f"host {_host_name(host)[:100]!r} is not a name this server answers to; list it in "
            "--allowed-hosts (LAYA_ALLOWED_HOSTS) if it is, or call the server by its address"
        )
    origin = (headers.get("origin") or "").strip()
    if origin and origin != "null":
        netloc = urlsplit(origin).netloc
        if netloc and not hosts.allows(netloc):
            raise WrongHost(
                f"Origin {origin[:100]!r} names a host this server does not answer to; list it "
                "in --allowed-hosts (LAYA_ALLOWED_HOSTS) if it is yours"
            )


def check_framing(headers: Mapping[str, str]) -> None:
    """400 for a request framed twice, ``Content-Length`` and ``Transfer-Encoding`` together
    (RFC 9112 §6.1: a request smuggling vector); the connection is closed after the answer."""
    if "content-length" in headers and "transfer-encoding" in headers:
        error = MalformedBody(
            "malformed HTTP request: Content-Length and Transfer-Encoding together (RFC 9112 "
            "section 6.1); send one of them"
        )
        error.close = True
        raise error


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


async def read_body(
    chunks: AsyncIterator[bytes], length: str | None, limit: int, expect_continue: bool = False
) -> bytes:
    """The whole body, or 413 once it passes ``limit`` bytes (declared or streamed); a client
    that waits for ``100 Continue`` before sending an oversized body gets its 413 at once, and
    never the invitation to send it."""
    if length is not None:
        if not length.strip().isdigit():
            raise MalformedBody(f"Content-Length must be a number of bytes, got {length!r}")
        if int(length) > limit:
            if not expect_continue:  # reading would ask the client for the body it waits to send
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


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range (it is not a finite double)")
    return value


def json_type(value: object) -> str:
    """The JSON name of a decoded value's type."""
    names = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def _check_encodable(body: Mapping[str, object]) -> None:
    """400 naming the field when a string holds an unpaired UTF-16 surrogate."""
    try:
        json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        where = _surrogate_path(body) or "request body"
        raise MalformedBody(
            f"{where} holds an unpaired UTF-16 surrogate and cannot be UTF-8 encoded"
        ) from None


def _surrogate_path(body: object) -> str | None:
    """Where the first unencodable string sits (``questions.q.instructions``), iteratively."""
    pending: list[tuple[object, str]] = [(body, "")]
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
