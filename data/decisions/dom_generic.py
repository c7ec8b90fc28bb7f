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
    G("sports", "neutral", 2, None, "Kindly confirm whether members are permitted to use the swimming pool before 7 a.m.", "The writer asks about using the pool early in the morning.", "The writer asks about the gym's evening hours."),
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
    G("food", "neutral", 2, "statement", "The management wishes to advise patrons that the restaurant will be closed for refurbishment from 1 to 15 August inclusive and will reopen on 16 August.", "The restaurant reopens in August.", "The restaurant is closing permanently."),
    G("food", None, 0, "statement", "lol burnt the pancakes again, guess it's cereal for breakfast 🙃", "The pancakes got burnt.", "The writer made a perfect breakfast."),
    G("food", "neutral", 2, "request", "We would be grateful if guests could inform us of any dietary requirements at least 48 hours in advance.", "Guests should give advance notice of dietary needs.", "Dietary needs can simply be mentioned on arrival."),
    G("food", "positive", 1, "statement", "Fresh strawberries are finally in season and they taste amazing.", "The writer enjoys the strawberries.", "Strawberries are out of season."),
    G("travel", "negative", None, "statement", "Our flight was delayed six hours and nobody told us anything. Worst trip ever.", "The flight was late.", "The flight left on time."),
    G("travel", "neutral", 1, "question", "Is a visa required for a two-week stay in Japan?", "The question concerns a stay of about two weeks.", "The question is about a trip to Brazil."),
    G("travel", "neutral", 1, "request", "Please book me a window seat on the 8:15 train to Leeds.", "The writer wants a window seat.", "The writer wants an aisle seat."),
    G("travel", "positive", 1, "statement", "The hotel staff were wonderful and the view over the bay was breathtaking.", "The writer liked the hotel.", "The hotel staff were unfriendly."),
    G("travel", "neutral", 2, None, "Passengers are kindly requested to have their boarding passes ready for inspection.", "Passengers are asked to have their boarding passes ready.", "Boarding passes are not needed."),
    G("travel", "positive", 0, "statement", "omg just landed in Lisbon, the weather is perfect!!", "The writer has arrived in Lisbon.", "The writer is still waiting to board."),
    G("travel", "negative", 1, "statement", "Our luggage was lost in transit and the airline has not responded to any of our three claims.", "The luggage was lost.", "The airline resolved the claim quickly."),
    G("travel", "neutral", 1, "question", "What's the cheapest way to get from the airport to the city centre?", "The writer asks about transport from the airport.", "The writer asks about hotel prices."),
    G("finance", "positive", None, "statement", "The quarterly results exceeded expectations, with revenue up 12% year on year.", "Revenue grew compared with last year.", "Revenue fell."),
    G("finance", "neutral", 1, "question", "Can you explain the difference between a Roth IRA and a traditional IRA?", "The writer asks about retirement accounts.", "The writer asks about mortgages."),
    G("finance", "neutral", 1, "request", "Please transfer 500 euros to my savings account on Friday.", "The transfer is for 500 euros.", "The money should go to a checking account."),
    G("finance", "negative", 0, "statement", "lost soooo much money on that stock, should never have listened to the hype", "The writer lost money on an investment.", "The investment was profitable."),
    G("finance", "neutral", 2, "statement", "Pursuant to Section 5 of the agreement, payment shall be made within thirty days of receipt of the invoice.", "Payment is due within thirty days.", "Payment is due immediately."),
    G("finance", "positive", 0, "statement", "finally paid off my student loan!!! 🎉", "The writer has paid off a student loan.", "The writer just took out a new loan."),
    G("finance", "neutral", 1, "statement", "Interest rates will stay unchanged this quarter, the central bank announced on Thursday.", "Interest rates will not change this quarter.", "The central bank raised interest rates."),
    G("finance", "neutral", 2, None, "Would you kindly provide a copy of the audited financial statements for the year ended 31 December?", "The writer asks for financial statements.", "The writer is sending the statements."),
    G("health", None, 1, "question", "I've had a headache for three days and painkillers don't help. Should I see a doctor?", "The headache has lasted several days.", "The painkillers worked."),
    G("health", "neutral", 1, "request", "Please remember to take your medication with food, twice a day.", "The medication is taken twice daily.", "The medication should be taken on an empty stomach."),
    G("health", "positive", 0, "statement", "started yoga last month and my back pain is almost gone, feeling great!", "The writer's back pain has improved.", "The back pain got worse."),
    G("health", "neutral", 2, None, "Patients are requested to arrive fifteen minutes prior to their scheduled appointment.", "Patients should arrive early.", "Patients should arrive late."),
    G("health", "neutral", 1, "question", "How many hours of sleep does a teenager need?", "The question is about sleep.", "The question is about diet."),
    G("health", "negative", None, "statement", "The clinic's waiting times are ridiculous, I waited four hours to be seen.", "The writer waited a long time.", "The writer was seen immediately."),
    G("health", None, 1, "statement", "Regular walking lowers blood pressure and improves mood, according to a new study.", "According to the study, walking has health benefits.", "The study found that walking raises blood pressure."),
    G("health", None, 0, "statement", "got my flu shot today, arm's a bit sore but no big deal", "The writer got vaccinated.", "The writer skipped the flu shot."),
    G("sports", "negative", 0, "statement", "refs robbed us AGAIN. offside my foot, that goal was clean 😡", "The writer believes the goal that was ruled out should have counted.", "The writer agrees with the referee's offside call."),
    G("sports", "neutral", 2, "question", "Are competitors in the under-18 category required to present a valid medical certificate prior to registration, in accordance with Rule 4.2 of the federation's regulations?", "The question concerns a medical certificate for young competitors.", "The question concerns competitors in the over-40 category."),
    G("sports", "positive", 1, "request", "Please tell Coach Rivera that the whole team loved the new drills and wants to keep doing them.", "The players would like to continue with the new drills.", "The team wants to stop doing the new drills."),
    G("sports", "negative", 0, "question", "why does the gym charge £40 a month when half the treadmills have been broken since like march?? 🙄", "The writer complains that many of the treadmills are out of order.", "The gym charges £14 a month."),
    G("sports", "positive", 2, "statement", "The Club is delighted to announce that its women's rowing eight secured the national title on Saturday, the first such victory in the Club's 112-year history.", "The club had never won this title before.", "The Club's men's rowing eight secured the national title on Saturday."),
    G("sports", "neutral", 0, "request", "yo can someone grab the cones and bibs from the shed before practice? ta", "The writer wants training equipment fetched before practice.", "The writer wants someone to put the cones and bibs back in the shed after practice."),
    G("sports", "positive", 1, "question", "Our kids absolutely loved the swimming lessons - when does the next term start?", "The children enjoyed their swimming lessons.", "The writer asks when the current term ends."),
    G("sports", "negative", 1, "statement", "The cycling race was cancelled two hours before the start because of the storm, and nobody has offered us a refund.", "The race did not take place because of bad weather.", "The cycling race was cancelled the day before the start."),
    G("technology", "negative", 0, "question", "seriously why does my phone update itself at 3am and then forget all my wifi passwords?? 😤", "After updating, the phone loses the saved wifi passwords.", "The phone only updates when the writer approves it."),
    G("technology", "neutral", 2, "request", "Please complete the mandatory cybersecurity training module no later than 30 September; failure to do so will result in suspension of network access.", "Staff who miss the deadline may lose network access.", "Completing the cybersecurity training module is optional."),
    G("technology", "positive", 0, "statement", "new keyboard arrived and omg the clicky keys are sooo satisfying lol", "The writer is enjoying the new keyboard.", "The new keyboard has not arrived yet."),
    G("technology", "positive", 1, "question", "I'm loving my new iPhone so far - how do I move my old photos over from my Android phone?", "The writer has switched from an Android phone to an iPhone.", "The writer wants to move photos from an iPhone to an Android phone."),
    G("technology", "negative", 1, "request", "Please fix the second-floor printer, it has chewed up every single page I've sent it this morning and I'm fed up.", "The faulty printer is on the second floor.", "The printer on the first floor is the one that needs fixing."),
    G("technology", "neutral", 2, "statement", "The data centre will undergo scheduled maintenance between 22:00 and 02:00 UTC on Sunday, during which all hosted services will be unavailable.", "Hosted services will be offline for a few hours on Sunday night.", "All hosted services will remain available during the maintenance."),
    G("technology", "positive", 2, "request", "Please convey our sincere appreciation to the IT department for restoring the payroll system so promptly following Monday's outage.", "The payroll system is working again after an outage.", "The payroll outage occurred on Friday."),
    G("food", "neutral", 0, "question", "ok dumb q but can u freeze cooked rice or nah? 🍚", "The writer wants to know whether cooked rice can be frozen.", "The writer asks how long to cook rice."),
    G("food", "positive", 1, "request", "Please pass on our thanks to the chef - the lamb was the best we've ever had.", "The writers were very impressed by the lamb.", "The writers want to complain to the chef about the lamb."),
    G("food", "negative", 2, "statement", "I wish to register a formal complaint regarding the dinner served at your restaurant on 9 May: our main courses arrived forty minutes late and were cold.", "The main courses were served late.", "The main courses arrived on time but were cold."),
    G("food", "negative", 0, "question", "why is a tiny coffee at the café downstairs now £4 when it literally tastes like burnt water smh", "The writer thinks the coffee tastes bad.", "The coffee at the café downstairs costs £2."),
    G("food", "positive", 1, "request", "Please add oat milk and a dozen eggs to the shopping list - I'm making my famous pancakes tomorrow and I can't wait!", "Eggs should go on the shopping list.", "The writer asks for soy milk to be added to the shopping list."),
    G("food", "positive", 0, "statement", "made grandma's apple pie recipe for the first time & it came out PERFECT 🥧❤️", "The pie turned out well on the writer's first attempt.", "The pie was made from the writer's own new recipe."),
    G("food", "neutral", 2, "question", "Does the proposed regulation require food establishments to display allergen information on all menus, or only on printed ones?", "The question concerns allergen information on menus.", "The question asks whether calorie counts must be displayed on menus."),
    G("travel", "negative", 2, "request", "I hereby request a full refund of the fare for train 1742, which was cancelled without notice, leaving passengers stranded for over three hours.", "The writer wants their money back for a cancelled train.", "The train was cancelled with plenty of advance notice."),
    G("travel", "neutral", 0, "question", "anyone know if the ferry to the islands runs on sundays?? 🤔⛴️", "The writer wants to know whether there is a ferry on Sundays.", "The writer asks about the ferry timetable on Saturdays."),
    G("travel", "positive", 1, "statement", "The night train was surprisingly comfortable, and we woke up to snowy mountains outside the window.", "The writers travelled overnight by train.", "The writers found the night train uncomfortable."),
    G("travel", "neutral", 2, "request", "Please reserve a double room for three nights commencing on the 14th, and kindly confirm whether late check-out can be arranged.", "The booking request is for three nights.", "The writer asks for a single room."),
    G("travel", "positive", 1, "question", "We loved our stay in Porto so much - which other towns in northern Portugal would you recommend?", "The writer enjoyed staying in Porto.", "The writer asks for towns to visit in southern Portugal."),
    G("travel", "negative", 0, "statement", "3 hrs stuck on the tarmac with no aircon and crying babies. never flying this airline again 🙃", "The writer does not plan to fly with this airline again.", "The plane was stuck on the tarmac for 30 minutes."),
    G("travel", "negative", 2, "question", "Why has the railway authority failed to respond to our formal complaint regarding the closure of Platform 2 at Central Station, submitted over eight weeks ago?", "The complaint was sent more than a month ago.", "The complaint concerns the closure of Platform 8."),
    G("travel", "positive", 0, "request", "pls tell our tour guide Ana she was AMAZING, best day of the whole holiday!! 🙌", "The writer had a great day with the guide.", "The writer says the tour was the worst day of the holiday."),
    G("finance", "negative", 1, "question", "Why was I charged a £25 late fee when I paid the bill two days before the due date?", "The writer says the bill was paid before it was due.", "The writer admits paying the bill two days late."),
    G("finance", "neutral", 2, "request", "Kindly remit the outstanding balance of $1,240.00 within fourteen days of the date of this notice.", "Payment is requested within two weeks.", "The outstanding balance is $12,400."),
    G("finance", "positive", 1, "statement", "My savings finally passed the amount I need for a house deposit, and I feel so relieved.", "The writer now has enough saved for a house deposit.", "The writer is still short of the amount needed for a house deposit."),
    G("finance", "neutral", 0, "question", "ok weird q, is it normal for my bank app to show a pending 1p charge from amazon??", "The pending charge is a very small amount.", "The writer asks about a refund from Amazon."),
    G("finance", "negative", 0, "request", "can u PLEASE stop calling me about a credit card I never asked for?? this is the 5th time today 😠", "The writer has been called several times today.", "The writer applied for the credit card."),
    G("finance", "negative", 2, "statement", "I must express my grave dissatisfaction with the Bank's handling of my mortgage application, which has now been pending for eleven weeks without explanation.", "The mortgage application has been waiting for over two months.", "The Bank has explained the delay to the writer."),
    G("finance", "neutral", 1, "question", "If I withdraw cash abroad with my debit card, will I pay a fee on each withdrawal?", "The writer asks about fees for using a card abroad.", "The question is about withdrawing cash with a credit card."),
    G("health", "positive", 2, "statement", "The Trust is pleased to confirm that the new children's ward will open on 1 October, adding 40 beds to the hospital's capacity.", "The new ward will increase the number of hospital beds.", "The new children's ward will add 14 beds."),
    G("health", "negative", 1, "request", "Please stop giving my mother the tablets that made her so dizzy she fell twice last week - I'm really upset that nobody noticed.", "The writer's mother fell more than once.", "The tablets made the writer's father dizzy."),
    G("health", "neutral", 2, "question", "Are patients required to fast prior to the blood test scheduled for Monday morning, and if so, for how many hours?", "The blood test takes place on a Monday.", "The blood test is scheduled for Monday evening."),
    G("health", "positive", 0, "request", "pls thank nurse Jo for me, she made my whole hospital stay sooo much easier 💕", "The writer appreciated a nurse's help.", "Nurse Jo made the writer's hospital stay harder."),
    G("health", "negative", 0, "question", "why does my knee STILL hurt after 6 weeks of physio?? 😩", "The writer has had physiotherapy for more than a month.", "The writer's knee stopped hurting after physio."),
    G("health", "negative", 1, "statement", "I've barely slept all week because of a cough that won't go away, and I'm exhausted.", "The writer's cough has lasted for several days.", "The writer has been sleeping well this week."),
    G("health", "neutral", 0, "request", "hey can u pick up my prescription from the pharmacy on ur way home? thx", "The writer wants someone to collect a prescription.", "The writer asks someone to drop a prescription off at the pharmacy."),
    G("health", "neutral", 2, "question", "Is the concurrent administration of ibuprofen and paracetamol considered safe for adult patients?", "The question is about taking two medicines together.", "The question is about giving aspirin to children."),
    G("sports", "negative", 0, "statement", "gutted. we were 2-0 up at half time and still lost 3-2 😭", "The writer's team threw away a lead and lost the match.", "The writer's team was behind at half time."),
    G("sports", "neutral", 2, "statement", "Members are advised that the indoor courts may be booked from 8 a.m. on weekdays and from 10 a.m. at weekends.", "Weekend bookings start later in the morning than weekday bookings.", "The indoor courts can be booked from 8 a.m. at weekends."),
    G("sports", "positive", 1, "statement", "Not a single player missed training this month, and the coach says it's the best attendance she has ever seen.", "Every player turned up to training this month.", "Some players missed training this month."),
    G("sports", "neutral", 1, "question", "Now that the season has ended, when will the club hand out the awards for top scorer and player of the year?", "The season is already over.", "The season has not finished yet."),
    G("sports", "positive", 2, "request", "Please join the Board in congratulating Ms Okafor on her appointment as head coach of the senior squad, following eight years of distinguished service as assistant coach.", "Ms Okafor has been promoted from assistant coach to head coach.", "Ms Okafor has just been appointed assistant coach of the senior squad."),
    G("sports", "negative", 0, "statement", "ran the 10k in 58 mins, slower than last yr and my knees are killing me", "The writer's knees hurt after the run.", "The writer ran the 10k faster than last year."),
    G("sports", "neutral", 1, "statement", "All finishers will receive a medal, but only the first 200 runners to register get a free T-shirt.", "Getting a free T-shirt depends on registering early.", "Only the first 200 finishers will receive a medal."),
    G("sports", "positive", 0, "request", "can u send me the vid of my goal from sat?? best one i've ever scored lol ⚽", "The writer scored a goal on Saturday.", "The writer wants a video of a goal scored by a teammate."),
    G("technology", "negative", 1, "statement", "Really disappointed: the update was supposed to fix the login bug, but users still can't sign in on Android.", "The login problem has not been solved on Android.", "The update fixed the login bug on Android."),
    G("technology", "neutral", 2, "statement", "With effect from 1 November, access to the customer database will be restricted to members of the support and finance teams.", "From November, staff outside support and finance will not be able to access the customer database.", "From 1 November, all staff will have access to the customer database."),
    G("technology", "positive", 0, "statement", "switched to the new editor last week and my build times dropped from like 4 min to 40 sec 🔥", "The writer's builds are quicker since changing editors.", "The writer's build times went up after switching editors."),
    G("technology", "neutral", 1, "question", "Before I upgrade to 32 GB of RAM, will my motherboard support more than 16 GB?", "The writer has not upgraded the memory yet.", "The writer has already upgraded to 32 GB of RAM."),
    G("technology", "negative", 2, "statement", "We regret to inform you that the scheduled release has been postponed because critical security vulnerabilities were identified during final testing.", "Problems found in testing have delayed the release.", "The release was postponed because final testing had not yet started."),
    G("technology", "neutral", 0, "request", "hey can u add me to the dev slack channel when u get a sec? thx", "The writer is not yet a member of the dev channel.", "The writer asks to be removed from the dev Slack channel."),
    G("technology", "positive", 1, "statement", "Great news: our website now loads in under a second, three times faster than before the redesign.", "The redesign made the website quicker.", "The website was faster before the redesign."),
    G("technology", "negative", 0, "question", "why did the app log me out and delete my draft AFTER i hit save?? 😡", "The writer had tried to save the draft before it was lost.", "The writer lost the draft before pressing save."),
    G("technology", "neutral", 1, "statement", "Tom, not Priya, will be on call for the servers this weekend, since Priya is on holiday.", "Priya will be away this weekend.", "Priya will be on call for the servers this weekend."),
    G("food", None, 0, "statement", "tried the new ramen place on the corner - broth was unreal, only wish the portions were bigger 🍜", "The writer enjoyed the broth.", "The writer thought the portions were too large."),
    G("food", "neutral", 2, "statement", "Patrons are advised that hot meals are served in the café until 2 p.m. only; thereafter, sandwiches and salads remain available until closing.", "A customer arriving at 3 p.m. can still buy a sandwich.", "Hot meals are served in the café until closing."),
    G("food", "negative", 1, "statement", "We ordered the vegetarian lasagne, but it arrived with bacon in it, so none of us could eat it.", "The dish the writers were served contained meat.", "The vegetarian lasagne arrived without any meat in it."),
    G("food", "neutral", 1, "question", "If the recipe serves four, how much rice do I need for a dinner party of eight?", "The writer is cooking for twice as many people as the recipe serves.", "The dinner party is for four people."),
    G("food", "positive", 2, "statement", "The Society is delighted to report that this year's cookery competition attracted over 300 entries, twice as many as last year.", "Last year's competition had fewer entries than this year's.", "This year's competition received half as many entries as last year's."),
    G("food", "negative", 0, "request", "pls stop putting coriander in EVERYTHING, it literally tastes like soap to me 🤢", "The writer dislikes the taste of coriander.", "The writer wants more coriander in the food."),
    G("food", "neutral", 1, "statement", "The bakery usually sells out of croissants by 9 in the morning, although on Sundays they last until about noon.", "Croissants are easier to get late in the morning on Sundays than on other days.", "On Sundays the croissants sell out earlier than usual."),
    G("food", "positive", 1, "question", "The cake you brought to the party was gorgeous - did you bake it yourself or buy it?", "The person being addressed brought a cake to the party.", "The writer baked the cake for the party."),
    G("food", None, 2, "statement", "Following the inspection on 12 March, the restaurant was found to be in breach of hygiene regulations and has been ordered to close until further notice.", "The restaurant failed a hygiene inspection.", "The inspection took place on 21 March."),
    G("travel", "negative", 0, "statement", "missed my connection in Frankfurt bc the first flight landed 40 min late. next one isn't till tomorrow 😩", "The writer will have to wait until the next day for a flight.", "The writer missed the connection because of a long queue at security."),
    G("travel", "neutral", 2, "statement", "Guests are advised that check-out is at 11 a.m. and that luggage may be stored at reception until 6 p.m. on the day of departure.", "Guests can leave their bags at the hotel for several hours after checking out.", "Luggage cannot be stored at reception after check-out."),
    G("travel", "positive", 1, "statement", "We took the coastal route instead of the motorway, and although it added an hour, the views were worth every minute.", "The coastal route took longer than the motorway would have.", "The coastal route saved the writers an hour."),
    G("travel", "neutral", 1, "question", "Now that our return flight has moved from Thursday to Friday, will we need to pay extra for the hotel on Thursday night?", "The travellers will now fly home a day later than planned.", "The return flight has been brought forward from Friday to Thursday."),
    G("travel", "negative", 2, "statement", "Regrettably, the Northern line will be suspended between Camden and Euston for the entire weekend owing to engineering works.", "Trains will not run on part of the line this weekend.", "The Northern line will be suspended on Saturday only."),
    G("travel", None, 0, "request", "send pics of the beach pls!! jealous u got the sunny week and we got 7 days of rain lol", "The writer had a week of rain.", "The writer had better weather than the friend."),
    G("travel", "neutral", 1, "statement", "The airport shuttle leaves every 20 minutes from Terminal 1, but it does not stop at Terminal 3.", "Travellers waiting at Terminal 3 cannot catch the shuttle there.", "The airport shuttle leaves from Terminal 3."),
    G("travel", "negative", 1, "question", "Why were we charged for two extra bags when we only checked in one suitcase each?", "Each traveller checked in a single suitcase.", "The writers checked in two suitcases each."),
    G("finance", "neutral", 2, "statement", "Withdrawals from the fixed-term account are not permitted before the maturity date of 30 June 2026.", "Money in the account is locked until the end of June 2026.", "Funds can be withdrawn from the account at any time before 30 June 2026."),
    G("finance", "positive", 0, "statement", "got my tax refund today, way more than i expected 🤑", "The writer received money back from the tax office.", "The tax refund was smaller than the writer expected."),
    G("finance", "negative", 1, "statement", "My rent went up by 15% this year while my salary stayed exactly the same, and I'm really struggling.", "The writer's salary did not increase this year.", "The writer's salary rose by 15% this year."),
    G("finance", "neutral", 1, "request", "Please split the electricity bill three ways this month, except for the £30 heater charge, which Marco has agreed to pay on his own.", "Marco will cover the heater charge by himself.", "The heater charge will be shared among all three people."),
    G("finance", None, 2, "statement", "The Company reported a net loss of £2.1 million for the year, compared with a profit of £4.3 million in the previous year.", "The company did better in the previous year than this year.", "The Company reported a net loss in the previous year."),
    G("finance", "neutral", 0, "question", "quick q - if i pay off my card in full every month do i still get charged interest?", "The writer asks whether paying the whole balance avoids interest.", "The writer asks about paying only the minimum amount each month."),
    G("finance", "positive", 1, "request", "Please thank Grace for spotting the double payment - thanks to her we got the £800 back.", "The duplicated payment was refunded.", "The double payment was never recovered."),
    G("finance", None, 1, "statement", "The bank will stop charging fees for transfers to other banks from next month, but international transfers will still cost £5.", "Transfers abroad will continue to carry a charge.", "The bank will start charging for transfers to other banks from next month."),
    G("health", "positive", 0, "statement", "6 months smoke-free today!! never thought i'd make it this far 💪", "The writer stopped smoking half a year ago.", "The writer started smoking again this month."),
    G("health", "neutral", 2, "statement", "Visiting hours on the surgical ward are from 2 p.m. to 8 p.m., and no more than two visitors are permitted per patient at any one time.", "A patient may not have three visitors at once.", "Up to four visitors may see a patient at the same time."),
    G("health", "negative", 1, "statement", "The physiotherapist said my shoulder would heal in a month, but it's been three months and it's no better.", "The shoulder is taking longer to heal than expected.", "The shoulder healed within a month, as the physiotherapist predicted."),
    G("health", "neutral", 1, "question", "My doctor told me to take the antibiotics for ten days - is it OK to stop now that I feel better after five?", "The writer has taken about half of the prescribed course.", "The doctor prescribed the antibiotics for five days."),
    G("health", "positive", 2, "statement", "We are pleased to announce that, following patient feedback, the clinic will extend its weekday opening hours until 9 p.m. from next month.", "Patients will be able to visit the clinic later in the evening from next month.", "The clinic will close earlier on weekdays from next month."),
    G("health", "negative", 0, "request", "pls can u cover my shift tmrw, been throwing up all night and can barely stand 🤢", "The writer is too ill to work tomorrow.", "The writer needs cover because of a family holiday."),
    G("health", "neutral", 1, "statement", "The vaccine is recommended for everyone over 65, but people with an egg allergy should speak to their doctor first.", "Some people should get medical advice before having the vaccine.", "The vaccine is recommended only for people under 65."),
    G("health", None, 2, "statement", "Owing to industrial action, all non-urgent operations scheduled for Wednesday and Thursday have been cancelled; emergency services will continue to operate as normal.", "Emergency care will still be available during the strike.", "Emergency services will not operate on Wednesday and Thursday."),
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
}
