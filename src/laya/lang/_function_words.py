"""Function words and greetings per language: the evidence a two-to-eight-word text does carry.

One entry per language (ISO 639-1 code, as py3langid names it): its articles, pronouns,
prepositions, conjunctions, negation, common auxiliaries, question words, greetings, thanks and
"please"/"help", written as people type them without diacritics (``laya.lang`` folds é, ß, ł,
ø, ... the same way before looking a word up). The lists are compact on purpose (a few dozen words
each): a word counts as evidence for every language that lists it, and English has the package's
common-word vocabulary (``laya.router._words``) besides ``ENGLISH_EXTRA`` (inflections, contractions typed
without the apostrophe, chat abbreviations, greetings). They were written from general knowledge
of each language, not from the labelled test set (``tests/data/lang_labelled.jsonl``).
"""

ENGLISH_EXTRA = """
is are am was were been being be an the a of and or but if then than that this these those
he she it we they them him her his hers its our ours their theirs my mine your yours us i me you
im ive id ill youre youve youll hes shes its were theyre weve wed dont doesnt didnt cant couldnt
wont wouldnt shouldnt isnt arent wasnt werent havent hasnt hadnt aint thats whats wheres whos hows
theres heres lets yall u ur t s d m ll ve re r ya yeah yep yup nope nah yes ok okay k kk pls plz thx thanx
thnx ty tysm np lol lmao rofl omg wtf idk imo imho tbh ngl btw fyi asap lmk brb afk ttyl eta eod
gonna wanna gotta kinda sorta dunno lemme gimme hey hi hiya howdy hello yo sup bye goodbye cheers
thanks thank welcome sorry please mate dude bro bruh guys folks hmm meh oops ugh wow yay aww oof
login logout signup signin wifi vpn api url pr repo bug bugs app apps update updates anyone
someone something anything nothing everything does did has had having got gets getting goes went
doing done made makes says said tells told thinks thought wants wanted needs needed works worked
tried tries tried trying sent sending received receiving charged arrived cancelled canceled
shipped shipping delivered delivery refunds invoices orders emails accounts passwords issues
errors crashed crashes crashing failed fails failing broken loads loading keeps stuck frozen
what when where who why how which whose whom there here very really just also too not no
"""

FUNCTION_WORDS: dict[str, str] = {
    "es": """
        el la los las un una unos unas de del al y o pero que en con por para sin sobre entre
        yo tu usted ustedes nosotros ellos ella el mi mis su sus nuestro me te se le les lo nos
        es son esta estan estoy soy eres hay fue ser estar tengo tiene tienen puedo puede quiero
        quiere necesito hace hacer no si ya muy mas tambien como cuando donde porque cual quien
        que cuanto cuanta hola buenos buenas dias tardes noches gracias muchas muchos favor
        porfa adios luego hasta pronto vale bueno claro ayuda ayudar pedido cuenta pago
        """,
    "pt": """
        o a os as um uma uns umas de do da dos das em no na nos nas ao e ou mas que com por
        para pelo pela sem sobre eu tu voce voces ele ela eles elas nos meu minha meus minhas
        seu sua seus suas me te se lhe nao sim ja muito mais tambem como quando onde porque
        qual quem cade e sou esta estou estao tem tenho pode posso quero preciso foi ser ter
        fazer ola oi obrigado obrigada bom boa dia tarde noite tchau ate logo favor ajuda
        pedido conta tudo bem beleza valeu
        """,
    "fr": """
        le la les un une des de du au aux et ou mais que qui quoi dans en sur sous avec pour
        par sans chez je tu il elle nous vous ils elles on me te se moi toi lui leur mon ma mes
        ton ta tes son sa ses notre votre nos vos ne pas plus rien jamais oui non si tres aussi
        comme quand ou pourquoi comment combien est sont suis es sommes etes ai as avons avez
        ont fait peux peut veux veut voudrais dois ca ce cette ces c j l d qu n s m t bonjour bonsoir salut
        merci beaucoup bcp svp stp plait revoir bonne journee soiree aide aidez commande colis
        """,
    "de": """
        der die das den dem des ein eine einen einem einer und oder aber dass wenn weil mit
        von zu bei nach aus fur uber unter ohne gegen ich du er sie es wir ihr mich mir dich
        dir sich uns euch mein meine meinen meinem dein deine sein seine ihre unser nicht kein
        keine ja nein doch auch noch schon sehr mehr nur wie wo was wer warum wann welche ist
        sind bin bist war hat habe haben hast kann kannst konnen will mochte muss soll wird
        werden geht gibt hallo guten tag morgen abend gute nacht danke dank vielen bitte
        tschuss servus moin hilfe bestellung konto leider gerne
        """,
    "it": """
        il lo la i gli le un uno una di del della dei degli delle da dal dalla in nel nella
        con su per tra fra e o ma che chi cosa io tu lui lei noi voi loro mi ti si ci vi mio
        mia miei mie tuo tua suo sua nostro non si gia molto piu anche come quando dove perche
        quale quanto e sono sei siamo siete ho hai ha abbiamo hanno posso puo voglio vorrei
        devo ciao buongiorno buonasera buonanotte salve grazie mille prego per favore aiuto
        ordine pacco arrivederci
        """,
    "nl": """
        de het een en of maar dat die dit deze van in op aan met voor naar bij uit over door
        om tot ik jij je u hij zij ze wij we jullie mij me mijn jouw zijn haar ons onze hun
        niet geen wel ja nee ook nog al heel meer hoe waar wat wie waarom wanneer welke is
        ben bent zijn was heb hebt heeft hebben kan kun kunt wil wilt moet zal wordt hallo
        hoi goedemorgen goedemiddag goedenavond dag dank bedankt alsjeblieft alstublieft
        graag doei tot ziens hulp bestelling werkt
        """,
    "sv": """
        en ett den det de och eller men att som om i pa av med for till fran hos under over
        jag du han hon vi ni dem mig dig sig oss er min mitt mina din ditt dina sin hans hennes
        var vara inte ingen nej ja ocksa bara mycket mer hur var vad vem varfor nar vilken ar
        har hade kan vill ska maste blir hej hallo tack sa god morgon kvall dag natt hejda
        vanligen snalla hjalp bestallning funkar fungerar paket
        """,
    "da": """
        en et den det de og eller men at som om i pa af med for til fra hos under over jeg du
        han hun vi i dem mig dig sig os jer min mit mine din dit dine sin hans hendes vores
        ikke ingen nej ja ogsa kun meget mere hvordan hvor hvad hvem hvorfor hvornar hvilken er
        var har havde kan vil skal ma bliver hej hallo tak mange god morgen dag aften nat
        farvel venlig hilsen hjaelp bestilling virker pakke
        """,
    "no": """
        en et ei den det de og eller men at som om i pa av med for til fra hos under over jeg
        du han hun vi dere dem meg deg seg oss min mitt mine din ditt dine sin hans hennes
        var ikke ingen nei ja ogsa bare veldig mer hvordan hvor hva hvem hvorfor nar hvilken
        er var har hadde kan vil skal ma blir hei hallo takk tusen god morgen dag kveld natt
        ha det bra vennlig hilsen hjelp bestilling fungerer pakken
        """,
    "fi": """
        ja tai mutta etta kun jos niin kuin on ovat oli olen olet olemme ei en et emme eivat
        mina sina han me te he minun sinun hanen meidan teidan heidan minulla minulle se ne
        tama tuo mika mita missa miksi milloin kuka miten kiitos paljon hei moi terve huomenta
        paivaa iltaa hyvaa hyvaa anteeksi ole hyva kylla apua tilaus tilaukseni
        """,
    "pl": """
        i a w we z ze na do od po za przez przy dla o u bez nad pod ja ty on ona ono my wy
        oni one mnie mi cie ci go jej nam wam ich sie moj moja moje twoj twoja nasz wasz nie
        tak juz bardzo tez jak kiedy gdzie dlaczego co kto ktory jest sa byl byla jestem
        mam ma maja moge moze chce musze prosze dziekuje dzieki czesc dzien dobry wieczor
        dobranoc pomocy pomoc zamowienie
        """,
    "cs": """
        a i v ve z ze na do od po za pro pres pri o u bez nad pod ja ty on ona ono my vy oni
        me mi te ti ho ji nam vam jim se si muj moje moji tvuj nas vas ne ano uz velmi take
        jak kdy kde proc co kdo ktery je jsou byl byla jsem jsi mam ma muzu muze chci musim
        prosim dekuji dekuju diky ahoj dobry den vecer nashledanou pomoc objednavka nejde
        """,
    "sk": """
        a i v vo z zo na do od po za pre cez pri o u bez nad pod ja ty on ona ono my vy oni
        ma mi ta ti ho jej nam vam im sa si moj moja moje tvoj nas vas nie ano uz velmi tiez
        ako kedy kde preco co kto ktory je su bol bola som si mam moze mozem chcem musim
        prosim dakujem vdaka ahoj dobry den vecer dovidenia pomoc objednavka nefunguje
        """,
    "hu": """
        a az egy es vagy de hogy ha mert is meg mar nem igen nincs van vannak volt vagyok
        vagy en te o mi ti ok engem teged nekem neked nekunk az ez ezt azt mi mit ki hol
        mikor miert hogyan melyik milyen kerem koszonom koszi koszonjuk szepen szia sziasztok
        hello jo napot reggelt estet viszontlatasra segitseg rendeles szeretnem tudok
        """,
    "ro": """
        si sau dar ca daca cand unde de la in pe cu din pentru fara prin spre un o niste
        eu tu el ea noi voi ei ele ma te se ne va il o mi ti ii meu mea mei mele tau ta sau
        nostru vostru nu da deja foarte mai si cum ce cine care cat de ce este sunt esti
        suntem am ai are au pot poate vreau trebuie multumesc mersi buna ziua seara dimineata
        salut noapte buna va rog ajutor comanda
        """,
    "hr": """
        i a ali ili da je su sam si smo ste nije nisu biti bio bila u na za od do s sa iz
        po pri bez o kod ja ti on ona ono mi vi oni me te se mu joj nam vam im moj moja moje
        tvoj tvoja nas vas ne da vec vrlo jako takoder kako kada gdje zasto sto tko koji
        mogu moze zelim trebam hvala lijepa molim bok pozdrav dobro jutro dobar dan vecer
        laku noc dovidenja pomoc narudzba
        """,
    "sr": """
        i a ali ili da je su sam si smo ste nije nisu biti bio bila u na za od do s sa iz
        po pri bez o kod ja ti on ona ono mi vi oni me te se mu joj nam vam im moj moja moje
        tvoj tvoja nas vas ne vec vrlo jako kako kada gde zasto sta ko koji mogu moze zelim
        treba hvala puno molim cao zdravo pozdrav dobro jutro dobar dan vece laku noc
        dovidjenja pomoc porudzbina brate
        """,
    "sl": """
        in ali pa da je so sem si smo ste ni niso biti bil bila v na za od do s z iz po pri
        brez o pri jaz ti on ona ono mi vi oni me te se mu ji nam vam jim moj moja moje tvoj
        nas vas ne ja ze zelo tudi kako kdaj kje zakaj kaj kdo kateri lahko morem hocem
        rabim hvala najlepsa prosim zivjo zdravo pozdravljeni dober dan jutro vecer lahko noc
        nasvidenje pomoc narocilo
        """,
    "tr": """
        ve veya ama fakat ile icin gibi kadar de da ki bu su o bir ben sen biz siz onlar beni
        bana seni sana onu ona bizi bize benim senin onun bizim sizin degil yok var evet hayir
        cok daha cok en ne neden nasil nerede nereye kim hangi zaman mi mu misin miyim merhaba
        selam gunaydin iyi gunler aksamlar geceler tesekkurler tesekkur ederim sagol lutfen
        yardim siparis hesap istiyorum
        """,
    "id": """
        dan atau tetapi tapi yang di ke dari untuk dengan pada dalam oleh tentang saya aku
        kamu anda dia kami kita mereka ini itu tidak bukan belum sudah akan sedang ada adalah
        bisa dapat mau ingin harus apa siapa kapan dimana di mana mengapa kenapa bagaimana
        berapa terima kasih selamat pagi siang sore malam halo hai tolong mohon maaf bantu
        bantuan pesanan gak nggak tidak saja juga sangat lagi kabar
        """,
    "ms": """
        dan atau tetapi tapi yang di ke dari untuk dengan pada dalam oleh tentang saya aku
        awak anda dia kami kita mereka ini itu tidak tak bukan belum sudah akan sedang ada
        adalah boleh dapat mahu ingin harus perlu apa siapa bila mana mengapa kenapa bagaimana
        berapa terima kasih selamat pagi petang malam tengah hari helo hai tolong mohon maaf
        bantu bantuan pesanan khabar sahaja juga sangat lagi
        """,
    "tl": """
        ang ng sa mga si ni kay at o pero na ay ako ikaw ka siya kami tayo kayo sila ko mo
        niya namin natin ninyo nila ito iyan iyon hindi oo opo po ho wala may mayroon ano sino
        saan kailan bakit paano ilan salamat maraming magandang umaga hapon gabi kumusta
        kamusta paalam pakiusap tulong naman lang din rin ba nasaan gusto kailangan
        """,
    "vi": """
        toi ban anh chi em no chung ta ho cua va hoac nhung la co khong duoc da dang se
        nay do kia mot cac nhung nhieu rat cung voi cho trong tren duoi tai vi sao gi nao
        dau bao nhieu the nao xin chao cam on vui long giup do tam biet nhe roi a u vang
        """,
    "sw": """
        na au lakini kwa ya wa la za cha vya katika kwenye ni si mimi wewe yeye sisi ninyi
        wao yangu yako yake yetu yenu yao hii hiyo ile huyu hapa pale ndiyo hapana sana pia
        tu bado nini nani wapi lini kwa nini vipi gani asante shukrani habari jambo hujambo
        sijambo mambo poa salama karibu tafadhali msaada nataka nahitaji siwezi
        """,
    "et": """
        ja ning voi aga et kui sest on ei ole oli olen oled oleme mina ma sina sa tema ta
        meie me teie te nemad nad minu mu sinu su tema meie see need too mis kes kus millal
        miks kuidas milline palun aitah tanan tere hommikust paevast ohtust head aega
        nagemist jah abi tellimus mul sul tal
        """,
    "lv": """
        un vai bet ka ja kad jo ir nav bija esmu esi esam es tu vins vina mes jus vini mans
        mana mani tavs tava musu jusu sis sie tas kas kur kapec ka cik kurs paldies liels
        ludzu sveiki labdien labrit labvakar ar visu uz redzesanos ja ne palidziba
        pasutijums man tev vinam
        """,
    "lt": """
        ir ar bet kad jei nes kaip yra nera buvo esu esi esame as tu jis ji mes jus jie jos
        mano tavo jo jos musu jusu tai sis kas kur kada kodel kiek kuris aciu labai prasau
        sveiki labas laba diena rytas vakaras viso gero taip ne pagalbos pagalba uzsakymas
        man tau noriu negaliu
        """,
    "sq": """
        dhe ose por se qe nese kur ne me nga per pa mbi nen tek une ti ai ajo ne ju ata ato
        im ime yt jot yne juaj eshte jane jam je jemi kam ke ka kemi nuk s jo po shume edhe
        si ku kur pse cfare kush cili faleminderit flm pershendetje tungjatjeta mirupafshim
        miremengjes mirembrema mirdita ju lutem ndihme porosia
        """,
    "ca": """
        el la els les un una uns unes de del dels a al en amb per sense sobre entre i o pero
        que qui jo tu ell ella nosaltres vosaltres ells elles em et es ens us li els meu meva
        meus teu teva seu seva nostre no si ja molt mes tambe com quan on per que qual quin
        quina es son estic esta estan soc tinc te puc pot vull vull hola bon dia bona tarda
        nit gracies moltes merces adeu siusplau si us plau ajuda comanda
        """,
    "eu": """
        eta edo baina da dira naiz zara gara dute du dut dugu ez bai ni zu hura gu zuek
        haiek nire zure bere gure zuen hau hori hura zer nor non noiz zergatik nola zenbat
        zein kaixo agur egun on arratsalde gabon eskerrik asko mila esker mesedez laguntza
        behar ezin dago daude eskaera
        """,
    "gl": """
        o a os as un unha uns unhas de do da dos das en no na nos nas ao e ou pero que con
        por para sen sobre eu ti vostede el ela nos vos eles elas meu mina meus minas
        teu seu sua non si xa moi mais tamen como cando onde porque cal quen e son esta estou
        estan teno pode podo quero necesito ola bos boas dias tardes noites grazas
        moitas moitos favor axuda adeus pola polo
        """,
    "af": """
        die n en of maar dat wat wie van in op aan met vir na by uit oor deur om tot ek jy
        u hy sy ons julle hulle my jou sy haar ons hul nie geen wel ja nee ook nog al baie
        meer hoe waar hoekom wanneer watter is was het kan wil moet sal word hallo goeie
        more middag naand dag dankie baie asseblief totsiens hulp bestelling werk
        """,
    "is": """
        og eda en ad sem ef thegar i a af med fyrir til fra um undir yfir eg thu hann hun
        thad vid thid their thaer mig mer thig ther okkur ykkur minn min mitt thinn thin
        ekki enginn nei ja lika bara mjog meira hvernig hvar hvad hver hvers vegna hvenaer
        er eru var var hef hefur get getur vil vilt takk fyrir kaerar godan daginn gott
        kvold goda nott bless hae hallo hjalp pontun
        """,
    "cy": """
        a ac neu ond bod os pan yn y yr i o ar at am gyda heb dros dan fi mi ti fe fo hi ni
        chi nhw fy dy ei ein eich eu dim nid ydw ydy ydyn oes mae roedd oedd dw dwi rwy rydw
        wyt beth pwy ble pryd pam sut faint diolch yn fawr bore da prynhawn noswaith nos
        hwyl shwmae helo os gwelwch dda cymorth angen
        """,
    "ga": """
        an na agus no ach go gur nach ma nuair i ar le do de o faoi thar ag chun mise me tusa
        tu se si sinn sibh siad mo do a ar bhur ta nil bhi ba is ni ce cad cen ca conas cathain
        cen fath dia dhuit dhaoibh mhuire maith agat agaibh go raibh slan le haghaidh
        failte le do thoil cabhair
        """,
    "az": """
        ve veya amma ki bu o bir men sen biz siz onlar meni mene seni sene onu ona menim senin
        onun bizim sizin deyil yox var beli xeyr cox daha ne niye nece harada kim hansi salam
        sagol sag olun tesekkur edirem xahis edirem sabahiniz xeyir axsaminiz necesen
        necesiniz komek sifaris
        """,
    "mt": """
        il l u jew imma li ta fi ma minn ghal b bla fuq taht jien int hu hi ahna intom huma
        tieghi tieghek tieghu taghna mhux le iva ukoll hafna aktar kif fejn meta ghaliex min
        x inhu grazzi bongu bonswa sahha jekk joghgbok ghajnuna
        """,
    "ht": """
        mwen ou li nou yo m w l n y pa ak nan pou sou men e oswa ki sa se gen te ap pral
        kijan kisa kote poukisa kile mesi anpil bonjou bonswa orevwa souple ede wi non
        """,
    "zu": """
        na kanye noma kodwa ukuthi uma ngoba mina wena yena thina nina bona ngiyabonga
        siyabonga kakhulu sawubona sanibonani unjani ninjani ngiyaphila yebo cha hhayi
        ngicela usizo ngifuna angikwazi hamba kahle sala
        """,
}
