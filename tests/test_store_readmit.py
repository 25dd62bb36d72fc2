"""A policy change re-admits what the store holds: decided again by the policy, dependents
revalidated as after a revocation, and never a use the policy does not grant."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from store_helpers import Clock, user_says

from extractor import Extractor, MemoryStore, OfflineClient
from extractor.admission.policy import DEFAULT_POLICY_PATH, parse_policy
from extractor.cli import cli
from extractor.store import DerivedClaim

SHIPPED = DEFAULT_POLICY_PATH.read_text(encoding="utf-8")
OLD_EFFECT = (
    'effect = { lifecycle = "ACTIVE", allow = ["PERSONALIZATION", "CONVERSATIONAL_CONTEXT"] }'
)
#: Version 2 of the policy: a preference personalizes, and is never conversational context.
NEW_EFFECT = 'effect = { lifecycle = "PROVISIONAL", allow = ["PERSONALIZATION"], forbid = ["CONVERSATIONAL_CONTEXT"] }'


def policy_v2_text() -> str:
    assert SHIPPED.count(OLD_EFFECT) == 1
    text = SHIPPED.replace(OLD_EFFECT, NEW_EFFECT)
    return text.replace('version = "', 'version = "99.', 1)


V2 = parse_policy(policy_v2_text(), source="v2")


def _tea_store(store: MemoryStore) -> tuple[str, str, str]:
    """A preference, a summary that needs it, and an unrelated fact."""
    report = store.ingest(user_says("c1", "I prefer green tea."), tenant="acme", subject="u1")
    tea = next(c for c in store.claims(tenant="acme") if c.memory_type == "PREFERENCE")
    summary = store.derive(
        [DerivedClaim(content="User prefers green tea.", requires=[tea.claim_id])],
        produced_by="summarizer",
    )
    (derived,) = summary.stored
    other = store.ingest(user_says("c2", "My manager is Alice."), tenant="acme", subject="u1")
    assert report.stored and other.stored
    return tea.claim_id, derived.claim_id, other.stored[0] + ":c1"


def test_a_policy_change_re_decides_stored_claims_and_revalidates_their_dependents():
    with MemoryStore(clock=Clock()) as store:
        tea, derived, other = _tea_store(store)
        assert "CONVERSATIONAL_CONTEXT" in store.claim(tea).allowed_uses
        assert "CONVERSATIONAL_CONTEXT" in store.claim(derived).allowed_uses
        untouched = store.claim(other)
        report = store.readmit(V2)
        assert report.policy_version == V2.version and report.event_seq is not None
        # the preference by the new rule, the summary because it inherits its parent's obligations
        assert [c.claim_id for c in report.changed] == sorted([tea, derived])
        change = next(c for c in report.changed if c.claim_id == tea)
        assert change.lifecycle_after == "PROVISIONAL"
        assert "CONVERSATIONAL_CONTEXT" not in change.allowed_after
        assert "user-preference-personalization" in change.rules_after
        assert report.revocation is not None and report.revocation.trigger == "POLICY_CHANGE"
        assert [a.claim_id for a in report.revocation.affected] == [derived]
        now_tea, now_derived = store.claim(tea), store.claim(derived)
        assert "CONVERSATIONAL_CONTEXT" not in now_tea.allowed_uses
        assert now_tea.policy_version == V2.version
        assert now_derived.allowed_uses == []  # the dependent lost it too (a meet with its parent)
        assert store.claim(other).allowed_uses == untouched.allowed_uses
        lifecycles = [v.lifecycle_state for v in store.history(derived)]
        assert "NEEDS_REVALIDATION" in lifecycles  # revalidated, as after a revocation
        assert store.rebuild().identical and store.consistent()
        assert store.readmit(V2).event_seq is None  # the same policy again changes nothing


def test_readmission_never_grants_a_use_the_new_policy_does_not():
    with MemoryStore(clock=Clock()) as store:
        _tea_store(store)
        store.readmit(V2)
        for claim in store.claims():
            row = store.backend.select("claims", {"claim_id": claim.claim_id})[0]
            assert set(claim.allowed_uses) <= set(json_list(row["base_allowed"]))
        back = store.readmit()  # the shipped policy again: the uses come back, by the policy
        assert back.changed and all(
            "CONVERSATIONAL_CONTEXT" in c.allowed_after for c in back.changed
        )


def json_list(text: str) -> list[str]:
    import json

    return list(json.loads(text))


def test_ingesting_a_result_decided_under_a_new_policy_version_re_admits_the_store_first():
    with MemoryStore(clock=Clock()) as store:
        tea, _, _ = _tea_store(store)
        result = Extractor(client=OfflineClient(), policy=V2).process(
            {"id": "c3", "messages": [{"role": "user", "content": "I prefer oolong."}]}
        )
        report = store.ingest(result, tenant="acme", subject="u1", policy=V2)
        assert report.readmit is not None
        assert tea in [c.claim_id for c in report.readmit.changed]
        assert store.claim(tea).policy_version == V2.version
        again = store.ingest(result, tenant="acme", subject="u1", policy=V2)
        assert again.readmit is None


def test_store_readmit_cli_reports_the_changed_claims(tmp_path: Path):
    db = tmp_path / "m.db"
    with MemoryStore(db, clock=Clock()) as store:
        tea, derived, _ = _tea_store(store)
    policy = tmp_path / "v2.toml"
    policy.write_text(policy_v2_text(), encoding="utf-8")
    done = CliRunner().invoke(cli, ["store", "readmit", str(db), "--policy", str(policy)])
    assert done.exit_code == 0, done.output
    assert tea in done.output and derived in done.output and V2.version in done.output
    missing = CliRunner().invoke(cli, ["store", "readmit", str(tmp_path / "none.db")])
    assert missing.exit_code == 2 and "none.db" in missing.output


def test_extractor_run_with_a_new_policy_version_re_admits_the_store_it_ingests_into(
    tmp_path: Path,
):
    def conversation(cid: str, text: str) -> Path:
        path = tmp_path / f"{cid}.jsonl"
        line = {"id": cid, "metadata": {"user_id": "u1"},
                "messages": [{"role": "user", "content": text}]}  # fmt: skip
        path.write_text(json.dumps(line) + "\n", encoding="utf-8")
        return path

    policy = tmp_path / "v2.toml"
    policy.write_text(policy_v2_text(), encoding="utf-8")
    db = tmp_path / "m.db"
    for cid, text, extra in (("c1", "I prefer green tea.", []),
                             ("c2", "I prefer oolong.", ["--policy", str(policy)])):  # fmt: skip
        done = CliRunner().invoke(cli, ["run", str(conversation(cid, text)), "--out",
                                        str(tmp_path / f"{cid}.out"), "--store", str(db),
                                        "--quiet", *extra])  # fmt: skip
        assert done.exit_code == 0, done.output
    with MemoryStore(db) as store:
        assert {c.policy_version for c in store.claims()} == {V2.version}
