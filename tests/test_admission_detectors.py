"""The deterministic text checks the policy matches on: third-party personal data, procedure
environments, and temporal status against the as-of time."""

from __future__ import annotations

from datetime import datetime

import pytest
from strategies import make_candidate

from extractor.admission import TemporalStatus, third_party_personal_data
from extractor.admission.environment import environment_of
from extractor.admission.facts import temporal_status
from extractor.extraction import Entity, TemporalScope
from extractor.vocab import TemporalKind

BOB = [Entity(name="Bob", type="PERSON")]


@pytest.mark.parametrize(
    ("content", "entities", "speaker", "expected"),
    [
        ("Bob's phone number is 555-123-4567.", BOB, None, (("Bob",), ("PHONE",))),
        ("Call Bob on +44 20 7946 0958.", BOB, None, (("Bob",), ("PHONE",))),
        ("Bob: (555) 123-4567, 5551234567", BOB, None, (("Bob",), ("PHONE",))),
        ("Bob's email is bob@example.org.", BOB, None, (("Bob",), ("EMAIL",))),
        (
            "My neighbour Bob's phone number is 555-0199.",
            BOB,
            None,
            (("Bob", "my neighbour"), ("PHONE",)),
        ),
        # an extractor's typed entity can add a category (it only ever narrows uses)
        (
            "Bob gave me his number.",
            [*BOB, Entity(name="0199", type="PHONE_NUMBER")],
            None,
            (("Bob",), ("PHONE",)),
        ),
        ("Bob lives at 42 Elm Street.", BOB, None, (("Bob",), ("ADDRESS",))),
        ("My sister Jen lives in Portland.", [], None, (("my sister",), ("RESIDENCE",))),
        (
            "My neighbour is on dialysis three times a week.",
            [],
            None,
            (("my neighbour",), ("HEALTH",)),
        ),
        ("I live in Porto.", [], None, None),
        ("My sister was diagnosed with diabetes.", [], None, (("my sister",), ("HEALTH",))),
        ("Her doctor changed his medication.", [], None, (("her doctor",), ("HEALTH",))),
        # the user's own data is not third-party data
        ("My phone number is 555-123-4567.", [], None, None),
        ("Priya's phone is 555-123-4567.", [Entity(name="Priya", type="PERSON")], "Priya", None),
        # a third party without personal data, and numbers that are not phone numbers
        ("My manager is Alice.", [Entity(name="Alice", type="PERSON")], None, None),
        ("Bob moved on 2024-05-10 and paid $46,000,000.", BOB, None, None),
        ("Bob upgraded to Python 3.11.4 in 2024 2025.", BOB, None, None),
    ],
)
def test_third_party_personal_data(content, entities, speaker, expected):
    cand = make_candidate(content=content, entities=entities, speaker=speaker)
    found = third_party_personal_data(cand)
    assert (found and (found.subjects, found.categories)) == expected


@pytest.mark.parametrize(
    ("content", "missing"),
    [
        ("Ran `pip install foo==2.1` on Ubuntu 22.04 and the tests passed.", []),
        ("$ make test\npassed with gcc 13.2 on macOS", []),
        ("git checkout v2.3.0 after cloning, then it built.", []),
        ("Ran `make deploy` and it worked.", ["version", "precondition"]),
        ("Restarting the router fixed it.", ["command", "version", "precondition"]),
        ("Version 7 works on Windows.", ["command"]),
    ],
)
def test_procedure_environment(content, missing):
    env = environment_of(make_candidate(content=content))
    assert env.missing() == missing and env.complete is (not missing)


AS_OF = datetime(2026, 6, 15, 12, 0)


@pytest.mark.parametrize(
    ("scope", "status"),
    [
        (TemporalScope(), TemporalStatus.UNBOUNDED),
        (TemporalScope(kind=TemporalKind.PAST), TemporalStatus.EXPIRED),
        (TemporalScope(valid_from="2026-03"), TemporalStatus.CURRENT),
        (TemporalScope(valid_to="2026-06"), TemporalStatus.CURRENT),  # all of June counts
        (TemporalScope(valid_to="2026-06-14"), TemporalStatus.EXPIRED),
        (TemporalScope(valid_from="2026-07-01"), TemporalStatus.NOT_YET_VALID),
        (TemporalScope(valid_from="2026", valid_to="2026"), TemporalStatus.CURRENT),
        (TemporalScope(valid_to="soon"), TemporalStatus.UNKNOWN),
    ],
)
def test_temporal_status_against_as_of(scope, status):
    assert temporal_status(make_candidate(temporal=scope), AS_OF) is status
