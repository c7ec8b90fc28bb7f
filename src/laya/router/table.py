"""Which checkpoint reads a request: the routing table (docs/routing.md), pure.

:func:`choose` applies the precedence rows in order — an explicit ``model``, an explicit
``task``, a typed-decisions workflow (with ``auto_task_detection``), a language hint (``lang``,
the call's ``lang_guess``, the Router's), and finally the language detector — and says why in a
sentence. No hooks, no loading, no state of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..checkpoint import Source, canonical_name
from .names import display_source

__all__ = [
    "TYPED_DECISIONS_WORKFLOWS",
    "RouteDecision",
    "Table",
    "check_hint",
    "choose",
    "english_from_code",
    "match_typed_decisions_workflow",
]

TYPED_DECISIONS_WORKFLOWS: dict[str, frozenset[str]] = {
    "agent_trace_observability": frozenset(
        {"action", "needs_review", "outcome", "risk", "urgency"}
    ),
    "customer_service": frozenset({"action", "category", "churn_risk", "needs_human", "urgency"}),
    "invoice_processing": frozenset(
        {"discrepancy_severity", "disposition", "duplicate", "matches_order", "urgency"}
    ),
    "security_incidents": frozenset(
        {"credential_compromise", "disposition", "severity", "true_positive", "urgency"}
    ),
}

_ABSTAINING_CODES = frozenset({"c", "posix", "und", "zxx", "mul"})
_ENGLISH_CODES = frozenset({"en", "eng", "english"})


class RouteDecision(dict[str, Any]):
    """Which checkpoint answers a request and why: keys model, repo, reason, detection, workflow."""

    __slots__ = ()

    @property
    def model(self) -> str:
        """The checkpoint name."""
        return str(self["model"])

    @property
    def reason(self) -> str:
        """A sentence saying why this checkpoint was chosen."""
        return str(self["reason"])

    def __repr__(self) -> str:
        return f"RouteDecision(model={self['model']!r}, reason={self['reason']!r})"


@dataclass(frozen=True)
class Table:
    """What the routing table reads of its Router: names, sources and policy."""

    resolve: Callable[..., str]  # (name, field="model") -> canonical name
    sources: Mapping[str, Source | None]
    default: str
    auto_task_detection: bool = False
    lang_guess: object = None


def match_typed_decisions_workflow(questions: Iterable[object] | None) -> str | None:
    """The typed-decisions workflow whose question ids are exactly these, if any."""
    ids = set(questions or ())
    return next((wf for wf, sig in TYPED_DECISIONS_WORKFLOWS.items() if ids == sig), None)


def english_from_code(value: object) -> bool | None:
    """Read a language code or locale as English (True), not English (False) or abstain (None).

    ``en``, ``en-US``, ``en_US.UTF-8`` and ``English`` are English; ``C``, ``POSIX``, ``und``,
    ``zxx``, ``mul`` and blanks abstain. A bool is taken as the answer to "is it English?".
    """
    if value is None or isinstance(value, bool):
        return value
    code = str(value).strip().lower().split(".", 1)[0]
    primary = code.replace("_", "-").split("-", 1)[0]
    if not primary or primary in _ABSTAINING_CODES:
        return None
    return primary in _ENGLISH_CODES


def check_hint(name: str, value: object, *, allow_callable: bool) -> None:
    """A language hint is a code string (or, for ``lang_guess``, a callable taking the state)."""
    if value is None or isinstance(value, str) or (allow_callable and callable(value)):
        return
    kinds = "a language code or a callable taking the state" if allow_callable else "a code"
    raise TypeError(f"{name} must be {kinds}, got {type(value).__name__}")


def choose(
    table: Table,
    state: object,
    questions: Iterable[object] | None,
    model: object = None,
    task: object = None,
    lang: object = None,
    lang_guess: object = None,
    explain: bool = False,
) -> RouteDecision:
    """The routing decision by the precedence table (no hooks, no loading)."""
    if model is not None and canonical_name(model) != "auto":
        return _decision(table, table.resolve(model), f"explicit model={model!r}")
    if task is not None:
        typed = str(task).lower().replace("-", "_") == "typed_decisions"
        name = table.resolve("typed-decisions" if typed else task, "task")
        return _decision(table, name, f"explicit task={task!r}")
    workflow = match_typed_decisions_workflow(questions)
    if workflow and table.auto_task_detection:
        reason = f"question ids match the {workflow!r} typed-decisions workflow"
        return _decision(table, "typed-decisions", reason, workflow=workflow)
    hinted = _hinted(state, lang, lang_guess, table.lang_guess)
    if hinted is not None:
        english, reason = hinted
        name = "english" if english else "multilingual"
        return _decision(table, name, reason, workflow=workflow)
    from ..lang.detect import analyse

    detection = analyse(state, explain=explain)
    name, reason = detected_route(detection, table.default)
    return _decision(table, name, reason, detection, workflow)


def _hinted(
    state: object, lang: object, lang_guess: object, router_guess: object
) -> tuple[bool, str] | None:
    """Rows 4-6: an explicit ``lang``, the call's ``lang_guess``, the Router's ``lang_guess``."""
    english = english_from_code(lang)
    if english is not None:
        return english, f"explicit lang={lang!r}"
    for guess, who in ((lang_guess, "lang_guess"), (router_guess, "Router(lang_guess=...)")):
        english = english_from_code(guess(state) if callable(guess) else guess)
        if english is not None:
            text = "English text" if english else "non-English text"
            return english, f"{who}: the caller identified this as {text}"
    return None


def _decision(
    table: Table, name: str, reason: str, detection: object = None, workflow: str | None = None
) -> RouteDecision:
    repo = display_source(table.sources.get(name))
    return RouteDecision(
        model=name, repo=repo, reason=reason, detection=detection, workflow=workflow
    )


def detected_route(det: Mapping[str, Any], default: str) -> tuple[str, str]:
    """Rows 7-13 of the precedence table: checkpoint and reason from the language detector."""
    script = det["script"]
    if script == "unknown":
        return default, f"no letters detected in state; using default ({default})"
    if script != "latin":
        share = 100 * det["non_latin_fraction"]
        return "multilingual", (
            f"non-Latin script ({script}, {share:.0f}% of letters); "
            "the English checkpoint cannot read it"
        )
    language = det.get("identified_language", det["language"])  # laya's code for any language
    if det["is_english"]:
        if language is None:
            return default, (
                "Latin script, language not identified and no non-English letters; "
                f"using default ({default})"
            )
        return "english", "English Latin text"
    segment = det.get("mixed_segment")
    if segment:
        return "multilingual", (
            f"Latin script, mostly English, but a line or field reads as {language!r} "
            f"({segment[:60]!r}); the English checkpoint cannot read it"
        )
    if language:
        return "multilingual", f"Latin script but language looks like {language!r}, not English"
    share = 100 * det["diacritic_rate"]
    return "multilingual", (
        f"Latin script, language not identified but {share:.0f}% non-English letters; "
        "not safe for the English checkpoint"
    )


def detected_language(lang: object, decision: object) -> str | None:
    """The caller's ``lang``, else the language the detector found (None-safe)."""
    if lang is not None:
        return str(lang)  # a code, checked where it entered (check_hint)
    detection = decision.get("detection") if isinstance(decision, Mapping) else None
    if not isinstance(detection, Mapping):
        return None
    found = detection.get("identified_language", detection.get("language"))
    return None if found is None else str(found)
