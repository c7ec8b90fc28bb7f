"""Common English words (whitespace-separated): the whole-word vocabulary of ``laya.testing``."""

TEXT = """
a able about above abroad absence absolute absolutely abuse academic accept acceptable access
accident accompany according account accounts accurate accuse achieve achievement acid acknowledge
acquire across act action active activity actor actual actually ad adapt add added addition
additional address adequate adjust administration admit adopt adult advance advanced advantage
adventure advertise advertising advice advise adviser affair affairs affect afford afraid after
afternoon afterwards again against age agency agenda agent ago agree agreement ahead aid aim air
aircraft airline airport alarm album alcohol alert alive all allow allowed almost alone along
already also alter alternative although always amazing among amount analyse analysis analyst
ancient and anger angle angry animal announce announcement annual another answer answered answers
anxiety anxious any anybody anymore anyone anything anyway anywhere apart apartment apologise
apology app apparent apparently appeal appear appearance apple application apply appoint
appointment appreciate approach appropriate approval approve april architect architecture area
argue argument arise arm armed army around arrange arrangement arrest arrival arrive arrived art
article artist as aside ask asked asking aspect assess assessment asset assets assign assist
assistance assistant associate association assume assumption at atmosphere attach attached
attachment attack attempt attend attention attitude attorney attract attractive audience august
author authority auto automatic automatically autumn available average avoid await award aware
awareness away awful baby back background backup bad badly bag balance ball ban band bank banking
bar base based basic basically basis basket bath battery battle be beach bear beat beautiful beauty
became because become bed bedroom beer before began begin beginning behalf behave behavior
behaviour behind being belief believe bell belong below belt bench benefit benefits best bet better
between beyond bicycle big bill billing billion bills bird birth birthday bit bite black blame
blank block blocked blocking blog blood blow blue board boat body bold bone bonus book booked
booking books boost boot border bored boring born borrow boss both bother bottle bottom bought
bound box boy brain branch brand brave bread break breakfast breath breathe brick bridge brief
briefly bright brilliant bring broad broadband broke broken brother brought brown browser budget
bug build building built bunch burden burn bus business busy but button buy buyer by cabinet cable
cake calculate calendar call called caller calls calm came camera camp campaign can cancel
cancellation cancelled cancer candidate cannot capable capacity capital captain capture car card
cards care career careful carefully carry case cases cash cast casual cat catch category cause
caused caution cell center central centre century certain certainly chain chair chairman challenge
chamber champion chance change changed changes channel chapter character charge charged charges
charity chart chat cheap check checked checking checkout cheese chemical chest chicken chief child
childhood children chip choice choose chose chosen church circle circumstance citizen city civil
claim claims class classic clean clear clearly clerk click client clients climate climb clinic
clock close closed closely clothes cloud club clue coach coast coat code coffee cold collapse
colleague collect collection college color colour column combination combine come comes comfort
comfortable coming command comment comments commercial commission commit commitment committee
common communicate communication community company compare comparison compete competition
competitive complain complaint complaints complete completed completely complex complicated
component computer concentrate concept concern concerned concerns concert conclude conclusion
condition conditions conduct conference confidence confident confidential confirm confirmation
confirmed conflict confused confusing confusion congratulations connect connected connection
consequence consider considerable consideration consist constant constantly construction consult
consumer contact contain content contents contest context continue continued contract contrast
contribute contribution control convenient conversation convert convince cook cookie cool cope copy
core corner corporate correct correctly cost costs could council count counter country county
couple courage course court cover coverage covered crash crazy cream create created creative credit
crew crime criminal crisis criteria critical criticism crop cross crowd crucial cry cultural
culture cup current currently curtain custom customer customers cut cycle dad daily damage damaged
dance danger dangerous dark data database date daughter day days dead deadline deal dealer dear
death debate debt decade december decent decide decided decision deck declare decline deep deeply
default defeat defence defense define definitely definition degree delay delayed delete deliver
delivered delivery demand demo democracy demonstrate deny department depend deposit depression
depth describe description desert deserve design designer desire desk despite destroy detail
detailed details detect determine develop developer development device diet differ difference
different difficult difficulty digital dinner direct direction directly director dirty disable
disagree disappear disappointed disaster discount discover discuss discussion disease dish dismiss
display dispute distance distinct distribute district disturb divide division do doctor document
documents does dog doing dollar dollars domain domestic dominate done door double doubt down
download downtown dozen draft drag drama dramatic draw drawing dream dress drink drive driver drop
dropped drug dry due duplicate during dust duty each eager ear early earn earth ease easily east
eastern easy eat economic economy edge edit edition editor educate education effect effective
effectively efficient effort egg eight either elderly elect election electric electricity
electronic element else elsewhere email emails embarrassed emergency emotion emotional emphasis
employ employee employer employment empty enable encounter encourage end ended ending enemy energy
engage engine engineer engineering enjoy enormous enough ensure enter enterprise entertainment
entire entirely entitled entrance entry environment equal equally equipment equivalent error errors
escalate escalation escape especially essay essential establish estate estimate evaluate even
evening event events eventually ever every everybody everyone everything everywhere evidence evil
exact exactly exam examine example excellent except exception exchange excited exciting exclude
excuse executive exercise exist existence existing exit expand expect expectation expected expense
expenses expensive experience experienced experiment expert explain explanation explore export
expose express expression extend extension extent external extra extreme extremely eye eyes face
facility fact factor factory fail failed failure fair fairly faith fall false familiar family
famous fan fantastic far farm farmer fashion fast fat father fault favor favorite favour favourite
fear feature february fee feed feedback feel feeling fees felt female few field fight figure file
files fill film final finally finance financial find finding fine finger finish finished fire firm
first fish fit five fix fixed flag flat flight floor flow flower fly focus fold folder follow
following food foot football for force foreign forest forever forget forgot forgotten fork form
formal format former forward found foundation four frame frankly fraud free freedom freeze frequent
frequently fresh friday friend friendly friends from front fruit frustrated frustrating fuel full
fully fun function fund funding funds funny furniture further future gain game gap garage garden
gas gate gather gave general generally generate generation generous gentle genuine get gets getting
gift girl give given glad glass global go goal god goes going gold golf gone good goods got govern
government grab grade gradually graduate grand grant graph grateful great green greet greeting grew
grey ground group grow growing growth guarantee guard guess guest guidance guide guilty guy habit
hair half hall hand handle handling hang happen happened happening happily happy hard hardly
hardware harm hat hate have having he head headline health healthy hear heard heart heat heavy held
hell hello help helpful hence her here hero herself hesitate hey hi hidden hide high highlight
highly hill him himself hire his historical history hit hold holds holiday home honest honestly
hope hopefully horrible horse hospital host hot hotel hour hours house household housing how
however huge human humour hundred hungry hurry hurt husband i ice idea ideal identify identity if
ignore ill illegal image imagine immediate immediately impact implement implication importance
important impose impossible impress impression impressive improve improvement in inbox incident
include included including income incorrect increase increasingly incredible indeed independent
index indicate individual industry inform information initial initially initiative injury inner
innocent input inquiry inside insist install instance instead institute institution instruction
instructions instrument insurance intend intended intention interest interested interesting
internal international internet interpret interview into introduce introduction invest investigate
investigation investment investor invite invoice invoices involve involved iron island issue issued
issues it item items its itself jacket january job jobs join joint joke journal journey judge
judgment july jump june junior jury just justice justify keen keep key keyboard kick kid kill kind
kindly king kitchen knee knew knife know knowledge known label lack lady laid lake land landscape
language laptop large largely last late lately later latest laugh launch law lawyer lay layer lead
leader leadership leading leaf league lean learn learning least leave led left leg legal length
less lesson let letter level levels library licence license lie life lift light like likely limit
limited line link list listen literally literature little live living load loan local locate
location lock log login logo long look looking loose lose loss lost lot loud love lovely low lower
loyal luck lucky lunch machine mad made magazine mail main mainly maintain maintenance major
majority make maker making male man manage management manager manner manual many map march margin
mark market marketing marriage married mass master match material matter maximum may maybe me meal
mean meaning means meanwhile measure meat media medical medicine medium meet meeting member members
membership memory mental mention menu mess message messages metal method middle midnight might mile
military milk million mind mine minimum minister minor minute minutes mirror miss missed missing
mission mistake mix mixed mobile mode model modern moment monday money monitor month monthly months
mood moon moral more moreover morning mortgage most mostly mother motion motor mountain mouse mouth
move movement movie moving much mum murder muscle museum music must my myself mystery name narrow
nation national native natural naturally nature near nearby nearly neat necessary neck need needed
needs negative negotiate neighbor neighbour neither nervous net network never nevertheless new news
newspaper next nice night nine no nobody noise none noon nor normal normally north northern nose
not note notes nothing notice notification novel november now nowhere number numbers nurse object
objective obligation observe obtain obvious obviously occasion occur october odd of off offer
offered office officer official often oh oil ok okay old on once one ones online only onto open
opened opening operate operation opinion opportunity oppose opposite option options or orange order
ordered orders ordinary organisation organise organization organize origin original other others
otherwise ought our ours ourselves out outcome outside outstanding over overall overcome overdue
owe own owner pace pack package page paid pain paint pair panel panic paper parent park part
particular particularly partner party pass passenger passion password past patch path patient
pattern pause pay paying payment payments peace peak pen penalty pending people per percent perfect
perform performance perhaps period permanent permission permit person personal personally
perspective persuade phase phone photo phrase physical pick picture piece pilot pink place plan
plane planet planned planning plant plastic plate platform play player please pleased pleasure
plenty plus pocket poem point police policy polite political politics poll pool poor pop popular
population port position positive possibility possible possibly post potential pound power powerful
practical practice praise pray precisely predict prefer preference pregnant premium prepare present
presentation preserve president press pressure pretty prevent previous previously price prices
pride primary prime principle print prior priority prison privacy private prize probably problem
problems procedure proceed process produce product production products profession professional
professor profile profit program programme progress project projects promise promote prompt
promptly proof proper properly property proposal propose protect protection protest proud prove
provide provided provider public publish pull punishment purchase purchased pure purple purpose
pursue push put quality quantity quarter queen query question questions quick quickly quiet quit
quite quote race radio rain raise ran random range rank rapid rapidly rare rarely rate rather
rating raw reach react reaction read reader reading ready real realise reality realize really
reason reasonable recall receipt receive received recent recently recipe recognise recognize
recommend record recover recovery red reduce refer reference reflect reform refund refunds refuse
regard regarding region register regret regular regularly reject relate related relation
relationship relative relatively relax release relevant reliable relief religion religious rely
remain remaining remark remember remind reminder remote remove renew rent repair repeat replace
reply report reported reports represent request requested requests require required requirement
rescue research reserve reset resident resolve resolved resource resources respect respond response
responsibility responsible rest restaurant restore result results retail retain retire retirement
return returned reveal revenue review reward rich rid ride right ring rise risk river road rock
role roll room root rough round route routine row royal rude rule rules run running rural rush sad
safe safety said salary sale sales salt same sample sand satisfied saturday save saved saving say
saying scale scare scene schedule scheme school science score scores screen script sea search
season seat second secret secretary section sector secure security see seek seem seen select
selection self sell send sender sending senior sense sensitive sent sentence separate september
sequence series serious seriously serve server service services session set setting settings settle
seven several severe sex shake shall shape share shared sharp she sheet shift shine ship shipped
shipping shirt shock shoe shoot shop shopping short shortly shot should shoulder shout show shower
shut sick side sight sign signal signature significant silent silly silver similar simple simply
since sing single sir sister sit site situation six size skill skills skin sky sleep slide slight
slightly slip slow slowly small smart smile smoke smooth snow so social society soft software soil
sold soldier solid solution solve some somebody somehow someone something sometimes somewhat
somewhere son song soon sorry sort sound source south southern space spam speak speaker special
specific specifically speech speed spend spent spirit split spoke sport spot spread spring square
staff stage stand standard star start started state statement states station status stay steady
steal step stick still stock stolen stomach stone stop stopped store storm story straight strange
stranger strategy street strength stress stretch strict strike string strong strongly structure
struggle student students study stuff stupid style subject submit subscription succeed success
successful such sudden suddenly suffer sufficient sugar suggest suggestion suit suitable summary
summer sun sunday super supply support supposed sure surely surface surgery surprise surprised
survey survive suspect suspend suspicious sweet swim switch symbol sympathy system systems table
take taken taking talk tall target task tax taxi tea teach teacher team tear technical technique
technology teenager telephone television tell temperature template temporary ten tend term terms
terrible test testing text than thank thanks that the theatre their them theme themselves then
theory there therefore these they thick thin thing things think thinking third this those though
thought thousand threat threaten three through throughout throw thursday thus ticket tickets tie
tight till time times tiny tip tired title to today together toilet told tomorrow tone tonight too
took tool tools top topic total totally touch tough tour toward towards town track trade traffic
train training transaction transfer transport travel treat treatment tree trend trial trip trouble
truck true truly trust truth try trying tuesday turn tv twelve twenty twice two type typical
typically ugly ultimately unable uncle under understand understanding unemployment unfortunately
union unique unit united universe university unknown unless unlike unlikely until unusual up update
updated upgrade upon upper upset urgent urgently us usage use used useful user username users using
usual usually valid valuable value van variety various vary vehicle version very via victim video
view village violence virus visible vision visit visitor voice volume vote wage wait waiting wake
walk wall wallet want wanted war warm warn warning was wash waste watch water wave way we weak
wealth weapon wear weather web website wedding wednesday week weekend weekly weeks weight weird
welcome well went were west western what whatever wheel when whenever where whereas whether which
while white who whole whom whose why wide widely wife wild will willing win wind window windows
wine winner winter wire wise wish with withdraw within without witness woman women won wonder
wonderful wood word words work worked worker working works world worried worry worse worst worth
would wrap write writer writing written wrong wrote yard yeah year years yellow yes yesterday yet
you young your yours yourself youth zero zone
"""
