"""Support triage: customer messages routed to billing / technical / account / shipping."""

from __future__ import annotations

from common import C, as_chat, as_lines, as_text, fill, join


def S(cat, text, urg=None, refund=False, dup=False):
    """A support core; ``urg`` None means the urgency comes from an appended phrase."""
    return C(text, cat=cat, urg=urg, refund=refund, dup=dup)


CORES = [
    # billing
    S("billing", "I was charged twice for my March subscription - $29.99 shows up two times on my card statement. Please refund the duplicate charge.", refund=True, dup=True),
    S("billing", "I was NOT charged twice, I just want the invoice for last month's payment so I can file my expenses."),
    S("billing", "Why did my monthly bill go up from $15 to $22? Nobody told me about a price change."),
    S("billing", "I cancelled my plan on the 3rd but you still took a payment on the 10th. I'd like that money back.", refund=True),
    S("billing", "Can I switch from monthly to annual billing and get the yearly discount?", urg=0),
    S("billing", "My card keeps getting declined when the subscription renews, but it works everywhere else. Can you check what's wrong with the payment?"),
    S("billing", "Please add our company VAT number to our invoices; our accountant needs it on every invoice."),
    S("billing", "You billed me for the Premium tier but I'm on the Basic plan. Please refund the difference.", refund=True),
    S("billing", "Do you offer a discount for non-profit organisations? We would pay for a full year up front.", urg=0),
    S("billing", "Hi, the same order #{order} was charged to my credit card two times this morning. I only placed it once - can you reverse one of the payments?", refund=True, dup=True),
    S("billing", "I don't need a refund, I just need the receipts for the last three payments to be sent to {email}."),
    S("billing", "My bank statement shows the $99 annual fee taken twice on the same day. Please give me back the extra payment.", refund=True, dup=True),
    S("billing", "How do I change the credit card you charge every month? My old card expired."),
    # technical
    S("technical", "The app crashes every time I open the camera screen. I'm on Android 14 and I already reinstalled it twice."),
    S("technical", "Exporting a report to PDF gives 'Error 500: internal server error'. It worked fine yesterday."),
    S("technical", "The dashboard takes over a minute to load and sometimes just shows a blank white page."),
    S("technical", "When I click Save on the billing settings page the button just spins forever and nothing gets saved. Looks like a bug in the page itself, my payments are fine."),
    S("technical", "Push notifications stopped arriving on my iPhone after the latest update, even though they are enabled in settings."),
    S("technical", "Your API returns 429 Too Many Requests even though we only send about five requests per minute."),
    S("technical", "Search returns no results for any keyword, even for products I can see on the homepage."),
    S("technical", "Since the update the desktop app freezes whenever I drag a file into it and I have to force quit."),
    S("technical", "Dark mode makes the text in the editor invisible - white text on a white background."),
    S("technical", "Our whole production site is down: every page shows 'database connection failed' since 9:40 and customers can't check out.", urg=2),
    S("technical", "The invoice page on the website throws a JavaScript error and never renders. I'm not disputing any charge, the page is just broken in Chrome and Firefox."),
    S("technical", "Uploading images larger than 2 MB fails with 'unexpected end of stream'. Smaller images work."),
    # account
    S("account", "I forgot my password and the reset email never arrives. I've checked the spam folder too."),
    S("account", "How do I change the email address on my account? I no longer use my old work address."),
    S("account", "Please delete my account and all the personal data you hold about me."),
    S("account", "I lost my phone and can't get past two-factor authentication. How can I get back into my account?"),
    S("account", "I'd like to change my username, the current one has a typo in it.", urg=0),
    S("account", "Someone logged into my account from another country last night and changed my password. That wasn't me - please lock it now!", urg=2),
    S("account", "Can I add a second person to our team account, or does everyone need their own login?"),
    S("account", "My account shows 'suspended' when I sign in and I have no idea why."),
    S("account", "I accidentally signed up twice with two different emails. Can you merge the two accounts into one?"),
    S("account", "How do I turn on two-factor authentication for my profile?", urg=0),
    S("account", "The login page says my account is locked after too many attempts. How long until I can sign in again?"),
    S("account", "I want to transfer ownership of our workspace account to my colleague {name} before I leave the company."),
    # shipping
    S("shipping", "My order #{order} was supposed to arrive on Monday and the tracking hasn't updated in five days."),
    S("shipping", "The package arrived but the box was crushed and the lamp inside is broken. Could you send a replacement?"),
    S("shipping", "I received the wrong size, I ordered a medium and got a large. I don't want a refund, just the right size please."),
    S("shipping", "Do you ship to Norway? I can't find it in the country list at checkout.", urg=0),
    S("shipping", "Tracking says 'delivered' but there is nothing at my door and the neighbours haven't seen it."),
    S("shipping", "I need to change the delivery address on an order I placed an hour ago, before it ships."),
    S("shipping", "How long does standard shipping to Canada usually take?", urg=0),
    S("shipping", "Two items are missing from my parcel: the packing slip lists four things but the box only had two."),
    S("shipping", "Is express delivery available? I need the order before Friday."),
    S("shipping", "The courier left my parcel in the rain and everything inside is soaked. Can you send the items again?"),
    S("shipping", "Where is my order? It's been three weeks and the tracking number you gave me shows 'label created' only."),
    S("shipping", "I'd like to return the boots I bought, they don't fit. Where do I send them back?"),
]  # fmt: skip

URGENCY = [
    ["No rush on this, whenever you get a chance.", "Not urgent at all.", "No hurry, just wondering.",
     "Whenever someone has time is fine."],
    ["I'd like this looked at in the next few days.", "Not an emergency, but I'd like it sorted this week.",
     "It's getting annoying, so please look into it soon."],
    ["Please treat this as urgent, I need it resolved today.", "URGENT - I need this fixed within the hour.",
     "This is very urgent, we have a deadline this afternoon.", "Please help ASAP, this can't wait."],
]  # fmt: skip
OPENERS = [
    "",
    "",
    "Hi,",
    "Hello team,",
    "Hey there -",
    "Good morning,",
    "Hi support,",
    "Dear Support,",
]
CLOSERS = [
    "",
    "",
    "Thanks.",
    "Regards, {name}",
    "Thanks in advance!",
    "Cheers, {first}",
    "Best,\n{name}",
]
REPLIES = [
    "Thanks for reaching out. Could you tell me a bit more?",
    "Sorry to hear that. Can you confirm the email on the account?",
    "I'm looking into this for you now. Anything else I should know?",
    "Thanks, let me check. What's your order or account number?",
]
FOLLOWUPS = [
    "That's everything, thanks.",
    "It's the same email I'm writing from.",
    "Sure, I can send screenshots if needed.",
    "Account number is {order}.",
    "Nothing else, just that.",
]
SUBJECTS = [
    "Support request",
    "Help please",
    "Quick question",
    "Problem",
    "(no subject)",
    "Request",
]


def make(rng, core):
    """A support state (text, ticket JSON or conversation) and its labels."""
    labels = dict(core)
    body = fill(rng, core["text"])
    if core["urg"] is None:
        labels["urg"] = rng.randrange(3)
        body = join(body, rng.choice(URGENCY[labels["urg"]]))
    form = rng.random()
    if form < 0.35:
        state = fill(rng, as_text(rng, body, OPENERS, CLOSERS))
    elif form < 0.6:
        state = {"ticket_id": fill(rng, "{ticket}"), "channel": rng.choice(["email", "web", "app"])}
        if rng.random() < 0.6:
            state["subject"] = rng.choice(SUBJECTS)
        state["body"] = body
    elif form < 0.85:
        state = [
            {**t, "content": fill(rng, t["content"])}
            for t in as_chat(rng, body, REPLIES, FOLLOWUPS)
        ]
    else:
        state = [fill(rng, t) for t in as_lines(rng, body, REPLIES, FOLLOWUPS)]
    return state, labels


FAMILIES = [
    {
        "type": "choice",
        "key": "cat",
        "qids": ["category", "team", "route", "triage", "queue", "department", "intent", "topic"],
        "instructions": [
            "Which team should handle this ticket?",
            "Classify the support request.",
            "Route this message to the right queue.",
            "What is the customer's issue about?",
            "Triage: pick the category that best fits the customer's problem.",
            "Which department does this conversation belong to?",
            "Assign this ticket to a support queue.",
            "What kind of support request is this?",
            "Pick the team that owns this problem.",
            "Categorise the customer's message.",
        ],
        "options": {
            "billing": ["payment, invoices, refunds", "charges, subscriptions, invoices and refunds",
                        "money matters: bills, payments, plans, receipts"],
            "technical": ["bugs, crashes, errors", "the product is broken, slow or shows errors",
                          "software problems: crashes, error messages, features not working"],
            "account": ["login, password, profile and account settings",
                        "signing in, 2FA, changing or deleting the account"],
            "shipping": ["delivery, tracking, returns, damaged or wrong items",
                         "parcels in transit, late or lost orders, exchanges and returns"],
        },
    },
    {
        "type": "score",
        "key": "urg",
        "qids": ["urgency", "priority", "urgent", "prio"],
        "instructions": [
            "How urgent is this request?",
            "Rate the urgency of the ticket.",
            "What priority should this ticket get?",
            "How quickly does support need to respond?",
            "Urgency of the customer's message?",
        ],
        "styles": [
            ("low: can wait, no deadline", "medium: should be handled soon", "high: time-critical or security-sensitive, needs action now"),
            ("not urgent", "somewhat urgent", "very urgent"),
            ("low - a question or a request with no time pressure", "medium - wants it handled in the coming days",
             "high - needs immediate attention"),
            ("P3", "P2", "P1 (drop everything)"),
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["refund"],
        "qids": ["refund", "wants_refund", "is_refund", "money_back"],
        "instructions": [
            "The customer is asking for a refund.",
            "The customer wants their money back.",
            "Is the customer requesting a refund?",
            "Does the sender ask to be refunded?",
            "A refund is being requested.",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["dup"],
        "qids": ["double_charge", "duplicate", "charged_twice"],
        "instructions": [
            "The customer says they were charged twice.",
            "The customer reports a duplicate charge.",
            "According to the message, the customer was billed more than once for the same thing.",
            "Does the customer complain about being charged two times?",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["cat"] == "technical",
        "qids": ["bug", "is_bug", "broken", "defect"],
        "instructions": [
            "The customer reports that something in the product is broken or malfunctioning.",
            "Is this a bug report?",
            "The message describes a software error, crash or malfunction.",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["cat"] == "shipping",
        "qids": ["delivery", "shipping", "is_shipping"],
        "instructions": [
            "The message is about a delivery, a parcel or a return.",
            "Is the customer's problem related to shipping?",
            "The customer is asking about an order's delivery.",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["cat"] == "account",
        "qids": ["account", "login_issue", "is_account"],
        "instructions": [
            "The customer has a problem with signing in or with their account settings.",
            "Is this about access to or settings of the customer's account?",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["urg"] == 2,
        "qids": ["urgent", "needs_now", "escalate"],
        "instructions": [
            "This request needs immediate attention.",
            "Should this ticket be escalated as urgent?",
            "The matter is time-critical.",
        ],
    },
]  # fmt: skip

DOMAIN = {
    "name": "support_triage",
    "prefix": "support",
    "cores": CORES,
    "families": FAMILIES,
    "make": make,
    "states": 230,
}
