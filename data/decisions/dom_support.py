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
    S("billing", "I don't need a refund, I just want to know on which date my next payment will be taken so I can make sure the money is in my account."),
    S("billing", "I bought one $99 gift card in your online shop, but my bank statement shows two $99 payments to you a minute apart and only one gift card code arrived. Please give me back the extra payment.", refund=True, dup=True),
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
    S("shipping", "Please update the delivery address on order #{order} - I've moved since I placed it."),
    S("shipping", "How long does standard shipping to Canada usually take?", urg=0),
    S("shipping", "Two items are missing from my parcel: the packing slip lists four things but the box only had two."),
    S("shipping", "Is express delivery available for my order? I'd rather not wait the usual five working days."),
    S("shipping", "The courier left my parcel in the rain and everything inside is soaked. Can you send the items again?"),
    S("shipping", "Where is my order? It's been three weeks and the tracking number you gave me shows 'label created' only."),
    S("shipping", "I'd like to swap the boots I bought for the next size up, they don't fit. Where do I send them back?"),
    # billing (new)
    S("billing", "Are you kidding me? You took £12.50 twice overnight for ONE top-up and now my rent payment has bounced. Put the extra money back TODAY.", urg=2, refund=True, dup=True),
    S("billing", "I see two identical $40 charges from you on my card, both dated today and both already posted, but I only bought one thing. Not asking for money back yet, I just want to understand why I was charged twice.", dup=True),
    S("billing", "Refund order #{order} please. Cancelled it within the 14-day window.", refund=True),
    S("billing", "I signed up for the free trial of your meal-planning app last month and honestly forgot about it, so the first yearly payment of $79 went through on Sunday. I haven't opened the app once since the trial ended. I know it's my own fault, but would it be possible to reverse that payment and close the subscription? I'd really appreciate it.", refund=True),
    S("billing", "Your promo page promised 50% off the first three months, but I was charged the full $40 instead of $20. Please credit the $20 difference back to my card. No need to rush, but I'd like it sorted within the next few days.", urg=1, refund=True),
    S("billing", "Not a bug report - the app works fine. I just want to know why my receipt shows the amount in EUR when I paid in US dollars. Just curious, there's no deadline on this.", urg=0),
    S("billing", "Hello, my bank shows your subscription fee of 9.99 debited on the 1st and again on the 2nd. Same amount, same plan, one account. Could you send back the second payment? I'd like it sorted within the week, though it's not an emergency.", urg=1, refund=True, dup=True),
    S("billing", "Our company card was declined at renewal and the team plan now says 'payment overdue - features disabled at midnight'. I need to update the payment method before tonight or 40 people lose access to their work.", urg=2),
    S("billing", "For next year's budget: will the Team plan stay at $8 per seat per month, or are you planning a price increase? Just planning ahead, whenever you have a moment.", urg=0),
    S("billing", "I love the product and I'm not going anywhere, but this month you charged us for 12 seats when we only have 9 users. Please refund the 3 extra seats.", refund=True),
    # technical (new)
    S("technical", "Checkout is throwing 'payment gateway timeout' for every customer since your deploy 20 minutes ago. We're losing sales every minute - we need an engineer on this right now.", urg=2),
    S("technical", "Sync broken. Files saved on laptop never show up on phone. Both on latest version."),
    S("technical", "Hello, sorry to bother you. My daughter set up your smart thermostat for me and it worked nicely until last week. Now the little screen shows 'E14' and the heating won't switch on from the app, although the light is green. I've turned it off and on again like the leaflet says. It isn't cold yet, so I can manage for a few days, but I'd like it working before the weekend.", urg=1),
    S("technical", "Minor thing: the tooltip on the export button has a typo ('Exprot'). No impact on anything, fix it whenever you get round to it.", urg=0),
    S("technical", "I can log in fine - that's not the problem. After signing in, the Reports tab shows 'undefined' in every column instead of the numbers."),
    S("technical", "Nothing is wrong with my order itself. The problem is your app: the order-status screen crashes the moment I tap on it, every single time."),
    S("technical", "The CSV import silently skips every row with an accented character (é, ü, ñ). We can work around it by cleaning files by hand for now, but please fix it in the next few days - it's eating up our time.", urg=1),
    S("technical", "Third time I'm writing!! Your webhook stopped firing this morning and our warehouse system hasn't received a SINGLE new order since. Every hour this stays broken costs us money. Fix it NOW.", urg=2),
    S("technical", "Video calls drop after exactly 10 minutes with the message 'connection lost', on both Wi-Fi and mobile data."),
    S("technical", "Print preview cuts off the right-hand column of every table. Not a big deal, I can export to Excel instead. Fix whenever.", urg=0),
    # account (new)
    S("account", "I just got an email saying the recovery phone number on my account was changed. I did NOT do that. Please freeze my account right away before someone takes it over.", urg=2),
    S("account", "Is it possible to have my display name show only my first name instead of my full name? No hurry at all.", urg=0),
    S("account", "This isn't a billing question - my subscription is paid up. I just can't sign in: the site says 'no account found for this email', but I've been using it for years."),
    S("account", "I got a new phone and need to move my two-factor authentication over to it. The old phone still works, but I'd like to do this sometime this week before I wipe it.", urg=1),
    S("account", "My late father had an account with you under {email}. I'm handling his affairs and would like the account closed. I can send a copy of the death certificate if needed. There's no rush on this, I'm slowly working through a long list.", urg=0),
    S("account", "Need to change the phone number on my profile."),
    S("account", "Our admin {name} has left the company and nobody can open the admin settings of our organisation account any more. Can you make me the admin instead? We can get by for a few days, but we need it sorted this week.", urg=1),
    S("account", "I've been locked out of my account for TWO DAYS - I forgot my password and the reset emails go to an old address I can no longer open. I have a client presentation in an hour and all my files are in there!", urg=2),
    S("account", "How do I opt out of marketing emails on my account? I can't find the setting anywhere in my profile."),
    S("account", "I got married and need to update my surname on my account so it matches my new ID. Sometime in the next few days would be great.", urg=1),
    # shipping (new)
    S("shipping", "My daughter's wedding dress was due yesterday and the wedding is tomorrow morning. Tracking just says 'held at depot'. Please, I need someone to get it released and delivered today.", urg=2),
    S("shipping", "I'm not asking for my money back - the payment is fine. I just need the charger cable that was supposed to be in the box with my laptop. The box arrived without it."),
    S("shipping", "Parcel stuck in customs for 9 days. Any update?"),
    S("shipping", "Planning a gift for December: can I have an order delivered to a different address than my billing address? Just planning ahead, no hurry.", urg=0),
    S("shipping", "The courier has tried to deliver twice while I was at work. Can I collect it from a depot or reschedule delivery for a Saturday? I'd like it sorted within the next few days.", urg=1),
    S("shipping", "I ordered the blue ceramic teapot and received a green glass vase instead. Could you arrange an exchange? I'm happy to send the vase back."),
    S("shipping", "This is the THIRD box that has arrived with the screen smashed. Your packaging is a joke. Send me a replacement that is actually wrapped properly. I can wait a few days, but I want it done right this time.", urg=1),
    S("shipping", "How do I return a gift I received? I don't have the order number, only the gift receipt. I'd like to exchange it for a different colour."),
    S("shipping", "I moved last week. Order #{order} is out for delivery to my OLD address today - please redirect it or stop the driver before it gets there!", urg=2),
    S("shipping", "Once my order ships, will I get the tracking number by email or by text? Just want to know what to expect.", urg=0),
    # billing (batch 3)
    S("billing", "I bought a single ticket for the Saturday matinee through your booking site and my PayPal history shows two identical payments of 18.50 for it. Only one ticket ever arrived in my inbox. Can the second payment go back to my PayPal, please?", refund=True, dup=True),
    S("billing", "yo my card got hit 2x for the same ride?? 23.40 and 23.40 in the same minute. im at zero balance now and cant buy gas to get to work tonight, pls put one back asap", urg=2, refund=True, dup=True),
    S("billing", "Dear Sir or Madam, while reconciling our quarterly accounts we found that the April hosting fee for our firm was collected twice by direct debit on 1 April. We kindly request reimbursement of the duplicate amount. There is no time pressure; any time before our year-end close in three months is acceptable.", urg=0, refund=True, dup=True),
    S("billing", "You charged me twice for the same order, but my bank already reversed one of the payments after I disputed it, so I don't need anything refunded. I'm only letting you know so the chargeback doesn't cause trouble with my future payments.", dup=True),
    S("billing", "Two donations of $50 left my account for your spring appeal, but I only pressed the donate button once. Happy to give $50, not $100 - please refund one of them. In the next few days would be good, as my rent is due next week.", urg=1, refund=True, dup=True),
    S("billing", "My 7-year-old bought 3,000 gems in your game on my tablet without me knowing - $49.99. I've turned on purchase passwords now. Could you refund it? It's not urgent, whenever you can.", urg=0, refund=True),
    S("billing", "You took a $1,200 deposit for the van rental instead of the $120 on my booking confirmation. That is nearly all the money I have and my mortgage payment goes out at 6am tomorrow. Refund the extra $1,080 immediately.", urg=2, refund=True),
    S("billing", "I prepaid 4 hours of parking through your app and drove off after 45 minutes. Your terms say unused prepaid time is refunded, but nothing has come back yet. Could you refund the remaining 3 hours 15 minutes? Sometime this week is fine.", urg=1, refund=True),
    S("billing", "The course was delivered exactly as promised and I'm enjoying it - I'm not after my money back. I'd just like to pay the remaining balance in three monthly instalments instead of one lump sum. Is that possible?"),
    S("billing", "Do you accept Apple Pay, or cards only? Just curious, not buying anything yet.", urg=0),
    # technical (batch 3)
    S("technical", "All four card terminals in our restaurant show 'EMV kernel error' since your overnight firmware push, so no card payments go through. It's Friday dinner service and we're turning people away. Roll it back or fix it immediately.", urg=2),
    S("technical", "VoiceOver skips every button in your checkout form, so blind users like me can't finish an order. Everything else on the site is read out fine."),
    S("technical", "Meeting invites created in your calendar app show up one hour off for anyone in a different time zone. We've been double-checking times by hand, so it's low priority - whenever the team gets to it.", urg=0),
    S("technical", "Since doorbell firmware 3.2 the live view takes about 15 seconds to start, by which point the courier has already walked off. Not critical, but could someone look at it in the next few days?", urg=1),
    S("technical", "keyboard lags like 2 sec after every letter since ur last update. galaxy s21"),
    S("technical", "Your password manager extension just autofilled my bank login into a completely different website's form. That's a serious security hole - pull the update or push a fix now, before someone's credentials get stolen.", urg=2),
    S("technical", "Not sure this is the right place, but here goes. We use your invoicing tool for our bakery, and whenever an invoice has more than 20 lines the total at the bottom leaves out the last line. Our own subscription with you is fine - it's the PDFs the tool generates that add up wrong. We send our invoices out on Monday, so a fix sometime this week would be great.", urg=1),
    S("technical", "Bulk-editing contacts hangs at 99% and never finishes. The changes do get saved, so we just refresh the page. No rush on this at all.", urg=0),
    S("technical", "We have observed that scheduled backups on our NAS appliance fail every night with code 0x80070005 since the 7.1 update, while manual backups complete successfully. We would appreciate a resolution within the next few days, as we are relying on manual copies in the meantime.", urg=1),
    S("technical", "Email sending from your platform has stopped - none of our password-reset or order-confirmation emails have gone out since 8am, they're all stuck as 'queued'. Our own customers are flooding us with complaints. Fix this NOW.", urg=2),
    # account (batch 3)
    S("account", "How do I switch the language of my account from German to English? Everything in my profile has been in German since I moved. No hurry.", urg=0),
    S("account", "Somebody has just created an account with MY email address - I'm getting 'welcome' and 'confirm your sign-in' emails from you, and I never signed up. Someone is pretending to be me. Please shut that account down immediately.", urg=2),
    S("account", "Can I sign in with my Google account instead of a separate email and password? I'd like to connect the two. No rush, just curious.", urg=0),
    S("account", "My account is registered to my university email, which was shut down when I graduated. I still know my password, but every time I log in the site wants to send a confirmation code to that dead inbox."),
    S("account", "I'm the parent of a 13-year-old and would like to set up a supervised child profile linked to my own account. Could someone walk me through it sometime this week?", urg=1),
    S("account", "I've got too many old phones and tablets still logged in. Is there a 'sign out of all devices' option somewhere in my profile? No hurry, just tidying up.", urg=0),
    S("account", "My proctored exam starts in 40 minutes and my student account still says 'awaiting identity verification'. I uploaded my ID last week! Please verify it right now or I'll miss the exam.", urg=2),
    S("account", "my account thinks im under 18 so half the features are hidden, but im 24 - must have typed the wrong birth year when i signed up. how do i fix my birthday on it? would be good to sort in the next few days", urg=1),
    S("account", "We are moving our organisation to single sign-on. Could you switch our 25 user accounts from password login to SSO with our Okta tenant? Nothing is broken; we just need the configuration changed within the next few days, before our cut-over.", urg=1),
    S("account", "I closed my account last year and would like to come back. Can it be reopened with my old history, or do I have to register from scratch?"),
    # shipping (batch 3)
    S("shipping", "The frozen meal kit was left on my porch at 8am and I only got home now - the ice packs are melted and the meat is warm. I'm hosting dinner for ten tonight. Can you get a replacement box out to me today?", urg=2),
    S("shipping", "My parcel is sitting in a pickup locker, but I never got the collection code - only a message saying it goes back to the depot at 6pm today. Can you send me the code before then?", urg=2),
    S("shipping", "Good afternoon. Before ordering the oak dining table, I should like to know whether your couriers carry furniture up to a third-floor flat or only to the front door. There is no urgency; I am still deciding.", urg=0),
    S("shipping", "Half my order came (the shoes) but the jacket is missing and there's no second tracking number. Don't refund it, I still want the jacket - just tell me where it is. Sometime in the next few days would be fine.", urg=1),
    S("shipping", "Lost the return label that came in the box. How do I send this back to exchange it for the 2-metre version?"),
    S("shipping", "Your driver just threw my parcel over the gate and I watched it land in the pond on my doorbell camera. It's a laptop! I want a call back within the hour about getting it replaced.", urg=2),
    S("shipping", "Can you ship to a PO box? I don't want to change anything on my account, I'm just wondering for a future order. No hurry at all.", urg=0),
    S("shipping", "Hello! Slightly odd one. My parcel was handed to my neighbour at number 14 while I was out, which is fine, except she has now gone on holiday for two weeks with it in her hallway. The tracking shows it as delivered to me. Is there anything you can do?"),
    S("shipping", "The app's fine, no crash or anything - my problem is the order itself. I paid for next-day delivery on Tuesday, it's now Thursday and there's no sign of the package. Please chase the courier in the next day or two.", urg=1),
    S("shipping", "Can I pick a delivery date at checkout? I'm away for ten days later this month and don't want a parcel sitting on my doorstep."),
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
}
