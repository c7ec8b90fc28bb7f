"""Billing and invoices: what the payer wants, duplicate charges, and the amount at stake."""

from __future__ import annotations

from common import C, as_chat, as_text, fill, name

CORES = [
    C("I was charged {amount} twice for the same invoice {invoice}. Please refund the second charge.", intent="refund", dup=True),
    C("Your system took {amount} from my account after I had already cancelled. I want that money returned.", intent="refund", dup=False),
    C("The annual renewal of {amount} went through yesterday although I had switched to monthly billing last month. Please reverse it and give me my money back.", intent="refund", dup=False),
    C("I paid {amount} for the add-on but it was never activated on my account. I'd like a refund for it.", intent="refund", dup=False),
    C("My card shows two identical payments of {amount} on {date}. Only one order was placed, so please refund one of them.", intent="refund", dup=True),
    C("We were billed {amount} for 12 seats but we only have 8 users. Please refund what we paid for the extra seats.", intent="refund", dup=False),
    C("You cancelled the workshop I booked for {amount}, so I expect a full refund.", intent="refund", dup=False),
    C("My renewal was charged once through the app store and again directly by you, so I've paid {amount} twice for the same year. Please refund the charge you took.", intent="refund", dup=True),
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
    C("We'd like to pay on 30-day terms instead of an automatic card charge.", intent="payment_method", dup=False),
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
    C("hey. two charges. same day. same {amount}. one subscription. fix it and send one back", intent="refund", dup=True),
    C("I clicked 'Pay' once, the page froze, and now my bank statement shows the conference ticket paid for twice. I only have one ticket in my account. Could you return the extra payment, please?", intent="refund", dup=True),
    C("Absolutely unacceptable. I have been a customer for six years and this month your system billed my {amount} plan three separate times. Three! I want every charge except one returned to my card today, and I want an explanation.", intent="refund", dup=True),
    C("So I was going through my statements over the weekend, as one does, and on {date} there's a payment to you for {amount} and then, the very same day, another identical one with the same reference. I only renewed the one hosting package. I'm not angry, these things happen, but I'd like the second one credited back when you get a chance.", intent="refund", dup=True),
    C("The same family plan was billed to both my card and my wife's card this month. It's one plan on one account, so please refund one of the two payments.", intent="refund", dup=True),
    C("This is not a duplicate charge - there is only one payment of {amount}. The problem is that I bought the wrong tier by mistake five minutes after signing up. Could you refund it so I can buy the right one?", intent="refund", dup=False),
    C("Your app was down for the whole week of our product launch. We'd like our money back for that month of service.", intent="refund", dup=False),
    C("Your sign-up page promised a free first month, yet I was charged {amount} on day one. Please return it.", intent="refund", dup=False),
    C("The double charge of {amount} was refunded last week, thanks for sorting that. I now need a corrected invoice that shows only one payment, because our auditors can still see two.", intent="invoice", dup=True),
    C("You already fixed the duplicate payment on my account. To close this out in our books, please send me a credit note for the charge you refunded.", intent="invoice", dup=True),
    C("Need receipt for {amount}. Thx.", intent="invoice", dup=False),
    C("Our company changed its legal name last month. Please put the new name on invoice {invoice} and on all future invoices.", intent="invoice", dup=False),
    C("I'm not looking for a refund or anything. The {amount} charge is fine, but the invoice lists the wrong billing period (it says May, it should say June). Could you correct it?", intent="invoice", dup=False),
    C("Dear Sir or Madam, for the purposes of our annual tax filing we kindly request an itemised statement of all invoices issued to our account during the previous fiscal year, including your VAT registration number.", intent="invoice", dup=False),
    C("invoice {invoice} shows {amount} but nothing about which seats it covers... can u add the seat breakdown so my manager signs off on it", intent="invoice", dup=False),
    C("Where do I find my receipts in the app? I've looked under Settings and under Account and I can't see them anywhere.", intent="invoice", dup=False),
    C("We keep getting charged twice every month because the same card got saved on our account two times. You've refunded the extra charges already, but please delete the duplicate card so this stops happening.", intent="payment_method", dup=True),
    C("Last month the renewal of {amount} went through on both my old Mastercard and my new Amex. Support already sorted out the money. What I need now is for the old Mastercard to be removed from my account completely.", intent="payment_method", dup=True),
    C("Could I split the {amount} between two cards? My company card has a spending limit.", intent="payment_method", dup=False),
    C("Our bank changed our IBAN after a merger. Please update the direct debit mandate with the new account details, which I'll send through your secure form.", intent="payment_method", dup=False),
    C("Third time your checkout has rejected my card for the {amount} renewal. The card works everywhere else. Fix your payment page or give me another way to pay.", intent="payment_method", dup=False),
    C("Do you take Apple Pay or Google Pay for the monthly plan?", intent="payment_method", dup=False),
    C("Please don't cancel the account. My father passed away and the subscription is still paid from his card; I'd like to move the payments to my own card instead.", intent="payment_method", dup=False),
    C("The {amount} direct debit failed because I switched banks. Can you send me a link to set up my new bank account for payments?", intent="payment_method", dup=False),
    C("That's the second time you've charged me {amount} twice for one month. The extra money came back, but I'm finished with this: close my account and stop all billing.", intent="cancellation", dup=True),
    C("After the double charge mess in spring, I've decided to leave. Please make sure my plan does not renew.", intent="cancellation", dup=True),
    C("Stop the membership. Not renewing at {amount}.", intent="cancellation", dup=False),
    C("Our nonprofit lost its grant funding, so sadly we have to stop the paid plan once this month ends. Thank you for everything.", intent="cancellation", dup=False),
    C("I'm not asking for a discount or a better price. At {amount} a year it simply isn't worth it for me, so please switch me to the free tier.", intent="cancellation", dup=False),
    C("Please close my account. I'm aware the current month won't be refunded and that's fine.", intent="cancellation", dup=False),
    C("I signed up to try the video editor for a school project, which is finished now, and honestly I forgot I even had a subscription until I saw your email. I won't need it anymore, so could you turn it off before the next charge? Thanks so much.", intent="cancellation", dup=False),
    C("Don't charge me {amount} on {date} - end my plan before the renewal date.", intent="cancellation", dup=False),
    C("The duplicate charge from last month has been refunded, thanks. Unrelated question: do registered charities get a discount on the Team plan?", intent="pricing", dup=True),
    C("Quick follow-up: you refunded one of the two {amount} payments that hit my card, so we're good there. Before I add more users, what does each extra seat cost per month?", intent="pricing", dup=True),
    C("I see two charges of {amount} this month, but I know they are for different things - the plan and the storage add-on. Is the add-on really priced the same as the whole plan?", intent="pricing", dup=False),
    C("Is there a setup fee, or is it just the monthly subscription?", intent="pricing", dup=False),
    C("Will the price stay the same if I lock in a three-year contract, or does it go up every year?", intent="pricing", dup=False),
    C("Is {amount} the total for the whole team or per user?", intent="pricing", dup=False),
    C("Why on earth is your 'Enterprise' tier listed as 'contact sales'? Just tell me what it costs. I'm not jumping on a call to find out a price.", intent="pricing", dup=False),
    C("If I refer a friend, do I get anything off my next bill?", intent="pricing", dup=False),
    C("Parked once. Your app billed me {amount} for that single parking session twice, a few minutes apart. Refund the extra one.", intent="refund", dup=True),
    C("Good afternoon. Purchase order {order} was settled by bank transfer on {date}; nevertheless your system subsequently charged our company card {amount} for the same order. Kindly return the card payment at your earliest convenience.", intent="refund", dup=True),
    C("my sons tutoring session on tuesday got billed twice?? same tutor same hour, 2x {amount} on my card. can u send one of them back pls", intent="refund", dup=True),
    C("Gym took my membership fee twice this month. One membership. Want one payment back.", intent="refund", dup=True),
    C("I'm writing on behalf of my mother, who is 82 and not confident online. She renewed her magazine subscription over the phone with one of your agents, and it seems the agent then also processed the renewal online, because her pension account was debited for the same subscription twice. She only wants one copy each month, of course. Could you please return the second payment to her account?", intent="refund", dup=True),
    C("Yes, there are two charges this month, and both are correct: one for the plan and one for the printed handbook I ordered. The handbook arrived soaked through and unreadable, though, so I'd like my money back for it.", intent="refund", dup=False),
    C("You raised the price without telling anyone and charged me the new rate of {amount}. I don't need a corrected invoice, I want the difference refunded.", intent="refund", dup=False),
    C("The courier lost the hardware kit I ordered and tracking hasn't moved in three weeks. I don't want a replacement anymore, just return what I paid.", intent="refund", dup=False),
    C("My bank already reversed the duplicate {amount} charge through a chargeback, so the money side is done. What I still need from you is a receipt for the one payment that actually stands.", intent="invoice", dup=True),
    C("We were double-billed in January; that's been refunded and I'm not chasing it. But the January invoice itself never reached us and our VAT return is due. Could you resend it?", intent="invoice", dup=True),
    C("I'm the external accountant for {name}. Our client was charged twice for one software licence last quarter and your team has since refunded the extra charge. To reconcile the ledger, please provide a statement of account listing all charges and refunds for that quarter.", intent="invoice", dup=True),
    C("Being charged {amount} twice for the same order (refunded since, fine) left us with two invoices carrying the same invoice number, and our accounting software refuses to import the second one. Please void the duplicate invoice.", intent="invoice", dup=True),
    C("Before we can pay, our procurement office needs a pro forma invoice for {amount} made out to the university. Could you prepare one?", intent="invoice", dup=False),
    C("Paid {amount} in cash at your service counter today and the machine was out of paper, so I left without a receipt. Can you email me one?", intent="invoice", dup=False),
    C("Our auditors are based in Germany and asked for invoice {invoice} in German rather than English. Is it possible to regenerate it that way?", intent="invoice", dup=False),
    C("We run fourteen separate workspaces and get fourteen invoices every month, which is driving our bookkeeper mad. Any chance of one consolidated invoice covering all of them?", intent="invoice", dup=False),
    C("When your 3-D Secure page timed out I hit retry and ended up charged {amount} twice for one order. My bank already cancelled the second payment, so no action needed there. I'd rather avoid card checkout from now on: can I switch to SEPA direct debit?", intent="payment_method", dup=True),
    C("Both the direct debit and the backup card ran for the same month, so I paid twice. You've already credited the extra back to me. Please remove the backup card and keep only the direct debit.", intent="payment_method", dup=True),
    C("Your automatic retries charged my card {amount} twice for a single month after one soft decline. The refund has arrived. I'd like to switch to manual payments so I approve each charge myself instead of you pulling it automatically.", intent="payment_method", dup=True),
    C("Our finance lead noticed the same shipping-label order had been paid twice from the shared debit card. That's been resolved with your team already. Going forward, please bill all our purchases to the corporate purchasing card instead of the shared debit card.", intent="payment_method", dup=True),
    C("The payment form won't let me save my card because it demands a ZIP code, and my address in rural Ireland doesn't have one. How am I supposed to add a card?", intent="payment_method", dup=False),
    C("Our purchasing department can only settle the {amount} by cheque. Do you accept cheques, and if so, where should we post it?", intent="payment_method", dup=False),
    C("The standing order of {amount} I set up through my bank bounced back with 'account closed'. Have your bank details changed? I need the current ones to redo the payment.", intent="payment_method", dup=False),
    C("Card stolen. Need to put a new one on the account.", intent="payment_method", dup=False),
    C("Charged {amount} twice for the same meal box AGAIN. Yes, I got the money back both times. Doesn't matter. Cancel my subscription, no more boxes.", intent="cancellation", dup=True),
    C("Given that your system billed us twice for invoice {invoice} and it took three weeks for the surplus to be returned, we have decided not to renew. Please treat this message as our formal notice of non-renewal.", intent="cancellation", dup=True),
    C("The double payment of {amount} for one month (already returned, thanks) made me look at what I actually use, and I don't need the premium features. Please move me down to the basic tier.", intent="cancellation", dup=True),
    C("cancel pls. u charged me {amount} twice for the same lesson pack last month and im over it, already got it back thru my bank", intent="cancellation", dup=True),
    C("I don't want a refund and I don't need an invoice. All I'm asking is that our seat count be reduced from 20 to 5 at the next renewal.", intent="cancellation", dup=False),
    C("My father was signed up for a premium news subscription he doesn't understand; he has dementia and I hold power of attorney. I'm not chasing past payments, I only want the subscription stopped so nothing more is taken. I can send the documents if needed.", intent="cancellation", dup=False),
    C("In accordance with clause 9 of the service agreement, we hereby give ninety days' notice of termination of all services provided to our organisation.", intent="cancellation", dup=False),
    C("Please take the premium support add-on off our account from the next cycle. We're keeping the base subscription at {amount}, just dropping the add-on.", intent="cancellation", dup=False),
    C("The duplicate {amount} charge is sorted, thanks. Separate question: what do you charge per thousand API calls once we go over the monthly allowance?", intent="pricing", dup=True),
    C("The studio billed me {amount} twice for the same class pass last week, and it was refunded the next day, so no complaints. How much is the ten-class bundle compared with paying for single drop-in classes?", intent="pricing", dup=True),
    C("Yes, you've reversed the extra charge from when my renewal was billed twice, so that's closed. One thing I still don't get: are there extra fees if I pay in a currency other than dollars?", intent="pricing", dup=True),
    C("Not cancelling, just planning ahead: once the introductory rate of {amount} ends, what will I be paying each month?", intent="pricing", dup=False),
    C("A friend in Canada pays less than I do for exactly the same plan. Do your prices vary by country?", intent="pricing", dup=False),
    C("Is there a discount if we pay for two years upfront? Right now we pay {amount} a year.", intent="pricing", dup=False),
    C("My payment didn't fail and my card is fine, I'm only asking: do you charge a fee when a card payment fails?", intent="pricing", dup=False),
    C("We're comparing options for a 40-person team. What's the price of the hosted version versus buying a self-hosted licence?", intent="pricing", dup=False),
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
}
