"""Shared ingredients for the decision-data domains: slot fillers and state wrappers.

Every function takes the generator's ``random.Random`` so the build stays deterministic.
"""

from __future__ import annotations

import re

FIRST_NAMES = [
    "Priya", "Tom", "Aisha", "Marco", "Lena", "Kenji", "Sofia", "David", "Fatima", "Jonas",
    "Maya", "Luis", "Chen", "Olga", "Sam", "Nadia", "Pieter", "Grace", "Omar", "Hannah",
    "Ravi", "Elena", "Kwame", "Ingrid", "Mateo", "Yuki", "Zoe", "Arjun", "Claire", "Tariq",
]  # fmt: skip
LAST_NAMES = [
    "Sharma", "Becker", "Okafor", "Rossi", "Lindqvist", "Tanaka", "Garcia", "Cohen", "Haddad",
    "Novak", "Brennan", "Moreau", "Kowalski", "Mensah", "Silva", "Park", "Fischer", "Walsh",
]  # fmt: skip
MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
]  # fmt: skip
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
CITIES = ["Lisbon", "Denver", "Osaka", "Leeds", "Nairobi", "Toronto", "Lyon", "Austin", "Perth"]
HOSTS = ["web-03", "db-prod-1", "build-agent-7", "laptop-0421", "vpn-gw-2", "mail-01", "hr-fs-02"]
COMPANIES = ["Northwind", "Acme Analytics", "Bluefin Labs", "Copperleaf", "Helio Systems"]


def C(text, **labels):
    """One hand-written core: its text plus its true labels."""
    return {"text": text, **labels}


def name(rng):
    """A random full name."""
    return f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"


def date(rng):
    """A random calendar date in one of several written styles."""
    month, day = rng.randrange(12), rng.randint(1, 28)
    styles = [
        f"{MONTHS[month]} {day}",
        f"{day} {MONTHS[month]}",
        f"2024-{month + 1:02d}-{day:02d}",
        f"{MONTHS[month][:3]} {day}",
    ]
    return rng.choice(styles)


def slot_values(rng):
    """Fresh values for every slot a core text may use."""
    first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
    return {
        "name": f"{first} {last}",
        "first": first,
        "order": str(rng.randint(10000, 99999)),
        "date": date(rng),
        "day": rng.choice(WEEKDAYS),
        "time": rng.choice(["9am", "10:30", "2pm", "3:15 pm", "4pm", "11am"]),
        "phone": f"555-01{rng.randint(10, 99)}",
        "email": f"{first.lower()}.{last.lower()}@example.com",
        "city": rng.choice(CITIES),
        "host": rng.choice(HOSTS),
        "user": f"{first[0].lower()}{last.lower()}",
        "ip": f"203.0.113.{rng.randint(2, 250)}",
        "ip2": f"198.51.100.{rng.randint(2, 250)}",
        "n": str(rng.randint(12, 480)),
        "company": rng.choice(COMPANIES),
        "ticket": f"T-{rng.randint(1000, 9999)}",
        "invoice": f"INV-{rng.randint(2023, 2024)}-{rng.randint(100, 999)}",
    }


def fill(rng, text, extra=None):
    """Replace ``{slot}`` markers with fresh values; unknown braces are left alone."""
    values = slot_values(rng)
    values.update(extra or {})
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), text)


def join(*parts):
    """Join the non-empty parts of a message with single spaces."""
    return " ".join(p for p in parts if p)


def as_text(rng, body, openers, closers):
    """A plain-text message: optional greeting, the body, optional sign-off."""
    sep = rng.choice([" ", "\n"])
    parts = [rng.choice(openers), body, rng.choice(closers)]
    return sep.join(p for p in parts if p)


def as_chat(rng, first, replies, followups, roles=("user", "assistant")):
    """A conversation list of role/content dicts, the core message first or after a greeting."""
    user, agent = roles
    turns = [{"role": user, "content": first}]
    if rng.random() < 0.7:
        turns.append({"role": agent, "content": rng.choice(replies)})
        turns.append({"role": user, "content": rng.choice(followups)})
    if rng.random() < 0.3:
        turns.insert(0, {"role": agent, "content": rng.choice(GREETINGS)})
    return turns


def as_lines(rng, first, replies, followups, speakers=("Customer", "Agent")):
    """A conversation as a plain list of strings, optionally speaker-prefixed."""
    who, agent = speakers
    prefix = rng.random() < 0.6
    lines = [(who, first)]
    if rng.random() < 0.6:
        lines += [(agent, rng.choice(replies)), (who, rng.choice(followups))]
    return [f"{s}: {t}" if prefix else t for s, t in lines]


GREETINGS = [
    "Hi! How can I help you today?",
    "Hello, thanks for contacting us. What can I do for you?",
    "Welcome to support chat. What's going on?",
    "Hi there, you're chatting with the help desk.",
]
