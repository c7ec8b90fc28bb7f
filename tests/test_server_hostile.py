"""laya serve under hostile mixes of traffic, and what it shows an operator (issue 53).

Each test runs a real uvicorn on 127.0.0.1 with ``laya serve``'s own configuration
(``laya.server.uvicorn_config``) and talks to it over real sockets; the commands' own checks run
``laya serve`` and ``laya mcp`` as processes. The three timing tests synchronise on what the
server says (its metrics, its hooks, its connections), never on sleeps, and compare medians
taken in the same run, so a busy machine slows both sides alike.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
import uvicorn
from conftest import QUESTIONS
from test_server import ENGLISH, FIXTURE_MODELS, served
from test_server_limits import receive_all

from laya.hooks import BaseHook
from laya.router import Router
from laya.server import (
    MAX_INSTRUCTION_CHARS,
    MAX_OPTION_CHARS,
    MINI_DIR,
    Settings,
    create_app,
)

SINGLE, BATCH = "/v1/systemone", "/v1/systemone/batch"
WAIT_S = 120
NOUL = {"q": {"type": "noul", "instructions": "Is it a refund request?"}}


@pytest.fixture(scope="module")
def router() -> Router:
    return Router(models=FIXTURE_MODELS, default="english").preload(["english"])


@pytest.fixture(scope="module")
def server(router: Router) -> Iterator[httpx.Client]:
    with (
        served(create_app(router, Settings(default_model="english"))) as base,
        httpx.Client(base_url=base, timeout=WAIT_S) as client,
    ):
        yield client


def port_of(base: str) -> int:
    return httpx.URL(base).port or 80


def post_raw(port: int, body: dict[str, Any], path: str = SINGLE, **options: Any) -> socket.socket:
    """A connection that has sent one whole POST of ``body`` (and has not read the reply)."""
    data = json.dumps(body).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n\r\n"
    ).encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S, **options)
    sock.sendall(head + data)
    return sock


def metric(text: str, name: str) -> float:
    """One sample's value from a Prometheus text exposition (0 when absent)."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return 0.0


def wait_until(check: Any, within: float = WAIT_S) -> Any:
    """Ask ``check()`` again until it returns something true (each answer is an event the
    server reports); the last guard, ``within``, only stops a broken server hanging the run."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if result := check():
            return result
    raise AssertionError(f"not seen within {within} s")


# --------------------------------------------------------------------------- bounded texts


def test_every_text_of_a_question_is_bounded_before_tokenizing(server: httpx.Client) -> None:
    long = "x" * (MAX_INSTRUCTION_CHARS + 1)
    refused = server.post(
        SINGLE, json={"state": ENGLISH, "questions": {"q": {"type": "noul", "instructions": long}}}
    )
    assert refused.status_code == 413
    assert "question 'q': instructions" in refused.json()["detail"]
    criteria = {"a": "y" * MAX_OPTION_CHARS, "b": "fine"}
    choice = {"q": {"type": "choice", "instructions": "Which?", "criteria": criteria}}
    refused = server.post(SINGLE, json={"state": ENGLISH, "questions": choice})
    assert refused.status_code == 413 and "option 0 ('a')" in refused.json()["detail"]
    noul = {
        "q": {
            "type": "noul",
            "instructions": "Is it?",
            "labels": {"true": "z" * 5000, "false": "n"},
        }
    }
    refused = server.post(SINGLE, json={"state": ENGLISH, "questions": noul})
    assert refused.status_code == 413 and "question 'q': option" in refused.json()["detail"]
    unnamed = {"w" * (MAX_INSTRUCTION_CHARS + 1): {"type": "noul"}}  # its id is its instructions
    assert server.post(SINGLE, json={"state": ENGLISH, "questions": unnamed}).status_code == 413
    at_cap = {"q": {"type": "noul", "instructions": "Is it a refund? " * 2000}}
    assert server.post(SINGLE, json={"state": ENGLISH, "questions": at_cap}).status_code == 200


class Entered(BaseHook):
    """Sets ``entered`` when a call whose state starts with ``marker`` starts."""

    def __init__(self, marker: str) -> None:
        self.marker, self.entered = marker, threading.Event()

    def on_predict_start(self, ctx: Any) -> None:
        if any(isinstance(s, str) and s.startswith(self.marker) for s in ctx.states):
            self.entered.set()


def test_health_answers_within_a_second_beside_1_9_mb_of_question_text(router: Router) -> None:
    """A 1.9 MB instructions is refused at once (413); 64 questions of 30,000 characters each
    (1.9 MB in all, under every cap) are tokenized while /health is asked, and each answer comes
    within a second: the tokenizer runs off the event loop without the GIL."""
    hook = Entered("BIG")
    text = "Does the customer ask for a refund of the duplicate charge on the invoice? " * 400
    questions = {f"q{i}": {"type": "noul", "instructions": text[:30_000]} for i in range(64)}
    whole = {"q": {"type": "noul", "instructions": "Is it a refund? " * 120_000}}  # 1.9 MB
    with (
        router.hooks_installed(hook),
        served(create_app(router, Settings(default_model="english"))) as base,
        ThreadPoolExecutor(2) as pool,
    ):
        refused = pool.submit(
            httpx.post,
            base + SINGLE,
            json={"state": ENGLISH, "questions": whole},
            timeout=WAIT_S,
        )
        big = pool.submit(
            httpx.post,
            base + SINGLE,
            json={"state": "BIG " + ENGLISH, "questions": questions},
            timeout=WAIT_S,
        )
        assert hook.entered.wait(WAIT_S)
        slowest, asked = 0.0, 0
        while not big.done() or asked < 3:
            started = time.perf_counter()
            assert httpx.get(base + "/health", timeout=WAIT_S).status_code == 200
            slowest, asked = max(slowest, time.perf_counter() - started), asked + 1
        assert refused.result().status_code == 413
        reply = big.result()
    assert reply.status_code == 200, reply.text
    print(f"slowest /health of {asked} beside 1.9 MB of questions: {slowest:.3f} s")
    assert slowest < 1.0


# --------------------------------------------------------------------------- fair turns


SMALL = {"state": ENGLISH, "questions": QUESTIONS}


def thousand_options(state: str) -> dict[str, Any]:
    """A tournament over two choices of 1,000 options each (the most a request may hold)."""
    criteria = {f"class_{i}": f"error family {i} of the billing system" for i in range(1000)}
    choice = {"type": "choice", "instructions": "Which error class is this?", "criteria": criteria}
    return {"state": state, "questions": {"a": choice, "b": choice}, "tournament": True}


@pytest.mark.skipif(not MINI_DIR.is_dir(), reason="needs the bundled mini")
def test_small_requests_beside_a_1000_option_tournament_answer_within_3x_their_lone_p50() -> None:
    """The tournament's passes take turns with the small requests: each waits for one slice at
    most, never for the tournament. Lone figures before and after it, beside figures while its
    passes run (the server's own pass counter says so), medians compared."""
    router = Router(default="mini").preload(["mini"])
    with (
        served(create_app(router, Settings(threads=1))) as base,
        httpx.Client(base_url=base, timeout=WAIT_S) as client,
    ):

        def small() -> float:
            started = time.perf_counter()
            assert client.post(SINGLE, json=SMALL).status_code == 200
            return time.perf_counter() - started

        for _ in range(3):
            small()
        lone = [small() for _ in range(7)]
        tournament = post_raw(port_of(base), thousand_options(ENGLISH))
        wait_until(lambda: metric(client.get("/metrics").text, "laya_long_passes_total") >= 1)
        beside = [small() for _ in range(12)]
        passes = metric(client.get("/metrics").text, "laya_long_passes_total")
        tournament.setblocking(False)
        with pytest.raises(BlockingIOError):
            tournament.recv(1)  # no answer yet: it ran all along
        tournament.close()  # and it is dropped (another test's business)
        lone += [small() for _ in range(7)]
    ratio = statistics.median(beside) / statistics.median(lone)
    print(
        f"lone p50 {statistics.median(lone):.3f} s, beside p50 {statistics.median(beside):.3f} s"
        f" (p99 {max(beside):.3f} s), ratio {ratio:.2f}; {passes:.0f} tournament passes"
    )
    assert passes >= len(beside)  # the tournament advanced between the small requests
    assert ratio <= 3.0


def test_a_choice_only_rounds_answer_takes_turns_as_a_tournament_does(server: httpx.Client) -> None:
    """A choice over 100 options without ``tournament`` is answered by rounds (Jev's 255): its
    passes take turns with the small requests instead of running inside one of their groups."""
    passes = metric(server.get("/metrics").text, "laya_long_passes_total")
    criteria = {f"class_{i}": f"error family {i}" for i in range(101)}
    body = {"state": ENGLISH, "questions": {"c": {"type": "choice", "criteria": criteria}}}
    assert server.post(SINGLE, json=body).status_code == 200
    assert metric(server.get("/metrics").text, "laya_long_passes_total") > passes


# --------------------------------------------------------------------------- gone clients


class Held(BaseHook):
    """Holds a call whose state starts with HOLD until ``release``; counts the calls that end."""

    def __init__(self) -> None:
        self.entered, self.release = threading.Event(), threading.Event()
        self.ended: list[Any] = []

    def on_predict_start(self, ctx: Any) -> None:
        if any(isinstance(s, str) and s.startswith("HOLD") for s in ctx.states):
            self.entered.set()
            assert self.release.wait(WAIT_S)

    def on_predict_end(self, ctx: Any) -> None:
        self.ended.append(ctx.error)


def test_32_clients_that_hang_up_give_their_slots_back_within_2_s(router: Router) -> None:
    """32 tournaments hold the 32 admission slots (a hook keeps them busy); their clients hang
    up; within 2 s the server holds none of them and 32 new requests are all answered; the 32,
    let go, stop before their first pass."""
    hook = Held()
    app = create_app(router, Settings(default_model="english", max_concurrent=32))
    with (
        router.hooks_installed(hook),
        served(app) as base,
        httpx.Client(base_url=base, timeout=WAIT_S) as client,
    ):
        port = port_of(base)
        states = [f"{ENGLISH} Ticket {i}." for i in range(32)]
        held = [{"state": "HOLD " + s, "questions": QUESTIONS, "tournament": True} for s in states]
        hung = [post_raw(port, body) for body in held]  # tournaments: long requests
        wait_until(lambda: client.get("/health").json()["in_flight"] == 32)
        assert client.post(SINGLE, json=SMALL).status_code == 503  # every slot is taken
        for sock in hung:
            sock.close()
        gone = time.monotonic()
        wait_until(lambda: client.get("/health").json()["in_flight"] == 0, within=2.0)
        freed = time.monotonic() - gone
        with ThreadPoolExecutor(32) as pool:
            posts = [
                pool.submit(client.post, SINGLE, json={"state": s, "questions": NOUL})
                for s in states
            ]
            statuses = [reply.result().status_code for reply in posts]
        hook.release.set()
        wait_until(lambda: len(hook.ended) == 64)
        text = client.get("/metrics").text
    print(f"32 hung-up slots freed {freed:.3f} s after the clients left")
    assert statuses == [200] * 32
    assert metric(text, 'laya_refusals_total{reason="client_gone"}') == 32
    assert sum(type(error).__name__ == "ClientGone" for error in hook.ended) == 32
    assert metric(text, "laya_long_passes_total") == 0  # not one pass for a gone client


def test_a_queued_request_whose_client_left_is_never_answered(router: Router) -> None:
    """A request queued behind a held one, whose client hangs up, is dropped before its pass:
    its hooks never run, and the group it would have joined answers without it."""
    hook = Held()
    app = create_app(router, Settings(default_model="english"))
    batcher = app.state.service.batcher
    with (
        router.hooks_installed(hook),
        served(app) as base,
        httpx.Client(base_url=base, timeout=WAIT_S) as client,
    ):
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(
                client.post, SINGLE, json={"state": "HOLD " + ENGLISH, "questions": NOUL}
            )
            assert hook.entered.wait(WAIT_S)
            leaving = post_raw(port_of(base), {"state": "LEAVING " + ENGLISH, "questions": NOUL})
            assert batcher.wait_queued(1, WAIT_S)
            leaving.close()
            wait_until(lambda: client.get("/health").json()["in_flight"] == 1)
            hook.release.set()
            assert first.result().status_code == 200
        wait_until(lambda: batcher.queued == 0)
        text = client.get("/metrics").text
    assert len(hook.ended) == 1  # the held request only: the other never started
    assert metric(text, 'laya_refusals_total{reason="client_gone"}') == 1


# --------------------------------------------------------------------------- question text cut


def test_question_text_cut_by_head_max_len_is_reported(server: httpx.Client) -> None:
    long = "Does the customer, in any words at all and in any part of the message, ask " * 6
    questions = {"cut": {"type": "noul", "instructions": long}, "whole": NOUL["q"]}
    body = {"state": ENGLISH, "questions": questions, "head_max_len": 48}
    usage = server.post(SINGLE, json=body).json()["usage"]
    dropped = usage["x_question_tokens_dropped"]
    assert list(dropped) == ["cut"] and dropped["cut"] > 40
    assert usage["truncated"] is False  # the published field: the state was not cut
    assert "x_question_tokens_dropped" not in server.post(SINGLE, json=SMALL).json()["usage"]
    batch = server.post(
        BATCH, json={"states": [ENGLISH], "questions": questions, "head_max_len": 48}
    )
    assert batch.json()["results"][0]["usage"]["x_question_tokens_dropped"] == dropped


def test_the_strict_jev_shape_has_no_room_for_it(router: Router) -> None:
    long = "Does the customer, in any words at all and in any part of the message, ask " * 6
    body = {"state": ENGLISH, "questions": {"cut": {"type": "noul", "instructions": long}}}
    strict = create_app(router, Settings(default_model="english", jev_strict=True))
    with served(strict) as base:
        usage = httpx.post(base + SINGLE, json={**body, "head_max_len": 48}, timeout=WAIT_S)
    assert set(usage.json()["usage"]) == {"input_tokens", "output_tokens"}


# --------------------------------------------------------------------------- host names


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        (
            {
                "Host": "evil.example",
                "Origin": "http://evil.example",
                "Sec-Fetch-Site": "same-origin",
            },
            403,
        ),
        ({"Host": "evil.example:8000"}, 403),
        ({"Host": "localhost"}, 200),
        ({"Host": "app.localhost:9"}, 200),
        ({"Host": "127.0.0.1:1"}, 200),
        ({"Host": "[::1]:8000"}, 200),
        ({"Host": "192.168.1.20"}, 200),  # an address: no page can rebind one
        ({"Host": "localhost", "Origin": "http://evil.example"}, 403),
    ],
)
def test_a_loopback_server_answers_only_its_own_names(
    server: httpx.Client, headers: dict[str, str], status: int
) -> None:
    """DNS rebinding: a page on evil.example whose name now points at 127.0.0.1 sends Host and
    Origin evil.example and Sec-Fetch-Site same-origin; a keyless server on loopback refuses it
    on every route."""
    for path in ("/health", "/models", "/metrics", "/"):
        assert server.get(path, headers=headers).status_code == status, path
    reply = server.post(SINGLE, json=SMALL, headers=headers)
    assert reply.status_code == status, reply.text
    if status == 403:
        assert "--allowed-hosts" in reply.json()["detail"]


def test_allowed_hosts_name_the_others(router: Router) -> None:
    listed = Settings(default_model="english", allowed_hosts=("api.example.com", ".corp.example"))
    anywhere = Settings(default_model="english", host="0.0.0.0")
    with served(create_app(router, listed)) as base:
        for host, status in (
            ("api.example.com", 200),
            ("a.corp.example", 200),
            ("corp.example", 200),
            ("evil.example", 403),
            ("localhost", 200),
        ):
            assert httpx.get(base + "/health", headers={"Host": host}).status_code == status, host
    with served(create_app(router, anywhere)) as base:
        assert httpx.get(base + "/health", headers={"Host": "evil.example"}).status_code == 200


def test_a_rebound_name_in_a_real_browser_gets_403(router: Router) -> None:
    """Chromium resolving evil.example to 127.0.0.1, as a rebinding DNS server makes it: the
    page and the API asked by that name are refused."""
    from test_playground import CHROMIUM, CHROMIUM_ARGS

    if not CHROMIUM.exists():
        pytest.skip("needs Debian's chromium at /usr/bin/chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    args = [*CHROMIUM_ARGS, "--host-resolver-rules=MAP evil.example 127.0.0.1"]
    with (
        served(create_app(router, Settings(default_model="english"))) as base,
        sync_api.sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=args)
        page = browser.new_page()
        port = port_of(base)
        statuses = [page.goto(f"http://evil.example:{port}{path}") for path in ("/", "/health")]
        script = """async (body) => {
            const r = await fetch("/v1/systemone", {method: "POST", body}); return r.status; }"""
        posted = page.evaluate(script, json.dumps(SMALL))  # from the page: its own origin
        local = page.goto(f"http://localhost:{port}/health")
        browser.close()
    assert [reply.status for reply in statuses if reply] == [403, 403]
    assert posted == 403 and local is not None and local.status == 200


# --------------------------------------------------------------------------- connections


def test_one_clients_idle_connections_cannot_lock_others_out(router: Router) -> None:
    """200 idle connections from 127.0.0.1: past its 128 the rest are refused at once (503,
    closed), and a client at another address is answered at once."""
    with served(create_app(router, Settings(default_model="english"))) as base:
        port = port_of(base)
        idle = [socket.create_connection(("127.0.0.1", port), timeout=WAIT_S) for _ in range(200)]
        try:
            refused = [receive_all(sock) for sock in idle[128:]]
            other = httpx.HTTPTransport(local_address="127.0.0.2")
            with httpx.Client(transport=other, timeout=WAIT_S) as client:
                reply = client.get(base + "/health")
        finally:
            for sock in idle:
                sock.close()
        metrics = httpx.get(base + "/metrics").text
    assert reply.status_code == 200
    assert all(r.startswith(b"HTTP/1.1 503 ") for r in refused)
    assert b"(--max-client-connections)" in refused[0] and b"retry-after: 1" in refused[0].lower()
    assert metric(metrics, 'laya_refusals_total{reason="client_connections"}') == 72


FRAMED_TWICE = (
    b"POST /v1/systemone HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
    b"Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
)


@pytest.mark.parametrize("http", ["laya", "h11", "httptools"])
def test_content_length_with_transfer_encoding_is_400_and_closed(router: Router, http: str) -> None:
    """On laya serve's own protocol, and on each uvicorn HTTP implementation the app can run on."""
    app = create_app(router, Settings(default_model="english"))
    context = served(app) if http == "laya" else PlainUvicorn(app, http)
    with (
        context as base,
        socket.create_connection(("127.0.0.1", port_of(base)), timeout=WAIT_S) as sock,
    ):
        sock.sendall(FRAMED_TWICE)
        reply = receive_all(sock)  # returns once the server closes the connection
    assert reply.startswith(b"HTTP/1.1 400 "), reply[:200]
    if http != "httptools":  # httptools refuses it itself, in plain text
        assert b"Transfer-Encoding together" in reply


class PlainUvicorn:
    """``app`` under uvicorn's own protocol ``http`` (not laya serve's), on 127.0.0.1."""

    def __init__(self, app: Any, http: str) -> None:
        self.app, self.http = app, http

    def __enter__(self) -> str:
        listening = socket.create_server(("127.0.0.1", 0))
        config = uvicorn.Config(self.app, http=self.http, log_level="warning")
        self.server, self.listening = uvicorn.Server(config), listening
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [listening]}, daemon=True
        )
        self.thread.start()
        base = f"http://127.0.0.1:{listening.getsockname()[1]}"
        httpx.get(base + "/health", timeout=WAIT_S)
        return base

    def __exit__(self, *_: Any) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.listening.close()


def test_expect_100_continue_with_an_oversized_body_is_413_at_once(server: httpx.Client) -> None:
    head = (
        f"POST {SINGLE} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"Content-Length: {3 * 1024 * 1024}\r\nExpect: 100-continue\r\n\r\n"
    ).encode()
    port = httpx.URL(str(server.base_url)).port
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT_S) as sock:
        sock.sendall(head)  # and never the body: a client waiting for 100 Continue
        reply = receive_all(sock)
    assert reply.startswith(b"HTTP/1.1 413 "), reply[:200]
    assert b"100 Continue" not in reply and b"connection: close" in reply.lower()


@pytest.mark.parametrize("key", [" s3cret", "s3cret\n", "   ", "s3\x01cret"])
def test_an_api_key_that_could_never_match_stops_start_up(key: str) -> None:
    env = {**os.environ, "LAYA_API_KEY": key}
    done = subprocess.run(
        [sys.executable, "-m", "laya", "serve", "--no-preload"],
        env=env, capture_output=True, text=True, timeout=WAIT_S,
    )  # fmt: skip
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("laya serve: error: LAYA_API_KEY: ")
    assert key.strip() not in lines[0] or not key.strip()  # the key itself is never printed


# --------------------------------------------------------------------------- model names


def test_an_unknown_model_name_is_422_naming_the_known_ones(server: httpx.Client) -> None:
    reply = server.post(SINGLE, json={**SMALL, "model": "englsh"})
    assert reply.status_code == 422
    detail = reply.json()["detail"]
    assert "unknown model 'englsh' (did you mean 'english'?)" in detail and "multilingual" in detail
    for jev in ("jev-latest", "jev-1.13.0", "laya-rl-agent"):  # what other clients send: routed
        assert server.post(SINGLE, json={**SMALL, "model": jev}).status_code == 200, jev


# --------------------------------------------------------------------------- observability


def test_metrics_show_latency_groups_queue_flight_models_and_refusals(server: httpx.Client) -> None:
    assert server.post(SINGLE, json=SMALL).status_code == 200
    assert (
        server.post(BATCH, json={"states": [ENGLISH, ENGLISH], "questions": NOUL}).status_code
        == 200
    )
    assert server.post(SINGLE, content=b"[1]").status_code == 400
    assert server.get("/health", headers={"Host": "evil.example"}).status_code == 403
    reply = server.get("/metrics")
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/plain")
    text = reply.text
    route = 'laya_request_duration_seconds_count{method="POST",route="/v1/systemone",status="200"}'
    assert metric(text, route) >= 1
    assert metric(text, "laya_batcher_group_requests_count") >= 1
    assert metric(text, 'laya_batch_states_bucket{le="2.0"}') >= 1
    assert metric(text, 'laya_model_requests_total{model="english"}') >= 3
    assert metric(text, 'laya_model_input_tokens_total{model="english"}') > 0
    assert metric(text, 'laya_refusals_total{reason="malformed"}') >= 1
    assert metric(text, 'laya_refusals_total{reason="wrong_host"}') >= 1
    assert "laya_queue_depth 0.0" in text and "laya_requests_in_flight 0.0" in text


def test_metrics_need_the_key_when_one_is_set(router: Router) -> None:
    with served(create_app(router, Settings(default_model="english", api_key="k"))) as base:
        assert httpx.get(base + "/metrics").status_code == 401
        keyed = httpx.get(base + "/metrics", headers={"Authorization": "Bearer k"})
        assert keyed.status_code == 200 and "laya_requests_in_flight" in keyed.text


def test_a_request_id_is_echoed_or_made_and_logged(
    server: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, "laya.server"):
        kept = server.post(SINGLE, json=SMALL, headers={"X-Request-ID": "req-42.a:b"})
        made = server.get("/health")
        replaced = server.get("/health", headers={"X-Request-ID": "no spaces allowed"})
        refused = server.post(SINGLE, content=b"{", headers={"X-Request-ID": "bad-one"})
    assert kept.headers["x-request-id"] == "req-42.a:b"
    assert len(made.headers["x-request-id"]) == 32
    assert replaced.headers["x-request-id"] not in (
        "no spaces allowed",
        made.headers["x-request-id"],
    )
    assert refused.status_code == 400 and refused.headers["x-request-id"] == "bad-one"
    logged = [json.loads(r.getMessage()) for r in caplog.records if r.getMessage().startswith("{")]
    ids = [entry.get("request_id") for entry in logged]
    assert {"req-42.a:b", made.headers["x-request-id"], "bad-one"} <= set(ids)


def serve_process(env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    """``laya serve`` as a process on a free port, on the fixture checkpoint; its base URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    models = [f"{n}={p}" for n, p in FIXTURE_MODELS.items()]
    process = subprocess.Popen(
        [sys.executable, "-m", "laya", "serve", "--port", str(port), "--models", *models,
         "--default-model", "english", "--no-preload"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"

    def up() -> bool:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        try:
            return httpx.get(base + "/health", timeout=5).status_code == 200
        except httpx.TransportError:
            return False

    wait_until(up)
    return process, base


def test_opentelemetry_spans_when_the_sdk_is_installed() -> None:
    """``laya serve`` with the SDK and OTEL_TRACES_EXPORTER=console: the request's server span,
    its parse and inference spans, carrying the request id."""
    pytest.importorskip("opentelemetry.sdk")
    env = {k: v for k, v in os.environ.items() if k != "OTEL_SDK_DISABLED"}
    env["OTEL_TRACES_EXPORTER"] = "console"
    process, base = serve_process(env)
    try:
        reply = httpx.post(
            base + SINGLE, json=SMALL, headers={"X-Request-ID": "traced-1"}, timeout=WAIT_S
        )
    finally:
        process.terminate()
        out, err = process.communicate(timeout=WAIT_S)
    assert reply.status_code == 200
    assert "OpenTelemetry spans go to console" in err
    names = [json.loads(block)["name"] for block in _span_blocks(out)]
    assert {"laya.parse", "laya.inference", "POST /v1/systemone"} <= set(names)
    assert '"laya.request_id": "traced-1"' in out


def _span_blocks(out: str) -> Iterator[str]:
    """The JSON objects the console exporter printed, one after another."""
    decoder, at = json.JSONDecoder(), 0
    while (start := out.find("{", at)) != -1:
        value, at = decoder.raw_decode(out, start)
        yield json.dumps(value)


def test_without_opentelemetry_nothing_is_traced(router: Router, monkeypatch) -> None:
    """The server imports no OpenTelemetry it does not find, and answers as ever."""
    from laya.server import tracing

    for name in ("opentelemetry", "opentelemetry.trace"):
        monkeypatch.setitem(sys.modules, name, None)  # an import of it fails, as if not installed
    tracing._tracer.cache_clear()  # what this process found
    try:
        with served(create_app(router, Settings(default_model="english"))) as base:
            assert httpx.post(base + SINGLE, json=SMALL, timeout=WAIT_S).status_code == 200
        with tracing.span("laya.test") as current:
            assert current is None
        assert tracing.configure({"OTEL_TRACES_EXPORTER": "console"}) is None
    finally:
        monkeypatch.undo()
        tracing._tracer.cache_clear()
