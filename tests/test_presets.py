"""Ready-made question sets: valid questions, the field each reads, fresh dicts, overridable labels."""

from __future__ import annotations

import pytest

import laya
from laya.engine.questions import parse_questions
from laya.typed.presets import PRESETS, email_questions, state_field

EXPECTED = {
    "triage": ("message", ["intent", "is_urgent", "frustration", "refund_requested", "churn_risk"]),
    "email": ("body", ["category", "is_spam", "is_phishing", "urgency", "needs_reply"]),
    "guard": (
        "prompt",
        ["jailbreak", "prompt_injection", "sensitive_data", "harm_severity", "topic"],
    ),
    "moderation": ("post", ["toxic", "harassment", "threat", "spam", "severity"]),
    "router": ("request", ["difficulty", "domain", "needs_tools", "is_sensitive"]),
}


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_each_preset_is_valid_and_reads_one_field(name):
    questions = PRESETS[name]()
    field, ids = EXPECTED[name]
    assert list(questions) == ids
    assert len(parse_questions(questions)) == len(ids)
    assert state_field(questions) == field


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_each_call_returns_a_fresh_dict(name):
    first = PRESETS[name]()
    first[next(iter(first))]["instructions"] = "changed"
    assert PRESETS[name]() != first


def test_preset_labels_and_levels():
    triage = PRESETS["triage"]()
    assert list(triage["intent"]["criteria"]) == [
        "refund",
        "technical_help",
        "billing_question",
        "information",
        "cancellation",
        "other",
    ]
    assert len(triage["frustration"]["criteria"]) == 4
    assert PRESETS["guard"]()["harm_severity"]["criteria"] == ["none", "minor", "serious", "severe"]
    assert set(PRESETS["email"]()["is_phishing"]["criteria"]) == {"true", "false"}
    assert len(PRESETS["email"]()["urgency"]["criteria"]) == 3


def test_email_categories_can_be_replaced():
    assert email_questions({"a": "x", "b": "y"})["category"]["criteria"] == {"a": "x", "b": "y"}
    assert email_questions(["a", "b"])["category"]["criteria"] == ["a", "b"]
    assert "billing" in email_questions()["category"]["criteria"]


def test_state_field_is_none_for_zero_or_several_fields():
    assert state_field({}) is None
    assert state_field({"q": {"type": "noul", "instructions": "no field here"}}) is None
    mixed = {**PRESETS["triage"](), **PRESETS["guard"]()}
    assert state_field(mixed) is None
    with pytest.raises(TypeError, match="questions must be a dict of question id -> definition"):
        state_field(["intent"])


def test_presets_are_exported_at_top_level():
    assert laya.triage_questions is PRESETS["triage"]
    assert callable(laya.router_questions) and laya.state_field is state_field
