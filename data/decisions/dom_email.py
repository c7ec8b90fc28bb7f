"""Email intent: meeting requests, complaints, questions, thanks and sales pitches."""

from __future__ import annotations

from common import C, fill, name


def E(intent, urg, subject, body, attach=False):
    """An email core; ``urg`` None when urgency would be debatable (not asked)."""
    return C(
        body, subject=subject, intent=intent, urg=urg, attach=attach, has_date="{date}" in body
    )


CORES = [
    E("meeting_request", 1, "Quick sync on Q3 roadmap?", "Hi {first}, could we find 30 minutes this week to go through the Q3 roadmap? I'm free {day} afternoon or Thursday morning."),
    E("meeting_request", 0, "Following up from the conference", "Hello, following our chat at the conference, could we schedule a call with your engineering lead? Any time in the next few weeks works for us."),
    E("meeting_request", 1, "Interview invitation", "Dear {name}, thank you for applying. We would like to invite you to a 45-minute video interview. Please tell us which slot suits you: Tuesday 10:00 or Wednesday 14:00."),
    E("meeting_request", 2, "Budget meeting needed today", "Hi, the Q4 budget numbers don't add up and the board sees them tonight. Can we get the finance team together at {time} today to go through them? It's urgent."),
    E("meeting_request", 0, "Lunch?", "Hey, it's been ages! Want to grab lunch sometime next month and catch up? No rush."),
    E("meeting_request", 1, "Project kickoff", "Team, I'd like to hold the kickoff meeting for the migration project on {date} at {time}. The agenda is attached. Please accept the invite or suggest another time.", attach=True),
    E("meeting_request", 2, "Emergency call today", "All managers: we need an emergency meeting at {time} today about the data breach. Please drop everything and join the call."),
    E("complaint", 1, "Still waiting for my order", "I ordered a desk three weeks ago and it still hasn't arrived. This is the second time I've had to write. Very disappointed. Please tell me this week when it will be delivered."),
    E("complaint", 1, "Unacceptable service", "The technician who came on {date} left without fixing anything and was rude to my wife. I expect an apology and a proper repair this week."),
    E("complaint", 1, "Noise from the flat above", "For the third week running the tenants above me play loud music after midnight. I've asked them politely; as the landlord, please do something about it this week."),
    E("complaint", 1, "Wrong bill AGAIN", "You've billed me the wrong amount for the third month in a row and I'm tired of correcting your mistakes. I've attached the last three bills. Please correct it before next week's payment is taken.", attach=True),
    E("complaint", 2, "Broken on arrival", "The coffee machine I received is cracked and leaks water all over the counter. Photos are attached. I want this sorted today.", attach=True),
    E("complaint", 0, "Poor hotel stay", "Our room was dirty, the air conditioning didn't work and nobody at reception cared. We won't be staying with you again. I don't need a reply; I just wanted you to know."),
    E("complaint", 2, "Your outage is costing us money", "Your service has been down for four hours and our shop can't take any orders. Fix this now or we cancel the contract today."),
    E("question", 0, "Opening hours over the holidays", "Hello, will your store be open on {date}? I'd like to pick up an order, but there's no hurry."),
    E("question", 0, "Question about API limits", "Hi, what is the maximum number of requests per minute on the Pro plan? I couldn't find it in the docs."),
    E("question", 0, "Parking at the venue", "Is there parking at the conference venue, and does it cost extra?"),
    E("question", None, "Report format", "Could you tell me whether the quarterly report should be a PDF or an Excel file? I need to submit it by {date}."),
    E("question", 0, "Application requirements", "Dear admissions office, do international students need to send a language certificate with the application?"),
    E("question", None, "Contract clause", "Before I sign, can you explain what section 4.2 of the attached contract means by 'material breach'? I have to return it by {date}.", attach=True),
    E("question", 2, "URGENT: database credentials", "Hi, the production deploy is blocked - can someone send me the new database credentials right now? We are down until I get them."),
    E("question", 2, "Passport question before my flight", "My flight leaves in three hours and I just noticed my passport expires next month. Can I still travel to the UK? Please answer quickly!"),
    E("thanks", 0, "Thank you!", "Just wanted to say thanks for your help with the migration last week. Everything is running smoothly now."),
    E("thanks", 0, "Great workshop", "Thank you for the excellent workshop on {date}. The whole team found it really useful."),
    E("thanks", 0, "Re: recommendation letter", "Dear Professor {name}, thank you so much for writing the recommendation letter. I got the position!"),
    E("thanks", 0, "Thanks for the quick fix", "Your support team fixed our login problem within an hour. Much appreciated, please pass on my thanks."),
    E("thanks", 0, "Flowers", "Thank you all for the lovely flowers and cards while I was in hospital. It meant a lot to me."),
    E("thanks", 0, "You saved me", "I wanted to thank you for covering my shifts last month. I owe you one! The photos from the trip are attached.", attach=True),
    E("sales_pitch", 0, "Boost your sales by 40%", "Hi {first}, our AI-powered CRM helps teams like yours close more deals. Can I send you a free trial link?"),
    E("sales_pitch", None, "Exclusive offer for {company}", "We're offering 30% off our cloud backup service until {date}. Reply to this email to claim your discount."),
    E("sales_pitch", 0, "Office supplies at wholesale prices", "Dear office manager, we supply printer paper, toner and stationery at wholesale prices. Our catalogue is attached.", attach=True),
    E("sales_pitch", 0, "Your website", "Hi, I noticed your website loads slowly on mobile. Our agency can redesign it in two weeks - interested in a quote?"),
    E("sales_pitch", 0, "Sponsorship opportunity", "Hello! We run a newsletter with 200k readers in your industry. Sponsored slots start at $500. Want the media kit?"),
    E("sales_pitch", 0, "Solar panels for your roof", "Homeowners in {city} are saving up to 70% on energy bills. Get your free online savings estimate whenever it suits you."),
    E("meeting_request", 1, "Design review for the new checkout", "Hi {first}, before we hand the checkout designs to engineering I'd like a one-hour review with you and Dana. Could we do it sometime this week? The latest mockups are attached so you can look at them beforehand.", attach=True),
    E("meeting_request", 2, "Need you on a call before the client arrives", "{first}, the client lands at 5 and their lawyer has just flagged two problems in the contract. Can you jump on a quick call with me and legal this afternoon, before they get here? Ring me as soon as you see this."),
    E("meeting_request", 1, "Parent-teacher conference", "Dear {name}, as the end of term approaches I would like to meet with you to discuss your son's progress in maths. I am available after school on {date} or the following day. His latest test results are attached. Please reply by the end of the week so I can confirm a time.", attach=True),
    E("meeting_request", 2, "Server room - meet me there today", "Facilities team, water is dripping into the server room from the ceiling. I need the three of you to meet me there at {time} today so we can decide whether to shut everything down. Don't wait for a calendar invite."),
    E("meeting_request", 1, "Welcome + first 1:1", "Welcome aboard, {first}! I'd love to set up a one-to-one in the next few days so we can get to know each other. Does {day} at {time} work, or should I look for another slot?"),
    E("meeting_request", 2, "Post-mortem today", "Hi all, following last night's payment outage I'm calling a post-mortem meeting at {time} today. Attendance is mandatory for everyone who was on call. The incident timeline is attached; please read it before we meet.", attach=True),
    E("meeting_request", 1, "Thesis committee meeting", "Dear Professors, please find attached the final draft of my thesis. I would like to schedule the committee meeting to discuss it sometime next week. Could you each let me know in the next few days which afternoons you are free?", attach=True),
    E("meeting_request", 2, "Can we talk today?", "Got a minute to talk today? Something came up with the Henderson account and I'd rather not put it in writing. Just call me when you're free, ideally before 3."),
    E("complaint", 0, "Feedback on the new app layout", "Just letting you know that I find the redesigned app much harder to use. The search button is buried and the text is tiny. No need to reply, I simply wanted you to know I'm not happy with the change."),
    E("complaint", 2, "Flight cancelled and nobody will help", "Your airline cancelled my flight this morning and nobody at the desk will rebook me. I've been stuck at the airport for six hours with two small children. My booking confirmation is attached. I need a seat on a flight today.", attach=True),
    E("complaint", 1, "Damaged furniture after the move", "Your movers delivered our things on {date} and three pieces arrived damaged: a scratched dining table, a broken chair leg and a dented fridge. I've attached photos of each. I expect a response about compensation within the next few days.", attach=True),
    E("complaint", 2, "Heating broken AGAIN", "Third time this winter the heating in our building has failed. It's freezing in here and my baby is sick. Send someone today."),
    E("complaint", 1, "Your rep never showed up", "Your sales rep booked a meeting with us for {time} yesterday and never turned up - no call, no email. This is the second time it has happened. I'd like an explanation from his manager this week."),
    E("complaint", 1, "Thanks for nothing", "Thanks a lot for the 'express' shipping I paid extra for: the parcel took twelve days to arrive. I've attached the receipt showing the express fee. I want that fee refunded and I expect a reply this week.", attach=True),
    E("complaint", 2, "Payroll error - I wasn't paid", "Hi HR, my salary didn't come through this month and my rent is due tomorrow. I've attached my payslip, which shows the right amount, but no money reached my account. This is the second payroll mistake this year and I'm fed up. Please fix it today.", attach=True),
    E("complaint", 1, "Disappointing birthday dinner", "We celebrated my mother's 70th birthday at your restaurant on {date}. We waited over an hour for our mains, two dishes arrived cold and the waiter was dismissive when we mentioned it. The receipt is attached. I'd like to hear from the manager in the next couple of days.", attach=True),
    E("question", 0, "Wi-Fi password?", "Hi, is the guest Wi-Fi password still the same as last year? Whenever you get a chance."),
    E("question", 1, "Which invoice address?", "Hello, I've attached the purchase order from our new branch. Should the invoice go to the branch in {city} or to head office? Accounts need to know before they process it later this week.", attach=True),
    E("question", 2, "Dial-in for the board meeting?", "The board meeting starts in twenty minutes and the dial-in link in the invite doesn't work. Does anyone have the correct link or phone number? Please reply right away."),
    E("question", 2, "Which dose is right?", "Hi Dr. {name}, I've attached a photo of the label on the tablets you prescribed for our dog. It says one tablet twice daily, but you told us one a day. Which is correct? He is due for his next dose this evening.", attach=True),
    E("question", 1, "Visa documents for my exchange", "Hello, I start my exchange semester in {city} soon and my visa appointment is next week. Does the embassy need the original acceptance letter, or is the printed copy I've attached enough? I'd be grateful for an answer in the next few days.", attach=True),
    E("question", 1, "Re: kitchen renovation quote", "Hi, thanks for the quote (attached again for reference). Does the price include removing the old cabinets, or is that extra? We'd like to decide by the end of the week.", attach=True),
    E("question", 2, "Which brochure is final?", "Two versions of the brochure are attached and they show different prices on page 3. Which one is final? The printer collects the files at {time} today.", attach=True),
    E("thanks", 0, "Thank you for having us", "Dear {name}, on behalf of our class, thank you for the tour of your factory on {date}. The students haven't stopped talking about the robots."),
    E("thanks", 0, "The photos are beautiful", "We're finally back from our honeymoon! Thank you so much for being our photographer - the pictures are stunning. I've attached the thank-you card we made with one of them.", attach=True),
    E("thanks", 0, "Thanks for meeting with me", "Hi {first}, thank you for taking the time to meet with me yesterday. Your advice about negotiating my first salary was really helpful. No need to reply - I just wanted you to know."),
    E("thanks", 0, "Cheers!", "Got the keys, all sorted. Cheers for your help, mate!"),
    E("thanks", 0, "Problem solved - thank you", "Last month I wrote to you about a double charge on my card. I just wanted to say thank you: the refund has arrived and your colleague {first} was very kind on the phone. I've attached the bank statement showing it's all fixed.", attach=True),
    E("thanks", 0, "Thank you, volunteers!", "To everyone who helped at the charity run on {date}: thank you! Thanks to your energy we raised over $12,000 for the children's hospital."),
    E("thanks", 0, "A farewell thank-you", "Dear colleagues, thank you for the wonderful farewell party on {date} and the generous gift. After 31 years here I will miss you all. A few photos from the evening are attached.", attach=True),
    E("thanks", 0, "With sincere gratitude", "Dear {name}, I am writing to express our sincere gratitude for your generous donation to the {city} public library. Your support will fund our children's reading programme for the whole year."),
    E("sales_pitch", 0, "Ergonomic chairs for your team", "Hello, back pain costs companies thousands of lost working hours. Our ergonomic office chairs come with a 10-year warranty and free delivery on orders of ten or more. The brochure and price list are attached.", attach=True),
    E("sales_pitch", None, "LAST CHANCE: 60% off ends tonight", "Only a few hours left! Upgrade to Premium Video today and get 60% off your first year. After midnight the price goes back up. Click the link below to upgrade."),
    E("sales_pitch", 0, "A thank-you gift for you, {first}", "Thank you for being a customer for three years! To celebrate, we'd like to offer you our Platinum membership at half price. Upgrade any time from your account page."),
    E("sales_pitch", 0, "Quick question", "Hi {first}, are you still doing your company's payroll by hand? Our software runs payroll for teams of 5 to 500 in a few clicks, and the first three months are free. Worth a look?"),
    E("sales_pitch", 0, "Translation services for {company}", "Dear Sir or Madam, we are a translation agency with native speakers in 40 languages, specialising in legal and technical documents. Please find our rates attached. We would be glad to quote for your next project.", attach=True),
    E("sales_pitch", None, "Early-bird tickets now on sale", "Early-bird tickets for the Data Summit in {city} are on sale until {date}. Save $300 and hear from 60 speakers. Register now before prices go up."),
    E("sales_pitch", 0, "Page one of Google", "We get your site onto page one of Google. Guaranteed results from $99/month. Reply YES for details."),
    E("sales_pitch", 0, "Catering for your next event", "Planning a team event? We cater office lunches, parties and conferences across {city}. Our seasonal menu is attached - just reply whenever you'd like to order.", attach=True),
    E("sales_pitch", 0, "We buy any car", "Hi, we buy used cars for cash, with no haggling and free collection from your door. Get an instant online valuation in under two minutes."),
    E("meeting_request", 0, "book club??", "hey all, wanna get the book club going again sometime in the spring? no rush at all, just lmk which months r good for u and ill find an evening that works for evryone"),
    E("meeting_request", 1, "Contract renewal - call with procurement", "Dear {name}, our service agreement with {company}, signed on {date}, expires at the end of next month. Before then I would like to arrange a call between your account team and our procurement department to agree the renewal terms. The draft terms are attached. Could you propose two or three times in the coming week?", attach=True),
    E("meeting_request", 1, "Re: draft budget", "Thanks for sending over the draft budget for the grant application. Before we submit, could we set up a video call with Dr. {name} sometime next week to go through the staffing costs together? I've attached the funder's guidelines so we're all working from the same rules.", attach=True),
    E("meeting_request", 1, "move our 1:1?", "Can we move this week's 1:1 to {day}? I'm off on the usual day. Any time that afternoon is fine."),
    E("meeting_request", 1, "Audit preparation", "Hi {first}, the external auditors arrive at the start of next month. I'd like to sit down with you for an hour in the next few days to walk through the expense files and make sure nothing is missing. Their checklist is attached. Let me know what time suits you.", attach=True),
    E("meeting_request", 2, "Family meeting this afternoon", "Dear {name}, I am the consultant looking after your father on ward 6. His condition changed overnight and I would like to meet with you and any other family members this afternoon to discuss the next steps in his care. Please ask the nurses' station to page me as soon as you arrive."),
    E("meeting_request", 2, "Settlement offer - we must meet today", "{first}, the other side has made a settlement offer (attached) and it lapses at 5pm today. I need you and your business partner in my office at {time} so we can go through it and decide whether to accept. If you can't make it in person, we'll do a video call instead.", attach=True),
    E("meeting_request", 2, "Crane inspection failed - site leads meeting", "All site leads: the tower crane has failed its inspection and all work at height is suspended. Meet me in the site office at {time} today so we can rework the schedule. The inspector's report is attached. Be there.", attach=True),
    E("complaint", 0, "Changing rooms", "I've been a member of your gym for four years, and for most of this year the changing rooms have been grubby: overflowing bins, hair in the showers, broken lockers. I'm not asking for anything in particular and I don't need a response; I just think the management should know how disappointed members are."),
    E("complaint", 0, "Route 14 timekeeping", "To whom it may concern, I have taken the route 14 bus to work every day since {date} and it has been late on most mornings, sometimes by twenty minutes. I have kept a log of the times, which I attach. I realise nothing can change quickly, so please treat this as feedback rather than something that needs an answer.", attach=True),
    E("complaint", 1, "Update wiped my templates", "Since installing your latest update, every one of my saved invoice templates has vanished. I spent years building those and I'm really frustrated that nobody tested this properly. Screenshots of the empty folder are attached. I need them restored this week, please.", attach=True),
    E("complaint", 1, "Ruined suit", "I brought a wool suit to your shop for dry cleaning and got it back two sizes smaller. The assistant just shrugged and said it 'happens sometimes'. That is not good enough. The receipt is attached. I expect you to cover the cost of a replacement and would like your reply within the next few days.", attach=True),
    E("complaint", 1, "CHARGED AFTER CANCELLING", "I cancelled my membership on {date}. You charged me anyway. Bank statement attached. Refund it within the next few days or I dispute it with my bank.", attach=True),
    E("complaint", 2, "No water since your plumber left", "Your plumber replaced our kitchen tap yesterday and since he left there is no running water anywhere in the house. We can't cook, wash or flush the toilet. I've rung your office four times and nobody has got back to us. This is completely unacceptable - send someone back today."),
    E("complaint", 2, "WRONG NAMES ON THE CAKE", "The wedding cake you delivered this morning says 'Congratulations Emma & Jack'. Our names are Anna and Mark!!! The ceremony is this afternoon and the reception is straight after. Photo attached. I can't believe nobody checked the order. Fix it NOW.", attach=True),
    E("complaint", 2, "Locked out of the shared drive AGAIN", "For the third time this quarter, IT has revoked our team's access to the shared drive without any warning. We have a client deadline tonight and nobody can open the files. Frankly it's a shambles. Restore our access immediately."),
    E("question", 0, "Shipping to Iceland", "Do you ship to Iceland?"),
    E("question", 1, "Training session - room or online?", "Hi, is {day}'s first-aid training still happening in room 4, or has it moved online? I'm based in {city} and would need to book a train, so I'd appreciate an answer in the next day or two. Thanks in advance!"),
    E("question", 1, "Freelance income on my tax return", "Hello, I've attached my payslip summary for the year. I also earned a bit from freelance design work on the side. Do I have to declare that separately, or is it covered by my employer's tax? The filing deadline is the end of next week, so I'd like to know soon.", attach=True),
    E("question", 1, "Dress code?", "Hi! Quick question about your wedding: the invitation (photo attached) says the dress code is 'festive'. What does that mean exactly - suit and tie, or something more relaxed? I'm going shopping this weekend, so I'd love to know in the next few days.", attach=True),
    E("question", 1, "Carrying over holiday", "Dear HR, can unused holiday days be carried over into next year, and if so, is there a limit? I have eight days left and would like to book my leave soon, so an answer this week would help."),
    E("question", 2, "Freezer alarm in lab 3 - move samples?", "The alarm on the -80 freezer in lab 3 is going off and the display (photo attached) now reads -41. Is it safe to leave the samples in there, or should we move them into the backup freezer right now? Facilities are closed for the night.", attach=True),
    E("question", 2, "Veggie numbers for tonight", "Hi, how many vegetarian and vegan meals do you need for tonight's dinner? We start cooking in an hour, so please reply asap."),
    E("question", 2, "Is this quote accurate?", "Hi Dr. {name}, the attached draft of our article quotes you on the new vaccine trial. Could you confirm whether the wording is accurate? We go to print at {time} today, so I need to hear back from you before then.", attach=True),
    E("question", 2, "Lost laptop bag - room 212", "Hello, I checked out of room 212 this morning and I think I left a black laptop bag under the desk. Has housekeeping found it? My train leaves this afternoon, so I could come back for it now if it's there."),
    E("thanks", 0, "lifesaver", "thx for lending me ur charger yesterday, total lifesaver!! will bring it back monday"),
    E("thanks", 0, "A compliment for your engineer", "Dear Sir or Madam, I usually only write to companies to complain, so this makes a pleasant change. Your engineer {first} repaired our washing machine on {date}, explained everything clearly and even tidied up afterwards. Please pass on my thanks to {first} and their manager."),
    E("thanks", 0, "Thank you, station 4!", "To the crew of fire station 4: thank you for rescuing our cat from the roof on Sunday. She's back to her usual grumpy self and the kids think you're all superheroes. A photo of her safely asleep on the sofa is attached.", attach=True),
    E("thanks", 0, "End of the school year", "Dear Ms {name}, as the school year ends we wanted to thank you for everything you've done for Leo. He started the year hating reading and now he takes a book everywhere. He made you a card, and I've attached a scan in case it gets crumpled in his bag!", attach=True),
    E("thanks", 0, "Your plants survived!", "Hi {first}, we're back home and the tomatoes are thriving - thank you so much for watering everything while we were away. There's a bottle of wine on your doorstep as a small thank-you."),
    E("thanks", 0, "Merged - thank you!", "Hi {first}, I've just merged your pull request fixing the memory leak in the parser. Thanks so much - that bug had been bothering users for months and your patch was really clean. The release notes for the next version credit you; a draft is attached.", attach=True),
    E("thanks", 0, "You found my ring!", "I honestly thought I'd never see it again. My grandmother's ring must have slipped off while I was trying on coats in your shop, and one of your staff found it and kept it safe for me. I can't thank you enough. A photo of it back on my finger is attached.", attach=True),
    E("thanks", 0, "Thanks for the rush order", "Dear {name}, a quick note to say thank you for turning our order around so quickly on {date}. Because of your team we opened the new {city} store on time. We look forward to working with you again."),
    E("sales_pitch", 0, "Coworking desks from $199/month", "Tired of working from the kitchen table? Our coworking space in central {city} offers hot desks, private offices and unlimited coffee, with no long-term contracts. Floor plans and prices are attached. Drop in for a free day pass whenever you like.", attach=True),
    E("sales_pitch", 0, "Keep pests out of your kitchen", "Dear restaurant owner, a single sighting of a mouse can cost you your hygiene rating. We offer discreet monthly pest control for restaurants, with no visible traps in dining areas. Our free hygiene checklist is attached.", attach=True),
    E("sales_pitch", 0, "Re: your team's security", "Hi {first}, 9 out of 10 breaches start with a single phishing email. Our 20-minute online courses teach your staff to spot them, and we send realistic fake phishing tests every month. I've attached a short case study from a firm your size. Just reply 'pricing' and I'll send our rates.", attach=True),
    E("sales_pitch", 0, "Your meetings, summarised", "Did you know the average manager spends 12 hours a week in meetings? Our AI note-taker joins your calls, writes the minutes and emails everyone the action points. Try it free for 30 days - no card required."),
    E("sales_pitch", 0, "Your logo on everything", "Hello! Hoodies, mugs, tote bags and water bottles printed with your logo - great for onboarding packs and trade shows. Orders start at just 25 units, printed and shipped in ten working days. Our full catalogue is attached.", attach=True),
    E("sales_pitch", 0, "A premium domain for your brand", "Hi, a short, memorable .io domain matching your company name has just come onto the market, and we think it would be a perfect fit for your brand. We can transfer it to you for $2,400. Let me know if you're interested."),
    E("sales_pitch", None, "Your free trial ends tomorrow", "Your 14-day free trial of CloudDraw Pro ends tomorrow. Upgrade now for $12/month to keep your designs, templates and unlimited exports, or they'll be locked."),
    E("meeting_request", 1, "Re: your invoice", "Hi {first}, rather than keep emailing back and forth about {invoice}, could we get on a 20-minute call with your accounts team on {day}? I'd like to agree a payment plan for the outstanding balance."),
    E("meeting_request", 0, "Spring seed swap", "Hello fellow gardeners, the allotment committee needs to start planning the spring seed swap. Could we all meet at the community hall one evening in the next month or so? Just reply with the evenings that suit you."),
    E("meeting_request", 2, "Container held in Rotterdam - call today?", "Hi {first}, the customs broker says our container in Rotterdam will be held unless we send revised paperwork tonight. Can you, Jordan and I get on a video call at {time} today to sort out the declarations? The broker's notice is attached.", attach=True),
    E("meeting_request", 1, "Courtyard plans", "Dear {name}, I'm the new chair of the residents' association and I'd like to meet you in person to talk about the plans for the courtyard. Would {date} at {time} at the community centre suit you? Please let me know in the next few days."),
    E("meeting_request", 0, "Possible collaboration", "Dear Dr {name}, I read your paper on soil microbiomes with great interest. Would you be open to a video call in the coming months to discuss a possible collaboration between our labs? My recent preprint is attached in case it's useful.", attach=True),
    E("meeting_request", 2, "Customer escalation - warehouse delays", "Hi {first}, a key customer has escalated a complaint about late deliveries from the {city} warehouse and I want to get ahead of it. Can you and the warehouse lead meet me at {time} today to go through the delivery logs together? Their email is attached.", attach=True),
    E("complaint", 1, "Drilling before 8am", "Dear site manager, for two weeks your crews have been drilling from 6:30 in the morning, well before the permitted start time, and the dust coats our cars every day. A video from this morning is attached. I expect the early starts to stop from next week.", attach=True),
    E("complaint", 2, "Still locked out - no callback", "I was promised that a person would call me back within 24 hours about my locked account. That was four days ago, and your chatbot just keeps sending me in circles. My payroll runs tonight, so I need access to the account today."),
    E("complaint", 0, "New oat milk recipe", "The new recipe of your oat milk tastes watery and chalky compared to the old one. I've bought it for years, but I'll be switching brands. No reply needed; please just pass this on to whoever decided on the change."),
    E("complaint", 1, "Delay with claim", "Dear Sir or Madam, I write to express my dissatisfaction with the handling of my insurance claim, submitted on {date}. Despite three follow-up calls, I have received neither a decision nor any explanation for the delay. I would appreciate a written update within the next week."),
    E("complaint", 1, "Vaccination appointment cancelled", "Your receptionists are always friendly, so I'm sorry to have to write this, but your online booking system cancelled my daughter's vaccination appointment on {date} without telling us. We drove two hours only to be sent home. Please rebook her within the next few days and make sure this doesn't happen to other families."),
    E("complaint", 2, "Wrong prescription delivered", "The pharmacy delivery that arrived an hour ago contains someone else's prescription, with a different name and a different drug. My mother's heart tablets are not in the bag and her next dose is due tonight. A photo of the label is attached. This is a serious mistake and I need the right medication delivered today.", attach=True),
    E("question", 1, "PO number for our invoice", "Hi, I've attached {invoice} for the workshop we ran for your team. Your finance portal asks for a PO number, but we were never given one: which number should I use, or can the invoice be submitted without it? Our accounts close the month on Friday, so an answer this week would help.", attach=True),
    E("question", 1, "Room for the quarterly review?", "Is {day}'s quarterly review still in the big conference room, or has it moved to the fourth floor? I need to book the AV technician, so an answer by the end of the week would be great."),
    E("question", 0, "Nut-free cakes?", "Hi, do you make birthday cakes without nuts? My son has an allergy and his birthday isn't until the autumn, so I'm just planning ahead."),
    E("question", 2, "Signed delivery notes - auditors on site", "Hi {first}, the auditors are on site right now and asking whether we kept the signed delivery notes for the {company} shipment. Do you know where the originals are filed? They need them before they leave at {time} today."),
    E("question", 2, "Booking reference needed now", "Hi, I'm at the car rental desk at the airport and they won't release the car without the booking reference. Could you send me the reference number right away? The queue behind me keeps growing."),
    E("question", None, "Name on my degree certificate", "Dear Registrar, my degree certificate gives my first name as 'Jon' instead of 'John'. Can a corrected certificate be issued before the graduation ceremony on {date}, and is there a fee for it? A scan of the certificate is attached.", attach=True),
    E("thanks", 0, "Payment received", "Hi {first}, just confirming that your payment for {invoice} arrived this morning. Thank you for settling it so promptly - it really helps a small business like ours."),
    E("thanks", 0, "Thanks for chairing the call", "Thank you for chairing the planning call on {date} at such short notice. Thanks to you we came away with a clear plan and nobody had to stay late. The minutes you asked for are attached.", attach=True),
    E("thanks", 0, "From the whole team", "Coach {first}, the girls asked me to pass this on: thank you for giving up every Saturday morning this season. Whatever happens in the final, you've made them believe in themselves."),
    E("thanks", 0, "My grandfather's letters", "Dear {name}, thank you for translating my grandfather's letters from Polish. Reading his words for the first time made my mother cry. I've attached a photo of the two of them as young newlyweds.", attach=True),
    E("thanks", 0, "You saved my race", "To the team at the bike shop: thank you for fixing my buckled wheel in ten minutes before the race on {date}. I finished, and I'm telling every cyclist I know about you."),
    E("thanks", 0, "standup", "ty for running standup while i was at the dentist, owe u a coffee"),
    E("sales_pitch", 0, "Still chasing unpaid invoices?", "Hi {first}, small businesses wait 47 days on average to get paid. Our invoicing tool sends automatic reminders and lets your clients pay by card in one click. Start a free 14-day trial, with no setup fees."),
    E("sales_pitch", 0, "Meeting rooms by the hour", "Need somewhere professional to meet clients? Our meeting rooms in central {city} can be booked by the hour, with a big screen, fast Wi-Fi and coffee included. Our room guide is attached; book online whenever you need one.", attach=True),
    E("sales_pitch", 0, "Lab consumables, made in the EU", "Dear lab manager, we manufacture nitrile gloves, pipette tips and sample tubes in the EU, at prices up to 25% below the big distributors. Samples are free for new customers. Our price list is attached.", attach=True),
    E("sales_pitch", None, "Winter tyres: free wiper blades", "Winter is on its way! Book a winter tyre change at any of our {city} garages before {date} and we'll fit new wiper blades for free. Book online in under a minute."),
    E("sales_pitch", 0, "Loose tiles on your roof", "Hi, we're working on a roof on your street and noticed a few loose tiles on yours. We could fix them while our scaffolding is up, with a neighbour discount. Reply for a free quote."),
    E("sales_pitch", 0, "Great to meet you at the fair!", "Thanks for stopping by our stand at the packaging fair in {city}! Our compostable mailer bags cut plastic without raising your shipping costs, and new customers get 15% off their first order with the code FAIR15. The full product sheet is attached.", attach=True),
]  # fmt: skip


def make(rng, core):
    """An email state: JSON email, text with a subject line, a bare body, or a header list."""
    subject, body = fill(rng, core["subject"]), fill(rng, core["text"])
    sender = name(rng)
    address = f"{sender.split()[0].lower()}.{sender.split()[1].lower()}@example.com"
    form = rng.random()
    if form < 0.45:
        state = {
            "from": rng.choice([address, f"{sender} <{address}>"]),
            "subject": subject,
            "body": body,
        }
        if rng.random() < 0.3:
            state["to"] = fill(rng, "{email}")
    elif form < 0.7:
        state = f"Subject: {subject}\n\n{body}" + rng.choice(
            ["", f"\n\n{sender}", f"\n\n-- \n{sender}"]
        )
    elif form < 0.85:
        state = body
    else:
        state = [f"From: {sender}", f"Subject: {subject}", body]
    return state, dict(core)


FAMILIES = [
    {
        "type": "choice",
        "key": "intent",
        "qids": ["intent", "email_type", "purpose", "category", "label"],
        "instructions": [
            "What is the intent of this email?",
            "Classify the email.",
            "Why did the sender write this email?",
            "Which inbox label fits this message?",
            "What does the sender mainly want?",
            "Sort the email into a category.",
        ],
        "options": {
            "meeting_request": ["wants to set up a meeting or call", "asks to schedule time together"],
            "complaint": ["unhappy about a product, service or situation", "expresses dissatisfaction"],
            "question": ["asks for information", "an enquiry that needs an answer"],
            "thanks": ["expresses gratitude", "a thank-you note"],
            "sales_pitch": ["tries to sell a product or service", "unsolicited marketing or offer"],
        },
    },
    {
        "type": "score",
        "key": "urg",
        "qids": ["urgency", "priority", "how_urgent"],
        "instructions": [
            "How urgent is this email?",
            "How quickly should the recipient act on this email?",
            "Rate the email's priority.",
        ],
        "styles": [
            ("low: can wait, no time pressure", "medium: deal with it in the next days", "high: needs action today"),
            ("not urgent", "moderately urgent", "very urgent"),
            ("low", "normal", "high"),
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["attach"],
        "qids": ["attachment", "has_attachment", "mentions_attachment"],
        "instructions": [
            "The email mentions an attachment.",
            "Does the sender refer to an attached file?",
            "Something is attached to this email, according to its text.",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["has_date"],
        "qids": ["has_date", "date", "mentions_date"],
        "instructions": [
            "The email mentions a calendar date (such as a month and day).",
            "Does the text contain a specific calendar date?",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["intent"] == "meeting_request",
        "qids": ["meeting", "wants_meeting", "schedule"],
        "instructions": [
            "The sender wants to schedule a meeting or a call.",
            "Is this email asking to set up a meeting?",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["intent"] == "sales_pitch",
        "qids": ["marketing", "is_pitch", "promo"],
        "instructions": ["This is a sales or marketing email.", "Is the sender trying to sell something?"],
    },
    {
        "type": "noul",
        "test": lambda x: x["intent"] == "complaint",
        "qids": ["complaint", "unhappy", "dissatisfied"],
        "instructions": ["The sender is complaining.", "Is the writer unhappy with something?"],
    },
]  # fmt: skip

DOMAIN = {
    "name": "email_intent",
    "prefix": "email",
    "cores": CORES,
    "families": FAMILIES,
    "make": make,
}
