"""Moderation: allowed posts, spam, harassment and shared personal information (PII)."""

from __future__ import annotations

from common import C, fill


def M(verdict, text, tox=0, link=False, contact=False):
    """A moderation core; ``tox`` None when toxicity would be debatable (not asked)."""
    return C(text, verdict=verdict, tox=tox, link=link, contact=contact)


CORES = [
    M("allow", "Great tutorial, the part about caching finally made it click for me. Thanks!"),
    M("allow", "I strongly disagree with this article. The 2019 data doesn't support the author's conclusion at all."),
    M("allow", "Does anyone know if the community garden is open on Sundays?"),
    M("allow", "This update is honestly terrible, half the features I use are gone. Please bring back the old layout."),
    M("allow", "Congrats to {first} on finishing the marathon! Amazing effort."),
    M("allow", "You can reach the support team through the Help button inside the app."),
    M("allow", "I think your argument ignores the cost side, but I appreciate you laying it out so clearly."),
    M("allow", "Has anyone tried the new ramen place downtown? Worth the queue?"),
    M("allow", "Ugh, my code broke again. Time for more coffee."),
    M("allow", "Reminder: the book club meets Thursday at 7, we're discussing chapter four."),
    M("allow", "The referee made an awful call in the second half, but we still should have defended better."),
    M("spam", "Make $5,000 a week from home!!! Click here: http://quick-cash-now.example/join", link=True),
    M("spam", "Buy cheap followers, 10k for only $9.99 - visit www.boostfans.example today!", link=True),
    M("spam", "Congratulations, you have been selected to win a free iPhone. Claim it now at http://prize-claim.example", link=True),
    M("spam", "Best crypto signals in the group, 300% profit guaranteed. DM me for the VIP access."),
    M("spam", "Check out my channel!!! Subscribe subscribe subscribe, giveaway every week!!"),
    M("spam", "Hot singles in your area are waiting for you -> http://meet-now.example", link=True),
    M("spam", "Limited offer: designer watches 90% off, free shipping worldwide. Order at luxe-deals.example", link=True),
    M("spam", "Work from home as a product tester, no experience needed, earn $300/day. Apply: http://jobs-fast.example/apply", link=True),
    M("spam", "Get your essay written in 2 hours! Cheapest rates anywhere, visit essaypro-fast.example now", link=True),
    M("harassment", "You're an idiot if you actually believe that.", tox=1),
    M("harassment", "Nobody asked for your opinion, clown. Go back to lurking.", tox=1),
    M("harassment", "Wow, what a pathetic excuse for a developer. My little brother writes better code than you.", tox=1),
    M("harassment", "@{user} you are genuinely the dumbest person on this forum.", tox=1),
    M("harassment", "Shut up already, your posts are garbage and so are you.", tox=1),
    M("harassment", "Typical {first}, too lazy and useless to read the thread before posting.", tox=1),
    M("harassment", "Keep posting and I will find out where you live and make you regret it.", tox=2),
    M("harassment", "People like you should be beaten until you learn to shut up.", tox=2),
    M("harassment", "I know which school your kids go to. Think about that before you reply again.", tox=2),
    M("harassment", "If I see you at the meetup I'm going to break your nose.", tox=2),
    M("harassment", "Everyone from your country is subhuman trash and should be thrown out.", tox=2),
    M("harassment", "You deserve to die for what you wrote. Watch your back.", tox=2),
    M("personal_info", "My neighbour {name} is the one who keeps parking there, his number is {phone} if anyone wants to tell him.", contact=True),
    M("personal_info", "Here is {name}'s home address: 14 Maple Court, {city}. She still owes me money.", contact=True),
    M("personal_info", "Found a wallet belonging to {name}; the ID says she lives at 8 Harbour Road, {city}, and her phone is {phone}.", contact=True),
    M("personal_info", "This is the guy who cut me off in traffic: {name}, {email}, works at {company}.", tox=None, contact=True),
    M("personal_info", "Leaking the login list from my old job: {email}, password summer2024.", contact=True),
    M("personal_info", "My ex's new number is {phone}, call her and tell her I said hi.", tox=None, contact=True),
    M("personal_info", "{name}'s social security number is 078-05-1120, I saw it on a form at the office."),
    M("personal_info", "The teacher who failed me is {name}, she lives at 22 Birch Street in {city}.", contact=True),
    M("personal_info", "Posting {name}'s private email ({email}) and phone ({phone}) so everyone can spam him.", tox=None, contact=True),
]  # fmt: skip

CONTEXT = [
    "anyone around tonight?",
    "what do you all think about the new rules?",
    "welcome to the new members!",
    "just catching up on this thread",
    "lol same",
]


def make(rng, core):
    """A moderation state: bare post, post JSON, or a short thread ending with the post."""
    post = fill(rng, core["text"])
    author = fill(rng, rng.choice(["{user}", "user{n}", "{first}_{n}", "anon{n}"]))
    form = rng.random()
    if form < 0.35:
        state = post
    elif form < 0.6:
        state = {"post_id": fill(rng, "p{order}"), "author": author, "text": post}
        if rng.random() < 0.5:
            state["reports"] = rng.randint(0, 4)
    elif form < 0.75:
        state = {
            "comment": post,
            "thread": rng.choice(["General", "Off-topic", "Help", "Local news"]),
        }
    elif form < 0.9:
        others = rng.sample(CONTEXT, rng.randint(1, 2))
        state = [f"{fill(rng, '{user}')}: {t}" for t in others] + [f"{author}: {post}"]
    else:
        state = [{"role": "user", "content": t} for t in rng.sample(CONTEXT, 1)]
        state.append({"role": "user", "content": post})
    return state, dict(core)


FAMILIES = [
    {
        "type": "choice",
        "key": "verdict",
        "qids": ["verdict", "moderation", "policy", "label", "decision", "violation"],
        "instructions": [
            "Moderate this post.",
            "Which policy category does the content fall under?",
            "How should the moderation team label this?",
            "Classify the user-generated content for moderation.",
            "Does this content violate a rule? Pick the best label.",
            "Content review: choose the matching category.",
        ],
        "options": {
            "allow": ["fine to keep: normal, civil content", "no violation (criticism and disagreement are allowed)"],
            "spam": ["unsolicited ads, scams, self-promotion", "promotional or scam content"],
            "harassment": ["insults, threats or hate aimed at people", "abusive, threatening or hateful content"],
            "personal_info": ["shares someone's private details (phone, email, address, ID numbers)",
                              "doxxing or leaked private information"],
        },
    },
    {
        "type": "score",
        "key": "tox",
        "qids": ["toxicity", "toxic", "abuse_level", "severity"],
        "instructions": [
            "How toxic is this content?",
            "Rate the toxicity of the message.",
            "How abusive is the language towards others?",
        ],
        "styles": [
            ("not toxic", "rude or insulting", "threatening or hateful"),
            ("0 - civil", "1 - insults, name-calling", "2 - threats of harm or hate speech"),
            ("none: no abuse", "mild: disrespectful or insulting", "severe: violent threats or dehumanising hate"),
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["link"],
        "qids": ["has_link", "link", "url"],
        "instructions": [
            "The text contains a link or web address.",
            "Does the post include a URL?",
            "A website address appears in the content.",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["contact"],
        "qids": ["pii", "contact_info", "has_pii", "personal_data"],
        "instructions": [
            "The text contains a phone number, email address or home address.",
            "Does the content reveal someone's contact details?",
            "Contact information (phone, email or street address) is shared.",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["verdict"] == "harassment",
        "qids": ["insult", "harassment", "abusive"],
        "instructions": [
            "The author insults, threatens or demeans another person or group.",
            "Is this post harassment?",
            "The message attacks someone.",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["verdict"] == "spam",
        "qids": ["spam", "promo", "is_ad"],
        "instructions": [
            "The post is spam or an advertisement.",
            "Is the author trying to sell or promote something?",
            "This is unsolicited promotional content.",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["verdict"] == "allow",
        "qids": ["ok", "allowed", "keep"],
        "instructions": [
            "The content can stay up: it breaks no community rule.",
            "Is this post acceptable under normal community guidelines?",
        ],
    },
]  # fmt: skip

DOMAIN = {
    "name": "moderation",
    "prefix": "moderation",
    "cores": CORES,
    "families": FAMILIES,
    "make": make,
    "states": 200,
}
