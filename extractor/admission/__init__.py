"""Admission: the deterministic write gate between validated candidates and persistent memory.

The policy is data (:func:`load_policy` reads a TOML or JSON file; ``None`` loads the shipped
default, ``extractor/policies/default.toml``) interpreted by a small engine (:func:`admit`).
No model is involved and the clock is never read, so the same candidate under the same policy
version and as-of time always gets a byte-identical decision (canonical JSON), and stored
candidates can be re-admitted under another policy (:func:`replay`) to see exactly which
decisions change and why.
"""

from .engine import UNHASHED_FIELDS, admit, decide, input_hash
from .explain import reason_of, with_reasons
from .facts import default_as_of
from .personal import PersonalData, third_party_personal_data
from .policy import (
    DEFAULT_DENY,
    Effect,
    Match,
    Policy,
    PolicyDocument,
    Rule,
    TemporalStatus,
    load_policy,
    parse_policy,
)
from .replay import DecisionChange, FieldChange, ReplayReport, RuleChange, iter_results, replay

__all__ = [
    "DEFAULT_DENY",
    "UNHASHED_FIELDS",
    "DecisionChange",
    "Effect",
    "FieldChange",
    "Match",
    "PersonalData",
    "Policy",
    "PolicyDocument",
    "ReplayReport",
    "Rule",
    "RuleChange",
    "TemporalStatus",
    "admit",
    "decide",
    "default_as_of",
    "input_hash",
    "iter_results",
    "load_policy",
    "parse_policy",
    "reason_of",
    "replay",
    "third_party_personal_data",
    "with_reasons",
]
