"""Comparing a runtime's output with the published runtime's golden results."""

from __future__ import annotations

import json
from typing import Any

TOLERANCE = 2e-4


def as_json(value: Any) -> Any:
    """What a result looks like on the wire (int keys become strings, tuples lists)."""
    return json.loads(json.dumps(value))


def assert_matches(expected: Any, got: Any, path: str = "$") -> None:
    """Same keys in the same order, same types and labels; floats within TOLERANCE."""
    if isinstance(expected, dict):
        assert isinstance(got, dict), f"{path}: expected an object, got {got!r}"
        assert list(got) == list(expected), f"{path}: keys {list(got)} != {list(expected)}"
        for key in expected:
            assert_matches(expected[key], got[key], f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), f"{path}: {got!r}"
        for i, (e, g) in enumerate(zip(expected, got)):
            assert_matches(e, g, f"{path}[{i}]")
    elif isinstance(expected, float):
        assert isinstance(got, float), f"{path}: expected a float, got {got!r}"
        assert abs(expected - got) <= TOLERANCE, f"{path}: {got} differs from {expected}"
    else:
        assert type(got) is type(expected) and got == expected, f"{path}: {got!r} != {expected!r}"


def run_case(runtime: Any, case: dict) -> Any:
    """Make the case's call on ``runtime`` and return the result as JSON."""
    options = {
        k: v
        for k, v in case.items()
        if k not in {"call", "expected", "state", "states", "questions"}
    }
    if case["call"] == "predict_batch":
        result = runtime.predict_batch(case["states"], case["questions"], **options)
    else:
        result = getattr(runtime, case["call"])(case["state"], case["questions"], **options)
    return as_json(result)
