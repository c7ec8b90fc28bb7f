"""How much a choice depends on where its options stand and what they are called.

:class:`OptionStabilityHook` asks every ``choice`` question again in meaning-preserving variants
(options reordered, or renamed ``A``, ``B``, ``C``... with the same descriptions) within the same
call, maps the variants' answers back to the caller's labels and writes a ``reliability`` record
on the answer: the share of variants that agree, the mean probability they give the original
choice (``soft_stability``) and a decision (``ACCEPT`` / ``VERIFY`` / ``ESCALATE``) against the
hook's thresholds. Pure Python, like the rest of :mod:`laya.hooks` (docs/hooks/examples.md,
docs/migrating.md).
"""

from __future__ import annotations

import random
import string
import threading
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from .context import BaseHook, PredictContext

__all__ = [
    "ALL_VARIANTS",
    "VARIANT_PRESETS",
    "OptionStabilityHook",
    "calibrate_reliability",
    "decide_reliability",
    "make_variants",
]

ALL_VARIANTS = (
    "reversed",
    "shuffle1",
    "shuffle2",
    "shuffle3",
    "letters",
    "letters_reversed",
    "letters_shuffle",
)
VARIANT_PRESETS: dict[str, tuple[str, ...] | None] = {
    "full": None,
    "fast": ("reversed", "letters_reversed"),
}
PROBES = ("reorder", "rename")
MARK = "::rel"
ACCEPT, VERIFY, ESCALATE = "ACCEPT", "VERIFY", "ESCALATE"
Variant = tuple[str, list[str], bool]  # name, labels in the order shown, renamed to letters?


def make_variants(
    labels: Sequence[str],
    seed_key: str,
    n_shuffles: int = 3,
    relabel: bool = True,
    include: Sequence[str] | None = None,
    reorder: bool = True,
) -> list[Variant]:
    """The variants of a choice's labels: reversed, ``n_shuffles`` seeded shuffles and, with
    ``relabel`` (at most 26 options), the letter-renamed original, reversed and shuffled orders.

    Shuffles draw from ``random.Random(crc32(seed_key))``, so a state and question give the same
    variants every time. A variant that repeats the original or an earlier one (same order, same
    naming) is dropped; ``include`` keeps only the named ones; ``reorder=False`` keeps only the
    renamings. The original itself is not returned.
    """
    rng = random.Random(zlib.crc32(seed_key.encode("utf-8")))
    original = list(labels)
    candidates: list[Variant] = []
    if reorder:
        candidates.append(("reversed", original[::-1], False))
        for i in range(1, n_shuffles + 1):
            candidates.append((f"shuffle{i}", rng.sample(original, len(original)), False))
    if relabel and len(original) <= len(string.ascii_uppercase):
        candidates.append(("letters", list(original), True))
        if reorder:
            candidates.append(("letters_reversed", original[::-1], True))
            candidates.append(("letters_shuffle", rng.sample(original, len(original)), True))
    seen = {(tuple(original), False)}
    kept = []
    for name, order, renamed in candidates:
        if include is not None and name not in include:
            continue
        if (tuple(order), renamed) not in seen:
            seen.add((tuple(order), renamed))
            kept.append((name, order, renamed))
    return kept


def decide_reliability(
    soft_stability: float, accept: float | None, escalate: float | None = None
) -> str | None:
    """``ACCEPT`` at or above ``accept``, ``ESCALATE`` under ``escalate``, else ``VERIFY``
    (None without an ``accept`` threshold)."""
    if accept is None:
        return None
    if soft_stability >= accept:
        return ACCEPT
    if escalate is not None and soft_stability < escalate:
        return ESCALATE
    return VERIFY


def calibrate_reliability(
    soft_scores: Sequence[float],
    correct: Sequence[bool],
    target_accuracy: float = 0.9,
    max_escalate_accuracy: float = 1 / 3,
) -> tuple[float, float]:
    """``(accept, escalate)`` thresholds from labelled soft stabilities: ``accept`` is the lowest
    cut whose answers at or above it reach ``target_accuracy`` (1.01: none does); ``escalate``
    the highest cut below it whose answers under it are right at most ``max_escalate_accuracy``
    of the time (0.0: none)."""
    if len(soft_scores) != len(correct):
        raise ValueError(
            f"calibrate_reliability: {len(soft_scores)} scores and {len(correct)} labels; "
            "pass one label per score"
        )
    pairs = [(float(s), bool(c)) for s, c in zip(soft_scores, correct)]
    cuts = sorted({s for s, _ in pairs})
    accept = next((c for c in cuts if _accuracy(pairs, c, above=True) >= target_accuracy), 1.01)
    below = [c for c in cuts if c < accept and any(s < c for s, _ in pairs)]
    escalate = next(
        (c for c in reversed(below) if _accuracy(pairs, c, above=False) <= max_escalate_accuracy),
        0.0,
    )
    return accept, escalate


def _accuracy(pairs: list[tuple[float, bool]], cut: float, *, above: bool) -> float:
    """The share right among the answers at or above ``cut`` (``above``), else under it."""
    kept = [right for score, right in pairs if (score >= cut if above else score < cut)]
    return sum(kept) / len(kept) if kept else 0.0


class Reliability(TypedDict):
    """The ``reliability`` record the hook writes on a choice answer (docs/hooks/examples.md)."""

    probes: list[str]
    option_layout: str
    decision: str | None
    soft_stability: float | None
    stability: float | None
    rename_stability: float | None
    reorder_stability: float | None
    n_variants: int
    distinct_choices: list[object]
    variant_choices: dict[str, object]
    variant_support: dict[str, float]
    n_distinct_choices: int
    checkpoint_layout: str


@dataclass(frozen=True)
class _Probe:
    """One variant of one question: its id in the call, and its label -> caller label map."""

    name: str
    qid: str
    back: dict[str, str]
    renamed: bool


@dataclass(frozen=True)
class _Plan:
    """What one call asks: the probes, the layout, and each question's variants."""

    probes: list[str]
    layout: str
    checkpoint_layout: str
    questions: dict[object, list[_Probe]]


class OptionStabilityHook(BaseHook):
    """Ask each choice again with its options reordered and renamed; report how stable it is.

    ``accept`` / ``escalate``: thresholds on ``soft_stability`` for the decision (None: no
    decision / never escalate). ``probes``: ``"reorder"``, ``"rename"``, ``"all"``, a list of
    these, or None / ``"auto"`` (renaming only when the layout read as published, from a mapping
    ``agent.config``, is ``"parallel"``; a runtime reads ``sequential``, so pass
    ``probes="rename"`` for a checkpoint whose record shows ``checkpoint_layout: "parallel"``).
    ``variants``: ``"full"``, ``"fast"`` or a list of
    :data:`ALL_VARIANTS` names; ``n_shuffles`` seeded shuffles; ``relabel`` allows renaming, for
    choices of at most ``rename_max_options`` options; ``seed`` replaces the state in the
    shuffles' seed.
    """

    def __init__(
        self,
        *,
        accept: float | None,
        escalate: float | None,
        probes: str | Sequence[str] | None = None,
        n_shuffles: int = 3,
        relabel: bool = True,
        rename_max_options: int = 20,
        variants: str | Sequence[str] | None = "full",
        seed: str | None = None,
    ) -> None:
        self.accept = _threshold("accept", accept, 1.01)
        self.escalate = _threshold("escalate", escalate, 1.0)
        if self.accept is not None and self.escalate is not None and self.escalate > self.accept:
            raise ValueError(f"escalate={escalate!r} must not be above accept={accept!r}")
        self.probes = _probes(probes)
        self.n_shuffles = _whole("n_shuffles", n_shuffles, 0)
        if not isinstance(relabel, bool):
            raise TypeError(f"relabel must be True or False, got {relabel!r}")
        self.relabel = relabel
        self.rename_max_options = _whole("rename_max_options", rename_max_options, 2)
        self.variants = _variants(variants)
        if seed is not None and not isinstance(seed, str):
            raise TypeError(f"seed must be a string or None, got {type(seed).__name__}")
        self.seed = seed
        self._plans: dict[str, _Plan] = {}
        self._lock = threading.Lock()

    def on_predict_start(self, ctx: PredictContext) -> None:
        """Add the variants of every choice question to ``ctx.questions``."""
        questions = ctx.questions if isinstance(ctx.questions, Mapping) else {}
        clash = next((q for q in questions if MARK in str(q)), None)
        if clash is not None:
            raise ValueError(
                f"question id {clash!r} contains {MARK!r}, which OptionStabilityHook uses for its "
                "variants; rename the question"
            )
        layout = _layout(ctx.agent)
        probes = self.probes or (("rename",) if layout == "parallel" else PROBES)
        checkpoint_layout = _checkpoint_layout(ctx.agent)
        extra: dict[str, dict[str, object]] = {}
        plan: dict[object, list[_Probe]] = {}
        for qid, definition in questions.items():
            labeled = _labeled(definition)
            if labeled is None or len(labeled) < 2:
                continue
            key = f"{self.seed or _state_key(ctx.states)}|{qid}"
            renaming = "rename" in probes and len(labeled) <= self.rename_max_options
            made = make_variants(
                list(labeled),
                key,
                self.n_shuffles,
                self.relabel and renaming,
                self.variants,
                "reorder" in probes,
            )
            plan[qid] = []
            for i, (name, order, renamed) in enumerate(made, start=1):
                vid = f"{qid}{MARK}{i}"
                extra[vid], back = _variant_question(definition, labeled, order, renamed)
                plan[qid].append(_Probe(name, vid, back, renamed))
        with self._lock:
            self._plans[ctx.run_id] = _Plan(list(probes), layout, checkpoint_layout, plan)
        if extra:
            ctx.questions = {**questions, **extra}

    def on_predict_end(self, ctx: PredictContext) -> None:
        """Fold each variant's answer back into a ``reliability`` record on its question."""
        with self._lock:
            plan = self._plans.pop(ctx.run_id, None)
        if plan is None or not isinstance(ctx.results, list):
            return
        for result in ctx.results:
            answers = result.get("answers") if isinstance(result, dict) else None
            if not isinstance(answers, dict):
                continue
            for qid, variants in plan.questions.items():
                shown = [answers.pop(p.qid, None) for p in variants]
                answer = answers.get(qid)
                if isinstance(answer, dict):
                    answer["reliability"] = self._record(answer, variants, shown, plan)
            _strip_usage(result.get("usage"))

    def on_error(self, ctx: PredictContext) -> None:
        """Forget the call's variants."""
        with self._lock:
            self._plans.pop(ctx.run_id, None)

    def _record(
        self,
        answer: dict[str, Any],
        variants: list[_Probe],
        shown: list[object],
        plan: _Plan,
    ) -> Reliability:
        original = answer.get("choice")
        choices: dict[str, object] = {}
        support: dict[str, float] = {}
        for probe, variant in zip(variants, shown):
            if not isinstance(variant, dict) or "choice" not in variant:
                continue
            choices[probe.name] = probe.back.get(variant["choice"], variant["choice"])
            p = variant.get("probabilities") or {}
            support[probe.name] = float(
                next((v for k, v in p.items() if probe.back.get(k) == original), 0.0)
            )
        if not choices:
            return _empty_record(plan, original)
        soft = [float((answer.get("probabilities") or {}).get(original, 0.0)), *support.values()]
        soft_stability = sum(soft) / len(soft)
        renamed = {p.name for p in variants if p.renamed}
        distinct = _distinct([original, *choices.values()])
        return {
            "probes": plan.probes,
            "option_layout": plan.layout,
            "decision": decide_reliability(soft_stability, self.accept, self.escalate),
            "soft_stability": soft_stability,
            "stability": _agreement(choices, original),
            "rename_stability": _agreement(
                {n: c for n, c in choices.items() if n in renamed}, original
            ),
            "reorder_stability": _agreement(
                {n: c for n, c in choices.items() if n not in renamed}, original
            ),
            "n_variants": len(choices) + 1,
            "distinct_choices": distinct,
            "variant_choices": choices,
            "variant_support": support,
            "n_distinct_choices": len(distinct),
            "checkpoint_layout": plan.checkpoint_layout,
        }


def _distinct(choices: list[object]) -> list[object]:
    """The different choices the original and its variants made, first seen first."""
    seen: list[object] = []
    for choice in choices:
        if choice not in seen:
            seen.append(choice)
    return seen


def _empty_record(plan: _Plan, original: object) -> Reliability:
    """The record of a question no probe ran on: every metric None, the original choice alone."""
    distinct: list[object] = [] if original is None else [original]
    return {
        "probes": plan.probes,
        "option_layout": plan.layout,
        "decision": None,
        "soft_stability": None,
        "stability": None,
        "rename_stability": None,
        "reorder_stability": None,
        "n_variants": 1,
        "distinct_choices": distinct,
        "variant_choices": {},
        "variant_support": {},
        "n_distinct_choices": len(distinct),
        "checkpoint_layout": plan.checkpoint_layout,
    }


def _agreement(choices: Mapping[str, object], original: object) -> float | None:
    if not choices:
        return None
    agreeing = sum(1 for c in choices.values() if c == original)
    return round(agreeing / len(choices), 4)


def _strip_usage(usage: object) -> None:
    """Drop the variants' ids from a result's usage report."""
    if not isinstance(usage, dict):
        return
    if isinstance(usage.get("truncated_questions"), list):
        usage["truncated_questions"] = [
            q for q in usage["truncated_questions"] if MARK not in str(q)
        ]
    for key in ("options", "question_tokens_dropped"):
        if isinstance(usage.get(key), dict):
            usage[key] = {k: v for k, v in usage[key].items() if MARK not in str(k)}
            if not usage[key]:
                del usage[key]


def _labeled(definition: object) -> dict[str, str] | None:
    """A choice's labels and descriptions (None for anything that is not a string-keyed choice)."""
    if not isinstance(definition, dict) or definition.get("type") != "choice":
        return None
    criteria = definition.get("criteria")
    if isinstance(criteria, list):
        criteria = {label: "" for label in criteria}
    if not isinstance(criteria, dict) or not all(isinstance(k, str) for k in criteria):
        return None
    return {k: "" if v is None else v for k, v in criteria.items()}


def _variant_question(
    definition: Mapping[str, object], labeled: dict[str, str], order: list[str], renamed: bool
) -> tuple[dict[str, object], dict[str, str]]:
    """The variant's question and its label -> caller label map."""
    question = {k: v for k, v in definition.items() if k not in ("criteria", "option_order")}
    if renamed:
        letters = string.ascii_uppercase[: len(order)]
        question["criteria"] = {
            letter: labeled[label] or label for letter, label in zip(letters, order)
        }
        return question, dict(zip(letters, order))
    question["criteria"] = {label: labeled[label] for label in order}
    return question, {label: label for label in order}


def _layout(agent: object) -> str:
    """The layout as the published hook reads it, from a mapping ``agent.config``: a runtime
    exposes its checkpoint's config as ``cfg``, so an Agent reads ``sequential`` (the published
    value, which picks the probes; the checkpoint's own layout is :func:`_checkpoint_layout`)."""
    return _option_layout(getattr(agent, "config", None))


def _checkpoint_layout(agent: object) -> str:
    """The checkpoint's option layout (``sequential`` unless its config says otherwise)."""
    config = getattr(agent, "cfg", None)
    return _option_layout(getattr(config, "raw", config))


def _option_layout(config: object) -> str:
    layout = config.get("option_layout") if isinstance(config, Mapping) else None
    return layout if isinstance(layout, str) else "sequential"


def _state_key(states: object) -> str:
    if isinstance(states, list) and len(states) == 1:
        state = states[0]
        return state if isinstance(state, str) else repr(state)
    return "batch"


def _threshold(name: str, value: object, most: float) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= most:
        raise ValueError(f"{name} must be None or a number in [0, {most:g}], got {value!r}")
    return float(value)


def _whole(name: str, value: object, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < least:
        raise ValueError(f"{name} must be at least {least}, got {value}")
    return value


def _probes(value: object) -> tuple[str, ...] | None:
    """The probes asked for; None means by the checkpoint's layout."""
    if value is None or value == "auto":
        return None
    if value == "all":
        return PROBES
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple, set, frozenset)) or not value:
        raise ValueError(
            f"probes must be 'auto', 'reorder', 'rename', 'all' or a list, got {value!r}"
        )
    unknown = sorted(str(p) for p in value if p not in PROBES)
    if unknown:
        raise ValueError(f"probes: unknown probe {unknown[0]!r}; use 'reorder' or 'rename'")
    return tuple(p for p in PROBES if p in value)


def _variants(value: object) -> tuple[str, ...] | None:
    """The variant names kept; None means all of them."""
    if value is None or (isinstance(value, str) and value in VARIANT_PRESETS):
        return None if value is None else VARIANT_PRESETS[value]
    if isinstance(value, str):
        raise ValueError(
            f"variants must be 'full', 'fast' or a list of {', '.join(ALL_VARIANTS)}, got {value!r}"
        )
    names = list(value) if isinstance(value, (list, tuple, set, frozenset)) else None
    if not names:
        raise ValueError(f"variants must be a non-empty list of variant names, got {value!r}")
    unknown = sorted(str(n) for n in names if n not in ALL_VARIANTS)
    if unknown:
        raise ValueError(f"variants: unknown variant {unknown[0]!r}; use {', '.join(ALL_VARIANTS)}")
    return tuple(names)
