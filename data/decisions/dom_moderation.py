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
    M("personal_info", "My ex's new number is {phone}, in case any of her old friends here want to get back in touch with her.", tox=None, contact=True),
    M("personal_info", "{name}'s social security number is 078-05-1120, I saw it on a form at the office."),
    M("personal_info", "The teacher who failed me is {name}, she lives at 22 Birch Street in {city}.", contact=True),
    M("personal_info", "Posting {name}'s private email ({email}) and phone ({phone}) from the old club mailing list, so people can invite him to the reunion.", tox=None, contact=True),
    M("allow", "The official docs explain this better than I can: https://docs.python.org/3/library/asyncio-task.html", link=True),
    M("allow", "Whoever lost the grey husky near the park: the animal shelter on Elm Street has him. Their front desk number is {phone}.", contact=True),
    M("allow", "Someone called me an idiot in the other thread just for asking this. Mods, could you take a look? Not looking for drama."),
    M("allow", "I could murder a pizza right now lol. Whose turn is it to host game night?"),
    M("allow", "Respectfully, the council's own report says the opposite: https://city.example/reports/transit-2024.pdf. The new bus lanes cut average commute times by six minutes.", link=True),
    M("allow", "Fixed in 2.3.1, see https://github.com/example/proj/releases", link=True),
    M("allow", "For missed bin collections, the council asked residents to email waste@council.example with their street name and collection day.", contact=True),
    M("allow", "Version 4 is a bloated, buggy mess. Startup takes forty seconds and the export button crashes every single time. Rolling back until they fix it."),
    M("allow", "Got one of those 'you won a free cruise' texts today. Don't tap the link in it, folks, it's a scam. Just delete it."),
    M("spam", "Call {phone} NOW for the lowest car insurance quote in {city}! Offer ends Friday!!!", contact=True),
    M("spam", "NOT SPAM: genuine opportunity. I turned $200 into $9,000 in one month with this trading bot. Link in my bio, spots are limited!"),
    M("spam", "Hey everyone, I just launched my online course on dropshipping! Use code FORUM50 for 50% off at learnshop.example/course", link=True),
    M("spam", "Need SEO backlinks? 500 high-authority links for only $20. Email {email} to order in bulk.", contact=True),
    M("spam", "Your account has been suspended. Verify your payment details within 24 hours at http://secure-login-verify.example or lose access permanently.", link=True),
    M("spam", "Comment YES below and I'll DM you a free $100 gift card code, only 20 left!!"),
    M("spam", "Lose 10 kg in 10 days with Slim-X drops, doctors hate this one trick! www.slimx-drops.example", link=True),
    M("spam", "Hi all, long-time lurker here. Sorry to interrupt, but I wanted to share something that changed my life. My cousin's company installs solar panels with zero upfront cost, and they're offering free installation to the first 50 households in {city} this month. Message me privately for the discount form. I get nothing out of it, I promise!"),
    M("spam", "Cheap game keys - Steam, Xbox, PS5 - up to 85% off, instant delivery: https://keyz-market.example", link=True),
    M("spam", "Rent my lakeside cabin, weekends from just $89! Book now: {phone} or cabinstay.example", link=True, contact=True),
    M("harassment", "lmao imagine being this clueless. Delete your account.", tox=1),
    M("harassment", "Your blog at https://myblog.example/post-42 is as pointless as you are.", tox=1, link=True),
    M("harassment", "I've been patient with you for three threads now, but honestly you're a condescending know-it-all who can't admit when you're wrong. Nobody here likes you, {first}.", tox=1),
    M("harassment", "Ok boomer, go yell at a cloud and leave the tech talk to people with working brains.", tox=1),
    M("harassment", "Not saying you're stupid, but your so-called guide at forum.example/t/1882 isn't helping anyone believe otherwise.", tox=1, link=True),
    M("harassment", "Post one more time and I'll make sure you never walk right again.", tox=2),
    M("harassment", "People from that village are vermin, every last one of them, and the town would be cleaner without them.", tox=2),
    M("harassment", "I've got your photo saved. One of these nights I'll be waiting outside your gym, and you won't see me coming.", tox=2),
    M("harassment", "Somebody should burn your shop down with you inside it.", tox=2),
    M("harassment", "Enjoy your last week online, @{user}. We know your car and we know when you leave work.", tox=2),
    M("personal_info", "Heads up: the landlord renting out flats without permits is {name}. He lives at 31 Quarry Lane, {city}.", contact=True),
    M("personal_info", "My coworker left her credit card on the desk: 4111 1111 1111 1111, exp 09/27, CVV 123. Should I buy myself lunch?"),
    M("personal_info", "Guess who's staying at our hotel: {name}. Passport number X4821937, checked in last night, room 512."),
    M("personal_info", "Got {name}'s personal cell from the team roster: {phone}. He never answers on the forum, so just text him directly.", contact=True),
    M("personal_info", "Found the reviewer who gave my book one star: {name}, 5 Orchard Row, {city}. Her Facebook is https://facebook.example/orchardreader", link=True, contact=True),
    M("personal_info", "For anyone who doesn't believe {name} is loaded, here are his bank details from the club payment sheet: IBAN GB29 NWBK 6016 1331 9268 19."),
    M("personal_info", "Pasting the HR spreadsheet row since nobody believes me: {name}, DOB 14/03/1988, employee ID 55102, home address 9 Canal Street, {city}.", contact=True),
    M("personal_info", "Happy birthday {first}!! Everyone send her a card at 17 Linden Avenue, {city}, or ring her on {phone}. She has no idea I'm posting this.", contact=True),
    M("personal_info", "Since you all asked who wrote that review: {name}, {phone}, {email}. You're welcome.", contact=True),
    M("personal_info", "The teenager who keyed my car is {name}, 16, goes to Westfield High and lives in the corner house at 3 Ash Grove, {city}.", contact=True),
    M("personal_info", "Uploaded {name}'s leaked payslip here: https://paste.example/x9k2 - her salary and home address (12 Fern Close, {city}) are on line 3.", link=True, contact=True),
    M("allow", "gg all. That last round was rough, we kept pushing mid with no backup. Let's try flanking left next match."),
    M("allow", "Is the road bike in this listing still available? https://market.example/item/58213 I'd like to check the frame is a 54 before I drive over.", link=True),
    M("allow", "Found a set of car keys with a blue lanyard outside the library this morning. If they're yours, text me on {phone} and describe the keyring.", contact=True),
    M("allow", "I'm not calling anyone stupid here. I just think the rule change was rushed and the vote should be held again with proper notice."),
    M("allow", "+1, same crash on Android 14 here. Logs attached: https://bugs.example/issue/4471", link=True),
    M("allow", "Made this with oat milk instead of cream and it still came out silky. The swap chart at https://kitchen.example/dairy-free helped a lot. I'd cut the salt a bit next time.", link=True),
    M("allow", "The city's flood-risk map is public now: https://maps.city.example/flood. Worth a look before signing a lease near the river.", link=True),
    M("allow", "If anyone is struggling this winter, the food bank's helpline is {phone}. They hand out parcels on weekday mornings, no questions asked.", contact=True),
    M("allow", "Mod note: this thread is now locked for going off-topic. The rules are at https://forum.example/rules and appeals go to {email}.", link=True, contact=True),
    M("allow", "Your plan doubles the membership fee and you still haven't shown where the money goes. I'm voting no, and I'd urge everyone to read the budget first."),
    M("spam", "WTS gold, 1M for $3, fastest delivery on the server!!! Add me for orders: {email}", contact=True),
    M("spam", "Hi handsome, I'm hardly ever on this app. Come chat with me on my private site instead, first video call is free: http://luna-cams.example/me", link=True),
    M("spam", "Nice article! I wrote about this too, read my 10 secret tips at www.best-tips-daily.example and share with all your friends!!", link=True),
    M("spam", "Mortgage pre-approval in 15 minutes, no credit check! Text APPROVE to {phone} today.", contact=True),
    M("spam", "Earn 10% on every transfer: our overseas firm needs local partners to receive customer payments. Reply with your full name and bank details to {email}.", contact=True),
    M("spam", "I will buy your sofa for double the asking price. I'm abroad, so my shipping agent collects it; just pay the small courier fee here: http://parcel-pay.example/fee", link=True),
    M("spam", "Follow me everywhere for daily workouts!!! All my links: linktr.example/fitwithjay - new video every day, don't miss out!!", link=True),
    M("spam", "OFFICIAL GIVEAWAY!! The first 100 people to send 0.1 ETH to the wallet in my profile get 1 ETH back instantly. Don't miss it!"),
    M("spam", "Grand opening! New tattoo studio in {city}, walk-ins welcome, 30% off your first session. Book at inkhaus.example or call {phone}.", link=True, contact=True),
    M("harassment", "uninstall the game. you're a walking liability, worst healer I've ever had the misfortune of queueing with", tox=1),
    M("harassment", "Your profile says 'funny'. Your messages say boring loser. Don't bother writing back.", tox=1),
    M("harassment", "Watched your cooking video at https://vidshare.example/v/77 and you look like a clueless fool in every single frame.", tox=1, link=True),
    M("harassment", "Cry more, loser.", tox=1),
    M("harassment", "I won't say you're a moron. I'll just let your last ten posts say it for me.", tox=1),
    M("harassment", "Big talk from behind a keyboard, you spineless coward. My number's {phone}, call me if you've got the guts to say it out loud.", tox=1, contact=True),
    M("harassment", "That was the last match you'll ever throw. I'm going to put you in the hospital for it, and I'll enjoy every second.", tox=2),
    M("harassment", "That whole religion is a disease, and its followers don't deserve to be treated as human.", tox=2),
    M("harassment", "You ghosted the wrong guy. I'll be waiting outside your work on Monday, and I'll hurt you so you never do it to anyone again.", tox=2),
    M("harassment", "Whoever wrote https://news.example/op-ed/221 deserves a beating they won't forget.", tox=2, link=True),
    M("harassment", "Saw your review at https://eats.example/r/3391. Write one more like that about my restaurant and I'll smash your face in.", tox=2, link=True),
    M("harassment", "Sleep well tonight. It might be your last.", tox=2),
    M("personal_info", "For the record, the player 'xXsniperXx' is really {name}, 40 Willow Way, {city}. Found it through his old clan page: https://clan.example/members", link=True, contact=True),
    M("personal_info", "Posting this match's details for the group chat: {name}, number {phone}, works nights at the hospital in {city}.", contact=True),
    M("personal_info", "The guy who rear-ended me gave me his licence: {name}, licence no. D1234-56789-01, date of birth 02/11/1979. Posting it here in case he does it again."),
    M("personal_info", "{name} from accounts is off because she's starting chemo. I saw her sick note on the printer, patient number 48-2210-7."),
    M("personal_info", "{first} left herself logged in at the library. Her online banking password was on a sticky note: Bluebird77! and the username is her initials."),
    M("personal_info", "Here's {name}'s private Instagram, https://insta.example/{user}, and her new flat is 6 Rose Mews, {city}. Didn't want anyone to miss it.", link=True, contact=True),
    M("personal_info", "{name} left her passport at the office copier, so I scanned the photo page: https://files.example/scan-0413.jpg. Passport number and date of birth are clearly visible.", link=True),
    M("personal_info", "The seller who never shipped my order is {name}. His personal email is {email}, and he also posts here as @{user}.", contact=True),
    M("personal_info", "My landlord {name} won't give tenants his home phone, so here it is: {phone}. Pass it around the building.", contact=True),
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
}
