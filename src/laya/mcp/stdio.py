"""``laya mcp`` over stdio, where every line a client sends gets an answer.

The SDK's stdio transport parses each line as a JSON-RPC message and, when it cannot, hands the
error to the session, which answers nothing: a client that sent malformed JSON, a JSON array (a
batch, which MCP does not take), a string holding an unpaired surrogate or JSON nested past any
use would wait forever. :class:`Lines` reads stdin in front of the SDK's reader: each line is
checked (a size cap, UTF-8, its nesting counted on the bytes in linear time, JSON, an object, no
unpaired surrogate, a JSON-RPC message) and one that fails is answered with a JSON-RPC error
(``-32700`` parse error, ``-32600`` invalid request; the request's id when it can be read, else
null); the others go on to the SDK unchanged. docs/integrations.md#mcp.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, BinaryIO

import anyio
import anyio.to_thread
import mcp.types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import RequestId
from pydantic import ValidationError

from ..engine.nesting import MAX_DEPTH
from ..server.shape import measure, neutral

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectSendStream
    from mcp.server import MCPServer

__all__ = ["MAX_LINE_BYTES", "MAX_MESSAGE_DEPTH", "Lines", "serve_stdio"]

MAX_LINE_BYTES = 16 * 1024 * 1024
# a tool's argument nests at most MAX_DEPTH levels (laya.engine.nesting); the message puts the
# deepest of them a few containers down (the message, params, arguments, requests[i], questions, q)
MAX_MESSAGE_DEPTH = MAX_DEPTH + 8
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class Refused(Exception):
    """A line that is not a message this server can read: its JSON-RPC error code and text."""

    def __init__(self, code: int, message: str, request_id: RequestId | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.request_id = code, message, request_id


class Lines:
    """The lines of ``source`` that are JSON-RPC messages, for the SDK's stdio reader; the
    others answered with a JSON-RPC error on the transport's write stream (:meth:`answer_with`)."""

    def __init__(self, source: BinaryIO) -> None:
        self.source = source
        self.ready = anyio.Event()
        self.out: MemoryObjectSendStream[SessionMessage] | None = None

    def answer_with(self, write_stream: MemoryObjectSendStream[SessionMessage]) -> None:
        """Where refusals go: the stream the SDK writes its own messages to."""
        self.out = write_stream
        self.ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        while True:
            raw = await self._read(MAX_LINE_BYTES + 1)
            if not raw:
                return
            try:
                line = await self._checked(raw)
            except Refused as refused:
                await self._answer(refused)
                continue
            if line.strip():
                yield line

    async def _checked(self, raw: bytes) -> str:
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            await self._skip_rest()
            raise Refused(
                types.INVALID_REQUEST, f"message longer than {MAX_LINE_BYTES} bytes; send less"
            )
        return checked_line(raw)

    async def _skip_rest(self) -> None:
        """Read and drop the rest of an overlong line."""
        while chunk := await self._read(MAX_LINE_BYTES):
            if chunk.endswith(b"\n"):
                return

    async def _read(self, limit: int) -> bytes:
        """One line, or its first ``limit`` bytes, read on a worker thread."""
        return await anyio.to_thread.run_sync(self.source.readline, limit, abandon_on_cancel=True)

    async def _answer(self, refused: Refused) -> None:
        await self.ready.wait()
        error = types.JSONRPCError(
            jsonrpc="2.0",
            id=refused.request_id,
            error=types.ErrorData(code=refused.code, message=refused.message),
        )
        if self.out is not None:  # set with ready
            await self.out.send(SessionMessage(error))


def checked_line(raw: bytes) -> str:
    """``raw`` as text, if it holds one JSON-RPC message this server can read; else Refused."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(types.PARSE_ERROR, f"the message is not UTF-8 ({exc.reason})") from None
    if not text.strip():
        return text
    if raw.count(b"[") + raw.count(b"{") > MAX_MESSAGE_DEPTH:
        depth = measure(neutral(raw)).depth
        if depth > MAX_MESSAGE_DEPTH:
            raise Refused(
                types.INVALID_REQUEST,
                f"the message nests JSON {depth} levels deep; at most {MAX_MESSAGE_DEPTH}",
            )
    try:
        message = json.loads(text)
    except ValueError as exc:
        raise Refused(types.PARSE_ERROR, f"the message is not valid JSON: {exc}") from None
    if isinstance(message, list):
        raise Refused(
            types.INVALID_REQUEST,
            "a JSON array (a batch) is not a message: MCP takes one JSON-RPC object per line",
        )
    if not isinstance(message, dict):
        raise Refused(types.INVALID_REQUEST, "the message must be a JSON-RPC object")
    request_id = _id(message)
    if _SURROGATE_ESCAPE.search(raw) and not _encodes(message):
        raise Refused(
            types.PARSE_ERROR,
            "the message holds an unpaired UTF-16 surrogate (a \\ud800-\\udfff escape alone), "
            "which is not text",
            request_id,
        )
    try:
        types.jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        raise Refused(
            types.INVALID_REQUEST,
            f"not a JSON-RPC 2.0 message ({where}: {first['msg']})",
            request_id,
        ) from None
    return text


def _id(message: dict[str, object]) -> RequestId | None:
    """The message's id, when it is one an answer can carry (a string or an integer)."""
    value = message.get("id")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    return value if isinstance(value, int) or _encodes(value) else None


def _encodes(value: object) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


async def serve_stdio(server: MCPServer) -> None:
    """Run ``server`` (an SDK ``MCPServer``) over stdin and stdout until stdin ends."""
    server.streamable_http_app()  # the SDK's MCPServer shows its low-level server only through
    lowlevel = server.session_manager.app  # the session manager this builds (nothing starts)
    lines = Lines(sys.stdin.buffer)
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
        lines.answer_with(write_stream)
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
