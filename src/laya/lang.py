"""Script and language detection for routing: can the English checkpoint read this state?

Scripts come from Unicode character names (``unicodedata``); the language of the text comes from
``py3langid`` (a naive Bayes identifier with a bundled model, imported lazily on the first call).
See ``docs/routing.md`` ("Language detection") for the rules, the library comparison and timings.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterator, Mapping
from functools import lru_cache
from itertools import islice
from typing import Any

MAX_CHARS = 4000
MAX_DEPTH = 6
NON_LATIN_FRACTION = 0.2
NON_LATIN_MIN_FRACTION = 0.1
NON_LATIN_MIN_LETTERS = 10
IDENTIFY_CHARS = 400
MIN_LETTERS = 4
SHORT_WORDS = 4
SHORT_CONFIDENCE = 0.5
SEGMENT_MIN_WORDS = 4
SEGMENT_CONFIDENCE = 0.9
SEGMENT_MIN_NON_LATIN_LETTERS = 10

_SCRIPT_ALIASES = {
    "cjk": "han",
    "ideographic": "han",
    "hiragana": "kana",
    "katakana": "kana",
    "katakana-hiragana": "kana",
    "modifier": "latin",
}
_JOINED_BY_PUNCTUATION = re.compile(r"\w[._/\\@:]\w")
_IDENTIFIER = re.compile(r"://|@|^www\.|\w[._/\\]\w")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_ASCII_NON_LETTERS = {i: None for i in range(128) if not chr(i).isalpha()}
_WORD = re.compile(r"[^\W\d_]+")
_CODE_LIKE = re.compile(r"[{}\[\]=;]|\w\(")
_identifier_model: Any = None

KeyPath = list[Any]


def _leaves(state: Any, path: KeyPath, depth: int = 0) -> Iterator[tuple[KeyPath, str]]:
    """Yield (path, text) for every text leaf: dict values, list items, str and UTF-8 bytes."""
    if depth > MAX_DEPTH or state is None:
        return
    if isinstance(state, str):
        yield path, state
    elif isinstance(state, (bytes, bytearray)):
        try:
            yield path, bytes(state).decode("utf-8")
        except UnicodeDecodeError:
            return
    elif isinstance(state, Mapping):
        for key, value in state.items():
            yield from _leaves(value, [*path, key], depth + 1)
    elif isinstance(state, (list, tuple)):
        for index, item in enumerate(state):
            yield from _leaves(item, [*path, index], depth + 1)


def state_text(state: Any, max_chars: int = MAX_CHARS) -> str:
    """Join the text leaves of a state with spaces, reading at most ``max_chars`` characters."""
    parts: list[str] = []
    budget = max_chars
    for _, text in _leaves(state, []):
        if budget <= 0:
            break
        parts.append(text[:budget])
        budget -= len(text) + 1
    return " ".join(parts)[:max_chars]


@lru_cache(maxsize=8192)
def _script_of_letter(char: str) -> str:
    """Script of one letter from its Unicode name: 'LATIN SMALL LETTER E' -> 'latin'.

    NFKC first folds compatibility forms (fullwidth Ａ, halfwidth ｶ, ﬁ, ª, µ) into their script.
    """
    base = unicodedata.normalize("NFKC", char)[:1] or char
    script = unicodedata.name(base, "other").split(maxsplit=1)[0].lower()
    return _SCRIPT_ALIASES.get(script, script)


def _census(text: str) -> tuple[Counter[str], int]:
    """Letters per script, and how many are non-ASCII Latin letters (é, ü, ł, ß: diacritics)."""
    counts: Counter[str] = Counter()
    ascii_text = text if text.isascii() else _NON_ASCII.sub("", text)
    if ascii_letters := len(ascii_text.translate(_ASCII_NON_LETTERS)):
        counts["latin"] = ascii_letters
    diacritics = 0
    if ascii_text is not text:
        for char, n in Counter("".join(_NON_ASCII.findall(text))).items():
            if char.isalpha():
                script = _script_of_letter(char)
                counts[script] += n
                diacritics += n if script == "latin" else 0
    return counts, diacritics


def _letter_counts(text: str) -> Counter[str]:
    """Letters per script in ``text``."""
    return _census(text)[0]


def _profile(counts: Counter[str]) -> dict[str, float]:
    """Fractions of letters per script, largest first."""
    total = sum(counts.values())
    return {script: n / total for script, n in counts.most_common()} if total else {}


def script_profile(text: str) -> dict[str, float]:
    """Share of letters per script in ``text`` (empty when there are no letters)."""
    return _profile(_letter_counts(text))


def _non_latin_carries(counts: Counter[str]) -> bool:
    """True when non-Latin letters weigh enough to decide the script (not just 'Set α to 0.05')."""
    total = sum(counts.values())
    non_latin = total - counts["latin"]
    fraction = non_latin / total if total else 0.0
    return fraction >= NON_LATIN_FRACTION or (
        fraction >= NON_LATIN_MIN_FRACTION and non_latin >= NON_LATIN_MIN_LETTERS
    )


def _dominant_script(counts: Counter[str]) -> str:
    """Latin unless the non-Latin letters carry; then the largest non-Latin script."""
    if not counts:
        return "unknown"
    if counts["latin"] and not _non_latin_carries(counts):
        return "latin"
    return max((s for s in counts if s != "latin"), key=counts.__getitem__, default="latin")


def detect_script(text: str) -> str:
    """Dominant script of ``text``: 'latin', 'cyrillic', 'han', ... or 'unknown' without letters."""
    return _dominant_script(_letter_counts(text))


def _prose(text: str) -> str:
    """Drop URLs, e-mails, paths and dotted identifiers, which say nothing about the language."""
    if not _JOINED_BY_PUNCTUATION.search(text):
        return text[:IDENTIFY_CHARS]
    return " ".join(w for w in text.split() if not _IDENTIFIER.search(w))[:IDENTIFY_CHARS]


def _first_words(text: str, limit: int) -> list[str]:
    """Up to ``limit`` words of ``text``: enough to tell a short text without scanning it all."""
    return [match.group() for match in islice(_WORD.finditer(text), limit)]


def _identifier() -> Any:
    """The py3langid model, restricted to ISO 639-1 codes, loaded on first use (not on import)."""
    global _identifier_model
    if _identifier_model is None:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier

        model = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        model.set_languages([code for code in model.labels if len(code) == 2])
        _identifier_model = model
    return _identifier_model


@lru_cache(maxsize=4096)
def _identify(text: str) -> tuple[str, float]:
    """Most likely language of ``text`` and its probability."""
    language, confidence = _identifier().classify(text)
    return language, float(confidence)


def _latin_language(text: str) -> tuple[str | None, float | None, str]:
    """Language of Latin-script text (None when the evidence is too thin), confidence, reason."""
    prose = _prose(text)
    words = _first_words(prose, SHORT_WORDS)
    short = len(words) < SHORT_WORDS
    if short and sum(map(len, words)) < MIN_LETTERS:
        return None, None, "too_few_letters"
    language, confidence = _identify(prose)
    if short and confidence < SHORT_CONFIDENCE:
        return None, confidence, "low_confidence"
    return language, confidence, "identified"


def _non_latin_language(text: str) -> tuple[str | None, float, str]:
    """Language of non-Latin text when the identifier is fairly sure of it, else None."""
    language, confidence = _identify(text[:IDENTIFY_CHARS])
    return (language if confidence >= SHORT_CONFIDENCE else None), confidence, "non_latin_script"


@lru_cache(maxsize=1024)
def _verdict(text: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Analyse one flattened text: script, language and English verdict, plus the diagnostic."""
    counts, n_diacritics = _census(text)
    n_letters = sum(counts.values())
    script = _dominant_script(counts)
    non_latin = round(1 - counts["latin"] / n_letters, 4) if n_letters else 0.0
    diacritics = n_diacritics / n_letters if n_letters else 0.0
    if script == "unknown":
        language, confidence, reason = None, None, "no_letters"
    elif script != "latin":
        language, confidence, reason = _non_latin_language(text)
    else:
        language, confidence, reason = _latin_language(text)
    undecided = language is None
    english = language == "en" or (undecided and script in ("latin", "unknown") and not diacritics)
    if undecided and script == "latin" and not english:
        reason = "non_english_letters"
    result = {
        "script": script,
        "script_profile": {s: round(f, 4) for s, f in _profile(counts).items()},
        "language": language,
        "is_english": english,
        "language_undecided": undecided,
        "diacritic_rate": round(diacritics, 4),
        "non_latin_fraction": non_latin,
        "mixed_segment": None,
    }
    return result, _diagnostic("whole_state", reason, confidence)


def _diagnostic(
    stage: str, reason: str, confidence: float | None, source: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Which stage decided and why; never carries input text."""
    rounded = None if confidence is None else round(confidence, 4)
    return {"stage": stage, "reason": reason, "confidence": rounded, "source": source}


def _safe_path(path: KeyPath) -> KeyPath | None:
    """The leaf's path when every key is a short str or an int, else None (keeps text out)."""
    ok = all(
        (isinstance(k, str) and len(k) <= 128) or (type(k) is int and k.bit_length() <= 63)
        for k in path
    )
    return path if ok else None


def _lines(state: Any) -> Iterator[tuple[dict[str, Any], str]]:
    """Yield (source, line) for every line of every leaf, reading at most MAX_CHARS in all."""
    budget = MAX_CHARS
    for leaf_index, (path, text) in enumerate(_leaves(state, [])):
        for number, line in enumerate(text.split("\n"), start=1):
            if budget <= 0:
                return
            source = {"leaf_index": leaf_index, "path": _safe_path(path), "line": number}
            yield source, line[:budget]
            budget -= len(line) + 1


def _may_mix_languages(state: Any) -> bool:
    """A state can hide a foreign line or field only if it has several leaves or lines."""
    leaves = [text for _, text in _leaves(state, [])]
    return len(leaves) > 1 or any("\n" in text for text in leaves)


@lru_cache(maxsize=4096)
def _foreign_line(line: str) -> tuple[str | None, float | None, str] | None:
    """(language, confidence, reason) when one prose line reads as another language, else None."""
    if _CODE_LIKE.search(line):
        return None
    counts = _letter_counts(line)
    if _dominant_script(counts) not in ("latin", "unknown"):
        non_latin = sum(counts.values()) - counts["latin"]
        if non_latin < SEGMENT_MIN_NON_LATIN_LETTERS:
            return None
        language, confidence, _ = _non_latin_language(line)
        return language, confidence, "non_latin_segment"
    prose = _prose(line)
    if len(_first_words(prose, SEGMENT_MIN_WORDS)) < SEGMENT_MIN_WORDS:
        return None
    language, confidence = _identify(prose)
    if language == "en" or confidence < SEGMENT_CONFIDENCE:
        return None
    return language, confidence, "named_segment"


def _first_foreign_segment(state: Any) -> tuple[dict[str, Any], str, tuple] | None:
    """The first line or field of a mostly-English state that reads as another language."""
    for source, line in _lines(state):
        found = _foreign_line(line)
        if found:
            return source, line.strip(), found
    return None


def analyse(state: Any, *, explain: bool = False) -> dict[str, Any]:
    """Script, language and English verdict of a state (str, dict, list), for the Router."""
    cached, diagnostic = _verdict(state_text(state))
    result = {**cached, "script_profile": dict(cached["script_profile"])}
    if result["is_english"] and _may_mix_languages(state):
        segment = _first_foreign_segment(state)
        if segment:
            source, line, (language, confidence, reason) = segment
            result["language"] = language
            result["is_english"] = False
            result["language_undecided"] = language is None
            result["mixed_segment"] = line
            diagnostic = _diagnostic("segment", reason, confidence, source)
    if explain:
        result["diagnostic"] = {**diagnostic}
    return result


detect_language = analyse


def is_english(state: Any) -> bool:
    """True when the English checkpoint can read the state (see ``analyse``)."""
    return bool(analyse(state)["is_english"])
