"""The reference server's settings, each read from its ``LAYA_*`` variable by a server that starts
with it: LAYA_EXTRA_MODELS, LAYA_MODELS (names and NAME=PATH), LAYA_TOURNAMENT_GROUP (and its
``x_tournament`` block), LAYA_IDLE_UNLOAD_SECONDS, LAYA_AUTO_TASK, TCP_NODELAY, and a
cross-origin browser page refused though any Content-Type is read as JSON."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
from collections.abc import Mapping
from typing import Any

import httpx
import pytest
from conftest import BERT, MODERNBERT, QUESTIONS
from test_server import ENGLISH, FIXTURE_MODELS, served

from laya.hooks import BaseHook
from laya.router import Router
from laya.server import SettingsError, create_app, serve_main, settings_from, uvicorn_config

SINGLE = "/v1/systemone"
WAIT_S = 60
MANY = {
    "pick": {
        "type": "choice",
        "instructions": "Which department?",
        "criteria": ["billing", "shipping", "returns", "technical", "sales", "legal"],
    }
}


def app_from(environ: Mapping[str, str], router: Router | None = None) -> Any:
    """``laya serve``'s app for these variables (on the fixture checkpoints unless said)."""
    env = {"LAYA_MODELS": ",".join(f"{n}={p}" for n, p in FIXTURE_MODELS.items()), **environ}
    env.setdefault("LAYA_DEFAULT_MODEL", "english")
    return create_app(router, settings_from((), env))


def test_extra_models_are_served_and_named() -> None:
    extra = {"support": str(MODERNBERT), "second": [str(BERT), None]}
    with served(app_from({"LAYA_EXTRA_MODELS": json.dumps(extra)})) as base:
        assert {"support", "second"} <= set(httpx.get(base + "/models").json()["checkpoints"])
        body = {"state": ENGLISH, "questions": QUESTIONS, "model": "support"}
        reply = httpx.post(base + SINGLE, json=body, timeout=WAIT_S)
        assert reply.status_code == 200 and reply.json()["routing"]["model"] == "support"
    for bad in ("{not json", "[]", '{"x": 3}'):
        with pytest.raises(SettingsError, match="LAYA_EXTRA_MODELS"):
            settings_from((), {"LAYA_EXTRA_MODELS": bad})


def test_models_takes_names_to_preload_and_name_path_pairs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env = {"LAYA_MODELS": f"english={MODERNBERT},multilingual={BERT},multilingual"}
    settings = settings_from((), env)
    assert settings.preload_models == ("multilingual",)
    assert settings.models == {"english": str(MODERNBERT), "multilingual": str(BERT)}
    with served(app_from(env)) as base:
        assert set(httpx.get(base + "/health").json()["loaded"]) == {"english", "multilingual"}
    names_only = settings_from((), {"LAYA_MODELS": "english, multilingual"})
    assert (names_only.models, names_only.preload_models) == ({}, ("english", "multilingual"))
    monkeypatch.setenv("LAYA_MODELS", "nosuch")
    assert serve_main(["--no-preload"]) == 2  # a misspelt name stops start-up


def test_tournament_group_narrows_large_choices_with_x_tournament() -> None:
    body = {"state": ENGLISH, "questions": MANY}
    with served(app_from({"LAYA_TOURNAMENT_GROUP": "2"})) as base:
        answer = httpx.post(base + SINGLE, json=body, timeout=WAIT_S).json()["answers"]["pick"]
        assert answer["x_tournament"]["finalists"] and answer["x_tournament"]["rounds"]
        off = httpx.post(base + SINGLE, json={**body, "tournament": False}, timeout=WAIT_S)
        assert "x_tournament" not in off.json()["answers"]["pick"]
    both = settings_from((), {"LAYA_TOURNAMENT_GROUP": "2", "LAYA_TOURNAMENT": "off"})
    assert not both.default_tournament
    for bad in ("1", "101", "two"):
        with pytest.raises(SettingsError, match="LAYA_TOURNAMENT_GROUP"):
            settings_from((), {"LAYA_TOURNAMENT_GROUP": bad})


class Evicted(BaseHook):
    """Wakes the test at each eviction."""

    def __init__(self) -> None:
        self.changed = threading.Condition()

    def on_evict(self, ctx: Any) -> None:
        with self.changed:
            self.changed.notify_all()


def test_idle_unload_frees_every_checkpoint_and_the_next_request_loads_again() -> None:
    hook = Evicted()
    router = Router(models=FIXTURE_MODELS, default="english", hooks=[hook]).preload(["english"])
    with served(app_from({"LAYA_IDLE_UNLOAD_SECONDS": "0.2"}, router)) as base:
        body = {"state": ENGLISH, "questions": QUESTIONS}
        assert httpx.post(base + SINGLE, json=body, timeout=WAIT_S).status_code == 200
        with hook.changed:
            assert hook.changed.wait_for(lambda: not router.loaded, WAIT_S)
        health = httpx.get(base + "/health").json()
        assert health["loaded"] == [] and health["idle_unload_seconds"] == pytest.approx(0.2)
        assert httpx.post(base + SINGLE, json=body, timeout=WAIT_S).status_code == 200
    assert settings_from((), {"LAYA_IDLE_UNLOAD_SECONDS": "0"}).idle_unload_seconds is None


def test_auto_task_routes_a_workflow_to_typed_decisions() -> None:
    ids = ("urgency", "needs_human", "churn_risk", "category", "action")  # customer_service
    questions = {qid: {"type": "noul", "instructions": qid.replace("_", " ")} for qid in ids}
    body = {"state": ENGLISH, "questions": questions}
    for value, model in (("1", "typed-decisions"), ("0", "english")):
        with served(app_from({"LAYA_AUTO_TASK": value, "LAYA_ROUTE": "auto"})) as base:
            reply = httpx.post(base + SINGLE, json=body, timeout=WAIT_S)
            assert reply.status_code == 200 and reply.json()["routing"]["model"] == model


def test_accepted_connections_have_tcp_nodelay() -> None:
    config = uvicorn_config(app_from({}), settings_from((), {}), host="127.0.0.1", port=0)
    config.load()
    from uvicorn.server import ServerState

    async def accepted_socket_option() -> int:
        made: list[Any] = []
        accepted = asyncio.Event()

        def protocol() -> Any:
            made.append(config.http_protocol_class(config, ServerState(), {}))
            accepted.set()
            return made[-1]

        server = await asyncio.get_running_loop().create_server(protocol, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        await asyncio.wait_for(accepted.wait(), WAIT_S)
        sock = made[0].transport.get_extra_info("socket")
        option = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        writer.close()
        server.close()
        return option

    assert asyncio.run(accepted_socket_option()) != 0


def test_a_cross_origin_page_gets_no_answer(caplog: pytest.LogCaptureFixture) -> None:
    """A page on another origin posts a 'simple' request (text/plain, no preflight) to a keyless
    server: the browser's Sec-Fetch-Site has it refused before any inference."""
    from test_playground import CHROMIUM, CHROMIUM_ARGS

    if not CHROMIUM.exists():
        pytest.skip("needs Debian's chromium at /usr/bin/chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    body = json.dumps({"state": ENGLISH, "questions": QUESTIONS})
    script = """async ([url, body]) => {
        try { const r = await fetch(url, {method: "POST", body, mode: "no-cors"}); return r.type; }
        catch (e) { return "failed"; }
    }"""
    with (
        served(app_from({})) as target,
        served(app_from({})) as other_site,
        caplog.at_level(logging.INFO, "laya.server"),
        sync_api.sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(other_site + "/health")
        page.evaluate(script, [target + SINGLE, body])
        browser.close()
    posts = [json.loads(r.getMessage()) for r in caplog.records if SINGLE in r.getMessage()]
    assert [entry["status"] for entry in posts] == [403]
