"""One pinning rule and one request-key list for every front end (laya.router.pins,
laya.router.requests): the command line, the server and Ray pin the same names to the same
checkpoints, and read the same request keys."""

from __future__ import annotations

import pytest
from conftest import MODERNBERT

from laya.cli import command as cli
from laya.errors import InvalidRequest
from laya.ray.scale import checkpoint_for
from laya.router import Router
from laya.router.pins import pin
from laya.router.requests import CONTROL_KEYS, REQUEST_KEYS
from laya.server.inference import resolve_model
from laya.server.wire import Controls

NAMES = [
    ("english", "english"),
    (" EN ", "english"),
    ("Default", "english"),
    ("ml", "multilingual"),
    ("typed", "typed-decisions"),
    ("mini", "mini"),
    ("convaiinnovations/laya-multilingual", "multilingual"),
    ("convaiinnovations/laya", None),
    ("auto", None),
    ("", None),
]


@pytest.mark.parametrize(("value", "name"), NAMES)
def test_the_command_line_the_server_and_ray_pin_a_name_alike(value, name):
    router = Router()
    assert cli.pin(router, value, "--model") == name
    assert resolve_model(router, value) == name
    assert checkpoint_for(value)[1].get("model") == name


def test_a_directory_gets_one_name_on_the_command_line_and_on_ray():
    router = Router()
    name = cli.pin(router, str(MODERNBERT), "--model")
    models, pinned = checkpoint_for(str(MODERNBERT))
    assert pinned == {"model": name} and models == {name: (str(MODERNBERT.resolve()), None)}
    assert router.models[name] == (str(MODERNBERT.resolve()), None)
    assert cli.pin(router, str(MODERNBERT), "--model") == name  # registered once, then reused


def test_a_server_refuses_paths_and_routes_names_it_does_not_know():
    router = Router()
    with pytest.raises(InvalidRequest, match="model"):
        resolve_model(router, str(MODERNBERT))
    assert resolve_model(router, "jev-latest") is None  # a Jev client's own model name
    with pytest.raises(InvalidRequest, match="did you mean 'english'"):
        resolve_model(router, "englsh")  # a misspelt name is not answered by another
    with pytest.raises(InvalidRequest, match="--model"):
        pin("no-such-checkpoint", Router().models, local=True, where="--model")


def test_one_request_key_list():
    assert ("state", "questions", *CONTROL_KEYS) == REQUEST_KEYS
    assert set(CONTROL_KEYS) <= set(Controls.model_fields)  # what a request body may set
    assert {*REQUEST_KEYS, "id"} == cli.LINE_KEYS
