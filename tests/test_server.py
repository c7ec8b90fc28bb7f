"""HTTP server: a real uvicorn on 127.0.0.1, every endpoint, every refusal, and the server survives.

Two servers run for the whole module on the fixture checkpoints (registered under the built-in
names): ``open_server`` (no key, language routing, a 1 s body read timeout) and ``guarded`` (a
bearer key, admission limit 1, unpinned requests pinned to the default, and a Router hook that
sleeps or fails on marked states). The bundled ``mini`` is checked when it is installed.
"""

import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
import uvicorn
from conftest import BERT, MODERNBERT, QUESTIONS
from golden import assert_close

from laya.errors import InvalidRequest
from laya.hooks import BaseHook
from laya.router import Router
from laya.server import (
    MAX_BODY_BYTES,
    MINI_DIR,
    Settings,
    create_app,
    render_batch,
    render_result,
    serve_main,
    settings_from,
    uvicorn_config,
)
from laya.server.replies import laya_fields

FIXTURE_MODELS = {
    "english": str(MODERNBERT),
    "multilingual": str(BERT),
    "typed-decisions": str(MODERNBERT),
}
ENGLISH = "Hello, please refund my order, it arrived broken and nobody answers my emails."
FRENCH = "Bonjour, je voudrais un remboursement pour ma commande, elle est arrivée cassée."
RUSSIAN = "Привет, мой заказ пришёл сломанным, верните, пожалуйста, деньги."
KEY = "s3cret-key"
JSON = {"Content-Type": "application/json"}


# --------------------------------------------------------------------------- servers


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def served(app: Any, settings: Settings | None = None) -> Iterator[str]:
    """Run ``app`` as ``laya serve`` would (its uvicorn config and limits) in a background thread
    until the block ends; yields the base URL once the server has answered.

    The listening socket is bound here, before the server starts: a request made while it starts
    waits in the socket's queue, and no other process can take the port in between.
    """
    listening = socket.create_server(("127.0.0.1", 0))
    port = listening.getsockname()[1]
    config = uvicorn_config(
        app,
        settings or app.state.service.settings,
        host="127.0.0.1",
        port=port,
        log_level="warning",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    try:
        httpx.get(base + "/health", timeout=120)  # answered once the server has started
        yield base
    finally:
        server.should_exit = True
        thread.join(10)
        listening.close()


class Marked(BaseHook):
    """Holds, or fails, when the state starts with a marker: the seam for slow and broken calls.

    A ``SLOW`` state sets ``entered`` and waits in the hook until the test sets ``release``.
    """

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def on_predict_start(self, ctx: Any) -> None:
        state = ctx.states[0]
        if not isinstance(state, str):
            return
        if state.startswith("SLOW"):
            self.entered.set()
            self.release.wait(120)
        elif state.startswith("BOOM"):
            raise RuntimeError("secret internal detail")
        elif state.startswith("BADVALUE"):
            raise ValueError("a bug in a hook")
        elif state.startswith("REFUSE"):
            raise InvalidRequest("the hook refused this state")


@pytest.fixture(scope="module")
def router() -> Router:
    return Router(models=FIXTURE_MODELS, default="english").preload(list(FIXTURE_MODELS))


@pytest.fixture(scope="module")
def open_server(router: Router) -> Iterator[httpx.Client]:
    settings = Settings(route="auto", default_model="english", body_read_timeout=1.0)
    with (
        served(create_app(router, settings)) as base,
        httpx.Client(base_url=base, timeout=60) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def marked() -> Marked:
    """The hook of the ``guarded`` server's Router."""
    return Marked()


@pytest.fixture(scope="module")
def guarded(router: Router, marked: Marked) -> Iterator[httpx.Client]:
    slow = Router(models=FIXTURE_MODELS, default="multilingual", hooks=marked)
    for name in router.loaded:
        slow.attach(name, router.load(name))
    settings = Settings(api_key=KEY, max_concurrent=1, route="default")
    headers = {"Authorization": f"Bearer {KEY}"}
    with (
        served(create_app(slow, settings)) as base,
        httpx.Client(base_url=base, headers=headers, timeout=60) as client,
    ):
        yield client


def alive(client: httpx.Client) -> None:
    response = client.get("/health")
    assert response.status_code == 200 and response.json()["status"] == "ok"


def without_jev(result: dict) -> dict:
    """A server result as the Router returned it: ``x_jev_confidence`` taken out (checking it
    is where it belongs) and laya's own fields under their names again (``x_unsure`` is
    ``unsure``: the reply prefixes them, laya.server.replies)."""
    result_fields, answer_fields = laya_fields()
    answers = {}
    for qid, answer in result["answers"].items():
        answer = unprefixed(answer, answer_fields)
        jev = answer.pop("x_jev_confidence", None)
        assert (jev is None) == (answer["type"] == "noul")
        assert jev is None or 0.0 <= jev <= 1.0
        answer.pop("x_strategy", None)
        answers[qid] = answer
    return {**unprefixed(result, result_fields), "answers": answers}


def unprefixed(fields: dict, names: frozenset[str]) -> dict:
    return {key.removeprefix("x_") if key[2:] in names else key: v for key, v in fields.items()}


# --------------------------------------------------------------------------- endpoints


def test_health_and_models(open_server: httpx.Client, router: Router) -> None:
    health = open_server.get("/health").json()
    assert health["status"] == "ok"
    assert set(health["loaded"]) == set(router.loaded)
    assert health["default_model"] == "english"
    assert health["precision"] == {name: "fp32" for name in router.loaded}
    models = open_server.get("/models").json()
    assert set(models["checkpoints"]) >= set(FIXTURE_MODELS)
    assert models["checkpoints"]["multilingual"]["repo"] == str(BERT)
    assert models["aliases"]["ml"] == "multilingual"
    assert all(models["checkpoints"][name]["resident"] for name in router.loaded)
    assert all(models["checkpoints"][name]["available"] for name in FIXTURE_MODELS)
    assert open_server.get("/openapi.json").status_code == 200


def test_jev_models_lists_only_what_can_answer() -> None:
    """``/v1/models`` leaves out a checkpoint that is neither on disk nor cached while downloads
    are off (a Jev client picking from it would get 422); ``/models`` keeps it, unavailable."""
    missing = Router(
        models={**FIXTURE_MODELS, "support": "laya-tests/never-cached"},
        default="multilingual",
        downloads="never",
    )
    with served(create_app(missing, Settings(default_model="multilingual"))) as base:
        listed = httpx.get(base + "/v1/models").json()["models"]
        models = httpx.get(base + "/models").json()["checkpoints"]
        body = {"state": ENGLISH, "questions": QUESTIONS, "model": "support"}
        refused = httpx.post(base + "/v1/systemone", json=body, timeout=60)
    names = [model["name"] for model in listed]
    assert names[0] == "multilingual" and "default" in listed[0]["description"]
    assert set(names) == set(missing.models) - {"support"}
    assert models["support"] == {
        "repo": "laya-tests/never-cached",
        "subfolder": None,
        "resident": False,
        "available": False,
    }
    assert refused.status_code == 422 and "support" in refused.json()["detail"]


def test_the_model_lists_of_a_server_around_a_callers_own_router() -> None:
    """``laya.serve.create_app(router)`` takes any object with ``predict``; its model lists
    read the built-in table then (laya.server.caller_router), without the Router's settings."""
    import laya.serve

    class Own:
        loaded: list[str] = []

        def predict(self, state: Any, questions: dict, model: str | None = None) -> Any:
            raise ValueError("not asked here")

    with served(laya.serve.create_app(Own())) as base:
        listed = httpx.get(base + "/v1/models")
        models = httpx.get(base + "/models")
    assert listed.status_code == 200 and models.status_code == 200, (listed.text, models.text)
    available = {name for name, c in models.json()["checkpoints"].items() if c["available"]}
    assert {model["name"] for model in listed.json()["models"]} == available


@pytest.mark.parametrize(
    "controls",
    [
        {},
        {"model": "multilingual"},
        {"lang": "fr"},
        {"lang_guess": "en", "max_len": 256, "head_max_len": 96},
        {"min_confidence": 0.9},
        {"min_confidence": {"choice:3-5": 0.5, "default": 0.2}},
    ],
)
@pytest.mark.parametrize("state", [ENGLISH, FRENCH, {"subject": "refund", "body": ENGLISH}])
def test_single_equals_router_predict(
    open_server: httpx.Client, router: Router, state: Any, controls: dict
) -> None:
    response = open_server.post(
        "/v1/systemone", json={"state": state, "questions": QUESTIONS, **controls}
    )
    assert response.status_code == 200, response.text
    assert without_jev(response.json()) == router.predict(state, QUESTIONS, **controls)
    assert response.headers["server-timing"].startswith("inference;dur=")
    assert float(response.headers["x-inference-time-ms"]) >= 0


def test_batch_equals_router_predict_batch(open_server: httpx.Client, router: Router) -> None:
    states = [ENGLISH, FRENCH, RUSSIAN, "12345", {"turns": ["hi", "cancel my plan"]}]
    body = {"states": states, "questions": QUESTIONS, "lang_guess": "en", "sort_by_length": True}
    response = open_server.post("/v1/systemone/batch", json=body)
    assert response.status_code == 200, response.text
    expected = router.predict_batch(
        [{"state": s, "questions": QUESTIONS, "lang_guess": "en"} for s in states],
        sort_by_length=True,
    )
    reply = response.json()
    assert_close(expected, [without_jev(r) for r in reply["results"]])
    assert reply["total_usage"] == {
        "input_tokens": sum(r["usage"]["input_tokens"] for r in expected),
        "output_tokens": 0,
    }
    assert "inference;dur=" in response.headers["server-timing"]


@pytest.mark.parametrize(
    ("model", "routed"),
    [
        ("convaiinnovations/laya-multilingual", "multilingual"),
        ("ConvAIInnovations/Laya-Typed-Decisions", "typed-decisions"),
        ("convaiinnovations/laya", "english"),
        (" ML ", "multilingual"),
        ("jev-1", "english"),
        ("", "english"),
    ],
)
def test_model_field_resolution(open_server: httpx.Client, model: str, routed: str) -> None:
    body = {"state": ENGLISH, "questions": QUESTIONS, "model": model}
    response = open_server.post("/v1/systemone", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["routing"]["model"] == routed


def test_route_default_pins_unnamed_requests(guarded: httpx.Client) -> None:
    """route=default: no model -> the default checkpoint; a task or a model still decides."""
    routed = [
        guarded.post("/v1/systemone", json={"state": ENGLISH, "questions": QUESTIONS, **extra})
        for extra in ({}, {"model": "english"}, {"task": "typed_decisions"})
    ]
    assert [r.json()["routing"]["model"] for r in routed] == [
        "multilingual",
        "english",
        "typed-decisions",
    ]
    reasons = [r.json()["routing"]["reason"] for r in routed]
    assert reasons[0].startswith("server default model 'multilingual': the request named no model")
    assert reasons[1] == "explicit model='english'"
    assert reasons[2] == "explicit task='typed_decisions'"


def test_64_concurrent_requests(open_server: httpx.Client, router: Router) -> None:
    distinct = [f"{(ENGLISH, FRENCH, RUSSIAN)[i % 3]} (ticket {i})" for i in range(8)]
    answers = {s: router.predict(s, QUESTIONS) for s in distinct}
    states = [distinct[i % 8] for i in range(64)]
    expected = [answers[s] for s in states]

    def post(state: str) -> httpx.Response:
        return open_server.post("/v1/systemone", json={"state": state, "questions": QUESTIONS})

    with ThreadPoolExecutor(64) as pool:
        responses = list(pool.map(post, states))
    assert [r.status_code for r in responses] == [200] * 64
    assert_close(expected, [without_jev(r.json()) for r in responses])


class AccessLines(logging.Handler):
    """The access log's lines by path, as they are written (each just after its response)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.by_path: dict[str, dict] = {}
        self.written = threading.Condition()

    def emit(self, record: logging.LogRecord) -> None:
        line = json.loads(record.getMessage())
        with self.written:
            self.by_path[line["path"]] = line
            self.written.notify_all()

    def wait(self, *paths: str) -> list[dict]:
        """The lines of ``paths``, once each has been written."""
        with self.written:
            assert self.written.wait_for(lambda: set(paths) <= set(self.by_path), timeout=60)
            return [self.by_path[path] for path in paths]


def test_access_log_line_per_request(open_server: httpx.Client, caplog) -> None:
    logger, lines = logging.getLogger("laya.server"), AccessLines()
    with caplog.at_level(logging.INFO, logger="laya.server"):
        logger.addHandler(lines)
        try:
            open_server.post("/v1/systemone", json={"state": ENGLISH, "questions": QUESTIONS})
            open_server.get("/nope")
            answered, missing = lines.wait("/v1/systemone", "/nope")
        finally:
            logger.removeHandler(lines)
    assert {k: answered[k] for k in ("method", "status", "model")} == {
        "method": "POST",
        "status": 200,
        "model": "english",
    }
    assert missing["status"] == 404 and missing["ms"] >= 0


# --------------------------------------------------------------------------- refusals

SMALL = {"q": {"type": "noul", "instructions": "Is it a refund request?"}}
BATCH = "/v1/systemone/batch"


def body(**fields: Any) -> dict:
    return {"state": ENGLISH, "questions": SMALL, **fields}


BAD_REQUESTS = [
    ("malformed JSON", {"content": b'{"state": "a", '}, 400, "must be valid JSON"),
    ("NaN is not JSON", {"content": b'{"state": NaN, "questions": {}}'}, 400, "valid JSON"),
    ("array body", {"content": b'["state", "questions"]'}, 400, "must be a JSON object, got array"),
    ("missing state", {"json": {"questions": SMALL}}, 400, "missing required field(s): state"),
    ("missing questions", {"json": {"state": "hi"}}, 400, "field(s): questions"),
    ("null state", {"json": body(state=None)}, 400, "state must not be null"),
    ("questions array", {"json": body(questions=[SMALL])}, 400, "questions must be a JSON object"),
    ("questions empty", {"json": body(questions={})}, 400, "at least one question"),
    ("question not object", {"json": body(questions={"q": 3})}, 422, "question 'q'"),
    ("model number", {"json": body(model=3)}, 422, "model must be a string"),
    ("lang object", {"json": body(lang={"code": "en"})}, 422, "lang must be a string"),
    ("max_len string", {"json": body(max_len="64")}, 422, "max_len must be a positive integer"),
    ("max_len bool", {"json": body(max_len=True)}, 422, "max_len must be a positive integer"),
    ("head_max_len zero", {"json": body(head_max_len=0)}, 422, "head_max_len must be a positive"),
    ("budget over cap", {"json": body(max_len=9000)}, 422, "exceeds server limit (9000 > 8192)"),
    ("min_confidence", {"json": body(min_confidence=2)}, 422, "min_confidence"),
    (
        "unknown type",
        {"json": body(questions={"mood": {"type": "vibe", "instructions": "x"}})},
        422,
        "question 'mood': unknown type 'vibe'",
    ),
    (
        "10,000 options",
        {
            "json": body(
                questions={
                    "big": {
                        "type": "choice",
                        "instructions": "Which?",
                        "criteria": [f"o{i}" for i in range(10_000)],
                    }
                }
            )
        },
        413,
        "question 'big' has 10000 options",
    ),
    (
        "too many questions",
        {"json": body(questions={f"q{i}": SMALL["q"] for i in range(65)})},
        413,
        "65 questions",
    ),
    ("state too long", {"json": body(state="a" * 50_001)}, 413, "state is 50001 characters"),
    *[
        (
            f"empty state {value!r}",
            {"json": body(state=value)},
            422,
            "state is empty: there is no text",
        )
        for value in ["", "  \n", {}, [], {"message": ""}, [" ", {"a": None}]]
    ],
    (
        "lone surrogate",
        {
            "content": b'{"state": "caf\\ud800", "questions": {"q": {"type": "noul", "instructions": "x"}}}'
        },
        400,
        "state holds an unpaired UTF-16 surrogate",
    ),
    (
        "surrogate in question",
        {
            "content": b'{"state": "a", "questions": {"q": {"type": "noul", "instructions": "\\udfff"}}}'
        },
        400,
        "questions.q.instructions holds an unpaired",
    ),
    *[
        (
            f"surrogate after a {kind}",
            {
                "content": b'{"state": %s, "max_len": 64, "questions": {"q": {"type": "noul", '
                b'"instructions": "\\ud800"}}}' % value
            },
            400,
            "questions.q.instructions holds an unpaired",
        )
        for kind, value in [("number", b"5"), ("null", b"null"), ("boolean", b"true")]
    ],
    ("unknown path model", {"json": body(model="./models/nope")}, 422, "omit model"),
    ("unknown repo model", {"json": body(model="acme/laya-xl")}, 422, "omit model"),
    ("unknown task", {"json": body(task="astrology")}, 422, "unknown task 'astrology'"),
    *[
        (f"hook field {k}", {"json": body(**{k: value})}, 422, f"{k}: hooks run in the server")
        for k, value in [
            ("hooks", ["audit"]),
            ("on_predict_start", "print"),
            ("on_predict_end", "x"),
            ("hooks_raise", False),
            ("hooks_timeout", 5),
        ]
    ],
]
BAD_BATCHES = [
    ("missing states", {"questions": SMALL}, 400, "field(s): states"),
    ("states empty", {"states": [], "questions": SMALL}, 400, "non-empty array"),
    ("states object", {"states": {"a": 1}, "questions": SMALL}, 400, "non-empty array"),
    ("65 states", {"states": ["a"] * 65, "questions": SMALL}, 413, "65 states; at most 64"),
    ("null state", {"states": ["a", None], "questions": SMALL}, 400, "states[1] must not be null"),
    ("empty state", {"states": ["a", " "], "questions": SMALL}, 422, "states[1] is empty"),
    ("batch_size 0", {"states": ["a"], "questions": SMALL, "batch_size": 0}, 422, "batch_size"),
    ("sort string", {"states": ["a"], "questions": SMALL, "sort_by_length": "y"}, 422, "sort_by"),
    ("diagnostics", {"states": ["a"], "questions": SMALL, "diagnostics": {}}, 422, "diagnostics"),
    ("hooks", {"states": ["a"], "questions": SMALL, "hooks": []}, 422, "hooks run in the server"),
]


@pytest.mark.parametrize(
    ("request_kwargs", "status", "detail"),
    [case[1:] for case in BAD_REQUESTS],
    ids=[case[0] for case in BAD_REQUESTS],
)
def test_bad_single_request(
    open_server: httpx.Client, request_kwargs: dict, status: int, detail: str
) -> None:
    response = open_server.post("/v1/systemone", headers=JSON, **request_kwargs)
    assert response.status_code == status, response.text
    assert detail in response.json()["detail"]
    assert set(response.json()) == {"detail"}
    alive(open_server)


@pytest.mark.parametrize(
    ("payload", "status", "detail"),
    [case[1:] for case in BAD_BATCHES],
    ids=[case[0] for case in BAD_BATCHES],
)
def test_bad_batch_request(
    open_server: httpx.Client, payload: dict, status: int, detail: str
) -> None:
    response = open_server.post(BATCH, json=payload)
    assert response.status_code == status, response.text
    assert detail in response.json()["detail"]
    alive(open_server)


@pytest.mark.parametrize("model", ["./x", "foo/bar", str(MODERNBERT)])
def test_unknown_model_detail_offers_only_what_the_server_takes(
    open_server: httpx.Client, model: str
) -> None:
    response = open_server.post("/v1/systemone", json=body(model=model))
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert detail.startswith(f"unknown model {model!r}; this server answers only with")
    assert "english, mini, multilingual, typed-decisions (aliases: " in detail
    assert detail.endswith("send one of those names, or omit model to let the router choose")
    assert "directory" not in detail and "owner/name" not in detail


@pytest.mark.parametrize("value", [2, "high", {}, {"x": 0.5}, {"default": 2}])
@pytest.mark.parametrize("route", ["/v1/systemone", BATCH])
def test_min_confidence_detail_names_the_field_once(
    open_server: httpx.Client, route: str, value: Any
) -> None:
    payload = body(min_confidence=value)
    if route == BATCH:
        payload["states"] = [payload.pop("state")]
    response = open_server.post(route, json=payload)
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert detail.count("min_confidence") == 1, detail


def fifty_megabytes() -> Iterator[bytes]:
    chunk = b"x" * (1 << 20)
    for _ in range(50):
        yield chunk


def read_until_closed(sock: socket.socket) -> str:
    """Everything the server sends before it closes the connection."""
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks).decode()


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
def test_50_mb_body_refused_while_streaming(open_server: httpx.Client, declared: bool) -> None:
    headers = {**JSON, "Content-Length": str(50 << 20)} if declared else JSON
    started = time.perf_counter()
    response = open_server.post("/v1/systemone", content=fifty_megabytes(), headers=headers)
    assert response.status_code == 413
    assert "request body too large" in response.json()["detail"]
    assert str(MAX_BODY_BYTES) in response.json()["detail"]
    assert time.perf_counter() - started < 10
    alive(open_server)


def test_stalled_body_times_out(open_server: httpx.Client) -> None:
    port = httpx.URL(str(open_server.base_url)).port
    payload = json.dumps(body()).encode()
    head = (
        f"POST /v1/systemone HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head + payload[: len(payload) // 2])
        started = time.perf_counter()
        reply = read_until_closed(sock)
    assert reply.startswith("HTTP/1.1 408")
    assert "request body not received within 1 s" in reply
    assert 0.8 < time.perf_counter() - started < 5
    alive(open_server)


# Score probabilities and Jev's confidence for them, worked by hand: 1 - Σ pᵢ·|i - mode| / D,
# D the spread of a uniform answer around the scale's centre (never below 0). The first case is
# the issue's: 0.0 on the published server, 0.1857 when D was taken around the mode.
SCORE_CONFIDENCE = [
    ([0.3261, 0.1621, 0.5118], 0.0),  # spread 0.8143 over D = 2/3
    ([0.1, 0.8, 0.1], 0.7),  # 0.2 over 2/3
    ([0.7, 0.2, 0.1], 0.4),  # 0.4 over 2/3 (0.6 around the mode)
    ([0.2, 0.8], 0.6),  # two levels: the choice formula's value
    ([0.05, 0.05, 0.1, 0.2, 0.6], 0.375),  # 0.75 over D = 6/5
    ([0.25, 0.25, 0.25, 0.25], 0.0),  # uniform: 1.5 over D = 1
    ([0.0] * 9 + [1.0], 1.0),
    ([1.0], 1.0),
]


@pytest.mark.numbers
@pytest.mark.parametrize(("levels", "expected"), SCORE_CONFIDENCE)
def test_score_jev_confidence_is_taken_around_the_scales_centre(
    levels: list[float], expected: float
) -> None:
    from laya import jev_confidence

    probabilities = {str(i): p for i, p in enumerate(levels)}
    answer = {"type": "score", "score": 0.0, "probabilities": probabilities}
    assert jev_confidence(answer) == pytest.approx(expected, abs=2e-4)
    rendered = render_result({"model": "m", "answers": {"s": answer}, "usage": {}})
    assert rendered["answers"]["s"]["x_jev_confidence"] == pytest.approx(expected, abs=2e-4)
    strict = render_result({"model": "m", "answers": {"s": answer}, "usage": {}}, strict=True)
    assert strict["answers"]["s"]["confidence"] == pytest.approx(expected, abs=2e-4)
    try:  # the spec's own reference implementation, where it is installed (tests/test_jevcompat.py)
        from jevcompat.validate import score_confidence
    except ImportError:
        return
    assert jev_confidence(answer) == pytest.approx(score_confidence(levels), abs=2e-4)


def test_ray_style_reuse_of_render_functions(router: Router) -> None:
    """render_result / render_batch: Jev confidence formulas, and the strict projection whose
    ``confidence`` is Jev's formula."""
    result = {
        "model": "laya-rl-agent",
        "answers": {
            "c": {
                "type": "choice",
                "choice": "a",
                "probabilities": {"a": 0.5, "b": 0.25, "c": 0.25},
            },
            "one": {"type": "choice", "choice": "a", "probabilities": {"a": 1.0}},
            "s": {"type": "score", "score": 1.0, "probabilities": {"2": 0.2, "0": 0.2, "1": 0.6}},
            "n": {"type": "noul", "noul": 0.9, "confidence": 0.9, "action": {}},
            "broken": {"type": "choice", "probabilities": None},
        },
        "usage": {"input_tokens": 7, "output_tokens": 0, "state_tokens": 3},
        "routing": {"model": "english"},
    }
    rendered = render_result(result)
    assert rendered["answers"]["c"]["x_jev_confidence"] == 0.25
    assert rendered["answers"]["one"]["x_jev_confidence"] == 1.0
    assert rendered["answers"]["s"]["x_jev_confidence"] == 0.4
    assert "x_jev_confidence" not in rendered["answers"]["n"]
    assert "x_jev_confidence" not in rendered["answers"]["broken"]
    assert "x_jev_confidence" not in result["answers"]["c"]
    strict = render_result(result, strict=True)
    assert strict == {
        "model": "laya-rl-agent",
        "answers": {
            "c": {
                "type": "choice",
                "choice": "a",
                "confidence": 0.25,
                "probabilities": result["answers"]["c"]["probabilities"],
            },
            "one": {
                "type": "choice",
                "choice": "a",
                "confidence": 1.0,
                "probabilities": {"a": 1.0},
            },
            "s": {
                "type": "score",
                "score": 1.0,
                "confidence": 0.4,
                "probabilities": result["answers"]["s"]["probabilities"],
            },
            "n": {"type": "noul", "noul": 0.9},
            "broken": {"type": "choice", "probabilities": None},
        },
        "usage": {"input_tokens": 7, "output_tokens": 0},
    }
    assert render_batch([result, result], strict=True)["total_usage"] == {
        "input_tokens": 14,
        "output_tokens": 0,
    }


def test_fields_laya_adds_go_out_prefixed_and_published_ones_keep_their_names() -> None:
    """Jev's spec asks extensions to carry ``x_``; the published runtime's own fields (routing,
    action, answer_confidence, the gate's, usage's) keep their names; a hook's field passes."""
    tournament = {"finalists": ["a", "b"], "rounds": 2}
    result = {
        "model": "laya-rl-agent",
        "answers": {
            "c": {
                "type": "choice",
                "choice": "a",
                "probabilities": {"a": 0.6, "b": 0.4, "c": 0.0},
                "confidence": 0.97,
                "answer_confidence": 0.6,
                "action": {"act_probability": 0.9},
                "low_confidence": True,
                "abstention": "abstained",
                "abstention_threshold": 0.7,
                "unsure": True,
                "abstain": 0.1,
                "tournament": tournament,
                "shortlist": {"candidates": ["a", "b", "c"]},
                "explanation": "a hook's own field",
            },
            "n": {"type": "noul", "noul": 0.2, "confidence": 0.8, "unsure": True},
        },
        "usage": {"input_tokens": 7, "output_tokens": 0, "truncated": False},
        "routing": {"model": "english", "reason": "pinned"},
        "calibration": {"file": "calib.json", "sha256": "0" * 64, "version": 2},
        "warnings": [{"type": "language", "language": "es", "message": "..."}],
    }
    wire = render_result(result)
    assert list(wire) == ["model", "answers", "usage", "routing", "x_calibration", "x_warnings"]
    assert wire["usage"] == result["usage"] and wire["routing"] == result["routing"]
    choice = wire["answers"]["c"]
    assert set(choice) == {
        *("type", "choice", "probabilities", "confidence", "answer_confidence", "action"),
        *("low_confidence", "abstention", "abstention_threshold", "explanation"),
        *("x_unsure", "x_abstain", "x_tournament", "x_shortlist", "x_strategy"),
        "x_jev_confidence",
    }
    assert choice["x_tournament"] == tournament and choice["x_strategy"] == "shortlist+tournament"
    assert wire["answers"]["n"] == {
        "type": "noul",
        "noul": 0.2,
        "confidence": 0.8,
        "x_unsure": True,
    }
    assert "unsure" in result["answers"]["n"]  # the Router's result is left as it was
    assert without_jev(wire) == result
    strict = render_result(result, strict=True)["answers"]["c"]
    assert set(strict) == {"type", "choice", "confidence", "probabilities"} | {
        "x_tournament",
        "x_strategy",
    }


def test_the_reply_document_names_every_field_laya_adds() -> None:
    """Each field laya's result types add beyond the published shapes is in the OpenAPI reply
    types under its ``x_`` name (a new engine field cannot reach the wire undocumented)."""
    from laya.server import schema

    result_fields, answer_fields = laya_fields()
    assert {"warnings", "calibration"} <= result_fields
    assert {"unsure", "abstain", "tournament", "shortlist"} <= answer_fields
    documented = set(schema.SystemOneReply.__annotations__)
    assert {f"x_{name}" for name in result_fields} <= documented
    replies = (schema.ChoiceReply, schema.ScoreReply, schema.NoulReply)
    documented = set().union(*(t.__annotations__ for t in replies))
    assert {f"x_{name}" for name in answer_fields} <= documented


# --------------------------------------------------------------------------- auth, admission, failures


def test_bearer_auth(guarded: httpx.Client) -> None:
    base = str(guarded.base_url)
    payload = {"state": ENGLISH, "questions": SMALL}
    for scheme in ("bearer", "BEARER", "Bearer"):
        headers = {"Authorization": f"{scheme} {KEY}"}
        assert httpx.post(base + "/v1/systemone", json=payload, headers=headers).status_code == 200
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {KEY}"}):
        refused = httpx.post(base + "/v1/systemone", json=payload, headers=headers)
        assert refused.status_code == 401
        assert refused.json() == {"detail": "invalid or missing bearer token"}
    non_ascii = httpx.post(
        base + "/v1/systemone", json=payload, headers={"Authorization": "Bearer clé".encode()}
    )
    assert non_ascii.status_code == 401
    assert httpx.post(base + BATCH, json={"states": ["a"], "questions": SMALL}).status_code == 401
    assert httpx.get(base + "/models").status_code == 401
    assert httpx.get(base + "/health").json() == {"status": "ok"}
    assert "loaded" in guarded.get("/health").json()
    for path in ("/docs", "/redoc", "/openapi.json"):
        assert httpx.get(base + path).status_code == 404
    assert guarded.post("/v1/systemone", json=payload).status_code == 200


def test_admission_limit_and_health_during_inference(guarded: httpx.Client, marked: Marked) -> None:
    slow = {"states": [ENGLISH, "SLOW " + ENGLISH], "questions": SMALL}
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(guarded.post, BATCH, json=slow)
        assert marked.entered.wait(60)  # the slow request holds the one slot, inside inference
        try:
            health = guarded.get("/health", timeout=30)  # answered while inference is held
            assert health.status_code == 200 and health.json()["in_flight"] == 1
            busy = guarded.post("/v1/systemone", json={"state": ENGLISH, "questions": SMALL})
            assert busy.status_code == 503
            assert busy.headers["retry-after"] == "1"
            assert "busy" in busy.json()["detail"]
        finally:
            marked.release.set()
        assert pending.result().status_code == 200
    assert guarded.post("/v1/systemone", json={"state": ENGLISH, "questions": SMALL}).is_success


@pytest.mark.parametrize(
    ("marker", "status", "detail"),
    [
        ("BOOM", 500, "inference failed"),
        ("BADVALUE", 500, "inference failed"),  # a bare ValueError is a bug, not the client's fault
        ("REFUSE", 422, "the hook refused this state"),
    ],
)
def test_inference_failures(guarded: httpx.Client, marker: str, status: int, detail: str) -> None:
    response = guarded.post("/v1/systemone", json={"state": f"{marker} x", "questions": SMALL})
    assert response.status_code == status
    assert response.json() == {"detail": detail}
    batch = guarded.post(BATCH, json={"states": ["fine", f"{marker} y"], "questions": SMALL})
    assert batch.json() == {"detail": detail}
    alive(guarded)


# --------------------------------------------------------------------------- command and import


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (["--port", "http"], {}, "--port='http': must be a port number in 1-65535"),
        ([], {"LAYA_PORT": "70000"}, "LAYA_PORT='70000': must be a port number"),
        ([], {"LAYA_MAX_CONCURRENT": "0"}, "LAYA_MAX_CONCURRENT='0': must be a positive integer"),
        ([], {"LAYA_BODY_READ_TIMEOUT": "inf"}, "must be a positive number of seconds"),
        ([], {"LAYA_JEV_STRICT": "maybe"}, "LAYA_JEV_STRICT='maybe'"),
        (["--route", "random"], {}, "--route='random': must be one of auto, default"),
        (["--device", "gpu9"], {"LAYA_PRELOAD": "0"}, "device: 'gpu9' is not a torch device"),
        (["--models", "noequals"], {}, "--models noequals: unknown model"),
        (["--models", "=x"], {}, "expects NAME=PATH entries"),
        (
            ["--models", "x=/no/such/dir", "--default-model", "x", "--no-preload"],
            {},
            "laya serve: error: --models x: no checkpoint directory at '/no/such/dir'",
        ),
        (["--default-model", "nosuch"], {}, "unknown model 'nosuch'"),
        (["--default-model", "./nowhere"], {}, "--default-model: no checkpoint directory at"),
        (
            ["--default-model", str(BERT)],
            {},
            "--default-model takes a checkpoint name, got the directory",
        ),
        (
            ["--frob"],
            {},
            "laya serve: error: unrecognized arguments: --frob (see laya serve --help)",
        ),
        (["--port"], {}, "laya serve: error: argument --port: expected one argument (see"),
    ],
)
def test_serve_main_bad_settings(argv: list, env: dict, message: str, monkeypatch, capsys) -> None:
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    assert serve_main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    ("models", "message"),
    [
        ("x=someone/not-cached", "checkpoint 'x' (someone/not-cached) is not available"),
        ("x={empty}", "does not contain 'rl_agent_config.json'"),
    ],
)
def test_serve_main_checkpoint_that_cannot_load_exits_1(models, message, tmp_path, capsys) -> None:
    argv = ["--models", models.format(empty=tmp_path), "--model", "x", "--preload"]
    assert serve_main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("laya serve: error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_missing_mini_is_a_start_error(capsys, monkeypatch, tmp_path) -> None:
    from laya.server import inference

    monkeypatch.setattr(inference, "MINI_DIR", tmp_path / "not-installed")  # a slimmed install
    assert serve_main(["--no-preload", "--model", "mini"]) == 2
    assert "the bundled model 'mini' is not installed" in capsys.readouterr().err
    assert serve_main(["--no-preload", "--port", "http"]) == 2  # mini is not needed otherwise
    assert "mini" not in capsys.readouterr().err


def test_flags_win_over_environment(monkeypatch) -> None:
    from laya.server import settings_from

    env = {"LAYA_PORT": "9001", "LAYA_MODELS": "a=/x, b=/y", "LAYA_PRELOAD": "off"}
    settings = settings_from(["--port", "9002", "--preload"], env)
    assert (settings.port, settings.preload) == (9002, True)
    assert settings.models == {"a": "/x", "b": "/y"}
    assert settings_from([], {"LAYA_PORT": " "}).port == 8000


def test_import_is_light() -> None:
    code = (
        "import sys, laya.server; "
        "print(sorted(m for m in ('torch', 'fastapi', 'uvicorn') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_a_server_with_no_settings_routes_as_published() -> None:
    """No flags: requests naming no model are routed by language (English text to english, the
    undecided to the default, multilingual), what answers them preloaded, and /models says so."""
    settings = Settings()
    assert (settings.route, settings.default_model) == ("auto", "multilingual")
    with (
        served(create_app(settings=settings)) as base,
        httpx.Client(base_url=base, timeout=60) as c,
    ):
        assert set(c.get("/health").json()["loaded"]) == {"english", "multilingual"}
        models = c.get("/models").json()
        assert (models["default"], models["route"]) == ("multilingual", "auto")
        english = c.post("/v1/systemone", json={"state": ENGLISH, "questions": QUESTIONS}).json()
        digits = c.post("/v1/systemone", json={"state": "12345 678", "questions": QUESTIONS})
        jev = {m["name"]: m["description"] for m in c.get("/v1/models").json()["models"]}
    assert english["routing"]["model"] == "english"
    assert english["routing"]["reason"] == "English Latin text"
    assert digits.json()["routing"]["model"] == "multilingual"
    assert "language cannot be told" in jev["multilingual"] and "by language" in jev["english"]
    direct = Router(models=FIXTURE_MODELS).predict(ENGLISH, QUESTIONS)
    assert_close(direct["answers"], without_jev(english)["answers"])


@pytest.mark.skipif(not MINI_DIR.is_dir(), reason="the bundled mini model is not installed yet")
def test_model_mini_serves_mini_where_it_is_named() -> None:
    settings = settings_from(["--model", "mini"], {})
    assert (settings.route, settings.default_model) == ("default", "mini")
    with (
        served(create_app(settings=settings)) as base,
        httpx.Client(base_url=base, timeout=30) as c,
    ):
        assert c.get("/health").json()["loaded"] == ["mini"]
        response = c.post("/v1/systemone", json={"state": ENGLISH, "questions": QUESTIONS})
        described = {m["name"]: m["description"] for m in c.get("/v1/models").json()["models"]}
    assert response.status_code == 200, response.text
    assert "answers requests that name no model" in described["mini"]
    direct = Router(models={"mini": str(MINI_DIR)}, default="mini")
    expected = direct.predict(ENGLISH, QUESTIONS, model="mini")
    reply = without_jev(response.json())
    assert reply["routing"].pop("reason").startswith("server default model 'mini'")
    expected["routing"].pop("reason")
    assert reply == expected


def test_an_uncached_routed_checkpoint_stops_start_up_naming_mini(tmp_path, capsys) -> None:
    """Offline with an empty cache, the checkpoints routing needs cannot be had: one line that
    names --model mini, never a quiet switch to another checkpoint."""
    with socket.socket() as probe:  # a port that was free a moment ago
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = (
        "import sys; from laya.server.serve import serve_main; "
        f"sys.exit(serve_main(['--port', '{port}']))"
    )
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "empty"), "HF_HUB_OFFLINE": "1"}
    env.pop("LAYA_DEFAULT_MODEL", None)
    ran = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert ran.returncode == 1
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("laya serve: error: "), ran.stderr
    assert "'english'" in lines[0] and "--model mini" in lines[0]


def test_docs_settings_table_is_the_settings_table() -> None:
    """docs/server.md lists every setting, with the variable, flag and default the code has."""
    from pathlib import Path

    from laya.server.settings import OPTIONS, Settings

    page = (Path(__file__).resolve().parents[1] / "docs" / "server.md").read_text()
    rows = {
        line.split("|")[2].strip(" `"): line for line in page.splitlines() if "| `LAYA_" in line
    }
    defaults = Settings()
    for option in OPTIONS:
        assert option.env in rows, option.env
        row = rows[option.env]
        assert (f"`{option.option}" in row) == option.flag, row
        default = getattr(defaults, option.name)
        if isinstance(default, (int, float)) and not isinstance(default, bool):
            assert f"| {default} |" in row, row


def test_fast_serves_the_precision_this_machine_runs_and_health_names_it() -> None:
    from laya.engine.precision import choose_precision
    from laya.server import settings_from

    assert settings_from([], {"LAYA_FAST": "1"}).fast and not settings_from([], {}).fast
    argv = ["--fast", "--models", f"bench={MODERNBERT}", "--model", "bench"]
    settings = settings_from([*argv, "--device", "cpu"], {})
    assert settings.fast
    with served(create_app(settings=settings)) as base:
        health = httpx.get(base + "/health").json()
        answer = httpx.post(base + "/v1/systemone", json={"state": ENGLISH, "questions": QUESTIONS})
    assert health["precision"] == {"bench": choose_precision("cpu", fast=True)}
    assert answer.status_code == 200, answer.text
