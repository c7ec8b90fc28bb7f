"""Ready-made question sets for common workflows, each reading one named field of the state.

Every function returns a fresh dict, so callers may edit the result. The instructions name the
state field they read in backticks (``message``, ``body``, ...); :func:`state_field` finds it,
which is how the command line knows to send ``{"message": text}`` for the triage set.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

__all__ = [
    "PRESETS",
    "email_questions",
    "guard_questions",
    "moderation_questions",
    "router_questions",
    "state_field",
    "triage_questions",
]

Questions = dict[str, dict[str, object]]

_BACKTICKED = re.compile(r"`([^`\s]+)`")

DEFAULT_EMAIL_CATEGORIES: dict[str, str] = {
    "billing": "invoices, charges, payments, refunds",
    "technical": "bugs, errors, outages, help using the product",
    "sales": "pricing, quotes, plans, new purchases",
    "security": "suspicious logins, vulnerabilities, account compromise",
    "hr": "jobs, hiring, payroll, staff matters",
    "other": "anything that fits none of the above",
}


def _noul(instructions: str, **extra: object) -> dict[str, object]:
    """A yes/no question (the answer is P(true))."""
    return {"type": "noul", "instructions": instructions, **extra}


def _score(instructions: str, levels: list[str]) -> dict[str, object]:
    """An ordinal question; level 0 first."""
    return {"type": "score", "instructions": instructions, "criteria": list(levels)}


def _choice(instructions: str, criteria: Mapping[str, str] | list[str]) -> dict[str, object]:
    """A pick-one question over labelled options."""
    options = dict(criteria) if isinstance(criteria, Mapping) else list(criteria)
    return {"type": "choice", "instructions": instructions, "criteria": options}


def triage_questions() -> Questions:
    """Customer-support triage of the state's `message`: intent, urgency, mood, refund, churn."""
    return {
        "intent": _choice(
            "What does the customer want, going by the `message`?",
            {
                "refund": "money back for a charge or purchase",
                "technical_help": "something is broken or they cannot get it to work",
                "billing_question": "a question about an invoice, a charge or a payment",
                "information": "a general question about the product or the company",
                "cancellation": "they want to end a subscription or close the account",
                "other": "none of the above",
            },
        ),
        "is_urgent": _noul(
            "Does the `message` show time pressure: a deadline, an outage, something blocked now?"
        ),
        "frustration": _score(
            "How frustrated does the writer of the `message` sound?",
            ["calm", "mildly annoyed", "frustrated", "very angry"],
        ),
        "refund_requested": _noul("Does the `message` ask for money back?"),
        "churn_risk": _noul(
            "Does the `message` suggest the customer may leave, cancel or switch provider?"
        ),
    }


def email_questions(categories: Mapping[str, str] | list[str] | None = None) -> Questions:
    """Inbox sorting of the state's email `body`; ``categories`` replaces the default labels."""
    return {
        "category": _choice(
            "Which team should handle the email `body`?",
            DEFAULT_EMAIL_CATEGORIES if categories is None else categories,
        ),
        "is_spam": _noul("Is the email `body` unsolicited bulk mail or advertising?"),
        "is_phishing": _noul(
            "Does the email `body` try to trick the reader into giving away credentials, "
            "money or access?",
            criteria={
                "true": "it impersonates someone, pushes a suspicious link or asks for secrets",
                "false": "an ordinary message with no attempt to deceive",
            },
        ),
        "urgency": _score(
            "How soon does the email `body` need attention?",
            ["can wait", "within a day or two", "today"],
        ),
        "needs_reply": _noul("Does the email `body` expect an answer from us?"),
    }


def guard_questions() -> Questions:
    """Screening of a user's `prompt` to an assistant: attacks, secrets, harm and topic."""
    return {
        "jailbreak": _noul(
            "Does the `prompt` try to make the assistant ignore its rules or play a role "
            "without them?"
        ),
        "prompt_injection": _noul(
            "Does the `prompt` carry instructions meant to override the system's own, "
            "e.g. hidden in pasted text?"
        ),
        "sensitive_data": _noul(
            "Does the `prompt` contain credentials, keys or someone's personal data?"
        ),
        "harm_severity": _score(
            "How much harm could answering the `prompt` cause?",
            ["none", "minor", "serious", "severe"],
        ),
        "topic": _choice(
            "What is the `prompt` about?",
            [
                "product_support",
                "coding",
                "general_knowledge",
                "personal_advice",
                "security_testing",
                "other",
            ],
        ),
    }


def moderation_questions() -> Questions:
    """Community moderation of a user's `post`: toxicity, harassment, threats, spam, severity."""
    return {
        "toxic": _noul("Is the `post` rude, insulting or hateful?"),
        "harassment": _noul("Does the `post` target a specific person to demean or intimidate?"),
        "threat": _noul("Does the `post` threaten violence or other harm?"),
        "spam": _noul("Is the `post` advertising, scam or repeated filler?"),
        "severity": _score(
            "How badly does the `post` break community rules?",
            ["no rule broken", "borderline", "clear violation", "severe violation"],
        ),
    }


def router_questions() -> Questions:
    """Sizing up a `request` to an AI system: difficulty, domain, tools, sensitivity."""
    return {
        "difficulty": _score(
            "How hard is the `request` to answer well?",
            ["trivial", "easy", "moderate", "hard"],
        ),
        "domain": _choice(
            "Which kind of work is the `request`?",
            {
                "code": "writing, reading or fixing software",
                "math_or_logic": "calculation, proofs, puzzles",
                "writing": "drafting, editing or rewriting text",
                "factual_lookup": "a fact to look up or explain",
                "data_analysis": "working through tables, figures or datasets",
                "chitchat": "small talk",
            },
        ),
        "needs_tools": _noul(
            "Does the `request` need tools (search, code execution, files, live data) to answer?"
        ),
        "is_sensitive": _noul("Does the `request` touch money, legal, medical or safety matters?"),
    }


PRESETS: dict[str, Callable[[], Questions]] = {
    "email": email_questions,
    "guard": guard_questions,
    "moderation": moderation_questions,
    "router": router_questions,
    "triage": triage_questions,
}


def state_field(questions: Mapping[str, object]) -> str | None:
    """The one backticked field named across the instructions, or None if none or several."""
    if not isinstance(questions, Mapping):
        raise TypeError(
            f"questions must be a dict of question id -> definition, got {type(questions).__name__}"
        )
    names = {
        name
        for definition in questions.values()
        if isinstance(definition, Mapping) and isinstance(definition.get("instructions"), str)
        for name in _BACKTICKED.findall(definition["instructions"])
    }
    return names.pop() if len(names) == 1 else None
