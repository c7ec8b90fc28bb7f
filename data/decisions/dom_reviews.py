"""Product reviews: overall sentiment, the aspect discussed, recommendation and returns."""

from __future__ import annotations

from common import C, fill


def R(aspect, sent, text, rec=None, ret=False):
    """A review core; ``sent`` 0 negative / 1 mixed / 2 positive (None: not asked)."""
    return C(text, aspect=aspect, sent=sent, rec=rec, ret=ret)


CORES = [
    R("quality", 0, "The fabric feels cheap and the seams started coming apart after two washes. Really poor quality. Would not recommend.", rec=False),
    R("quality", 2, "Solid build, heavy steel frame, no wobble at all. This chair will last for years. Highly recommend!", rec=True),
    R("quality", 1, "The knife was razor sharp out of the box, but the handle cracked within a month. Mixed feelings."),
    R("quality", 2, "The stitching is excellent and the leather has aged beautifully after a year of daily use. Recommended.", rec=True),
    R("quality", 0, "The headphones broke at the hinge after three weeks. I'm sending them back.", ret=True),
    R("quality", 1, "Sound is great for such a small speaker, though the bass distorts badly at high volume."),
    R("price", 0, "Way overpriced for what it is. You can find the same thing for half the price elsewhere."),
    R("price", 2, "Amazing value - it does everything the expensive brands do at a third of the cost."),
    R("price", 1, "Decent blender, but $120 is a lot for something this basic."),
    R("price", 0, "For the price I expected much more. Not worth the money, and I wouldn't recommend it.", rec=False),
    R("price", 2, "The cheapest option I found and it works perfectly. Great deal."),
    R("price", 1, "A good buy during the sale, but at full price I'd skip it."),
    R("delivery", 2, "Arrived two days early and very well packed. Would definitely recommend this shop.", rec=True),
    R("delivery", 1, "Took five weeks to arrive and the box was soaked, although the product itself seems fine."),
    R("delivery", 0, "The parcel never arrived and tracking stopped updating weeks ago. I would not recommend ordering from here.", rec=False),
    R("delivery", 2, "Fast shipping, tracked all the way, and the courier even called ahead."),
    R("delivery", None, "Delivery was a week late, but the seller kept me informed the whole time."),
    R("delivery", 0, "It came with a crushed corner and I had to return it for a replacement. Shipping is clearly their weak point.", ret=True),
    R("customer_service", 2, "Customer service was fantastic - they replaced my faulty unit within a day, no questions asked."),
    R("customer_service", 0, "I emailed support four times and never got a reply. Avoid this company.", rec=False),
    R("customer_service", 1, "The support agent was friendly but couldn't actually solve my problem."),
    R("customer_service", 2, "When the zipper broke, the company sent a new bag for free. I recommend them to everyone.", rec=True),
    R("customer_service", 0, "Rude staff on the phone, they hung up on me twice."),
    R("customer_service", 1, "They took ages to respond, but in the end support did sort out my warranty claim."),
    R("ease_of_use", 2, "Setup took five minutes and the app is super intuitive. Even my grandma uses it."),
    R("ease_of_use", 0, "The instructions are useless and the menu makes no sense. I gave up and returned it.", ret=True),
    R("ease_of_use", 1, "Easy to use once you figure it out, but the first setup was confusing."),
    R("ease_of_use", 2, "Simple controls, one button to start - exactly what I wanted. Would recommend to anyone.", rec=True),
    R("ease_of_use", 0, "Far too many steps just to change one setting; everything is buried in sub-menus."),
    R("ease_of_use", None, "Not the most intuitive interface, but after a day it became second nature. I'd recommend it.", rec=True),
]  # fmt: skip


def make(rng, core):
    """A review state: bare text, a review record, or a prefixed text."""
    text = fill(rng, core["text"])
    form = rng.random()
    if form < 0.4:
        state = text
    elif form < 0.75:
        state = {"item_id": fill(rng, "SKU-{order}"), "review": text}
        if rng.random() < 0.5:
            state["verified_purchase"] = rng.random() < 0.7
        if rng.random() < 0.3:
            state["reviewer"] = fill(rng, "{first}")
    elif form < 0.9:
        state = (
            fill(rng, rng.choice(["Review by {first}: ", "Customer review - ", "{first} wrote: "]))
            + text
        )
    else:
        state = [{"role": "user", "content": fill(rng, "Here is my review: ") + text}]
    return state, dict(core)


FAMILIES = [
    {
        "type": "score",
        "key": "sent",
        "qids": ["sentiment", "tone", "satisfaction", "polarity"],
        "instructions": [
            "What is the overall sentiment of the review?",
            "How satisfied is the reviewer?",
            "Rate the review's tone.",
            "How positive is this review?",
        ],
        "styles": [
            ("negative", "mixed", "positive"),
            ("unhappy", "partly happy, partly unhappy", "happy"),
            ("negative: mostly complaints", "mixed: both praise and criticism", "positive: mostly praise"),
        ],
    },
    {
        "type": "choice",
        "key": "aspect",
        "qids": ["aspect", "topic", "about", "main_aspect"],
        "instructions": [
            "What aspect of the purchase does the review mainly talk about?",
            "Which topic is the review about?",
            "Pick the aspect the reviewer focuses on.",
            "What is the main subject of this feedback?",
        ],
        "options": {
            "quality": ["how well the product is made or performs", "build quality and durability"],
            "price": ["cost and value for money", "whether it is worth the price"],
            "delivery": ["shipping speed, packaging, arrival", "how the order was delivered"],
            "customer_service": ["the seller's support staff", "how the company treated the customer"],
            "ease_of_use": ["setup, controls, how easy it is to use", "usability"],
        },
    },
    {
        "type": "noul",
        "test": lambda x: x["rec"],
        "qids": ["recommend", "would_recommend", "recommends"],
        "instructions": [
            "The reviewer recommends the product or seller.",
            "Would the reviewer recommend it to others, according to the review?",
            "The review contains a recommendation to buy.",
        ],
        "criteria": [None, {"true": "the reviewer recommends it", "false": "the reviewer advises against it"}],
    },
    {
        "type": "noul",
        "test": lambda x: x["ret"],
        "qids": ["returned", "return", "sent_back"],
        "instructions": [
            "The reviewer returned or is returning the item.",
            "Did the customer send the product back?",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: None if x["sent"] in (None, 1) else x["sent"] == 2,
        "qids": ["positive", "is_positive", "happy"],
        "instructions": [
            "The review is positive overall.",
            "Is the customer happy with the purchase?",
            "The reviewer is satisfied.",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["aspect"] == "price",
        "qids": ["price", "mentions_price", "value"],
        "instructions": [
            "The review is mainly about price or value for money.",
            "Does the reviewer focus on the cost?",
        ],
    },
]  # fmt: skip

DOMAIN = {
    "name": "product_reviews",
    "prefix": "reviews",
    "cores": CORES,
    "families": FAMILIES,
    "make": make,
    "states": 170,
}
