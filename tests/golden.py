"""Comparing answers: with the published runtime's golden results, and across computations.

Two computations of the same answer (batched and single, packed and unpacked, PyTorch and ONNX
Runtime, other thread counts or CPU kernels) agree to the fourth decimal, not bit for bit: every
probability within ``TOLERANCE``, the same choice unless its two top probabilities are within it.
"""

from __future__ import annotations

import json
from typing import Any

TOLERANCE = 2e-4


def as_json(value: Any) -> Any:
    """What a result looks like on the wire (int keys become strings, tuples lists)."""
    return json.loads(json.dumps(value))


def assert_matches(expected: Any, got: Any, path: str = "$", ties: bool = False) -> None:
    """Same keys in the same order, same types and labels; floats within TOLERANCE.

    ``ties=True`` also accepts another ``choice`` where the two labels' probabilities are within
    TOLERANCE in both answers (a near tie that rounding may break either way).
    """
    if isinstance(expected, dict):
        assert isinstance(got, dict), f"{path}: expected an object, got {got!r}"
        assert list(got) == list(expected), f"{path}: keys {list(got)} != {list(expected)}"
        for key in expected:
            if ties and key == "choice" and _near_tie(expected, got):
                continue
            assert_matches(expected[key], got[key], f"{path}.{key}", ties)
    elif isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), f"{path}: {got!r}"
        for i, (e, g) in enumerate(zip(expected, got)):
            assert_matches(e, g, f"{path}[{i}]", ties)
    elif isinstance(expected, float):
        assert isinstance(got, float), f"{path}: expected a float, got {got!r}"
        assert abs(expected - got) <= TOLERANCE, f"{path}: {got} differs from {expected}"
    else:
        assert type(got) is type(expected) and got == expected, f"{path}: {got!r} != {expected!r}"


def _near_tie(expected: dict, got: dict) -> bool:
    """Whether two choice answers differ only by a near tie between their chosen labels."""
    a, b = expected.get("choice"), got.get("choice")
    if a == b:
        return False
    probs = [answer.get("probabilities") or {} for answer in (expected, got)]
    try:
        return all(abs(p[str(a)] - p[str(b)]) <= TOLERANCE for p in map(as_json, probs))
    except KeyError:
        return False


def assert_close(expected: Any, got: Any) -> None:
    """Two computations of the same answers agree to the fourth decimal (see the module doc)."""
    assert_matches(as_json(expected), as_json(got), ties=True)


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


def as_agent_result(result: Any) -> Any:
    """An ONNXAgent result with the one value that differs by construction set to the Agent's."""
    if isinstance(result, list):
        return [as_agent_result(r) for r in result]
    return {**result, "model": "laya-rl-agent"} if "model" in result else result
