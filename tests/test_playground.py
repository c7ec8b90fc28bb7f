"""The browser playground: headless Chromium (Playwright) driving the page on a real server.

A uvicorn server on 127.0.0.1 serves ``create_app(router)`` with the playground added; the router
serves the bundled ``mini`` when it is installed, else the ModernBERT fixture (random weights:
the answers mean nothing, but their shape is real). A second server has an API key. The browser
is Debian's ``/usr/bin/chromium``; without it the browser tests are skipped.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import MODERNBERT
from test_server import served

from laya.router import Router
from laya.server import MINI_DIR, Settings, create_app
from laya.server.playground import ASSETS, add_playground, preset_catalogue
from laya.typed.presets import PRESETS, triage_questions

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
KEY = "playground-key"
STATE = "I was charged twice this month and I want my money back today, or I cancel."
RUN_TIMEOUT_MS = 120_000

browser_only = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="needs Debian's chromium at /usr/bin/chromium (apt-get install -y chromium)",
)


# --------------------------------------------------------------------------- servers


def playground_app(router: Router, settings: Settings) -> Any:
    """``create_app`` with the playground on it (a no-op when create_app already added it)."""
    return add_playground(create_app(router, settings))


@pytest.fixture(scope="module")
def router() -> Router:
    if MINI_DIR.is_dir():
        return Router(models={"mini": str(MINI_DIR)}, default="mini").preload(["mini"])
    return Router(models={"english": str(MODERNBERT)}, default="english").preload(["english"])


@pytest.fixture(scope="module")
def base(router: Router) -> Iterator[str]:
    with served(
        playground_app(router, Settings(route="default"))
    ) as url:  # laya serve --model mini
        yield url


@pytest.fixture(scope="module")
def missing_base(router: Router) -> Iterator[str]:
    """A server whose 'english' is not here and that may not download it."""
    missing = Router(
        models={"mini": str(MINI_DIR), "english": "laya-tests/never-cached"}
        if MINI_DIR.is_dir()
        else {"mini": str(MODERNBERT), "english": "laya-tests/never-cached"},
        default="mini",
        downloads="never",
    )
    with served(playground_app(missing, Settings())) as url:
        yield url


@pytest.fixture(scope="module")
def keyed_base(router: Router) -> Iterator[str]:
    with served(playground_app(router, Settings(api_key=KEY, route="default"))) as url:
        yield url


# --------------------------------------------------------------------------- browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's chromium at /usr/bin/chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any, base: str) -> Iterator[Any]:
    """A fresh tab (own sessionStorage) on the open server, with every page error collected."""
    yield from open_page(browser, base)


@pytest.fixture
def keyed_page(browser: Any, keyed_base: str) -> Iterator[Any]:
    yield from open_page(browser, keyed_base, wait_ready=False)


def open_page(browser: Any, url: str, wait_ready: bool = True, **context: Any) -> Iterator[Any]:
    context.setdefault("viewport", {"width": 1280, "height": 900})
    ctx = browser.new_context(**context)
    tab = ctx.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.on("console", lambda msg: errors.append(msg.text) if console_error(msg) else None)
    outside: list[str] = []
    own = (url, "blob:" + url)  # a page's own blob worker (ReDoc's) is not off the server
    tab.on("request", lambda req: None if req.url.startswith(own) else outside.append(req.url))
    tab.goto(url + "/")
    if wait_ready:
        tab.wait_for_selector("body[data-ready=true]")
    yield tab
    ctx.close()
    assert not outside, f"the page asked for something off its server: {outside}"
    assert not errors, f"errors in the page: {errors}"


def console_error(message: Any) -> bool:
    """A console error other than the browser's note on a refused or failed request."""
    return message.type == "error" and not message.text.startswith("Failed to load resource")


def run_and_wait(tab: Any) -> dict[str, Any]:
    """Press Run and wait until the page has handled the reply; the JSON body the page sent."""
    done = int(tab.get_attribute("body", "data-runs") or 0) + 1
    with tab.expect_request(lambda r: r.url.endswith("/v1/systemone")) as sent:
        tab.click("#run")
    tab.wait_for_selector(f'body[data-runs="{done}"]', timeout=RUN_TIMEOUT_MS)
    return sent.value.post_data_json


def shown_percent(text: str) -> float:
    return float(text.rstrip("%"))


def check_cards(tab: Any, result: dict[str, Any]) -> None:
    """Every answer card matches the API's JSON for the same request."""
    cards = tab.locator(".card")
    assert cards.count() == len(result["answers"])
    for qid, answer in result["answers"].items():
        card = tab.locator(f'.card[data-qid="{qid}"]')
        assert card.locator(".badge").first.inner_text().lower() == answer["type"]
        rows = card.locator(".bar-row")
        noul = answer["type"] == "noul"
        expected = {"true": answer["noul"]} if noul else answer["probabilities"]
        assert rows.count() == len(expected)
        for i, (label, p) in enumerate(expected.items()):
            row = rows.nth(i)
            assert row.get_attribute("data-label") == label
            assert float(row.get_attribute("data-p")) == p
            assert math.isclose(
                shown_percent(row.locator(".bar-value").inner_text()), p * 100, abs_tol=0.051
            )
        chosen = card.locator(".bar-row.chosen")
        value = card.locator(".answer").get_attribute("data-value")
        if answer["type"] == "choice":
            assert value == answer["choice"]
            assert chosen.get_attribute("data-label") == answer["choice"]
        elif answer["type"] == "score":
            mode = max(answer["probabilities"], key=answer["probabilities"].get)
            assert chosen.get_attribute("data-label") == mode
            assert float(value) == answer["score"]
        else:
            assert value == ("yes" if answer["noul"] >= 0.5 else "no")  # the CLI's words
            assert chosen.count() == (1 if answer["noul"] >= 0.5 else 0)
        confidence = card.locator(".confidence").inner_text()
        shown = float(re.match(r"confidence (\S+)", confidence).group(1))
        assert math.isclose(shown, answer["confidence"], abs_tol=0.0051)


# --------------------------------------------------------------------------- no browser


def test_page_assets_and_presets(base: str) -> None:
    page = httpx.get(base + "/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    for name, media in ASSETS.items():
        asset = httpx.get(f"{base}/static/{name}")
        assert asset.status_code == 200 and asset.headers["content-type"] == media
        assert not re.search(r"(?<![\w.])(https?:)?//[\w-]+\.[\w.-]+", asset.text), name
    missing = httpx.get(base + "/static/../server.py")
    assert missing.status_code == 404
    presets = httpx.get(base + "/presets").json()["presets"]
    assert presets == preset_catalogue()["presets"]
    assert sorted(presets) == sorted(PRESETS)
    assert presets["triage"]["questions"] == triage_questions()
    assert presets["triage"]["state_field"] == "message"


def test_openapi_lists_presets_only(base: str) -> None:
    paths = httpx.get(base + "/openapi.json").json()["paths"]
    assert "/presets" in paths and "/" not in paths and "/static/{name}" not in paths


def test_page_needs_no_key_but_the_api_does(keyed_base: str) -> None:
    assert httpx.get(keyed_base + "/").status_code == 200
    assert httpx.get(keyed_base + "/presets").status_code == 200
    assert httpx.get(keyed_base + "/models").status_code == 401


def test_add_playground_is_idempotent(router: Router) -> None:
    app = playground_app(router, Settings())
    routes = len(app.routes)
    assert add_playground(app) is app and len(app.routes) == routes


# --------------------------------------------------------------------------- browser


@browser_only
def test_triage_run_matches_the_api(page: Any, base: str, tmp_path: Path) -> None:
    page.select_option("#preset", "email")
    page.select_option("#preset", "triage")
    assert page.locator(".question").count() == len(triage_questions())
    assert page.locator("#model option").count() > 1
    page.fill("#state", STATE)
    assert "message" in page.inner_text("#state-hint")
    body = run_and_wait(page)
    assert body == {"state": {"message": STATE}, "questions": triage_questions()}
    result = httpx.post(base + "/v1/systemone", json=body, timeout=120).json()
    check_cards(page, result)
    assert page.inner_text('[data-meta="routing"]') == result["routing"]["reason"]
    assert page.inner_text('[data-meta="model"]') == result["routing"]["model"]
    assert "ms inference" in page.inner_text('[data-meta="latency"]')
    assert "answers from" in page.inner_text("#status")
    ARTIFACTS.mkdir(exist_ok=True)
    for target in (tmp_path / "playground.png", ARTIFACTS / "playground.png"):
        page.screenshot(path=str(target))
    assert (tmp_path / "playground.png").stat().st_size > 10_000


@browser_only
def test_first_click_answers_the_example(page: Any, base: str) -> None:
    """Open the page, press Run without typing anything: the example is answered."""
    example = page.input_value("#state")
    assert example.strip(), "the example must be real text, not a placeholder"
    body = run_and_wait(page)
    assert body == {"state": {"message": example}, "questions": triage_questions()}
    result = httpx.post(base + "/v1/systemone", json=body, timeout=120).json()
    check_cards(page, result)
    assert "`" not in page.inner_text("#status")
    reason = page.inner_text('[data-meta="routing"]')
    assert reason.startswith("server default model") and "explicit" not in reason
    card = page.locator(".card").first
    for name in ("confidence", "answer confidence"):
        explained = card.locator(".explained", has_text=name).first
        assert len(explained.get_attribute("title")) > 20


@browser_only
@pytest.mark.skipif(not MINI_DIR.is_dir(), reason="the language warning is mini's (English only)")
def test_a_state_in_another_language_shows_the_models_warning(page: Any, base: str) -> None:
    """mini reads English only: a Spanish message is answered, with its warning beside it."""
    page.fill("#state", "Hola, me cobraron dos veces este mes y quiero que me devuelvan el dinero.")
    body = run_and_wait(page)
    result = httpx.post(base + "/v1/systemone", json=body, timeout=120).json()
    (warning,) = result["x_warnings"]
    shown = page.inner_text('[data-meta="warning"]')
    assert "reads en only" in shown and warning["language"] in shown
    page.fill("#state", "I was charged twice this month and want my money back.")
    run_and_wait(page)
    assert page.locator('[data-meta="warning"]').count() == 0


@browser_only
def test_a_60_character_label_is_readable(page: Any) -> None:
    label = "a refund for the duplicate charge on the March invoice, plz!"
    assert len(label) == 60
    questions = {
        "long": {
            "type": "choice",
            "instructions": "Which one fits the `message`?",
            "criteria": [label, "short"],
        }
    }
    page.click("#tab-json")
    page.fill("#questions-json", json.dumps(questions))
    run_and_wait(page)
    shown = page.locator(f'.card[data-qid="long"] .bar-row[data-label="{label}"] .bar-label')
    assert shown.inner_text() == label
    clipped = shown.evaluate("el => el.scrollWidth > el.clientWidth + 1")
    assert not clipped, "the label is cut off"


@browser_only
def test_an_unavailable_checkpoint_reads_as_a_sentence(browser: Any, missing_base: str) -> None:
    for tab in open_page(browser, missing_base):
        tab.select_option("#model", "english")
        with tab.expect_response(lambda r: r.url.endswith("/v1/systemone")) as reply:
            tab.click("#run")
        assert reply.value.status == 422
        banner = tab.locator("#banner-text")
        banner.wait_for()
        text = banner.inner_text()
        assert text.startswith("Checkpoint 'english'") and "--allow-downloads" in text
        assert "failed" not in text and "(422)" not in text


@browser_only
def test_docs_render_offline(browser: Any, base: str) -> None:
    for tab in open_page(browser, base, wait_ready=False):
        tab.goto(base + "/docs")
        tab.wait_for_selector(".swagger-ui .opblock", timeout=30_000)
        assert tab.locator(".opblock-summary-path", has_text="/v1/systemone").count() >= 2
        ARTIFACTS.mkdir(exist_ok=True)
        tab.screenshot(path=str(ARTIFACTS / "docs.png"))
        tab.goto(base + "/redoc")
        tab.wait_for_selector("h1", timeout=30_000)
        assert "laya serve" in tab.inner_text("h1")


@browser_only
def test_ctrl_enter_runs_and_copies_work(page: Any, base: str) -> None:
    page.fill("#state", STATE)
    with page.expect_response(lambda r: r.url.endswith("/v1/systemone")):
        page.focus("#state")
        page.keyboard.press("Control+Enter")
    page.wait_for_selector(".card")
    body = {"state": {"message": STATE}, "questions": triage_questions()}
    expected = httpx.post(base + "/v1/systemone", json=body, timeout=120).json()["answers"]
    page.click("#copy-python")
    python = page.inner_text("#snippet")
    assert "import httpx" in python and base + "/v1/systemone" in python
    script = (
        python.replace("    print(qid, answer)", "    pass")
        + "import json\nprint(json.dumps(result))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["answers"] == expected
    page.click("#copy-curl")
    curl = page.inner_text("#snippet")
    assert curl.startswith("curl ") and "Content-Type: application/json" in curl
    if shutil.which("curl"):
        out = subprocess.run(["bash", "-c", curl], capture_output=True, text=True, timeout=120)
        assert json.loads(out.stdout)["answers"] == expected


@browser_only
def test_json_tab_stays_in_sync_and_reports_bad_json(page: Any) -> None:
    page.click("#tab-json")
    shown = json.loads(page.input_value("#questions-json"))
    assert shown == triage_questions()
    edited = {
        "mood": {
            "type": "score",
            "instructions": "How does the `message` sound?",
            "criteria": ["calm", "upset"],
        }
    }
    page.fill("#questions-json", json.dumps(edited))
    page.click("#tab-form")
    assert page.locator(".question").count() == 1
    assert page.input_value('.question [data-field="id"]') == "mood"
    page.fill('.question [data-field="id"]', "tone")
    page.click("#tab-json")
    assert json.loads(page.input_value("#questions-json")) == {"tone": edited["mood"]}
    page.fill("#questions-json", '{"tone": {"type": "score",')
    error = page.locator("#questions-error")
    assert error.is_visible() and "Invalid JSON" in error.inner_text()
    assert page.get_attribute("#questions-json", "aria-invalid") == "true"
    assert page.is_disabled("#run")
    page.click("#tab-form")  # refused while the JSON is broken
    assert page.get_attribute("#tab-json", "aria-selected") == "true"
    page.fill("#questions-json", json.dumps(edited))
    assert not error.is_visible() and page.is_enabled("#run")


@browser_only
def test_bad_state_json_is_reported_inline(page: Any) -> None:
    page.fill("#state", "hello")
    page.check('input[name="state-mode"][value="json"]')
    assert json.loads(page.input_value("#state")) == {"message": "hello"}
    page.fill("#state", '{"message": ')
    assert "Invalid JSON" in page.inner_text("#state-error")
    assert page.is_disabled("#run")
    page.keyboard.press("Control+Enter")
    assert "Fix the JSON" in page.inner_text("#status")
    page.fill("#state", '{"message": "hello"}')
    page.check('input[name="state-mode"][value="text"]')
    assert page.input_value("#state") == "hello" and page.is_enabled("#run")


@browser_only
def test_question_without_options_shows_its_error(page: Any) -> None:
    page.fill("#state", STATE)
    page.click("#add-question")
    new = page.locator(".question").last
    assert new.locator('[data-field="id"]').evaluate("el => el === document.activeElement")
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if "systemone" in r.url else None)
    page.click("#run")
    error = new.locator(".question-error")
    assert error.is_visible() and "has no options" in error.inner_text()
    assert new.locator('[data-field="id"]').get_attribute("aria-invalid") == "true"
    assert not sent and "Nothing was sent" in page.inner_text("#status")
    new.locator(".add-criterion").click()
    new.locator(".criterion input").first.fill("yes")
    assert not error.is_visible()


@browser_only
def test_api_errors_land_next_to_their_field(page: Any) -> None:
    page.fill("#state", STATE)
    page.select_option('.question[aria-label="Question intent"] [data-field="type"]', "noul")
    page.click("#tab-json")
    questions = json.loads(page.input_value("#questions-json"))
    questions["intent"]["type"] = "bogus"
    page.fill("#questions-json", json.dumps(questions))
    with page.expect_response(lambda r: r.url.endswith("/v1/systemone")) as reply:
        page.click("#run")
    assert reply.value.status == 422
    error = page.locator("#questions-error")
    error.wait_for()
    assert "question 'intent'" in error.inner_text() and "bogus" in error.inner_text()
    page.click("#tab-json")
    page.fill("#questions-json", json.dumps(triage_questions()))
    page.click("#tab-form")
    page.click("details.options summary")
    page.fill("#min-confidence", "5")
    with page.expect_response(lambda r: r.url.endswith("/v1/systemone")) as reply:
        page.click("#run")
    assert reply.value.status == 422
    page.locator("#min_confidence-error").wait_for()
    assert "min_confidence" in page.inner_text("#min_confidence-error")
    assert page.locator("#banner").is_hidden()


@browser_only
def test_server_failures_show_a_banner_and_nothing_freezes(page: Any) -> None:
    page.fill("#state", STATE)
    page.route("**/v1/systemone", lambda route: route.abort("connectionrefused"))
    page.click("#run")
    page.locator("#banner").wait_for()
    assert "Cannot reach the server" in page.inner_text("#banner")
    assert page.is_enabled("#run")
    page.unroute("**/v1/systemone")
    page.route(
        "**/v1/systemone",
        lambda route: route.fulfill(status=500, json={"detail": "inference failed"}),
    )
    page.click("#run")
    page.locator("#banner-text", has_text="500").wait_for()
    assert "inference failed" in page.inner_text("#banner")
    page.unroute("**/v1/systemone")
    page.evaluate("document.body.dataset.timeoutMs = '300'")
    page.route("**/v1/systemone", lambda route: None)  # never answered
    page.click("#run")
    page.locator("#banner-text", has_text="did not answer").wait_for()
    assert page.is_enabled("#run") and page.is_enabled("#copy-curl")


@browser_only
def test_api_key_is_asked_once_and_kept(keyed_page: Any) -> None:
    page = keyed_page
    dialog = page.locator("#key-dialog")
    dialog.wait_for()
    page.fill("#key-input", "wrong")
    page.click('#key-dialog button[value="save"]')
    page.locator("#key-message", has_text="refused").wait_for()
    page.fill("#key-input", KEY)
    page.keyboard.press("Enter")  # submits with "Use key", not "Cancel"
    page.wait_for_selector("body[data-ready=true]")
    assert page.locator("#model option").count() > 1
    assert page.evaluate("sessionStorage.getItem('laya.apiKey')") == KEY
    page.fill("#state", STATE)
    with page.expect_request(lambda r: r.url.endswith("/v1/systemone")) as sent:
        page.click("#run")
    assert sent.value.headers["authorization"] == f"Bearer {KEY}"
    page.wait_for_selector(".card")
    assert not dialog.is_visible()
    page.click("#copy-curl")
    assert "$LAYA_API_KEY" in page.inner_text("#snippet") and KEY not in page.inner_text("#snippet")


@browser_only
def test_keyboard_and_narrow_screen(browser: Any, base: str) -> None:
    for tab in open_page(browser, base, viewport={"width": 360, "height": 740}):
        assert tab.evaluate("document.documentElement.scrollWidth") <= 360
        tab.focus("#tab-form")
        tab.keyboard.press("ArrowRight")
        assert tab.get_attribute("#tab-json", "aria-selected") == "true"
        assert tab.evaluate("document.activeElement.id") == "tab-json"
        for control in tab.locator("input, select, textarea").all():
            if control.is_visible() and control.get_attribute("type") != "radio":
                label = control.evaluate(
                    "el => el.labels && el.labels.length ? el.labels[0].textContent"
                    " : el.getAttribute('aria-label')"
                )
                assert label and label.strip(), control.evaluate("el => el.outerHTML")
        assert tab.get_attribute("#results", "aria-live") == "polite"


@browser_only
def test_a_tournament_shows_its_finalists(page: Any, base: str) -> None:
    taxonomy = Path(__file__).resolve().parents[1] / "data" / "options" / "taxonomies.json"
    labels = json.loads(taxonomy.read_text())["it_error_classes"]["labels"]
    criteria = dict(list(labels.items())[:40])
    questions = {"error": {"type": "choice", "instructions": "Which class?", "criteria": criteria}}
    page.fill("#state", "kernel: Out of memory: Killed process 23811 (java)")
    page.click("#tab-json")
    page.fill("#questions-json", json.dumps(questions))
    page.click("details.options summary")
    page.fill("#tournament", "auto")
    body = run_and_wait(page)
    assert body["tournament"] is True and body["questions"] == questions
    answer = httpx.post(base + "/v1/systemone", json=body, timeout=120).json()["answers"]["error"]
    finalists = answer["x_tournament"]["finalists"]
    card = page.locator('.card[data-qid="error"]')
    rows = card.locator(".bar-row")
    assert [rows.nth(i).get_attribute("data-label") for i in range(rows.count())] == finalists
    assert card.locator(".bar-row.chosen").get_attribute("data-label") == answer["choice"]
    rounds = answer["x_tournament"]["rounds"]
    narrowed = card.locator(".narrowed").inner_text()
    assert f"tournament: {len(finalists)} finalists after {rounds} rounds" in narrowed
    assert f"{40 - len(finalists)} other options at 0% not shown" in narrowed
    page.fill("#tournament", "1")
    page.click("#run")
    assert "at least 2" in page.inner_text("#tournament-error")
