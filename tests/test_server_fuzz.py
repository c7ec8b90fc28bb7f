"""Schemathesis fuzzes a live ``laya serve`` over its own OpenAPI document: no 5xx, no reply the
document does not describe.

The server runs on 127.0.0.1 with ``laya serve``'s configuration on the tiny fixture checkpoints
(fast, so a few hundred requests per decision route fit in the suite). Every operation in the
document is fuzzed, bodies generated from the wire models; hypothesis's database is off so the
run is the same on every machine. The module counts the requests it sent and requires 1,000.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

schemathesis = pytest.importorskip("schemathesis", reason="schemathesis needs Python 3.11+")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from test_server import FIXTURE_MODELS, served  # noqa: E402

from laya.router import Router  # noqa: E402
from laya.server import Settings, create_app  # noqa: E402

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
# per operation and mode; hypothesis stops sooner where there is less to vary (the GET routes)
EXAMPLES = {GenerationMode.POSITIVE: 300, GenerationMode.NEGATIVE: 220}
SENT: list[str] = []


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    router = Router(models=FIXTURE_MODELS, default="english").preload(list(FIXTURE_MODELS))
    with served(create_app(router, Settings(default_model="english", route="auto"))) as url:
        yield url


@pytest.fixture(scope="module")
def api(base: str) -> object:
    return schemathesis.openapi.from_url(base + "/openapi.json")


OPERATIONS = [
    ("POST", "/v1/systemone"),
    ("POST", "/v1/systemone/batch"),
    ("GET", "/health"),
    ("GET", "/models"),
    ("GET", "/presets"),
]


@pytest.mark.parametrize(
    ("method", "path", "mode"),
    [
        (method, path, mode)
        for method, path in OPERATIONS
        for mode in EXAMPLES
        if method == "POST" or mode is GenerationMode.POSITIVE  # a GET here takes no input
    ],
    ids=lambda value: getattr(value, "value", value),
)
def test_no_5xx_and_replies_match_the_schema(
    api: object, base: str, method: str, path: str, mode: GenerationMode
) -> None:
    operation = api[path][method]

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES[mode],
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    def fuzz(case: object) -> None:
        case.call_and_validate(base_url=base, checks=CHECKS, timeout=60)
        SENT.append(path)

    fuzz()


def test_every_operation_is_fuzzed(api: object) -> None:
    listed = {(op.method.upper(), op.path) for op in (r.ok() for r in api.get_all_operations())}
    assert listed == set(OPERATIONS)


def test_enough_requests_were_sent(base: str) -> None:
    """Runs after the fuzzing (file order): at least 1,000 requests, and the server is alive."""
    assert len(SENT) >= 1000, len(SENT)
    assert SENT.count("/v1/systemone") >= 300 and SENT.count("/v1/systemone/batch") >= 300
    assert httpx.get(base + "/health").status_code == 200
