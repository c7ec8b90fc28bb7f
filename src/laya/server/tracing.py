"""OpenTelemetry spans of ``laya serve``, written through the OpenTelemetry API when it is installed.

Every request is a server span (``POST /v1/systemone``) holding ``laya.parse`` and
``laya.inference``, and each run of a long request's passes a ``laya.passes`` (its waits for
its turns included). Without OpenTelemetry nothing is traced and nothing is imported; with the API alone
(no SDK, or no tracer provider) the spans are the API's no-op ones. ``laya serve`` itself installs
the SDK's tracer provider when the ``otel`` extra is installed and the standard variables name an
exporter (:func:`configure`); ``opentelemetry-instrument laya serve`` works too
(docs/server.md#tracing).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from typing import Any, Protocol

from ..errors import MissingExtra, one_line
from ..version import __version__

__all__ = ["Span", "configure", "span"]

_TRUE = ("1", "true", "yes", "on")


class Span(Protocol):
    """What a block may do with its OpenTelemetry span: add an attribute."""

    def set_attribute(self, key: str, value: str | int | float | bool) -> None: ...


@cache
def _tracer() -> Any:
    """laya serve's tracer, or None when the OpenTelemetry API is not installed."""
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    return trace.get_tracer("laya.server", __version__)


@contextmanager
def span(
    name: str,
    attributes: Mapping[str, str | int | float | bool | None] | None = None,
    server: bool = False,
) -> Iterator[Span | None]:
    """A span around the block (the current one's child), or nothing without OpenTelemetry;
    yields it (or None) so the block can add attributes."""
    tracer = _tracer()
    if tracer is None:
        yield None
        return
    from opentelemetry.trace import SpanKind

    kind = SpanKind.SERVER if server else SpanKind.INTERNAL
    shown = {key: value for key, value in (attributes or {}).items() if value is not None}
    with tracer.start_as_current_span(name, kind=kind, attributes=shown) as current:
        yield current


def configure(environ: Mapping[str, str]) -> str | None:
    """Install the OpenTelemetry SDK's tracer provider for ``laya serve``, when the SDK is
    installed, not disabled (``OTEL_SDK_DISABLED``), no provider is set yet (as
    ``opentelemetry-instrument`` sets one) and ``OTEL_TRACES_EXPORTER`` (``console``, ``otlp``)
    or an OTLP endpoint names where the spans go; the line to log, or None."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() in _TRUE:
        return None
    exporters = _exporter_names(environ)
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
    except ImportError:
        return None
    if not exporters or not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return None
    named = {} if environ.get("OTEL_SERVICE_NAME") else {"service.name": "laya-serve"}
    provider = TracerProvider(resource=Resource.create(named))
    for name in exporters:
        provider.add_span_processor(_processor(name, environ))
    trace.set_tracer_provider(provider)
    return f"laya serve: OpenTelemetry spans go to {', '.join(exporters)}"


def _exporter_names(environ: Mapping[str, str]) -> list[str]:
    """``OTEL_TRACES_EXPORTER``'s names (``none``: none); unset, ``otlp`` when an endpoint is."""
    value = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if not value:
        endpoints = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        return ["otlp"] if any(environ.get(name, "").strip() for name in endpoints) else []
    return [name.strip() for name in value.split(",") if name.strip() not in ("", "none")]


def _processor(name: str, environ: Mapping[str, str]) -> Any:
    """The span processor of one exporter name; MissingExtra naming what to install."""
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SimpleSpanProcessor,
    )

    if name == "console":
        return SimpleSpanProcessor(ConsoleSpanExporter())
    if name != "otlp":
        raise MissingExtra(
            f"OTEL_TRACES_EXPORTER={name!r}: laya serve sends spans to console or otlp; for "
            "others run it under opentelemetry-instrument"
        )
    protocol = environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or environ.get(
        "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"
    )
    try:
        if protocol.strip().lower() == "grpc":
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        else:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # type: ignore[assignment]
                OTLPSpanExporter,
            )
    except ImportError as exc:
        raise MissingExtra(
            f"OTEL_TRACES_EXPORTER=otlp needs the OTLP exporter ({one_line(exc)}): pip install "
            "'laya[otel]'"
        ) from None
    return BatchSpanProcessor(OTLPSpanExporter())
