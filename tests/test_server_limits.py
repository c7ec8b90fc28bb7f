"""laya serve under attack: one test per way a request used to crash it, hang it or deny service.

Every test runs a real uvicorn on 127.0.0.1 with ``laya serve``'s own configuration
(``laya.server.uvicorn_config``) on the fixture checkpoints, and talks to it over real sockets.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import BERT, MODERNBERT, QUESTIONS, exported_fixture
from golden import assert_close
from test_server import ENGLISH, FIXTURE_MODELS, JSON, Marked, served

from laya import Agent, ONNXAgent
from laya.errors import InvalidRequest
from laya.router import Router
from laya.server import (
    MAX_BODY_BYTES,
    MAX_JSON_VALUES,
    MINI_DIR,
    Settings,
    create_app,
    decode_body,
    parse_batch,
    parse_single,
)
from laya.server.statuses import MalformedBody, TooLarge

NOUL = {"q": {"type": "noul", "instructions": "Is it a refund request?"}}
SINGLE, BATCH = "/v1/systemone", "/v1/systemone/batch"


@pytest.fixture(scope="module")
def router() -> Router:
    return Router(models=FIXTURE_MODELS, default="english").preload(["english", "multilingual"])


@pytest.fixture(scope="module")
def server(router: Router) -> Iterator[httpx.Client]:
    settings = Settings(default_model="english", body_read_timeout=2.0, header_timeout=1.0)
    with (
        served(create_app(router, settings)) as base,
        httpx.Client(base_url=base, timeout=60) as client,
    ):
        yield client


def port_of(client: httpx.Client) -> int:
    return httpx.URL(str(client.base_url)).port


def alive(client: httpx.Client) -> None:
    assert client.get("/health").status_code == 200


def receive_all(sock: socket.socket) -> bytes:
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except (ConnectionResetError, TimeoutError):
        pass
    return b"".join(chunks)


# --------------------------------------------------------------------------- findings: 500s


@pytest.mark.parametrize("bad_type", [{}, [], ["choice"], None, 3])
@pytest.mark.parametrize("route", [SINGLE, BATCH])
def test_unhashable_question_type_is_422_and_keeps_the_connection(
    server: httpx.Client, route: str, bad_type: Any
) -> None:
    question = {"q": {"type": bad_type, "instructions": "x"}}
    body = {"questions": question, **({"state": "x"} if route == SINGLE else {"states": ["x"]})}
    refused = server.post(route, json=body)
    assert refused.status_code == 422, refused.text
    assert "question 'q'" in refused.json()["detail"]
    assert refused.headers.get("connection") != "close"
    answered = server.post(SINGLE, json={"state": ENGLISH, "questions": NOUL})  # same connection
    assert answered.status_code == 200


def test_max_len_past_the_encoder_is_422_naming_both_numbers(server: httpx.Client) -> None:
    for route, key in ((SINGLE, "state"), (BATCH, "states")):
        state = ENGLISH if key == "state" else [ENGLISH]
        body = {key: state, "questions": NOUL, "model": "multilingual", "max_len": 4031}
        refused = server.post(route, json=body)
        assert refused.status_code == 422, refused.text
        assert refused.json()["detail"].startswith("max_len=4031 is more than")
        assert "(1024 positions)" in refused.json()["detail"]
    alive(server)


@pytest.mark.parametrize("make", ["agent", "onnx"])
def test_runtimes_refuse_budgets_their_encoder_cannot_embed(make: str, tmp_path_factory) -> None:
    runtime = (
        Agent(BERT)
        if make == "agent"
        else ONNXAgent(exported_fixture("tiny-bert", tmp_path_factory))
    )
    assert runtime.positions == 1024
    with pytest.raises(
        InvalidRequest, match=r"max_len=1025 .* \(1024 positions\); use max_len <= 1024"
    ):
        runtime.predict(ENGLISH, QUESTIONS, max_len=1025)
    with pytest.raises(InvalidRequest, match="head_max_len=2000"):
        runtime.predict(ENGLISH, QUESTIONS, head_max_len=2000)
    assert runtime.predict(ENGLISH, QUESTIONS, max_len=1024)["answers"].keys() == QUESTIONS.keys()


@pytest.mark.skipif(not MINI_DIR.is_dir(), reason="the bundled mini is not installed")
def test_mini_refuses_513() -> None:
    with pytest.raises(InvalidRequest, match=r"max_len=513 .*\(512 positions\)"):
        Agent("mini").predict(ENGLISH, QUESTIONS, max_len=513)


# --------------------------------------------------------------------------- downloads


def test_uncached_checkpoint_is_a_422_no_client_retries_and_starts_no_download(
    monkeypatch,
) -> None:
    """Only the operator can make it available: a 4xx naming the checkpoint and the flag, with
    no Retry-After (Jev clients retry a 503)."""
    import laya.router.fetch as fetch

    started: list[str] = []
    monkeypatch.setattr(fetch, "locate", lambda *a, **k: started.append(a[0]))
    router = Router(
        models={**FIXTURE_MODELS, "english": "laya-tests/never-cached"},
        default="multilingual",
        downloads="never",
    )
    with served(create_app(router, Settings(default_model="multilingual"))) as base:
        body = {"state": ENGLISH, "questions": NOUL, "model": "english"}
        refused = httpx.post(base + SINGLE, json=body, timeout=30)
        assert refused.status_code == 422
        assert "retry-after" not in refused.headers
        detail = refused.json()["detail"]
        assert "checkpoint 'english'" in detail and "--allow-downloads" in detail
        cached = httpx.post(base + SINGLE, json={**body, "model": "multilingual"}, timeout=30)
        assert cached.status_code == 200  # a cached built-in (conftest's offline cache) loads
        assert httpx.get(base + "/health").status_code == 200
    assert started == []


def test_allowed_download_runs_once_in_the_background(monkeypatch) -> None:
    import laya.router.fetch as fetch

    release, started = threading.Event(), []

    def slow_download(repo: str, *args: Any, **kwargs: Any) -> Any:
        started.append(repo)
        release.wait(10)
        raise OSError("no network in tests")

    monkeypatch.setattr(fetch, "locate", slow_download)
    router = Router(models={"english": "laya-tests/never-cached"}, downloads="background")
    with served(create_app(router, Settings(default_model="mini", allow_downloads=True))) as base:
        body = {"state": ENGLISH, "questions": NOUL, "model": "english"}
        for _ in range(3):
            began = time.perf_counter()
            reply = httpx.post(base + SINGLE, json=body, timeout=30)
            assert reply.status_code == 503 and time.perf_counter() - began < 5
            assert "downloading in the background" in reply.json()["detail"]
            assert reply.headers["retry-after"] == "30"
        release.set()
    assert started == ["laya-tests/never-cached"]


# --------------------------------------------------------------------------- slow clients


def test_64_slow_body_sockets_hold_no_admission_slot(server: httpx.Client) -> None:
    port, payload = port_of(server), json.dumps({"state": ENGLISH, "questions": NOUL}).encode()
    head = (
        f"POST {SINGLE} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\nExpect: 100-continue\r\n\r\n"
    ).encode()
    sockets = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(64)]
    try:
        for sock in sockets:
            sock.sendall(head)
        for sock in sockets:  # the server asks for the body once it starts reading it
            assert sock.recv(64).startswith(b"HTTP/1.1 100 ")
            sock.sendall(payload[:1])
        reply = server.post(SINGLE, json={"state": ENGLISH, "questions": NOUL})
        assert reply.status_code == 200, reply.text
        assert server.get("/health").json()["in_flight"] == 0
    finally:
        for sock in sockets:
            sock.close()


def rss_bytes() -> int:
    """This process's resident memory (the test server runs in it)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def send_huge_header(port: int, size: int) -> tuple[int, bytes]:
    """Send a header line of ``size`` bytes that never ends; what got through, and the reply."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: ")
        sent = 0
        try:
            while sent < size:
                sock.sendall(b"a" * 65536)
                sent += 65536
        except (BrokenPipeError, ConnectionResetError):
            pass
        return sent, receive_all(sock)


def test_huge_headers_are_refused_and_cost_no_memory(server: httpx.Client) -> None:
    before = rss_bytes()
    for _ in range(20):
        sent, reply = send_huge_header(port_of(server), 10 << 20)
        assert sent < 10 << 20 and reply.startswith(b"HTTP/1.1 431"), (sent, reply[:80])
        assert b'{"detail": "request line and headers exceed 16384 bytes' in reply
    assert rss_bytes() - before < 64 << 20
    alive(server)


def exchange(port: int, raw: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``raw`` on a new connection; the reply's status, headers (names lower-case), body."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(raw)
        head, _, body = receive_all(sock).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value for name, _, value in (h.partition(": ") for h in lines[1:])}
    return int(lines[0].split()[1]), headers, body


@pytest.mark.parametrize(("size", "status"), [(16_384, 200), (16_385, 431), (30_000, 431)])
def test_the_header_cap_holds_for_a_head_sent_whole(
    server: httpx.Client, size: int, status: int
) -> None:
    start = b"GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nX-Big: "
    head = start + b"a" * (size - len(start) - 4) + b"\r\n\r\n"
    assert len(head) == size
    code, headers, body = exchange(port_of(server), head)
    assert code == status, body[:200]
    if status == 431:
        assert headers["content-type"] == "application/json"
        assert headers["connection"] == "close"
        assert "(--max-header-bytes)" in json.loads(body)["detail"]
    alive(server)


def test_a_request_h11_cannot_parse_is_a_json_400(server: httpx.Client) -> None:
    code, headers, body = exchange(port_of(server), b"NOT AN HTTP REQUEST\r\n\r\n")
    assert (code, headers["content-type"]) == (400, "application/json")
    assert json.loads(body)["detail"].startswith("malformed HTTP request")
    alive(server)


def health_over(sock: socket.socket, close: bool = False) -> bytes:
    """GET /health on an open connection; the whole reply (with ``close``: read until the server
    closes the connection after it)."""
    ask = b"GET /health HTTP/1.1\r\nHost: localhost\r\n" + b"Connection: close\r\n" * close
    sock.sendall(ask + b"\r\n")
    if close:
        return receive_all(sock)
    reply = b""
    while not whole_reply(reply):
        chunk = sock.recv(65536)
        assert chunk, reply
        reply += chunk
    return reply


def whole_reply(reply: bytes) -> bool:
    """Whether ``reply`` holds a head and as many body bytes as its Content-Length says."""
    head, ended, body = reply.partition(b"\r\n\r\n")
    length = re.search(rb"content-length: (\d+)", head.lower())
    return bool(ended) and length is not None and len(body) >= int(length.group(1))


def test_connections_beyond_the_cap_get_a_json_503(router: Router) -> None:
    """The server accepts connections in the order they come: three that send nothing, then one
    that asks for /health (the fourth: answered), then the fifth (refused)."""
    settings = Settings(
        default_model="english", max_connections=4, header_timeout=120, keep_alive_timeout=120
    )
    with served(create_app(router, settings)) as base:
        port = httpx.URL(base).port
        open_ = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(4)]
        try:
            assert health_over(open_[3]).startswith(b"HTTP/1.1 200 ")  # the fourth connection
            refused = httpx.get(base + "/health")  # the fifth
            # the four leave: each asks once more and the server closes it after answering
            closed = [health_over(sock, close=True) for sock in open_]
        finally:
            for sock in open_:
                sock.close()
        assert refused.status_code == 503, refused.text
        assert refused.headers["retry-after"] == "1"
        assert refused.headers["connection"] == "close"
        assert refused.json()["detail"].startswith("server busy")
        assert "(--max-connections)" in refused.json()["detail"]
        assert all(reply.startswith(b"HTTP/1.1 200 ") for reply in closed)
        assert recovers(base + "/health")


def recovers(url: str, within: float = 30.0) -> bool:
    """Whether ``url`` answers 200 within ``within`` seconds, asking again after each 503: the
    four request tasks end just after their replies are sent, so the server may still count
    them for a moment (each refusal is the cap's 503, nothing else)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        reply = httpx.get(url)
        if reply.status_code == 200:
            return True
        assert reply.status_code == 503 and "(--max-connections)" in reply.json()["detail"]
    return False


def test_headers_that_never_end_are_cut_off(server: httpx.Client) -> None:
    with socket.create_connection(("127.0.0.1", port_of(server)), timeout=10) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: localhost\r\n")
        began = time.perf_counter()
        for _ in range(30):  # one header line a tenth of a second: never finishing
            try:
                sock.sendall(b"X-Drip: 1\r\n")
            except (BrokenPipeError, ConnectionResetError):
                break
            time.sleep(0.1)
        assert receive_all(sock) == b""
        assert time.perf_counter() - began < 5  # the 1 s header timeout, not the client, ended it
    alive(server)


def test_an_early_413_reaches_a_client_that_writes_its_whole_body(server: httpx.Client) -> None:
    size = 3 * 1024 * 1024
    head = (
        f"POST {SINGLE} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        f"Content-Length: {size}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port_of(server)), timeout=10) as sock:
        sock.sendall(head + b" " * size)  # the whole body first, then read
        reply = receive_all(sock)
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert b"connection: close" in reply.lower()
    assert str(MAX_BODY_BYTES).encode() in reply


# --------------------------------------------------------------------------- expensive bodies


def test_64_states_by_64_questions_is_over_the_work_budget(server: httpx.Client) -> None:
    questions = {
        f"q{i}": {"type": "noul", "instructions": f"Is claim {i} true?"} for i in range(64)
    }
    body = {"states": [f"{ENGLISH} {i}" for i in range(64)], "questions": questions}
    began = time.perf_counter()
    refused = server.post(BATCH, json=body)
    assert refused.status_code == 413 and time.perf_counter() - began < 5
    assert "asks for 315008 tokens of work (4096 rows" in refused.json()["detail"]


def test_a_request_past_its_deadline_is_504(router: Router) -> None:
    held = Marked()
    slow = Router(models=FIXTURE_MODELS, default="english", hooks=held)
    slow.attach("english", router.load("english"))
    settings = Settings(default_model="english", request_timeout=0.5)
    with served(create_app(slow, settings)) as base:
        try:
            began = time.perf_counter()
            body = {"state": "SLOW x", "questions": NOUL}
            reply = httpx.post(base + SINGLE, json=body, timeout=30)
            assert held.entered.is_set() and reply.status_code == 504
            assert "0.5 s deadline" in reply.json()["detail"]
            assert time.perf_counter() - began < 10
            assert httpx.get(base + "/health").status_code == 200
        finally:
            held.release.set()


def test_json_values_are_capped_before_parsing(server: httpx.Client) -> None:
    junk = b'{"state": "x", "questions": {}, "junk": [' + b",".join([b"{}"] * 690_000) + b"]}"
    assert len(junk) <= MAX_BODY_BYTES
    refused = server.post(SINGLE, content=junk, headers=JSON)
    assert refused.status_code == 413
    assert f"at most {MAX_JSON_VALUES}" in refused.json()["detail"]
    with pytest.raises(TooLarge):
        decode_body(junk)


@pytest.mark.parametrize(
    "state",
    [
        "[" * 500 + "," * 150_000,  # brackets and commas inside a string are text
        '{"nested": "\\"}' * 20_000,  # escaped quotes and backslashes do not end it
        "\\" * 100 + "[" * 200,
    ],
    ids=["brackets", "escapes", "backslashes"],
)
def test_what_a_string_holds_is_not_structure(state: str) -> None:
    raw = json.dumps({"state": state, "questions": NOUL}).encode()
    assert decode_body(raw)["state"] == state


@pytest.mark.parametrize(
    ("prefix", "field"),
    [
        ('{"questions": {"q\\"x": {"instructions": ', "question 'q\"x': instructions"),
        ('{"a\\\\": "]]", "states": ["x", ', "states[1]"),
        ('{"state": "[[", "junk": {"k": ', "junk"),
        ("[", "request body"),
    ],
)
def test_a_body_nested_past_the_limit_is_a_422_naming_the_field(prefix: str, field: str) -> None:
    raw = (prefix + "[" * 1_000 + "]" * 1_000).encode() + b"}" * prefix.count("{")
    with pytest.raises(InvalidRequest) as refused:
        decode_body(raw if prefix != "[" else raw + b"]")
    assert str(refused.value).startswith(f"{field} nests JSON more than 100 levels deep")


def test_parsed_bodies_from_other_front_ends_are_held_to_the_same_limit() -> None:
    """MCP and Ray hand ``parse_single`` / ``parse_batch`` bodies another parser read."""
    deep: Any = "refund"
    for _ in range(990):
        deep = [deep]
    for parse, body, field in (
        (parse_single, {"state": deep, "questions": NOUL}, "state"),
        (parse_batch, {"states": ["x", deep], "questions": NOUL}, "states[1]"),
        (
            parse_single,
            {"state": "x", "questions": {"q": {**NOUL["q"], "criteria": deep}}},
            "question 'q': criteria",
        ),
    ):
        with pytest.raises(InvalidRequest, match="nests JSON more than 100 levels deep") as refused:
            parse(body)
        assert field in str(refused.value)


def test_a_body_that_is_not_utf_8_is_400() -> None:
    with pytest.raises(MalformedBody, match="must be valid JSON"):
        decode_body(json.dumps({"state": "x", "questions": NOUL}).encode("utf-16"))


def test_no_redirect_from_the_host_header_and_head_wherever_get(server: httpx.Client) -> None:
    body = {"state": ENGLISH, "questions": NOUL}
    for path in (SINGLE + "/", BATCH + "/", "/health/"):
        refused = server.post(path, json=body, headers={"Host": "localhost.:80"})
        assert refused.status_code in (404, 405) and "location" not in refused.headers
    for path in ("/health", "/models", "/openapi.json", "/docs", "/", "/presets"):
        get, head = server.get(path), server.head(path)
        assert get.status_code == head.status_code == 200, path
        assert head.content == b"" and head.headers["content-type"] == get.headers["content-type"]
    assert server.head(SINGLE).status_code == 405


def test_a_2_mib_body_at_the_cap_costs_under_20_mb() -> None:
    values = MAX_JSON_VALUES - 10
    body = b'{"junk": [' + b",".join([b'"ab"'] * values) + b'], "pad": "'
    body += b"x" * (MAX_BODY_BYTES - len(body) - 2) + b'"}'
    assert len(body) <= MAX_BODY_BYTES
    tracemalloc.start()
    try:
        decode_body(body)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 1024 * 1024, peak


# --------------------------------------------------------------------------- headers and numbers


@pytest.mark.parametrize("media", ["text/plain", "application/x-www-form-urlencoded", None])
def test_a_body_is_read_as_json_whatever_its_content_type(
    server: httpx.Client, media: str | None
) -> None:
    """As the reference does: ``curl -d`` sends form-encoded, and is answered."""
    headers = {"Content-Type": media} if media else {}
    for route, body in (
        (SINGLE, {"state": ENGLISH, "questions": NOUL}),
        (BATCH, {"states": [ENGLISH], "questions": NOUL}),
    ):
        sent = json.dumps(body).encode()
        assert server.post(route, content=sent, headers=headers).status_code == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
    ],
)
def test_a_cross_site_request_is_403(server: httpx.Client, headers: dict[str, str]) -> None:
    """What keeps a page on another site from spending the model, now that any media type is
    read: the browser's own ``Sec-Fetch-Site`` or ``Origin``."""
    body = {"state": ENGLISH, "questions": NOUL}
    for route, sent in ((SINGLE, body), (BATCH, {"states": [ENGLISH], "questions": NOUL})):
        refused = server.post(route, json=sent, headers=headers)
        assert refused.status_code == 403
        detail = refused.json()["detail"]
        assert "Sec-Fetch-Site" in detail or "Origin" in detail


def test_a_same_origin_request_is_answered(server: httpx.Client) -> None:
    body = {"state": ENGLISH, "questions": NOUL}
    host = str(server.base_url.netloc.decode())
    for headers in (
        {"Sec-Fetch-Site": "same-origin", "Origin": "http://localhost:1234"},
        {"Sec-Fetch-Site": "none"},
        {"Origin": f"http://{host}"},
    ):
        assert server.post(SINGLE, json=body, headers=headers).status_code == 200


@pytest.mark.parametrize("number", [b"1e400", b"-1e400", b"Infinity", b"NaN"])
def test_non_finite_numbers_are_400(server: httpx.Client, number: bytes) -> None:
    raw = b'{"state": "x", "questions": {}, "min_confidence": ' + number + b"}"
    refused = server.post(SINGLE, content=raw, headers=JSON)
    assert refused.status_code == 400
    assert "valid JSON" in refused.json()["detail"]


def test_health_carries_the_reference_fields(server: httpx.Client, router: Router) -> None:
    health = server.get("/health").json()
    assert health["loaded"] == router.loaded
    assert health["device"] == "cpu" and health["device_is_preference"] is False
    assert health["checkpoint_devices"] == dict.fromkeys(router.loaded, "cpu")
    assert set(health["revisions"]) == set(router.loaded)
    assert health["cpu_fallbacks"] == {}
    empty = Router(models=FIXTURE_MODELS, default="english")
    with served(create_app(empty, Settings(default_model="english", api_key="k"))) as base:
        assert httpx.get(base + "/health").json() == {"status": "ok"}
        cold = httpx.get(base + "/health", headers={"Authorization": "Bearer k"}).json()
        assert cold["device"] == "auto" and cold["device_is_preference"] is True
        assert cold["loaded"] == [] and cold["checkpoint_devices"] == {}


def test_openapi_describes_both_bodies_every_status_and_the_scheme(server: httpx.Client) -> None:
    document = server.get("/openapi.json").json()
    schemas = document["components"]["schemas"]
    for path, model in ((SINGLE, "SystemOneBody"), (BATCH, "SystemOneBatchBody")):
        operation = document["paths"][path]["post"]
        body = operation["requestBody"]["content"]["application/json"]["schema"]
        assert body == {"$ref": f"#/components/schemas/{model}"}
        assert {"400", "401", "403", "408", "413", "422", "431", "500", "503", "504"} <= set(
            operation["responses"]
        )
    assert set(schemas["SystemOneBody"]["required"]) == {"state", "questions"}
    assert "states" in schemas["SystemOneBatchBody"]["properties"]
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    assert "hooks" not in schemas["SystemOneBody"]["properties"]


def test_docs_pages_use_no_network(server: httpx.Client) -> None:
    for path in ("/docs", "/redoc"):
        page = server.get(path)
        assert page.status_code == 200
        assert "cdn" not in page.text.lower() and "googleapis" not in page.text
    for name in ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js"):
        assert server.get(f"/docs/static/{name}").status_code == 200
    assert b"cdn.redoc.ly" not in server.get("/docs/static/redoc.standalone.js").content
    assert server.get("/docs/static/../app.py").status_code == 404


def test_modern_bert_fixture_is_the_same_over_http(server: httpx.Client) -> None:
    """A sanity check that the hardened server still answers like the Router."""
    direct = Router(models={"english": str(MODERNBERT)}, default="english")
    reply = server.post(SINGLE, json={"state": ENGLISH, "questions": QUESTIONS, "model": "english"})
    expected = direct.predict(ENGLISH, QUESTIONS, model="english")
    assert_close(
        reply.json()["answers"]["urgency"]["score"], expected["answers"]["urgency"]["score"]
    )


def test_the_uvicorn_internals_laya_serve_extends() -> None:
    """laya.server.serve subclasses uvicorn's H11Protocol: the methods it overrides or calls and
    the attributes it reads are still there (a uvicorn or h11 release that moves them fails here,
    not in production)."""
    import asyncio

    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.server import ServerState

    from laya.server import uvicorn_config

    for method in ("connection_made", "data_received", "handle_events", "send_400_response"):
        assert callable(getattr(H11Protocol, method, None)), method
    assert callable(getattr(H11Protocol, "connection_lost", None))
    config = uvicorn_config(create_app(Router(models=FIXTURE_MODELS)), Settings(), port=0)
    config.load()
    loop = asyncio.new_event_loop()
    try:
        protocol = config.http_protocol_class(config, ServerState(), {}, _loop=loop)
        assert isinstance(protocol, H11Protocol)
        for attribute in ("config", "conn", "loop", "app", "connections", "tasks"):
            assert hasattr(protocol, attribute), attribute
        assert hasattr(protocol.conn, "their_state") and protocol.conn.their_state is h11.IDLE
        assert hasattr(protocol.conn, "trailing_data")
    finally:
        loop.close()
