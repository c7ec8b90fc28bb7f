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
    R("delivery", 1, "Took five weeks to arrive and the box was soaked, although the product itself is lovely and works perfectly."),
    R("delivery", 0, "The parcel never arrived and tracking stopped updating weeks ago. I would not recommend ordering from here.", rec=False),
    R("delivery", 2, "Fast shipping, tracked all the way, and the courier even called ahead."),
    R("delivery", None, "Delivery was a week late, but the seller kept me informed the whole time."),
    R("delivery", 0, "It came with a crushed corner and I had to return it for a replacement. Shipping is clearly their weak point.", ret=True),
    R("customer_service", 2, "Customer service was fantastic - they sent a replacement for my faulty unit within a day, no questions asked, and let me keep the old one."),
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
    R("quality", 0, "It arrived when it was supposed to. The pan itself, though: the nonstick coating started flaking into my eggs after a week, and the base has already warped so it spins on the burner. It's boxed up and going back. Don't buy this one.", rec=False, ret=True),
    R("quality", 1, "Comfy backpack, lousy zipper - it snapped on day two, so back it goes.", ret=True),
    R("quality", 0, "Wow, a phone charger that stops charging after nine days. Truly engineering at its finest. Returned it. Avoid.", rec=False, ret=True),
    R("quality", 1, "These hiking boots are genuinely waterproof and my feet stayed dry through a full day of rain, but the sole is already peeling away from the toe after about forty miles. Great materials, poor glue. I can't recommend them.", rec=False),
    R("quality", 1, "Picture quality on this monitor is gorgeous and the colors are spot on. Unfortunately mine has three dead pixels right in the middle of the screen, so I'm sending it back for an exchange.", ret=True),
    R("quality", 2, "Two years of daily smoothies, frozen fruit, crushed ice, even homemade nut butter, and the motor hasn't slowed down once. Built like a tank. Buy it.", rec=True),
    R("quality", 2, "My kids have knocked this tablet case off the top bunk a dozen times and there isn't a scratch on the tablet. Get one if you have children.", rec=True),
    R("quality", 2, "Honestly the best coffee beans I've had from a subscription: rich, chocolatey, never stale, and each bag turns up within a few days of roasting. I keep recommending it to everyone at work.", rec=True),
    R("price", 2, "Not a bad price at all for a full set of twelve pots and pans - I paid less than I once paid for a single skillet from the big-name brand. Recommend.", rec=True),
    R("price", 0, "$45 for a phone case? It's a thin sliver of plastic. I'm sending it back. Save your money and skip this one.", rec=False, ret=True),
    R("price", None, "Pricey, sure, but you get what you pay for."),
    R("price", 1, "The snacks in the box are tasty, but $40 a month is steep for about ten small packets. Worth it some months, not others."),
    R("price", 0, "Returned it. The exact same vacuum was $90 cheaper at the store down the road, and I'm not paying that kind of markup. Don't buy it here.", rec=False, ret=True),
    R("price", 2, "For under twenty dollars these earbuds are a steal. I'd recommend them to any student on a tight budget.", rec=True),
    R("price", 1, "Nice rug, but I paid full price and it went on sale for 40% off a week later, so I sent it back and reordered it at the lower price.", ret=True),
    R("price", 0, "Overpriced. Returned it - don't bother.", rec=False, ret=True),
    R("delivery", 0, "I ordered a birthday present two weeks ahead and it showed up three days after the party. The courier marked it as delivered on a day when nobody came to the door, and the store's tracking page just said 'in transit' the whole time. It's going straight back. Don't order from this store if you need anything on time.", rec=False, ret=True),
    R("delivery", 1, "Packaging was excellent - every glass wrapped individually in bubble wrap - but it took nearly a month to get here. I'd still recommend the shop, just order early.", rec=True),
    R("delivery", 2, "Ordered Sunday night, on my porch Monday morning. Impressive. Recommend this seller.", rec=True),
    R("delivery", 0, "The courier left the box out in the rain, and by the time I got home the cardboard had turned to mush and the bookshelf panels were swollen with water. Sent the whole thing back. I wouldn't recommend this seller.", rec=False, ret=True),
    R("delivery", 1, "The lamp arrived in pieces because it was shipped in a thin envelope with no padding at all. The replacement came quickly and properly boxed, though, so I returned the broken one and kept the second.", ret=True),
    R("delivery", 2, "Every order from this shop comes double-boxed, with tracking updates at each step, and nothing has ever taken more than three days to reach me. Highly recommend them.", rec=True),
    R("delivery", 1, "The couch arrived on the promised day and the crew carried it up three flights without a word of complaint, but they scuffed the hallway wall on the way in."),
    R("delivery", 0, "Still waiting. Three weeks, no tracking number, no package. Avoid this shop.", rec=False),
    R("customer_service", 2, "I had to return the jacket because it was the wrong size, and the process couldn't have been smoother. The agent emailed me a prepaid label within minutes and the refund landed two days later. I'd recommend this store.", rec=True, ret=True),
    R("customer_service", 0, "My kettle arrived with a cracked lid. It took six calls to get anyone to approve a return, each agent told me something different, and in the end I mailed it back at my own expense. Stay away from this company.", rec=False, ret=True),
    R("customer_service", 1, "The chat bot was useless, but once I finally got through to a human, she fixed my order mix-up in five minutes."),
    R("customer_service", None, "Support did answer my question about the warranty, eventually. It took a week."),
    R("customer_service", 2, "I broke the lid of my thermos myself, completely my own fault, and the company still mailed me a new one free of charge along with a handwritten note. That's how you earn a loyal customer. I recommend this brand to all my friends.", rec=True),
    R("customer_service", 1, "Friendly agents, terrible hold times. Forty minutes of the same song before anyone picked up."),
    R("customer_service", 1, "The store accepted my return of the broken heater without any fuss, but the staff at the counter were condescending and made me wait half an hour.", ret=True),
    R("customer_service", 0, "I asked their support team three times how to change my delivery address and got the same copy-paste reply each time, never an actual answer. I can't recommend this company to anyone.", rec=False),
    R("ease_of_use", 2, "The sewing machine threads the needle by itself, and the little diagrams on the side had me stitching within ten minutes of unboxing it - my first time ever using one. I'd recommend it to any beginner.", rec=True),
    R("ease_of_use", 0, "This smart thermostat needs three separate accounts, a hub and a firmware update before it will even show the temperature. I spent a whole evening on setup and still couldn't get the schedule to save. Returned. Save yourself the headache and buy something else.", rec=False, ret=True),
    R("ease_of_use", 1, "Once you learn where everything is, editing photos in this app is quick, but the icons have no labels and I spent ages hunting for basic tools like crop."),
    R("ease_of_use", 2, "Plug in, press one button, done. My dad set it up all by himself. Highly recommended.", rec=True),
    R("ease_of_use", 0, "You have to hold two buttons for five seconds just to switch the watch from Celsius to Fahrenheit, and the manual doesn't mention it anywhere. Returning it. Wouldn't recommend.", rec=False, ret=True),
    R("ease_of_use", 1, "I nearly sent this stroller back after struggling to fold it in a parking lot. Once I watched the video it folds one-handed in seconds, but the brake pedal is still awkward to reach. Keeping it."),
    R("ease_of_use", 1, "The rulebook is forty pages of confusing exceptions, and we had to watch videos just to play our first round. Once we got going, the game was fun. Still, I wouldn't recommend it.", rec=False),
    R("ease_of_use", 2, "Finally an expense app my whole team figured out without any training. Snap the receipt, tap submit, done. Recommended.", rec=True),
    R("quality", 1, "Gorgeous cloth cover and lovely thick paper, but a whole section in the middle of my copy was printed crooked, with smudged ink on a dozen pages. I sent it back for a fresh copy.", ret=True),
    R("quality", 0, "These pruning shears went blunt after one afternoon on the hedge, and the spring popped out the next morning. Flimsy junk. Returned them - don't bother.", rec=False, ret=True),
    R("quality", 1, "Lovely shade and it genuinely lasts through lunch, but the lipstick snapped off at the base the second time I used it, so it went back.", ret=True),
    R("quality", 2, "Three winters of commuting through salt and slush, and this bike's gears still shift as crisply as the day I got it. Not a spot of rust on the frame. Recommend.", rec=True),
    R("quality", 0, "The clip on this dog leash bent open while my lab was pulling, and he bolted toward the road. He's fine, thankfully. The leash went back to the shop that afternoon. Do not trust it with a strong dog.", rec=False, ret=True),
    R("quality", 0, "Quick delivery, nice box, whatever. What matters is the drill, and the drill is flimsy: the battery dies after ten minutes, the chuck already wobbles and a plastic gear stripped on the third screw. It's going back tomorrow. Wouldn't recommend.", rec=False, ret=True),
    R("quality", None, "It does the job. The lid hinge creaks a little, but the cooler has held up through six months of camping trips."),
    R("quality", 2, "Our old garden hose kinked every few feet and split at the first frost. This one has been run over by the car, left out all winter and dragged through the rose bushes, and it still doesn't leak anywhere. If you're tired of hoses that split, get this one.", rec=True),
    R("price", 2, "Not cheap at $15 a month, but worth every cent - this photo editing subscription saves me hours every week. I'd tell any freelancer to sign up.", rec=True),
    R("price", 1, "My dog loves it, but it's $60 a bag and the ingredient list is identical to the $20 store brand. I returned the unopened second bag and went back to the cheaper one.", ret=True),
    R("price", 1, "The rain jacket is well made and kept me dry, but $220 for a basic shell is hard to justify. I returned it and found a $70 one that does nearly the same job.", ret=True),
    R("price", 0, "The hotel charged $280 a night for a room the size of a closet, plus a 'resort fee' for a pool that was closed the entire week. Total rip-off. Stay somewhere else.", rec=False),
    R("price", 2, "Half the price of the name brand and honestly just as good. Recommended.", rec=True),
    R("price", 1, "The language course app was great value the first year at the intro rate of $4 a month. Then the renewal jumped to $13 with barely any warning. I'd still recommend it, just cancel before the renewal date.", rec=True),
    R("price", None, "It costs about what you'd expect. Not a bargain, not a rip-off."),
    R("price", 2, "I put off buying a standing desk for years because I assumed a decent one would cost a fortune. This one was $280, a quarter of what the showroom brands charge, with the same motor, the same height range and a longer warranty. After six months of daily use I can't see what the extra $800 would have bought me. Best money I've spent on my home office, and I'd point anyone toward it.", rec=True),
    R("delivery", 2, "The seed potatoes came in a breathable paper sack rather than plastic and arrived within 48 hours, still firm and dry. I'll be recommending this nursery to my allotment group.", rec=True),
    R("delivery", 0, "The glass aquarium showed up in a box with no padding at all and a crack running down one side. Sent it straight back. Avoid ordering anything fragile from this seller.", rec=False, ret=True),
    R("delivery", 1, "Fast delivery, but the courier chucked the box over the fence into my flowerbed instead of knocking."),
    R("delivery", 0, "Ordered a scooter for my son's birthday and it turned up a week late, in a box with the bottom torn open and the handlebar clamp bent. The tracking page said 'out for delivery' four days in a row. I straightened the clamp myself and kept it, but I'd warn anyone against ordering from them.", rec=False),
    R("delivery", 2, "Haven't opened the paint set yet, so I can't speak to the colours, but the shipping was superb: next-day, and every tube sealed in its own zip bag. Would recommend the shop.", rec=True),
    R("delivery", None, "The package arrived on day nine of the 'five to ten business days' window."),
    R("delivery", 1, "It took three weeks instead of the promised five days, but the books arrived in perfect condition, each one wrapped in tissue paper."),
    R("delivery", 0, "Delivered to the wrong address. Twice. Order elsewhere.", rec=False),
    R("customer_service", 2, "Our flight was delayed and we reached the hotel at 2am. The night receptionist had held our room, sent up sandwiches and let us check out late the next day at no charge. Staff like that make a stay. I'd recommend this hotel.", rec=True),
    R("customer_service", 0, "The air fryer's basket leaked grease from day one. Support blamed me for 'overfilling it', refused a replacement and only accepted the return after I complained publicly. I won't recommend this brand to anyone.", rec=False, ret=True),
    R("customer_service", 1, "The rep needed three emails to understand my billing question, but once she did, she refunded the double charge and added a free month. I'd still recommend them.", rec=True),
    R("customer_service", 0, "Three weeks of 'your ticket has been escalated' about the blender I mailed back, and not one reply from a human. Avoid this company.", rec=False, ret=True),
    R("customer_service", 2, "Support fixed my account in one message. Impressive."),
    R("customer_service", 1, "The agent approved the return of my faulty garden lights on the spot and emailed a label within the hour, which I appreciated. The refund, though, took six weeks and three follow-up calls to actually appear.", ret=True),
    R("customer_service", None, "I called about a missing screw and they said they would look into it."),
    R("customer_service", 2, "My cat refused the new food after two bites. I emailed the pet store expecting a fight, but they told me to donate the open bag to a shelter, refunded me in full and suggested a different flavour she now loves. Wonderful people - I recommend them.", rec=True),
    R("ease_of_use", 2, "The budgeting app pulled in my bank transactions automatically and the dashboard makes sense at a glance. I was set up before my coffee got cold. Recommend it to anyone who hates spreadsheets.", rec=True),
    R("ease_of_use", 0, "The assembly diagram for this compost bin shows parts that aren't labelled anywhere, and the panels only slot together if you squeeze them at an angle nobody could guess. After two hours I packed it up and returned it. Don't buy this one.", rec=False, ret=True),
    R("ease_of_use", None, "The e-reader's menus are a maze at first and I nearly returned it in the first week because I couldn't find the font settings. Now I can't imagine reading without it. I'd recommend it.", rec=True),
    R("ease_of_use", 0, "Every time I want to export a video, this editor makes me click through four pop-ups and hunt for the button in a different menu than last time. Clunky and confusing, and the tutorials are out of date. I can't recommend it.", rec=False),
    R("ease_of_use", 1, "The hedge trimmer is light and the trigger is comfortable, but the safety lock needs two hands to release, which is awkward when you're up a ladder."),
    R("ease_of_use", 2, "The automatic feeder took five minutes to set up: pick the times, pick the portion size, done. Would recommend it to any busy pet owner.", rec=True),
    R("ease_of_use", 0, "Arrived a day early, which was nice, but that's the only good thing I can say. The espresso machine's buttons are unlabelled symbols, the manual is a foldout of pictograms, and neither of us could work out how to steam milk. Returned. Not one I'd recommend.", rec=False, ret=True),
    R("ease_of_use", 1, "Easy to set up, confusing to actually use."),
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
}
