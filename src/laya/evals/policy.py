"""The gates of ``laya eval run`` and ``laya eval compare``: fixed limits on a report's figures
(``--min-accuracy``, ``--max-ece``, ``--min M=V``, ``--max M=V``) and a gate policy file.

A policy is ``{"version": 1, "rules": [{"slice": {dimension: value}, "metric", "min_count",
and one of "min", "max", "max_drop", "max_increase"}]}``: a rule reads the figure of one slice
(no ``slice``: the overall figures), refuses a slice with fewer than ``min_count`` answers, and
the relative rules (``max_drop``, ``max_increase``) compare with the baseline report, so they
need one (docs/cli.md, "Gate policy"). Every check returns its failures as lines; a policy file
that breaks a rule of this format is refused whole before anything is evaluated.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..commands import read_input_text
from .dataset import EvalError
from .report import SLICE_DIMENSIONS, is_number

__all__ = ["Limit", "Rule", "check_limits", "check_policy", "read_policy"]

_BOUNDS = ("min", "max", "max_drop", "max_increase")


@dataclass(frozen=True)
class Limit:
    """A fixed bound on one overall figure: ``kind`` is ``min`` or ``max``."""

    metric: str
    kind: str
    value: float


@dataclass(frozen=True)
class Rule:
    """One rule of a gate policy."""

    metric: str
    bound: str
    value: float
    slice: tuple[tuple[str, str], ...] = ()
    min_count: int = 0

    @property
    def relative(self) -> bool:
        """Whether the rule compares with a baseline."""
        return self.bound in ("max_drop", "max_increase")


def check_limits(overall: Mapping[str, object], limits: list[Limit]) -> list[str]:
    """One line per limit the figures break (a figure the report lacks breaks its limit)."""
    failures = []
    for limit in limits:
        value = overall.get(limit.metric)
        if not is_number(value):
            failures.append(f"{limit.metric}: not in the report, so its {limit.kind} cannot hold")
        elif limit.kind == "min" and value < limit.value:
            failures.append(f"{limit.metric} {value:.4f} < min {limit.value:g}")
        elif limit.kind == "max" and value > limit.value:
            failures.append(f"{limit.metric} {value:.4f} > max {limit.value:g}")
    return failures


def read_policy(path: str) -> list[Rule]:
    """The rules of a gate policy file, every field checked (errors name the rule and field)."""
    where = f"--gate-policy {path}"
    try:
        data = json.loads(read_input_text(path, "gate policy"))
    except ValueError as exc:
        raise EvalError(f"{where}: {exc}") from None
    if not isinstance(data, dict) or data.get("version") != 1:
        raise EvalError(f'{where}: a gate policy is {{"version": 1, "rules": [...]}}')
    rules = data.get("rules")
    if not isinstance(rules, list) or not rules:
        raise EvalError(f"{where}: field 'rules' must be a non-empty list of rules")
    return [_rule(rule, f"{where}, rule {i}") for i, rule in enumerate(rules)]


def _rule(rule: object, where: str) -> Rule:
    if not isinstance(rule, dict):
        raise EvalError(f"{where}: a rule is a JSON object")
    metric = rule.get("metric")
    if not isinstance(metric, str) or not metric:
        raise EvalError(f"{where}: field 'metric' must name a figure, e.g. choice_accuracy")
    bounds = [b for b in _BOUNDS if b in rule]
    if len(bounds) != 1:
        raise EvalError(f"{where}: give exactly one of {', '.join(_BOUNDS)}")
    value = rule[bounds[0]]
    if not is_number(value):
        raise EvalError(f"{where}: field {bounds[0]!r} must be a finite number, got {value!r}")
    count = rule.get("min_count", 0)
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise EvalError(f"{where}: field 'min_count' must be a whole number >= 0, got {count!r}")
    unknown = sorted(set(rule) - {"slice", "metric", "min_count", *_BOUNDS})
    if unknown:
        raise EvalError(f"{where}: unknown field {unknown[0]!r}")
    return Rule(metric, bounds[0], float(value), _slice(rule.get("slice"), where), count)


def _slice(value: object, where: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict) or len(value) != 1:
        raise EvalError(f"{where}: field 'slice' is one {{dimension: value}} pair")
    ((dimension, name),) = value.items()
    if dimension not in SLICE_DIMENSIONS or not isinstance(name, str):
        raise EvalError(
            f"{where}: field 'slice': dimension {dimension!r} must be one of "
            f"{', '.join(SLICE_DIMENSIONS)}, with a string value"
        )
    return ((dimension, name),)


def check_policy(
    report: Mapping[str, Any], rules: list[Rule], baseline: Mapping[str, Any] | None
) -> list[str]:
    """One line per rule the report breaks; relative rules without a baseline are refused."""
    if baseline is None and any(rule.relative for rule in rules):
        raise EvalError("the gate policy has max_drop or max_increase rules; give --baseline")
    failures = []
    for rule in rules:
        failure = _broken(rule, report, baseline)
        if failure:
            failures.append(f"policy {_name(rule)}: {failure}")
    return failures


def _broken(
    rule: Rule, report: Mapping[str, Any], baseline: Mapping[str, Any] | None
) -> str | None:
    figures = _figures(report, rule)
    count = figures.get("n_answers", 0) if figures is not None else 0
    if figures is None or count < rule.min_count:
        return f"{count} answers, fewer than min_count {rule.min_count}"
    value = figures.get(rule.metric)
    if not is_number(value):
        return "the report has no such figure"
    if rule.bound == "min":
        return f"{value:.4f} < {rule.value:g}" if value < rule.value else None
    if rule.bound == "max":
        return f"{value:.4f} > {rule.value:g}" if value > rule.value else None
    before = (_figures(baseline, rule) or {}).get(rule.metric) if baseline else None
    if not is_number(before):
        return "the baseline has no such figure to compare with"
    change = value - before
    if rule.bound == "max_drop" and -change > rule.value:
        return f"dropped {-change:.4f} from {before:.4f}, more than {rule.value:g}"
    if rule.bound == "max_increase" and change > rule.value:
        return f"rose {change:.4f} from {before:.4f}, more than {rule.value:g}"
    return None


def _figures(report: Mapping[str, Any], rule: Rule) -> Mapping[str, Any] | None:
    if not rule.slice:
        overall: Mapping[str, Any] | None = report.get("overall")
        return overall
    ((dimension, name),) = rule.slice
    sliced: Mapping[str, Any] | None = (report.get("slices") or {}).get(dimension, {}).get(name)
    return sliced


def _name(rule: Rule) -> str:
    where = "".join(f"[{d}={v}]" for d, v in rule.slice)
    return f"{rule.metric}{where} {rule.bound} {rule.value:g}"
