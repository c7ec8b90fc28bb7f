"""Billing and invoices: what the payer wants, duplicate charges, and the amount at stake."""

from __future__ import annotations

from common import C, as_chat, as_text, fill, name

CORES = [
    C("I was charged {amount} twice for the same invoice {invoice}. Please refund the second charge.", intent="refund", dup=True),
    C("Your system took {amount} from my account after I had already cancelled. I want that money returned.", intent="refund", dup=False),
    C("The annual renewal of {amount} went through yesterday although I had turned off auto-renew last month. Please reverse it and give me my money back.", intent="refund", dup=False),
    C("I paid {amount} for the add-on but it was never activated on my account. I'd like a refund for it.", intent="refund", dup=False),
    C("My card shows two identical payments of {amount} on {date}. Only one order was placed, so please refund one of them.", intent="refund", dup=True),
    C("We were billed {amount} for 12 seats but we only have 8 users. Please refund what we paid for the extra seats.", intent="refund", dup=False),
    C("You cancelled the workshop I booked for {amount}, so I expect a full refund.", intent="refund", dup=False),
    C("Two identical charges of {amount} hit my card for a single renewal. Please reverse the duplicate one.", intent="refund", dup=True),
    C("I was NOT charged twice, I just want a copy of invoice {invoice} for {amount}.", intent="invoice", dup=False),
    C("Could you re-issue invoice {invoice} with our new company address? The amount of {amount} is correct.", intent="invoice", dup=False),
    C("Please send me a receipt for the {amount} payment I made on {date}; I need it for my expense report.", intent="invoice", dup=False),
    C("Our finance team needs every invoice from this year as a PDF. Where can I download them?", intent="invoice", dup=False),
    C("Invoice {invoice} is missing our purchase order number. Can you add PO-{order} to it?", intent="invoice", dup=False),
    C("From now on, can the invoices be addressed to {name} in accounting instead of me?", intent="invoice", dup=False),
    C("There is one charge of {amount}, which is right - I only need the matching invoice with VAT shown separately.", intent="invoice", dup=False),
    C("My card expired last week. How do I update it so the next payment of {amount} doesn't fail?", intent="payment_method", dup=False),
    C("The payment of {amount} failed with 'card declined', but my bank says nothing was blocked. Can I add a different card?", intent="payment_method", dup=False),
    C("Can we pay by bank transfer instead of credit card from next month on?", intent="payment_method", dup=False),
    C("Please switch our billing from my personal card to the company Visa ending in 4417.", intent="payment_method", dup=False),
    C("Do you accept PayPal? I don't have a credit card.", intent="payment_method", dup=False),
    C("I got an email that my direct debit of {amount} bounced. I've added funds to the account - can you retry it?", intent="payment_method", dup=False),
    C("We'd like to be invoiced with 30-day payment terms instead of an automatic card charge.", intent="payment_method", dup=False),
    C("Please cancel my subscription at the end of this billing period. I don't need a refund.", intent="cancellation", dup=False),
    C("I want to downgrade from the Team plan to the free plan starting next month.", intent="cancellation", dup=False),
    C("How do I turn off auto-renewal? I don't want to be charged {amount} again next year.", intent="cancellation", dup=False),
    C("We're closing the business, so please cancel all of our paid licences.", intent="cancellation", dup=False),
    C("Cancel my membership right away please, I'm moving abroad and won't use it.", intent="cancellation", dup=False),
    C("Please end my trial before it turns into a paid plan at {amount} per month.", intent="cancellation", dup=False),
    C("Don't renew our contract when it expires on {date}; we are moving to another provider.", intent="cancellation", dup=False),
    C("How much would the Business plan cost for 25 users?", intent="pricing", dup=False),
    C("Is the price of {amount} per month before or after tax?", intent="pricing", dup=False),
    C("Do you offer student discounts on the yearly plan?", intent="pricing", dup=False),
    C("What is the price difference between paying monthly and paying yearly?", intent="pricing", dup=False),
    C("If I add three more seats in the middle of the month, how much extra will I pay?", intent="pricing", dup=False),
    C("Your website says {amount} for the Pro plan, but checkout shows a different number. Which price is right?", intent="pricing", dup=False),
    C("Are there any extra fees if we go over the storage limit?", intent="pricing", dup=False),
]  # fmt: skip

BANDS = [(3, 48), (60, 480), (650, 9800)]
OPENERS = ["", "", "Hello,", "Hi billing team,", "Dear accounts department,", "Hi there,"]
CLOSERS = ["", "", "Thank you.", "Kind regards,\n{name}", "Thanks, {first}", "Best regards"]
SUBJECTS = [
    "Billing question",
    "Invoice",
    "My payment",
    "Subscription",
    "Account {order}",
    "Re: your bill",
]
REPLIES = [
    "Thanks, I can help with that. Which email is the account under?",
    "Let me pull up your billing history.",
    "Happy to help - one moment please.",
]
FOLLOWUPS = ["It's under {email}.", "Ok, thanks.", "The account is in my name, {name}."]


def amount(rng, band):
    """A money amount inside ``band`` written with a random currency style."""
    low, high = BANDS[band]
    value = rng.randint(low, high) + rng.choice([0, 0.99, 0.5, 0.0])
    text = f"{value:,.2f}" if value % 1 else f"{int(value):,}"
    return rng.choice([f"${text}", f"€{text}", f"£{text}", f"{text} USD", f"{text} EUR"])


def make(rng, core):
    """A billing state and its labels (the amount band is drawn per state)."""
    labels = dict(core)
    extra = {}
    if "{amount}" in core["text"]:
        labels["band"] = rng.randrange(3)
        extra["amount"] = amount(rng, labels["band"])
    body = fill(rng, core["text"], extra)
    form = rng.random()
    if form < 0.35:
        state = fill(rng, as_text(rng, body, OPENERS, CLOSERS))
    elif form < 0.7:
        sender = name(rng)
        state = {
            "from": f"{sender} <{sender.split()[0].lower()}@example.com>",
            "subject": fill(rng, rng.choice(SUBJECTS)),
            "body": body,
        }
    elif form < 0.85:
        state = {"customer_id": fill(rng, "C-{order}"), "plan": rng.choice(["Basic", "Pro", "Team"]),
                 "message": body}  # fmt: skip
    else:
        state = [
            {**t, "content": fill(rng, t["content"])}
            for t in as_chat(rng, body, REPLIES, FOLLOWUPS)
        ]
    return state, labels


FAMILIES = [
    {
        "type": "choice",
        "key": "intent",
        "qids": ["intent", "request_type", "what_they_want", "billing_intent", "action"],
        "instructions": [
            "What does the customer want?",
            "Classify the billing request.",
            "Which action is the sender asking the billing team to take?",
            "What is the main purpose of this message?",
            "Pick the billing intent.",
            "What kind of billing request is this?",
        ],
        "options": {
            "refund": ["money back for a charge", "wants a charge reversed or refunded"],
            "invoice": ["a copy of an invoice or receipt, or a change to one", "invoice or receipt paperwork"],
            "payment_method": ["change or fix how they pay (card, transfer, debit)",
                               "payment method problems or updates"],
            "cancellation": ["stop, downgrade or not renew the subscription", "end or reduce the plan"],
            "pricing": ["a question about prices, fees or discounts", "asks what something costs"],
        },
    },
    {
        "type": "score",
        "key": "band",
        "qids": ["amount", "amount_band", "value", "size"],
        "instructions": [
            "How large is the amount of money mentioned?",
            "Bucket the amount in the message.",
            "What size is the sum mentioned in the text?",
            "Rate the money amount mentioned by the customer.",
        ],
        "styles": [
            ("small: under 50", "medium: 50 to 500", "large: over 500"),
            ("less than 50 (any currency)", "between 50 and 500", "more than 500"),
            ("under 50", "50-500", "above 500"),
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["dup"],
        "qids": ["double_charge", "charged_twice", "duplicate_payment"],
        "instructions": [
            "The customer says they were charged twice.",
            "The sender reports a duplicate payment.",
            "Was the customer charged more than once for the same thing, according to the text?",
            "The message complains about a double charge.",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["intent"] == "refund",
        "qids": ["refund", "wants_refund", "money_back"],
        "instructions": [
            "The customer is asking for a refund.",
            "Does the sender want money returned to them?",
            "A refund is requested.",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: "band" in x,
        "qids": ["has_amount", "mentions_amount", "money_figure"],
        "instructions": [
            "The message mentions a specific amount of money.",
            "Does the text state a concrete sum of money?",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["intent"] == "cancellation",
        "qids": ["cancel", "churn", "wants_to_cancel"],
        "instructions": [
            "The customer wants to cancel or downgrade their subscription.",
            "Is the sender trying to stop paying for the service?",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["intent"] == "invoice",
        "qids": ["invoice_request", "needs_invoice", "receipt"],
        "instructions": [
            "The customer asks for an invoice or a receipt, or a change to one.",
            "Is this a request about invoice paperwork?",
        ],
    },
]  # fmt: skip

DOMAIN = {
    "name": "billing_invoices",
    "prefix": "billing",
    "cores": CORES,
    "families": FAMILIES,
    "make": make,
    "states": 200,
}
