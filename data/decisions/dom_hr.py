"""Scheduling and HR: leave, scheduling, payroll, policy questions and workplace issues."""

from __future__ import annotations

from common import C, as_chat, as_text, fill, join, name


def H(kind, text, urg=None):
    """An HR core; ``urg`` None means an urgency phrase is appended per state."""
    return C(text, kind=kind, urg=urg, has_date="{date}" in text)


CORES = [
    H("leave_request", "I'd like to request annual leave from {date} for two weeks for my sister's wedding."),
    H("leave_request", "Can I take next Friday off? I have a medical appointment in the morning."),
    H("leave_request", "My wife is due in March and I'd like to book four weeks of paternity leave starting from the birth."),
    H("leave_request", "I'm feeling unwell and won't be able to come in today. Please record it as a sick day.", urg=2),
    H("leave_request", "Requesting three days of unpaid leave, starting {date}, so I can move house."),
    H("leave_request", "I'd like to use my five remaining vacation days before the end of the year, ideally the week after {date}."),
    H("scheduling", "Could we move my one-to-one with {name} from {day} to Thursday? I have a client call that clashes."),
    H("scheduling", "Please set up the onboarding session for the three new hires on {date} at {time}."),
    H("scheduling", "I can't make the all-hands at {time}; is there a later slot or a recording?"),
    H("scheduling", "Can I swap my Saturday shift with {first} next week? She has already agreed."),
    H("scheduling", "We need a room for 12 people for the quarterly planning day on {date}. Which one is free?"),
    H("scheduling", "Could the team retro start 30 minutes later on Fridays from now on?"),
    H("payroll", "My last payslip is missing the 20 hours of overtime I worked."),
    H("payroll", "I haven't received my salary this month - it was due on {date}."),
    H("payroll", "How do I change the bank account my salary is paid into?"),
    H("payroll", "The tax code on my payslip looks wrong; far too much tax was deducted."),
    H("payroll", "When will the annual bonus be paid, and will it show on the regular payslip?"),
    H("payroll", "My expense claim for the client trip still hasn't been reimbursed after six weeks."),
    H("policy_question", "What is the company policy on working from abroad for a few weeks?"),
    H("policy_question", "How many sick days can we take per year before a doctor's note is needed?"),
    H("policy_question", "Is it allowed to bring a dog to the office?", urg=0),
    H("policy_question", "Does the parental leave policy also apply to adoptive parents?"),
    H("policy_question", "Are we allowed to accept gifts from suppliers, for example a bottle of wine at Christmas?"),
    H("policy_question", "What notice period applies if I resign? My contract doesn't say."),
    H("workplace_issue", "My manager keeps making comments about my age in team meetings and it makes me uncomfortable. I'd like to report it."),
    H("workplace_issue", "A colleague has been taking credit for my work in front of the director. How can I raise this?"),
    H("workplace_issue", "The office air conditioning has been broken for a week and it's 31 degrees at my desk."),
    H("workplace_issue", "Two people on my team had a shouting match this afternoon and the others are upset. I think HR should step in."),
    H("workplace_issue", "Since I raised a safety concern I feel I'm being left out of meetings on purpose."),
    H("workplace_issue", "Someone keeps leaving anonymous notes on my desk mocking my accent. I want this to stop."),
]  # fmt: skip

URGENCY = [
    ["No rush on this.", "Whenever you have a moment.", "There's no hurry."],
    ["Could you get back to me this week?", "An answer in the next few days would be great."],
    ["I need an answer today, please.", "This is urgent - please reply as soon as possible.",
     "It's urgent, I have to sort it out before the end of the day."],
]  # fmt: skip
OPENERS = ["", "", "Hi HR,", "Hello,", "Hi {first},", "Dear People Team,"]
CLOSERS = ["", "", "Thanks!", "Many thanks,\n{name}", "Best, {first}", "Thank you."]
REPLIES = [
    "Thanks for letting us know - could you share your employee ID?",
    "Got it. Someone from HR will look at this.",
]
FOLLOWUPS = ["Sure, it's E{n}.", "Thanks.", "Great, appreciate it."]


def make(rng, core):
    """An HR state: message text, HR ticket JSON, chat turns or a chat-log list."""
    labels = dict(core)
    body = fill(rng, core["text"])
    if core["urg"] is None:
        labels["urg"] = rng.randrange(3)
        body = join(body, rng.choice(URGENCY[labels["urg"]]))
    form = rng.random()
    if form < 0.35:
        state = fill(rng, as_text(rng, body, OPENERS, CLOSERS))
    elif form < 0.6:
        state = {"employee": name(rng), "department": rng.choice(["Sales", "Engineering", "Finance", "Support", "Ops"]),
                 "message": body}  # fmt: skip
    elif form < 0.8:
        turns = as_chat(rng, body, REPLIES, FOLLOWUPS, roles=("employee", "hr"))
        state = [{**t, "content": fill(rng, t["content"])} for t in turns]
    else:
        state = [
            fill(rng, f"{{first}}: {body}"),
            "hr-bot: Thanks, a member of the team will pick this up.",
        ]
    return state, labels


FAMILIES = [
    {
        "type": "choice",
        "key": "kind",
        "qids": ["category", "request_type", "hr_topic", "type", "route"],
        "instructions": [
            "What kind of HR request is this?",
            "Classify the employee's message.",
            "Which HR queue should this go to?",
            "What is the employee writing about?",
            "Pick the topic of the request.",
        ],
        "options": {
            "leave_request": ["asks for time off (vacation, sick day, parental leave)", "time-off request"],
            "scheduling": ["meetings, shifts, rooms and calendar changes", "arranging or moving times"],
            "payroll": ["salary, payslips, tax, bonuses, expenses", "pay and reimbursements"],
            "policy_question": ["asks what the company rules allow", "a question about company policy"],
            "workplace_issue": ["a conflict, mistreatment or a problem at work to be fixed", "a complaint about the workplace"],
        },
    },
    {
        "type": "score",
        "key": "urg",
        "qids": ["urgency", "priority", "how_urgent"],
        "instructions": [
            "How urgent is the employee's request?",
            "Rate the urgency of this HR message.",
            "How fast does HR need to respond?",
        ],
        "styles": [
            ("low: no time pressure", "medium: within a few days", "high: today"),
            ("not urgent", "somewhat urgent", "urgent"),
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["kind"] == "leave_request",
        "qids": ["time_off", "leave", "absence"],
        "instructions": [
            "The employee is asking for time off.",
            "Is this a request for leave?",
            "The writer wants days off work.",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["has_date"],
        "qids": ["has_date", "date", "mentions_date"],
        "instructions": [
            "The message mentions a calendar date.",
            "Does the text give a specific date (day and month)?",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["kind"] == "payroll",
        "qids": ["pay", "payroll", "salary"],
        "instructions": ["The message is about pay or reimbursement.", "Is this message about pay, payslips or expenses?"],
    },
    {
        "type": "noul",
        "test": lambda x: x["kind"] == "workplace_issue",
        "qids": ["issue", "conflict", "grievance"],
        "instructions": [
            "The employee reports a problem with colleagues, managers or working conditions.",
            "Is this a workplace complaint?",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["kind"] == "scheduling",
        "qids": ["reschedule", "calendar", "scheduling"],
        "instructions": [
            "The writer wants to arrange or change a meeting, shift or booking.",
            "Is this about scheduling?",
        ],
    },
]  # fmt: skip

DOMAIN = {
    "name": "scheduling_hr",
    "prefix": "hr",
    "cores": CORES,
    "families": FAMILIES,
    "make": make,
    "states": 180,
}
