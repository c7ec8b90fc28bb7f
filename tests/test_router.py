"""Router: names and registry, the routing precedence table, residency, and every Router hook path.

Routing and registry tests need no model. Prediction and residency tests run real Agents on the
fixture checkpoints (a build takes well under a second once torch is imported), registered under
the three built-in names either as local paths or through the offline Hub cache of conftest.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import pytest
from conftest import BERT, MODERNBERT
from golden import assert_close

from laya.errors import CheckpointUnavailable
from laya.hooks import BaseHook, PredictContext, default_hooks, set_default_hooks
from laya.router import (
    STANDALONE_REPOS,
    RouteDecision,
    Router,
    english_from_code,
    match_typed_decisions_workflow,
    residency,
)

FIXTURE_MODELS = {
    "english": str(MODERNBERT),
    "multilingual": str(BERT),
    "typed-decisions": str(MODERNBERT),
    "mini": str(BERT),
}
QUESTIONS = {
    "department": {
        "type": "choice",
        "instructions": "Which department should handle this?",
        "criteria": {"billing": "invoices, refunds", "technical": "bugs", "other": "the rest"},
    },
    "churn_risk": {"type": "noul", "instructions": "Does the user threaten to leave?"},
}
OTHER_QUESTIONS = {
    "urgency": {
        "type": "score",
        "instructions": "How urgent is this?",
        "criteria": ["not urgent", "soon", "blocking"],
    }
}
ENGLISH = "Hello, please refund my order, it arrived broken and nobody answers my emails."
FRENCH = "Bonjour, je voudrais un remboursement pour ma commande, elle est arrivée cassée."
RUSSIAN = "Привет, мой заказ пришёл сломанным, верните, пожалуйста, деньги."
SPANISH = "Hola, necesito un reembolso de mi pedido porque llegó roto y no funciona."
GERMAN = "Bitte erstatten Sie mir den Betrag zurück, ich warte seit zwei Wochen darauf."
JAPANESE = "注文した商品が壊れて届きました。返金をお願いします。"
MIXED_STATES = [ENGLISH, FRENCH, RUSSIAN, SPANISH, GERMAN, JAPANESE]
CUSTOMER_SERVICE = dict.fromkeys(["action", "category", "churn_risk", "needs_human", "urgency"], {})


@pytest.fixture(autouse=True)
def restore_default_hooks() -> Iterator[None]:
    saved = default_hooks()
    yield
    set_default_hooks(hooks=saved)


class Recorder(BaseHook):
    """Logs (tag, event, snapshot of the context) for every event, into a shared list."""

    FIELDS = ("states", "questions", "decision", "model", "agent", "router", "results")

    def __init__(self, log: list | None = None, tag: str = "router") -> None:
        self.log = [] if log is None else log
        self.tag = tag

    def _record(self, event: str, ctx: PredictContext) -> None:
        snapshot = {f: getattr(ctx, f) for f in self.FIELDS}
        snapshot.update(ctx=ctx, usage=ctx.usage, elapsed_ms=ctx.elapsed_ms, error=ctx.error)
        self.log.append((self.tag, event, snapshot))

    def on_route(self, ctx):
        self._record("on_route", ctx)

    def on_load(self, ctx):
        self._record("on_load", ctx)

    def on_evict(self, ctx):
        self._record("on_evict", ctx)

    def on_predict_start(self, ctx):
        self._record("on_predict_start", ctx)

    def on_predict_end(self, ctx):
        self._record("on_predict_end", ctx)

    def on_error(self, ctx):
        self._record("on_error", ctx)

    def events(self, tag: str | None = None) -> list[str]:
        return [e for t, e, _ in self.log if tag is None or t == tag]

    def named(self, event: str) -> list[dict]:
        return [s for _, e, s in self.log if e == event]


def fixture_router(models: dict | None = None, **kwargs: Any) -> Router:
    """A Router whose three built-in names point at the fixture checkpoints (plus ``models``)."""
    return Router(models={**FIXTURE_MODELS, **(models or {})}, **kwargs)


@pytest.fixture(scope="module")
def shared_router() -> Router:
    """One Router with every fixture checkpoint resident, for tests that only read answers."""
    return fixture_router(max_loaded=4, preload=True)


def strip_routing(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "routing"}


# =========================================================================== no model needed


def test_import_does_not_pull_torch():
    code = "import sys, laya.router; print([m for m in ('torch', 'numpy') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("english", "english"),
        (" EN ", "english"),
        ("laya", "english"),
        ("Default", "english"),
        ("ml", "multilingual"),
        ("MULTI", "multilingual"),
        ("laya-multilingual", "multilingual"),
        ("typed", "typed-decisions"),
        ("typed_decisions", "typed-decisions"),
        ("Laya-Typed-Decisions", "typed-decisions"),
        ("decisions", "typed-decisions"),
    ],
)
def test_names_and_aliases_resolve(name, key):
    assert Router().resolve(name) == key


@pytest.mark.parametrize(("typo", "nearest"), [("enlgish", "english"), ("mutli", "multi")])
def test_unknown_name_lists_names_and_suggests_nearest(typo, nearest):
    router = Router()
    for call in (
        lambda: router.resolve(typo),
        lambda: router.route(ENGLISH, model=typo),
        lambda: router.load(typo),
        lambda: router.unload(typo),
    ):
        with pytest.raises(ValueError, match=f"did you mean '{nearest}'") as info:
            call()
        assert "english, mini, multilingual, typed-decisions" in str(info.value)


def test_unknown_name_far_from_everything_has_no_suggestion():
    with pytest.raises(ValueError) as info:
        Router().resolve("zzzzzzzzzz")
    assert "did you mean" not in str(info.value)


def test_models_add_and_repoint_checkpoints(tmp_path):
    router = Router(models={"ml": str(tmp_path), "ours": ("org/repo", "sub"), "home": "~/ckpt"})
    assert router.models["multilingual"] == (str(tmp_path), None)
    assert router.models["ours"] == ("org/repo", "sub")
    assert not router.models["home"][0].startswith("~")
    assert router.models["english"] == ("convaiinnovations/laya", None)


def test_standalone_repos_use_their_own_repos():
    router = Router(standalone_repos=True)
    assert router.models["multilingual"] == STANDALONE_REPOS["multilingual"]
    assert router.models["typed-decisions"] == ("convaiinnovations/laya-typed-decisions", None)
    assert router.models["english"] == ("convaiinnovations/laya", None)


@pytest.mark.parametrize(
    ("name", "source", "error"),
    [
        ("Bad Name!", "x", ValueError),
        ("-lead", "x", ValueError),
        ("auto", "x", ValueError),
        (42, "x", ValueError),
        ("ok", 42, TypeError),
        ("ok", ("a", "b", "c"), TypeError),
        ("ok", ("repo", 3), TypeError),
    ],
)
def test_register_rejects_bad_names_and_sources(name, source, error):
    router = Router()
    with pytest.raises(error):
        router.register(name, source)
    assert set(router.models) == {"english", "mini", "multilingual", "typed-decisions"}


def test_register_near_builtin_warns_but_registers():
    router = Router()
    with pytest.warns(RuntimeWarning, match="one edit from the built-in 'english'"):
        assert router.register("englsh", "org/other") == "englsh"
    assert router.models["english"] == ("convaiinnovations/laya", None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        router.register("EN", "org/repointed")  # an alias re-points the built-in, silently
    assert router.models["english"] == ("org/repointed", None)


def test_unregister_rules():
    router = Router(models={"ours": "org/ours", "other": "org/other"}, default="ours")
    with pytest.raises(ValueError, match="built-in checkpoint"):
        router.unregister("ml")
    with pytest.raises(ValueError, match="default checkpoint"):
        router.unregister("ours")
    router.unregister("other")
    assert "other" not in router.models
    with pytest.raises(ValueError, match="unknown model 'other'"):
        router.route(ENGLISH, model="other")


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"max_loaded": 0}, ValueError),
        ({"max_loaded": True}, ValueError),
        ({"default": "englsh"}, ValueError),
        ({"lang_guess": 42}, TypeError),
        ({"hooks_timeout": 0}, ValueError),
        ({"hooks": object()}, TypeError),
        ({"agent_kwargs": {"device": "cpu"}}, ValueError),
    ],
)
def test_constructor_checks(kwargs, error):
    with pytest.raises(error):
        Router(**kwargs)


@pytest.mark.parametrize(
    ("code", "english"),
    [
        ("en", True),
        ("EN", True),
        ("en-US", True),
        ("en_US", True),
        ("en_US.UTF-8", True),
        ("eng", True),
        ("English", True),
        (True, True),
        ("de", False),
        ("fr_FR.UTF-8", False),
        ("5", False),
        (False, False),
        ("C", None),
        ("C.UTF-8", None),
        ("POSIX", None),
        ("und", None),
        ("zxx", None),
        ("mul", None),
        ("", None),
        ("  ", None),
        (None, None),
        ("-en", None),
    ],
)
def test_english_from_code(code, english):
    assert english_from_code(code) is english


def test_workflow_matching_is_exact_set_equality():
    assert match_typed_decisions_workflow(CUSTOMER_SERVICE) == "customer_service"
    assert match_typed_decisions_workflow({**CUSTOMER_SERVICE, "extra": {}}) is None
    assert match_typed_decisions_workflow({"action": {}}) is None
    assert match_typed_decisions_workflow(None) is None


MIXED_SEGMENT_STATE = (
    "Hello team, the shipment is late again and I need it today. We have been waiting for two "
    "weeks and the customer is angry.\nBitte erstatten Sie mir den Betrag."
)

# (row, Router kwargs, state, questions, route kwargs, model, reason prefix)
PRECEDENCE = [
    (1, {}, FRENCH, CUSTOMER_SERVICE, {"model": "en", "task": "typed", "lang": "fr"},
     "english", "explicit model='en'"),
    (2, {"auto_task_detection": True}, ENGLISH, {}, {"task": "typed-decisions", "lang": "en"},
     "typed-decisions", "explicit task='typed-decisions'"),
    (2, {}, ENGLISH, {}, {"task": "ml"}, "multilingual", "explicit task='ml'"),
    (3, {"auto_task_detection": True}, FRENCH, CUSTOMER_SERVICE, {"lang": "fr"},
     "typed-decisions", "question ids match the 'customer_service' typed-decisions workflow"),
    (4, {}, FRENCH, CUSTOMER_SERVICE, {"lang": "en_US.UTF-8", "lang_guess": "fr"},
     "english", "explicit lang='en_US.UTF-8'"),
    (4, {}, ENGLISH, {}, {"lang": "de"}, "multilingual", "explicit lang='de'"),
    (5, {"lang_guess": "en"}, ENGLISH, {}, {"lang": "C", "lang_guess": lambda s: "pt-BR"},
     "multilingual", "lang_guess: the caller identified this as non-English text"),
    (6, {"lang_guess": "en_GB"}, FRENCH, {}, {"lang_guess": "und"},
     "english", "Router(lang_guess=...): the caller identified this as English text"),
    (7, {"default": "multilingual"}, "12345 !!! 678", {}, {"lang_guess": "POSIX"},
     "multilingual", "no letters detected in state; using default (multilingual)"),
    (8, {}, RUSSIAN, {}, {}, "multilingual", "non-Latin script (cyrillic, 100% of letters)"),
    (9, {}, MIXED_SEGMENT_STATE, {}, {}, "multilingual",
     "Latin script, mostly English, but a line or field reads as 'de'"),
    (10, {}, FRENCH, {}, {}, "multilingual", "Latin script but language looks like 'fr'"),
    (11, {}, "Xyzzé plôgh frøbñ", {}, {}, "multilingual",
     "Latin script, language not identified but"),
    (12, {"default": "multilingual"}, "Xyzzy plugh frobnicate", {}, {}, "multilingual",
     "Latin script, language not identified and no non-English letters; using default"),
    (13, {}, ENGLISH, CUSTOMER_SERVICE, {}, "english", "English Latin text"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("row", "router_kwargs", "state", "questions", "call", "model", "reason"), PRECEDENCE
)
def test_routing_precedence(row, router_kwargs, state, questions, call, model, reason):
    decision = Router(**router_kwargs).route(state, questions, **call)
    assert decision.model == model
    assert decision.reason.startswith(reason)
    assert (decision["detection"] is not None) == (row >= 7)
    expected_workflow = match_typed_decisions_workflow(questions) if row >= 3 else None
    assert decision["workflow"] == expected_workflow


def test_route_decision_shape():
    decision = Router(models={"ml": "/models/ml"}).route(FRENCH, {})
    assert isinstance(decision, RouteDecision) and isinstance(decision, dict)
    assert list(decision) == ["model", "repo", "reason", "detection", "workflow"]
    assert (decision.model, decision["repo"]) == ("multilingual", "/models/ml")
    assert repr(decision).startswith("RouteDecision(model='multilingual', reason=")
    with pytest.raises(AttributeError):
        _ = decision.repo
    assert json.loads(json.dumps(decision)) == decision
    assert (
        Router().route(ENGLISH, model="typed")["repo"] == "convaiinnovations/laya/typed-decisions"
    )


def test_model_auto_means_automatic_routing():
    assert Router().route(FRENCH, model="auto").reason.startswith("Latin script but language")


def test_explain_adds_a_diagnostic():
    assert "diagnostic" in Router().route(FRENCH, explain=True)["detection"]


def test_route_fires_on_route_with_installed_then_per_call_hooks():
    log: list = []
    default, installed, per_call = Recorder(log, "default"), Recorder(log, "installed"), None
    set_default_hooks(hooks=[default])
    router = Router(hooks=[installed])
    per_call = Recorder(log, "per_call")
    decision = router.route(ENGLISH, QUESTIONS, hooks=per_call)
    assert [(t, e) for t, e, _ in log] == [
        ("default", "on_route"),
        ("installed", "on_route"),
        ("per_call", "on_route"),
    ]
    snap = log[0][2]
    assert snap["states"] == [ENGLISH] and snap["questions"] == QUESTIONS
    assert snap["decision"] is decision and snap["router"] is router
    assert snap["model"] is None and snap["agent"] is None and snap["results"] is None


def test_on_route_may_replace_the_decision():
    class Rewrite(BaseHook):
        def on_route(self, ctx):
            ctx.decision = {"model": "ml", "reason": "tenant policy"}

    router = Router(hooks=Rewrite())
    assert router.route(ENGLISH) == {"model": "ml", "reason": "tenant policy"}
    assert router.route_batch([{"state": ENGLISH, "questions": {}}])[0]["model"] == "ml"


def test_route_batch_routes_in_order_and_fires_per_request():
    rec = Recorder()
    requests = [
        {"state": ENGLISH, "questions": {}},
        {"state": FRENCH, "questions": QUESTIONS},
        {"state": ENGLISH, "questions": {}, "model": "typed", "ignored": 1},
    ]
    decisions = Router().route_batch(requests, hooks=rec)
    assert [d.model for d in decisions] == ["english", "multilingual", "typed-decisions"]
    assert [s["states"] for s in rec.named("on_route")] == [[ENGLISH], [FRENCH], [ENGLISH]]


@pytest.mark.parametrize(
    ("bad", "error", "message"),
    [
        ("a string", TypeError, "requests must be a sequence"),
        ({"state": ENGLISH}, TypeError, "requests must be a sequence"),
        (["not a dict"], TypeError, "request 1 must be a dict, got str"),
        ([{"questions": {}}], ValueError, "request 1 is missing required key 'state'"),
        ([{"state": ENGLISH}], ValueError, "request 1 is missing required key 'questions'"),
        ([{"state": None, "questions": {}}], TypeError, "request 1 'state' must not be None"),
        ([{"state": ENGLISH, "questions": [1]}], TypeError, "request 1 'questions' must be a dict"),
        ([{"state": ENGLISH, "questions": {}, "lang": 3}], TypeError, "request 1 lang must be"),
        (
            [{"state": ENGLISH, "questions": {}, "max_len": "512"}],
            ValueError,
            "request 1 max_len must be a whole number of tokens",
        ),
        (
            [{"state": ENGLISH, "questions": {}, "head_max_len": 9.5}],
            ValueError,
            "request 1 head_max_len must be a whole number of tokens",
        ),
    ],
)
def test_malformed_request_names_index_and_key(bad, error, message):
    rec = Recorder()
    requests = bad if isinstance(bad, (str, dict)) else [{"state": ENGLISH, "questions": {}}, *bad]
    router = Router(hooks=rec)
    with pytest.raises(error, match=message):
        router.route_batch(requests)
    with pytest.raises(error, match=message):
        router.predict_batch(requests)
    assert rec.log == []  # every request is checked before any hook fires


def test_raising_lang_guess_propagates():
    class Boom(Exception):
        pass

    def guess(state):
        raise Boom("no idea")

    with pytest.raises(Boom):
        Router().route(ENGLISH, lang_guess=guess)
    with pytest.raises(Boom):
        Router(lang_guess=guess).route(ENGLISH)
    assert Router(lang_guess=guess).route(ENGLISH, lang="en").model == "english"


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda r: r.predict(None, QUESTIONS), TypeError),
        (lambda r: r.predict(ENGLISH, ["not", "a", "dict"]), TypeError),
        (lambda r: r.predict(ENGLISH, QUESTIONS, hooks=BaseHook), TypeError),
        (lambda r: r.predict(ENGLISH, QUESTIONS, on_predict_start=42), TypeError),
        (lambda r: r.predict(ENGLISH, QUESTIONS, hooks_timeout=-1), ValueError),
        (lambda r: r.predict(ENGLISH, QUESTIONS, min_confidence=1.5), ValueError),
        (lambda r: r.predict(ENGLISH, QUESTIONS, lang=3), TypeError),
        (lambda r: r.predict_long(None, QUESTIONS), TypeError),
        (lambda r: r.predict_batch([], min_confidence="high"), ValueError),
        (lambda r: r.predict_batch([], hooks_timeout=float("nan")), ValueError),
        (lambda r: r.route(ENGLISH, "questions"), TypeError),
    ],
)
def test_bad_input_raises_before_any_hook(call, error):
    rec = Recorder()
    router = Router(hooks=rec)
    with pytest.raises(error):
        call(router)
    assert rec.log == [] and router.loaded == []


def test_empty_batch_returns_empty_list():
    assert Router().predict_batch([]) == []


class StandIn:
    """The least a runtime needs to be attached: an ``answer`` method."""

    def answer(self, states, questions, **options):
        return [{"model": "stand-in", "answers": {}, "usage": {}} for _ in states]


def test_attach_registers_without_on_load_and_never_evicts():
    rec = Recorder()
    router = Router(max_loaded=1, hooks=rec)
    stand_in, other = StandIn(), StandIn()
    assert router.attach("custom", stand_in) is stand_in
    router.attach("EN", other)
    assert router.loaded == ["custom", "english"] and router.max_loaded == 2
    assert router.load("custom") is stand_in and router.loaded == ["english", "custom"]
    assert rec.log == []
    router.unload("custom")
    assert rec.events() == ["on_evict"] and rec.named("on_evict")[0]["model"] == "custom"
    with pytest.raises(ValueError, match="no source to load from"):
        router.load("custom")


# =========================================================================== real Agents


def test_predict_event_sequence_and_payloads():
    rec = Recorder()
    router = fixture_router(hooks=rec)
    result = router.predict(ENGLISH, QUESTIONS, max_len=96)
    assert rec.events() == ["on_route", "on_load", "on_predict_start", "on_predict_end"]
    route, load, start, end = (snap for _, _, snap in rec.log)
    agent = router.load("english")
    assert route["decision"] == result["routing"] and route["model"] is None
    assert (load["states"], load["questions"], load["model"], load["agent"]) == (
        [],
        {},
        "english",
        agent,
    )
    assert load["decision"] is None and load["router"] is router
    assert start["states"] == [ENGLISH] and start["questions"] is QUESTIONS
    assert start["decision"] == result["routing"] and start["model"] == "english"
    assert start["agent"] is agent and start["router"] is router and start["results"] is None
    assert start["ctx"] is end["ctx"] and start["ctx"] is not route["ctx"]
    assert start["ctx"].max_len == 96
    assert end["results"] == [result] and end["error"] is None
    assert end["usage"] == {
        "input_tokens": result["usage"]["input_tokens"],
        "output_tokens": 0,
    }
    assert end["elapsed_ms"] > 0
    assert result["model"] == "laya-rl-agent" and set(result["answers"]) == set(QUESTIONS)
    assert result["routing"]["model"] == "english"


def test_defaults_fire_once_and_agent_hooks_nest_inside():
    log: list = []
    set_default_hooks(hooks=[Recorder(log, "default")])
    router = fixture_router(hooks=Recorder(log, "router"))
    router.load("english").add_hook(Recorder(log, "agent"))
    log.clear()
    per_call = Recorder(log, "per_call")
    router.predict(ENGLISH, QUESTIONS, hooks=per_call)
    assert [(t, e) for t, e, _ in log] == [
        ("default", "on_route"),
        ("router", "on_route"),
        ("per_call", "on_route"),
        ("default", "on_predict_start"),
        ("router", "on_predict_start"),
        ("per_call", "on_predict_start"),
        ("agent", "on_predict_start"),
        ("agent", "on_predict_end"),
        ("default", "on_predict_end"),
        ("router", "on_predict_end"),
        ("per_call", "on_predict_end"),
    ]


def test_lifecycle_events_never_see_per_call_hooks():
    installed, per_call = Recorder(tag="installed"), Recorder(tag="per_call")
    router = fixture_router(max_loaded=1, hooks=installed)
    router.predict(ENGLISH, QUESTIONS)
    router.predict(FRENCH, QUESTIONS, hooks=per_call)
    first = ["on_route", "on_load", "on_predict_start", "on_predict_end"]
    second = ["on_route", "on_evict", "on_load", "on_predict_start", "on_predict_end"]
    assert installed.events() == first + second
    assert per_call.events() == ["on_route", "on_predict_start", "on_predict_end"]


def test_on_route_rewrite_changes_the_checkpoint():
    class Rewrite(BaseHook):
        def on_route(self, ctx):
            ctx.decision = {"model": "ml", "reason": "tenant policy"}

    router = fixture_router(hooks=Rewrite())
    result = router.predict(ENGLISH, QUESTIONS)
    assert router.loaded == ["multilingual"]
    assert result["routing"] == {"model": "ml", "reason": "tenant policy"}
    batch = router.predict_batch([{"state": ENGLISH, "questions": QUESTIONS}])
    assert batch[0]["routing"]["model"] == "ml" and router.loaded == ["multilingual"]


def test_skip_adds_routing_only_when_absent(shared_router):
    cached = {"model": "cache", "answers": {}, "usage": {"input_tokens": 3}}
    kept = {**cached, "routing": "from the cache"}

    def skip_with(payload):
        return lambda ctx: ctx.skip([dict(payload)])

    result = shared_router.predict(ENGLISH, QUESTIONS, on_predict_start=skip_with(cached))
    assert result["routing"]["model"] == "english" and result["answers"] == {}
    result = shared_router.predict(ENGLISH, QUESTIONS, on_predict_start=skip_with(kept))
    assert result["routing"] == "from the cache"
    batch = shared_router.predict_batch(
        [{"state": ENGLISH, "questions": QUESTIONS}, {"state": FRENCH, "questions": QUESTIONS}],
        on_predict_start=skip_with(cached),
    )
    assert [r["routing"]["model"] for r in batch] == ["english", "multilingual"]


def test_route_and_load_failures_get_error_and_end():
    rec = Recorder()
    router = fixture_router(hooks=rec)
    with pytest.raises(ValueError, match="unknown model"):
        router.predict(ENGLISH, QUESTIONS, model="nope")
    assert rec.events() == ["on_error", "on_predict_end"]
    error, end = rec.named("on_error")[0], rec.named("on_predict_end")[0]
    assert error["ctx"] is end["ctx"] and isinstance(end["error"], ValueError)
    assert end["decision"] is None and end["agent"] is None and end["elapsed_ms"] is not None


def test_a_batch_group_whose_checkpoint_fails_to_load_fires_no_start_or_end(tmp_path):
    rec = Recorder()
    router = fixture_router(hooks=rec, models={"broken": str(tmp_path)})  # no checkpoint there
    requests = [{"state": s, "questions": QUESTIONS, "model": "broken"} for s in (ENGLISH, FRENCH)]
    with pytest.raises(FileNotFoundError, match="does not contain 'rl_agent_config.json'"):
        router.predict_batch(requests)
    assert rec.events() == ["on_route", "on_route"]  # the load error propagates (hooks.md §6)


def test_start_hook_can_rewrite_states_and_questions(shared_router):
    def rewrite(ctx):
        ctx.questions = OTHER_QUESTIONS

    result = shared_router.predict(ENGLISH, QUESTIONS, on_predict_start=rewrite)
    assert set(result["answers"]) == {"urgency"}
    batch = shared_router.predict_batch(
        [{"state": ENGLISH, "questions": QUESTIONS}], on_predict_start=rewrite
    )
    assert set(batch[0]["answers"]) == {"urgency"}


def test_min_confidence_gate(shared_router):
    result = shared_router.predict(ENGLISH, QUESTIONS, min_confidence=0.99)
    answers = result["answers"].values()
    assert all(a["abstention"] in ("passed", "abstained") for a in answers)
    assert all(a["abstention_threshold"] == 0.99 for a in answers)
    batch = shared_router.predict_batch(
        [{"state": FRENCH, "questions": QUESTIONS}], min_confidence=0.0
    )
    assert all(a["abstention"] == "passed" for a in batch[0]["answers"].values())
    assert "abstention" not in next(
        iter(shared_router.predict(ENGLISH, QUESTIONS)["answers"].values())
    )


def test_predict_batch_one_context_per_request():
    rec = Recorder()
    router = fixture_router(hooks=rec)
    states = [ENGLISH, FRENCH, ENGLISH, RUSSIAN]
    results = router.predict_batch([{"state": s, "questions": QUESTIONS} for s in states])
    assert rec.events() == (
        ["on_route"] * 4
        + ["on_load"] + ["on_predict_start"] * 2 + ["on_predict_end"] * 2
        + ["on_load"] + ["on_predict_start"] * 2 + ["on_predict_end"] * 2
    )  # fmt: skip
    starts, ends = rec.named("on_predict_start"), rec.named("on_predict_end")
    assert [s["states"] for s in starts] == [[ENGLISH], [ENGLISH], [FRENCH], [RUSSIAN]]
    assert [s["model"] for s in starts] == ["english", "english", "multilingual", "multilingual"]
    assert len({id(s["ctx"]) for s in starts}) == 4
    assert [e["ctx"] for e in ends] == [
        s["ctx"] for s in (starts[1], starts[0], starts[3], starts[2])
    ]
    assert all(len(e["results"]) == 1 and e["usage"] for e in ends)
    assert [r["routing"]["model"] for r in results] == [
        "english",
        "multilingual",
        "english",
        "multilingual",
    ]


def test_predict_batch_failure_ends_every_started_context():
    rec = Recorder()
    router = fixture_router(hooks=rec)
    bad = {"x": {"type": "nonsense", "instructions": "?"}}
    with pytest.raises(ValueError):
        router.predict_batch(
            [{"state": ENGLISH, "questions": QUESTIONS}, {"state": ENGLISH, "questions": bad}]
        )
    assert rec.events()[-6:] == [
        "on_predict_start",
        "on_predict_start",
        "on_error",
        "on_predict_end",
        "on_error",
        "on_predict_end",
    ]


@pytest.mark.numbers
def test_predict_batch_matches_predict_in_input_order(shared_router):
    requests = []
    for i in range(60):
        request = {"state": f"{MIXED_STATES[i % 6]} #{i}", "questions": QUESTIONS}
        if i % 4 == 1:
            request["questions"] = OTHER_QUESTIONS
        if i % 5 == 2:
            request["max_len"] = 48
        if i % 7 == 3:
            request["model"] = "typed"
        requests.append(request)
    batch = shared_router.predict_batch(requests, batch_size=8)
    singles = [
        shared_router.predict(
            r["state"],
            r["questions"],
            model=r.get("model"),
            max_len=r.get("max_len"),
        )
        for r in requests
    ]
    assert_close(singles, batch)


def test_predict_long_goes_through_the_routed_agent(shared_router):
    rec = Recorder()
    long_state = " ".join([ENGLISH] * 40)
    result = shared_router.predict_long(long_state, QUESTIONS, window=64, hooks=rec)
    assert result["usage"]["windows"] > 1 and result["routing"]["model"] == "english"
    assert rec.events() == ["on_route", "on_predict_start", "on_predict_end"]
    short = shared_router.predict_long(FRENCH, QUESTIONS)
    assert short["usage"]["windows"] == 1 and short["routing"]["model"] == "multilingual"


@pytest.mark.parametrize("thing", ["tests/fixtures/tiny-bert/checkpoint", None, object()])
def test_attach_refuses_what_is_not_a_runtime(thing):
    router = Router()
    with pytest.raises(
        TypeError, match=r"attach\('x', \.\.\.\) takes a built runtime.*register\('x', source\)"
    ):
        router.attach("x", thing)
    assert "x" not in router.models and router.loaded == []


def test_the_router_talks_to_a_runtime_only_through_its_protocol():
    class AnswerOnly:
        """A stand-in implementing answer() alone: predict works, predict_long cannot scan."""

        def __init__(self):
            self.calls = []

        def answer(self, states, questions, **options):
            self.calls.append(options)
            return [{"model": "stub", "answers": {}, "usage": {}} for _ in states]

    rec = Recorder()
    router = Router(hooks=rec)
    stub = router.attach("english", AnswerOnly())
    with pytest.raises(AttributeError, match="answer_long"):
        router.predict_long(ENGLISH, QUESTIONS, hooks_raise=False)
    assert rec.events() == ["on_route", "on_predict_start", "on_error", "on_predict_end"]
    assert router.predict(ENGLISH, QUESTIONS, max_len=64)["model"] == "stub"
    assert stub.calls == [
        {
            "lang": "en",
            "min_confidence": None,
            "defaults": False,
            "max_len": 64,
            "head_max_len": None,
        }
    ]


def test_evicting_a_checkpoint_closes_its_runtime_once_no_call_uses_it():
    class Recording:
        def __init__(self):
            self.closed = 0

        def answer(self, states, questions, **options):
            assert self.closed == 0, "answered after close()"
            return [{"model": "stub", "answers": {}, "usage": {}} for _ in states]

        def close(self):
            self.closed += 1

    router = fixture_router(max_loaded=1)
    first = Recording()
    router.attach("english", first)
    router.load("ml")  # built from its fixture; english, least recently used, is evicted
    assert first.closed == 1 and router.loaded == ["multilingual"]
    router.unload()

    inside: list[int] = []
    third = Recording()
    router.attach("english", third)

    def evict_meanwhile(ctx):
        router.unload("english")
        inside.append(third.closed)

    router.predict(ENGLISH, QUESTIONS, model="english", on_predict_start=evict_meanwhile)
    assert inside == [0] and third.closed == 1


# --------------------------------------------------------------------------- residency


def test_residency_max_loaded_1():
    rec = Recorder()
    router = fixture_router(max_loaded=1, hooks=rec)
    first = router.load("english")
    assert router.load("EN") is first and rec.events() == ["on_load"]
    router.load("ml")
    assert router.loaded == ["multilingual"]
    assert [(e, s["model"]) for _, e, s in rec.log] == [
        ("on_load", "english"),
        ("on_evict", "english"),
        ("on_load", "multilingual"),
    ]
    assert rec.named("on_evict")[0]["agent"] is None
    assert router.load("english") is not first


def test_residency_max_loaded_2_evicts_least_recently_used():
    rec = Recorder()
    router = fixture_router(max_loaded=2, hooks=rec)
    for name in ("english", "multilingual", "english", "typed", "multilingual"):
        router.load(name)
    assert [(e, s["model"]) for _, e, s in rec.log] == [
        ("on_load", "english"),
        ("on_load", "multilingual"),
        ("on_evict", "multilingual"),
        ("on_load", "typed-decisions"),
        ("on_evict", "english"),
        ("on_load", "multilingual"),
    ]
    assert router.loaded == ["typed-decisions", "multilingual"]
    rec.log.clear()
    with router:
        pass
    assert [(e, s["model"]) for _, e, s in rec.log] == [
        ("on_evict", "typed-decisions"),
        ("on_evict", "multilingual"),
    ]
    assert router.loaded == []


def test_preload_raises_max_loaded_and_unload_frees_one():
    rec = Recorder()
    router = fixture_router(max_loaded=1, hooks=rec)
    assert router.preload(["ml", "english"]) is router
    assert router.max_loaded == 2 and router.loaded == ["multilingual", "english"]
    assert rec.events() == ["on_load", "on_load"]
    router.unload("ml")
    router.unload("ml")  # not resident: nothing fires
    assert rec.events() == ["on_load", "on_load", "on_evict"]
    assert router.loaded == ["english"]


def test_preload_takes_one_name_as_a_string():
    router = fixture_router()
    router.preload("english")
    assert router.loaded == ["english"]


def test_router_preload_true_builds_every_checkpoint():
    router = fixture_router(max_loaded=1, preload=True)
    assert sorted(router.loaded) == sorted(FIXTURE_MODELS) and router.max_loaded == 4


def test_register_repointing_a_resident_checkpoint_unloads_it():
    rec = Recorder()
    router = fixture_router(hooks=rec)
    router.load("english")
    router.register("english", str(MODERNBERT))  # same source: stays resident
    assert router.loaded == ["english"]
    router.register("english", str(BERT))
    assert router.loaded == [] and rec.events() == ["on_load", "on_evict"]
    assert router.predict(ENGLISH, QUESTIONS)["routing"]["repo"] == str(BERT)


def test_unregister_a_resident_checkpoint_evicts_it():
    rec = Recorder()
    router = fixture_router(models={"ours": str(MODERNBERT)}, hooks=rec)
    router.load("ours")
    router.unregister("ours")
    assert router.loaded == [] and rec.events() == ["on_load", "on_evict"]
    assert "ours" not in router.models


def test_failing_on_load_hook_ends_the_predict_context():
    class FailingLoad(Recorder):
        def on_load(self, ctx):
            super().on_load(ctx)
            raise RuntimeError("metrics backend down")

    rec = FailingLoad()
    router = fixture_router(hooks=rec)
    with pytest.raises(RuntimeError, match="metrics backend down"):
        router.predict(ENGLISH, QUESTIONS, hooks_raise=False)  # lifecycle uses the Router's policy
    assert rec.events() == ["on_route", "on_load", "on_error", "on_predict_end"]
    end = rec.named("on_predict_end")[0]
    assert end["decision"]["model"] == "english" and end["agent"] is None
    assert router.loaded == ["english"]  # the build itself succeeded
    assert router.predict(ENGLISH, QUESTIONS)["routing"]["model"] == "english"


def test_hub_cache_layout_serves_the_builtin_names():
    router = Router(max_loaded=3)
    english = router.predict(ENGLISH, QUESTIONS)
    french = router.predict(FRENCH, QUESTIONS)
    typed = router.predict(ENGLISH, QUESTIONS, task="typed-decisions")
    assert english["routing"]["repo"] == "convaiinnovations/laya"
    assert french["routing"]["repo"] == "convaiinnovations/laya/multilingual"
    assert typed["routing"]["repo"] == "convaiinnovations/laya/typed-decisions"
    local = fixture_router(max_loaded=3)
    assert strip_routing(local.predict(FRENCH, QUESTIONS)) == strip_routing(french)
    assert strip_routing(local.predict(ENGLISH, QUESTIONS)) == strip_routing(english)


@pytest.mark.parametrize("source", ["english", "en", "convaiinnovations/laya"])
def test_never_downloading_router_finds_a_name_registered_by_alias_in_the_cache(source):
    router = Router(models={"ours": source}, downloads="never")
    answer = router.predict(ENGLISH, QUESTIONS, model="ours")
    assert answer["routing"]["model"] == "ours"
    assert_close(strip_routing(fixture_router().predict(ENGLISH, QUESTIONS)), strip_routing(answer))


def test_never_downloading_router_reports_a_missing_directory_as_a_path(tmp_path):
    router = Router(models={"ours": str(tmp_path / "gone")}, downloads="never")
    with pytest.raises(CheckpointUnavailable, match="Local model path not found: '.*gone'"):
        router.predict(ENGLISH, QUESTIONS, model="ours")


def join_all(threads: list[threading.Thread], timeout: float = 120.0) -> None:
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    assert not any(t.is_alive() for t in threads), "a thread is stuck (deadlock?)"


def test_concurrent_load_builds_once():
    router = fixture_router()
    builds: list[str] = []
    build = router._build

    def counted(key, source):
        builds.append(key)
        return build(key, source)

    router._build = counted
    loads = Recorder()
    router.add_hook(loads)
    barrier = threading.Barrier(8)
    got: list[Any] = []

    def worker():
        barrier.wait()
        got.append(router.load("english"))

    join_all([threading.Thread(target=worker) for _ in range(8)])
    assert builds == ["english"] and loads.events() == ["on_load"]
    assert len(got) == 8 and all(agent is got[0] for agent in got)


class WatchedFuture(Future):
    """A build's Future that counts the threads that have come to wait on its result."""

    waiting = threading.Semaphore(0)

    def result(self, timeout: float | None = None) -> Any:
        WatchedFuture.waiting.release()
        return super().result(timeout)


def test_failing_build_fails_every_waiter_and_leaves_router_usable(tmp_path, monkeypatch):
    monkeypatch.setattr(residency, "Future", WatchedFuture)
    monkeypatch.setattr(WatchedFuture, "waiting", threading.Semaphore(0))
    router = fixture_router(models={"broken": str(tmp_path)})  # a directory without a checkpoint
    entered, release = threading.Event(), threading.Event()
    build = router._build

    def slow(key, source):
        entered.set()
        release.wait(60)
        return build(key, source)

    router._build = slow
    errors: list[BaseException] = []

    def worker():
        try:
            router.load("broken")
        except Exception as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    threads[0].start()
    assert entered.wait(60)
    for thread in threads[1:]:
        thread.start()
    for _ in threads[1:]:  # the other seven wait on the in-flight build
        assert WatchedFuture.waiting.acquire(timeout=60)
    release.set()
    for thread in threads:
        thread.join(60)
    assert not any(t.is_alive() for t in threads), "a thread is stuck (deadlock?)"
    assert len(errors) == 8 and all(e is errors[0] for e in errors)
    assert isinstance(errors[0], FileNotFoundError) and router.loaded == []
    router._build = build
    assert router.predict(ENGLISH, QUESTIONS)["routing"]["model"] == "english"
    with pytest.raises(FileNotFoundError) as again:
        router.load("broken")
    assert again.value is not errors[0]


def test_threads_with_one_resident_checkpoint_answer_as_single_threaded():
    requests = [(MIXED_STATES[i % 6] + f" ({i})", QUESTIONS) for i in range(32)]
    reference = fixture_router(max_loaded=3)
    expected = [reference.predict(s, q) for s, q in requests]
    router = fixture_router(max_loaded=1)
    got: dict[int, Any] = {}
    barrier = threading.Barrier(32)

    def worker(i):
        barrier.wait()
        got[i] = router.predict(*requests[i])

    join_all([threading.Thread(target=worker, args=(i,)) for i in range(32)])
    assert_close(expected, [got[i] for i in range(32)])
    assert len(router.loaded) == 1


def test_a_batch_size_that_is_not_a_whole_number_is_refused_before_any_hook():
    rec = Recorder()
    router = Router(hooks=rec)
    with pytest.raises(ValueError, match="batch_size must be a whole number of states"):
        router.predict_batch([{"state": ENGLISH, "questions": QUESTIONS}], batch_size="8")
    assert rec.log == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"models": [("x", "/tmp")]}, "models must be a mapping of name -> value, got list"),
        ({"revisions": 5}, "revisions must be a mapping of name -> value, got int"),
        ({"calibration": "file.json"}, "calibration must be a mapping of name -> value, got str"),
        ({"agent_kwargs": [("fast", True)]}, "agent_kwargs must be a mapping of name -> value"),
        ({"models": {"ours": None}}, "checkpoint source for 'ours' must be a repo id"),
        ({"models": {"ours": "  "}}, "checkpoint source for 'ours' must be a repo id"),
    ],
)
def test_router_arguments_that_map_names_are_checked(kwargs, message):
    with pytest.raises(TypeError, match=message):
        Router(**kwargs)


def test_register_needs_a_source():
    router = fixture_router()
    for source in (None, "", ("", None)):
        with pytest.raises(TypeError, match="checkpoint source for 'ours' must be a repo id"):
            router.register("ours", source)
    assert "ours" not in router.models


# --------------------------------------------------------------------------- the published defaults


def test_router_with_no_arguments_routes_as_published():
    """Router(): English text to english, other languages and text whose language cannot be
    told to multilingual (its default); the bundled mini only where named."""
    router = Router()
    assert router.default == "multilingual"
    assert router.route(ENGLISH).model == "english"
    assert router.route(FRENCH).model == "multilingual"
    undecided = router.route("12345 !!! 678")
    assert undecided.model == "multilingual" and "using default (multilingual)" in undecided.reason
    answered = router.predict("12345 !!! 678", QUESTIONS)
    assert answered["routing"]["model"] == "multilingual"
    assert router.predict(ENGLISH, QUESTIONS, model="mini")["routing"]["model"] == "mini"


def test_router_offline_without_the_routed_checkpoint_names_mini(tmp_path):
    """Not cached and offline: one line naming laya.load('mini') and --model mini, never an
    answer from another checkpoint."""
    code = (
        "import laya, sys\n"
        "try:\n"
        "    laya.Router().predict('We were billed twice, refund it', "
        "{'q': {'type': 'noul', 'instructions': 'Refund?'}})\n"
        "except laya.errors.CheckpointUnavailable as exc:\n"
        "    print(exc)\n"
        "    sys.exit(3)\n"
    )
    env = {"HF_HUB_CACHE": str(tmp_path / "empty"), "HF_HUB_OFFLINE": "1"}
    ran = subprocess.run(
        [sys.executable, "-c", code],
        env={**_env_without_defaults(), **env},
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 3, ran.stderr
    (line,) = ran.stdout.strip().splitlines()
    assert "convaiinnovations/laya" in line and "HF_HUB_OFFLINE" in line
    assert "--model mini" in line and "laya.load('mini')" in line


def _env_without_defaults() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "LAYA_DEFAULT_MODEL"}
