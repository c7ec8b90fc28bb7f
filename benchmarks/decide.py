"""What ``decide_batch`` costs over ``predict_batch`` of the same questions, on ``mini`` (CPU).

Run ``python benchmarks/decide.py [--states 32] [--repeats 7]``. Both calls answer the same 32
support tickets with the questions the ``Ticket`` schema plans (7 questions: a choice, a noul, a
score, three multi-label nouls, an optional choice); they alternate in one process, so load on
the machine falls on both alike. Prints the median of each and their ratio.
"""

from __future__ import annotations

import argparse
import enum
import statistics
import time
from typing import Literal, Optional

from pydantic import BaseModel, Field

import laya
from laya.typed.plans import plan_for

TICKETS = [
    "I was charged twice on my invoice, please refund me today!",
    "The app crashes every time I open settings since the last update.",
    "How do I merge my two accounts? No rush.",
    "My card was declined but the money left my bank account.",
    "Login fails with error 500 after the password reset.",
    "Can I get a copy of last month's invoice for my records?",
    "Your update deleted all my saved projects. This is unacceptable.",
    "Thanks, the new export feature works great!",
]


class Department(enum.Enum):
    BILLING = "billing"
    TECHNICAL = "technical"
    ACCOUNT = "account"


class Urgency(enum.IntEnum):
    LOW = 0
    MEDIUM = 1
    HIGH = 2


class Ticket(BaseModel):
    department: Department = Field(description="Categorise the customer's message.")
    refund: bool = Field(description="The customer asks for money back.")
    urgency: Urgency = Field(description="How urgent is the message?")
    topics: list[Literal["invoice", "login", "crash"]] = Field(description="The message mentions")
    tone: Optional[Literal["positive", "neutral", "negative"]] = None  # noqa: UP045


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--states", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    agent = laya.load("mini", device="cpu")
    states = [TICKETS[i % len(TICKETS)] + f" (ticket {i})" for i in range(args.states)]
    questions = plan_for(Ticket).questions
    calls = {
        "predict_batch": lambda: agent.predict_batch(states, questions),
        "decide_batch": lambda: agent.decide_batch(states, Ticket),
    }
    for call in calls.values():  # warm up both paths
        call()
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(args.repeats):
        for name, call in calls.items():
            started = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - started)
    medians = {name: statistics.median(t) for name, t in times.items()}
    for name, median in medians.items():
        print(
            f"{name:<14} {args.states} states, {len(questions)} questions: {median * 1000:.1f} ms"
        )
    ratio = medians["decide_batch"] / medians["predict_batch"]
    print(f"decide_batch / predict_batch = {ratio:.3f} (median of {args.repeats}, alternating)")


if __name__ == "__main__":
    main()
