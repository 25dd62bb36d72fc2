"""Harmful or abusive content: a stated wish or plan to hurt people, contempt for a group, a
plan to commit a crime against someone, to invade someone's privacy (hunt their personal data,
record or track them in secret), or to touch strangers sexually.

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
_NOT_A_PERSON = (
    r"(?!(?:ankles?|knees?|backs?|legs?|arms?|feet|foot|hands?|wrists?|shoulders?|necks?|heads?|"
    r"hips?|elbows?|fingers?|toes?|thumbs?|eyes?|ears?|ribs?|spine|chest|stomach|hamstrings?|"
    r"muscles?|feelings|pride|ego|chances?|career|reputation|credit|business|sales)\b)"
)
_TARGET = (
    rf"(?:(?:other|all\s+(?:the\s+)?|some|more)\s+people|someone|somebody|people|person|him|her|them|"
    rf"my\s+{_NOT_A_PERSON}\w+|his\s+{_NOT_A_PERSON}\w+|her\s+{_NOT_A_PERSON}\w+|"
    rf"their\s+{_NOT_A_PERSON}\w+|"
    r"a\s+(?:man|woman|kid|child|girl|boy|cop|neighbou?r)|the\s+(?:neighbou?rs?|kids?|police|"
    r"cops?|teacher|guy|woman|man)|everyone|humans?|a\s+human(?:\s+being)?|another\s+human(?:\s+"
    r"being)?|another\s+person|(?-i:[A-Z][a-z]+))"
)
#: An animal someone owns or comes across, not food sold as such ("a hot dog", "dog food").
_ANIMAL = (
    r"(?:(?:a|an|the|my|his|her|their|our|your|some|that|this|someone'?s|somebody'?s|"
    r"(?:my\s+|the\s+)?neighbou?r'?s)\s+(?:(?:little|stray|own|pet|baby|poor)\s+)?"
    r"(?:dog|cat|puppy|kitten|pet|animal|bird|horse|hamster|rabbit|bunny)s?|dogs|cats|puppies|"
    r"kittens|animals|pets|stray\s+(?:dogs|cats))\b(?!\s+food)"
)
_VIOLENCE = re.compile(
    rf"\b(?:kill|murder|shoot|stab|strangle|poison|hurt|harm|beat\s+up|punch|torture|kidnap|"
    rf"abduct|rape|assault|attack|drown|choke|lock\s+up|imprison|burn|slap(?:ping)?|bully(?:ing)?|"
    rf"harass(?:ing)?|drug(?:ging)?)\s+{_TARGET}|"
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
    r"\beat(?:ing)?\s+(?:another\s+)?(?:a\s+)?human(?:\s+being)?s?\b|\bcannibal\w*|"
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
_CONTEMPT = re.compile(
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
    rf"\b(?:better|smarter|superior)\s+than\s+(?:any|all|most)?\s*{_GROUPS}\b|"
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
    r"rob(?:s|bed|bing|bery)?|burglari[sz](?:e|es|ed|ing)|shoplift(?:s|ed|ing)?|"
    r"launder(?:s|ed|ing)?\s+(?:money|cash|it)|embezzl(?:e|es|ed|ing|ement)|"
    r"counterfeit(?:s|ed|ing)?|stalk(?:s|ed|ing)?\s+(?:someone|somebody|him|her|them|my|an?\s)|"
    r"dox(?:x?ed|x?ing)?|swatting|scam(?:s|med|ming)?|defraud(?:s|ed|ing)?)\b|"
    r"\b(?:fake|false|stolen)\s+(?:identity|id|passport|documents?|resume|credentials)\b|"
    r"\bmake\s+up\s+(?:stuff|things|experience)\s+on\s+(?:my|a)\s+(?:resume|cv)\b|"
    r"\b(?:break|breaking|get|sneak)\s+into\s+(?:someone|somebody|a|the|his|her|their|my\s+"
    r"neighbou?r)\w*\b|"
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
)


def harmful_content(candidate: MemoryCandidate) -> Harm | None:
    """The harm ``candidate``'s content or quote states, or ``None`` when there is none."""
    text = f"{candidate.content}\n{candidate.source_span.quote}"
    found = matching(_DETECTORS, text)
    return None if found is None else Harm(*found)
