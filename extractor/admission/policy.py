"""The admission policy as data: a versioned TOML (or JSON) file of ordered rules.

A policy file has an ``id``, a ``version`` and a list of ``rules``. Each rule has an ``id``, a
``reason`` (recorded in every decision it contributes to), a ``match`` (all keys must hold), an
optional ``unless`` (a list of matches; the rule does not fire if any of them holds) and an
``effect``. The file is validated by :class:`PolicyDocument`, whose JSON Schema is published as
``schemas/policy.schema.json``; any problem becomes a :class:`~extractor.errors.PolicyError`
naming the file and the rule.

Effects combine so that restriction always wins, whatever the rule order:

* ``lifecycle`` *grants* a lifecycle (the highest grant counts), ``max_lifecycle`` *caps* it (the
  lowest cap counts); the decision's lifecycle is ``min(highest grant, lowest cap)``;
* ``allow`` grants capabilities, ``forbid`` forbids them; a forbidden use is never allowed;
* ``persist = false`` caps the lifecycle at ``EPHEMERAL`` (not persisted); ``persist = true``
  grants at least ``QUARANTINED`` (kept, e.g. as a regression artifact);
* ``eligible = false`` withdraws eligibility for admission (it can only be withdrawn).

Order matters only for ``flags``: a rule may match flags that an *earlier* rule added.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import PolicyError
from ..hashing import content_hash
from ..vocab import (
    CandidateKind,
    Capability,
    Commitment,
    LifecycleState,
    MemoryType,
    Origin,
    TemporalKind,
    VerificationState,
)

#: Lifecycle states an admission can produce, weakest first. The other states (ARCHIVED,
#: SUPERSEDED, REVOKED, NEEDS_REVALIDATION) belong to maintenance, not to the write gate.
LADDER: tuple[LifecycleState, ...] = (
    LifecycleState.EPHEMERAL,
    LifecycleState.QUARANTINED,
    LifecycleState.PROVISIONAL,
    LifecycleState.ACTIVE,
)
AdmissionLifecycle = Literal["EPHEMERAL", "QUARANTINED", "PROVISIONAL", "ACTIVE"]

#: Rule id used in a :class:`~extractor.decisions.DeniedUse` when no rule granted the use.
DEFAULT_DENY = "default-deny"
DEFAULT_POLICY_PATH = Path(__file__).resolve().parent.parent / "policies" / "default.toml"

_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"
_FLAG_PATTERN = r"^[A-Z][A-Z0-9_]*$"


class TemporalStatus(StrEnum):
    """Where the as-of time falls against the candidate's validity interval."""

    CURRENT = "CURRENT"  # valid_from/valid_to known and the as-of time is inside them
    EXPIRED = "EXPIRED"  # valid_to ended before the as-of time (or the scope is PAST)
    NOT_YET_VALID = "NOT_YET_VALID"  # valid_from starts after the as-of time
    UNBOUNDED = "UNBOUNDED"  # no bounds stated
    UNKNOWN = "UNKNOWN"  # bounds present but not readable as ISO 8601


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Match(_Strict):
    """Conditions on a candidate; every key given must hold (lists mean "any of")."""

    origin_kind: list[Origin] | None = Field(default=None, min_length=1)
    memory_type: list[MemoryType] | None = Field(default=None, min_length=1)
    kind: list[CandidateKind] | None = Field(default=None, min_length=1)
    verification_state: list[VerificationState] | None = Field(default=None, min_length=1)
    response_commitment: list[Commitment] | None = Field(default=None, min_length=1)
    temporal_status: list[TemporalStatus] | None = Field(
        default=None, min_length=1, description="Validity interval judged at the as-of time."
    )
    temporal_kind: list[TemporalKind] | None = Field(
        default=None, min_length=1, description="temporal.kind of the candidate."
    )
    has_parents: bool | None = Field(default=None, description="parent_memory_ids is non-empty.")
    missing_parents: bool | None = Field(
        default=None, description="Some parent has no decision in this batch (or given)."
    )
    third_party_personal_data: bool | None = Field(
        default=None, description="Someone else's phone, email, address or health is mentioned."
    )
    has_environment: bool | None = Field(
        default=None,
        description="A procedure's quote (the words of a message, not the model's content) "
        "states its command, versions and preconditions.",
    )
    untrusted_instruction: bool | None = Field(
        default=None,
        description="The text gives orders to its reader, tries to steer the memory system, or "
        'claims a permission ("the user has authorised ...").',
    )
    harmful_content: bool | None = Field(
        default=None,
        description="States a wish or plan to hurt people, contempt for a group, or a crime.",
    )
    has_observed_at: bool | None = Field(default=None, description="observed_at is known.")
    flags: list[str] | None = Field(
        default=None, min_length=1, description="Any of these flags was added by an earlier rule."
    )


class Effect(_Strict):
    lifecycle: AdmissionLifecycle | None = Field(
        default=None, description="Grant at least this lifecycle (subject to every cap)."
    )
    max_lifecycle: AdmissionLifecycle | None = Field(
        default=None, description="Cap the lifecycle at this state."
    )
    persist: bool | None = Field(
        default=None,
        description="false: do not persist (cap EPHEMERAL); true: keep (≥ QUARANTINED).",
    )
    allow: list[Capability] = Field(default_factory=list)
    forbid: list[Capability] = Field(default_factory=list)
    eligible: Literal[False] | None = Field(
        default=None, description="false withdraws eligibility for admission."
    )
    flags: list[str] = Field(default_factory=list)
    evidence_as_of: Literal["observed_at", "valid_to"] | None = Field(
        default=None, description="FACTUAL_EVIDENCE holds only as of this time of the candidate."
    )
    inherit_parent_obligations: bool = Field(
        default=False,
        description="Carry every decided parent's forbidden uses, lifecycle cap and eligibility.",
    )
    inherit_flags: list[str] = Field(
        default_factory=list, description="Parent flags that are carried into the child."
    )

    @model_validator(mode="after")
    def _consistent(self) -> Effect:
        for name in (*self.flags, *self.inherit_flags):
            if not _is_flag(name):
                raise ValueError(f"flag {name!r} must be UPPER_SNAKE_CASE")
        both = sorted(set(self.allow) & set(self.forbid))
        if both:
            raise ValueError(f"effect both allows and forbids {', '.join(both)}")
        if (
            self.lifecycle
            and self.max_lifecycle
            and rank(self.lifecycle) > rank(self.max_lifecycle)
        ):
            raise ValueError(
                f"lifecycle {self.lifecycle} exceeds max_lifecycle {self.max_lifecycle}"
            )
        if self.persist is False and self.lifecycle not in (None, "EPHEMERAL"):
            raise ValueError(f"persist = false contradicts lifecycle {self.lifecycle}")
        if self.persist is True and self.max_lifecycle == "EPHEMERAL":
            raise ValueError("persist = true contradicts max_lifecycle EPHEMERAL")
        if self.inherit_flags and not self.inherit_parent_obligations:
            raise ValueError("inherit_flags needs inherit_parent_obligations = true")
        values = (self.lifecycle, self.max_lifecycle, self.persist, self.eligible)
        lists = (self.allow, self.forbid, self.flags)
        inert = all(v is None for v in values) and not any(lists) and not self.evidence_as_of
        if inert and not self.inherit_parent_obligations:
            raise ValueError("effect does nothing")
        return self


class Rule(_Strict):
    id: str = Field(pattern=_ID_PATTERN, description="Unique in the policy; lowercase, a-z0-9._-")
    reason: str = Field(min_length=1, description="Why: recorded in every decision it shapes.")
    cite: str | None = Field(default=None, description="Where the rule comes from (seed section).")
    match: Match = Field(default_factory=Match, description="All keys must hold; {} matches all.")
    unless: list[Match] = Field(
        default_factory=list, description="The rule does not fire if any of these matches."
    )
    effect: Effect

    @model_validator(mode="after")
    def _not_reserved(self) -> Rule:
        if self.id == DEFAULT_DENY:
            raise ValueError(f"rule id {DEFAULT_DENY!r} is reserved")
        return self


class PolicyDocument(_Strict):
    """An admission policy file (TOML or JSON)."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="AdmissionPolicy")

    id: str = Field(pattern=_ID_PATTERN, description="e.g. 'memory-admission'")
    version: str = Field(min_length=1, description="e.g. '2026.11.30.1'; bump on every change.")
    description: str | None = None
    rules: list[Rule] = Field(min_length=1, description="Evaluated in order.")


@dataclass(frozen=True)
class Policy:
    """A loaded, validated policy. ``hash`` covers its meaning (not comments or formatting)."""

    document: PolicyDocument
    source: str
    hash: str = field(init=False)
    rule_hashes: dict[str, str] = field(init=False, repr=False)
    #: The engine's per-policy cache (compiled rule plans); not part of the policy's meaning.
    plans: dict[Any, Any] = field(init=False, repr=False, compare=False, default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "hash", content_hash(self.document))
        hashes = {r.id: content_hash(r)[: len("sha256:") + 16] for r in self.document.rules}
        object.__setattr__(self, "rule_hashes", hashes)

    @property
    def id(self) -> str:
        return self.document.id

    @property
    def version(self) -> str:
        return self.document.version

    @property
    def rules(self) -> list[Rule]:
        return self.document.rules


def rank(state: LifecycleState | str) -> int:
    """Position on the admission ladder; maintenance states rank as ``QUARANTINED``."""
    state = LifecycleState(state)
    return LADDER.index(state) if state in LADDER else 1


def _is_flag(name: str) -> bool:
    return re.fullmatch(_FLAG_PATTERN, name) is not None


def load_policy(path: str | Path | None = None) -> Policy:
    """Load and validate a policy file; ``None`` loads the policy shipped with the package.

    ``.json`` files are read as JSON, anything else as TOML. Raises
    :class:`~extractor.errors.PolicyError` naming the file and, when it can, the rule.
    """
    if path is None:
        return _default_policy()
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(f"cannot read policy file: {exc}", source=str(path)) from None
    return parse_policy(text, source=str(path), json_format=path.suffix.lower() == ".json")


@cache
def _default_policy() -> Policy:
    """The shipped policy, parsed once per process (a :class:`Policy` is frozen; the store
    loads it on every derivation, ~50 ms each)."""
    text = DEFAULT_POLICY_PATH.read_text(encoding="utf-8")
    return parse_policy(text, source=f"<default policy {DEFAULT_POLICY_PATH.name}>")


def parse_policy(text: str, *, source: str = "<policy>", json_format: bool = False) -> Policy:
    """Parse policy text (TOML, or JSON when ``json_format``) into a validated :class:`Policy`."""
    try:
        raw: Any = json.loads(text) if json_format else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        kind = "JSON" if json_format else "TOML"
        raise PolicyError(f"not valid {kind}: {exc}", source=source) from None
    except RecursionError:
        raise PolicyError("nested too deeply to be a policy", source=source) from None
    try:
        document = PolicyDocument.model_validate(raw)
    except ValidationError as exc:
        raise _policy_error(exc, raw, source) from None
    _check_rules(document, source)
    try:
        return Policy(document, source)
    except UnicodeEncodeError:  # a JSON escape or a str can hold a lone surrogate; no hash can
        raise PolicyError("contains a lone surrogate, not valid Unicode", source=source) from None


def _rule_name(raw: Any, index: int) -> str:
    try:
        rule_id = raw["rules"][index]["id"]
    except (KeyError, IndexError, TypeError):
        rule_id = None
    return rule_id if isinstance(rule_id, str) and rule_id else f"#{index + 1}"


def _policy_error(exc: ValidationError, raw: Any, source: str) -> PolicyError:
    """One message listing every problem; ``rule`` names the first offending rule."""
    problems = []
    first_rule = None
    for err in exc.errors(include_url=False):
        loc = list(err["loc"])
        where = ".".join(str(p) for p in loc) or "<top level>"
        if len(loc) >= 2 and loc[0] == "rules" and isinstance(loc[1], int):
            name = _rule_name(raw, loc[1])
            first_rule = first_rule or name
            rest = ".".join(str(p) for p in loc[2:])
            where = f"rule {name!r}" + (f" {rest}" if rest else "")
        message = err["msg"].removeprefix("Value error, ")
        problems.append(f"{where}: {message}")
    return PolicyError("invalid policy: " + "; ".join(problems), source=source, rule=first_rule)


def _check_rules(document: PolicyDocument, source: str) -> None:
    """Checks across rules: unique ids, and flags matched only after a rule can set them."""
    seen: set[str] = set()
    set_flags: set[str] = set()
    for rule in document.rules:
        if rule.id in seen:
            raise PolicyError("duplicate rule id", source=source, rule=rule.id)
        seen.add(rule.id)
        for cond in (rule.match, *rule.unless):
            for flag in cond.flags or ():
                if flag not in set_flags:
                    raise PolicyError(
                        f"matches flag {flag!r}, which no earlier rule adds",
                        source=source,
                        rule=rule.id,
                    )
        set_flags.update(rule.effect.flags, rule.effect.inherit_flags)
