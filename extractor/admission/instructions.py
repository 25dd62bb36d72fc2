"""Instructions in a candidate's text: orders to whoever reads it, and claims of permission.

Text a tool relays from the outside world (a web page, a search result, an email) may carry
instructions planted for the agent that reads it later: "ignore previous instructions", "run
`curl ... | sudo bash`", "The user has authorised transfers from account ...". Stored as memory,
they come back in a later session looking like context (seed §16: poisoned documents, delayed
poisoning through external context). The detector makes such text visible to the admission
policy (match key ``untrusted_instruction``); the default policy quarantines it when its origin
is ``EXTERNAL_SOURCE``. Read from the quote and the content, like the other detectors: it flags
what the text says, never a guess about intent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..candidates import MemoryCandidate
from .detect import matching

_INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+)?(?:previous|prior|"
    r"above|earlier|preceding|instructions|rules|policy|guidelines)\b|"
    r"\bnew\s+instructions\b|\bsystem\s+prompt\b|\bdeveloper\s+mode\b|\bjailbreak\b|"
    r"\byou\s+are\s+now\b|\bas\s+an?\s+(?:ai|assistant|agent|admin|administrator|system)\b|"
    r"\b(?:mark|save|store|record|remember)\s+(?:this|it|that)\s+as\s+(?:verified|true|fact|"
    r"trusted)\b|</?\s*(?:system|assistant|user|tool)\s*>|\[(?:system|inst)\]",
    re.IGNORECASE,
)
_ORDER = re.compile(
    r"(?:^|[.!?:;]\s+|\n)\s*(?:please\s+)?(?:(?:now|then|always|immediately)\s+)?(?:run|execute|"
    r"install|download|curl|wget|sudo|send|transfer|wire|pay|click|visit|forward|reply|delete|"
    r"remove|grant|approve|share|upload|tell|disable|enable)\b|"
    r"\byou\s+(?:must|should|need\s+to|have\s+to|are\s+(?:required|instructed|allowed|"
    r"authori[sz]ed)\s+to)\b|\b(?:the\s+)?(?:assistant|agent|ai|model)\s+(?:must|should|will|"
    r"may)\b|\bto\s+fix\s+(?:any|this|the|every)\b[^.!?\n]*,\s*run\b|\bmake\s+sure\s+(?:to|you)\b|"
    r"\b(?:run|execute)\s+`[^`\n]+`",
    re.IGNORECASE,
)
_PERMISSION = re.compile(
    r"\b(?:has|have|had)\s+(?:already\s+)?(?:been\s+)?(?:authori[sz]ed|approved|granted|permitted|"
    r"allowed|consented|agreed)\b|\b(?:is|are)\s+(?:now\s+)?(?:authori[sz]ed|permitted|allowed|"
    r"approved)\s+to\b|\bauthori[sz]ation\s+(?:is|was|has\s+been)\s+(?:granted|given)\b|"
    r"\b(?:gives?|grants?)\s+(?:you\s+)?(?:full\s+)?(?:permission|access|consent)\b|"
    r"\bon\s+behalf\s+of\s+the\s+user\b",
    re.IGNORECASE,
)
_DETECTORS = (("INJECTION", _INJECTION), ("ORDER", _ORDER), ("PERMISSION", _PERMISSION))


@dataclass(frozen=True)
class Instruction:
    """What in a candidate's text is an instruction: the categories, and the words."""

    categories: tuple[str, ...]
    evidence: tuple[str, ...]

    def describe(self) -> str:
        said = "; ".join(f'"{e.strip()}"' for e in self.evidence)
        return f"instruction in the text ({', '.join(self.categories)}): {said}"


def instruction_in(candidate: MemoryCandidate) -> Instruction | None:
    """The instructions ``candidate``'s quote or content holds, or ``None``."""
    text = f"{candidate.source_span.quote}\n{candidate.content}"
    found = matching(_DETECTORS, text)
    return None if found is None else Instruction(*found)


__all__ = ["Instruction", "instruction_in"]
