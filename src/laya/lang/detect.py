"""Script and language detection for routing: can the English checkpoint read this state?

Scripts come from Unicode character names (``unicodedata``). A text of up to eight words is decided
by its words first: function words and greetings of 39 languages (``laya.lang._function_words``) against
the package's English vocabulary (``laya.lang._words``); the character n-gram identifier ``py3langid``
(naive Bayes, bundled model) breaks ties and decides longer texts and texts with no listed word.
Its model is decompressed once and kept memory-mapped in the user cache (``cache_dir()``), and it is
loaded only when a text needs it. See ``docs/routing.md`` ("Language detection") for the rules, the
detector comparison, the accuracy by length and language, and timings.
"""

from __future__ import annotations

import math
import mmap
import os
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import suppress
from functools import lru_cache
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING

from typing_extensions import NotRequired, TypedDict

if TYPE_CHECKING:
    from py3langid.langid import LanguageIdentifier

MAX_CHARS = 4000
MAX_DEPTH = 6
NON_LATIN_FRACTION = 0.2
NON_LATIN_MIN_FRACTION = 0.1
NON_LATIN_MIN_LETTERS = 10
# An undecided Latin text in which non-ASCII Latin letters (é, ü, ł) make this share of the
# characters is not English (the published rule and ``diacritic_rate``).
NON_EN_DIACRITIC_RATE = 0.02
# The languages the published detector names (its function-word lists, all in Latin script):
# ``language`` reports one of these or None; laya's identifier's own code, for any language and
# script, is ``identified_language`` (docs/routing.md, "What it returns").
PUBLISHED_LANGUAGES = frozenset({"en", "fr", "de", "es", "pt", "it", "nl", "sv", "ro", "bn", "az"})
# Scripts whose runs of characters make a non-Latin word (a word promotes a mostly Latin text to
# its non-Latin script, as published); "other" letters make none.
NAMED_SCRIPTS = frozenset(
    {
        *("greek", "cyrillic", "armenian", "hebrew", "arabic", "devanagari", "bengali"),
        *("gurmukhi", "gujarati", "oriya", "tamil", "telugu", "kannada", "malayalam"),
        *("sinhala", "thai", "lao", "tibetan", "myanmar", "georgian", "ethiopic", "khmer"),
        *("hangul", "kana", "han"),
    }
)
NON_LATIN_WORD_START = 0x250
PUBLISHED_MIN_WORDS = 4  # the published detector names no language on fewer distinct words
SHOUTED_MIN_WORD, SHOUTED_MIN_LISTED = 5, 4  # its bars for a text in capitals only
# The published detector's bar for calling a text with English words English despite its
# diacritics; laya's n-gram identifier has no such rescue step, so nothing here reads it
# (exported for code written against the published laya.lang, docs/migrating.md).
ENGLISH_RESCUE_DIACRITIC_RATE = 0.06
IDENTIFY_CHARS = 400
MIN_LETTERS = 4
SHORT_WORDS = 4
SHORT_TEXT_WORDS = 8
ENGLISH_TIE_MARGIN = 2.0
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
_PUBLISHED_IDENTIFIER = re.compile(r"(?<![\w-])[\w-]*(?:[.@][\w-]+)+")
_IDENTIFIER = re.compile(r"://|@|^www\.|\w[._/\\]\w")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_ASCII_NON_LETTERS = {i: None for i in range(128) if not chr(i).isalpha()}
_WORD = re.compile(r"[^\W\d_]+")
_FOLD = str.maketrans(
    {"ß": "ss", "ø": "o", "æ": "ae", "œ": "oe", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i"}
)
_CODE_LIKE = re.compile(r"[{}\[\]=;]|\w\(")
_CACHE_FORMAT = 2

KeyPath = list[object]


class Source(TypedDict):
    """Where a segment was found: its leaf (in reading order), the leaf's key path, the line."""

    leaf_index: int
    path: KeyPath | None
    line: int


class Diagnostic(TypedDict):
    """Which stage decided and why (the published keys, then laya's ``confidence``)."""

    stage: str
    reason: str
    source: Source | None
    confidence: float | None


class Detection(TypedDict):
    """What :func:`analyse` returns (docs/routing.md, "What it returns")."""

    script: str
    script_profile: dict[str, float]
    language: str | None
    is_english: bool
    language_undecided: bool
    diacritic_rate: float
    non_latin_fraction: float
    mixed_segment: str | None
    identified_language: str | None
    diagnostic: NotRequired[Diagnostic]


class LatinProfile(TypedDict):
    """What :func:`latin_profile` returns."""

    language: str | None
    confidence: float | None
    reason: str
    diacritic_rate: float


def text_leaves(state: object, path: KeyPath, depth: int = 0) -> Iterator[tuple[KeyPath, str]]:
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
            yield from text_leaves(value, [*path, key], depth + 1)
    elif isinstance(state, (list, tuple)):
        for index, item in enumerate(state):
            yield from text_leaves(item, [*path, index], depth + 1)


def state_text(state: object, max_chars: int = MAX_CHARS) -> str:
    """Join the text leaves of a state with spaces, reading at most ``max_chars`` characters."""
    parts: list[str] = []
    budget = max_chars
    for _, text in text_leaves(state, []):
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


def _profile(counts: Counter[str]) -> dict[str, float]:
    """Fractions of letters per script: Latin first, then the others in the order they first
    appear (the published order), scripts without letters left out."""
    total = sum(counts.values())
    order = ["latin", *(script for script in counts if script != "latin")]
    return {script: counts[script] / total for script in order if counts[script]} if total else {}


def script_profile(text: str) -> dict[str, float]:
    """Share of letters per script in ``text`` (empty when there are no letters)."""
    return _profile(_census(text)[0])


def _dominant_script(counts: Counter[str], text: str) -> str:
    """The script with most letters (a non-Latin one on a tie, the first seen among them); a
    mostly Latin text takes its largest non-Latin script when those letters carry (not just
    'Set α to 0.05') and form a word (not just a capitalised name: 'ПРИВЕТ MON DES EST LA')."""
    if not counts:
        return "unknown"
    latin = counts["latin"]
    top = max((s for s in counts if s != "latin" and counts[s]), key=counts.__getitem__, default="")
    if not top:
        return "latin"
    if counts[top] >= latin:
        return top
    return top if _carries(counts) and _has_non_latin_word(text) else "latin"


def _carries(counts: Counter[str]) -> bool:
    """Whether the non-Latin letters carry: >= 20 % of the letters, or >= 10 % and >= 10."""
    non_latin = sum(counts.values()) - counts["latin"]
    fraction = non_latin / max(1, non_latin + counts["latin"])
    return fraction >= NON_LATIN_FRACTION or (
        fraction >= NON_LATIN_MIN_FRACTION and non_latin >= NON_LATIN_MIN_LETTERS
    )


def _has_non_latin_word(text: str) -> bool:
    """A run of two or more characters of one named non-Latin script (combining marks skipped)
    whose first character is not a capital: a word, not a symbol (α), a name or IPA."""
    run_script, run_length, capital = "", 0, False
    for char in text:
        if ord(char) >= NON_LATIN_WORD_START and unicodedata.combining(char):
            continue
        script = _script_of_letter(char) if ord(char) >= NON_LATIN_WORD_START else ""
        if script and script == run_script:
            run_length += 1
            continue
        if run_length >= 2 and not capital:
            return True
        named = script in NAMED_SCRIPTS
        run_script, run_length, capital = (script, 1, char.isupper()) if named else ("", 0, False)
    return run_length >= 2 and not capital


def detect_script(text: str) -> str:
    """Dominant script of ``text``: 'latin', 'cyrillic', 'han', ... or 'unknown' without letters."""
    return _dominant_script(_census(text)[0], text)


def _prose(text: str) -> str:
    """Drop URLs, e-mails, paths and dotted identifiers, which say nothing about the language."""
    if not _JOINED_BY_PUNCTUATION.search(text):
        return text[:IDENTIFY_CHARS]
    return " ".join(w for w in text.split() if not _IDENTIFIER.search(w))[:IDENTIFY_CHARS]


def _first_words(text: str, limit: int) -> list[str]:
    """Up to ``limit`` words of ``text``: enough to tell a short text without scanning it all."""
    return [match.group() for match in islice(_WORD.finditer(text), limit)]


def cache_dir() -> Path:
    """Where laya keeps the decompressed identifier model: ``$LAYA_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/laya``, else ``~/.cache/laya`` (the convention huggingface_hub follows)."""
    configured = os.environ.get("LAYA_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "laya"


@lru_cache(maxsize=1)
def _identifier() -> LanguageIdentifier:
    """The py3langid model, restricted to ISO 639-1 codes, loaded on first use (not on import).

    py3langid ships its model LZMA-compressed (0.5-1.2 s to decompress on every start), so it is
    decompressed once into a cache file (~63 MB, keyed on py3langid's version and model size) and
    memory-mapped on later starts. A cache that cannot be read or written only costs that time.
    """
    import py3langid
    from py3langid import langid

    source = Path(langid.MODEL_DIR) / langid.MODEL_FILE
    key = f"py3langid-{py3langid.__version__}-{source.stat().st_size}-iso639-1-v{_CACHE_FORMAT}"
    path = cache_dir() / f"{key}.bin"
    with suppress(OSError, ValueError):
        return _mapped_identifier(path)
    model = langid.LanguageIdentifier.from_model_file(source, norm_probs=True)
    model.set_languages([code for code in model.labels if len(code) == 2])
    with suppress(OSError):
        _write_cache(path, model)
    return model


def _write_cache(path: Path, model: LanguageIdentifier) -> None:
    """Save the model's tables as consecutive ``.npy`` records in a temporary file, then move it
    into place; the 4-byte tables come first, so every table starts aligned."""
    import tempfile

    import numpy as np

    tables = (
        np.asarray(model.tk_nextmove, np.uint32),
        np.asarray(model.tk_row, np.uint32),
        np.asarray(model.tk_output, np.int32),
        np.asarray(model.nb_pc, np.float32),
        np.array(model.nb_classes),
        np.ascontiguousarray(model.nb_ptc, np.float16),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            for table in tables:
                np.save(out, table)
        os.replace(temporary, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise


def _mapped_identifier(path: Path) -> LanguageIdentifier:
    """A py3langid identifier over the memory-mapped cache file (read-only, shared pages)."""
    import numpy as np
    from py3langid.langid import LanguageIdentifier

    tables = []
    with open(path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        for _ in range(6):
            np.lib.format.read_magic(f)
            shape, _, dtype = np.lib.format.read_array_header_1_0(f)
            tables.append(np.frombuffer(mapped, dtype, math.prod(shape), f.tell()).reshape(shape))
            f.seek(tables[-1].nbytes, os.SEEK_CUR)
    nextmove, row, output, pc, classes, ptc = tables
    return LanguageIdentifier(
        ptc,
        pc,
        classes.tolist(),
        nextmove.data,
        output.data,
        norm_probs=True,
        tk_row=row.data,
    )


@lru_cache(maxsize=4096)
def _identify(text: str) -> tuple[str, float]:
    """Most likely language of ``text`` and its probability."""
    language, confidence = _identifier().classify(text)
    return language, float(confidence)


def _fold(word: str) -> str:
    """Lower-case ASCII form of a word, as people type it without diacritics: 'Grüße' -> 'grusse'."""
    word = word.lower()
    if word.isascii():
        return word
    word = word.translate(_FOLD)
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


@lru_cache(maxsize=1)
def _lexicon() -> dict[str, frozenset[str]]:
    """Word -> the languages whose list has it (English: the package vocabulary); the lists are
    lower-case ASCII words, as ``_fold`` leaves a word (tests/test_lang.py checks)."""
    from ._function_words import ENGLISH_EXTRA, FUNCTION_WORDS
    from ._words import TEXT

    languages: dict[str, set[str]] = {}
    for language, words in (("en", TEXT + ENGLISH_EXTRA), *FUNCTION_WORDS.items()):
        for word in words.split():
            languages.setdefault(word, set()).add(language)
    return {word: frozenset(found) for word, found in languages.items()}


@lru_cache(maxsize=4096)
def _identify_among(text: str, candidates: tuple[str, ...]) -> tuple[str, float]:
    """The n-gram model's pick among ``candidates`` (a tie of the word lists) and its probability.

    English stays the pick unless the other language is at least ENGLISH_TIE_MARGIN times as likely:
    on two or three words the n-gram model is often near uniform ('hi': Welsh 'hi' = she).
    """
    scores = {code: float(p) for code, p in _identifier().rank(text) if code in candidates}
    language = max(candidates, key=lambda code: scores.get(code, 0.0))
    if "en" in candidates and scores.get(language, 0.0) < ENGLISH_TIE_MARGIN * scores.get(
        "en", 0.0
    ):
        language = "en"
    return language, scores.get(language, 0.0)


def _short_language(prose: str, words: list[str]) -> tuple[str | None, float | None, str] | None:
    """Decide a text of a few words from its words; None when no word is on any list.

    The language with most words on its list wins (English: the package vocabulary); a tie goes
    to the character n-gram model, restricted to the tied languages.
    """
    lexicon = _lexicon()
    votes = Counter(code for word in words for code in lexicon.get(_fold(word), ()))
    english = votes.pop("en", 0)
    best = max(votes.values(), default=0)
    if english > best:
        return "en", None, "english_words"
    if best == 0:
        return None
    tied = sorted(code for code, n in votes.items() if n == best)
    if english == best:
        tied.append("en")
    if len(tied) == 1:
        return tied[0], None, "function_words"
    language, confidence = _identify_among(prose, tuple(tied))
    return language, confidence, "words_and_ngrams"


def _latin_language(text: str) -> tuple[str | None, float | None, str]:
    """Language of Latin-script text (None when the evidence is too thin), confidence, reason."""
    prose = _prose(text)
    words = _first_words(prose, SHORT_TEXT_WORDS + 1)
    if len(words) <= SHORT_TEXT_WORDS:
        decided = _short_language(prose, words)
        if decided:
            return decided
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


def published_language(
    language: str | None, script: str, text: str, carries: bool = False, diacritics: float = 0.0
) -> str | None:
    """What the published detector names, given the language laya identified: None for a
    non-Latin script or a language outside its lists, for fewer than four distinct words (two
    or three Swedish ones excepted), and for a shouted text (capitals only) without a word of
    five letters and either diacritics or a four-letter word of that language's list (unless
    its non-Latin letters ``carry``); docs/routing.md, "What it returns"."""
    if script != "latin" or language not in PUBLISHED_LANGUAGES:
        return None
    words = _WORD.findall(_PUBLISHED_IDENTIFIER.sub(" ", text).replace("İ", "i").lower())
    distinct = len(set(words))
    if distinct < PUBLISHED_MIN_WORDS and not (language == "sv" and distinct > 1):
        return None
    shouted = any(c.isupper() for c in text) and not any(c.islower() for c in text)
    if language != "en" and shouted and not carries:
        lexicon = _lexicon()
        evidence = any(len(w) >= SHOUTED_MIN_WORD for w in words) and (
            diacritics >= NON_EN_DIACRITIC_RATE
            or any(
                len(w) >= SHOUTED_MIN_LISTED and language in lexicon.get(_fold(w), ())
                for w in words
            )
        )
        return language if evidence else None
    return language


@lru_cache(maxsize=1024)
def _verdict(text: str) -> tuple[Detection, Diagnostic]:
    """Analyse one flattened text: script, language and English verdict, plus the diagnostic."""
    counts, n_diacritics = _census(text)
    n_letters = sum(counts.values())
    script = _dominant_script(counts, text)
    non_latin = round(1 - counts["latin"] / n_letters, 4) if n_letters else 0.0
    diacritics = n_diacritics / max(1, len(text)) if script == "latin" else 0.0
    if script == "unknown":
        language, confidence, reason = None, None, "no_letters"
    elif script != "latin":
        language, confidence, reason = _non_latin_language(text)
    else:
        language, confidence, reason = _latin_language(text)
    undecided = language is None
    english = language == "en" or (
        undecided and script in ("latin", "unknown") and diacritics < NON_EN_DIACRITIC_RATE
    )
    if undecided and script == "latin" and not english:
        reason = "non_english_letters"
    named = published_language(language, script, text, _carries(counts), diacritics)
    result: Detection = {
        "script": script,
        "script_profile": {s: round(f, 4) for s, f in _profile(counts).items()},
        "language": named,
        "is_english": english,
        "language_undecided": named is None,
        "diacritic_rate": round(diacritics, 4),
        "non_latin_fraction": non_latin,
        "mixed_segment": None,
        "identified_language": language,
    }
    return result, _diagnostic("whole_state", reason, confidence)


def _diagnostic(
    stage: str, reason: str, confidence: float | None, source: Source | None = None
) -> Diagnostic:
    """Which stage decided and why (the published keys, then laya's ``confidence``); never
    carries input text."""
    rounded = None if confidence is None else round(confidence, 4)
    return {"stage": stage, "reason": reason, "source": source, "confidence": rounded}


def _safe_path(path: KeyPath) -> KeyPath | None:
    """The leaf's path when every key is a short str or an int, else None (keeps text out)."""
    ok = all(
        (isinstance(k, str) and len(k) <= 128) or (type(k) is int and k.bit_length() <= 63)
        for k in path
    )
    return path if ok else None


def _lines(state: object) -> Iterator[tuple[Source, str]]:
    """Yield (source, line) for every line of every leaf, reading at most MAX_CHARS in all."""
    budget = MAX_CHARS
    for leaf_index, (path, text) in enumerate(text_leaves(state, [])):
        for number, line in enumerate(text.split("\n"), start=1):
            if budget <= 0:
                return
            source: Source = {"leaf_index": leaf_index, "path": _safe_path(path), "line": number}
            yield source, line[:budget]
            budget -= len(line) + 1


def _may_mix_languages(state: object) -> bool:
    """A state can hide a foreign line or field only if it has several leaves or lines."""
    leaves = [text for _, text in text_leaves(state, [])]
    return len(leaves) > 1 or any("\n" in text for text in leaves)


@lru_cache(maxsize=4096)
def _foreign_line(line: str) -> tuple[str | None, float | None, str] | None:
    """(language, confidence, reason) when one prose line reads as another language, else None."""
    if _CODE_LIKE.search(line):
        return None
    counts, _ = _census(line)
    if _dominant_script(counts, line) not in ("latin", "unknown"):
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


def analyse(state: object, *, explain: bool = False) -> Detection:
    """Script, language and English verdict of a state (str, dict, list), for the Router."""
    cached, diagnostic = _verdict(state_text(state))
    result: Detection = {**cached, "script_profile": dict(cached["script_profile"])}
    if result["is_english"] and _may_mix_languages(state):
        # the first line or field of a mostly-English state that reads as another language
        for source, line in _lines(state):
            if found := _foreign_line(line):
                language, confidence, reason = found
                script = "latin" if reason == "named_segment" else ""
                rate = _census(line)[1] / max(1, len(line))
                result["language"] = published_language(language, script, line, False, rate)
                result["is_english"] = False
                result["language_undecided"] = result["language"] is None
                result["mixed_segment"] = line.strip()
                result["identified_language"] = language
                diagnostic = _diagnostic("segment", reason, confidence, source)
                break
    if explain:
        result["diagnostic"] = Diagnostic(**diagnostic)
    return result


detect_language = analyse


def is_english(state: object) -> bool:
    """True when the English checkpoint can read the state (see ``analyse``)."""
    return bool(analyse(state)["is_english"])


def latin_profile(text: str) -> LatinProfile:
    """How the detector reads Latin-script ``text`` on its own: the language it names (None when
    the evidence is too thin), its confidence, the reason, and the share of the text that is
    non-English letters (``diacritic_rate``, as ``analyse`` reports it)."""
    _, n_diacritics = _census(text)
    language, confidence, reason = _latin_language(text)
    return {
        "language": language,
        "confidence": None if confidence is None else round(confidence, 4),
        "reason": reason,
        "diacritic_rate": round(n_diacritics / max(1, len(text)), 4),
    }


def guess_latin_language(text: str) -> str | None:
    """The language Latin-script ``text`` reads as (ISO 639-1), or None when unsure."""
    return _latin_language(text)[0]
