"""decide / decide_batch: the user's types -> questions -> a validated instance, on real runtimes."""

from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Literal, Optional, TypedDict

import pytest
from golden import TOLERANCE
from pydantic import BaseModel, Field
from typing_extensions import NotRequired

import laya
from laya import Criteria, Decision, Scale
from laya.errors import InvalidRequest, InvalidSchema
from laya.runtime import ONNXAgent
from laya.typed.plans import plan_for


class Department(enum.Enum):
    """Which team should handle the ticket."""

    BILLING = "billing"
    """charges, invoices, refunds"""
    TECHNICAL = "technical"
    """bugs, errors, outages"""
    ACCOUNT = "account"
    """logins, profiles, merging accounts"""


class Urgency(enum.IntEnum):
    LOW = 0
    """can wait a week"""
    MEDIUM = 1
    """should be handled this week"""
    HIGH = 2
    """needs an answer today"""


Topic = Literal["invoice", "login", "crash"]
Tone = Literal["positive", "neutral", "negative"]


class Ticket(BaseModel):
    department: Department = Field(description="Categorise the customer's message.")
    refund: bool = Field(description="The customer asks for money back.")
    urgency: Urgency = Field(description="How urgent is the message?")
    topics: list[Topic] = Field(description="The message mentions")
    tone: Optional[Tone] = Field(None, description="The customer's tone.")  # noqa: UP045


@dataclasses.dataclass
class TicketDC:
    department: Department = dataclasses.field(
        metadata={"description": "Categorise the customer's message."}
    )
    refund: Annotated[bool, "The customer asks for money back."]
    urgency: Urgency
    """How urgent is the message?"""
    topics: Annotated[list[Topic], "The message mentions"]
    tone: Tone | None = None
    """The customer's tone."""


class TicketTD(TypedDict):
    department: Annotated[Department, "Categorise the customer's message."]
    refund: Annotated[bool, "The customer asks for money back."]
    urgency: Annotated[Urgency, "How urgent is the message?"]
    topics: Annotated[list[Topic], "The message mentions"]
    tone: Annotated[Tone | None, "The customer's tone."]


TICKET_JSON = {
    "title": "Ticket",
    "type": "object",
    "properties": {
        "department": {
            "$ref": "#/$defs/Department",
            "description": "Categorise the customer's message.",
        },
        "refund": {"type": "boolean", "description": "The customer asks for money back."},
        "urgency": {
            "type": "integer",
            "enum": [0, 1, 2],
            "x-laya-levels": [
                "can wait a week",
                "should be handled this week",
                "needs an answer today",
            ],
            "description": "How urgent is the message?",
        },
        "topics": {
            "type": "array",
            "items": {"enum": ["invoice", "login", "crash"]},
            "description": "The message mentions",
        },
        "tone": {
            "anyOf": [{"enum": ["positive", "neutral", "negative"]}, {"type": "null"}],
            "description": "The customer's tone.",
        },
    },
    "$defs": {
        "Department": {
            "type": "string",
            "oneOf": [
                {"const": "billing", "description": "charges, invoices, refunds"},
                {"const": "technical", "description": "bugs, errors, outages"},
                {"const": "account", "description": "logins, profiles, merging accounts"},
            ],
        }
    },
}

STATES = [
    "I was charged twice on my invoice, please refund me today!",
    "The app crashes every time I open settings since the last update.",
    "How do I merge my two accounts? No rush.",
]


@pytest.fixture(scope="module")
def mini():
    return laya.load("mini", device="cpu")


def plain(value):
    """A decided value in JSON terms (enum members as their values, sets as sorted lists)."""
    if isinstance(value, BaseModel):
        value = value.model_dump()
    elif dataclasses.is_dataclass(value):
        value = dataclasses.asdict(value)
    out = {}
    for key, v in value.items():
        if isinstance(v, enum.Enum):
            v = v.value
        elif isinstance(v, (list, set, frozenset)):
            v = [x.value if isinstance(x, enum.Enum) else x for x in v]
        out[key] = v
    return out


def test_a_pydantic_schema_decided_on_mini_is_an_instance_of_it(mini):
    decision = mini.decide(STATES[0], Ticket)
    assert isinstance(decision, Decision)
    assert isinstance(decision.value, Ticket)
    ticket = decision.value
    assert ticket.department is Department.BILLING
    assert isinstance(ticket.urgency, Urgency)
    assert isinstance(ticket.refund, bool)
    assert set(ticket.topics) <= {"invoice", "login", "crash"} and "invoice" in ticket.topics
    assert ticket.tone in ("positive", "neutral", "negative")
    # the record per field agrees with the raw answers
    raw = decision.raw["answers"]
    dept = decision.fields["department"]
    assert dept.probability == raw["department"]["probabilities"]["billing"]
    assert dept.confidence == raw["department"]["answer_confidence"]
    assert dept.probabilities[Department.BILLING] == dept.probability
    assert decision.fields["topics"].probabilities["invoice"] == raw["topics[invoice]"]["noul"]
    assert not decision.abstained and decision.fields["tone"].threshold is None


def test_dataclass_typeddict_and_json_schema_ask_the_same_questions_and_decide_the_same(mini):
    questions = plan_for(Ticket).questions
    assert questions["department"]["criteria"] == {
        "billing": "charges, invoices, refunds",
        "technical": "bugs, errors, outages",
        "account": "logins, profiles, merging accounts",
    }
    assert questions["urgency"] == {
        "type": "score",
        "instructions": "How urgent is the message?",
        "criteria": ["can wait a week", "should be handled this week", "needs an answer today"],
    }
    assert [q for q in questions if q.startswith("topics")] == [
        "topics[invoice]",
        "topics[login]",
        "topics[crash]",
    ]
    for other in (TicketDC, TicketTD, TICKET_JSON):
        assert plan_for(other).questions == questions, other
    expected = [plain(d.value) for d in mini.decide_batch(STATES, Ticket)]
    for other in (TicketDC, TicketTD, TICKET_JSON):
        got = [plain(d.value) for d in mini.decide_batch(STATES, other)]
        assert got == expected, other
    assert isinstance(mini.decide(STATES[0], TicketDC).value, TicketDC)
    assert isinstance(mini.decide(STATES[0], TICKET_JSON).value, dict)


@pytest.mark.numbers
def test_decide_batch_is_one_predict_batch_and_matches_decide(mini):
    starts = []
    decisions = mini.decide_batch(STATES, Ticket, on_predict_start=starts.append)
    assert len(starts) == 1 and starts[0].questions == plan_for(Ticket).questions
    assert len(starts[0].states) == len(STATES)
    direct = mini.predict_batch(STATES, plan_for(Ticket).questions)
    for decision, result, state in zip(decisions, direct, STATES):
        for qid, answer in result["answers"].items():
            got = decision.raw["answers"][qid]
            assert abs(got["answer_confidence"] - answer["answer_confidence"]) <= TOLERANCE
        assert plain(mini.decide(state, Ticket).value) == plain(decision.value)


def test_the_plan_is_built_once_per_schema():
    assert plan_for(Ticket) is plan_for(Ticket)
    assert plan_for(TICKET_JSON) is plan_for(dict(TICKET_JSON))


def test_an_optional_field_under_its_threshold_is_none_and_others_are_flagged(mini):
    strict = {"tone": 1.0, "department": 1.0}
    decision = mini.decide(STATES[0], Ticket, min_confidence=strict)
    assert decision.value.tone is None and decision.fields["tone"].abstained
    assert decision.fields["department"].abstained
    assert decision.value.department is Department.BILLING  # not Optional: kept, flagged
    assert set(decision.abstentions) == {"tone", "department"}
    assert not decision.fields["refund"].abstained and decision.fields["refund"].threshold is None
    # a bucket threshold reaches every field through the gate's own fields
    gated = mini.decide(STATES[0], Ticket, min_confidence=0.999)
    assert gated.value.tone is None
    assert all(f.threshold == 0.999 and f.abstained for f in gated.fields.values())
    assert gated.raw["answers"]["refund"]["abstention"] == "abstained"


def test_multi_label_threshold_and_containers(mini):
    class Tags(BaseModel):
        topics: set[Topic] = Field(description="The message mentions")

    low = mini.decide(STATES[1], Tags, label_threshold=0.0).value.topics
    high = mini.decide(STATES[1], Tags, label_threshold=1.0).value.topics
    assert low == {"invoice", "login", "crash"} and high == set()


def test_scales_bounds_and_criteria():
    class Review(BaseModel):
        stars: int = Field(ge=1, le=5, description="How many stars?")
        effort: Annotated[int, Scale("none", "some", "a lot")]
        label: Annotated[Literal["spam", "ham"], Criteria(spam="unwanted ads")]

    q = plan_for(Review).questions
    assert q["stars"]["criteria"] == ["1", "2", "3", "4", "5"]
    assert q["effort"]["criteria"] == ["none", "some", "a lot"]
    assert q["label"]["criteria"] == {"spam": "unwanted ads", "ham": ""}
    stars = plan_for(Review).fields[0]
    assert [o.value for o in stars.options] == [1, 2, 3, 4, 5]


class Empty(enum.Enum):
    pass


class One(enum.IntEnum):
    ONLY = 0


@pytest.mark.parametrize(
    ("annotation", "match"),
    [
        (str, "field 'x' of Bad: str is not supported; use bool, Literal"),
        (float, "float is not supported"),
        (int, "an int field is a score and needs its levels"),
        (int | str, "a union of 2 types is not supported"),
        (dict, "dict is not supported"),
        (Empty, "the enum Empty has no members"),
        (One, "a score needs at least two levels, got 1"),
        (Annotated[int, Scale("only")], "a score needs at least two levels, got 1"),
        (Literal["a"], "a choice needs at least two options, got 1"),
        (Literal[True, False], "Literal values must be strings or integers"),
        (list[str], "list\\[str\\] is not supported"),
        (Annotated[int, Field(ge=0, le=100)], "make 101 levels"),
    ],
)
def test_unsupported_fields_raise_naming_the_field_before_any_pass(mini, annotation, match):
    Bad = dataclasses.make_dataclass("Bad", [("x", annotation)])
    starts = []
    with pytest.raises(InvalidSchema, match=match) as caught:
        mini.decide("text", Bad, on_predict_start=starts.append)
    assert isinstance(caught.value, TypeError) and starts == []


def test_bad_json_schemas_and_arguments_are_refused(mini):
    with pytest.raises(InvalidSchema, match="field 'x' of schema: .* is not supported"):
        plan_for({"type": "object", "properties": {"x": {"type": "string"}}})
    with pytest.raises(InvalidSchema, match="cannot follow \\$ref"):
        plan_for({"properties": {"x": {"$ref": "#/$defs/Missing"}}})
    with pytest.raises(InvalidSchema, match="top level must be an object with 'properties'"):
        plan_for({"type": "array"})
    with pytest.raises(InvalidSchema, match="not a pydantic model, a dataclass or a TypedDict"):
        plan_for(int)
    with pytest.raises(InvalidSchema, match="^schema has no fields to decide; add at least one$"):
        plan_for({"type": "object", "properties": {}})
    with pytest.raises(InvalidSchema, match="^Triage has no fields to decide"):
        plan_for({"title": "Triage", "properties": {}})
    enum = {"type": "string", "enum": ["a", "b"]}
    with pytest.raises(InvalidSchema, match="'x-laya-criteria' must be an object of option value"):
        plan_for({"properties": {"x": {**enum, "x-laya-criteria": ["a"]}}})
    with pytest.raises(InvalidSchema, match="'x-laya-criteria' describes 'z', which is not one"):
        plan_for({"properties": {"x": {**enum, "x-laya-criteria": {"a": "first", "z": "?"}}}})

    class Empty(BaseModel):
        pass

    with pytest.raises(InvalidSchema, match="^Empty has no fields to decide"):
        plan_for(Empty)
    with pytest.raises(InvalidRequest, match="min_confidence key 'nope' is neither a field"):
        mini.decide("text", Ticket, min_confidence={"nope": 0.5})
    with pytest.raises(InvalidRequest, match="a min_confidence map must be a non-empty dict"):
        mini.decide("text", Ticket, min_confidence={})
    with pytest.raises(InvalidRequest, match="label_threshold must be a number in \\[0, 1\\]"):
        mini.decide("text", Ticket, label_threshold=2)
    with pytest.raises(TypeError, match="decide_batch expects a list of states"):
        mini.decide_batch("one state", Ticket)


def test_router_and_one_liner_decide_through_routing(mini):
    router = laya.Router(preload=False)
    router.attach("mini", mini)
    decision = router.decide(STATES[0], Ticket, model="mini")
    assert decision.raw["routing"]["model"] == "mini"
    assert plain(decision.value) == plain(mini.decide(STATES[0], Ticket).value)
    batch = router.decide_batch(STATES, Ticket, model="mini", batch_size=2)
    assert [plain(d.value) for d in batch] == [
        plain(d.value) for d in mini.decide_batch(STATES, Ticket)
    ]
    one = laya.decide(STATES[1], Ticket, model="mini")
    assert plain(one.value) == plain(mini.decide(STATES[1], Ticket).value)
    many = laya.decide_batch(STATES[:2], Ticket, model="mini")
    assert [plain(d.value) for d in many] == [plain(d.value) for d in batch[:2]]


@pytest.mark.numbers
def test_onnx_agent_decides_like_the_agent(onnx_modernbert_dir, modernbert_dir):
    class Small(BaseModel):
        urgent: bool
        kind: Literal["billing", "sales", "support"]

    torch_agent = laya.load(modernbert_dir, device="cpu")
    onnx_agent = ONNXAgent(onnx_modernbert_dir)
    want = torch_agent.decide_batch(STATES, Small)
    got = onnx_agent.decide_batch(STATES, Small)
    for w, g in zip(want, got):
        for name in ("urgent", "kind"):
            assert abs(w.fields[name].probability - g.fields[name].probability) <= TOLERANCE


class Partial(TypedDict):
    urgent: NotRequired[bool]
    kind: Literal["a", "b"]


def test_typeddict_wrappers_and_defaults():
    plan = plan_for(Partial)
    assert plan.questions["urgent"] == {"type": "noul", "instructions": "Is `urgent` true?"}
    assert plan.questions["kind"] == {
        "type": "choice",
        "instructions": "What is `kind`?",
        "criteria": ["a", "b"],
    }
