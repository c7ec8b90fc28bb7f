"""Email intent: meeting requests, complaints, questions, thanks and sales pitches."""

from __future__ import annotations

from common import C, fill, name


def E(intent, urg, subject, body, attach=False):
    """An email core; ``urg`` None when urgency would be debatable (not asked)."""
    return C(
        body, subject=subject, intent=intent, urg=urg, attach=attach, has_date="{date}" in body
    )


CORES = [
    E("meeting_request", 1, "Quick sync on Q3 roadmap?", "Hi {first}, could we find 30 minutes this week to go through the Q3 roadmap? I'm free {day} afternoon or Thursday morning."),
    E("meeting_request", 0, "Following up from the conference", "Hello, following our chat at the conference, could we schedule a call with your engineering lead? Any time in the next few weeks works for us."),
    E("meeting_request", 1, "Interview invitation", "Dear {name}, thank you for applying. We would like to invite you to a 45-minute video interview. Please tell us which slot suits you: Tuesday 10:00 or Wednesday 14:00."),
    E("meeting_request", 2, "Budget meeting needed today", "Hi, the Q4 budget numbers don't add up and the board sees them tonight. Can we get the finance team together at {time} today to go through them? It's urgent."),
    E("meeting_request", 0, "Lunch?", "Hey, it's been ages! Want to grab lunch sometime next month and catch up? No rush."),
    E("meeting_request", 1, "Project kickoff", "Team, I'd like to hold the kickoff meeting for the migration project on {date} at {time}. The agenda is attached. Please accept the invite or suggest another time.", attach=True),
    E("meeting_request", 2, "Emergency call at {time}", "All managers: we need an emergency meeting at {time} today about the data breach. Please drop everything and join the call."),
    E("complaint", 1, "Still waiting for my order", "I ordered a desk three weeks ago and it still hasn't arrived. This is the second time I've had to write. Very disappointed."),
    E("complaint", 1, "Unacceptable service", "The technician who came on {date} left without fixing anything and was rude to my wife. I expect an apology and a proper repair."),
    E("complaint", 1, "Noise from the flat above", "For the third week running the tenants above me play loud music after midnight. I've asked them politely; as the landlord, please do something about it."),
    E("complaint", 1, "Wrong bill AGAIN", "You've billed me the wrong amount for the third month in a row and I'm tired of correcting your mistakes. I've attached the last three bills.", attach=True),
    E("complaint", 2, "Broken on arrival", "The coffee machine I received is cracked and leaks water all over the counter. Photos are attached. I want this sorted today.", attach=True),
    E("complaint", 0, "Poor hotel stay", "Our room was dirty, the air conditioning didn't work and nobody at reception cared. We won't be staying with you again."),
    E("complaint", 2, "Your outage is costing us money", "Your service has been down for four hours and our shop can't take any orders. Fix this now or we cancel the contract today."),
    E("question", 0, "Opening hours over the holidays", "Hello, will your store be open on {date}? I'd like to pick up an order, but there's no hurry."),
    E("question", 0, "Question about API limits", "Hi, what is the maximum number of requests per minute on the Pro plan? I couldn't find it in the docs."),
    E("question", 0, "Parking at the venue", "Is there parking at the conference venue, and does it cost extra?"),
    E("question", None, "Report format", "Could you tell me whether the quarterly report should be a PDF or an Excel file? I need to submit it by {date}."),
    E("question", 0, "Application requirements", "Dear admissions office, do international students need to send a language certificate with the application?"),
    E("question", None, "Contract clause", "Before I sign, can you explain what section 4.2 of the attached contract means by 'material breach'? I have to return it by {date}.", attach=True),
    E("question", 2, "URGENT: database credentials", "Hi, the production deploy is blocked - can someone send me the new database credentials right now? We are down until I get them."),
    E("question", 2, "Passport question before my flight", "My flight leaves in three hours and I just noticed my passport expires next month. Can I still travel to the UK? Please answer quickly!"),
    E("thanks", 0, "Thank you!", "Just wanted to say thanks for your help with the migration last week. Everything is running smoothly now."),
    E("thanks", 0, "Great workshop", "Thank you for the excellent workshop on {date}. The whole team found it really useful."),
    E("thanks", 0, "Re: recommendation letter", "Dear Professor {name}, thank you so much for writing the recommendation letter. I got the position!"),
    E("thanks", 0, "Thanks for the quick fix", "Your support team fixed our login problem within an hour. Much appreciated, please pass on my thanks."),
    E("thanks", 0, "Flowers", "Thank you all for the lovely flowers and cards while I was in hospital. It meant a lot to me."),
    E("thanks", 0, "You saved me", "I wanted to thank you for covering my shifts last month. I owe you one! The photos from the trip are attached.", attach=True),
    E("sales_pitch", 0, "Boost your sales by 40%", "Hi {first}, our AI-powered CRM helps teams like yours close more deals. Can I send you a free trial link?"),
    E("sales_pitch", None, "Exclusive offer for {company}", "We're offering 30% off our cloud backup service until {date}. Reply to this email to claim your discount."),
    E("sales_pitch", 0, "Office supplies at wholesale prices", "Dear office manager, we supply printer paper, toner and stationery at wholesale prices. Our catalogue is attached.", attach=True),
    E("sales_pitch", 0, "Your website", "Hi, I noticed your website loads slowly on mobile. Our agency can redesign it in two weeks - interested in a quote?"),
    E("sales_pitch", 0, "Sponsorship opportunity", "Hello! We run a newsletter with 200k readers in your industry. Sponsored slots start at $500. Want the media kit?"),
    E("sales_pitch", 0, "Solar panels for your roof", "Homeowners in {city} are saving up to 70% on energy bills. Book your free assessment whenever it suits you."),
]  # fmt: skip


def make(rng, core):
    """An email state: JSON email, text with a subject line, a bare body, or a header list."""
    subject, body = fill(rng, core["subject"]), fill(rng, core["text"])
    sender = name(rng)
    address = f"{sender.split()[0].lower()}.{sender.split()[1].lower()}@example.com"
    form = rng.random()
    if form < 0.45:
        state = {
            "from": rng.choice([address, f"{sender} <{address}>"]),
            "subject": subject,
            "body": body,
        }
        if rng.random() < 0.3:
            state["to"] = fill(rng, "{email}")
    elif form < 0.7:
        state = f"Subject: {subject}\n\n{body}" + rng.choice(
            ["", f"\n\n{sender}", f"\n\n-- \n{sender}"]
        )
    elif form < 0.85:
        state = body
    else:
        state = [f"From: {sender}", f"Subject: {subject}", body]
    return state, dict(core)


FAMILIES = [
    {
        "type": "choice",
        "key": "intent",
        "qids": ["intent", "email_type", "purpose", "category", "label"],
        "instructions": [
            "What is the intent of this email?",
            "Classify the email.",
            "Why did the sender write this email?",
            "Which inbox label fits this message?",
            "What does the sender mainly want?",
            "Sort the email into a category.",
        ],
        "options": {
            "meeting_request": ["wants to set up a meeting or call", "asks to schedule time together"],
            "complaint": ["unhappy about a product, service or situation", "expresses dissatisfaction"],
            "question": ["asks for information", "an enquiry that needs an answer"],
            "thanks": ["expresses gratitude", "a thank-you note"],
            "sales_pitch": ["tries to sell a product or service", "unsolicited marketing or offer"],
        },
    },
    {
        "type": "score",
        "key": "urg",
        "qids": ["urgency", "priority", "how_urgent"],
        "instructions": [
            "How urgent is this email?",
            "How quickly should the recipient act on this email?",
            "Rate the email's priority.",
        ],
        "styles": [
            ("low: can wait, no time pressure", "medium: deal with it in the next days", "high: needs action today"),
            ("not urgent", "moderately urgent", "very urgent"),
            ("low", "normal", "high"),
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["attach"],
        "qids": ["attachment", "has_attachment", "mentions_attachment"],
        "instructions": [
            "The email mentions an attachment.",
            "Does the sender refer to an attached file?",
            "Something is attached to this email, according to its text.",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["has_date"],
        "qids": ["has_date", "date", "mentions_date"],
        "instructions": [
            "The email mentions a calendar date (such as a month and day).",
            "Does the text contain a specific calendar date?",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["intent"] == "meeting_request",
        "qids": ["meeting", "wants_meeting", "schedule"],
        "instructions": [
            "The sender wants to schedule a meeting or a call.",
            "Is this email asking to set up a meeting?",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["intent"] == "sales_pitch",
        "qids": ["marketing", "is_pitch", "promo"],
        "instructions": ["This is a sales or marketing email.", "Is the sender trying to sell something?"],
    },
    {
        "type": "noul",
        "test": lambda x: x["intent"] == "complaint",
        "qids": ["complaint", "unhappy", "dissatisfied"],
        "instructions": ["The sender is complaining.", "Is the writer unhappy with something?"],
    },
]  # fmt: skip

DOMAIN = {
    "name": "email_intent",
    "prefix": "email",
    "cores": CORES,
    "families": FAMILIES,
    "make": make,
    "states": 190,
}
