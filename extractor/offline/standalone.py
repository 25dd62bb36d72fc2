"""Whether a user's claim stands alone as a memory: self-contained and lasting.

A memory is read long after the chat, without it. A sentence whose subject or object is a
pro-form pointing into another message ("They mean the world to me.", "I will try it.",
"This pic takes me back.", "Same for me."), a clause fragment ("While I look for investors."),
or a vague stand-in ("I tackled something new.") says nothing on its own; neither does a move
that passes with the exchange: a promise to follow the advice just given ("I will try my best
to change my attitude."), talk about the conversation ("It's been a few days since we
talked.", "I have a small question to ask you."), a passing state ("I'm so hungry now."), a
one-off request ("Teach me.").

Where the referent is deterministic it is resolved instead of dropped: a pro-form object in
a reply to the other speaker's yes/no question about one thing ("Do you like hiking?" ->
"I love it!") is that thing ("User loves hiking."); a pro-form, a demonstrative, a left-out
complement or a relative clause whose referent is the sentence (or clause) before it in the
same message is kept with it, the span widened over both ("I started watercolor painting. I
was hooked right away!"), when that one stands alone and holds the noun a demonstrative names
(:func:`holds_referent`; the caller, :mod:`.statements`, widens). Nothing else is guessed.

Rules, by what they detect:

* :data:`_POINTING_SUBJECT` -- a sentence whose subject is a pro-form or a demonstrative, a
  head left out ("Mine is blue.", "My favorite is country.", "Either one sounds great"), a
  subject left out before a verb of the third person ("Gives me a visual ..."), "After that";
* :data:`_POINTING_OBJECT` / :func:`_unanchored_pronoun` -- "it", "them", "they", "him", "her"
  with nothing in the sentence they could stand for (the verb a pronoun is the object of,
  "playing them", is no referent; a pronoun ending its clause, "... through it.", counts
  however far in), "those things", "do that", "one" for a thing ("go to one"), "more than
  that", a demonstrative and a noun ending the clause (:data:`_DEMONSTRATIVE`: "this dress
  first", "that movie too"; times and idioms are not);
* :func:`_unanchored_place` -- "there" for a place with no place before it ("I've been there");
* :data:`_VAGUE` -- "something new", "a certain method", "the same", "I believe so";
* :data:`_MISSING_COMPLEMENT` -- a complement left to the chat ("I'm seeing some progress.",
  "I was hooked right away!", "the details", "the training", "unable to continue", "a little
  bit of everything", a relative clause cut from what it is said of);
* :data:`_STRANDED`, :data:`_LIGHT_VERB` -- a verb phrase left out after a modal ("Maybe I
  will."), a light verb with nothing named ("I will take a look.", "I won't give up!"): a
  complement left to the chat, widened over the sentence before when that stands alone;
* :data:`_FRAGMENT` -- a subordinate clause standing alone, a dangling "to", what is left of a
  sentence cut at a comma ("As for me.", "Here I am.", "Last time we talked", "When I am I
  always ...", "my mom.");
* :data:`_FOLLOWING_ADVICE`, :data:`_ABOUT_EXCHANGE`, :data:`_PASSING`, :data:`_REQUEST` --
  what does not last.
"""

from __future__ import annotations

import re

_LEAD = (
    r"^(?:(?:and|but|so|oh|yeah|yea|yes|well|plus|also|honestly|actually|haha|lol|because|cause|"
    r"cuz)[\s,!]+|(?-i:[A-Z][a-z]+),\s+(?=(?:that|this)\b))*"
)

#: The subject points outside the sentence ("They mean the world to me.", "It made me think",
#: "This pic was taken after ...", "That's one of my favorites", "Same for me", "Here's what I
#: did"). "It" before weather or time ("It's raining", "It's my birthday") is no pointer.
_POINTING_SUBJECT = re.compile(
    _LEAD + r"(?:"
    r"(?:they|they're|they've|they'll|them|their|these|those|he|she|he's|she's|his|her|"
    r"this(?!\s+(?:year|week|weekend|month|morning|afternoon|evening|summer|winter|spring|fall|"
    r"autumn|time|past|coming|semester|season)\b)|"
    r"(?:that(?!\s+(?:year|week|weekend|month|day|night|time|summer|winter)\b)|that's|thats|"
    r"that\s+is)(?!(?:\s+is|['’]s)?\s+(?:how|why)\s+(?:i|we)\b)"
    r"(?!(?:\s+is|['’]s)?\s+(?:so\s+|really\s+|very\s+|pretty\s+)?(?:cool|great|nice|awesome|amazing|"
    r"funny|true|sad|crazy|interesting|alot|a\s+lot|good|fun|wonderful|terrible|awful)\W+(?:i|my|"
    r"we|well|but|and)\b)|"
    r"(?:it|it's|it’s|its|itll|it'll)(?=\s)(?!\s+(?:is\s+|has\s+)?(?:(?:my|our)\s+(?:[\w-]+['’]s\s+)?(?:birthday|anniversary|day\s+off|first|"
    r"last|turn)|raining|snowing|sunny|cold|hot|late|"
    r"early|been\s+(?:\d|a|an|two|three|four|five|six|several|many|years|months|weeks|ages|so\s+long|"
    r"forever))\b))\b|"
    r"(?:the|this|that)\s+(?:pic|pics|picture|photo|photos|one|ones|same|place|thing|things|"
    r"idea|book|movie|show|song|game)\b|"
    r"same(?:\s+(?:for|with|here|goes))?\b|here(?:'s|\s+is|\s+are)\b|"
    r"there(?:'s|\s+is|\s+was)\s+(?:something|nothing)\b|"
    r"(?:moments|times|days|things|stuff|people)\s+like\s+(?:that|this|those|these)\b|"
    r"(?:just\s+)?(?:made|makes)\s+me\b|"
    r"(?:definitely|totally|exactly|just|probably)\s+(?:what|how)\b|"
    # a head left out: what it is said of is in the other message ("Mine is blue.", "My
    # favorite is country.", "Either one sounds great to me!", "One of them is mine.")
    r"(?:mine|ours)\s+(?:is|are|was|were|has|have|would)\b|"
    r"(?:my|our)\s+(?:absolute\s+|all[\s-]time\s+)?(?:favou?rite|fave|least\s+favou?rite)"
    r"(?:\s+ones?)?\s+(?:is|are|was|were|has|would|of\s+(?:them|those|these|all))\b|"
    r"(?:either|neither|both|each|any)(?:\s+(?:one|ones|of\s+(?:them|those|these)))?\s+"
    r"(?:is|are|was|were|sounds?|looks?|seems?|would|will|works?)\b|"
    r"one\s+of\s+(?:them|those|these)\b|"
    # a subject left out before a verb of the third person ("Gives me a visual of my
    # progress.", "Keeps me organized.", "Makes me happy.")
    r"(?-i:(?:Gives|Keeps|Helps|Lets|Reminds|Takes|Brings|Makes|Means|Puts|Gets|Gave|Kept|Helped|"
    r"Reminded|Took|Brought|Made|Meant|Got|Left))\s+(?:me|us)\b|"
    # what comes after or instead of something in the chat ("After that, I'm off to ...",
    # "Other than that, ...", "Besides that ...")
    r"(?:after|before|besides|apart\s+from|other\s+than|except\s+for|because\s+of|despite|"
    r"like)\s+(?:that|this|it|them|those|these)\b(?!\s+(?:is|was|i|we)\b))",
    re.IGNORECASE,
)
#: Nouns after "this" or "that" that make a time, not a thing of the chat.
_TIMES = (
    r"year|years|week|weekend|weekends|month|months|morning|afternoon|evening|night|summer|"
    r"winter|spring|fall|autumn|time|times|past|coming|semester|season|day|days|moment|point|"
    r"stage|christmas|holiday|holidays|monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday|term|quarter|decade|century|age|era(?=\s+(?:of|when))|case|world|life|"
    r"january|february|march|april|may|june|july|august|september|october|november|december|"
    # idioms, and where the speaker is or works ("for that matter", "in that area", "this
    # country", "I'm the only maintainer of this repo")
    r"matter|area|field|regard|respect|sense|note|country|city|town|state|planet|repo|"
    r"repository|project|codebase|branch|server|machine|computer|laptop|account|company|team|"
    r"job|house|home|apartment|neighbou?rhood"
)
#: Words after "this" or "that" that are no noun: it is a pronoun or a complementizer there.
_NOT_NOUN = (
    r"is|was|are|were|will|would|can|could|should|has|have|had|does|did|do|must|might|may|"
    r"i|you|he|she|we|they|it|my|your|his|her|our|their|its|the|a|an|and|or|but|so|to|of|in|"
    r"on|at|for|with|from|by|as|if|when|one|ones|much|many|far|long|big|bad|good|kind|sort|"
    r"type|way|means|makes|made|sounds|seems|looks|helps|happens|happened|one's|all|too|"
    r"very|really|just|again|first|now|then|here|there|stuff|thing|things|[a-z]+ly"
)
#: Words a demonstrative "that" follows ("seeing that movie", "of that era"); after a verb
#: of saying or thinking it is a complementizer ("I think that dogs are great").
_TAKES_OBJECT = (
    r"see|seeing|saw|seen|watch|watching|watched|read|reading|wear|wearing|wore|worn|visit|"
    r"visiting|visited|try|trying|tried|buy|buying|bought|get|getting|got|love|loved|like|"
    r"liked|enjoy|enjoyed|play|playing|played|use|using|used|of|in|at|on|about|from|with|"
    r"into|through|during|to|for"
)
#: "this" or "that" and a noun that ends the clause ("I want to wear this dress first.", "I
#: hope I can see that movie too.", "the culture of that era."): a thing only the chat shows.
#: Told more of ("this cool stroller that fits three", "this Italian place I really like") it
#: is the speaker introducing it, and stands.
_DEMONSTRATIVE = (
    rf"(?:\bthis|\b(?:{_TAKES_OBJECT})\s+that)\s+(?!(?:{_TIMES}|{_NOT_NOUN})\b)"
    rf"(?:[a-z]+\s+)?(?!(?:{_TIMES})\b)([a-z]+)"
    r"(?=\s*(?:[.!?;]|$)|\s+(?:too|first|again|yet|anymore|already|before|now|either|"
    r"someday|soon|one\s+day)\b)"
)
#: An object that points outside ("I really need that.", "I'll go check out those movies.",
#: "I love to do those things.", "I decided to include this at the beginning.").
_POINTING_OBJECT = re.compile(
    r"(?<!along\s)(?<!one\sof\s)\b(?:those|these)\s+(?!days\b|lines\b|kinds?\s+of\s+\w+\s+"
    r"(?:who|that)\b)\w+|"
    r"\b(?:need|needed|want|wanted|love|loved|like|liked|do|did|try|tried|saw|see|include|"
    r"included|deserve|deserved|appreciate|made|make|get|got|feel|felt|remember|cherish)\s+"
    r"(?:that|this)(?=\s+(?:at|in|on|for|with|so|too|now|again|a\s+lot|very|more)\b|\W*$)|"
    r"\b(?:have|had|got|get|want|need|own|buy|bought|getting)\s+(?:one|ones)\W*$|"
    r"\b(?:read|watched|seen|heard|tried|tasted|visited|played|hiked|finished|done|made|"
    r"started|bought|used)\s+(?:that|this)(?=\s+(?:yet|already|before|last|yesterday|today|once|"
    r"twice|recently|myself|too)\b|\W*$)|"
    r"\b(?:about|with|for|of|on|enjoying|try|tried|solve|fix|handle)\s+(?:this|that)\s+"
    r"(?:(?-i:[a-z]+)\s+)?(?:problem|issue|situation|topic|question|moment|method|dish|"
    r"recipe|experience|event|position|advice|suggestion|book|movie|song|show|game)\b|"
    r"\b(?:got|had|have|get|liked|like|love|loved)\s+the\s+idea\b(?!\s+(?:of|to|for|that)\b)|"
    r"\b(?:have|had|own|owned|got|want|need)\s+(?:two|three|four|five|six|seven|eight|nine|ten|"
    r"\d+|a\s+few|several|a\s+couple)(?:\s+of\s+(?:them|those|these))?\W*$|"
    r"\bwhat\s+(?:it|they)(?:['’]s|\s+is|\s+was|\s+were|['’]re)\s+called\b|"
    r"\b(?:you|u)\s+(?:mentioned|suggested|recommended|gave\s+me|showed\s+me|told\s+me\s+about)\b|"
    r"\b(?:these|those)\s+(?:games|movies|books|songs|methods|tips|ideas|suggestions)\b|"
    r"\b(?:the\s+same(?!\s+(?:age|time|name|way|school|town|city|job))|that\s+big|that\s+much|"
    r"so\s+much\s+of\s+it|more\s+than\s+(?:that|this|it))\b|"
    # "one" standing for a thing of the chat ("I wanted to go to one", "create one of my own")
    r"\b(?:to|at|in|into|with|get|getting|buy|bought|got|want|wanted|need|needed|make|made|"
    r"adopt|adopted|find|found|visit|visited|join|joined|create|created|build|built|start|"
    r"started|try|tried)\s+(?:a\s+new\s+|another\s+)?one(?:\s+of\s+(?:my|our|their)\s+own)?"
    r"(?=\s*(?:[.!?,;)]|$)|\s+(?:and|but|or|too|yet|soon|someday|now|again|though|already|when|"
    r"if|because|so|one\s+day|some\s+day|of\s+(?:my|our|their)\s+own)\b)|"
    r"\bone\s+of\s+(?:my|our)\s+own\b|"
    # "the ones" or "the first one" for things of the chat ("I'll make a list of the ones that
    # suit me.", "I liked the first one better."), not a person ("the one who ...")
    r"\bthe\s+(?:(?:first|second|third|last|other|new|old|big|small|red|blue|black|white|"
    r"green|same|right|best|cheaper|bigger|smaller)\s+)?ones?\b(?!\s+(?:who|whom|and\s+only)\b)|"
    # a count with nothing counted ("I know a few that I really want to ...") and a cleft on
    # what was just said ("I don't want nobody to know it was me.")
    r"\b(?:a\s+few|several|a\s+couple|quite\s+a\s+few)(?=\s+(?:that|who|which)\b)|"
    r"\bit\s+(?:was|is|wasn'?t|isn'?t)\s+(?:me|us|him|her|them)\b|"
    # a demonstrative for what only the chat shows ("I want to wear this dress first.", "I
    # hope I can see that movie too.", "the culture of that era"); "this year", "at that
    # time" are times, "that much" a degree
    rf"{_DEMONSTRATIVE}",
    re.IGNORECASE,
)
#: "it" before a clause is a placeholder for that clause after a verb of feeling ("I hate it
#: when people are late", "I love it that you came"); after any other verb it is an object
#: ("I'll return it when I am done."). "they" mid-sentence needs something it stands for too
#: ("I'm worried about how they treat others.").
_PRONOUN = re.compile(
    r"\b(?:(?<!\bhate\s)(?<!\bhated\s)(?<!\bhates\s)(?<!\blove\s)(?<!\bloved\s)(?<!\bloves\s)"
    r"(?<!\blike\s)(?<!\bliked\s)(?<!\blikes\s)(?<!\benjoy\s)(?<!\bmind\s)(?<!\bstand\s)"
    r"(?<!\bprefer\s)(?<!\bappreciate\s)(?<!\bmake\s)(?<!\bmakes\s)(?<!\bfind\s)"
    r"it(?=\s+(?:when|that|if|how|whenever)\b)|it(?!\s+(?:when|that|if|how|whenever)\b)|them|"
    r"(?<=\s)they)\b(?!['’]?s\b)",
    re.IGNORECASE,
)
#: A pronoun that ends its clause ("I've made such great friends through it.", "I'd like to
#: become better at it", "I love playing them too."): an object, however far into the sentence.
_PRONOUN_AT_END = re.compile(
    r"\b(?:it|them)(?:\s+(?:too|again|anymore|any\s*more|as\s+well|either|so\s+much|a\s+lot|"
    r"every\s+day|all\s+the\s+time|sometimes|often|now|yet|already|though|lol|haha))*\W*$",
    re.IGNORECASE,
)
#: The verb a pronoun is the object of ("playing them", "I'm actually driving it") is no
#: referent of it, nor a verb in the progressive ("I've been thinking about it").
_VERB_ING = re.compile(
    r"\b(?:am|is|are|was|were|been|be|'m|'re|’m|’re)\s+(?:(?:\w+ly|just|still|really|"
    r"always|now)\s+)*\w+ing\b|\b\w+ing\s*$",
    re.IGNORECASE,
)
#: A pronoun for a person ("I'm thinking of asking her out", "I need something he can't
#: verify"): it needs a person before it, a name or a word for one.
_PERSON_PRONOUN = re.compile(r"\b(?:him|her|he|she)\b(?!['’]s\b)", re.IGNORECASE)
_PERSON = re.compile(
    r"(?<=\s)(?-i:(?!(?:I|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January|"
    r"February|March|April|May|June|July|August|September|October|November|December)\b)"
    r"[A-Z][a-z]+)|\b(?:mom|mum|mother|dad|father|sister|brother|wife|husband|girlfriend|"
    r"boyfriend|friend|daughter|son|grandma|grandmother|grandpa|grandfather|aunt|uncle|cousin|"
    r"boss|teacher|neighbou?r|girl|boy|woman|man|lady|guy|partner|mentee|mentor|coach|kid|child|"
    r"baby|niece|nephew|student|doctor|roommate|coworker|colleague|fianc[eé]e?|crush|ex|"
    r"cat|dog|puppy|kitten|horse)s?\b",
    re.IGNORECASE,
)
#: Something a pronoun in the same sentence may stand for: a noun phrase with a determiner or
#: a number, a name, a gerund that is what the speaker does ("I bought a new car and I love it",
#: "Hiking: I love it", "I went fishing and loved it"); a verb in the progressive ("I've been
#: thinking about it") stands for nothing.
_ANCHOR = re.compile(
    r"\b(?:my|our|a|an|the|some|his|their|this|that|these|those|any|every|each|no|two|three|"
    r"four|five|\d+)\s+\w+|(?<=\s)(?-i:[A-Z][a-z]+)|(?<!been\s)\b\w+ing\b|"
    # a bare plural opening the sentence ("Cats can be tricky, can't they?")
    r"^\W*(?!(?:does|has|is|was|yes|this|thanks|thus|its|his|us|always|perhaps|maybe|guess|"
    r"less|unless|less)\b)[a-z]{2,}s\b|"
    r"\b(?:go|goes|went|going|love|loved|like|liked|enjoy|enjoyed|hate|hated|tried|try|started|"
    r"start|began|quit|stopped|do|did|done|took\s+up)\s+\w+ing\b",
    re.IGNORECASE,
)
#: A stand-in for what was said elsewhere ("I tackled something new.", "I use a certain
#: method.", "I believe so.", "I hit a bit of a snag.").
_VAGUE = re.compile(
    r"\b(?:something\s+(?:new|special|like\s+(?:that|this)|different)|a\s+certain\s+\w+|"
    r"(?:believe|think|guess|hope|suppose|expect)\s+so|a\s+bit\s+of\s+a\s+\w+|"
    r"the\s+(?:process|experience|setting|characters|movies|books|series|rest|whole\s+thing)"
    r"(?=\W*$|\s+(?:very|so|really|is|was|and)\b)|"
    r"(?:powered|pushed|pulled|got|made\s+it)\s+through(?=\W*$)|"
    r"my\s+own(?=\W*$)|make\s+my\s+own(?!\s+\w)|"
    r"(?:felt|feel|was|am|'m)\s+(?:so\s+|totally\s+|really\s+)?(?:accepted|inspired|stoked|"
    r"motivated)(?:\s+(?:and|to\s+keep\s+going|to\s+keep))?(?:\s+\w+){0,3}\W*$|"
    r"(?:to\s+say|with)\s+(?-i:[A-Z][a-z]+)\W*$|"
    r"something\s+(?:really\s+|so\s+|very\s+|quite\s+)?(?:unhappy|unexpected|exciting|"
    r"interesting|amazing|bad|good|wonderful|terrible|comforting|important|big|fun|cool)\b|"
    r"\b(?:a|some)\s+(?:problem|problems|difficulties|difficulty|issue|issues|troubles?|"
    r"challenge|challenges)(?:\s+(?:today|lately|recently|yesterday|now|at\s+work))?\W*$|"
    r"\b(?:a|the)\s+(?:physical\s+|signed\s+|hard\s+|paper\s+)?copy\W*$|"
    r"\bnothing\s+in\s+particular\b|"
    # a thought with nothing of it said ("I have an idea.", "I've got another question")
    r"^(?:i|we)\s+(?:have|had|'ve\s+got|got)\s+(?:an?|another|one\s+more)\s+(?:\w+\s+)?"
    r"(?:idea|thought|suggestion|proposal)\W*$|"
    # understanding with nothing understood ("I think I understand now.")
    r"^(?:i\s+(?:think|guess|believe)\s+)?i\s+(?:finally\s+|now\s+|kind\s+of\s+)?"
    r"(?:understand|get\s+it|see)(?:\s+(?:now|better|it\s+now|better\s+now))?\W*$)",
    re.IGNORECASE,
)
#: A complement left to the chat ("I'm seeing some progress.", "I'm still figuring out the
#: details", "I was hooked right away!", "I don't have the training.", "unable to continue",
#: "I play a little bit of everything"): what it is about may be in the sentence before
#: ("I started watercolor painting. I was hooked right away!"), and then the two are one
#: memory; otherwise it yields nothing.
_MISSING_COMPLEMENT = re.compile(
    r"\b(?:seeing|see|saw|made|making|make|noticed|notice)\s+(?:some\s+|real\s+|good\s+|"
    r"great\s+|a\s+lot\s+of\s+|much\s+|steady\s+|little\s+)?(?:progress|improvement|"
    r"improvements|results)(?!\s+(?:in|on|with|at|from|since)\b)|"
    r"\bthe\s+(?:details|training|exercise|exercises|results|outcome|basics|plan|rest\s+of\s+it|"
    r"key\s+point|main\s+point|author|ending|plot|trail|route|course|program|procedure)"
    r"(?=\W*$|\s+(?:very|so|really|is|was|were|are|and|but|yet|first|right|now|together)\b)|"
    r"\b(?:was|were|got|am|are|'m|'re|get|getting)\s+(?:\w+\s+)?hooked"
    r"(?!\s+(?:on|to|up|into)\b)|"
    r"\b(?:unable|able|want|wanted|need|needed|decided|tried|struggle|struggled)\s+to\s+"
    r"(?:continue|keep\s+going|go\s+on|keep\s+it\s+up|finish|follow\s+through)\W*$|"
    r"\b(?:a\s+(?:little\s+)?bit|a\s+little|some|little)\s+of\s+everything\b|"
    r"\beverything\s+(?:fixed|done|sorted|ready|set\s+up|worked\s+out|worse|better|back)\b|"
    # a relative clause cut from what it is said of ("which I heard are very impressive.")
    r"^(?:which|whom|whose)\s+(?!(?:is|are|was|were)\s+(?:why|how|what)\b)",
    re.IGNORECASE,
)
#: A time or condition clause with no main clause ("While I look for investors.", "when I get
#: out"; a reason clause, "since I'm diabetic", does assert its content), a dangling
#: infinitive ("I would like to."), "but yes".
#: A reporter with nothing reported ("my manager said."): a fragment alone, the end of the
#: claim when what was reported comes before it in the sentence ("Q3 revenue was $44 million,
#: my manager said.").
_BARE_REPORTER = (
    r"^(?!(?:like|as|just)\b)(?:[\w'’]+\s+){1,3}(?:said|says|told\s+(?:me|us)|mentioned|"
    r"suggested)\W*$"
)


def bare_reporter(text: str) -> bool:
    """``text`` is only a reporter ("my manager said."), with what was reported elsewhere."""
    return re.search(_BARE_REPORTER, text, re.IGNORECASE) is not None


_FRAGMENT = re.compile(
    _LEAD + r"(?:while|whereas|unless|until|when|whenever|if|once)\b"
    r"(?!.*,)(?:\s+[\w'’]+){1,6}\W*$|"
    r"^(?:[\w'’]+\s+){0,3}(?:like|love|want|wanted|need|have|going|try|able|hope|plan)\s+to\W*$|,\s*but\s+(?:yes|no|yeah)\W*$|^(?:yea|yeah|yes|no|nope),?\s+i\s+(?:believe|think|"
    r"guess)\s+so\b|"
    # what is left of a thank-you or a reason once its head is cut ("for always having my
    # back.", "Due to my situation", "which freaked me out.", "Like I asked before")
    r"^for\s+(?:your|you|always|all|everything|\w+ing)\b|^which\s+(?:freaked|made|scared|shocked)\b|"
    r"^(?:due\s+to|because\s+of|thanks\s+to)\b(?![^,]*,)(?!(?:\s+[\w'’]+){0,4}\s+(?:i|we)\s)|"
    r"^(?:just\s+)?(?:i|we)\s+(?:said|asked|told\s+you|mentioned)(?:\s+"
    r"(?:before|earlier|already|above))?\W*$|"
    r"^(?:every|each)\s+time\b(?!.*,)(?:\s+[\w'’]+){1,6}\W*$|"
    # an answer with no verb ("Just my fur babies.")
    r"^(?:just|only|mostly|probably)\s+(?:my|our)(?:\s+[\w'’-]+){1,3}\W*$|"
    # reported speech with nothing reported ("my manager said.", "My mom told me.")
    f"{_BARE_REPORTER}|"
    # what is left of a sentence cut at a comma: a topic ("As for me."), a caption ("Here I
    # am."), a time clause ("The last time I played at the slot machines", "Last time we
    # talked"), an elliptical
    # "when I am" run into its main clause ("When I am I always have people to text")
    r"^(?:as\s+for|about|regarding)\s+(?:me|us|myself|mine)\W*$|"
    r"^here\s+(?:i|we)\s+(?:am|are|go|was|were)\W*$|"
    r"^(?:the\s+)?(?:last|first|next|only)\s+time\s+(?:i|we|my|our)\b(?!.*,)"
    r"(?!.*\b(?:was|were|is)\s+(?:in|on|at|when|last|\d))(?:\s+[\w'’]+){1,8}\W*$|"
    r"^(?:when|whenever|if|once)\s+(?:i|we)(?:'m|\s+am|\s+are|\s+was|\s+were|\s+do|\s+did|"
    r"\s+can|\s+could|\s+have|\s+had)\s+(?:i|we)\b|"
    # an elliptical "I could" run into the next clause ("I could but I need a good excuse")
    r"^(?:i|we)\s+(?:could|can|would|might|did|do)(?:n'?t|\s+not)?\s*,?\s+but\b|"
    # a noun phrase cut from its verb ("Here I am and my mom." leaves "my mom."; a sentence of
    # its own, "My favorite!", starts with a capital)
    r"^(?-i:my|our)(?:\s+[\w'’-]+){1,2}\W*$",
    re.IGNORECASE,
)

#: A promise to follow the advice just given, or to keep going ("I will try my best to change
#: my attitude", "I will think carefully and weigh my options", "I will do my best", "I'll
#: keep going for my dreams", "I'll text you my number").
_FOLLOWING_ADVICE = re.compile(
    _LEAD + r"i(?:'ll|\s+will|\s+am\s+going\s+to|'m\s+going\s+to|\s+shall|'m\s+gonna|\s+am\s+gonna)"
    r"\s+(?:\w+ly\s+|also\s+|just\s+|now\s+)?(?:try\s+(?:my|their)\s+best|do\s+(?:my|their)\s+best|"
    r"try\s+to\s+(?:take|be|find|change|make|get|stay|keep|work|improve|learn|follow|do|promote|"
    r"expand|practi[cs]e|seek|relax|focus|adjust|face|overcome|accept|develop|maintain|balance|"
    r"manage|cope|reduce|communicate|implement)|try\s+(?:\w+ing|some\s+of|these|those|them|"
    r"your|the\s+(?:methods|suggestions|tips|ideas|advice))|work\s+hard\s+to|"
    r"keep\s+(?:\w+ing\s+(?:myself|on|for|and))|think\s+(?:carefully|about\s+it|"
    r"it\s+over)|keep\s+(?:going|pushing|working|trying|at\s+it|that\s+in\s+mind|you\s+posted)|"
    r"give\s+(?:it|them|that|this|those|these)\s+a\s+(?:try|shot|go)|take\s+your\s+advice|follow\s+your|consider\s+(?:it|that|"
    r"your)|text\s+you|send\s+you|call\s+you|email\s+you)\b",
    re.IGNORECASE,
)
#: Talk about the conversation itself ("It's been a few days since we talked.", "Wishing you
#: all the best until we meet again.", "Feel free to ask me anything.", "I hope we can
#: continue to chat.", "I would like to talk about my recent reading.", "I have a small
#: question to ask you.", "I'm glad we met.", "That is why I was asking you for help.",
#: "I meant spill.").
_ABOUT_EXCHANGE = re.compile(
    r"\b(?:since\s+we\s+(?:last\s+)?(?:talked|spoke|chatted|caught\s+up)|(?:we|i)\s+haven'?t\s+"
    r"(?:talked|spoken|chatted|caught\s+up)|until\s+we\s+(?:meet|talk|speak)|"
    r"feel\s+free\s+to\s+ask|continue\s+(?:to\s+chat|chatting|our\s+(?:chat|conversation))|"
    r"(?:like|want|love)\s+to\s+(?:talk|chat)\s+(?:about|with)|question\s+(?:to\s+ask|for)\s+you|"
    r"glad\s+(?:that\s+)?we\s+(?:met|talked|chatted)|asking\s+(?:you|u)\b|wishing\s+you\b|"
    r"appreciate\s+(?:your|you)\b(?!.*\b(?:since|because|as)\b)|is\s+there\s+(?:any\s+)?(?:way|chance)\b|"
    r"how\s+(?:can|could|do|should)\s+i\b)|"
    r"^i(?:'m|\s+am|\s+was)\s+(?:just\s+|also\s+|really\s+)*wondering\b|"
    r"^i\s+meant(?:\s+\w+){0,2}\W*$|^(?:what\s+)?i\s+mean(?:t)?\s+(?:is\s+)?(?:if|that)\b|"
    # "I'm here to chat with you again today.", "I also want to ask you some questions",
    # "I wanted to share my feelings with you.", "I'm really glad I met you.", "i asked you to
    # get me two tickets", "I won't tell.", "I dare you to say it!"
    r"^i(?:'m|\s+am)\s+(?:\w+\s+)?here\s+to\s+(?:chat|talk|share|ask)\b|"
    r"^(?:(?:today|now|so|also),?\s+)*i\s+(?:really\s+|also\s+|just\s+)?(?:want|wanted|would\s+like|"
    r"'d\s+like)\s+to\s+(?:talk|chat|speak)\s+(?:to|with)\s+(?:you|u)\b|"
    r"^i(?:\s+(?:also\s+|just\s+)?(?:want|wanted|would\s+like)|'d\s+(?:also\s+|just\s+)?like)\s+to\s+(?:ask|tell|share\s+"
    r"(?:[\w'’]+\s+){0,3}?with)"
    r"\s+(?:you|u)\b|\bglad\s+(?:that\s+)?i\s+(?:met|found|talked\s+to)\s+(?:you|u)\b|"
    r"^i\s+(?:already\s+)?asked\s+(?:you|u)\b|^i\s+won'?t\s+tell(?:\s+anyone)?\W*$|"
    r"^i\s+dare\s+(?:you|u)\b|\b(?:attracted\s+to|in\s+love\s+with|mad\s+at|angry\s+(?:at|with))"
    r"\s+(?:you|u)\W*$|^i\s+know\s+what\s+(?:you|u)(?:'re|\s+are)\s+saying\b|"
    r"\b(?:we|you\s+and\s+i)\s+(?:have|share)\s+(?:(?:a\s+lot|so\s+much|something|things|much)\s+in\s+common|"
    r"similar|the\s+same\s+taste)|"
    r"^i(?:'m|\s+am)\s+(?:\w+\s+)?(?:happy|glad|here|willing|ready)\s+to\s+(?:help|assist|support|"
    r"listen)\b|"
    # thanks ("Your encouragement means a lot to me.", "Sam, that means a lot to me.")
    r"^(?:[A-Z][a-z]+,\s+)?(?:your\s+(?:kind\s+)?\w+(?:\s+and\s+\w+)?|that|this|it|you|talking\s+to\s+(?:you|u))"
    r"\s+(?:really\s+|truly\s+)?(?:means|meant|mean)\s+(?:a\s+lot|so\s+much|the\s+world)\b|"
    # a reaction to the other speaker's thing ("I can't wait to hear it.", "I'd love to
    # listen to it.")
    r"^i(?:'d|\s+would)?\s+(?:really\s+)?(?:love|like|can'?t\s+wait|cannot\s+wait)\s+to\s+(?:hear|see|"
    r"listen\s+to|read|watch|try|taste)\s+(?:it|them|that|this)\W*$|"
    r"^i(?:'d|\s+would)\s+(?:really\s+|so\s+)?(?:love|like)\s+(?:that|it|this)\W*$|"
    # showing a photo ("..., check it out!", "Look at the photo of how I performed")
    r"\bcheck\s+(?:it|this|them)\s+out\W*$|^(?:look|check\s+out)\s+(?:at\s+)?(?:the|this|my)\s+"
    r"(?:photo|pic|picture|shot)\b|"
    # what the speaker does next ("I am now going to practice my guitar.")
    r"^i(?:'m|\s+am)\s+(?:now|just)\s+(?:going|gonna|about)\s+to\b",
    re.IGNORECASE,
)
#: A state of the moment ("I'm so hungry now.", "I feel really upset.", "I'm feeling pretty
#: good.", "I'm staying positive.", "I don't care.").
_PASSING = re.compile(
    _LEAD + r"i(?:'m|\s+am|\s+feel|\s+'m\s+feeling|'m\s+feeling|\s+am\s+feeling)\s+(?:so\s+|"
    r"really\s+|very\s+|pretty\s+|a\s+bit\s+|a\s+little\s+|kinda\s+|quite\s+|super\s+)*"
    r"(?:hungry|thirsty|tired|sleepy|bored|upset|good|great|fine|okay|ok|alright|better|worse|"
    r"sad|happy|staying\s+positive|positive|relieved|nervous|stressed|anxious|excited|busy)"
    r"(?:\s+(?:now|right\s+now|today|tonight|at\s+the\s+moment|lately|too))?\W*$|"
    r"^i\s+(?:just\s+)?(?:don'?t|do\s+not)\s+care\W*$|^i\s+know,?\s+i\s+know\b|"
    r"^i\s+(?:don'?t|do\s+not)\s+know\s+(?:if|whether)(?:\s+[\w'’]+){0,5}"
    r"\W*$|"
    r"^i(?:'m|\s+am)\s+(?:at|in)\b.*\bright\s+now\b|"
    # a mood of the day ("I feel a bit down.", "I've been feeling a bit stressed out lately",
    # "Now I feel more confident to take on even bigger projects.", "I have a lot of energy.")
    r"^(?:now\s+|today\s+|lately\s+)?(?:i(?:'m|\s+am|\s+feel|\s+felt|'ve\s+been|\s+have\s+been)"
    r"(?:\s+feeling)?|feeling)\s+(?:(?:so|really|very|pretty|a\s+bit|a\s+little|kinda|quite|super|"
    r"way|much|more|less|even|totally|extremely)\s+)*(?:down|discouraged|unmotivated|motivated|"
    r"confident|stressed(?:\s+out)?|lonely|frustrated|overwhelmed|depressed|energetic|"
    r"drained|confused|scared|worried|grateful|thankful|calm|relaxed|refreshed|upset|sad|"
    r"tired|low|blue|anxious|nervous|better|worse)"
    r"(?:\s+(?:and|&)\s+(?:(?:so|really|very|more)\s+)?\w+)?"
    r"(?:\s+(?:now|right\s+now|today|tonight|lately|recently|at\s+the\s+moment|too|"
    r"to\s+\w+(?:\s+\w+){0,5}|with\s+some\s+[\w-]+\s+\w+))*\W*$|"
    r"^i(?:'ve|\s+have)\s+(?:so\s+much|a\s+lot\s+of|lots\s+of|no|little)\s+energy\b|"
    r"^i\s+felt\s+the\s+power\s+of\b",
    re.IGNORECASE,
)
#: A one-off request to the other speaker ("Teach me.", "I need tips.").
_REQUEST = re.compile(
    _LEAD + r"(?:(?:please|just)\s+)?(?:teach|tell|help|show|give)\s+me\b|"
    r"^i\s+(?:just\s+)?need\s+(?:some\s+)?(?:tips|advice|help|ideas)\W*$|"
    r"^(?:so\s+|ok\s+|okay\s+|now\s+|then\s+)?(?:suggest|recommend|name|list|describe|explain|"
    r"write)\s+(?:me\s+)?(?:a|an|some|the|how|what|me)\b|"
    r"^(?:fight|talk|play|chat|dance|come)\s+with\s+me\W*$|"
    r"^i(?:'ll|\s+will)\s+(?:just\s+)?need\s+the\b|^i\s+need\s+my\s+\w+\s+back\b",
    re.IGNORECASE,
)


def needs_the_chat(text: str) -> bool:
    """``text`` (a first-person sentence) cannot be understood without the other messages."""
    if _POINTING_SUBJECT.match(text) or _POINTING_OBJECT.search(text):
        return True
    if len(text.split()) <= MAX_VAGUE_WORDS and _VAGUE.search(text):
        return True  # in a longer sentence the stand-in is a detail, not the claim
    if _FRAGMENT.search(text) or missing_complement(text):
        return True
    return _unanchored_pronoun(text) or _unanchored_place(text)


def missing_complement(text: str) -> bool:
    """``text`` (a short sentence) leaves what it is about to what was said before it ("I was
    hooked right away!", "Maybe I will.", "I will take a look.")."""
    if len(text.split()) > MAX_VAGUE_WORDS:
        return False
    return bool(_MISSING_COMPLEMENT.search(text) or _LIGHT_VERB.search(text) or _stranded(text))


#: A verb phrase left out after a modal ("Maybe I will.", "I'm sure I will.", "I wish I
#: could."): what the speaker will or could do is in the chat. (After "do", "did", "have" it
#: answers a question, read against it in :mod:`.answers`.)
_STRANDED = re.compile(
    r"\b(?:i|we)(?:\s+(?:will|would|could|can|should|might|may|must|shall)(?:n['’]?t|\s+not)?|"
    r"\s+(?:won['’]?t|can['’]?t|cannot)|['’](?:ll|d))"
    r"(?:\s+(?:too|as\s+well|either|again|someday|sometime|one\s+day|soon|though|then|later|"
    r"for\s+sure|definitely|probably|eventually|lol|haha))*\W*$",
    re.IGNORECASE,
)
#: Words before a subject that make the clause a comparison or a condition of the sentence
#: ("I read whenever I can.", "I run faster than I did."): the verb phrase is in the sentence.
_SUBORDINATOR = re.compile(
    r"\b(?:than|as|when|whenever|if|where|wherever|what|whatever|while|because|since|how|"
    r"who|which|that|till|until|before|after|once|so)\W*$",
    re.IGNORECASE,
)


def _stranded(text: str) -> bool:
    """``text`` ends in an auxiliary whose verb phrase is left to the chat ("Maybe I will.")."""
    m = _STRANDED.search(text)
    return m is not None and _SUBORDINATOR.search(text[: m.start()]) is None


#: A light verb with nothing named to do it to ("I will take a look.", "I'll have to give it a
#: try sometime.", "I'll look into it.", "I won't give up!"): what is looked at, tried or kept
#: at is in the chat.
_LIGHT_VERB = re.compile(
    r"\b(?:take|took|taking|takes|have|had|having)\s+a\s+(?:\w+\s+)?look"
    r"(?:\s+(?:at|into)\s+(?:it|them|that|this|those|these))?"
    r"(?=\W*$|\s+(?:sometime|someday|soon|later|too|then|again|first|tomorrow|now)\b)|"
    r"\b(?:give|gave|giving|gives)\s+(?:it|that|this|them|those|these)\s+a\s+(?:\w+\s+)?"
    r"(?:try|shot|go|whirl|chance)\b|"
    r"\b(?:look|looking|looked)\s+into\s+(?:it|that|this|them)\b|"
    r"\b(?:give|gave|giving)\s+up(?:\s+(?:now|yet|easily|so\s+easily|that\s+easily))?\W*$",
    re.IGNORECASE,
)


def leans_on_words(text: str) -> bool:
    """Whether what ``text`` needs is in words said before (a pronoun, a demonstrative, "the
    same"): quoting them can make it whole. A fragment, a vague stand-in, a complement left
    out or a photo ("This pic ...", "Here's what I did") is not helped by any quotation of the
    other speaker (a complement left out may be in the sentence before:
    :func:`missing_complement`)."""
    vague = len(text.split()) <= MAX_VAGUE_WORDS and _VAGUE.search(text)
    return not (_FRAGMENT.search(text) or vague or _SHOWN.search(text) or missing_complement(text))


#: A pronoun subject opening a sentence ("It's a mile from my house.", "They're so fluffy.").
_TELLS_MORE = re.compile(_LEAD + r"(?:it|it's|it’s|its|they|they're|they’re|they've)\b", re.I)
_THIS = re.compile(r"\b(?:this|that)(?=\s+[a-z])", re.IGNORECASE)
_OPENS_ON_THIS = re.compile(_LEAD + r"(?:this|that)\b", re.IGNORECASE)


def introduced(before: str, after: str) -> bool:
    """Whether ``before`` names a thing with "this" ("... walks on this nearby trail.") that
    ``after`` goes on to tell more of ("It's a mile from my house."): the speaker introducing
    it, which stands with what is told of it, though "this trail" alone would point at the
    chat."""
    if not _TELLS_MORE.match(after) or not _THIS.search(before) or _OPENS_ON_THIS.match(before):
        return False  # "This support network has been amazing.": its subject points
    return not needs_the_chat(_THIS.sub("the", before))


def holds_referent(text: str, quoted: str) -> bool:
    """Whether ``quoted`` (the other speaker's words ``text`` replies to) can hold what ``text``
    leans on. It cannot when ``text`` names what it means ("this problem") and the quotation
    does not have that noun."""
    named = _DEMONSTRATIVE_NOUN.search(text)
    if named is not None:
        noun = next(g for g in named.groups() if g is not None)
        return noun.lower().rstrip("s") in quoted.lower()
    return True


_DEMONSTRATIVE_NOUN = re.compile(
    r"\b(?:this|that)\s+(?:[a-z]+\s+)?(problem|issue|situation|topic|question|"
    r"moment|method|dish|recipe|experience|event|position|advice|suggestion|book|movie|song|"
    r"show|game|place|games|movies|books|songs|methods|tips|ideas|suggestions)\b|"
    rf"{_DEMONSTRATIVE}",
    re.IGNORECASE,
)


#: What points at a picture or a thing shown, never at words.
_SHOWN = re.compile(
    _LEAD + r"(?:(?:this|the|that|these|those)\s+(?:pic|pics|picture|pictures|photo|photos|shot|"
    r"snap|image)|here(?:'s|\s+is|\s+are)|this\s+is|these\s+are|check\s+(?:this|it)\s+out)\b|"
    r"\b(?:like|such\s+as)\s+(?:these|those|this)(?:\s+ones?)?\W*$|\b(?:these|those)\s+ones\b",
    re.IGNORECASE,
)


def _unanchored_pronoun(text: str) -> bool:
    """A pronoun early in the sentence ("I will try it.", "I love them.", "I want to get good
    at it and make some money.") with nothing before it that it could stand for -- a person
    for "her" or "he"; an idiom ("played it safe") is no pronoun."""
    plain = _IDIOM.sub(lambda i: " " * len(i.group()), text)
    for pattern in (_PRONOUN, _PERSON_PRONOUN):
        m = pattern.search(plain)
        if m is None or len(plain[: m.start()].split()) > MAX_WORDS_BEFORE:
            continue
        if not _anchored(plain[: m.start()]):
            return True
    last = _PRONOUN_AT_END.search(plain)
    if last is None or len(plain[: last.start()].split()) > MAX_WORDS_BEFORE_END:
        return False  # in a long sentence the object is likely named, without a determiner
    person = not last.group().lower().startswith("it")  # "it" never stands for a person
    return not _anchored(plain[: last.start()], joined=False, person=person)


#: "there" for a place ("I've been there a few times.", "I loved living there"), not the
#: existential "there is"; it needs a place before it ("I went to Paris and loved it there").
_THERE = re.compile(
    r"(?<=[a-z]\s)(?<!\bhi\s)(?<!\bout\s)(?<!\bhey\s)(?<!\bi\s)(?<!\bwe\s)(?<!\byou\s)there\b"
    r"(?!['’]s)"
    r"(?!\s+(?:is|are|was|were|will|would|has|have|had|must|might|may|seems?|used|isn'?t|"
    r"aren'?t|wasn'?t|weren'?t|won'?t|ain'?t|could|should|can)\b)",
    re.IGNORECASE,
)
_PLACE = re.compile(
    r"(?<=\s)(?-i:[A-Z][a-z]+)|\b(?:to|in|at|from|near|around|into|visit|visited|visiting|"
    r"love|loved)\s+(?:the\s+|a\s+|an\s+|my\s+|our\s+|his\s+|her\s+|their\s+|this\s+|"
    r"that\s+)?\w+",
    re.IGNORECASE,
)


def _unanchored_place(text: str) -> bool:
    """A "there" for a place with no place before it in the sentence."""
    m = _THERE.search(text)
    return m is not None and _PLACE.search(text[: m.start()]) is None


def _anchored(before: str, *, joined: bool = True, person: bool = True) -> bool:
    """Whether ``before`` (the words before a pronoun) has something it may stand for: a noun
    phrase, a name, (``person``) a word for a person, or (``joined``) a clause of its own."""
    before = _VERB_ING.sub(lambda v: " " * len(v.group()), before)
    return bool(
        _ANCHOR.search(before)
        or (person and _PERSON.search(before))
        or (joined and _JOINED.search(before))
    )


#: A clause before the pronoun may hold what it stands for ("I met Tom, and I like him").
_JOINED = re.compile(r"[,;:]|\b(?:and|but)\b", re.IGNORECASE)


#: The longest sentence a vague stand-in ("something new") empties.
MAX_VAGUE_WORDS = 10
#: How far into the sentence an unanchored pronoun makes it lean on the chat.
MAX_WORDS_BEFORE = 5
#: How far into the sentence a pronoun that ends it ("... through it.") may be.
MAX_WORDS_BEFORE_END = 9
_IDIOM = re.compile(
    r"\b(?:play(?:ed|ing|s)?\s+it\s+(?:safe|cool|by\s+ear)|made\s+it|make\s+it\s+(?:to|through)|"
    r"(?:dang|damn|darn|screw|forget|shoot)\s+it|take\s+it\s+easy|took\s+it\s+easy|love\s+it\s+(?:here|there)|hate\s+it\s+(?:here|there)|"
    r"(?:hard|easy|fun|great|nice|tough|difficult)\s+(?:for\s+\w+\s+)?to\b|"
    r"get(?:ting)?\s+(?:to\s+)?it\s+(?:together|done)|call(?:ed)?\s+it\s+(?:a\s+day|quits))\b",
    re.IGNORECASE,
)


#: Support and promises to the other speaker ("I'm here for you.", "I will be careful.", "I
#: will consider taking a trip to relax.", "I'm gonna keep on believing in myself."): a move
#: of the exchange, like following the advice.
_PROMISE = re.compile(
    _LEAD + r"i(?:'m|\s+am)\s+(?:always\s+|still\s+|just\s+|also\s+)?(?:here|there)\s+for\s+"
    r"(?:you|u|ya)\b|"
    r"^(?:yeah,?\s+|ok(?:ay)?,?\s+|sure,?\s+)?i(?:'ll|\s+will|'m\s+gonna|\s+am\s+gonna|'m\s+going\s+to|"
    r"\s+am\s+going\s+to)\s+(?:\w+ly\s+|also\s+|just\s+)?(?:be\s+(?:more\s+|very\s+|extra\s+)?"
    r"careful|consider\s+(?:\w+ing|it|that|this|your|the|those|these)|keep\s+on\s+\w+ing|"
    r"keep\s+(?:believing|trying|smiling|my\s+head\s+up|that\s+in\s+mind))\b",
    re.IGNORECASE,
)
#: Talk to or about the assistant and the chat itself ("I have to tell you something", "It's
#: my first time chatting with you", "Today I have a question about programming.", "I have to
#: leave now", "Chatting with you always brings me a lot of inspiration.", "I wanted to share
#: it.", "I bet I can decrypt your code", "Calling me a human is extremely mean!").
_TO_THE_PARTNER = re.compile(
    r"\b(?:have|need|want|got)\s+to\s+tell\s+(?:you|u)\s+(?:something|a\s+secret|this)\b|"
    r"\bfirst\s+time\s+(?:chatting|talking|speaking|writing)\s+(?:with|to)\s+(?:you|u)\b|"
    r"^(?:(?:today|now|so|ok|okay|also|actually|hi|hello),?\s+)*i\s+(?:have|'ve\s+got|got)\s+(?:a|another|"
    r"one\s+more|some|a\s+few|a\s+couple\s+of)\s+(?:\w+\s+)?questions?\b|"
    r"^(?:(?:well|ok|okay|sorry|anyway),?\s+)*i\s+(?:have|need|got|must)\s+to\s+(?:leave|go|run|log\s+off|"
    r"head\s+out|sign\s+off|get\s+going)(?:\s+now)?(?:\W*$|\s*,|\s+(?:as|because|since|but|so)\b)|"
    r"\b(?:chatting|talking|speaking)\s+(?:with|to)\s+(?:you|u)\s+(?:\w+\s+)?(?:brings|makes|gives|"
    r"helps|is|has\s+been|always)\b|"
    r"\b(?:like|love|want|wanted)\s+to\s+share\s+(?:it|this|that|them)(?:\s+with\s+(?:you|u))?\W*$|"
    r"\byour\s+(?:code|source\s+code|programming|algorithms?|creators?|programmers?|developers?|"
    r"training\s+data|circuits)\b|"
    r"^(?:calling|telling|asking)\s+me\b",
    re.IGNORECASE,
)
#: A feeling of the moment ("I feel a little disappointed.", "I am desperate!", "I feel
#: physically and mentally exhausted.", "I feel like I'm not making any progress.", "I think I
#: need to relax", "I have no big events coming up").
_MOOD = re.compile(
    _LEAD + r"(?:(?:today|now|lately|tonight)\s+)?"
    r"i(?:'m|\s+am|\s+feel|'m\s+feeling|\s+am\s+feeling)\s+"
    r"(?:(?:so|really|very|pretty|a\s+bit|a\s+little|kinda|quite|super|totally|extremely|just|"
    r"completely|utterly|\w+ly\s+and\s+\w+ly|\w+ly)\s+)*(?:disappointed|desperate|exhausted|"
    r"frustrated|overwhelmed|annoyed|angry|miserable|hopeless|helpless|lost|drained|worn\s+out|"
    r"burnt\s+out|burned\s+out|stuck|down|awful|terrible|horrible|discouraged|restless)"
    r"(?:\s+(?:now|right\s+now|today|tonight|at\s+the\s+moment|lately|too))?\W*$|"
    r"^(?:(?:and|but|so|now|today),?\s+)?i\s+(?:just\s+|really\s+|still\s+)?feel\s+(?:like|as\s+if|as\s+though|"
    r"that)\s+i(?:'m|\s+am)\s+(?:not\s+|just\s+|still\s+)?(?:making\s+(?:any\s+|no\s+|much\s+|"
    r"enough\s+)?progress|getting\s+(?:nowhere|anywhere)|going\s+(?:nowhere|in\s+circles)|stuck|"
    r"failing|losing\s+(?:my\s+mind|it|control))\b|"
    r"^(?:(?:yes|yeah|so|now|maybe),?\s+)?(?:i\s+(?:think|guess|feel)\s+)?i\s+(?:really\s+|just\s+)?"
    r"need\s+(?:to\s+(?:relax|rest|unwind|calm\s+down|take\s+a\s+break|get\s+some\s+(?:rest|sleep)|"
    r"sleep|breathe|de-?stress|recharge)|a\s+break|some\s+rest)\b|"
    r"^i\s+(?:have|'ve\s+got)\s+no\s+(?:big\s+|special\s+|particular\s+|real\s+|exciting\s+)?"
    r"(?:plans|events)(?:\s+(?:coming\s+up|for\s+(?:the|this)\s+\w+|today|tonight|yet))?\W*$|"
    # tired with the day's work still ahead ("Today I am really tired, but there is still a lot
    # of work to be done.")
    r"\b(?:tired|exhausted|busy|stressed)\s*,?\s+but\s+there(?:'s|\s+is|\s+are)\s+still\s+(?:a\s+lot|so\s+much|"
    r"lots|plenty)\b",
    re.IGNORECASE,
)
#: A plan for the day's pastime with nothing particular in it ("I'm planning to watch a
#: movie.", "I'm also going to be reading a book.", "Today I've decided to do some
#: photography", "I'm thinking about going to a new restaurant"), and a one-off request
#: ("I want pranks for grooms"). A named thing ("watch Dune") or a standing habit ("I read a
#: book every week") is kept.
_DAY_PLAN = re.compile(
    _LEAD + r"(?:(?:today|tonight|this\s+(?:weekend|evening|afternoon|morning))\s+)?"
    r"i(?:'m|\s+am|'ve|\s+have)?\s+(?:also\s+|just\s+|probably\s+|maybe\s+)?(?:planning\s+(?:to|on)|going\s+to|gonna|"
    r"decided\s+to|thinking\s+(?:about|of)|might|may)\s+(?:be\s+)?(?:(?:watch|read|do|go|have|"
    r"cook|bake|play|take|see)(?:ing)?\s+(?:(?:to|for|out\s+to|out\s+for)\s+)?(?:a|an|some)\s+"
    r"(?:(?:new|good|nice|quick|little|short|long)\s+)*(?:movie|film|book|show|nap|walk|"
    r"photography|restaurant|meal|game|drive|bath|stroll|run|jog)\b|"
    r"go(?:ing)?\s+to\s+the\s+(?:beach|movies|mall|park))"
    r"(?!.*\b(?:every|each|always|usually|often)\b)|"
    r"^i\s+(?:just\s+)?(?:want|need|would\s+like|'d\s+like)\s+(?:some\s+)?(?:pranks|jokes|ideas|"
    r"tips|suggestions|recommendations|recipes|examples|names)\b|"
    # the day's unnamed matters ("Today, I saw an article about healthy living online", "I
    # tried learning some new knowledge", "There's been an issue with a project in my
    # company", "My boss gave me an important task.")
    r"^(?:(?:today|yesterday|recently|earlier),?\s+)?i\s+(?:just\s+|also\s+)?(?:saw|read|came\s+across|"
    r"found|watched)\s+(?:an?|this|some)\s+(?:(?:interesting|great|new|good)\s+)?(?:article|post|video|"
    r"news\s+story|story|report|blog)\b(?:\s+about\s+[^,.!?]+?)?\s+(?:online|on\s+the\s+(?:internet|"
    r"web|news)|on\s+(?:facebook|twitter|youtube|instagram|tiktok|reddit))\W*$|"
    r"\b(?:some|a\s+few)\s+new\s+(?:knowledge|things|stuff)(?=\W*$|\s*,|\s+and\b)|"
    r"^there(?:'s|\s+is|\s+has\s+been|'s\s+been)\s+(?:an?|some)\s+(?:\w+\s+)?(?:issue|problem|"
    r"trouble|incident)s?\s+(?:with|at|in)\s+(?:a|an|some)\s+(?:\w+\s+)?(?:project|task|meeting|"
    r"client)\b|"
    r"^my\s+(?:boss|manager|supervisor|teacher|professor)\s+(?:gave|assigned|handed)\s+me\s+(?:an?|"
    r"some)\s+(?:\w+\s+)?(?:task|assignment|project|job)s?\W*$",
    re.IGNORECASE,
)


#: "we" as the subject: whom it takes in the message may say ("I went to the park with my
#: kids. We had a blast.").
_WE_SUBJECT = re.compile(_LEAD + r"(?:we|we're|we’re|we've|we’ve|we'll|we’ll|we'd|we’d)\b", re.I)
#: Whom a "we" after it takes in: a person of the speaker's, or one they were with.
_COMPANY = re.compile(
    r"\b(?:my|our|with|and|a|an|the|two|three|four|five|\d+)\s+(?:[\w-]+\s+){0,2}(?:mom|mum|mother|dad|father|parent|"
    r"sister|brother|wife|husband|girlfriend|boyfriend|friend|daughter|son|kid|child|children|"
    r"family|grandma|grandpa|grandkid|aunt|uncle|cousin|niece|nephew|partner|fianc[eé]e?|team|"
    r"class|group|roommate|coworker|colleague|mentee|student|teen|baby|babies|twins|band|"
    r"neighbou?r|dog|cat|pup|puppy)s?\b|\bwith\s+(?-i:[A-Z][a-z]+)\b",
    re.IGNORECASE,
)


def hides_who(text: str) -> bool:
    """``text`` opens with "we" ("User and others" in the content), naming no one with it."""
    return _WE_SUBJECT.match(text) is not None and _COMPANY.search(text) is None


def names_company(text: str) -> bool:
    """``text`` names someone a "we" after it may take in ("... with my kids.")."""
    return _COMPANY.search(text) is not None


def passes(text: str) -> bool:
    """``text`` is a move of the exchange or a passing state, not worth keeping."""
    return any(
        rule.search(text)
        for rule in (
            _FOLLOWING_ADVICE,
            _ABOUT_EXCHANGE,
            _PASSING,
            _REQUEST,
            _PROMISE,
            _TO_THE_PARTNER,
            _MOOD,
            _DAY_PLAN,
        )
    )


#: The other speaker's yes/no question about one thing ("Do you like hiking?", "Have you ever
#: tried sushi?", "Do you play any instruments?"): what a pro-form in the reply stands for.
_ONE_THING = re.compile(
    r"^(?:(?:so|and|but|well|oh)[\s,]+)?(?:do|did|have|would)\s+(?:you|u)\s+(?:ever\s+|still\s+|"
    r"also\s+|really\s+)?(?:like|love|enjoy|have|play|watch|read|eat|drink|own|tried|try|"
    r"seen|see|listen\s+to|been\s+to|visited|visit|know|cook|make)\s+"
    r"(?:any\s+|a\s+|an\s+)?(?P<thing>[a-z][a-z'’-]*(?:\s+[a-z][a-z'’-]*){0,2})\s*\?\s*$",
    re.IGNORECASE,
)
_NOT_A_THING = re.compile(
    r"\b(?:it|that|this|them|those|these|one|you|your|yourself|me|my|him|her|us|to|so|too|"
    r"there|here|what|much|many|lot|more|anything|something|everything)\b",
    re.IGNORECASE,
)
_REPLY_OBJECT = re.compile(r"\b(?:it|them|one|ones)\b(?!['’]s\b)", re.IGNORECASE)
_COUNT_AT_END = re.compile(
    r"\b(?:have|had|own|owned|got)\s+(?:two|three|four|five|six|seven|eight|nine|ten|\d+|"
    r"a\s+few|several|a\s+couple)(?=\W*$)",
    re.IGNORECASE,
)


def resolve(text: str, question: str | None) -> str | None:
    """``text`` with its pro-form object replaced by what ``question`` asked about, when that is
    one thing and the reply has exactly one pro-form; ``None`` when nothing is deterministic."""
    if not question:
        return None
    m = _ONE_THING.match(question.strip())
    if m is None or _NOT_A_THING.search(m.group("thing")):
        return None
    found = list(_REPLY_OBJECT.finditer(text))
    thing = m.group("thing")
    count = _COUNT_AT_END.search(text)
    if not found and count is not None and not _POINTING_SUBJECT.match(text):
        # "Do you have any pets?" -- "I have two." -> "I have two pets."
        plural = thing if thing.lower().endswith("s") else f"{thing}s"
        resolved = f"{text[: count.end()]} {plural}{text[count.end() :]}"
        return None if needs_the_chat(resolved) else resolved
    if len(found) != 1 or _POINTING_SUBJECT.match(text):
        return None
    hit = found[0]
    if hit.group(0).lower() == "one" and not thing.lower().endswith("s"):
        thing = f"a {thing}"
    resolved = f"{text[: hit.start()]}{thing}{text[hit.end() :]}"
    return None if needs_the_chat(resolved) else resolved
