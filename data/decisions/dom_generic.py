"""Generic reading questions: topic, sentiment, register, sentence kind and true/false claims.

The questions here are domain-neutral, so the model must read the instructions rather than
recognise a domain. Every item has one claim that the text supports and one it contradicts.
"""

from __future__ import annotations

import re

from common import C, fill


def G(topic, sent, form, kind, text, true_claim, false_claim):
    """A generic item; ``sent``/``form`` None where a careful reader could disagree (not asked)."""
    return C(text, topic=topic, sent=sent, form=form, kind=kind, claims=(true_claim, false_claim),
             digits=bool(re.search(r"\d", text)))  # fmt: skip


CORES = [
    G("sports", "positive", 0, "statement", "What a match last night!! Can't believe we scored twice in the last 5 minutes 😂", "The writer's team scored late in the game.", "The match ended without any goals."),
    G("sports", "neutral", 2, "statement", "The committee hereby announces that the regional tennis championship is postponed until 14 June owing to court renovations.", "The championship has been delayed.", "The championship will go ahead as originally planned."),
    G("sports", "neutral", 1, "question", "Does anyone know what time the marathon starts on Sunday?", "The writer wants to know when a race starts.", "The text says the marathon is on Saturday."),
    G("sports", "neutral", 1, "request", "Please send me the training schedule for the under-12 football team.", "The writer asks for a schedule.", "The request concerns an adult basketball team."),
    G("sports", "negative", 0, "statement", "our keeper was awful today, let in three easy goals. so frustrating", "The goalkeeper conceded three goals.", "The goalkeeper played very well."),
    G("sports", "neutral", 1, "statement", "The new stadium holds 60,000 spectators and opened in 2021.", "The stadium opened in 2021.", "The stadium holds fewer than 10,000 people."),
    G("sports", "neutral", 2, "request", "Kindly confirm whether members are permitted to use the swimming pool before 7 a.m.", "The writer asks about using the pool early in the morning.", "The writer asks about the gym's evening hours."),
    G("sports", "positive", 0, "statement", "finished my first triathlon today - totally wrecked but sooo proud!", "The writer completed a triathlon.", "The writer gave up before the finish."),
    G("technology", "negative", 0, "statement", "my laptop keeps overheating and shutting down whenever I open more than 2 tabs. super annoying", "The laptop shuts down by itself.", "The laptop works perfectly."),
    G("technology", "neutral", 1, "request", "Could you please reset my password for the internal wiki?", "The writer wants a password reset.", "The writer wants the wiki to be deleted."),
    G("technology", "positive", 1, "statement", "The new phone's battery lasts two full days and the camera is superb.", "The phone's battery lasts more than a day.", "The camera is disappointing."),
    G("technology", "neutral", 1, "question", "Is it safe to install the update before Friday's presentation?", "The writer is asking whether to install an update.", "The presentation is on Monday."),
    G("technology", "positive", 2, "statement", "We are pleased to inform you that the system migration was completed successfully on 3 March.", "The migration succeeded.", "The migration failed."),
    G("technology", "negative", 0, "statement", "ugh wifi down AGAIN, third time this week", "The wifi has failed more than once this week.", "This is the first outage this week."),
    G("technology", "neutral", 1, "question", "Which programming language would you recommend for a beginner?", "The writer asks for a recommendation.", "The writer asks which laptop to buy."),
    G("technology", "neutral", 2, "request", "Please ensure that all workstations are locked when unattended, in accordance with the security policy.", "Staff are asked to lock their computers.", "Staff may leave their computers unlocked."),
    G("food", "positive", 0, "statement", "this pasta is absolutely delicious, going back for seconds!!", "The writer likes the pasta.", "The writer dislikes the pasta."),
    G("food", "neutral", 1, "question", "How long should I bake the bread at 220 degrees?", "The writer asks about baking time.", "The writer asks how to make soup."),
    G("food", "negative", 1, "statement", "The soup was cold and far too salty, so we sent it back.", "The soup was sent back.", "The soup was served hot."),
    G("food", "neutral", 1, "request", "Could you bring two more glasses of water to table 6, please?", "Two glasses of water are requested.", "The request is for table 9."),
    G("food", "neutral", 2, "statement", "The restaurant will be closed for refurbishment from 1 to 15 August and will reopen on 16 August.", "The restaurant reopens in August.", "The restaurant is closing permanently."),
    G("food", None, 0, "statement", "lol burnt the pancakes again, guess it's cereal for breakfast 🙃", "The pancakes got burnt.", "The writer made a perfect breakfast."),
    G("food", "neutral", 2, "request", "We would be grateful if guests could inform us of any dietary requirements at least 48 hours in advance.", "Guests should give advance notice of dietary needs.", "Dietary needs can simply be mentioned on arrival."),
    G("food", "positive", 1, "statement", "Fresh strawberries are finally in season and they taste amazing.", "The writer enjoys the strawberries.", "Strawberries are out of season."),
    G("travel", "negative", None, "statement", "Our flight was delayed six hours and nobody told us anything. Worst trip ever.", "The flight was late.", "The flight left on time."),
    G("travel", "neutral", 1, "question", "Is a visa required for a two-week stay in Japan?", "The writer is planning a stay of about two weeks.", "The question is about a trip to Brazil."),
    G("travel", "neutral", 1, "request", "Please book me a window seat on the 8:15 train to Leeds.", "The writer wants a window seat.", "The writer wants an aisle seat."),
    G("travel", "positive", 1, "statement", "The hotel staff were wonderful and the view over the bay was breathtaking.", "The writer liked the hotel.", "The hotel staff were unfriendly."),
    G("travel", "neutral", 2, None, "Passengers are kindly requested to have their boarding passes ready for inspection.", "Passengers must show their boarding passes.", "Boarding passes are not needed."),
    G("travel", "positive", 0, "statement", "omg just landed in Lisbon, the weather is perfect!!", "The writer has arrived in Lisbon.", "The writer is still waiting to board."),
    G("travel", "negative", 1, "statement", "Our luggage was lost in transit and the airline has not responded to any of our three claims.", "The luggage was lost.", "The airline resolved the claim quickly."),
    G("travel", "neutral", 1, "question", "What's the cheapest way to get from the airport to the city centre?", "The writer asks about transport from the airport.", "The writer asks about hotel prices."),
    G("finance", "positive", None, "statement", "The quarterly results exceeded expectations, with revenue up 12% year on year.", "Revenue grew compared with last year.", "Revenue fell."),
    G("finance", "neutral", 1, "question", "Can you explain the difference between a Roth IRA and a traditional IRA?", "The writer asks about retirement accounts.", "The writer asks about mortgages."),
    G("finance", "neutral", 1, "request", "Please transfer 500 euros to my savings account on Friday.", "The transfer is for 500 euros.", "The money should go to a checking account."),
    G("finance", "negative", 0, "statement", "lost soooo much money on that stock, should never have listened to the hype", "The writer lost money on an investment.", "The investment was profitable."),
    G("finance", "neutral", 2, "statement", "Pursuant to Section 5 of the agreement, payment shall be made within thirty days of receipt of the invoice.", "Payment is due within thirty days.", "Payment is due immediately."),
    G("finance", "positive", 0, "statement", "finally paid off my student loan!!! 🎉", "The writer has paid off a student loan.", "The writer just took out a new loan."),
    G("finance", "neutral", 1, "statement", "Interest rates will stay unchanged this quarter, the central bank announced on Thursday.", "Interest rates were not changed.", "The central bank raised interest rates."),
    G("finance", "neutral", 2, None, "Would you kindly provide a copy of the audited financial statements for the year ended 31 December?", "The writer asks for financial statements.", "The writer is sending the statements."),
    G("health", None, 1, "question", "I've had a headache for three days and painkillers don't help. Should I see a doctor?", "The headache has lasted several days.", "The painkillers worked."),
    G("health", "neutral", 1, "request", "Please remember to take your medication with food, twice a day.", "The medication is taken twice daily.", "The medication should be taken on an empty stomach."),
    G("health", "positive", 0, "statement", "started yoga last month and my back pain is almost gone, feeling great!", "The writer's back pain has improved.", "The back pain got worse."),
    G("health", "neutral", 2, None, "Patients are requested to arrive fifteen minutes prior to their scheduled appointment.", "Patients should arrive early.", "Patients should arrive late."),
    G("health", "neutral", 1, "question", "How many hours of sleep does a teenager need?", "The question is about sleep.", "The question is about diet."),
    G("health", "negative", None, "statement", "The clinic's waiting times are ridiculous, I waited four hours to be seen.", "The writer waited a long time.", "The writer was seen immediately."),
    G("health", None, 1, "statement", "Regular walking lowers blood pressure and improves mood, according to a new study.", "According to the study, walking has health benefits.", "The study found that walking raises blood pressure."),
    G("health", None, 0, "statement", "got my flu shot today, arm's a bit sore but no big deal", "The writer got vaccinated.", "The writer skipped the flu shot."),
]  # fmt: skip


def make(rng, core):
    """A generic state (mostly plain text) and labels with one claim drawn true or false."""
    labels = dict(core)
    labels["claim"] = rng.random() < 0.5
    labels["claim_text"] = core["claims"][0 if labels["claim"] else 1]
    text = fill(rng, core["text"])
    form = rng.random()
    if form < 0.55:
        state = text
    elif form < 0.7:
        state = {"text": text} if rng.random() < 0.5 else {"message": text, "lang": "en"}
    elif form < 0.85:
        state = [{"role": "user", "content": text}]
    else:
        state = [text]
    return state, labels


FAMILIES = [
    {
        "type": "noul",
        "test": lambda x: x["claim"],
        "weight": 4,
        "qids": ["claim", "check", "statement", "fact", "holds", "q"],
        "instructions": [
            "{claim}",
            "{claim}",
            "True or false: {claim}",
            "Is this statement true of the text? {claim}",
            "Based only on the text: {claim}",
            "Does the text support this claim? {claim}",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: {"question": True, "statement": False}.get(x["kind"]),
        "qids": ["is_question", "question", "asks"],
        "instructions": ["Is this text a question?", "The text asks a question.", "The writer is asking something."],
    },
    {
        "type": "noul",
        "test": lambda x: x["digits"],
        "qids": ["has_number", "number", "digits"],
        "instructions": [
            "The text contains a number written in digits.",
            "Does the text include any digits (0-9)?",
        ],
    },
    {
        "type": "choice",
        "key": "topic",
        "qids": ["topic", "subject", "theme", "category"],
        "instructions": [
            "What is the topic of the text?",
            "Which subject area does this text belong to?",
            "Pick the topic.",
            "What is this text about?",
        ],
        "options": {
            "sports": ["games, matches, exercise and athletes", "sport and fitness"],
            "technology": ["computers, phones, software, networks", "tech"],
            "food": ["cooking, eating, restaurants", "food and drink"],
            "travel": ["trips, flights, hotels, transport", "travelling"],
            "finance": ["money, banking, investing, payments", "money matters"],
            "health": ["medicine, illness, wellbeing", "health and medical"],
        },
    },
    {
        "type": "choice",
        "key": "sent",
        "qids": ["sentiment", "tone", "mood", "feeling"],
        "instructions": [
            "What is the sentiment of the text?",
            "Is the writer's tone positive, negative or neutral?",
            "Classify the sentiment.",
            "How does the writer feel, judging from the text?",
        ],
        "options": {
            "positive": ["happy, pleased or enthusiastic", "good feelings"],
            "negative": ["unhappy, annoyed or disappointed", "bad feelings"],
            "neutral": ["factual, no clear feeling", "neither positive nor negative"],
        },
    },
    {
        "type": "choice",
        "key": "kind",
        "qids": ["kind", "sentence_type", "speech_act", "form"],
        "instructions": [
            "What kind of text is this?",
            "Is this a question, a request or a statement?",
            "Classify the type of utterance.",
        ],
        "options": {
            "question": ["asks for information", "an interrogative"],
            "request": ["asks someone to do something", "an instruction or request"],
            "statement": ["tells or reports something", "a declaration of fact or opinion"],
        },
    },
    {
        "type": "score",
        "key": "form",
        "qids": ["formality", "register", "formal", "style"],
        "instructions": [
            "How formal is the writing?",
            "Rate the language register of the text.",
            "What is the level of formality?",
            "How formal is the tone?",
        ],
        "styles": [
            ("informal", "neutral", "formal"),
            ("informal: slang, chatty, emoji", "neutral: plain everyday language", "formal: official or legal wording"),
            ("casual", "standard", "very formal"),
        ],
    },
]  # fmt: skip

DOMAIN = {
    "name": "generic",
    "prefix": "generic",
    "cores": CORES,
    "families": FAMILIES,
    "make": make,
    "states": 260,
}
