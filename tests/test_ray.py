"""Ray: the Serve app against a local Router over real HTTP, Ray Data scoring, ``laya batch``.

One local Ray instance (2 CPUs, no dashboard, 127.0.0.1) runs for the whole module, with one Serve
application on the fixture checkpoints (registered under the built-in names, as in
tests/test_server.py). The bundled ``mini`` is checked when it is installed.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

# Before Ray is imported: a loopback-only node (every Ray server on 127.0.0.1), no usage reports.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
# Serve kills an HTTP proxy not ready within 5 s or failing a 10 s health check: on a busy machine
# it started after that and every test of the module failed with ActorDiedError. The controller
# reads these when the cluster starts.
os.environ.setdefault("RAY_SERVE_PROXY_READY_CHECK_TIMEOUT_S", "120")
os.environ.setdefault("RAY_SERVE_PROXY_HEALTH_CHECK_TIMEOUT_S", "120")
os.environ.setdefault("RAY_SERVE_PROXY_HEALTH_CHECK_PERIOD_S", "30")
# Ray starts its workers at niceness 15, so beside busy processes they got almost no CPU and the
# module ran last, for minutes: the tests' workers run at the priority of the suite itself.
os.environ.setdefault("RAY_worker_niceness", "0")
ray = pytest.importorskip("ray", reason="the ray extra is not installed")
pytestmark = pytest.mark.slow  # a local Ray instance and a Serve application

import httpx  # noqa: E402
from conftest import BERT, MODERNBERT, QUESTIONS  # noqa: E402
from golden import assert_close  # noqa: E402
from test_server import BAD_BATCHES, BAD_REQUESTS, ENGLISH, FRENCH, free_port  # noqa: E402
from test_server_batcher import SETTINGS, STATES  # noqa: E402

from laya.cli.batch import batch_main  # noqa: E402
from laya.errors import InvalidRequest  # noqa: E402
from laya.hooks import BaseHook  # noqa: E402
from laya.ray import score_dataset, serve_app, serve_main  # noqa: E402
from laya.ray.scale import checkpoint_for  # noqa: E402
from laya.router import Router  # noqa: E402
from laya.server import (  # noqa: E402
    MINI_DIR,
    Settings,
    SettingsError,
    build_router,
    decode_body,
    parse_batch,
    parse_single,
    predict_batch,
    predict_single,
    refusal,
    render_batch,
    render_result,
    settings_from,
)

needs_mini = pytest.mark.skipif(
    not MINI_DIR.is_dir(), reason="the bundled mini is not installed yet"
)


class ReplicaPid(BaseHook):
    """Marks every result with the process that answered it (state kept per replica)."""

    def __init__(self) -> None:
        self.calls = 0

    def on_predict_end(self, ctx: Any) -> None:
        self.calls += 1
        for result in ctx.results or ():
            result["x_answered_by"] = {"pid": os.getpid(), "calls": self.calls}


def replica_hooks() -> list:
    return [ReplicaPid()]


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        log_to_driver=False,
    )
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def local() -> Router:
    """The Router each replica builds, here in the test process."""
    return build_router(SETTINGS)


@pytest.fixture(scope="module")
def base_url(cluster: None) -> Iterator[str]:
    from ray import serve

    port = free_port()
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    app = serve_app(
        settings=SETTINGS,
        ray_actor_options={"num_cpus": 0},  # leaves both CPUs to Ray Data
        hooks_factory=replica_hooks,
    )
    serve.run(app, name="laya", route_prefix="/")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        serve.shutdown()


@pytest.fixture(scope="module")
def client(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=120) as http:
        yield http


def served_result(reply: dict) -> dict:
    """A reply without the replica hook's mark (checked: another process answered it)."""
    mark = reply.pop("x_answered_by")
    assert mark["pid"] != os.getpid() and mark["calls"] >= 1
    return reply


# --------------------------------------------------------------------------- online


@pytest.mark.parametrize("state", [ENGLISH, FRENCH, {"message": ENGLISH, "tier": "gold"}])
def test_single_equals_local_router(client: httpx.Client, local: Router, state: Any) -> None:
    reply = client.post("/v1/systemone", json={"state": state, "questions": QUESTIONS})
    assert reply.status_code == 200, reply.text
    expected = render_result(
        predict_single(local, parse_single({"state": state, "questions": QUESTIONS}), SETTINGS)
    )
    assert_close(served_result(reply.json()), expected)


def test_batch_equals_local_router(client: httpx.Client, local: Router) -> None:
    body = {"states": STATES[:10] + [FRENCH], "questions": QUESTIONS, "min_confidence": 0.5}
    reply = client.post("/v1/systemone/batch", json=body)
    assert reply.status_code == 200, reply.text
    results = reply.json()["results"]
    expected = render_batch(predict_batch(local, parse_batch(body), SETTINGS))
    assert_close({**reply.json(), "results": [served_result(r) for r in results]}, expected)


def test_32_concurrent_requests_share_batches(base_url: str, local: Router) -> None:
    bodies = [
        {"state": s, "questions": QUESTIONS, **({"min_confidence": 0.6} if i % 4 == 0 else {})}
        for i, s in enumerate(STATES[:31] + [FRENCH])
    ]

    async def post_all() -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=base_url, timeout=120) as http:
            return await asyncio.gather(*(http.post("/v1/systemone", json=b) for b in bodies))

    replies = asyncio.run(post_all())
    assert [r.status_code for r in replies] == [200] * 32
    batches = httpx.get(base_url + "/health").json()["batches"]  # the replica's own batcher
    assert batches["requests"] >= 32
    for body, reply in zip(bodies, replies):
        expected = render_result(predict_single(local, parse_single(body), SETTINGS))
        assert_close(served_result(reply.json()), expected)


def test_an_error_stays_with_its_own_request(base_url: str, local: Router) -> None:
    """A request that fails at inference, batched with good ones, fails alone with serve's error."""
    bad = {"state": ENGLISH, "questions": QUESTIONS, "model": "./models/nope"}
    bodies = [bad] + [{"state": s, "questions": QUESTIONS} for s in STATES[:7]]

    async def post_all() -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=base_url, timeout=120) as http:
            return await asyncio.gather(*(http.post("/v1/systemone", json=b) for b in bodies))

    first, *rest = asyncio.run(post_all())
    assert all(r.status_code == 200 for r in rest)
    with pytest.raises(InvalidRequest) as raised:
        predict_single(local, parse_single(bad), SETTINGS)
    expected = refusal(raised.value)
    assert (first.status_code, first.json()) == (expected.status, {"detail": expected.detail})


def expected_refusal(raw: bytes, parse: Any, predict: Any, local: Router) -> tuple[int, dict]:
    """What ``laya serve`` answers: the server's own parse (and predict) functions decide."""
    try:
        predict(local, parse(decode_body(raw), SETTINGS), SETTINGS)
    except Exception as exc:  # noqa: BLE001 - whatever it is, laya serve maps it so
        answer = refusal(exc)
        return answer.status, {"detail": answer.detail}
    raise AssertionError("the request was expected to be refused")


@pytest.mark.parametrize("case", BAD_REQUESTS, ids=[c[0] for c in BAD_REQUESTS])
def test_bad_single_request_as_laya_serve(client: httpx.Client, local: Router, case: tuple) -> None:
    kwargs = case[1]
    raw = kwargs.get("content") or json.dumps(kwargs["json"]).encode()
    reply = client.post("/v1/systemone", content=raw, headers={"Content-Type": "application/json"})
    assert (reply.status_code, reply.json()) == expected_refusal(
        raw, parse_single, predict_single, local
    )


@pytest.mark.parametrize("case", BAD_BATCHES, ids=[c[0] for c in BAD_BATCHES])
def test_bad_batch_request_as_laya_serve(client: httpx.Client, local: Router, case: tuple) -> None:
    raw = json.dumps(case[1]).encode()
    reply = client.post(
        "/v1/systemone/batch", content=raw, headers={"Content-Type": "application/json"}
    )
    assert (reply.status_code, reply.json()) == expected_refusal(
        raw, parse_batch, predict_batch, local
    )


def test_health_and_models(client: httpx.Client, local: Router) -> None:
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["default_model"] == "english"
    assert set(health["loaded"]) == set(local.loaded)
    assert set(client.get("/models").json()["checkpoints"]) == set(local.models)
    assert client.get("/nowhere").status_code == 404


def test_bad_settings_fail_on_the_driver(cluster: None, capsys: Any) -> None:
    with pytest.raises(ValueError, match="unknown model 'nope'"):
        serve_app(settings=SETTINGS, default="nope")
    with pytest.raises(SettingsError, match="--replicas='2': needs --ray"):
        settings_from(["--replicas", "2"], {})
    assert serve_main(["--ray", "--replicas", "0"]) == 2
    capsys.readouterr()
    assert serve_main(["--ray", "--replicas", "x"]) == 2
    assert capsys.readouterr().err == (
        "laya serve: error: argument --replicas: invalid int value: 'x' (see laya serve --help)\n"
    )


@needs_mini
def test_mini_over_serve(client: httpx.Client) -> None:
    body = {"state": ENGLISH, "questions": QUESTIONS, "model": "mini"}
    mini = Router(models={"mini": str(MINI_DIR)}, default="mini")
    reply = client.post("/v1/systemone", json=body)
    assert reply.status_code == 200, reply.text
    expected = render_result(
        predict_single(mini, parse_single(body), Settings(models={"mini": str(MINI_DIR)}))
    )
    assert_close(served_result(reply.json())["answers"], expected["answers"])


# --------------------------------------------------------------------------- offline


def rows(n: int) -> list[dict]:
    return [
        {"id": i, "state": STATES[i % len(STATES)], "tier": ["gold", "free"][i % 2]}
        for i in range(n)
    ]


def local_results(model: str, states: list[Any], min_confidence: Any = None) -> list[dict]:
    models, pinned = checkpoint_for(model)
    router = Router(models=models)
    requests = [{"state": s, "questions": QUESTIONS, **pinned} for s in states]
    return router.predict_batch(requests, batch_size=64, min_confidence=min_confidence)


@pytest.mark.parametrize("model", [str(MODERNBERT), pytest.param("mini", marks=needs_mini)])
def test_score_dataset_matches_predict_batch(cluster: None, model: str) -> None:
    data = rows(70)  # more rows than one batch of 64
    scored = score_dataset(
        ray.data.from_items(data), QUESTIONS, model=model, batch_size=64, min_confidence=0.4
    )
    out = sorted(scored.take_all(), key=lambda r: r["id"])
    expected = local_results(model, [r["state"] for r in data], min_confidence=0.4)
    assert [r["id"] for r in out] == list(range(70))
    for row, source, result in zip(out, data, expected):
        assert row["tier"] == source["tier"] and row["state"] == source["state"]
        assert_close(json.loads(row["result"]), result)
        answers = result["answers"]
        assert row["department"] == answers["department"]["choice"]
        assert_close(row["urgency"], answers["urgency"]["score"])
        assert_close(row["churn_risk"], answers["churn_risk"]["noul"])
        assert_close(row["churn_risk_confidence"], answers["churn_risk"]["confidence"])


def test_score_dataset_state_key_prefix_and_ray_resources(cluster: None) -> None:
    data = [{"id": i, "state": s, "result": "kept"} for i, s in enumerate(STATES[:5])]
    ds = ray.data.from_items(data)
    ds = score_dataset(
        ds, QUESTIONS, model=str(BERT), state_key="message", output_prefix="laya_", num_cpus=1
    )
    out = sorted(ds.take_all(), key=lambda r: r["id"])
    expected = local_results(str(BERT), [{"message": s} for s in STATES[:5]])
    assert all(r["result"] == "kept" for r in out)
    for r, e in zip(out, expected, strict=True):
        assert_close(e, json.loads(r["laya_result"]))
    assert [r["laya_department"] for r in out] == [
        e["answers"]["department"]["choice"] for e in expected
    ]


BAD_INPUTS = [
    ("no state column", dict(state_column="text"), "no state column 'text'"),
    ("bad question", dict(questions={"mood": {"type": "vibe", "instructions": "x"}}), "'mood'"),
    (
        "bad question id",
        dict(questions={"": {"type": "noul", "instructions": "x"}}),
        "bad questions",
    ),
    ("unknown model", dict(model="englsh"), "unknown model 'englsh'"),
    ("missing directory", dict(model="./no/such/checkpoint"), "no checkpoint directory"),
    ("not a checkpoint", dict(model=str(MODERNBERT.parent)), "rl_agent_config.json"),
    ("answer column taken", dict(questions={"tier": QUESTIONS["urgency"]}), "column 'tier'"),
    ("bad min_confidence", dict(min_confidence=1.5), "min_confidence"),
]


@pytest.mark.parametrize(
    ("kwargs", "message"), [c[1:] for c in BAD_INPUTS], ids=[c[0] for c in BAD_INPUTS]
)
def test_bad_input_fails_on_the_driver(cluster: None, kwargs: dict, message: str) -> None:
    ds = ray.data.from_items(rows(3))
    kwargs = {"questions": QUESTIONS, "model": str(MODERNBERT), **kwargs}
    with pytest.raises(ValueError) as raised:
        score_dataset(ds, **kwargs)
    assert message in str(raised.value)


# --------------------------------------------------------------------------- laya batch


def test_laya_batch_command(cluster: None, tmp_path: Any) -> None:
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    data = rows(20)
    source.write_text("".join(json.dumps(r) + "\n" for r in data))
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps(QUESTIONS))
    argv = [
        "--ray",
        str(source),
        str(target),
        "--questions",
        str(questions),
        "--model",
        str(MODERNBERT),
    ]
    assert batch_main([*argv, "--batch-size", "8"]) == 0
    out = [json.loads(line) for line in target.read_text().splitlines()]
    assert [r["id"] for r in out] == list(range(20))
    expected = local_results(str(MODERNBERT), [{"request": r["state"]} for r in data])
    for r, e in zip(out, expected, strict=True):
        assert_close(e, r["result"])


def test_laya_batch_errors_leave_no_output(cluster: None, tmp_path: Any, capsys: Any) -> None:
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text(json.dumps({"state": "hi"}) + "\n")
    command = ["--ray", str(source), str(target)]
    for extra, message in [
        (["--preset", "triage", "--state-column", "text"], "in.jsonl:1: no 'text' field"),
        (["--preset", "triage", "--model", "nope"], "unknown model 'nope'"),
        (["--preset", "nope"], "unknown preset 'nope'"),
        (["--preset", "triage", "--questions", "q.json"], "not both"),
    ]:
        assert batch_main(command + extra) == 2
        assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [source]


MIXED_STATES = [
    "please refund the duplicate charge",
    {"subject": "refund", "body": "charged twice"},
    {"ticket": {"id": 7, "text": "the app crashes"}},
    [{"role": "user", "content": "cancel my plan"}],
]


def test_score_dataset_reads_states_sent_as_json_text(cluster: None) -> None:
    texts = [{"state": json.dumps(s), "id": i} for i, s in enumerate(MIXED_STATES)]
    ds = score_dataset(ray.data.from_items(texts), QUESTIONS, model=str(BERT), state_json=True)
    out = sorted(ds.take_all(), key=lambda r: r["id"])
    expected = local_results(str(BERT), MIXED_STATES)
    for row, result in zip(out, expected, strict=True):
        assert_close(json.loads(row["result"]), result)


def test_laya_batch_ray_takes_every_state_kind_quietly(cluster: None, tmp_path: Any) -> None:
    """Strings, objects of different keys and lists in one file (one Arrow column cannot hold
    them): --ray answers them as laya batch does here, in a process of its own, and Ray's log
    lines stay off the terminal."""
    source = tmp_path / "in.jsonl"
    source.write_text(
        "".join(json.dumps({"n": i, "state": s}) + "\n" for i, s in enumerate(MIXED_STATES))
    )
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps(QUESTIONS))
    common = [str(source), "--questions", str(questions), "--model", str(MODERNBERT)]
    assert batch_main([*common, "--out", str(tmp_path / "here.jsonl")]) == 0
    command = [
        sys.executable,
        "-m",
        "laya",
        "batch",
        *common,
        "--ray",
        "--out",
        str(tmp_path / "ray.jsonl"),
    ]
    env = {**os.environ, "RAY_ADDRESS": "local"}
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("wrote 4 rows to ")
    assert not [line for line in proc.stderr.splitlines() if " INFO " in line or "WARNING" in line]
    here, there = (
        [json.loads(x) for x in (tmp_path / f).read_text().splitlines()]
        for f in ("here.jsonl", "ray.jsonl")
    )
    assert [r["n"] for r in there] == [0, 1, 2, 3]
    assert [r["state"] for r in there] == MIXED_STATES
    for a, b in zip(here, there, strict=True):
        assert_close(a["result"], b["result"])


def test_laya_batch_ray_skips_a_bad_line_naming_it(
    cluster: None, tmp_path: Any, capsys: Any
) -> None:
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text('{"state": "hi"}\n\n{"state": null}\n')
    command = [str(source), str(target), "--ray", "--questions", str(tmp_path / "q.json")]
    (tmp_path / "q.json").write_text(json.dumps(QUESTIONS))
    assert batch_main([*command, "--model", str(MODERNBERT)]) == 2
    assert "bad row " + f"{source}:3: 'state' must not be None" in capsys.readouterr().err
    assert [json.loads(x)["state"] for x in target.read_text().splitlines()] == ["hi"]


def test_laya_batch_ray_resumes_after_the_rows_there(cluster: None, tmp_path: Any) -> None:
    """Rows Ray hands back are written one by one; --resume sends Ray only the rest."""
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows(4)))
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps(QUESTIONS))
    command = ["--ray", str(source), str(target), "--questions", str(questions)]
    command += ["--model", str(MODERNBERT)]
    assert batch_main(command) == 0
    whole = target.read_text().splitlines()
    target.write_text("\n".join(whole[:2]) + "\n")
    assert batch_main([*command, "--resume"]) == 0
    for a, b in zip(whole, target.read_text().splitlines(), strict=True):
        assert_close(json.loads(a)["result"], json.loads(b)["result"])


def test_import_is_light() -> None:
    import subprocess

    code = "import sys, laya, laya.ray, laya.server; print('ray' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
