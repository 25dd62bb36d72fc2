"""Fired rules' reason sentences, from the policy that holds them.

Result line format 2 stores a fired rule as its id and definition hash (the reason sentence is
the policy's, and the policy is versioned), and a denied use without the reason when it is the
reason of a rule that fired; :func:`with_reasons` puts the sentences back from a policy wherever
that policy is the one the decision was made under: same policy id and version, and the same
rule definition (hash). A rule the policy does not hold as it was keeps ``None``.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..decisions import AdmissionDecision, FiredRule
from .engine import NOT_ADMITTED
from .policy import DEFAULT_DENY, Policy


def reason_of(rule: FiredRule, policy: Policy, policy_id: str, policy_version: str) -> str | None:
    """``rule``'s reason: its own, else ``policy``'s when it is the rule that fired."""
    if rule.reason is not None:
        return rule.reason
    if rule.rule_id == DEFAULT_DENY:
        return NOT_ADMITTED
    if (policy_id, policy_version) != (policy.id, policy.version):
        return None
    if policy.rule_hashes.get(rule.rule_id) != rule.rule_hash:
        return None
    return next(r.reason for r in policy.rules if r.id == rule.rule_id)


def with_reasons(decisions: Iterable[AdmissionDecision], policy: Policy) -> list[AdmissionDecision]:
    """``decisions`` with every fired rule's reason filled in from ``policy`` where it can be."""
    out = []
    for d in decisions:
        rules = [r.model_copy(update={"reason": reason_of(r, policy, d.policy_id,
                                                          d.policy_version)})
                 for r in d.rules_fired]  # fmt: skip
        fired = {r.rule_id: r.reason for r in rules}
        denied = [u if u.reason is not None else
                  u.model_copy(update={"reason": fired.get(u.rule_id)})
                  for u in d.denied_requested_uses]  # fmt: skip
        if (rules, denied) != (d.rules_fired, d.denied_requested_uses):
            d = d.model_copy(update={"rules_fired": rules, "denied_requested_uses": denied})
        out.append(d)
    return out


__all__ = ["reason_of", "with_reasons"]
