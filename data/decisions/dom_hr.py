"""Scheduling and HR: leave, scheduling, payroll, policy questions and workplace issues."""

from __future__ import annotations

from common import C, as_chat, as_text, fill, join, name


def H(kind, text, urg=None):
    """An HR core; ``urg`` None means an urgency phrase is appended per state."""
    return C(text, kind=kind, urg=urg, has_date="{date}" in text)


CORES = [
    H("leave_request", "I'd like to request annual leave from {date} for two weeks for my sister's wedding."),
    H("leave_request", "Can I take next Friday off? I have a medical appointment in the morning."),
    H("leave_request", "My wife is due in the spring and I'd like to book four weeks of paternity leave starting from the birth."),
    H("leave_request", "I'm feeling unwell and won't be able to come in today. Please record it as a sick day.", urg=2),
    H("leave_request", "Requesting three days of unpaid leave, starting {date}, so I can move house."),
    H("leave_request", "I'd like to use my five remaining vacation days before the end of the year, ideally the week after {date}."),
    H("scheduling", "Could we move my one-to-one with {name} from {day} to next week? I have a client call that clashes."),
    H("scheduling", "Please set up the onboarding session for the three new hires on {date} at {time}."),
    H("scheduling", "I can't make the all-hands at {time}; is there a later slot or a recording?"),
    H("scheduling", "Can I swap my Saturday shift with {first} next week? They've already agreed."),
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
    H("policy_question", "Are we allowed to accept gifts from suppliers, for example a bottle of wine at the end of the year?"),
    H("policy_question", "What notice period applies if I resign? My contract doesn't say."),
    H("workplace_issue", "My manager keeps making comments about my age in team meetings and it makes me uncomfortable. I'd like to report it."),
    H("workplace_issue", "A colleague has been taking credit for my work in front of the director. How can I raise this?"),
    H("workplace_issue", "The office air conditioning has been broken for a week and it's 31 degrees at my desk."),
    H("workplace_issue", "Two people on my team had a shouting match this afternoon and the others are upset. I think HR should step in."),
    H("workplace_issue", "Since I raised a safety concern I feel I'm being left out of meetings on purpose."),
    H("workplace_issue", "Someone keeps leaving anonymous notes on my desk mocking my accent. I want this to stop."),
    H("leave_request", "Not urgent at all, but I'd like to pencil in two weeks of annual leave sometime next summer so I can visit family overseas. Happy to work around the team's busiest periods.", urg=0),
    H("leave_request", "Looking ahead: I'd like to book {date} off as a personal day - it's my daughter's first day at school. No hurry to approve it, it's months away.", urg=0),
    H("leave_request", "I'd like to take three days of annual leave from {date} for a friend's wedding abroad. Could you confirm within the next few days so I can book flights?", urg=1),
    H("leave_request", "I'll miss next Tuesday's sprint review because I'd like that day off for my son's graduation. Could you approve one day of annual leave sometime this week?", urg=1),
    H("leave_request", "Sick today, can't come in - please let my shift lead know before 9.", urg=2),
    H("leave_request", "My childminder has just cancelled and there's no one to look after my two kids. Can I take today off as emergency family leave? I need to know within the hour.", urg=2),
    H("leave_request", "I am writing to formally request six months of sabbatical leave beginning {date}, as discussed with my line manager during my annual review. I intend to complete a postgraduate course and return to my current role afterwards."),
    H("leave_request", "hey, could i get {date} and the day after off? my brother's visiting from abroad"),
    H("scheduling", "No hurry on this one: could we look at moving the weekly team sync from Monday mornings to Tuesday afternoons? Mondays are always packed with client calls.", urg=0),
    H("scheduling", "For the induction of our new apprentice on {date}, could you book the small training room and arrange a building tour? There's plenty of time, so no rush.", urg=0),
    H("scheduling", "Please can you reschedule my exit interview? The slot on {date} clashes with my handover meetings. Any time later that week works; a reply in the next couple of days would help.", urg=1),
    H("scheduling", "I'm coming back from parental leave next month and would like to move my return-to-work meeting with {name} to an afternoon. Could you sort it out this week?", urg=1),
    H("scheduling", "The interview panel for the analyst role starts at {time} and one interviewer has dropped out. Can you find a replacement from the finance team and update the calendar invite? The candidate arrives in two hours.", urg=2),
    H("scheduling", "Change of plan: the client workshop has moved to {date}, so I need the big boardroom booked and the invite resent to all 15 attendees before they start booking travel. Please do it this morning.", urg=2),
    H("scheduling", "Need the small meeting room for interviews {day} afternoon. Is it free?"),
    H("scheduling", "I'd like to swap to late shifts for the week starting {date}, as my evening classes finish then. {first} from dispatch is happy to take my early shifts."),
    H("payroll", "Not urgent, but I think I've been overpaid slightly - my last two payslips show the senior rate even though my promotion hasn't started yet. Happy to sort out the repayment whenever suits.", urg=0),
    H("payroll", "For my records, could someone send me a copy of the payslip for the pay period ending {date}? I'm filling in a mortgage form next month, so there's no hurry.", urg=0),
    H("payroll", "I was charged twice for the pension contribution this month - it appears as two separate deductions on my payslip. Could you look into it and reply within the next few days?", urg=1),
    H("payroll", "My night-shift allowance for the shifts up to {date} wasn't added to this month's pay. Could it be corrected this week so it goes into the next payroll run?", urg=1),
    H("payroll", "My salary hasn't arrived and my rent is taken out this afternoon. Please can someone check the payment right now?", urg=2),
    H("payroll", "The train tickets I paid for to attend the conference on {date} were never reimbursed, and my credit card bill is due tomorrow. I need the $640 refunded today if at all possible.", urg=2),
    H("payroll", "My holiday pay for the two weeks I took off over the summer is missing from my salary."),
    H("payroll", "The commission for the deals I closed last quarter is missing from the payslip dated {date}. Could you check with Finance what happened?"),
    H("policy_question", "Out of curiosity, and no rush at all: does the company allow employees to take on a paid side job at weekends, as long as it's not for a competitor?", urg=0),
    H("policy_question", "I'm not planning any time off yet, just wondering for the future: can staff who are still on probation take annual leave, or do we have to wait until it ends? Mine ends on {date}. Whenever you get a chance.", urg=0),
    H("policy_question", "Are employees allowed to record video calls with customers for training purposes, or is that against the data protection policy? We're planning a training session later this week, so I'd appreciate an answer in the next couple of days.", urg=1),
    H("policy_question", "Does the hybrid working policy require a minimum number of office days per week? Our team lead wants a clear answer before the new rota starts on {date}, so a reply this week would be great.", urg=1),
    H("policy_question", "A former client has offered me a weekend consultancy gig and they need my answer by 5pm today. Does our conflict-of-interest policy allow it?", urg=2),
    H("policy_question", "I'm flying out tonight for the trade fair that starts {date}. Before I head to the airport in a few hours: are we allowed to take the company laptop abroad without IT approval?", urg=2),
    H("policy_question", "Dress code for client visits - is denim OK?"),
    H("policy_question", "Does the company observe the public holiday on {date}, or is it a normal working day for the support team?"),
    H("workplace_issue", "Not a pressing matter, but the lighting in the back office flickers constantly and a few of us are getting headaches by the afternoon. Could facilities have a look when they can?", urg=0),
    H("workplace_issue", "Nothing urgent - I just want it on record that since {date} my team lead has been making sarcastic remarks about my part-time hours in front of the whole team.", urg=0),
    H("workplace_issue", "In this morning's stand-up meeting my team lead called my work 'useless' in front of everyone, and it's not the first time. I'd like to make a formal complaint; please let me know the next steps this week.", urg=1),
    H("workplace_issue", "Since the move to the new building on {date}, the accessible entrance has been locked most mornings and I have to wait outside in my wheelchair until someone lets me in. Please could this be fixed within the next few days?", urg=1),
    H("workplace_issue", "A contractor on site has been following me to my car after late shifts and I'm scared to leave tonight. I need someone from HR or security to act today.", urg=2),
    H("workplace_issue", "I was told this afternoon that my desk will be given away on {date} and that I'll be 'managed out' after I reported a colleague for harassment. This is retaliation and I need HR to step in today.", urg=2),
    H("workplace_issue", "Toilets on the third floor broken again. Third week running."),
    H("workplace_issue", "Ever since {date}, when I returned from maternity leave, my manager has stopped assigning me client work and hands my accounts to newer staff. I believe I'm being sidelined because I'm a mother."),
    H("leave_request", "I have been summoned for jury service starting {date} and expect to be away for up to two weeks. Please record this as jury service leave; I will forward a copy of the court summons."),
    H("leave_request", "I covered both days of the warehouse stocktake at the weekend, so I'd like to take one day of time off in lieu next week. Any day except the delivery day is fine by me."),
    H("leave_request", "Eid falls around {date} next year and I'd like to request that day and the day after as annual leave. Just getting it in early - there's no rush to approve it.", urg=0),
    H("leave_request", "so, slightly mad news, I've signed up for my first marathon!! it's in the autumn, miles away. would it be ok to have the friday before off to travel and the monday after to, er, recover? genuinely not urgent, whenever you get to it", urg=0),
    H("leave_request", "My father is having heart surgery on {date} and I'd like to take compassionate leave for that week so I can be with him at the hospital. Could you confirm by the end of this week so I can arrange cover for my classes?", urg=1),
    H("leave_request", "I'm requesting two days of study leave immediately before my accountancy exam on {date}. Please let me know in the next day or two whether it's approved so I can plan my revision.", urg=1),
    H("leave_request", "Woke up with a fever. Can't do my 7am shift on the ward today - please log a sick day.", urg=2),
    H("leave_request", "My grandmother passed away last night. I need to take bereavement leave from today until after the funeral on {date}. Please confirm this morning so my shifts can be covered.", urg=2),
    H("scheduling", "I'm back from maternity leave on {date}. Could you put me back on the rota for the Monday-to-Wednesday early shifts from that week?"),
    H("scheduling", "Our daily standup is at 9am London time, which is 1am for {first} in Seattle. From {date}, could we move it to a slot that works in both time zones?"),
    H("scheduling", "Whenever you get round to it: could we book the forklift refresher training for the night crew sometime next quarter? Any weekday afternoon works, no rush.", urg=0),
    H("scheduling", "Could you book the school hall and the projector for the staff training day on {date}? It's next term, so there's no hurry at all.", urg=0),
    H("scheduling", "Please book me onto one of the fire marshal training sessions - the one on {date} would suit me best. I need to be on the list by the end of this week.", urg=1),
    H("scheduling", "I'm not asking for any time off - I'd just like to move from B crew to C crew when the new four-on, four-off shift pattern starts on {date}. Could you confirm the change in the next few days?", urg=1),
    H("scheduling", "Invigilation rota has me in two exam halls at {time} today. Please reassign one before the exams start.", urg=2),
    H("scheduling", "Can you move {first} from today's day shift onto tonight's night shift on ward 4, and book one bank nurse for the same shift? I need the rota changed before 7pm today.", urg=2),
    H("payroll", "Could I get a copy of my year-end tax statement? I left the company on {date} and it never arrived."),
    H("payroll", "hey when u get a sec - the cycle to work deduction is still coming off my pay but my last bike payment was {date}, ages ago. no rush, just dont want it running forever", urg=0),
    H("payroll", "My pay rise was supposed to apply from {date}, but my payslips still show the old hourly rate. I'm in no hurry - just flagging it so the back pay gets added at some point.", urg=0),
    H("payroll", "Pay short AGAIN. Worked 38 hrs at the store, paid for 32. Third month running and I'm fed up. Sort it by the end of the week.", urg=1),
    H("payroll", "I submitted a mileage claim for my home visits as a district nurse between {date} and the end of that month, 412 miles in total, and it still hasn't been paid. Could someone chase it within the next few days?", urg=1),
    H("payroll", "This isn't about my manager, it's the payroll system: my student loan is still being deducted even though I paid it off - the confirmation letter is dated {date}. Please stop the deduction before this week's payroll cut-off.", urg=1),
    H("payroll", "I was let go on Friday and my final paycheck, including the payout for my unused vacation days, should have been issued on my last day. It still hasn't come through and I've got bills bouncing. I need it sorted today.", urg=2),
    H("payroll", "My payslip for this week shows 0 hours worked - my 40 hours from the warehouse timesheet were never sent to payroll. Payroll closes at 5pm today, please add them before then.", urg=2),
    H("policy_question", "How many days of unused annual leave can be carried over into next year? I'm not booking anything, I just want to understand the rule."),
    H("policy_question", "Just curious, nothing planned: if a grandparent dies, does our bereavement leave policy cover that, or only parents, partners and children? No need to answer quickly.", urg=0),
    H("policy_question", "Vaping on the loading dock during breaks - allowed, or only in the smoking shelter? Not urgent.", urg=0),
    H("policy_question", "What does company policy say about colleagues dating each other? Does it have to be disclosed, and does it matter if one reports to the other? An answer in the next few days would be appreciated.", urg=1),
    H("policy_question", "Are teachers allowed to take annual leave during term time at all, or only in the school holidays? I'm not requesting any days - I need to explain the rule to new staff at the meeting on {date}, later this week.", urg=1),
    H("policy_question", "Can staff on the factory floor keep personal phones on them while working the line, or must phones stay in the lockers? The new line supervisors start on {date} and I need to brief them, so a reply this week would be great.", urg=1),
    H("policy_question", "A journalist has just emailed me asking for a comment on the rumoured factory closure. Am I allowed to reply personally, or does the media policy say it must go through Communications? They want something by 3pm today.", urg=2),
    H("policy_question", "Some of us want to post photos from the {date} launch party on our personal social media accounts within the hour. Does the social media policy allow showing the office and colleagues' faces? Need an answer right away.", urg=2),
    H("workplace_issue", "Our founder regularly messages the whole team on Slack after midnight and expects replies before morning. Several of us are exhausted and nobody feels able to push back."),
    H("workplace_issue", "Since {date} a new CCTV camera in the stockroom has been pointing straight at the area where staff get changed. Several of us feel uncomfortable changing there now."),
    H("workplace_issue", "Minor thing and no rush: the only microwave in the staff room has been broken for about a month, and with 60 of us on the factory floor sharing it, the lunch queue eats most of the break.", urg=0),
    H("workplace_issue", "For the record only, nothing urgent: at the team offsite on {date} a senior colleague made a joke about my religion in front of the group. It was a one-off, but I'd like it noted.", urg=0),
    H("workplace_issue", "I'm a nurse on the surgical ward, and a patient's relative has shouted abuse at me twice this month, the first time on {date}. My ward manager says it's 'part of the job'. I'd like HR to advise what support I can get - a reply this week would be great.", urg=1),
    H("workplace_issue", "since i told my shift manager im pregnant he keeps saying in front of everyone that im 'slowing the team down'. its humiliating. i want this looked at in the next few days, not in a month", urg=1),
    H("workplace_issue", "The guy on the press next to me on the production line smells of alcohol and nearly dropped a die on his foot an hour ago. Our supervisor is off today. Someone needs to deal with this now, before somebody gets hurt.", urg=2),
    H("workplace_issue", "My team leader just shoved me in the warehouse break room in front of two witnesses. I don't feel safe going back on shift tonight while he's here. Please call me today.", urg=2),
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
}
