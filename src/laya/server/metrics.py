"""What ``laya serve`` shows an operator at ``GET /metrics``, in Prometheus' text format.

One registry per app (two apps in one process never share a series), written by
``prometheus-client`` (the ``serve`` extra). The series and their labels are fixed, so a client
cannot grow them: ``route`` is a route's path template (``other`` for a path no route has),
``model`` a checkpoint the server was started with, ``reason`` a name from
:func:`laya.server.statuses.reason` or the connection-level refusals of ``laya serve``
(``header_too_large``, ``malformed_http``, ``connections``, ``client_connections``).
docs/server.md#metrics lists them.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import require_extra

__all__ = ["CONTENT_TYPE", "Metrics"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
_SIZES = (1, 2, 4, 8, 16, 32, 64)


class Metrics:
    """The server's series; ``queued`` and ``in_flight`` are read when scraped."""

    def __init__(self, queued: Callable[[], int], in_flight: Callable[[], int]) -> None:
        require_extra(
            "prometheus_client", "serve", "prometheus-client", "laya serve (GET /metrics)"
        )
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = registry = CollectorRegistry(auto_describe=True)
        self.latency = Histogram(
            "laya_request_duration_seconds",
            "Time from a request's arrival to its reply, by route, method and status.",
            ("route", "method", "status"),
            buckets=_SECONDS,
            registry=registry,
        )
        self.group_size = Histogram(
            "laya_batcher_group_requests",
            "Single requests answered together in one group of shared forward passes.",
            buckets=_SIZES,
            registry=registry,
        )
        self.batch_size = Histogram(
            "laya_batch_states",
            "States per /v1/systemone/batch request.",
            buckets=_SIZES,
            registry=registry,
        )
        self.passes = Counter(
            "laya_long_passes",
            "Forward passes of long requests (tournaments, shortlists, batches), each a turn.",
            registry=registry,
        )
        self.answered = Counter(
            "laya_model_requests",
            "Requests answered (status 200), by the checkpoint that answered.",
            ("model",),
            registry=registry,
        )
        self.tokens = Counter(
            "laya_model_input_tokens",
            "Input tokens the model read for answered requests, by checkpoint.",
            ("model",),
            registry=registry,
        )
        self.refusals = Counter(
            "laya_refusals",
            "Requests not answered, by reason (the client's mistake, overload, a gone client...).",
            ("reason",),
            registry=registry,
        )
        queue = Gauge(
            "laya_queue_depth",
            "Jobs waiting for a turn: single requests and passes of long requests.",
            registry=registry,
        )
        queue.set_function(lambda: float(queued()))
        flight = Gauge(
            "laya_requests_in_flight",
            "Requests admitted (holding an admission slot) and not yet answered.",
            registry=registry,
        )
        flight.set_function(lambda: float(in_flight()))

    def refused(self, reason: str) -> None:
        """Count a refusal (also called by the connection-level limits of ``laya serve``)."""
        self.refusals.labels(reason).inc()

    def request(self, route: str, method: str, status: int, seconds: float) -> None:
        self.latency.labels(route, method, str(status)).observe(seconds)

    def answered_by(self, model: str, tokens: int) -> None:
        self.answered.labels(model).inc()
        self.tokens.labels(model).inc(tokens)

    def text(self) -> bytes:
        """The exposition, in Prometheus' text format."""
        from prometheus_client import generate_latest

        return bytes(generate_latest(self.registry))
