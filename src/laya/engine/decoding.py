"""Logits -> answers: temperatures, probabilities and confidence.

Numbers follow the published runtime's decoding exactly (docs/agent.md) (float32 softmax in NumPy, Python ``round(x, 4)``), so
answers agree with the published runtime to the fourth decimal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..checkpoint import clamp_temperature
from .questions import Question
from .result import Action, Answer, ChoiceAnswer

__all__ = [
    "MODEL_NAME",
    "Temperatures",
    "answer_confidence",
    "confidence_from_probs",
    "decode_answer",
    "unpermute_probs",
]

MODEL_NAME = "laya-rl-agent"


@dataclass(frozen=True)
class Temperatures:
    """Per-type temperatures and per-bucket overrides, plus per-language replacements.

    ``bins`` (from a calibration file) remaps ``answer_confidence`` per bucket: bin ``b`` of
    ``n`` equal-width bins reads ``bins[bucket][b]``.
    """

    by_type: tuple[float, ...]
    by_bucket: dict[str, float]
    by_language: dict[str, Temperatures] = field(default_factory=dict)
    bins: dict[str, tuple[float, ...]] = field(default_factory=dict)

    def for_language(self, lang: str | None) -> Temperatures:
        """The table a call in ``lang`` reads: its language entry replaces both maps."""
        return self.by_language.get(language_key(lang), self) if lang else self

    def for_question(self, q: Question, lang: str | None = None) -> float:
        """Temperature of one answer."""
        table = self.for_language(lang)
        return table.by_bucket.get(q.bucket, table.by_type[q.qtype])

    def decode(
        self, q: Question, logits: np.ndarray, act_logits: np.ndarray, lang: str | None = None
    ) -> Answer:
        """The answer of one row, under this table's temperature and confidence map (none
        where a language entry replaced the tables)."""
        table = self.for_language(lang)
        bins = self.bins.get(q.bucket) if table is self else None
        return decode_answer(q, logits, act_logits, table.for_question(q), bins)


def language_key(lang: object) -> str:
    """``pt-BR`` -> ``pt``: how language temperature entries are keyed."""
    return str(lang).split("-")[0].lower()


def language_temperatures(
    spec: object, raw_temperature: Sequence[float]
) -> dict[str, Temperatures]:
    """Validate ``lang_temperatures={lang: {"temperature": [3], "temperature_by_options": {}}}``."""
    if not spec:
        return {}
    if not isinstance(spec, dict):
        raise ValueError(f"lang_temperatures must be a dict of language -> entry, got {spec!r}")
    tables = {}
    for lang, entry in spec.items():
        if not isinstance(lang, str):
            raise ValueError(f"Language override keys must be strings, got {lang!r}")
        entry = {} if entry is None else entry
        if not isinstance(entry, dict):
            raise ValueError(
                f"Language override {lang!r} must be a mapping, got {type(entry).__name__}"
            )
        temps = entry.get("temperature") or raw_temperature
        if not isinstance(temps, (list, tuple)) or len(temps) != 3:
            raise ValueError(
                f"Language override {lang!r}: temperature must be a list of 3 floats, got {temps!r}"
            )
        buckets = entry.get("temperature_by_options") or {}
        if not isinstance(buckets, dict):
            raise ValueError(
                f"Language override {lang!r}: temperature_by_options must be a mapping of "
                f"bucket -> float, got {type(buckets).__name__}"
            )
        tables[language_key(lang)] = Temperatures(
            tuple(clamp_temperature(t) for t in temps),
            {str(k): clamp_temperature(v) for k, v in buckets.items()},
        )
    return tables


def _softmax(z: np.ndarray) -> np.ndarray:
    e: np.ndarray = np.exp(z - z.max())
    p: np.ndarray = e / e.sum()
    return p


def confidence_from_probs(p: np.ndarray, k: int) -> float:
    """The ``confidence`` of a choice or score: one minus the normalised entropy of ``p[:k]``
    (1.0 for fewer than two options), unrounded."""
    p = np.asarray(p, dtype=np.float32)[:k]
    if k < 2:
        return 1.0
    h = -(p * np.log(np.clip(p, np.float32(1e-12), np.float32(1.0)))).sum()
    return float(min(1.0, max(0.0, 1.0 - h / math.log(k))))


def answer_confidence(p: np.ndarray, k: int) -> float:
    """The ``answer_confidence`` of an answer before any binning map: ``max(p[:k])`` in [0, 1]
    (1.0 for no options), unrounded."""
    if k < 1:
        return 1.0
    return float(min(1.0, max(0.0, np.asarray(p)[:k].max())))


def unpermute_probs(p: np.ndarray, option_order: Sequence[int] | None) -> np.ndarray:
    """Probabilities read in ``option_order``'s slots, put back in the caller's option order."""
    if option_order is None:
        return np.asarray(p)
    shown = np.asarray(p)
    canonical = np.empty_like(shown)
    canonical[list(option_order)] = shown[: len(option_order)]
    return canonical


def binned(confidence: float, bins: Sequence[float]) -> float:
    """``confidence`` through a binning map: the value of its equal-width bin."""
    return float(bins[min(len(bins) - 1, max(0, int(confidence * len(bins))))])


def act_probability(act_logits: np.ndarray) -> float:
    """Probability of the first act-head action (reported as ``act_probability``)."""
    return round(float(_softmax(act_logits.astype(np.float32))[0]), 4)


def decode_answer(
    q: Question,
    logits: np.ndarray,
    act_logits: np.ndarray,
    temperature: float,
    bins: Sequence[float] | None = None,
) -> Answer:
    """The answer of one row from its marker logits and act logits."""
    k = len(q.read_options)
    scaled = logits[:k].astype(np.float32) / np.float32(temperature)
    p = unpermute_probs(_softmax(scaled), q.read_order)
    top = answer_confidence(p, k)
    reported = round(binned(top, bins) if bins else top, 4)
    action: Action = {"act_probability": act_probability(act_logits)}
    if q.type == "noul":
        true = float(p[1])
        return {
            "type": "noul",
            "noul": round(true, 4),
            "confidence": round(max(true, 1.0 - true), 4),
            "answer_confidence": reported,
            "action": action,
        }
    if q.abstain:
        return _abstaining_choice(q, p, scaled, reported, action)
    probabilities = {key: round(float(x), 4) for key, x in zip(q.keys, p)}
    confidence = round(confidence_from_probs(p, k), 4)
    if q.type == "choice":
        return {
            "type": "choice",
            "choice": q.keys[int(np.argmax(p))],
            "probabilities": probabilities,
            "confidence": confidence,
            "answer_confidence": reported,
            "action": action,
        }
    expected = float(np.dot(np.arange(k, dtype=np.float64), p.astype(np.float64)))
    return {
        "type": "score",
        "score": round(expected, 4),
        "legend": dict(q.legend or {}),
        "probabilities": {str(key): x for key, x in probabilities.items()},  # keys "0", "1"...
        "confidence": confidence,
        "answer_confidence": reported,
        "action": action,
    }


def _abstaining_choice(
    q: Question, p: np.ndarray, scaled: np.ndarray, answer_confidence: float, action: Action
) -> ChoiceAnswer:
    """A choice scored with "none of these" beside its labels (docs/agent.md, "None of these"):
    its probability is ``abstain``, the labels' are renormalised over themselves (a softmax of
    their own logits, so they sum to 1 however sure the abstention), and ``choice`` is None
    when "none of these" has the most probability."""
    n = len(q.options)
    canonical = np.empty_like(scaled)
    canonical[list(q.read_order)] = scaled
    own = _softmax(canonical[:n])
    wins = int(np.argmax(p)) == n
    return {
        "type": "choice",
        "choice": None if wins else q.keys[int(np.argmax(own))],
        "probabilities": {key: round(float(x), 4) for key, x in zip(q.keys, own)},
        "abstain": round(float(p[n]), 4),
        "confidence": round(confidence_from_probs(p, len(p)), 4),
        "answer_confidence": answer_confidence,
        "action": action,
    }
