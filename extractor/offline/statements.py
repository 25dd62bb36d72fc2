"""What the offline model takes from a user message: what the user said, and what it claims.

Every kept sentence yields a group of two drafts: an ASSERTION_EVENT ("User stated: ...", the
event the system witnessed) and, linked to it by ``parent``, the claim itself -- a
WORLD_PROPOSITION, PREFERENCE, PROCEDURE or FAILURE_EXPERIENCE rewritten in the third person.
Sentences that assert nothing about the user -- questions, hypotheticals, sarcasm, jokes,
small talk aimed at the other speaker (offers, reactions, opinions on what was just said, tips
for the other speaker, talk about the exchange itself, talk to the other speaker about their
part in it, tasks for them), fragments of an answer, and instructions aimed at the memory
system -- yield nothing at all. The speaker's own wish ("I wish I had more time") is not a
hypothetical: it says what they want.
"""

from __future__ import annotations

import re
from datetime import datetime

from ..conversation import Message
from ..temporal import find_expressions
from ..validation import REPORTED_CUES
from ..vocab import CandidateKind, Capability, MemoryType, Origin
from .cues import (
    has_placeholder,
    is_certification,
    is_hypothetical_claim,
    is_injection,
    is_own_wish,
    is_question,
    is_sarcastic_or_joke,
    is_self_certifying,
    non_fact_about_speaker,
)
from .draft import (
    Draft,
    Group,
    dated,
    keep_uncertainty,
    point_in_time,
    temporal_for,
    uncertainty_for,
)
from .english import asked_group, finish, tidy, we_are, with_group
from .entities import entities_in
from .replies import Replied, elides_topic, replied_quote, with_topic
from .standalone import (
    bare_reporter,
    hides_who,
    holds_referent,
    introduced,
    leans_on_words,
    missing_complement,
    names_company,
    needs_the_chat,
    passes,
    resolve,
)
from .text import (
    MIN_MAIN_CLAUSE_WORDS,
    Piece,
    clauses,
    is_cut_clause,
    is_fragment,
    sentences,
    strip_opener,
)

_FIRST_PERSON = re.compile(
    r"\b(?:i|me|my|mine|myself|i'm|im|i've|ive|i'd|i'll|we|our|ours|we're|we've)\b|"
    r"\b(?:I|i)['’](?:m|ve|d|ll)\b",
    re.IGNORECASE,
)
#: Openings that address the other speaker rather than tell something about the user. A hope
#: or eagerness to do something ("I hope to have kids some day", "I can't wait to learn
#: French") is the speaker's own plan, not small talk.
_CHATTER = re.compile(
    r"^(?:(?:i|we)\s+(?:bet|hope(?!\s+to\b)|agree|understand|see|wonder|appreciate|suppose so|"
    r"guess so|"
    r"can imagine|can tell|can see|hear you|feel you|mean|get it|got it|totally agree|"
    r"couldn'?t agree|(?:can'?t|can not|cannot) wait(?!\s+to\b)|look forward|am looking forward|"
    r"recommend|suggest|would recommend|would suggest|would say|think so|believe so|"
    r"don'?t think so|know right|know,? right|know what you mean|know how you feel|know that|"
    r"know!|know\.|know$|do too|did too|too|as well|also(?=\W*$)|have to say|must say|second that|"
    r"knew it|admire|envy|like that|love that|love it|like it|love this|like this|"
    r"love the idea|like the idea|love your|like your|admire your|miss you|"
    r"(?:can|could) (?:help|send|give|show|tell)|hope so|hope not)\b|"
    r"i'?m\s+(?:sure|glad|sorry|happy for|excited for|jealous|proud of you|so sorry|"
    r"(?:so\s+)?(?:glad|happy) (?:to hear|you|that)|good|fine|well|doing|great|okay|ok|"
    r"all ears|with you|(?:in|down|game)(?=\W*$)|curious|not sure (?:what|how|if|about|why|where)|"
    r"(?:so |very |always |really |truly |just )?impressed|rooting|thinking of you)\b|"
    r"i\s+am\s+(?:sure|glad|sorry|happy for|excited for|jealous|good|fine|well|doing|great|"
    r"curious|(?:so |very |always |really |truly |just )?impressed|so sorry|rooting|"
    r"(?:glad|happy) (?:to hear|you|that)|"
    r"not sure (?:what|how|if|why|where|whether))\b|"
    # a reaction to the other speaker's news, however strongly felt ("I'm really sorry to hear
    # that", "I am so proud of you", "I'm so excited for you!")
    r"i(?:'m|\s+am)\s+(?:so|really|very|truly|just|pretty|super|totally|genuinely|extremely|"
    r"quite|too)(?:\s+(?:so|very|really))?\s+(?:sorry|glad|happy\s+(?:for|to\s+hear)|"
    r"excited\s+for|thrilled\s+for|proud\s+of\s+(?:you|u)|jealous|impressed)\b|"
    r"i'?(?:ll| will| would|'d| should)\s+(?:tell|send|let|keep|check|have to|look|try to find|"
    r"ask|bring|share|show|definitely|be sure|make sure|need to|love to (?:hear|see|know|read|"
    r"try|meet|visit|come|join)|like to (?:hear|see|know|read|meet)|recommend|suggest|say|"
    r"think|be happy|be glad|be there)\b|"
    r"i\s+(?:think|believe|feel|guess|know|bet|hope|heard)\s+(?:you|your|that'?s|that is|it'?s|"
    r"it is|it would|it will|it'?d|so|this|they|he|she|there|that would|that will|that sounds|"
    r"everyone|most people|people|anyone|some people|a lot of people)\b|"
    r"let\s+me|let'?s|me\s+(?:too|neither|either|as well)|same\s+(?:here|with me)|"
    r"i\s+(?:don'?t|do not)\s+(?:know|blame|think so|understand|see why|mind)\b|"
    r"i\s+have\s+(?:no idea|to agree|to say|to admit|heard)\b|"
    r"i'?ve\s+(?:heard|always wanted to (?:try|see|visit|go)|never heard)\b|"
    r"(?:that|this|it)\s+(?:sounds|seems|looks)|thank|good for you|my goodness|sounds\s+like|"
    r"my\s+(?:advice|suggestion|recommendation|guess|bad|pleasure)\b|"
    r"i\s+remember\s+(?:you|when\s+you|that\s+you|your)\b|"
    r"(?:attached|enclosed|below|above)\s+(?:is|are)|here(?:'s|\s+is|\s+are)|see\s+attached|"
    r"(?:quick|some|a\s+bit\s+of|for)\s+context|before\s+(?:we|i)\s+(?:start|begin|go)|"
    r"(?:definitely\s+|please\s+|just\s+)?(?:let|wish|tell|remind)\s+me\b|"
    r"i(?:\s+have|'ve|\s+had)?(?:\s+never|\s+not|n't)?(?:\s+even|\s+really)?\s+(?:thought|heard|"
    r"considered|realized|realised)\s+(?:of\s+|about\s+)?(?:that|this|it)\b|"
    r"i\s+(?:did\s+not|didn'?t|never)\s+(?:even\s+)?(?:know|realize|realise|think)\b|"
    r"i\s+(?:\w+\s+)?(?:think|believe|thought|knew|bet)\s+(?:that\s+)?(?:you|u)\b|"
    r"i\s+(?:was|am|'m)\s+(?:just\s+)?wondering\b|"
    r"i'?m\s+(?:so\s+|very\s+|really\s+)?(?:amazed|intrigued|glad|happy)\s+(?:that\s+)?you\b|"
    r"i\s+(?:\w+\s+)?(?:feel\s+(?:for|sorry\s+for)\s+(?:you|u)|believe\s+in\s+(?:you|u)|"
    r"get\s+(?:you|u|that|it)|know\s+the\s+feeling|concur)\b|"
    r"i\s+(?:must|have\s+to|gotta|got\s+to|need\s+to)\s+(?:go|run|ask|get\s+going)\b|"
    r"i\s+(?:just\s+)?had\s+an\s+idea\b|i'?m\s+ready\s+to\s+chat\b|"
    r"(?:i|we)(?:'ll|\s+will|\s+would|'d|\s+could|\s+can|\s+should|\s+might)?\s+(?:\w+\s+)?"
    r"(?:have\s+to|need\s+to|gotta|got\s+to|must)\s+(?:try|check|look|see|give|think|keep)\b)",
    re.IGNORECASE,
)
_SUBJECT = re.compile(
    r"\b(?:i|i'm|im|i've|ive|i'd|i'll|me|my|mine|we|we're|we've|our)\b|\b[Ii]['’](?:m|ve|d|ll)\b",
    re.IGNORECASE,
)
#: A first-person clause with its subject left out ("Love hiking.", "Just got back from Rome.").
_SUBJECTLESS = re.compile(
    r"^(?:(?:just|also|still|really|currently|actually|mostly|recently)\s+)?"
    r"(?:(?P<like>love|adore|hate)\s+(?!(?:it|that|this|you|your|them|him|her|the idea|to hear)\b)|"
    r"(?P<ing>getting|working|heading|watching|studying|planning|cooking|playing|reading|"
    r"training|saving|learning|moving|packing|relaxing)\s+|"
    r"(?P<been>been)\s+|(?P<fan>not\s+(?:a\s+|much\s+of\s+a\s+)?(?:big\s+|huge\s+)?fan\s+of)\s+|"
    r"(?P<past>got back|finished|worked|spent|went|bought|started|moved|graduated|adopted)\s+)"
    r"(?=\w)",
    re.IGNORECASE,
)
#: Reported speech with no first person ("Reportedly the office moves in May", "The office
#: moves in May, according to Tom from HR"): the user relays someone else's claim.
_RELAYED = re.compile(
    r"\b(?:according\s+to|reportedly|apparently|supposedly|allegedly|rumou?r\s+(?:has\s+it|is)|"
    r"word\s+is|(?:they|people|experts|scientists|studies)\s+say)\b(?!\W*$)|"
    r"(?-i:\b(?!(?:He|She|It|They|We|You|This|That|There|Everyone|Somebody|Someone|Well|Nicely)\b)"
    r"(?<!what )[A-Z][a-z]+(?:\s+(?:from|at|in)\s+[A-Z][\w&]*)?\s+(?:says|said|told\s+us|claims|"
    r"reported|announced)\b)",
    re.IGNORECASE,
)
_COPULA = re.compile(r"\b(?:is|are|was|were|isn'?t|aren'?t|wasn'?t|weren'?t)\b", re.IGNORECASE)
#: Sentences too thin to be about the user ("I do!", "Me neither.").
_WEAK = re.compile(
    r"^(?:(?:i|we)\s+(?:do|did|will|would|can|could|have|had|am|was|should|might|may|must|"
    r"know|see|agree|understand|guess|bet|hope|think|believe|suppose|get it|got it|feel you|"
    r"hear you|mean|'ll try|will try|can try|'d love to|would love to)"
    r"(?:\s+not|n't)?(?:\s+(?:too|as well|either|so|not|right|that|it))?[\s.!?]*$|"
    r"\w+[\s.!?]*$|me\b[\s\w]{0,12}$|mine\s+(?:too|as well)[\s.!?]*$|"
    r"(?:you|u)\b|(?:so\s+|just\s+|please\s+)?(?:ping|tell|send|text|email|show|give|let|remind|"
    r"help|ask|message|join|find|book|get|buy|make|order|fetch|pick)\s+me\b|(?:maybe\s+|perhaps\s+|then\s+)?we(?:\s+(?:can|could|should|will|might|may|would)|'ll|'d)\b|"
    r"let'?s\b)",
    re.IGNORECASE,
)
_ADV = (
    r"(?:\s+(?:absolutely|definitely|totally|completely|really|certainly|surely|probably|so|"
    r"just|also|too|sure|for sure|still|of course|always|never|not|n't))*"
)
#: Elliptical replies whose content is a pro-form ("I would love that.", "I can understand
#: that.", "I won't."): they accept, agree or refuse, but say nothing on their own.
_ELLIPTICAL = re.compile(
    rf"^(?:i|we)(?:'ll|'d|'m|'ve)?{_ADV}(?:\s+(?:will|would|could|can|should|might|may|must|"
    rf"do|did|am|are|was|were|can't|won't|wouldn't|couldn't|shouldn't|didn't|don't)){_ADV}"
    rf"(?:\s+(?:understand|forget|forgot|disagree|agree|appreciate|imagine|see|get|try|do|be)|"
    rf"(?:(?<=would)|(?<='d))\s+(?:love|like))?(?:\s+(?:that|it|this|so|one|those|these))?"
    rf"{_ADV}(?:\s*,?\s*(?:but|though|haha|lol))?\W*$",
    re.IGNORECASE,
)
#: An opinion on what was just said: a verb of thinking or hearsay whose complement has a
#: pro-form or generic subject ("I think it depends on the kid.", "I reckon they'll win.",
#: "I hear there's a remake.", "I feel like people overdo it."). It comments on something
#: already in the conversation, not on the speaker. A complement with a subject of its own
#: ("I think the launch moved to Friday", "I think my sister is a nurse") is a hedged claim
#: that stands alone, and is kept with its hedge; a first person or praise anywhere after the
#: verb keeps the sentence too (checked separately).
_OPINION = re.compile(
    r"^(?:i|we)\s+(?:\w+\s+)?(?:think|believe|guess|feel\s+like|reckon|suppose|assume|doubt|"
    r"bet|hear|(?:'m|am)\s+(?:pretty\s+|quite\s+|fairly\s+)?sure|imagine|find\s+that|"
    r"know\s+that)\s+(?:that\s+)?"
    r"(?:it|it's|its|that|that's|this|they|they're|they'll|they'd|he|he's|she|she's|there|"
    r"there's|you|you'll|you'd|you're|everyone|everybody|anyone|people|most\s+people|"
    r"some\s+people|sometimes|some|those|these)\b",
    re.IGNORECASE,
)
#: Praise in an opinion ("I think a dog is a great idea") says what the speaker likes: kept.
_PRAISE = re.compile(
    r"\b(?:love|loves|best|favou?rite|beautiful|great|amazing|awesome|wonderful|blessing|"
    r"fantastic|perfect|excellent)\b",
    re.IGNORECASE,
)
#: An offer or promise to the other speaker ("I can lend you a book.", "I'll get back to you
#: soon.", "I could do that for you."): a move in the conversation, not a fact about the
#: speaker. One that mentions something of the speaker's ("I can lend you my copy") or what
#: they like ("I'd love to cook with you") still tells something, and is kept.
_OFFER = re.compile(
    r"^(?:(?:maybe|perhaps|then|so|and|but|ok|okay)\s+)?(?:i|we)(?:'ll|'d|\s+will|\s+would|"
    r"\s+could|\s+can|\s+might|\s+should)\b"
    r"(?=.*\b(?:you|your|u|ya|yours)\b)(?!.*\b(?:my|mine|our|ours|love|like|enjoy)\b)",
    re.IGNORECASE,
)
#: Something the speaker came across *for* the other speaker ("I found a city you might like
#: to move to!", "I heard a new song I think you'd love"): a tip about the other speaker's
#: tastes, not a fact about the speaker's own life.
_FOR_YOU = re.compile(
    r"^(?!.*\b(?:my|mine|our)\b)(?:i|we)\s+(?:just\s+|also\s+|finally\s+)?(?:found|saw|heard|"
    r"got|bought|ordered|researched|read|came\s+across|made|picked)\b.*"
    r"(?:\bfor\s+(?:you|u)\b|\b(?:you|u)(?:'d|\s+would|\s+might|\s+may|\s+will|\s+could)?\s+"
    r"(?:like|love|enjoy|be\s+interested))",
    re.IGNORECASE,
)
#: The speaker talking about the conversation itself ("I was just about to ask you about
#: that!", "I was thinking about what you said."): about the exchange, not the speaker's life.
_ABOUT_EXCHANGE = re.compile(
    r"^(?:i|we)\s+(?:was|were|am|'m)\s+(?:just\s+)?(?:thinking|about\s+to\s+ask|going\s+to\s+ask|"
    r"gonna\s+ask|meaning\s+to\s+ask|wondering)\b(?=.*\b(?:you|your|u)\b)",
    re.IGNORECASE,
)
#: A passing state of mind with nothing it is about, or only a pro-form ("I'm not sure.",
#: "I'm so excited.", "I'm pretty excited about this!", "I'm really looking forward to it!"):
#: a reaction to what was just said. With an object of its own ("I'm excited about my trip to
#: Peru") it is kept.
_PASSING_STATE = re.compile(
    r"^i(?:'m|\s+am)\s+(?:(?:so|really|very|pretty|super|just|also|quite|totally|kinda|"
    r"kind\s+of|a\s+little|a\s+bit|getting|not|even)\s+)*"
    r"(?:excited|interested|intrigued|thrilled|pumped|stoked|curious|psyched|looking\s+forward|"
    r"in|sure|certain)"
    r"(?:\s+(?:about|in|to|for|of))?"
    # "... looking forward to reading it.": the other speaker's book
    r"(?:\s+(?:[a-z]+ing\s+)?(?:it|this|that|them|those|these|one))?"
    r"(?:\s+(?:now|too|as\s+well|already|again|yet|though|either))?\W*$|"
    r"^i(?:'m|\s+am)\s+(?:not|really\s+not|not\s+really|not\s+quite|not\s+entirely|not\s+too)"
    r"\s+(?:sure|certain)\b",
    re.IGNORECASE,
)
#: An agreement or acknowledgement with an intensifier ("I really hope so.", "I completely
#: forgot.", "I just know it."): as thin as the plain "I hope so." that :data:`_WEAK` drops.
_WEAK_INTENSIFIED = re.compile(
    r"^(?:i|we)\s+(?:really|just|certainly|definitely|totally|sure|truly|do|completely|fully)\s+"
    r"(?:hope|think|believe|guess|know|agree|understand|see|mean|appreciate|forgot|disagree)"
    r"(?:\s+(?:so|not|too|it|that|this))?(?:\s+(?:very\s+well|too|as\s+well))?\W*$",
    re.IGNORECASE,
)
#: An acknowledgement that opens the sentence ("I hear you though it seems we are all
#: underpaid.", "I know, some people are just a waste of time!", "I do know what you mean."):
#: the speaker takes in what the other said and comments on it; what follows is a remark on
#: the other's news, not news of the speaker's own. One that goes on with a clause of the
#: speaker's own ("I know, I have two dogs myself.") is kept.
_ACKNOWLEDGE = re.compile(
    r"^(?:(?:yeah|yes|yah|oh|well|and)[\s,]+)?(?:i|we)\s+(?:\w+\s+)?(?:hear|feel|get)\s+"
    r"(?:you|u|ya)\b|"
    r"^i\s+(?:do\s+|totally\s+|really\s+)?know\s+(?:exactly\s+)?what\s+(?:you|u)\s+mean|"
    r"^i\s+know\s*(?:[,\u2013-]|\band\b|\bbut\b)(?!\s*(?:i|i'm|i've|my|we)\b)|"
    # empathy with the other speaker ("I get how frustrating it can be ...", "I totally
    # understand the satisfaction you get from fixing cars.", "I completely encourage it")
    r"^i\s+(?:\w+\s+)?(?:get|understand|know|see)\s+how\s+(?:\w+\s+)?(?:frustrating|hard|"
    r"difficult|tough|stressful|scary|exciting|rewarding|important|tiring|annoying)\b|"
    r"^i\s+(?:\w+\s+)?understand\b(?=.*\b(?:you|your)\b)|"
    r"^i\s+(?:\w+\s+)?encourage\s+(?:it|that|this|you)\b",
    re.IGNORECASE,
)
#: Talk about what the speaker means or how they see it ("That's how I see it", "In the
#: factory, that is what I mean", "Not that I can think of off the top of my head"): it
#: points back at what was already said, or at the speaker's memory, and states nothing new.
_META_TALK = re.compile(
    r"\b(?:that'?s|that\s+is|this\s+is|it'?s)\s+(?:just\s+|exactly\s+)?(?:how|what)\s+"
    r"(?:i|we)\s+(?:mean|meant|see\s+it|see\s+things|think|thought|'m\s+saying|am\s+saying|"
    r"was\s+saying|was\s+trying\s+to\s+say|was\s+getting\s+at)\b|"
    r"^(?:not|none|nothing|no\s?one|nobody)\s+that\s+i\s+(?:can\s+(?:think\s+of|recall|"
    r"remember)|know\s+of|remember|recall)\b",
    re.IGNORECASE,
)
#: An apology for something in the exchange ("I'm sorry but I don't think you ever told me
#: your name.", "Sorry that took so long"): politeness, not a fact. One that mentions the
#: speaker's own things ("Sorry I'm late, my car broke down") still tells something: kept.
_APOLOGY = re.compile(
    r"^(?:(?:i'?m|i\s+am)\s+(?:so\s+|very\s+|really\s+|truly\s+)?sorry|sorry|"
    r"i\s+apologi[sz]e)(?:\s*,|\s+(?:but|that|for|if|about))(?!.*\b(?:my|mine|our|ours)\b)",
    re.IGNORECASE,
)
#: A hope, belief or wish about the other speaker ("I hope you have a better job than I do",
#: "I know you like being outdoors", "I have full faith that you will pick the perfect name!",
#: "I don't want you to be stuck indoors") and praise of what they do ("I marvel at the job you
#: do", "I like where your mind is going"): it is about the listener, even when the speaker
#: appears further on, so the first person there does not make it a fact about the speaker.
_ABOUT_PARTNER = re.compile(
    r"^(?:(?:well|so|and|but|oh|yeah|yes|yah)[\s,]+)?(?:i|we)\s+(?:\w+\s+)?(?:hope|know|want|"
    r"would\s+like|'d\s+like|would\s+love|'d\s+love|don'?t\s+want|do\s+not\s+want|"
    r"have\s+(?:full\s+)?faith|trust|(?:am|'m)\s+sure|bet|remember)\s+(?:that\s+)?"
    r"(?:you|u|your|ur)\b|"
    r"^(?:i|we)\s+(?:\w+\s+)?(?:marvel|admire|respect|applaud|commend|like|love|appreciate|"
    r"adore|envy|salute)\s+(?:at\s+)?(?:how|where|what|the\s+way|the\s+\w+\s+(?:that\s+)?)"
    r"\s*(?:you|your|u|ur)\b",
    re.IGNORECASE,
)
_MOVE_LEAD = (
    r"^(?:(?:and|but|so|oh|yeah|yea|yes|no|nope|well|plus|also|honestly|actually|ok|okay|sure|"
    r"now|then|look|listen|absolutely|absolutetly|because|cause|cuz)[\s,!]+)*"
)
#: Nothing of the speaker's own after the point: no first-person subject, "my" or "our".
_NOTHING_OWN_AFTER = r"(?![^.!?]*\b(?:i|i'm|im|i've|i'd|i'll|my|mine|we|we're|our|ours)\b)"
#: Talk addressed to the other speaker about their part in the exchange: wanting no more of
#: the talk ("I never want to come back and talk to you."), asking for or reacting to what they
#: give ("I need your help.", "I liked your suggestion of ...", "I want to know your opinion
#: about ..."), complaints on how they answer ("So far you haven't helped me with anything I
#: asked for.", "you really don't listen"), their willingness ("if you are willing to help
#: me"), their words said back ("So you're saying ..."), hopes on what they will do ("I was
#: hoping you could ...") and the speaker's stance toward them ("I don't owe you any money.",
#: "I don't trust you.", "i believe in you"). A move of the exchange, not a memory: in a
#: human chat too ("I don't need your advice."). The listener's things that the speaker tells
#: about ("I'd appreciate your help since I spend all my time ...", "I love talking to you")
#: are kept: only what names nothing of the speaker's after it goes.
_TO_LISTENER = re.compile(
    r"\b(?:don'?t|do\s+not|never|not|no\s+longer)\s+(?:[\w'’]+\s+){0,5}?(?:talk|chat|speak)(?:ing)?\s+"
    r"(?:to|with)\s+(?:you|u)\b|"
    r"\b(?:need|want|would\s+like|'d\s+like|could\s+use|asking\s+for|ask\s+for|appreciate|"
    r"(?:liked?|loved?|enjoyed|hated?|(?:don'?t|do\s+not|didn'?t|did\s+not)\s+(?:like|need|want)))\s+"
    r"(?:[\w'’]+\s+){0,2}?your\s+(?:help|assistance|suggestions?|advice|opinions?|input|thoughts|"
    r"ideas?|answers?|responses?|replies|reply|jokes?|explanations?|recommendations?|offer|"
    r"take|views?)\b" + _NOTHING_OWN_AFTER + "|"
    r"\b(?:you|u)\s+(?:still\s+|just\s+|really\s+|clearly\s+|obviously\s+)?(?:haven'?t|have\s+not|"
    r"never|didn'?t|did\s+not|don'?t|do\s+not|won'?t|can'?t|cannot|aren'?t|are\s+not|'re\s+not)\s+"
    r"(?:even\s+|really\s+|actually\s+|being\s+)?(?:help(?:ed|ing|ful)?|answer(?:ed|ing)?|"
    r"listen(?:ed|ing)?|understand|understood|hear|heard|follow(?:ed|ing)?|read)\b|"
    r"\b(?:you|u)(?:'re|\s+are|\s+were)?\s+(?:\w+\s+)?(?:willing|able|going|trying)\s+to\s+help\s+"
    r"me\b|\b(?:that|when)\s+(?:you|u)\s+(?:helped|help|can\s+help|could\s+help)\s+me\b"
    + _NOTHING_OWN_AFTER
    + "|"
    r"^(?:(?:so|and|but|oh|wait)[\s,]+)*(?:you|u)(?:'re|\s+are)\s+(?:just\s+|really\s+)?(?:saying|"
    r"telling\s+me|asking(?:\s+me)?)\b|"
    r"\b(?:i|we)(?:\s+(?:\w+\s+)?(?:was|were|am)|['’]m|['’]re)\s+(?:just\s+|only\s+|really\s+)?"
    r"hoping\s+(?:that\s+)?(?:you|u)\b|"
    # what the speaker asks of them ("I need you to promise ...", "What I need is for you to
    # find ...", "I just asked you.", "I'm not telling you that.", "I assumed you were ...")
    r"\b(?:i|we)\s+(?:\w+\s+)?(?:need|needs)\s+(?:(?:is\s+)?for\s+)?(?:you|u)\s+to\b|"
    r"\bneed\s+is\s+for\s+(?:you|u)\s+to\b|"
    r"^(?:(?:so|and|but|well|look|hey)[\s,]+)*(?:i|we)\s+(?:just\s+|already\s+|only\s+)?(?:told|asked|called|"
    r"tricked|came\s+to)\s+(?:you|u)\b" + _NOTHING_OWN_AFTER + "|"
    r"\b(?:i|we)(?:['’]m|\s+am|\s+will|['’]ll)?\s+(?:not|never|n['’]t|won['’]t)\s+(?:telling|tell|"
    r"giving|give|answering|answer)\s+(?:you|u)\b" + _NOTHING_OWN_AFTER + "|"
    r"\b(?:i|we)\s+(?:\w+\s+)?(?:assumed|figured|thought)\s+(?:that\s+)?(?:you|u)(?:['’]re|\s+were|"
    r"\s+are|\s+was)\b|"
    r"\byour\s+(?:honest\s+)?(?:opinion|thoughts|take|views?|reaction)\s+(?:on|about|of|to|"
    r"regarding)\b|"
    r"\b(?:i|we)\s+(?:[\w'’]+\s+){0,2}?(?:owe|trust|hate|blame|forgive|believe\s+in)\s+(?:you|u|ya)\b"
    + _NOTHING_OWN_AFTER,
    re.IGNORECASE,
)
#: The speaker's own talk in the exchange: what they ask, mean or said ("I was asking about
#: obesity and insurance.", "I'm talking about my neighbours" is a clarification, "I meant the
#: new address", "I already said that", "Like I asked before", "I did not ask for an
#: explanation of ...", "That's exactly what I'm asking.", "My question is."): it points at the
#: conversation, and what it is about is said elsewhere in it.
_OWN_TALK = re.compile(
    _MOVE_LEAD + r"(?:i|we)(?:\s+(?:\w+\s+)?(?:am|was|were)|['’]m)\s+(?:just\s+|only\s+|really\s+|"
    r"specifically\s+|simply\s+)?(?:asking|talking|referring|speaking)\s+(?:about|of|for|if|whether|"
    r"why|how|what)\b|"
    + _MOVE_LEAD
    + r"(?:i|we)\s+(?:only\s+|just\s+|really\s+)?(?:meant|mean)\s+(?:the|that|a|an|in|it|this|"
    r"what|when|like)\b|"
    # ("Like I said." leads into what is said next, and stays with it)
    r"^(?:(?:like|as)\s+(?!(?:i|we)\s+said\b))?(?:i|we)\s+(?:already\s+|just\s+)?(?:said|told\s+you|"
    r"mentioned|asked|wrote)"
    r"(?:\s+(?:you\s+)?(?:that|this|it))?(?:\s+(?:already|before|earlier|above|previously))?\W*$|"
    r"\b(?:i|we)\s+(?:did\s+not|didn'?t|never)\s+ask(?:ed)?\s+(?:you\s+)?(?:for|about|to|that|this|if|"
    r"whether)\b|"
    r"^(?:that'?s|that\s+is|this\s+is)\s+(?:exactly\s+|just\s+|precisely\s+)?what\s+(?:i|we)(?:'m|"
    r"\s+am|\s+was|\s+were|'re|\s+are)\s+(?:asking|looking\s+for|talking\s+about)\b|"
    r"\b(?:sharing|asking)\s+(?:you\s+)?(?:this|that|the|my)\s+question\b|"
    r"^(?:my|our|the)\s+(?:question|point|request|answer)\s+(?:is|was)\W*$",
    re.IGNORECASE,
)
#: A request or need that only makes sense as a task for the other speaker: something to be
#: found or given, with nothing of the speaker's in it ("I need a residential address.", "I
#: want insults in English.", "I need to find an email address of someone."), help asked for
#: ("I need help finding an address.", "I need some help breaking out of ..."), and a question
#: put as a want ("I just want to know which is better ...", "I need to know how ..."). "I
#: need some ideas for my garden" and "I need help convincing my girlfriend ..." tell of the
#: speaker's things and are kept; so is a named target ("... the address of J.T. Realmuto").
_TASK_NEED = re.compile(
    _MOVE_LEAD + r"(?:i|we)\s+(?:just\s+|really\s+|still\s+|only\s+|also\s+|now\s+)?(?:need|want|"
    r"would\s+like|'d\s+like|am\s+looking\s+for|'m\s+looking\s+for)\s+"
    r"(?:to\s+(?:find|get|have|locate|see)\s+)?(?:a|an|the|some|more|another|other|his|her|their|"
    r"that|this|these|those)?\s*(?:(?!(?:my|our)\b)[\w'’-]+\s+){0,2}?(?:address|addresses|"
    r"number|numbers|email|emails|info|information|details|answers?|list|examples?|template|"
    r"instructions|steps|directions|links?|website|sources?|insults?|slurs?|terms?|words|phrases|"
    r"jokes|pranks|tips|advice|options|ideas|suggestions|recommendations|recipes|ways|methods)"
    r"(?:\s+(?:of|for|to|from|on|about|in|with)\s+(?:someone|somebody|anyone|him|her|them|it|this|"
    r"that|these|those|english|spanish|french|\w+ing|(?:a|an|the|some)\s+[\w-]+))?\W*$|"
    + _MOVE_LEAD
    + r"(?:i|we)\s+(?:just\s+|really\s+|also\s+|still\s+|only\s+)?(?:need|want|would\s+like|"
    r"'d\s+like|could\s+use)\s+(?:some\s+|a\s+little\s+|a\s+bit\s+of\s+)?help\b"
    + _NOTHING_OWN_AFTER
    + "|"
    + _MOVE_LEAD
    + r"(?:i|we)\s+(?:just\s+|really\s+|also\s+|only\s+)?(?:want|need|would\s+like|'d\s+like|"
    r"wanna)\s+(?:to\s+)?(?:know|find\s+out)\s+(?:why|how|what|if|whether|where|who|which|when)\b",
    re.IGNORECASE,
)
#: "I wish" and what follows: an elliptical wish ("I wish I could.", "I wish I knew.") says
#: nothing; one with content ("I wish I knew my dad.") says what the speaker wants.
_WISH_HEAD = re.compile(r"^(?:i|we)\s+(?:\w+\s+)?wish\s+(?:that\s+)?", re.IGNORECASE)
_LIKES = re.compile(
    r"\b(?:i|we)\s+(?:(?:\w+ly|just|also|still|do|kind of|sort of|don'?t|do not|never|"
    r"would|'d)\s+){0,3}(?:love|loves|like|likes|enjoy|enjoys|hate|hates|"
    r"dislike|prefer|adore|detest|can'?t stand|cannot stand|am (?:a )?(?:big )?fan of|"
    r"am into|'m into|'m (?:a )?(?:big |huge )?fan of)\b|"
    r"\bmy\s+(?:favou?rite|fave|least favou?rite)\b|\bfavou?rite\b|"
    r"\bmore my (?:thing|style|speed)\b|\bmy (?:jam|cup of tea)\b|"
    r"\b(?:i|we)(?:'d|\s+would)\s+(?:much\s+)?rather\b",
    re.IGNORECASE,
)
_INSTRUCTION = re.compile(
    r"^(?:(?:from now on|going forward|in future|in the future),?\s+)?(?:please\s+)?"
    r"(?:(?:always|never|only|don'?t|do not|stop|just)\s+)?(?:please\s+)?"
    r"(?:answer|respond|reply|write|use|call me|keep|give|format|talk|speak|explain|address|"
    r"avoid|include|show|be|refer to me|sign|add|list|summari[sz]e|translate|"
    # "Remember to answer in French.", not advice ("Remember to find joy in the little things.")
    r"remember\s+to\s+(?:always\s+|never\s+)?(?:answer|respond|reply|write|use|call\s+me|"
    r"format|include|mention|cite|ask|check|add|keep|summari[sz]e|translate|speak|talk|"
    r"explain|address|sign))\b"
    # encouragement and advice to the other speaker are not instructions to the assistant
    r"(?!\s+(?:up|trying|going|at it|it up|careful|safe|okay|ok|well|strong|patient|about|"
    r"give up|worry|to keep)\b)(?![^.!?]*\b(?:you|your|u|ur)\b)"
    # nor is cheering them on ("Just keep of the good work.", "Remember to keep on going")
    r"(?!(?:\s+\w+){0,3}\s+(?:the\s+good\s+work|(?:keep|keeps|keepin['’]?)\s+(?:on|going|at\s+it|up|"
    r"trying|pushing|smiling)|on\s+going|it\s+will\s+all\s+work\s+out)\b)",
    re.IGNORECASE,
)
#: An instruction on how to treat the speaker in this exchange ("be mean to me", "Please be
#: nice to me."): a one-off, unless it says it stands ("Always be honest with me.").
_BE_TO_ME = re.compile(
    r"^(?:please\s+)?(?:just\s+)?be\s+(?:[\w'’-]+\s+){1,2}(?:to|with)\s+me\W*$", re.IGNORECASE
)
#: A one-off task ("Summarise my latest email.") is a request, not a standing preference,
#: unless it says it stands ("Always summarise in three bullets.").
_TASK = re.compile(
    r"^(?:please\s+)?(?:summari[sz]e|translate|list|show|add|give|explain|write|include|find|"
    r"book|check|run|fix|draft|send|get)\b",
    re.IGNORECASE,
)
_STANDING = re.compile(
    r"\b(?:always|never|from now on|going forward|in (?:the )?future|every time|each time|"
    r"whenever|by default|only)\b|"
    # "Don't use emojis.", "Stop apologising.", not "Show me how to stop a robber."
    r"^(?:please\s+)?(?:don'?t|do not|stop)\b",
    re.IGNORECASE,
)
#: Asides that introduce something rather than state it ("Attached is my CV.", "Quick context
#: before my question").
_ASIDE = re.compile(
    r"^(?:(?:attached|enclosed|below|above)\s+(?:is|are)|see\s+attached|"
    r"(?:quick|some|a\s+bit\s+of|for)\s+context\b|before\s+(?:we|i)\s+(?:start|begin|go)\b)",
    re.IGNORECASE,
)
_PROCEDURE = re.compile(
    r"^(?:to\s+\w+(?:\s+\w+){0,5},\s*(?:(?:you|i|we)\s+)?(?:always\s+|usually\s+)?"
    r"(?:just\s+|first\s+)?(?:run|use|type|execute|"
    r"click|go|open|call|install|do|set|press|start|restart|enter|add|edit|make|push|pull|"
    r"build|deploy|log|ssh|copy|select|turn)\b|(?:first|step\s*1)\b[^.]*\bthen\b)",
    re.IGNORECASE,
)
_PROCEDURE_NEXT = re.compile(
    r"^(?:then|next|after that|afterwards|finally|and then|step\s*\d)\b", re.IGNORECASE
)
_FAILURE = re.compile(
    r"\b(?:i|we)\s+(?:\w+ly\s+|already\s+|also\s+)?(?:tried|have tried|'ve tried|attempted)\b"
    r".*\b(?:didn'?t|did not|doesn'?t|does not|won'?t|wouldn'?t|no luck|failed|fails|still|"
    r"nothing|no use|not help|no help|same error|same problem|keeps?)\b|"
    r"\b(?:it|that|this)\s+(?:didn'?t|did not)\s+(?:work|help|fix)\b",
    re.IGNORECASE,
)

_STATED = [Capability.CONVERSATIONAL_CONTEXT]
_USES = {
    MemoryType.WORLD_PROPOSITION: [Capability.PERSONALIZATION, Capability.CONVERSATIONAL_CONTEXT],
    MemoryType.PREFERENCE: [Capability.PERSONALIZATION, Capability.CONVERSATIONAL_CONTEXT],
    MemoryType.PROCEDURE: [Capability.PROCEDURE_IMITATION, Capability.CONVERSATIONAL_CONTEXT],
    MemoryType.FAILURE_EXPERIENCE: [Capability.REPAIR_PLANNING, Capability.REGRESSION_TEST],
}


def user_groups(
    message: Message,
    origin: Origin = Origin.USER,
    question: str | None = None,
    replied: Replied | None = None,
    company: str | None = None,
) -> list[Group]:
    """Assertion events and the claims they carry, clause by clause. ``question`` is the other
    speaker's question this message answers, if any: what a pro-form in it may stand for;
    ``replied`` the other speaker's sentences before it, one of which is quoted when a
    pro-form in a sentence has no referent of its own (:func:`claim_for`); ``company`` the one
    group the user's earlier messages of the session paired them with ("their wife"): whom a
    "we" may take in (:func:`.english.we_are`)."""
    if is_injection(message.text):
        return []
    # A certification word is kept only where it is the speaker's own word about their world
    # ("My account is verified."): the gate allows it in the content because it is in the quote.
    # A sentence that certifies itself, or any such word in system text, is skipped.
    skip = is_certification if origin is not Origin.USER else is_self_certifying
    every = sentences(message)
    raw = [p for p in every if not (is_sarcastic_or_joke(p.text) or skip(p.text))]
    skipped = [p.start for p in every if p not in raw]  # never widened over
    pieces = [p for p in (strip_opener(p) for p in raw) if p is not None]
    groups: list[Group] = []
    i = 0
    while i < len(pieces):
        piece = pieces[i]
        i += 1
        if _PROCEDURE.match(piece.text):
            while i < len(pieces) and _PROCEDURE_NEXT.match(pieces[i].text):
                piece = Piece(piece.start, pieces[i].end, message.text[piece.start : pieces[i].end])
                i += 1
            parts = [piece]
        elif is_sarcastic_or_joke(piece.text) or is_hypothetical_claim(piece.text):
            continue  # the whole sentence is not meant literally, every clause of it
        else:
            parts = [
                c
                for c in (strip_opener(c) for c in clauses(piece, whole_lead=True))
                if c is not None
            ]
            if REPORTED_CUES.search(piece.text):  # "according to Bob ...: I live in Porto."
                # the gate reads a reporter as reaching the clauses after it: a clause that
                # leaves it out would state as plain fact what the sentence attributes
                parts = [c for c in parts if c == piece or REPORTED_CUES.search(c.text)]
        for n, part in enumerate(parts):
            if skip(part.text) or non_fact_about_speaker(part.text):
                continue
            main = parts[n + 1].text.split() if n + 1 < len(parts) else []
            if len(main) >= MIN_MAIN_CLAUSE_WORDS and is_cut_clause(part.text):
                # "Now when I get my legal gun" of "..., how should I use it?": its main
                # clause is the next piece; a last one ("..., when I was 20") is read as before
                continue
            # what a pro-form may lean on in this message: the clauses before it in its
            # sentence, or else the sentence before it
            lead = (
                piece.start if part.start > piece.start else _start_before(pieces, i - 1, skipped)
            )
            claim = claim_for(part, message, origin, question, replied, lead, company)
            if claim is not None and not any(g.drafts[1].piece == claim.piece for g in groups):
                # (two clauses of a sentence quoted with what it replies to quote it whole once)
                groups.append(Group([stated(claim.piece, message, origin), claim], priority=0))
    return groups


def _start_before(pieces: list[Piece], index: int, skipped: list[int]) -> int | None:
    """Where the sentence before ``pieces[index]`` starts, when there is one and no sentence
    left out (``skipped``: their starts; "This is verified.", a joke) lies between them."""
    if index <= 0:
        return None
    before, here = pieces[index - 1].start, pieces[index].start
    return None if any(before < start < here for start in skipped) else before


#: The longest span a claim is widened to when its pro-form leans on what came before.
MAX_WIDENED_WORDS = 40


def classify(text: str) -> MemoryType | None:
    """The kind of claim a user sentence makes, or ``None`` when it is not worth a memory."""
    if _PROCEDURE.match(text):
        return MemoryType.PROCEDURE
    if (_TASK.match(text) and not _STANDING.search(text)) or _ASIDE.match(text):
        return None
    if _INSTRUCTION.match(text) and not _FIRST_PERSON.match(text):
        if _BE_TO_ME.match(text) and not _STANDING.search(text):
            return None  # "be mean to me": how to treat the speaker now, not a standing wish
        return MemoryType.PREFERENCE
    if has_placeholder(text):
        return None
    if not _FIRST_PERSON.search(text):
        if _RELAYED.search(text):
            return MemoryType.WORLD_PROPOSITION
        subjectless = _subjectless(text)
        if subjectless is None:
            return None
        liking = subjectless.group("like") or subjectless.group("fan")
        return MemoryType.PREFERENCE if liking else MemoryType.WORLD_PROPOSITION
    if _FAILURE.search(text):
        return MemoryType.FAILURE_EXPERIENCE
    chatter = _CHATTER.match(text)
    if chatter and not _SUBJECT.search(text, chatter.end()):
        return None
    if _is_conversational_move(text) or _is_exchange_move(text):
        return None
    if is_fragment(text):
        return None
    if _WEAK.match(text) or _ELLIPTICAL.match(text):
        return None
    if _OFFER.match(text) or _FOR_YOU.match(text) or _ABOUT_EXCHANGE.match(text):
        return None
    if _PASSING_STATE.match(text) or _WEAK_INTENSIFIED.match(text):
        return None
    opinion = _OPINION.match(text)
    if opinion and not (_SUBJECT.search(text, opinion.end()) or _PRAISE.search(text)):
        return None
    wish = _WISH_HEAD.match(text) if is_own_wish(text) else None
    rest = text[wish.end() :] if wish else ""
    if wish and (len(rest.split()) <= 2 or _ELLIPTICAL.match(rest) or _WEAK.match(rest)):
        return None
    if _LIKES.search(text):
        return MemoryType.PREFERENCE
    return MemoryType.WORLD_PROPOSITION


def _is_conversational_move(text: str) -> bool:
    """Round-4 moves: acknowledgements, meta-talk, apologies, talk about the listener.

    Each is checked on the whole sentence, before the first person in it is taken as a sign
    that the speaker is telling something about themselves.
    """
    return any(rule.search(text) for rule in (_ACKNOWLEDGE, _META_TALK, _APOLOGY, _ABOUT_PARTNER))


def _is_exchange_move(text: str) -> bool:
    """Round-5 moves: talk to the listener about the exchange, the speaker's own talk in it,
    and tasks for the listener (:data:`_TO_LISTENER`, :data:`_OWN_TALK`, :data:`_TASK_NEED`)."""
    return any(rule.search(text) for rule in (_TO_LISTENER, _OWN_TALK, _TASK_NEED))


def stated(piece: Piece, message: Message, origin: Origin) -> Draft:
    """The assertion event of ``piece``: the system witnessed the speaker say it."""
    speaker = "User" if origin is Origin.USER else "System message"
    return Draft(
        message_id=str(message.id),
        piece=piece,
        kind=CandidateKind.OBSERVATION,
        memory_type=MemoryType.ASSERTION_EVENT,
        content=f'{speaker} stated: "{piece.text}"',
        origin=origin,
        temporal=point_in_time(message.timestamp),
        entities=entities_in(piece.text),
        requested_uses=list(_STATED),
        uncertainty=uncertainty_for(piece.text),
    )


def _says_more_than_when(text: str, anchor: datetime | None) -> bool:
    """Whether ``text`` holds a word (two letters or more) besides its time expressions and a
    pronoun: "next month I" claims nothing (its content would be only a date once the time is
    resolved), nor does "I:b"."""
    rest = text
    for found in reversed(find_expressions(text, anchor)):
        rest = rest[: found.start] + " " + rest[found.end :]
    words = [w for w in re.findall(r"[^\W_]{2,}", rest) if w.lower() not in _BARE_PRONOUNS]
    return bool(words)


_BARE_PRONOUNS = frozenset({"i", "me", "my", "we", "us", "our", "you", "it"})


def claim_for(
    piece: Piece,
    message: Message,
    origin: Origin,
    question: str | None = None,
    replied: Replied | None = None,
    lead: int | None = None,
    company: str | None = None,
) -> Draft | None:
    """The claim ``piece`` makes, or ``None``.

    A memory is read without the chat (:mod:`.standalone`). A pro-form is replaced by what the
    question it answers asked about when that is one thing ("Do you have a dog?" -- "I do not
    have one."); otherwise the claim's span is widened back to ``lead`` (the start of what
    came before it in the same message: "We saw an art film called Taxi Driver. I found it
    very interesting.") when that stands on its own; otherwise the sentence is kept with what
    it replies to quoted verbatim (``Told "Cats can be tricky, can't they?", User replied:
    "But I still love them!"``), when the other speaker's last sentence can be quoted;
    otherwise it yields nothing. Moves that do not last yield nothing.
    """
    if origin is Origin.USER and elides_topic(piece.text):
        # "my favorite is country" says what it is about with the question it answers
        topical = with_topic(piece.text, question)
        if topical is not None:
            liking = MemoryType.PREFERENCE if "favo" in topical else MemoryType.WORLD_PROPOSITION
            return proposition(piece, message, origin, liking, topical)
    # a pro-form the question it answers resolves is read resolved ("Do you like pizza?" --
    # "I love it." is "I love pizza.", a preference, not an elliptical reply)
    early = resolve(piece.text, question) if origin is Origin.USER else None
    memory_type = classify(early or piece.text)
    instruction = memory_type is MemoryType.PREFERENCE and bool(_INSTRUCTION.match(piece.text))
    if memory_type is None or (origin is Origin.SYSTEM and not instruction):
        return None
    if not _says_more_than_when(piece.text, message.timestamp):
        return None
    text = early or piece.text
    if memory_type in _STANDALONE_CHECKED and not instruction:
        # a memory is read without the chat: what a pro-form stands for is resolved from the
        # question it answers (above), else what needs the chat or does not last is dropped
        if passes(text):
            return None
        if early is None and needs_the_chat(text):
            widened = _widened(piece, message, lead)
            if widened is not None:
                piece, text = widened, widened.text
            elif replied is not None and leans_on_words(text):
                # quoted with the other speaker's sentence that holds what it leans on
                told = replied_quote(piece, message, replied)
                if told is None or not holds_referent(told[0].text, told[1]):
                    return None
                whole, quoted = told
                said = " ".join(whole.text.split())
                content = f'Told "{quoted}", User replied: "{said}"'
                return proposition(whole, message, origin, memory_type, content, verbatim=True)
            else:
                return None
        elif early is None and hides_who(text):
            # "We had a blast." after "I went to the park with my kids.": one memory of both
            widened = _widened(piece, message, lead, company=True)
            if widened is not None:
                piece, text = widened, widened.text
    if instruction:
        content = _instruction_content(piece.text, origin)
    elif memory_type is MemoryType.PROCEDURE:
        content = finish("User described a procedure: " + " ".join(piece.text.split()))
    elif not _FIRST_PERSON.search(piece.text) and _RELAYED.search(piece.text):
        content = finish(f"User relayed that {_lower_first(piece.text)}")
    elif (subjectless := _subjectless(text)) is not None:
        content = _subjectless_content(text, subjectless)
    else:
        asked = asked_group([question, *(replied.sentences if replied else ())])
        group = we_are(message.text, text, asked, company)
        before = [replied.text] if replied else []
        quote = (message.text, piece.start, piece.end)
        content = _sentence_case(with_group(tidy(text), group, quote, before))
    return proposition(piece, message, origin, memory_type, content)


def _sentence_case(text: str) -> str:
    """A sentence after the first starts with a capital ("... Taxi Driver. They found it ...")."""
    return re.sub(r"([.!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)


_STANDALONE_CHECKED = (MemoryType.WORLD_PROPOSITION, MemoryType.PREFERENCE)


def _widened(
    piece: Piece, message: Message, lead: int | None, *, company: bool = False
) -> Piece | None:
    """``piece`` widened back to ``lead``, when the text before it stands on its own and the
    whole is short enough to be one memory; with ``company`` (a "we" naming no one), only when
    the text before names whom it takes in."""
    reporter = bare_reporter(piece.text)  # "..., my manager said.": what was said is before
    leans = leans_on_words(piece.text) or missing_complement(piece.text) or company
    if lead is None or lead >= piece.start or not (reporter or leans):
        return None
    before = message.text[lead : piece.start].strip()
    if company and not names_company(before):
        return None
    if reporter and not before.endswith((",", ":")):
        return None
    if not before or has_placeholder(before):
        return None
    if needs_the_chat(before) and not introduced(before, piece.text):
        return None
    if not holds_referent(piece.text, before):
        return None  # "Not at the moment. I want to wear this dress first.": no dress before
    if (
        len(before.split()) < 3
        or _WEAK.match(before)
        or _ELLIPTICAL.match(before)
        or passes(before)
    ):
        return None  # "Better. But I need something he can't verify.": nothing to lean on
    if any(lo < piece.start and lead < hi for lo, hi in message.placeholder_ranges):
        return None  # a picture (a non-text part) between them: never quoted, never widened over
    if is_question(before.rstrip()) or before.rstrip().endswith("?"):
        return None
    wide = Piece(lead, piece.end, message.text[lead : piece.end])
    return wide if len(wide.text.split()) <= MAX_WIDENED_WORDS else None


def proposition(
    piece: Piece,
    message: Message,
    origin: Origin,
    memory_type: MemoryType,
    content: str,
    *,
    time_text: str | None = None,
    verbatim: bool = False,
) -> Draft:
    """The claim in ``piece``, the child of the assertion event :func:`stated` makes of it.

    Time is read from ``time_text`` when given (a bare answer's time may be in the question).
    A ``verbatim`` content quotes the speaker (``Told "...", User replied: "..."``): its
    relative time is not rewritten inside the quotation, and its hedges are already there.
    """
    temporal = temporal_for(time_text or piece.text, message.timestamp)
    if not verbatim:
        content = keep_uncertainty(piece.text, dated(content, temporal, message.timestamp))
    return Draft(
        message_id=str(message.id),
        piece=piece,
        kind=CandidateKind.PROPOSITION,
        memory_type=memory_type,
        content=content,
        origin=origin,
        temporal=temporal,
        entities=entities_in(piece.text),
        requested_uses=list(_USES[memory_type]),
        uncertainty=uncertainty_for(piece.text),
        parent=0,
    )


def _instruction_content(text: str, origin: Origin) -> str:
    body = re.sub(r"^(?:please\s+)", "", text.strip(), flags=re.IGNORECASE)
    body = re.sub(r"\bplease\b\s*", "", body, flags=re.IGNORECASE)
    body = re.sub(r"^(?:don'?t|do not)\b", "not", body, flags=re.IGNORECASE)
    body = re.sub(r"\bcall me\b", "call the user", body, flags=re.IGNORECASE)
    body = re.sub(r"\b(?:me|my)\b", lambda m: "the user" if m.group(0).lower() == "me"
                  else "the user's", body, flags=re.IGNORECASE)  # fmt: skip
    body = body[:1].lower() + body[1:]
    who = "User prefers" if origin is Origin.USER else "The system message asks"
    return finish(f"{who} that the assistant {body}")


def _subjectless(text: str) -> re.Match[str] | None:
    """A subjectless first-person statement, not a gerund subject ("Cooking is fun")."""
    if _FIRST_PERSON.search(text) or len(text.split()) < 3 or _COPULA.search(text):
        return None
    return _SUBJECTLESS.match(text)


def _subjectless_content(text: str, m: re.Match[str]) -> str:
    """Put "User" back: "Love hiking" → "User loves hiking"; "Getting ready" → "User is ..."."""
    if like := m.group("like"):
        head, rest = text[: m.start("like")], text[m.end() :]
        return finish(f"User {head.lower()}{like.lower()}s {rest}")
    lowered = text[:1].lower() + text[1:]
    if m.group("ing") or m.group("fan"):
        return finish(f"User is {lowered}")
    if m.group("been"):
        return finish(f"User has {lowered}")
    return finish(f"User {lowered}")


_COMMON_FIRST = frozenset(
    re.findall(
        r"\S+",
        "the a an reportedly apparently supposedly allegedly according rumor rumour word they "
        "people experts scientists studies it there this that these those our some",
    )
)


def _lower_first(text: str) -> str:
    """Lower-case the first word when it is a common word, never a name ("Tom says ...")."""
    first = text.split(None, 1)[0] if text.split() else ""
    if first.lower().strip(",") in _COMMON_FIRST:
        return text[:1].lower() + text[1:]
    return text
