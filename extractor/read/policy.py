"""The read policy as data: a versioned TOML (or JSON) file, validated like the admission policy.

A read policy has an ``id``, a ``version``, one ``[purposes.NAME]`` table per purpose and a list
of ``rules``. A purpose table says how risky the use is, which lifecycle states are eligible for it
in stage 1 and whether a hit must be dereferenced to its original evidence before it counts
(seed §10). Rules are stage 3: each has an ``id``, a ``reason``, a ``match`` (all keys must
hold), an optional ``unless`` and an ``effect``. Effects combine so that restriction wins
whatever the order:

* ``admit = false`` makes the memory inadmissible for the purpose (the first such rule is the
  one recorded as excluding it);
* ``use = "CONTEXT_ONLY"`` downgrades it: it may inform, not establish (seed §9);
* ``flags`` add names that later rules may match.

The file's JSON Schema is ``schemas/read-policy.schema.json``; any problem becomes a
:class:`~extractor.errors.PolicyError` naming the file and the rule.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..admission import TemporalStatus
from ..errors import PolicyError
from ..hashing import content_hash
from ..vocab import CandidateKind, Capability, LifecycleState, MemoryType, Origin, VerificationState
from .models import EvidenceStatus, Risk

DEFAULT_READ_POLICY_PATH = Path(__file__).resolve().parent.parent / "policies" / "read-default.toml"

#: Lifecycle states no purpose can make eligible: not kept, retired, or awaiting revalidation.
NEVER_ELIGIBLE = frozenset(
    {
        LifecycleState.EPHEMERAL,
        LifecycleState.REVOKED,
        LifecycleState.NEEDS_REVALIDATION,
    }
)

#: Rule ids the judge applies itself, whatever the policy says (reserved).
CAPABILITY_INVARIANT = "capability-invariant"
CONTEXT_CAPABILITY_INVARIANT = "context-only-needs-context-capability"
RESERVED_RULE_IDS = frozenset({CAPABILITY_INVARIANT, CONTEXT_CAPABILITY_INVARIANT})

_ID_PATTERN = r"^[a-z0-9][a-z0-9._-]*$"
_FLAG_PATTERN = r"^[A-Z][A-Z0-9_]*$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PurposeRule(_Strict):
    """Stage-1 and risk settings of one purpose."""

    risk: Risk
    lifecycles: list[LifecycleState] = Field(
        min_length=1, description="Lifecycle states eligible for this purpose in stage 1."
    )
    dereference: bool = Field(
        default=False,
        description="A hit counts only after its original evidence is dereferenced and checked.",
    )

    @model_validator(mode="after")
    def _lifecycles(self) -> PurposeRule:
        bad = sorted(set(self.lifecycles) & NEVER_ELIGIBLE)
        if bad:
            raise ValueError(f"lifecycle {', '.join(bad)} can never be eligible")
        return self


class ReadMatch(_Strict):
    """Conditions on one retrieved memory and the read; every key given must hold."""

    purpose: list[Capability] | None = Field(default=None, min_length=1)
    risk: list[Risk] | None = Field(default=None, min_length=1)
    origin_kind: list[Origin] | None = Field(default=None, min_length=1)
    memory_type: list[MemoryType] | None = Field(default=None, min_length=1)
    kind: list[CandidateKind] | None = Field(default=None, min_length=1)
    verification_state: list[VerificationState] | None = Field(default=None, min_length=1)
    lifecycle_state: list[LifecycleState] | None = Field(default=None, min_length=1)
    temporal_status: list[TemporalStatus] | None = Field(
        default=None, min_length=1, description="Validity interval judged at the read's as-of."
    )
    evidence_scoped_before_as_of: bool | None = Field(
        default=None, description="Admission scoped its evidence to a time before the as-of."
    )
    conflicting: bool | None = None
    superseded: bool | None = None
    independent_families_below: int | None = Field(
        default=None, ge=1, description="Fewer independent source families than this."
    )
    evidence: list[EvidenceStatus] | None = Field(
        default=None, min_length=1, description="Result of dereferencing the original evidence."
    )
    flags: list[str] | None = Field(
        default=None, min_length=1, description="Any of these admission or earlier-rule flags."
    )


class ReadEffect(_Strict):
    admit: Literal[False] | None = Field(default=None, description="false: inadmissible.")
    use: Literal["CONTEXT_ONLY"] | None = Field(default=None, description="Downgrade the use.")
    flags: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _does_something(self) -> ReadEffect:
        for name in self.flags:
            if re.fullmatch(_FLAG_PATTERN, name) is None:
                raise ValueError(f"flag {name!r} must be UPPER_SNAKE_CASE")
        if self.admit is None and self.use is None and not self.flags:
            raise ValueError("effect does nothing")
        return self


class ReadRule(_Strict):
    id: str = Field(pattern=_ID_PATTERN)
    reason: str = Field(min_length=1)
    cite: str | None = None
    match: ReadMatch = Field(default_factory=ReadMatch)
    unless: list[ReadMatch] = Field(default_factory=list)
    effect: ReadEffect


class ReadPolicyDocument(_Strict):
    """A read policy file (TOML or JSON)."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="ReadPolicy")

    id: str = Field(pattern=_ID_PATTERN, description="e.g. 'memory-read'")
    version: str = Field(min_length=1, description="Bump on every change.")
    description: str | None = None
    purposes: dict[Capability, PurposeRule] = Field(description="One table per purpose.")
    rules: list[ReadRule] = Field(min_length=1, description="Stage-3 rules, in order.")

    @model_validator(mode="after")
    def _every_purpose(self) -> ReadPolicyDocument:
        missing = [c.value for c in Capability if c not in self.purposes]
        if missing:
            raise ValueError(f"no [purposes] table for {', '.join(missing)}")
        return self


@dataclass(frozen=True)
class ReadPolicy:
    """A loaded, validated read policy; ``hash`` covers its meaning, not its formatting."""

    document: ReadPolicyDocument
    source: str
    hash: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "hash", content_hash(self.document))

    @property
    def id(self) -> str:
        return self.document.id

    @property
    def version(self) -> str:
        return self.document.version

    @property
    def rules(self) -> list[ReadRule]:
        return self.document.rules

    def purpose(self, purpose: Capability) -> PurposeRule:
        return self.document.purposes[purpose]


def load_read_policy(path: str | Path | None = None) -> ReadPolicy:
    """Load and validate a read policy; ``None`` loads the one shipped with the package."""
    if path is None:
        text = DEFAULT_READ_POLICY_PATH.read_text(encoding="utf-8")
        name = DEFAULT_READ_POLICY_PATH.name
        return parse_read_policy(text, source=f"<default read policy {name}>")
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(f"cannot read read-policy file: {exc}", source=str(path)) from None
    return parse_read_policy(text, source=str(path), json_format=path.suffix.lower() == ".json")


def parse_read_policy(
    text: str, *, source: str = "<read policy>", json_format: bool = False
) -> ReadPolicy:
    """Parse read-policy text (TOML, or JSON when ``json_format``) into a :class:`ReadPolicy`."""
    try:
        raw: Any = json.loads(text) if json_format else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        kind = "JSON" if json_format else "TOML"
        raise PolicyError(f"not valid {kind}: {exc}", source=source) from None
    except RecursionError:
        raise PolicyError("nested too deeply to be a policy", source=source) from None
    try:
        document = ReadPolicyDocument.model_validate(raw)
    except ValidationError as exc:
        raise _error(exc, raw, source) from None
    _check_rules(document, source)
    try:
        return ReadPolicy(document, source)
    except UnicodeEncodeError:
        raise PolicyError("contains a lone surrogate, not valid Unicode", source=source) from None


def _error(exc: ValidationError, raw: Any, source: str) -> PolicyError:
    problems, first_rule = [], None
    for err in exc.errors(include_url=False):
        loc = list(err["loc"])
        where = ".".join(str(p) for p in loc) or "<top level>"
        if len(loc) >= 2 and loc[0] == "rules" and isinstance(loc[1], int):
            try:
                name = str(raw["rules"][loc[1]]["id"])
            except (KeyError, IndexError, TypeError):
                name = f"#{loc[1] + 1}"
            first_rule = first_rule or name
            rest = ".".join(str(p) for p in loc[2:])
            where = f"rule {name!r}" + (f" {rest}" if rest else "")
        problems.append(f"{where}: {err['msg'].removeprefix('Value error, ')}")
    message = "invalid read policy: " + "; ".join(problems)
    return PolicyError(message, source=source, rule=first_rule)


def _check_rules(document: ReadPolicyDocument, source: str) -> None:
    """Rule ids are unique (flags cannot be checked here: admission sets them too)."""
    seen: set[str] = set()
    for rule in document.rules:
        if rule.id in RESERVED_RULE_IDS:
            reserved = "rule id is reserved for the read path itself"
            raise PolicyError(reserved, source=source, rule=rule.id)
        if rule.id in seen:
            raise PolicyError("duplicate rule id", source=source, rule=rule.id)
        seen.add(rule.id)
