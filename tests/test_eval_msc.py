"""MSC turn-level scoring: the scorer on hand-built turns, and the real data against baselines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extractor.conversation import conversation_from_data
from extractor.errors import InputError
from extractor.evaluation.msc import (
    MscCase,
    baseline_every_turn,
    baseline_first_person,
    evaluate_msc,
    iter_msc,
    score_turns,
    token_f1,
    user_fact_turns,
)
from extractor.pipeline import Extractor

MSC = Path(__file__).resolve().parents[2] / "shared" / "data" / "msc-valid.jsonl"


def _case() -> MscCase:
    conv = conversation_from_data(
        {
            "id": "msc-hand",
            "messages": [
                {"role": "user", "content": "I own a Jeep and I love it."},
                {"role": "assistant", "content": "Nice car!"},
                {"role": "user", "content": "What do you drive?"},
                {"role": "assistant", "content": "A bike."},
                {"role": "user", "content": "My son is in junior high."},
                {"role": "assistant", "content": "Fun age."},
                {"role": "user", "content": "Cool, cool."},
            ],
        }
    )
    return MscCase(conv, {0: "I own a Jeep.", 4: "I have a son in junior high."}, (0, 2, 4, 6))


def test_counts_on_hand_built_predictions():
    case = _case()
    predicted = {0: ["User owns a Jeep."], 2: ["User asked what the assistant drives."]}
    score = score_turns("model", [case], [predicted])
    assert (score.tp, score.fp, score.fn, score.tn) == (1, 1, 1, 1)
    assert score.precision == 0.5 and score.recall == 0.5 and score.f1 == 0.5
    assert score.overlap == pytest.approx(token_f1("User owns a Jeep.", "I own a Jeep."))


def test_baselines():
    case = _case()
    every = score_turns("every", [case], [baseline_every_turn(case)])
    assert (every.tp, every.fp, every.fn, every.tn) == (2, 2, 0, 0)
    pronoun = score_turns("pronoun", [case], [baseline_first_person(case)])
    assert (pronoun.tp, pronoun.fp, pronoun.fn, pronoun.tn) == (2, 0, 0, 2)


def test_token_overlap_ignores_person_and_function_words():
    assert token_f1("User has a son.", "I have a son.") == 1.0
    assert token_f1("User owns a Jeep.", "I own a Jeep.") == pytest.approx(0.5)
    assert token_f1("User lives in Oslo.", "I like cats.") == 0.0


@given(st.text(max_size=40), st.text(max_size=40))
def test_token_f1_is_symmetric_and_bounded(a, b):
    assert token_f1(a, b) == pytest.approx(token_f1(b, a))
    assert 0.0 <= token_f1(a, b) <= 1.0


def test_user_facts_are_user_origin_propositions_and_preferences():
    case = _case()
    result = Extractor().process(case.conversation)
    turns = user_fact_turns(case.conversation, result)
    assert 0 in turns and 4 in turns
    assert 2 not in turns  # a question
    assert all(i % 2 == 0 for i in turns)  # never an assistant turn


def test_bad_msc_line_names_file_and_line(tmp_path):
    path = tmp_path / "msc.jsonl"
    good = {"id": "a", "messages": [{"role": "user", "content": "hi"}],
            "gold": {"facts": [], "annotated_user_message_indices": [0]}}  # fmt: skip
    path.write_text(json.dumps(good) + "\n" + json.dumps({"id": "b", "messages": []}) + "\n")
    with pytest.raises(InputError) as info:
        list(iter_msc(path))
    assert f"{path}:2" in str(info.value)


@pytest.mark.slow
@pytest.mark.skipif(not MSC.exists(), reason="../shared/data/msc-valid.jsonl is not present")
def test_offline_model_beats_both_baselines_on_precision_and_f1():
    """The issue's requirement, on the first 150 of the 500 validation chats (same code as
    ``extractor eval --msc``; the full-set figures are in docs/evaluation.md)."""
    report = evaluate_msc(list(iter_msc(MSC, limit=150)))
    model, every, pronoun = report.rows
    assert not report.failures
    assert model.name.startswith("model")
    assert every.recall == 1.0
    for baseline in (every, pronoun):
        assert model.precision > baseline.precision, (model, baseline)
        assert model.f1 > baseline.f1, (model, baseline)
    # "clearly": a margin over the stronger baseline, not a tie broken by a few turns
    assert model.precision >= pronoun.precision + 0.04, (model, pronoun)
    assert model.f1 >= pronoun.f1 + 0.02, (model, pronoun)
    assert model.overlap is not None and model.overlap > 0
