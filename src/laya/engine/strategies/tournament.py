"""Choices with more options than one pass reads well: tournament rounds and shortlists.

A call in this mode turns every (state, question) into a *bracket*: the options still in play.
A choice with more options than ``group`` is split into groups that fit the head budget; every
group is an ordinary question over its options, and the better half of each group (its top
``len // 2`` options, at least one) goes on to the next round, until what remains fits one
group, whose answer is the call's. Keeping half rather than only the winner costs about twice
the rows and keeps the right option in play far more often (the group winner of a small model
is often its runner-up). With a shortlist, an embedder first keeps
the ``k`` options closest to the state (``shortlist.py``). Every round of every state and
question is encoded together and runs in the same packed passes; questions that need no
tournament (scores, nouls, small choices) are ordinary rows of the first round, so their
answers are exactly what a plain call gives.

Group position must not decide: before each round the options still in play are shuffled with
a generator seeded by ``(seed, round)`` and dealt into balanced groups, so where an option
stands in its group is random (and the same for the same seed), never the caller's order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import numpy as np

from ...checkpoint import Tokenizer
from ...errors import InvalidRequest
from ..encoding import MIN_OPTION_BUDGET, OPTION_TOKEN_CAP, Budgets, StateTokens
from ..engine import Engine
from ..questions import Question
from ..result import (
    Answer,
    ChoiceAnswer,
    Result,
    Usage,
    empty_result,
    make_result,
    merge_round_usage,
    state_usage,
)
from .shortlist import Embedder, shortlist_brackets

__all__ = [
    "AUTO_GROUP_CAP",
    "OVERFLOW",
    "ChoiceMode",
    "answer_with_mode",
    "choice_mode",
    "largest_group",
    "overflowing",
]

# tournament=True picks the largest group that fits the head budget, but no larger than this:
# small checkpoints (mini) were trained on choices of 2-10 options.
AUTO_GROUP_CAP = 8


@dataclass(frozen=True)
class ChoiceMode:
    """How a call answers choices with many options (validated by :func:`choice_mode`).

    ``group``: tournament group size (None: the largest that fits each question, at most
    ``cap``); ``tournament`` off means no rounds. ``shortlist``: keep the ``k`` options the
    embedder ranks closest to the state. ``embed``: ``texts -> vectors`` (None: the runtime's
    default, the bundled mini encoder). ``overflow``: rounds only for a choice whose option
    markers do not all fit one row (``max_len``: a plain call refuses it with
    ``TooManyOptions``); every other question is asked as it is, and a call where none
    overflows is a plain call (:data:`OVERFLOW`).
    """

    tournament: bool = False
    group: int | None = None
    shortlist: int | None = None
    embed: Embedder | None = None
    seed: int = 0
    cap: int = AUTO_GROUP_CAP
    overflow: bool = False


# A tournament for exactly the choices one pass cannot read, and a plain call for everything
# else: how ``laya serve`` answers a choice of more options than fit its checkpoint's rows.
OVERFLOW = ChoiceMode(tournament=True, overflow=True)


def _whole(value: object) -> TypeGuard[int | np.integer[Any]]:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def choice_mode(
    tournament: object = None, shortlist: object = None, embed: Any = None, seed: object = 0
) -> ChoiceMode | None:
    """The mode a call asked for, or None for an ordinary call; a bad argument is refused now.

    ``tournament``: None/False, True (groups filled as far as they fit), a group size, or a
    :class:`ChoiceMode` built already (then the other arguments must be left out)."""
    if isinstance(tournament, ChoiceMode):
        if shortlist is not None or embed is not None:
            raise InvalidRequest("a ChoiceMode given as tournament= carries its own shortlist")
        return tournament
    if tournament is None or tournament is False:
        rounds, group = False, None
    elif tournament is True:
        rounds, group = True, None
    elif _whole(tournament) and tournament >= 2:
        rounds, group = True, int(tournament)
    else:
        raise InvalidRequest(
            f"tournament={tournament!r}: the group size must be a whole number of at least 2 "
            "options (or True for the largest group that fits); pass e.g. tournament=8"
        )
    if shortlist is not None and not (_whole(shortlist) and shortlist >= 1):
        raise InvalidRequest(
            f"shortlist={shortlist!r}: k is how many options the model reads, a whole number of "
            "at least 1; pass e.g. shortlist=20"
        )
    if embed is not None and not callable(embed):
        raise InvalidRequest(
            f"embed={embed!r}: pass a callable that maps a list of texts to one vector per "
            "text (an array of shape [len(texts), dim]), or None for the bundled encoder"
        )
    if not (_whole(seed) and seed >= 0):
        raise InvalidRequest(
            f"seed={seed!r}: pass a whole number of 0 or more (it seeds the option order)"
        )
    if not rounds and shortlist is None:
        return None
    k = None if shortlist is None else int(shortlist)
    return ChoiceMode(rounds, group, k, embed, int(seed))


# --------------------------------------------------------------------------- fitting


def option_lengths(tok: Tokenizer, q: Question) -> list[int]:
    """Head tokens each option takes unsqueezed: its marker plus at most OPTION_TOKEN_CAP."""
    encoded = tok.encode([" " + text.replace(tok.mask_token, " ") for text in q.options])
    return [1 + min(len(ids), OPTION_TOKEN_CAP) for ids in encoded]


def largest_group(lengths: Sequence[int], head_max_len: int) -> int:
    """How many options fit the head budget uncut, counting the longest ones first (>= 1)."""
    room, fitted = head_max_len - MIN_OPTION_BUDGET, 0
    for length in sorted(lengths, reverse=True):
        if room - length < 0:
            break
        room -= length
        fitted += 1
    return max(1, fitted)


@dataclass
class Plan:
    """One question's part in a call.

    ``group``: most options per group (None: the question is asked as it is); ``room``: head
    tokens a group's options may take (None: a fixed ``group``, checked to fit); ``lengths``:
    each option's head tokens; ``shortlist``: how many options the embedder keeps.
    """

    group: int | None = None
    shortlist: int | None = None
    room: int | None = None
    lengths: list[int] = field(default_factory=list)

    def fits_one(self, alive: Sequence[int]) -> bool:
        """Whether ``alive`` is small enough to be the final group."""
        if self.group is None or len(alive) <= 2:
            return True
        if len(alive) > self.group:
            return False
        return self.room is None or sum(self.lengths[i] for i in alive) <= self.room


def plan_question(tok: Tokenizer, q: Question, mode: ChoiceMode, head_max_len: int) -> Plan:
    """How ``q`` is answered under ``mode``; raises InvalidRequest before any pass."""
    n = len(q.options)
    if q.type != "choice":
        return Plan()
    k = mode.shortlist if mode.shortlist is not None and mode.shortlist < n else None
    plan = Plan(shortlist=k)
    if mode.tournament:
        plan.lengths = option_lengths(tok, q)
        fits = max(2, largest_group(plan.lengths, head_max_len))
        if mode.group is None:
            plan.group, plan.room = mode.cap, head_max_len - MIN_OPTION_BUDGET
        elif mode.group > fits and (k or n) > mode.group:
            raise InvalidRequest(
                f"tournament={mode.group}: question {q.qid!r} has options of up to "
                f"{max(plan.lengths) - 1} tokens, so {mode.group} of them do not fit "
                f"head_max_len={head_max_len} uncut (at most {fits} do); pass tournament={fits} "
                "or less, or tournament=True for groups filled as far as they fit"
            )
        else:
            plan.group = mode.group
        if plan.fits_one(
            range(n) if k is None else sorted(range(n), key=plan.lengths.__getitem__)[-k:]
        ):
            plan.group = None
    if plan.group is None and plan.shortlist is None:
        return Plan()
    return _checked_labels(q, plan) if plan.group else plan


def _checked_labels(q: Question, plan: Plan) -> Plan:
    bad = next((key for key in q.keys if not isinstance(key, str)), None)
    if bad is not None:
        raise InvalidRequest(
            f"question {q.qid!r}: label {bad!r} is a {type(bad).__name__}; a tournament answers "
            "by label name, so every label must be a string: write it as a string"
        )
    return plan


def overflowing(engine: Engine, questions: Sequence[Question], budgets: Budgets) -> list[bool]:
    """Whether each question is a choice whose option markers do not all fit in ``max_len``
    (what a plain call refuses with ``TooManyOptions``)."""
    choices = [q for q in questions if q.type == "choice"]
    heads = iter(engine.heads(choices, budgets.head_max_len) if choices else ())
    return [
        q.type == "choice" and max(next(heads).markers, default=0) >= budgets.max_len
        for q in questions
    ]


# --------------------------------------------------------------------------- brackets


@dataclass(eq=False)
class Bracket:
    """One (state, question): the options still in play and how it has gone so far."""

    state: int
    question: Question
    plan: Plan
    alive: list[int]
    rounds: int = 0
    ranked: list[int] | None = None
    scores: list[float] | None = None  # the ranked options' cosines to the state
    answer: Answer | None = None

    @property
    def final(self) -> bool:
        return self.plan.fits_one(self.alive)


@dataclass(eq=False)
class Job:
    """One row of a round: a bracket asked about some of its options."""

    bracket: Bracket
    members: tuple[int, ...] | None  # None: the caller's question as it is
    question: Question = field(init=False)
    winners: list[int] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        q = self.bracket.question
        if self.members is None:
            self.question = q
        else:
            self.question = dataclasses.replace(
                q,
                keys=tuple(q.keys[i] for i in self.members),
                options=tuple(q.options[i] for i in self.members),
                order=tuple(range(len(self.members))),
            )

    @property
    def key(self) -> tuple[Any, tuple[int, ...] | None]:
        return (self.bracket.question.qid, self.members)


def _deal(bracket: Bracket, seed: int, round_index: int) -> list[list[int]]:
    """Shuffle the options in play (seeded by seed and round) and deal them into groups.

    A fixed group size deals balanced groups; otherwise each group takes options until the
    next would overflow the head budget or the group is full (at least two per group).
    """
    alive, plan = bracket.alive, bracket.plan
    order = np.random.default_rng([seed, round_index]).permutation(len(alive))
    shuffled = [int(alive[i]) for i in order]
    if bracket.final:
        return [shuffled]
    group = plan.group or len(shuffled)  # a bracket that is not final has a group size
    if plan.room is None:
        n_groups = -(-len(shuffled) // group)
        return [[int(i) for i in part] for part in np.array_split(shuffled, n_groups)]
    groups: list[list[int]] = [[]]
    room = plan.room
    for i in shuffled:
        current = groups[-1]
        if len(current) >= 2 and (len(current) == group or plan.lengths[i] > room):
            groups.append([])
            room = plan.room
        groups[-1].append(i)
        room -= plan.lengths[i]
    return groups


def _jobs(bracket: Bracket, seed: int, round_index: int) -> tuple[list[Job], list[int]]:
    """This round's rows of a bracket, and the options that go through without one (byes)."""
    if bracket.plan.group is None and bracket.plan.shortlist is None:
        return [Job(bracket, None)], []
    groups = _deal(bracket, seed, round_index)
    jobs = [Job(bracket, tuple(g)) for g in groups if len(g) > 1 or bracket.final]
    return jobs, [g[0] for g in groups if len(g) == 1 and not bracket.final]


# --------------------------------------------------------------------------- the call


def answer_with_mode(
    engine: Engine,
    states: Sequence[Any],
    questions: Sequence[Question],
    budgets: Budgets,
    langs: Sequence[str | None],
    *,
    mode: ChoiceMode,
    embedder: Callable[[], Embedder] | None = None,
) -> list[Result]:
    """The strategy of a call in ``mode``: every state's questions, by rounds over the engine.

    A shortlist ranks with ``mode.embed``, else with what ``embedder()`` returns (the runtime's
    default, built only when some question is shortlisted). In ``mode.overflow`` only the
    choices that overflow one row play rounds, and a call where none does is
    :meth:`Engine.answer`."""
    played = overflowing(engine, questions, budgets) if mode.overflow else [True] * len(questions)
    if not any(played):
        return engine.answer(states, questions, budgets, langs)
    plans = [
        plan_question(engine.tokenizer, q, mode, budgets.head_max_len) if play else Plan()
        for q, play in zip(questions, played)
    ]
    if not questions:
        return [empty_result(engine.model_name) for _ in states]
    if not states:
        return []
    tokens = engine.tokenize(states)
    brackets = [
        Bracket(si, q, plan, list(range(len(q.options))))
        for si in range(len(states))
        for q, plan in zip(questions, plans)
    ]
    if any(plan.shortlist is not None for plan in plans):
        embed = mode.embed or (embedder() if embedder is not None else None)
        if embed is None:
            raise InvalidRequest("a shortlist needs an embedder: pass embed=")
        shortlist_brackets(embed, states, brackets)
    usages: list[list[Usage]] = [[] for _ in states]
    round_index = 0
    pending = brackets
    while pending:
        jobs: list[Job] = []
        advanced: dict[Bracket, list[int]] = {}
        for bracket in pending:
            round_jobs, byes = _jobs(bracket, mode.seed, round_index)
            jobs.extend(round_jobs)
            advanced[bracket] = byes
        _run_round(engine, jobs, tokens, usages, budgets, langs)
        for job in jobs:
            if job.bracket.answer is None and not job.bracket.final:
                advanced[job.bracket].extend(job.winners)
        for bracket in pending:
            bracket.rounds += 1
            if bracket.answer is None:
                bracket.alive = sorted(advanced[bracket])
        pending = [b for b in pending if b.answer is None]
        round_index += 1
    nq = len(questions)
    return [
        _result(engine, brackets[si * nq : (si + 1) * nq], usages[si]) for si in range(len(states))
    ]


def _run_round(
    engine: Engine,
    jobs: list[Job],
    tokens: list[StateTokens],
    usages: list[list[Usage]],
    budgets: Budgets,
    langs: Sequence[str | None],
) -> None:
    """Encode every job of a round, run them in shared passes, and settle each one."""
    distinct = list({job.key: job.question for job in jobs}.items())
    heads = dict(
        zip(
            (key for key, _ in distinct),
            engine.heads([q for _, q in distinct], budgets.head_max_len),
        )
    )
    by_state: dict[int, list[Job]] = {}
    for job in jobs:
        by_state.setdefault(job.bracket.state, []).append(job)
    rows, order = [], []
    for si, state_jobs in by_state.items():
        state_heads = [heads[job.key] for job in state_jobs]
        state_questions = [job.question for job in state_jobs]
        state_rows = engine.encode(state_questions, state_heads, [tokens[si]], budgets)
        for row in state_rows:
            row.state = si
        rows.extend(state_rows)
        order.extend(state_jobs)
        usages[si].append(
            state_usage(
                state_questions,
                [len(row.ids) for row in state_rows],
                len(tokens[si].ids),
                [row.state_tokens_used for row in state_rows],
                state_heads,
            )
        )
    per_state = max(len(js) for js in by_state.values()) if by_state else 1
    max_rows = budgets.batch_size * per_state if budgets.batch_size else None
    out = engine.run(rows, max_rows)
    for job, logits, act in zip(order, out.logits, out.act):
        _settle(engine, job, logits, act, langs[job.bracket.state])


def _settle(
    engine: Engine, job: Job, logits: np.ndarray, act: np.ndarray, lang: str | None
) -> None:
    """A group's better half goes on; a final group (or a plain question) answers its bracket."""
    bracket, members = job.bracket, job.members
    if not bracket.final and members is not None:
        keep = max(1, len(members) // 2)
        best = np.argsort(-logits[: len(members)], kind="stable")[:keep]
        job.winners = [members[int(i)] for i in best]
        return
    answer = engine.decode(job.question, logits, act, lang)
    if members is not None and answer["type"] == "choice":
        answer = _widened(answer, bracket, members)
    bracket.answer = answer


def _widened(answer: ChoiceAnswer, bracket: Bracket, members: tuple[int, ...]) -> ChoiceAnswer:
    """Probabilities over every caller label (0.0 for the eliminated), plus how it was decided."""
    q = bracket.question
    shown = answer["probabilities"]
    out: ChoiceAnswer = {**answer, "probabilities": {key: shown.get(key, 0.0) for key in q.keys}}
    if bracket.plan.group is not None:
        finalists = [str(q.keys[i]) for i in sorted(members)]  # labels: str (_checked_labels)
        out["tournament"] = {"finalists": finalists, "rounds": bracket.rounds + 1}
        if q.order != tuple(range(len(q.order))):
            out["tournament"]["option_order_dropped"] = True
    if bracket.ranked is not None:
        out["shortlist"] = {
            "candidates": [q.keys[i] for i in bracket.ranked],
            "scores": bracket.scores,
        }
    return out


def _result(engine: Engine, brackets: list[Bracket], usages: list[Usage]) -> Result:
    answers = {b.question.qid: b.answer for b in brackets if b.answer is not None}
    return make_result(engine.model_name, answers, merge_round_usage(usages))
