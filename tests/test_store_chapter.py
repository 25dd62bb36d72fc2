"""The chapter's exercises and counterfactual tests (seed §19, Exercises 1-4), as the store
answers them. Each test reads like the passage it checks."""

from __future__ import annotations

import pytest
from store_helpers import Clock, result, user_says

from extractor import MemoryStore
from extractor.store import DerivedClaim
from extractor.store.derivation import faithful_to_parents

FE = "FACTUAL_EVIDENCE"


@pytest.fixture
def store():
    with MemoryStore(clock=Clock()) as s:
        yield s


def one(store: MemoryStore, r, memory_type: str | None = None, **kw) -> str:
    """Ingest ``r`` and return the id of its (first) claim of ``memory_type``."""
    report = store.ingest(r, **kw)
    claims = [store.claim(m) for m in report.stored]
    if memory_type is not None:
        claims = [c for c in claims if c.memory_type == memory_type]
    return claims[0].claim_id


def model_says(store: MemoryStore, cid: str, text: str) -> str:
    return one(store, result(cid, ("assistant", text)))


# --- Exercise 1: a typed memory gate ------------------------------------------------------------


def test_exercise_1_model_inference_cannot_become_factual_evidence_through_admission(store):
    tool = one(
        store,
        result(
            "t",
            {
                "role": "tool",
                "name": "shell",  # an observing tool (extractor.toolorigin)
                "content": "git status: working tree clean",
                "timestamp": "2026-06-01T18:32:00",
            },
        ),
    )
    pref = one(store, user_says("p", "I prefer tea."), "PREFERENCE")
    inference = model_says(store, "m", "Q3 revenue was approximately $46 million.")
    failure = one(
        store,
        result(
            "f",
            {
                "role": "tool",
                "name": "shell",
                "content": "Build FAILED",
                "timestamp": "2026-06-01T18:40:00",
            },
        ),
        "FAILURE_EXPERIENCE",
    )
    got = {
        k: store.claim(v)
        for k, v in {"tool": tool, "pref": pref, "inference": inference, "failure": failure}.items()
    }
    assert got["tool"].origin_kind == "TOOL" and FE in got["tool"].allowed_uses
    assert got["pref"].origin_kind == "USER" and "PERSONALIZATION" in got["pref"].allowed_uses
    assert got["failure"].allowed_uses == ["REPAIR_PLANNING", "REGRESSION_TEST"]
    assert "PROCEDURE_IMITATION" in got["failure"].forbidden_uses
    assert got["inference"].origin_kind == "MODEL_OUTPUT"
    assert got["inference"].lifecycle_state == "QUARANTINED"
    assert FE not in got["inference"].allowed_uses
    for claim in got.values():  # each has its own origin, verification, time and lifecycle
        assert claim.verification_state and claim.lifecycle_state and claim.recorded_at


# --- Exercise 2 and §19 derivation laundering ---------------------------------------------------


def launder(store: MemoryStore, root: str, steps: int = 3) -> list[str]:
    chain = [root]
    text = store.claim(root).content
    for i in range(steps):
        report = store.derive(
            [DerivedClaim(content=text, requires=[chain[-1]])], produced_by=f"summarizer-{i}"
        )
        chain.append(report.stored[0].claim_id)
    return chain


def test_exercise_2_three_summaries_keep_lineage_and_never_gain_factual_evidence(store):
    m1 = model_says(store, "s1", "Q3 revenue was approximately $46 million.")
    _, m2, m3, m4 = launder(store, m1)
    lineage = store.lineage(m4)
    assert m1 in lineage.roots  # m4 remains connected to m1 through claim-level lineage
    assert {e.parent_claim_id for e in lineage.ancestors} == {m1, m2, m3}
    assert all(e.required for e in lineage.ancestors)
    for claim in (m2, m3, m4):
        assert FE not in store.claim(claim).allowed_uses
        assert store.claim(claim).origin_kind == "MEMORY_DERIVED"


def test_exercise_2_an_independent_external_source_lets_policy_upgrade_the_new_version(store):
    m1 = model_says(store, "s1", "Q3 revenue was approximately $46 million.")
    m4 = launder(store, m1)[-1]
    store.add_source("filing_q3", kind="DOCUMENT", uri="https://example.com/q3.pdf")
    report = store.verify(m4, source="filing_q3", verifier="analyst")
    assert report.accepted, report.reason
    assert "verified-claim-active" in report.reason  # the policy decided, not the store
    upgraded = store.claim(m4)
    assert FE in upgraded.allowed_uses and upgraded.verification_state == "VERIFIED"
    assert upgraded.version > 1 and FE not in store.history(m4)[0].allowed_uses
    assert FE not in store.claim(m1).allowed_uses  # the root itself is not upgraded


def test_verification_from_the_claims_own_lineage_is_not_independent(store):
    m1 = model_says(store, "s1", "Q3 revenue was approximately $46 million.")
    m4 = launder(store, m1)[-1]
    conversation_source = store.lineage(m4).sources[0]
    store.add_source("copy", kind="URL", uri="https://mirror.example/q3")
    store.link_sources("copy", conversation_source, relation="COPIED_FROM")
    store.add_source("memory-report", kind="DOCUMENT", derived_from=[m1])
    for source in (conversation_source, "copy", "memory-report"):
        report = store.verify(m4, source=source, verifier="analyst")
        assert (
            not report.accepted and "not independent" in report.reason
        ) or "itself" in report.reason
        assert FE not in store.claim(m4).allowed_uses


def test_revoking_the_verifying_source_takes_the_upgrade_back(store):
    m1 = model_says(store, "s1", "Q3 revenue was approximately $46 million.")
    m4 = launder(store, m1)[-1]
    store.add_source("filing_q3", kind="DOCUMENT")
    store.verify(m4, source="filing_q3", verifier="analyst")
    store.revoke("filing_q3", reason="filing withdrawn", trigger="SOURCE_REVOKED")
    assert FE not in store.claim(m4).allowed_uses
    store.restore("filing_q3", reason="withdrawal was a mistake")
    assert FE in store.claim(m4).allowed_uses


def test_a_claim_that_needs_nothing_from_a_tainted_parent_does_not_inherit_its_taint(store):
    rumor = model_says(store, "s1", "Q3 revenue was approximately $46 million.")
    q2 = one(store, user_says("s2", "Our Q2 revenue was $43.8M."), "ASSERTION_EVENT")
    summary = store.derive(
        [
            DerivedClaim(content="Q2 revenue was $43.8M.", requires=[q2], context=[rumor]),
            DerivedClaim(content="Q3 revenue was approximately $46 million.", requires=[rumor]),
        ],
        produced_by="summarizer",
    )
    clean, tainted = summary.stored
    assert clean.lifecycle_state == "PROVISIONAL" and "CONVERSATIONAL_CONTEXT" in clean.allowed_uses
    assert tainted.lifecycle_state == "QUARANTINED"
    assert "CONVERSATIONAL_CONTEXT" not in tainted.allowed_uses


# --- the derivation gate --------------------------------------------------------------------------


def test_the_gate_refuses_derived_claims_their_parents_do_not_support(store):
    q3 = one(
        store, user_says("s", "I think Q3 revenue was about $46 million."), "WORLD_PROPOSITION"
    )
    report = store.derive(
        [
            DerivedClaim(content="Q3 revenue was $50 million.", requires=[q3]),
            DerivedClaim(content="Q3 revenue was $46 million.", requires=[q3]),
            DerivedClaim(content="Revenue grew.", requires=[]),
            DerivedClaim(
                content="The user thinks Q3 revenue was about $46 million.", requires=[q3]
            ),
            DerivedClaim(content="Q3 revenue was about $46 million.", requires=[q3]),
        ],
        produced_by="summarizer",
    )
    codes = {r.index: r.code for r in report.rejected}
    assert codes == {
        0: "UNSUPPORTED_BY_PARENTS",
        1: "UNCERTAINTY_DROPPED",
        2: "PARENT_MISSING",
        4: "UNCERTAINTY_DROPPED",
    }
    assert "hedge 'I think'" in report.rejected[-1].message
    assert [c.content for c in report.stored] == [
        "The user thinks Q3 revenue was about $46 million."
    ]


# --- Exercise 3 and §19 source-family duplication --------------------------------------------------


def test_exercise_3_five_chunks_from_three_urls_syndicated_from_one_release_are_one_family(store):
    claim = one(
        store, result("n", ("tool", "Acme reported Q2 revenue of $43.8M.", "2026-07-03T09:00:00"))
    )
    store.add_source("release", kind="RELEASE", uri="https://acme.example/pr/q2")
    for site in ("a", "b", "c"):
        store.add_source(f"url-{site}", kind="URL", uri=f"https://news-{site}.example/acme-q2")
        store.link_sources(f"url-{site}", "release", relation="SYNDICATED_FROM")
    for site, chunk in [("a", 1), ("a", 2), ("b", 1), ("b", 2), ("c", 1)]:
        store.add_evidence(claim, source=f"url-{site}", locator=f"chunk-{chunk}")
    c = store.corroboration(claim)
    assert (c.chunks, c.urls) == (5 + 1, 3)  # five chunks plus the message it was said in
    (message,) = [s for s in store.lineage(claim).sources if s.startswith("msg:")]
    assert c.families == 2 and set(c.family_ids) == {"release", message}
    store.add_source("regulator", kind="DOCUMENT", uri="https://sec.example/acme")
    store.add_evidence(claim, source="regulator")
    assert store.corroboration(claim).families == 3  # only a new family adds corroboration


def test_paraphrases_of_one_message_are_one_family_not_three(store):
    r = result("p", ("user", "I heard Q3 revenue was approximately $46M.", "2026-07-03T09:00:00"))
    claims = [store.claim(m).claim_id for m in store.ingest(r).stored]
    c = store.corroboration(*claims)
    assert c.chunks == len(claims) > 1 and c.families == 1


# --- Exercise 4 and §19 revocation ----------------------------------------------------------------


def exercise_4(store: MemoryStore, *, independent: bool) -> dict[str, str]:
    m1 = one(store, user_says("s1", "Our Q2 revenue was $43.8M."), "ASSERTION_EVENT")
    m2 = one(
        store,
        user_says("s2", "I read that Q2 revenue was $43.8M in the filing."),
        "ASSERTION_EVENT",
    )
    m3 = (
        store.derive(
            [DerivedClaim(content="Q2 revenue was $43.8M.", requires=[m1])],
            produced_by="summarizer",
        )
        .stored[0]
        .claim_id
    )
    if independent:
        store.support(m3, by=[m2], informant="analyst")
    m7 = (
        store.derive(
            [DerivedClaim(content="Q2 revenue was $43.8M.", requires=[m3])],
            activity="PROFILE",
            produced_by="recommender",
        )
        .stored[0]
        .claim_id
    )
    return {"m1": m1, "m2": m2, "m3": m3, "m7": m7}


def test_exercise_4_revoking_m1_revalidates_m3_and_restores_it_through_m2(store):
    m = exercise_4(store, independent=True)
    before = {k: store.claim(v) for k, v in m.items()}
    report = store.revoke(m["m1"], reason="the user corrected it", trigger="USER_CORRECTION")
    assert store.claim(m["m1"]).lifecycle_state == "REVOKED"
    for name in ("m3", "m7"):
        states = [v.lifecycle_state for v in store.history(m[name])]
        assert "NEEDS_REVALIDATION" in states  # m3 -> NEEDS_REVALIDATION ...
        after = store.claim(m[name])  # ... and is restored, rather than blindly revoked
        assert after.lifecycle_state == before[name].lifecycle_state
        assert after.allowed_uses == before[name].allowed_uses and after.support_label == "IN"
    assert {m["m3"], m["m7"]} <= set(report.restored)
    assert not {m["m3"], m["m7"]} & set(report.quarantined)
    assert report.max_depth == 2
    (m3_entry,) = [a for a in report.affected if a.claim_id == m["m3"]]
    assert m3_entry.depth == 1 and m3_entry.support == [
        j for j in m3_entry.support if "/support/" in j
    ]


def test_exercise_4_without_independent_support_m3_and_m7_are_quarantined_not_revoked(store):
    m = exercise_4(store, independent=False)
    report = store.revoke(m["m1"], reason="source retracted", trigger="SOURCE_REVOKED")
    assert {m["m3"], m["m7"]} <= set(report.quarantined) and report.revoked == []
    for name in ("m3", "m7"):
        claim = store.claim(m[name])
        assert claim.lifecycle_state == "QUARANTINED" and claim.support_label == "OUT"
        assert "CONVERSATIONAL_CONTEXT" not in claim.allowed_uses


def test_restoring_m1_brings_its_dependents_back(store):
    m = exercise_4(store, independent=False)
    before = store.claim(m["m7"])
    store.revoke(m["m1"], reason="disputed")
    store.restore(m["m1"], reason="dispute resolved")
    after = store.claim(m["m7"])
    assert (after.lifecycle_state, after.allowed_uses) == (
        before.lifecycle_state,
        before.allowed_uses,
    )


def test_a_copy_of_a_revoked_claim_is_revoked_with_it(store):
    m1 = one(store, user_says("s1", "Our Q2 revenue was $43.8M."), "ASSERTION_EVENT")
    copy = (
        store.derive(
            [DerivedClaim(content="Q2 revenue was $43.8M.", requires=[m1], relation="COPIED_FROM")],
            activity="COPY",
            produced_by="sync",
        )
        .stored[0]
        .claim_id
    )
    report = store.revoke(m1, reason="wrong")
    assert report.revoked == [copy] and store.claim(copy).lifecycle_state == "REVOKED"


# --- §7 circular support -------------------------------------------------------------------------


def test_circular_support_supports_nothing(store):
    """Model invents X, stores X, retrieves X, cites X: X is justified only by itself."""
    x = model_says(store, "s1", "Q3 revenue was approximately $46 million.")
    cited = (
        store.derive(
            [DerivedClaim(content="Q3 revenue was approximately $46 million.", requires=[x])],
            produced_by="rag",
        )
        .stored[0]
        .claim_id
    )
    store.support(x, by=[cited], informant="rag")  # X cites the retrieved copy of X
    source = store.lineage(x).sources[0]
    report = store.revoke(source, reason="the model output was a hallucination")
    assert store.claim(x).support_label == "OUT" and store.claim(cited).support_label == "OUT"
    assert {x, cited} <= set(report.quarantined)


# --- §19 the remaining counterfactuals -------------------------------------------------------------


def test_same_content_different_origin_gets_different_factual_admissibility(store):
    """EXTERNAL_SOURCE + VERIFIED vs MODEL_OUTPUT + UNVERIFIED, text held fixed."""
    verified = model_says(store, "m1", "Q2 revenue was $43.8M.")
    guessed = model_says(store, "m2", "Q2 revenue was $43.8M.")
    store.add_source("filing_q2", kind="DOCUMENT")
    store.verify(verified, source="filing_q2", verifier="analyst")
    a, b = store.claim(verified), store.claim(guessed)
    assert a.content == b.content == "Q2 revenue was $43.8M."
    assert a.verification_state == "VERIFIED" and b.verification_state == "UNVERIFIED"
    assert FE in a.allowed_uses and FE not in b.allowed_uses


def test_staleness_past_valid_to_loses_current_state_authority(store):
    ceo = one(store, user_says("c", "I work at Acme and Alice is our CEO."), "ASSERTION_EVENT")
    (term,) = store.derive(
        [
            DerivedClaim(
                content="Alice is the CEO of Acme.",
                requires=[ceo],
                valid_from="2026-01-01",
                valid_to="2026-06-30",
            )
        ],
        produced_by="hr",
    ).stored
    assert term.claim_id in {c.claim_id for c in store.claims(as_of="2026-06-20")}
    assert term.claim_id not in {c.claim_id for c in store.claims(as_of="2026-07-15")}


def test_hold_never_enters_active_factual_memory_and_permit_does_not_auto_admit(store):
    def said(commitment: str) -> list:
        msgs = [
            {"role": "user", "content": "What was Q3 revenue?"},
            {
                "role": "assistant",
                "content": "Q3 revenue was $46 million.",
                "commitment": commitment,
            },
        ]
        from store_helpers import _EXTRACTOR

        conv = _EXTRACTOR.process({"id": f"r-{commitment}", "messages": msgs})
        store.ingest(conv)
        return [
            c
            for c in store.claims()
            if c.conversation_id == f"r-{commitment}" and c.origin_kind == "MODEL_OUTPUT"
        ]

    held, permitted = said("HOLD"), said("PERMIT")
    assert all(c.lifecycle_state != "ACTIVE" and FE not in c.allowed_uses for c in held)
    assert permitted and all(c.lifecycle_state != "ACTIVE" for c in permitted)
    assert all(FE not in c.allowed_uses for c in permitted)


def test_support_from_model_output_never_lends_factual_evidence(store):
    """A user's assertion event whose own source is revoked, held up only by a model's
    restatement, is IN but no longer factual evidence: the meet runs along current support."""
    event = one(store, user_says("u", "Our Q2 revenue was $43.8M."), "ASSERTION_EVENT")
    echo = model_says(store, "m", "Q2 revenue was $43.8M.")
    store.support(event, by=[echo], informant="rag")
    assert FE in store.claim(event).allowed_uses  # its own evidence still holds it
    ref = store.claim(event).evidence_ref or ""
    source = "msg:" + ref.split("[")[0]
    store.revoke(source, reason="message retracted", trigger="SOURCE_REVOKED")
    held = store.claim(event)
    assert held.support_label == "IN" and FE not in held.allowed_uses
    assert held.allowed_uses == []  # the model output allows only REGRESSION_TEST


def test_compaction_must_keep_a_conflict_sources_disagree_survives(store):
    """Seed §11: 'Sources disagree about X' survives compaction; 'X is true' does not."""
    store.ingest(
        user_says("c", "I live in Paris. I live in Berlin.", "2026-03-01T10:00:00"), subject="u1"
    )
    paris, berlin = sorted(
        (c for c in store.claims() if c.kind == "PROPOSITION"),
        key=lambda c: c.content,
        reverse=True,
    )
    assert paris.verification_state == berlin.verification_state == "CONFLICTING"
    report = store.derive(
        [
            DerivedClaim(content="User lives in Paris.", requires=[paris.claim_id]),
            DerivedClaim(
                content="Sources disagree about where User lives: Paris or Berlin.",
                requires=[paris.claim_id, berlin.claim_id],
            ),
        ],
        produced_by="compactor",
    )
    assert [(r.index, r.code) for r in report.rejected] == [(0, "CONFLICT_DROPPED")]
    (kept,) = report.stored
    assert kept.verification_state == "CONFLICTING" and "CONFLICTING" in kept.flags
    assert set(kept.allowed_uses) <= {"CONVERSATIONAL_CONTEXT"}
    direct = {e.parent_claim_id for e in store.lineage(kept.claim_id).ancestors if e.depth == 1}
    assert direct == {paris.claim_id, berlin.claim_id}


def test_the_impact_report_lists_reads_that_consumed_the_revoked_state(store):
    m = exercise_4(store, independent=False)
    for read_id, claim, at in [
        ("r1", m["m7"], "2026-07-01T09:00:00.000000+00:00"),
        ("r2", m["m2"], "2026-07-01T09:00:00.000000+00:00"),
        ("r3", m["m3"], "2027-01-01T00:00:00.000000+00:00"),
    ]:
        store.backend.insert(
            "reads",
            [
                {
                    "read_id": read_id,
                    "at": at,
                    "tenant": "default",
                    "caller": "agent",
                    "purpose": "CONVERSATIONAL_CONTEXT",
                    "query_hash": "h",
                    "as_of": None,
                    "known_at": None,
                    "read_policy_id": None,
                    "read_policy_version": None,
                }
            ],
        )
        store.backend.insert(
            "read_items",
            [
                {
                    "read_id": read_id,
                    "claim_id": claim,
                    "stage": "SERIALIZED",
                    "rank": 1,
                    "score": 1.0,
                    "rules_fired": "[]",
                }
            ],
        )
    report = store.revoke(m["m1"], reason="retracted", trigger="SOURCE_REVOKED")
    # r1 consumed a dependent before containment; r2 read an unaffected claim; r3 is later
    assert [(e.read_id, e.claim_id) for e in report.exposures] == [("r1", m["m7"])]


def test_the_derivation_gate_is_the_extraction_gates_faithfulness_check(store):
    """A derived claim is checked against its parents' text by the same check that checks a
    candidate against its quote: polarity, hedges, names and numbers, claims beyond the source."""
    store.ingest(user_says("f", "I live in Paris. My manager is Alice."), subject="u1")
    props = {c.content: c.claim_id for c in store.claims() if c.kind == "PROPOSITION"}
    paris, alice = props["User lives in Paris."], props["User's manager is Alice."]
    report = store.derive(
        [
            DerivedClaim(content="User does not live in Paris.", requires=[paris]),
            DerivedClaim(content="User lives in Paris with Bob.", requires=[paris]),
            DerivedClaim(
                content="User lives in Paris; User's manager is Alice.", requires=[paris, alice]
            ),
        ],
        produced_by="summarizer",
    )
    codes = {r.index: r.code for r in report.rejected}
    assert codes == {0: "NEGATION_ADDED", 1: "UNSUPPORTED_BY_PARENTS"}
    assert "bob" in report.rejected[1].message.lower()
    assert [c.content for c in report.stored] == ["User lives in Paris; User's manager is Alice."]
    assert faithful_to_parents("User lives in Paris.", []) is not None  # no parent, no support
