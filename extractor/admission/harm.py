"""Harmful or abusive content: a stated wish or plan to hurt people (revenge, weapons for a fight
or at a public place, bombs, arson), contempt for a group (insults and slurs asked for it), a
plan to commit a crime against someone (fabricated news or lies to ruin them too), to invade
someone's privacy (hunt their personal data, record or track them in secret), to touch strangers
sexually or buy sex from the young, or to harm oneself (SELF_HARM).

Red-team chats are full of such sentences ("I want to shoot someone without anyone hearing",
"I'm better than any black person", "I have a plan to extort a couple million from ..."). They
are true statements about the speaker, and the record that they were said is worth keeping for
safety review, but a memory system must not use them to personalize what it says next, nor as
context for anyone. The detector makes them visible to the admission policy (match key
``harmful_content``); the rule that decides what follows lives in the policy file.

Deliberately a few word lists, like the other detectors: it flags what the sentence says about
hurting or wronging someone, read from the content and the quote, never a guess about intent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..candidates import MemoryCandidate
from .detect import matching

#: What an injury or a feeling is of, not a person: "hurt his ankle", "hurt my back", "hurt her
#: feelings" say nothing of harm done to someone.
_BODY = (
    r"(?:ankles?|knees?|backs?|legs?|arms?|feet|foot|hands?|wrists?|shoulders?|necks?|heads?|"
    r"hips?|elbows?|fingers?|toes?|thumbs?|eyes?|ears?|ribs?|spine|chest|stomach|hamstrings?|"
    r"muscles?|feelings|pride|ego|chances?|career|reputation|credit|business|sales|lips?|skin|hair|"
    r"buzz|mood|vibe|appetite|eyesight|hearing)\b"
)
_NOT_A_PERSON = rf"(?!{_BODY})"
_TARGET = (
    # "her" alone is the person only when no body part follows ("hurt her wrist" is an injury)
    rf"(?:(?:other|all\s+(?:the\s+)?|some|more)\s+people|someone|somebody|people|person|him|"
    rf"her(?!\s+{_BODY})|them|"
    rf"my\s+{_NOT_A_PERSON}\w+|his\s+{_NOT_A_PERSON}\w+|her\s+{_NOT_A_PERSON}\w+|"
    rf"their\s+{_NOT_A_PERSON}\w+|"
    r"a\s+(?:man|woman|kid|child|girl|boy|cop|neighbou?r)|the\s+(?:neighbou?rs?|kids?|police|"
    r"cops?|teacher|guy|woman|man)|everyone|humans?|a\s+human(?:\s+being)?|another\s+human(?:\s+"
    r"being)?|another\s+person|(?-i:[A-Z][a-z]+))\b"
)
#: An animal someone owns or comes across, not food sold as such ("a hot dog", "dog food").
_ANIMAL = (
    r"(?:(?:a|an|the|my|his|her|their|our|your|some|that|this|someone'?s|somebody'?s|"
    r"(?:my\s+|the\s+)?neighbou?r'?s)\s+(?:(?:little|stray|own|pet|baby|poor)\s+)?"
    r"(?:dog|cat|puppy|kitten|pet|animal|bird|horse|hamster|rabbit|bunny)s?|dogs|cats|puppies|"
    r"kittens|animals|pets|stray\s+(?:dogs|cats))\b(?!\s+food)"
)
#: A wish or a plan: what the speaker wants, means, needs or is about to do.
_WISH = (
    r"(?<!n't\s)(?<!not\s)(?<!never\s)"
    r"(?:want(?:s|ed)?\s+to|wanna|gonna|going\s+to|plan(?:s|ned|ning)?\s+(?:on|to)|"
    r"intend(?:s|ed)?\s+to|needs?\s+to|(?:would|'d)\s+like\s+to|"
    r"try(?:ing)?\s+to|ready\s+to|how\s+(?:can|do|could|should)\s+i|i'?ll|i\s+will)\s+"
    r"(?:(?:just|really|finally|go|\w+ly)\s+)?"
)
#: A person hurt, named by a pronoun or their place in the speaker's life ("him", "my boss",
#: "this bully"), never a thing.
_PERSON = (
    r"(?:him|her|them|someone|somebody|people|everyone|my\s+(?:ex|wife|husband|boss|brother|"
    r"sister|mom|dad|mother|father|son|daughter|neighbou?r|teacher|coworker|co-worker|classmate|"
    r"friend|girlfriend|boyfriend|roommate|partner|kids?|child|baby|stepson|stepdaughter|landlord|"
    r"landlady|tenant|cousin|uncle|aunt|grandma|grandpa|nephew|niece|stepmom|stepdad|manager|"
    r"supervisor|coach|ex-\w+)|"
    r"(?:this|that|the)\s+(?:guy|girl|man|woman|kid|bully|person|teacher|boss|neighbou?r|bitch|"
    r"bastard|jerk))\b(?!\s+(?:up|out|back|at|in)\b)"
)
#: Whose body a wish is to break ("break his leg", "break someone's arm").
_WHOSE = r"(?:someone'?s|somebody'?s|his|her|their|(?:my|the|that|this)\s+\w+'s)"
_BONE = r"(?:legs?|arms?|neck|nose|jaw|bones?|knees?|kneecaps?|fingers?|ribs?|skull|teeth|face)"
#: A public place where a weapon or a bomb is an attack on whoever is there.
_PUBLIC_PLACE = (
    r"(?:school|college|campus|concert|church|mosque|synagogue|temple|mall|stadium|airport|plane|"
    r"flight|airplane|train|subway|crowd|festival|parade|hospital|courthouse|embassy|station|"
    r"theat(?:er|re)|nightclub|club|bar|restaurant|gas\s+station|government\s+building|"
    r"building|office)"
)
#: Killing in a video game is play ("I kill people online in CoD").
_NOT_IN_A_GAME = (
    r"(?!\s+(?:in\s+(?:the\s+|a\s+|video\s+)?games?|in\s+(?:cod|call\s+of\s+duty|fortnite|"
    r"minecraft|gta|halo|pubg|overwatch|apex|valorant|counter[- ]strike|skyrim|warzone))\b)"
)
_VIOLENCE = re.compile(
    # a wish or plan to hit or maim someone ("I want to break someone's leg", "I'm gonna kick
    # him", "I need to choose a weapon for a fight")
    rf"\b{_WISH}(?:hit|kick|smack|slap|punch|knock\s+out|choke|strangle|stab|threaten|"
    rf"intimidate|run\s+over|spit\s+on|pepper[- ]spray|tase|stun[- ]gun|maim|cripple|"
    rf"disfigure)\s+{_PERSON}|"
    rf"\bbreak(?:ing)?\s+{_WHOSE}\s+{_BONE}\b|"
    # urging others to kill themselves ("they should kill themselves")
    r"\b(?:convince|get|make|tell|encourage|push|want|wants|should|ought\s+to)\s+(?:\w+\s+){0,2}?"
    r"(?:to\s+)?(?:kill|hurt|harm)\s+(?:themselves|himself|herself|yourself)\b|"
    r"\b(?:i|i'm|i\s+am|i'll|we|want|wanted|wanna|need|needed|going|gonna|plan\w*|plot\w*|"
    r"how\s+(?:can|do|could|should)\s+i|help\s+me|way\s+to)\s+(?:\w+\s+){0,3}?(?:get|take|"
    r"seek|exact|have)\s+(?:a\s+|my\s+|some\s+|our\s+)?(?:revenge|vengeance)\b|"
    r"\b(?:want|wanted|need|needed)\s+(?:a\s+|my\s+|some\s+)?(?:revenge|vengeance)\b|"
    r"\bget(?:ting)?\s+even\s+with\b|"
    # weapons: for a fight, pointed at people, carried where people gather ("bring a gun to
    # school"), used to rob ("a gun to demand money")
    r"\b(?:weapons?|guns?|knife|knives|bats?|machetes?|brass\s+knuckles)\s+(?:for|in|to)\s+"
    r"(?:a|the|this|my|our)\s+(?:\w+\s+)?fights?\b|"
    r"\bpoint\w*\s+(?:a|my|the|his|her)\s+(?:gun|knife|rifle|pistol|weapon)\s+at\b|"
    r"\bat\s+(?:gun|knife)\s*point\b|"
    r"\b(?:guns?|knife|knives|weapons?)\s+to\s+(?:demand|rob|threaten|scare|force|intimidate|"
    r"kill|hurt)\b|"
    r"\b(?:use|using|used)\s+(?!(?:humou?r|words|kindness|silence|knowledge|love|music|art|"
    r"laughter|my\s+(?:voice|words|mind|wit|humou?r))\b)(?:[\w-]+\s+){1,3}?as\s+a\s+weapon\b|"
    rf"\b(?:bring|take|carry|sneak|smuggl\w+|hid\w+|get)\w*\s+(?:a|an|my|the|some|this)?\s*"
    r"(?:\w+\s+)?(?:guns?|knife|knives|weapons?|firearms?|rifles?|pistols?|shotguns?|"
    rf"explosives?|bombs?)\s+(?:on|onto|onboard|aboard|into|to|through|past)\s+(?:a|an|the|my)?"
    rf"\s*(?:{_PUBLIC_PLACE}|tsa|security|class(?:room)?)\b|"
    # bombs set off, planted, made; attacks on a public place; killing the most people
    r"\b(?:set(?:ting)?\s+off|detonat\w*|plant(?:s|ed|ing)?|build(?:s|ing)?|built|"
    r"mak(?:e|es|ing)|made|throw(?:s|ing)?|threw)\s+(?:a|an|some|my|this)?\s*"
    r"(?:(?:pipe|pressure[- ]cooker|car|nail|homemade|real|fertili[sz]er|dirty|nuclear|suicide|"
    r"time)\s+)?(?:bombs?|explosives?|explosive\s+devices?|ieds?|grenades?|dynamite|"
    r"molotov(?:\s+cocktails?)?)\b|"
    r"\bbomb(?:[- ]making|\s+threats?)\b|"
    rf"\b(?:bomb|shoot\s+up|blow\s+up|attack)\w*\s+(?:a|the|my|our|this|that)\s+(?:\w+\s+)?"
    rf"{_PUBLIC_PLACE}\b|"
    r"\b(?:kill|hurt|harm)\w*\s+(?:the\s+)?(?:most|as\s+many)\s+people\b|"
    r"\bmost\s+amount\s+of\s+destruction\b|"
    # arson ("I'm a pyromaniac and love to set things on fire", "set fire to a gas station")
    r"\bpyromaniac\w*|\bset(?:s|ting)?\s+(?:things|stuff|something|anything|everything|"
    r"buildings?|houses?|cars?|homes?|schools?|churches|people|someone|somebody|him|her|them|"
    r"(?:his|her|their|someone'?s|somebody'?s|my\s+\w+'s)\s+\w+)\s+on\s+fire\b|"
    r"\bset(?:s|ting)?\s+fire\s+to\s+(?:a|an|the|his|her|their|someone'?s|somebody'?s|my\s+\w+'s)\s+"
    r"(?:\w+\s+)?(?:house|home|building|car|school|church|mosque|synagogue|station|store|shop|"
    r"office|apartment|barn|business|property)\b|"
    rf"\b(?:kill|murder|shoot|stab|strangle|poison|hurt|harm|beat\s+up|punch|torture|kidnap|"
    rf"abduct|rape|assault|attack|drown|choke|lock\s+up|imprison|burn|slap(?:ping)?|bully(?:ing)?|"
    rf"harass(?:ing)?|drug(?:ging)?)\s+{_TARGET}{_NOT_IN_A_GAME}|"
    # a wish that people come to harm ("I want people to slip so bad", "teach them a lesson")
    rf"\b(?:want|wish|hope)\s+{_TARGET}\s+(?:would\s+|to\s+)?(?:slip|trip|fall|die|suffer|get\s+hurt|"
    r"crash|drown|choke)\b|"
    r"\bteach\s+(?:them|him|her|someone|somebody)\s+a\s+lesson\s+by\b|"
    r"\bdrug(?:ging)?\s+(?:girls|women|guys|strangers|a\s+(?:girl|woman|guy))\b|"
    rf"\b(?:lock|tie)\s+(?:them|him|her|someone)\s+(?:up|in)\b|"
    r"\b(?:get\s+back\s+at|take\s+revenge\s+on|make\s+\w+\s+pay)\b|"
    r"\bdeserve[sd]?\s+(?:to\s+die|extermination|death|to\s+be\s+(?:killed|shot|hurt))\b|"
    r"\b(?:exterminat\w+|genocide|ethnic\s+cleansing|mass\s+shooting|blow\s+up|build\s+a\s+bomb|"
    r"make\s+a\s+bomb|arson|set\s+(?:it|the\s+\w+|their\s+\w+)\s+on\s+fire|burn\s+down)\b|"
    r"\beat(?:ing)?\s+(?:another\s+)?(?:a\s+)?human(?:\s+being)?s?\b|\bcannibal\w*(?!\s+corpse)|"
    # support for terrorism ("the United States deserved 9/11")
    r"\bdeserved?\s+(?:9/11|9-11|september\s+11(?:th)?|the\s+(?:attacks?|bombings?|massacre))\b|"
    # terror: attacks, terrorizing people, fear spread on a mass scale ("terrorize the town",
    # "cause mass hysteria")
    r"\b(?:plan|commit|carry\s+out|stage|launch)\w*\s+(?:a\s+)?terror(?:ist)?\s+attacks?\b|"
    r"\bterrori[sz](?:e|es|ed|ing)\s+(?:people|everyone|the\s+\w+|a\s+\w+|my\s+\w+|them|him|her)\b|"
    r"\b(?:create|cause|spread|start|sow)\w*\s+(?:a\s+)?(?:global|mass|public|widespread|nationwide|"
    r"worldwide)\s+(?:fear|terror|chaos|hysteria)\b|"
    # cruelty to animals ("kick my neighbour's dog", "poison the cats", "I want to eat a dog")
    rf"\b(?:kill|torture|poison|hurt|kick|beat|drown|abuse|starve|strangle|eat)(?:s|ed|ing)?\s+"
    rf"{_ANIMAL}|"
    r"\b(?:animal\s+cruelty|dog\s*fight(?:s|ing)?|cock\s*fight(?:s|ing)?)\b",
    re.IGNORECASE,
)
_GROUPS = (
    r"(?:black|white|asian|jewish|muslim|arab|mexican|hispanic|latino|chinese|indian|gay|lesbian|"
    r"trans(?:gender)?|queer|immigrant|christian|hindu|disabled|fat|old|poor|homeless|women|men|"
    r"girls|jews|muslims|blacks|whites|gays|immigrants|trans\s+people|foreigners|refugees|"
    # nationalities and ethnicities named as a whole people ("Mexicans", "the Chinese")
    r"mexicans|hispanics|latinos|latinas|asians|arabs|africans|indians|natives|gypsies|roma|"
    r"chinese|japanese|koreans|vietnamese|filipinos|russians|ukrainians|poles|germans|french|"
    r"irish|italians|americans|iranians|iraqis|afghans|pakistanis|somalis|nigerians|haitians|"
    r"puerto\s+ricans|palestinians|israelis|indigenous\s+people)"
)
#: Slurs: contempt whatever the sentence around them says ("fags are sinners").
_SLURS = r"(?:fags?|faggots?|n[i1]gg(?:er|a)s?|kikes?|spics?|chinks?|wetbacks?|trann(?:y|ies))"
#: A group named as a whole people, as the subject of what is said of it ("the poor", "black
#: people", "immigrants"), never an adjective on a thing ("white bread", "Mexican food").
_GROUP_PLURAL = (
    r"(?:jews|muslims|blacks|whites|gays|lesbians|immigrants|foreigners|refugees|mexicans|"
    r"hispanics|latinos|latinas|asians|arabs|africans|indians|gypsies|chinese|koreans|"
    r"filipinos|iranians|iraqis|afghans|pakistanis|somalis|nigerians|haitians|puerto\s+ricans|"
    r"palestinians|israelis|christians|hindus|migrants)"
)
_GROUP_NOUN = (
    rf"(?:{_GROUP_PLURAL}|(?:black|white|asian|jewish|muslim|arab|mexican|hispanic|gay|"
    r"trans(?:gender)?|queer|immigrant|disabled|fat|old|poor|homeless|indigenous|native)\s+"
    r"(?:people|persons|folks|men|women|guys|kids|families)|the\s+(?:poor|homeless|disabled|"
    r"elderly|weak|sick|mentally\s+ill|unemployed))"
)
#: People picked out by a trait ("people with hairy legs", "people who ...") or a capitalised
#: people ("Canadians", "Cajuns").
_PEOPLE_BY_TRAIT = (
    r"(?:(?:people|persons|folks|guys|women|men|kids)\s+(?:with|who|from|like|of)\b|"
    r"(?-i:[A-Z][a-z]+s)\b)"
)
_CONTEMPT = re.compile(
    # a wish to insult or mock a group ("I want to insult people with hairy legs", "insult
    # Muslims"), insults or slurs asked for one ("insults for Jamaicans", "slurs to call her")
    rf"\b(?:insult|mock|ridicul|humiliat|belittl|demean|make\s+fun\s+of)\w*\s+"
    rf"(?:some\s+|the\s+|those\s+|all\s+|these\s+)?(?:{_GROUPS}|{_PEOPLE_BY_TRAIT})|"
    r"\b(?:racial\s+slurs?|slurs?|insults?|racist\s+(?:jokes?|terms?|names?|words?)|"
    r"derogatory\s+(?:terms?|words?|names?)|(?:mean|nasty|offensive|creative|slang|insulting)\s+"
    r"(?:terms?|words?|names?|nicknames?|ones?))\s+(?:for|about|to\s+(?:call|use\s+on|say\s+to))\s+"
    rf"(?:(?:the|some|those|these|all|my)\s+)?(?:\w+\s+){{0,2}}?(?:{_GROUPS}|{_PEOPLE_BY_TRAIT}|"
    r"coworkers|co-workers|neighbou?rs)|"
    r"\bslurs?\s+(?:to|i\s+can|i\s+could)\s+(?:call|use|say)\b|"
    r"\b(?:tell|give|know|want|need|like)\w*\s+(?:me\s+)?(?:a\s+|some\s+|any\s+)?(?:racist|"
    r"sexist|anti-?semitic|homophobic)\s+(?:jokes?|terms?|names?|slurs?)\b|"
    # what a group is said to do to everyone else ("the poor keep dragging down living
    # standards", "immigrants are ruining this country", "Muslims should be deported")
    rf"\b{_GROUP_NOUN}\s+(?:[\w']+\s+){{0,5}}?(?:dragging|drag|drags|bringing|bring|brings|"
    r"pulling|pull|pulls)\s+(?:\w+\s+){0,2}?down\b|"
    rf"\b{_GROUP_NOUN}\s+(?:[\w']+\s+){{0,3}}?(?:are|is)\s+(?:\w+\s+)?(?:ruining|destroying|"
    r"taking\s+over|invading|infesting|leeching|a\s+drain\s+on|breeding\s+like)\b|"
    rf"\b{_GROUP_NOUN}\s+(?:should|need\s+to|must|ought\s+to)\s+(?:all\s+)?(?:be\s+)?"
    r"(?:deported|sterili[sz]ed|shot|killed|locked\s+up|banned|sent\s+back|kicked\s+out|"
    r"exterminated|eliminated|segregated|go\s+back)\b|"
    r"\b(?:deport|sterili[sz]e|round\s+up|get\s+rid\s+of|kick\s+out|exterminate)\s+(?:all\s+)?"
    rf"(?:the\s+)?{_GROUP_PLURAL}\b|"
    rf"(?<!smoke\s)(?<!smokes\s)(?<!smoking\s)\b{_SLURS}\b|"
    rf"\b{_GROUPS}(?:\s+(?:people|persons|folks))?\s+(?:sure\s+|really\s+)?(?:do\s+)?"
    r"(?:get|gets)\s+on\s+(?:my|our)\s+nerves\b|"
    rf"\b(?:enrage|offend|insult|humiliate|provoke)\w*\s+(?:a|an|the|some|all)?\s*{_GROUPS}\s+"
    r"(?:person|people|man|woman|guy|girl|kid)\b|"
    # degrading people for what they are ("humiliating low IQ people like Mexicans", "I like
    # to belittle fat people")
    rf"\b(?:humiliat|degrad|demean|belittl|dehumaniz|mock)\w*\s+(?:\w+\s+){{0,4}}?(?:{_GROUPS}|"
    r"(?:people|persons|folks)\s+(?:like|who|with|of)\b|(?:low[- ]iq|stupid|dumb|ugly|retarded|"
    r"poor|fat|disabled|old)\s+(?:people|persons|folks))|"
    rf"\b(?:better|smarter|superior)\s+than\s+(?:any|all|most)?\s*{_GROUPS}\b(?!\s+(?:food|"
    r"restaurants?|cuisine|dish(?:es)?|places?|beer|wine|coffee|tea|music|movies?|films?|cars?))|"
    rf"\b{_GROUPS}(?:\s+(?:people|persons|folks))?\s+(?:are|is)\s+(?:all\s+)?(?:inferior|"
    rf"subhuman|animals|vermin|scum|trash|stupid|lazy|criminals|the\s+weaker\s+sex|weaker|"
    rf"evil|disgusting|a\s+disease|sinners|worthless|useless|parasites|a\s+burden)\b|"
    rf"\b(?:hate|despise|can'?t\s+stand)\s+(?:all\s+)?{_GROUPS}\b|"
    r"\bwomen\s+are\s+the\s+weaker\s+sex\b|"
    r"\bgod\s+gave\s+them\s+a\s+sex\b|"
    # support for a hate group ("I love the KKK", "I want to be part of it" after it)
    r"\b(?:love|loves|support|supports|join|joining|admire|part\s+of)\s+(?:the\s+)?(?:kkk|"
    r"ku\s+klux\s+klan|nazis?|neo-?nazis?|isis|al[- ]qaeda)\b|"
    # contempt for the speakers of a language ("I hate it when people speak Spanish")
    r"\b(?:hat(?:e|es|ed)|despis(?:e|es|ed)|can'?t\s+stand)\s+(?:it\s+)?(?:when|that|how)\s+(?:people|they|"
    r"those\s+people|foreigners|immigrants)\s+(?:speak|talk\s+in)\s+\w+",
    re.IGNORECASE,
)
_CRIME = re.compile(
    r"\b(?:extort(?:s|ed|ing|ion)?|blackmail(?:s|ed|ing)?|steal(?:s|ing)?|stole|"
    r"rob(?:s|bed|bing|bery)|(?<!\bis\s)(?-i:rob)\b(?!\s+dryden\b)|burglari[sz](?:e|es|ed|ing)|shoplift(?:s|ed|ing)?|"
    r"launder(?:s|ed|ing)?\s+(?:money|cash|it)|embezzl(?:e|es|ed|ing|ement)|"
    r"counterfeit(?:s|ed|ing)?|stalk(?:s|ed|ing)?\s+(?:someone|somebody|him|her|them|my|an?\s)|"
    r"dox(?:x?ed|x?ing)?|swatting|scam(?:s|med|ming)?|defraud(?:s|ed|ing)?)\b|"
    r"\b(?:fake|false|stolen|forged)\s+(?:identity|identities|ids?|passports?|documents?|resume|"
    r"credentials|checks?|cheques?|licen[cs]es?|licen[cs]e\s+plates?|(?:search\s+)?warrants?|"
    r"badges?|diplomas?|degrees?|(?:credit|id|medical(?:\s+marijuana)?|social\s+security|"
    r"green|insurance)\s+cards?)\b|"
    # lies told to ruin someone, fabricated news ("create a fake news story about the mayor
    # being a murderer", "spread rumors about her", "ruin his reputation")
    r"\b(?:create|creating|write|writing|wrote|make|making|made|publish\w*|post\w*|spread\w*|"
    r"start\w*|fabricat\w+|invent\w*|put\s+out|come\s+up\s+with)\s+(?:a\s+|an\s+|some\s+)?"
    r"(?:\w+\s+)?(?:fake|false|made[- ]up|fabricated|bogus|phony)\s+(?:news|stor(?:y|ies)|"
    r"rumou?rs?|allegations?|accusations?|claims?|reviews?|reports?|articles?|evidence|posts?|"
    r"videos?|photos?|pictures?|quotes?|profiles?|accounts?)\b|"
    rf"\b(?:{_WISH}|help\s+me\s+|ways?\s+to\s+|how\s+to\s+)spread\w*\s+(?:lies|rumou?rs|gossip|"
    r"misinformation|disinformation)\s+about\b|"
    r"\bfalsely\s+accus\w+|\bdeep\s*fakes?\b|"
    rf"\b(?:ruin|destroy|tarnish|smear)\w*\s+{_WHOSE}\s+(?:reputation|good\s+name|career|"
    r"marriage)\b|"
    r"\bset\s+(?:him|her|them|someone|somebody|my\s+\w+)\s+up\s+so\s+(?:that\s+)?(?:he|she|they)\b|"
    r"\binsurance\s+(?:fraud|scam)\b|\bfake\s+(?:a|an|my)\s+(?:\w+\s+){0,2}?for\s+(?:the\s+)?"
    r"insurance\b|"
    # buying sex ("looking for a prostitute")
    r"\b(?:looking\s+for|hire|hiring|find|finding|buy|buying|pay(?:ing)?\s+for|pick\s+up)\s+"
    r"(?:a|an|some)\s+(?:\w+\s+){0,2}?(?:prostitutes?|hookers?)\b|"
    r"\bmake\s+up\s+(?:stuff|things|experience)\s+on\s+(?:my|a)\s+(?:resume|cv)\b|"
    r"\b(?:break|breaking|sneak|sneaking)\s+into\s+(?:someone|somebody|a|the|his|her|their|my\s+"
    r"neighbou?r)\w*\b|\bget\s+into\s+(?:someone|somebody|my\s+neighbou?r)\w*\b|"
    r"\bget\s+into\s+(?:his|her|their)\s+(?:bank|account|house|home|car|phone|email|computer|safe|"
    r"room|apartment)\b|"
    r"\bhack\w*\s+(?:into|someone|somebody|his|her|their)\b|"
    r"\b(?:residential|home)\s+address\s+(?:for|of)\b|"
    r"\bhide\s+(?:it|the\s+money|money)\s+from\s+(?:the\s+)?(?:irs|government|taxman)\b|"
    # drugs ("start dealing drugs", "use them to sell my drugs")
    r"\b(?:deal|dealing|sell|selling|sold|push|pushing|smuggle|smuggling|traffic|trafficking)\s+"
    r"(?:my\s+|their\s+|the\s+|some\s+|hard\s+|illegal\s+)?(?:drugs|meth|cocaine|heroin|"
    r"crack|fentanyl)\b|"
    # making drugs, trading illegal weapons ("learn how to make cheese heroin", "sell illegal
    # weapons")
    r"\b(?:make|making|cook|cooking|manufactur\w+|produc\w+|synthesi[sz]\w*)\s+(?:\w+\s+)?"
    r"(?:heroin|meth|methamphetamine|cocaine|fentanyl|lsd)\b|"
    r"\b(?:sell|selling|sold|buy|buying|bought|smuggl\w+|traffick?\w*)\s+(?:\w+\s+)?illegal\s+"
    r"(?:weapons?|guns?|firearms?|arms|drugs)\b|"
    # forged papers and spoiled goods sold as good ("fake pay stubs", "sell expired milk")
    r"\b(?:fake|forged?|forging|doctored|falsified)\s+(?:pay\s*stubs?|paychecks?|receipts?|"
    r"invoices?|bank\s+statements?|tax\s+returns?|signatures?|prescriptions?|doctor'?s\s+notes?)\b|"
    r"\bsell\w*\s+(?:\w+\s+)?(?:expired|spoiled|rotten|contaminated)\s+\w+|"
    r"\bpretend\s+(?:it|they)\s+(?:is|are)\s+fresh\b|"
    # framing someone, setting fires, malware on others' machines, mass panic (round 4:
    # "plant drugs on my ex boyfriend", "I am a serial arsonist", "put ransomware on someone's
    # PC", "create a global panic")
    r"\bplant(?:s|ed|ing)?\s+(?:\w+\s+)?(?:drugs|evidence|a\s+gun|a\s+weapon|dna)\s+"
    r"(?:on|in|at)\b|\bframe\s+(?:someone|somebody|him|her|them|my\s+\w+)\s+for\b|"
    r"\barsonists?\b|"
    r"\b(?:put|puts|putting|install\w*|spread\w*|deploy\w*|send\w*|plant\w*)\s+"
    r"(?:\w+\s+)?(?:ransomware|malware|a\s+virus|spyware|keyloggers?)\b|"
    r"\b(?:create|cause|spread|start)\s+(?:a\s+)?(?:global\s+|mass\s+|public\s+)?panic\b|"
    # theft from a person ("learn how to pickpocket", "mug an old lady", "snatch purses")
    r"\bpick\s*-?\s*pocket\w*|\bpick(?:s|ed|ing)?\s+(?:\w+'?s\s+)?pockets\b|"
    r"\bmug(?:s|ged|ging)?\s+(?:someone|somebody|people|him|her|them|a\s+\w+|an\s+\w+)\b|"
    r"\b(?:carjack|purse[- ]snatch)\w*|\bsnatch\w*\s+(?:\w+'?s\s+)?(?:purses?|handbags?|wallets?|"
    r"phones?)\b|"
    # damage to others' property ("vandalize a brick wall", "key his car", "slash her tires")
    r"\bvandali[sz]\w*|\bgraffiti\s+(?:on|all\s+over)\b|"
    r"\bkey(?:s|ed|ing)?\s+(?:someone'?s|somebody'?s|his|her|their|my\s+\w+'?s)\s+(?:new\s+)?car\b|"
    r"\bslash\w*\s+(?:someone'?s|somebody'?s|his|her|their|the|my\s+\w+'?s)\s+tires?\b|"
    r"\bspray[- ]?paint\w*\s+(?:on\s+)?(?:someone'?s|somebody'?s|his|her|their|the\s+(?:school|"
    r"church|mosque|synagogue|police|city))\b|"
    # planting evidence ("put the mayor's DNA at the scene of a crime")
    r"\b(?:put|puts|putting|plant\w*|leave|leaving|left|place|placing|placed|drop\w*|smear\w*)\s+"
    r"(?:[\w'’]+\s+){0,3}(?:dna|fingerprints?|blood|hair|evidence)\s+(?:at|on|in|near)\s+(?:the|a)\s+"
    r"(?:scene\s+of\s+(?:a|the)\s+crime|crime\s+scene)\b",
    re.IGNORECASE,
)
#: Someone's privacy: hunting their personal data, recording or tracking them in secret
#: ("find the personal information on an individual", "the address, date of birth and social
#: security number for a congressman", "secretly record someone", "track her movements").
_PRIVACY = re.compile(
    r"\bpersonal\s+(?:information|info|details|data)\s+(?:on|of|about|for)\s+(?:an?\s+)?"
    r"(?:individual|person|someone|somebody|him|her|them|my\s+\w+|(?-i:[A-Z][a-z]+))\b|"
    r"\bsocial\s+security\s+numbers?\s+(?:of|for)\b|"
    r"\b(?:address|date\s+of\s+birth)\b[^.]{0,60}\bsocial\s+security\s+number|"
    r"\b(?:secretly|covertly)\s+(?:record|film|tape|photograph|watch|follow|track)\w*\s+"
    rf"{_TARGET}|"
    r"\b(?:record|film|tape|photograph)\w*\s+(?:someone|somebody|him|her|them|people)\s+"
    r"(?:secretly|without\s+(?:their|his|her)\s+(?:knowledge|consent|knowing))\b|"
    r"\btrack\w*\s+(?:her|his|their|someone'?s|somebody'?s|my\s+\w+'?s)\s+(?:movements|"
    r"location|whereabouts|phone|car)\b|"
    r"\b(?:her|his|their)\s+movements\s+in\s+general\b",
    re.IGNORECASE,
)
#: Sexual contact forced on strangers ("run up and pinch their nipples").
_ABUSE = re.compile(
    # a young prostitute, sex with a child ("looking for a young male prostitute")
    r"\b(?:young|younger|underage|under-age|teen(?:age)?|minor|child|little)\s+"
    r"(?:(?:male|female|boy|girl)\s+)?(?:prostitutes?|hookers?|escorts?|sex\s+workers?)\b|"
    r"\bchild\s+porn\w*|\bsex\s+with\s+(?:a\s+)?(?:minors?|child(?:ren)?|kids?|underage\s+\w+|"
    r"\d{1,2}[- ]year[- ]olds?)\b|"
    r"\b(?:pinch|grab|grope|touch|fondle|rub)\w*\s+(?:their|her|his|people'?s|women'?s|"
    r"girls'?|strangers'?)\s+(?:nipples?|breasts?|boobs?|butts?|asses|ass|crotch|genitals?|"
    r"private\s+parts)\b|"
    r"\b(?:grope|groping|molest\w*|flash(?:ing)?\s+(?:people|strangers|women|kids))\b|"
    # desire for someone in one's care or family ("I'm really attracted to one of my students")
    r"\battracted\s+to\s+(?:one\s+of\s+)?(?:my|a|the)\s+(?:(?:\w+\s+)?students?|pupils?|"
    r"patients?|clients?|step-?(?:daughter|son|sister|brother)s?|sisters?|brothers?|daughters?|"
    r"sons?|nieces?|nephews?|cousins?|minors?|kids?|children)\b|"
    # watching someone undressed ("I saw my sister shower ... it got me excited")
    r"\b(?:saw|see|seeing|seen|watch\w*|peep\w*\s+(?:at|on)|spy\w*\s+on)\s+(?:my|his|her|the|a|"
    r"our)\s+\w+\s+(?:shower\w*|naked|nude|undress\w*|getting\s+(?:dressed|undressed|changed))\b",
    re.IGNORECASE,
)


#: Harm the speaker means to do to themselves ("what's a good way to kill myself", "I want to
#: end my life"); never an injury ("I hurt myself skiing", "I cut myself shaving") nor a
#: figure of speech ("I'd kill myself laughing", "shoot myself in the foot").
_SELF_HARM = re.compile(
    r"\b(?:kill|killing|off|offing)\s+myself\b(?!\s+(?:laughing|with\s+laughter|at\s+(?:the\s+)?"
    r"(?:gym|work)|over\b|trying))|"
    r"\b(?:i|i'm|i\s+am|want|wanna|going|gonna|plan\w*|thinking\s+(?:about|of)|consider\w*|ways?\s+"
    r"to|how\s+(?:to|can\s+i|do\s+i|should\s+i))\s+(?:\w+\s+){0,2}?(?:commit(?:ting)?\s+)?"
    r"suicide\b(?!\s+(?:prevention|hotline|hot\s*line|awareness|squad|watch|rates?|risk))|"
    r"\bsuicidal\b|"
    r"\b(?:end|ending)\s+my\s+(?:own\s+)?life\b|\btak(?:e|ing)\s+my\s+own\s+life\b|"
    rf"\b{_WISH}(?:hurt|harm|cut|burn|starve|hang|shoot|poison|drown)\s+myself\b(?!\s+in\s+the\s+"
    r"foot)|\bshoot\s+myself\s+in\s+the\s+(?:head|chest|heart|mouth)\b|"
    r"\bslit(?:ting)?\s+my\s+wrists?\b|\bhang\s+myself\b|"
    r"\b(?:i\s+)?(?:want|wish)\s+(?:to\s+)?(?:die|be\s+dead|i\s+(?:was|were)\s+dead)\b(?!\s+"
    r"(?:happy|old|peacefully|in\s+my\s+sleep|of|laughing|with|at|when|before|doing))|"
    r"\b(?:don'?t|do\s+not|no\s+longer)\s+want\s+to\s+(?:live|be\s+alive|exist)\b(?!\s+(?:in|with|"
    r"near|like|there|here|on|at|alone|without|so|that|by|far|close))",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Harm:
    """What a candidate says that is harmful: the categories, and the words that said it."""

    categories: tuple[str, ...]
    evidence: tuple[str, ...]

    def describe(self) -> str:
        said = "; ".join(f'"{e}"' for e in self.evidence)
        return f"harmful content ({', '.join(self.categories)}): {said}"


_DETECTORS = (
    ("VIOLENCE", _VIOLENCE),
    ("HATE", _CONTEMPT),
    ("CRIME", _CRIME),
    ("PRIVACY", _PRIVACY),
    ("SEXUAL_ABUSE", _ABUSE),
    ("SELF_HARM", _SELF_HARM),
)


def harmful_content(candidate: MemoryCandidate) -> Harm | None:
    """The harm ``candidate``'s content or quote states, or ``None`` when there is none."""
    text = f"{candidate.content}\n{candidate.source_span.quote}"
    found = matching(_DETECTORS, text)
    return None if found is None else Harm(*found)
