"""The offline model's claim keeper: a learned veto within a user message, trained on the labels.

``extractor/offline/sensible.py`` drops the user-fact claims of a message a reader of the labelled
samples would not keep, when the message has a better one, and never empties a message: whether a
message yields a fact at all stays the rules' call. The shipped weights are what
``python -m extractor.offline.train_sensible`` makes of the labelled rounds in the repository.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from extractor.conversation import conversation_from_data
from extractor.offline import offline_extract
from extractor.offline.draft import Group
from extractor.offline.scorer import JUDGED_TYPES, Scorer
from extractor.offline.sensible import claim_features, drop_unkept, score, shipped_model
from extractor.offline.statements import user_groups
from extractor.offline.train_sensible import THRESHOLD, main, shipped_path, train

ROUNDS = Path(__file__).resolve().parents[1] / "evalsets" / "offline-real"
TRAINED_ON = [ROUNDS / f"round{n}.jsonl" for n in range(1, 6)]
JUDGED = ("WORLD_PROPOSITION", "PREFERENCE")


def facts(said: str) -> list[str]:
    conv = conversation_from_data({"id": "c", "messages": [{"role": "user", "content": said}]})
    return [c["content"] for c in offline_extract(conv)["candidates"] if c["memory_type"] in JUDGED]


# --- the veto -------------------------------------------------------------------------------------


def test_a_claim_that_leans_on_the_chat_is_dropped_next_to_a_lasting_fact() -> None:
    said = "I work as a nurse at the hospital. I want to do some outdoor activities."
    assert facts(said) == ["User works as a nurse at the hospital."]
    said = "My sister lives in Denver. I feel like my progress is quite slow."
    assert facts(said) == ["User's sister lives in Denver."]


def test_alone_the_same_claim_is_kept() -> None:
    # below the threshold, but the only claim of its message: the keeper never empties a message
    model = shipped_model()
    quote = "I want to do some outdoor activities."
    content = "User wants to do some outdoor activities."
    assert score(model, quote, content, "WORLD_PROPOSITION") < model.threshold
    assert facts(quote) == [content]


def test_lasting_facts_together_all_stay() -> None:
    said = (
        "I work as a nurse at the hospital. My wife is a teacher. I love hiking in the mountains."
    )
    assert len(facts(said)) == 3


def test_features_mark_quoted_replies() -> None:
    feats = claim_features("We love it.", 'Told "x", User replied: "We love it."', "PREFERENCE")
    assert {"c:quoted", "t:PREFERENCE", "k:told"} <= set(feats)
    assert feats == sorted(set(feats))


_SENTENCES = [
    "I work as a nurse at the hospital.",
    "I want something more exciting!",
    "I just feel lost.",
    "My wife is a teacher.",
    "I also took a lot of pictures.",
    "I have two dogs and a cat.",
    "I even found a place with great natural light!",
    "I love hiking in the mountains.",
    "I faced some challenges during the process.",
]


@given(st.lists(st.sampled_from(_SENTENCES), min_size=1, max_size=5), st.floats(-5, 5))
@settings(max_examples=examples(60))
def test_the_keeper_only_removes_and_never_empties_a_message(
    picked: list[str], threshold: float
) -> None:
    conv = conversation_from_data(
        {"id": "c", "messages": [{"role": "user", "content": " ".join(picked)}]}
    )
    groups = user_groups(conv.messages[0])
    model = Scorer(
        weights=shipped_model().weights, bias=shipped_model().bias, threshold=threshold, metadata={}
    )
    kept = drop_unkept(groups, model=model)
    assert all(any(g is k for g in groups) for k in kept)  # a subsequence, nothing made up
    assert [g for g in groups if any(g is k for k in kept)] == kept  # in order

    if judged(groups):
        assert judged(kept) >= 1
    others = [g for g in groups if g.drafts[-1].memory_type.value not in JUDGED]
    assert all(any(g is k for k in kept) for g in others)  # what it does not judge stays


def judged(groups: list[Group]) -> int:
    return sum(1 for g in groups if g.drafts[-1].memory_type in JUDGED_TYPES)


# --- training -------------------------------------------------------------------------------------


def _labelled(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    lines = [
        json.dumps(
            {
                "conversation_id": f"c{n % 3}",
                "quote": quote,
                "content": content,
                "memory_type": "WORLD_PROPOSITION",
                "label": label,
            }
        )
        for n, (quote, content, label) in enumerate(rows)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


_ROWS = [
    ("I have two dogs.", "User has two dogs.", "sensible"),
    ("I work as a nurse.", "User works as a nurse.", "sensible"),
    ("I love it.", "User loves it.", "not_self_contained"),
    ("I will try it.", "User will try it.", "not_self_contained"),
] * 3


def test_training_is_deterministic_and_learns_the_labels(tmp_path: Path) -> None:
    source = _labelled(tmp_path / "round.jsonl", _ROWS)
    once, twice = train([source]).to_json(), train([source]).to_json()
    assert once == twice
    model = Scorer.from_json(once)
    assert model.metadata["examples"] == 12 and model.metadata["positives"] == 6
    assert model.metadata["training_files"] == ["round.jsonl"]
    assert score(model, "I have two dogs.", "User has two dogs.", "WORLD_PROPOSITION") > score(
        model, "I will try it.", "User will try it.", "WORLD_PROPOSITION"
    )
    assert model.threshold == THRESHOLD


def test_train_refuses_an_unlabelled_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _labelled(tmp_path / "round.jsonl", [("I have a dog.", "User has a dog.", "sensible")])
    source.write_text(source.read_text().replace('"sensible"', "null"), encoding="utf-8")
    with pytest.raises(SystemExit):
        main([str(source), "--out", str(tmp_path / "w.json")])
    err = capsys.readouterr().err
    assert "round.jsonl:1: no label" in err and not (tmp_path / "w.json").exists()


def test_train_names_a_missing_input_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([str(tmp_path / "missing.jsonl")])
    assert "missing.jsonl: no such file" in capsys.readouterr().err


def test_sweep_prints_out_of_fold_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _labelled(tmp_path / "round.jsonl", _ROWS)
    assert main([str(source), "--sweep"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("threshold") and len(out.splitlines()) == 14


# --- provenance of the shipped weights ------------------------------------------------------------


def test_shipped_weights_are_what_the_training_script_makes_of_the_labelled_rounds(
    tmp_path: Path,
) -> None:
    meta = shipped_model().metadata
    assert meta["training_files"] == [p.name for p in TRAINED_ON]
    assert train(TRAINED_ON).to_json() == shipped_path().read_text(encoding="utf-8")
    assert main([*map(str, TRAINED_ON), "--check"]) == 0
    assert shipped_path().stat().st_size < 1_000_000
