"""laya.lang: script and language detection that decides which checkpoint can read a state."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from laya.lang import analyse, detect_script, is_english, script_profile, state_text

LABELLED = Path(__file__).parent / "data" / "lang_labelled.jsonl"
MIXED_LINE = (
    "Hello team, please see the ticket below and let me know what you think before the end "
    "of the day.\nOlá, eu não recebi o meu pedido ainda"
)
KEYS = [
    "script",
    "script_profile",
    "language",
    "is_english",
    "language_undecided",
    "diacritic_rate",
    "non_latin_fraction",
    "mixed_segment",
]

# (state, script, language or None for "any", is_english)
REFERENCE = [
    ("I was charged twice for my order, please help", "latin", "en", True),
    ("Mein Konto wurde zweimal belastet", "latin", "de", False),
    ("Bonjour, je veux annuler ma commande s'il vous plaît", "latin", "fr", False),
    ("Voce pode me mandar a nota fiscal?", "latin", "pt", False),
    ("kan inte logga in", "latin", "sv", False),
    ("这是一个测试", "han", None, False),
    ("मेरा खाता दो बार चार्ज हुआ", "devanagari", None, False),
    (
        "Привет мир, this is a test of the system that we use every day in the office",
        "latin",
        "en",
        True,
    ),
    ("Order 55 from Tokyo: 東京の注文はまだ届いていません", "kana", None, False),
    (
        {"subject": "Refund request", "body": "Olá, não recebi o meu pedido e quero o reembolso"},
        "latin",
        "pt",
        False,
    ),
    (["I need help", "Necesito ayuda con mi pedido por favor, no llega"], "latin", "es", False),
    ("Dzień dobry, proszę o zwrot pieniędzy za zamówienie", "latin", "pl", False),
    ("Set α to 0.05 in the config file", "latin", None, True),
    ("I love the café near my house and the croissants", "latin", "en", True),
]


def _labelled() -> list[dict]:
    """The hand-labelled evaluation set (tests/data/lang_labelled.jsonl)."""
    return [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize(("state", "script", "language", "english"), REFERENCE)
def test_reference_cases(state, script, language, english):
    result = analyse(state)
    assert list(result) == KEYS
    assert result["script"] == script
    assert result["is_english"] is english
    if language is not None:
        assert result["language"] == language


@pytest.mark.parametrize("state", ["12345 !!!", "", None, 42, {"a": 1, "b": [2.5, True]}])
def test_no_letters_is_unknown_and_undecided_english(state):
    result = analyse(state)
    assert result["script"] == "unknown"
    assert result["script_profile"] == {}
    assert result["is_english"] is True
    assert result["language_undecided"] is True
    assert result["language"] is None


def test_mixed_line_is_reported_with_its_language():
    result = analyse(MIXED_LINE, explain=True)
    assert result["language"] == "pt"
    assert result["is_english"] is False
    assert result["language_undecided"] is False
    assert result["mixed_segment"] == "Olá, eu não recebi o meu pedido ainda"
    assert result["diagnostic"]["stage"] == "segment"
    assert result["diagnostic"]["reason"] == "named_segment"
    assert result["diagnostic"]["source"] == {"leaf_index": 0, "path": [], "line": 2}


def test_foreign_field_in_english_dict_names_its_path():
    state = {
        "note": "Please read the whole thread before replying. " * 80,
        "message": "Ich habe meine Bestellung immer noch nicht erhalten",
    }
    result = analyse(state, explain=True)
    assert (result["language"], result["is_english"]) == ("de", False)
    assert result["mixed_segment"] == state["message"]
    assert result["diagnostic"]["source"] == {"leaf_index": 1, "path": ["message"], "line": 1}


def test_non_latin_field_in_english_dict_is_not_english():
    state = {
        "note": "Please read the whole thread before replying. " * 20,
        "message": "Я не могу войти в свой аккаунт уже третий день",
    }
    result = analyse(state, explain=True)
    assert result["script"] == "latin"
    assert result["is_english"] is False
    assert result["diagnostic"]["reason"] == "non_latin_segment"


def test_code_lines_and_short_lines_do_not_count_as_foreign():
    state = (
        "Please check why this fails on CI.\nres = fetch(url); data = res['items']\nMerci beaucoup"
    )
    result = analyse(state)
    assert result["is_english"] is True
    assert result["mixed_segment"] is None


def test_short_undecidable_text():
    plain = analyse("Quero cancelar", explain=True)
    assert plain["language_undecided"] is True
    assert plain["is_english"] is True
    assert plain["diagnostic"]["reason"] == "low_confidence"
    marked = analyse("Olá", explain=True)
    assert marked["language_undecided"] is True
    assert marked["is_english"] is False
    assert marked["diagnostic"]["reason"] == "non_english_letters"


def test_diagnostic_never_copies_input_text():
    states = [
        MIXED_LINE,
        {"Olá pedido": "Olá, não recebi o meu pedido e quero o reembolso"},
        "这是一个测试",
    ]
    for state in states:
        diagnostic = json.dumps(analyse(state, explain=True)["diagnostic"], ensure_ascii=False)
        for word in state_text(state).split():
            assert len(word) < 4 or word not in diagnostic


def test_unsafe_dict_keys_hide_the_path():
    state = {
        "note": "Please read the whole thread before replying. " * 20,
        ("a", 1): "Ich habe meine Bestellung immer noch nicht erhalten",
    }
    assert analyse(state, explain=True)["diagnostic"]["source"]["path"] is None


def test_results_are_independent_copies():
    first = analyse("I was charged twice for my order, please help")
    first["script_profile"]["latin"] = 0.0
    first["language"] = "xx"
    again = analyse("I was charged twice for my order, please help")
    assert again["script_profile"] == {"latin": 1.0}
    assert again["language"] == "en"
    analyse("Bom dia", explain=True)["diagnostic"]["reason"] = "edited"
    assert analyse("Bom dia", explain=True)["diagnostic"]["reason"] != "edited"


def test_scripts_and_profiles():
    assert detect_script("Set α to 0.05") == "latin"
    assert detect_script("Ｈｅｌｌｏ ﬁne µ") == "latin"
    assert detect_script("ﾊﾛｰ") == "kana"
    assert detect_script("שלום עולם") == "hebrew"
    assert detect_script("안녕하세요") == "hangul"
    assert detect_script("123") == "unknown"
    profile = script_profile("Order 55 from Tokyo: 東京の注文はまだ届いていません")
    assert set(profile) == {"latin", "han", "kana"}
    assert abs(sum(profile.values()) - 1) < 1e-9


def test_state_text_reads_values_only_within_budget():
    state = {
        "skip-key": ["a", {"b": "c"}, 3, None, b"bytes", b"\xff"],
        "deep": [[[[[[[["too deep"]]]]]]]],
    }
    assert state_text(state) == "a c bytes"
    assert len(state_text("x" * 10_000)) == 4000
    assert state_text(["ab", "cd", "ef"], max_chars=5) == "ab cd"


def test_is_english_matches_analyse():
    assert is_english("Where is my package? It should have arrived yesterday.") is True
    assert is_english("Gdzie jest moja paczka? Miała przyjść wczoraj.") is False


def test_labelled_set_accuracy():
    rows = _labelled()
    results = [analyse(row["state"]) for row in rows]
    english_ok = sum(
        r["is_english"] == row["is_english"] for r, row in zip(results, rows, strict=True)
    )
    language_ok = sum(
        {"nb": "no", "nn": "no"}.get(r["language"], r["language"]) == row["language"]
        for r, row in zip(results, rows, strict=True)
    )
    assert english_ok / len(rows) >= 0.95
    assert language_ok / len(rows) >= 0.90


def test_foreign_text_is_never_decided_english():
    for row in _labelled():
        if not row["is_english"]:
            assert analyse(row["state"])["language"] != "en", row["state"]


def test_import_laya_does_not_load_the_identifier():
    code = "import sys, laya; print('py3langid' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
