"""The offline model's learned sentence scorer: its veto, its determinism, its weights' provenance.

The scorer (``extractor/offline/scorer.py``) drops the chatter claims of a user message and
always keeps the message's best-scored claim, so it never decides whether a message yields a
fact at all. The shipped weights are what ``python -m extractor.offline.train`` makes of the MSC
dev half, byte for byte.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from extractor.conversation import conversation_from_data
from extractor.offline import offline_extract
from extractor.offline.scorer import FORMAT, Scorer, features, shipped_scorer
from extractor.offline.train import THRESHOLD, main, shipped_path, train

MSC = Path(__file__).resolve().parents[2] / "shared" / "data" / "msc-valid.jsonl"


def facts(*messages: tuple[str, str]) -> list[str]:
    conv = conversation_from_data(
        {"id": "c", "messages": [{"role": r, "content": c} for r, c in messages]}
    )
    return [
        c["content"]
        for c in offline_extract(conv)["candidates"]
        if c["memory_type"] in ("WORLD_PROPOSITION", "PREFERENCE")
    ]


# --- the veto on realistic utterances (from the MSC dev half) ------------------------------------


def test_chatter_next_to_a_fact_is_dropped_and_the_fact_kept() -> None:
    said = "Other than her style of parenting she is super kind. I'm sure you both will get on great. I have two dogs."
    assert facts(("user", said)) == ["User has two dogs."]


def test_the_best_claim_of_a_message_is_always_kept() -> None:
    # on its own the sentence scores below the threshold, but the veto never empties a message:
    # whether a message yields a fact at all is the rules' call
    alone = "I'm sure you both will get on great."
    assert shipped_scorer().is_fact_free(alone)
    assert facts(("user", "I know how you can get your kitten out of hiding!")) == [
        "User knows how you can get your kitten out of hiding."
    ]


def test_several_lasting_facts_in_one_message_all_stay() -> None:
    said = (
        "I work as a nurse at the hospital. My wife is a teacher. I love hiking in the mountains."
    )
    assert facts(("user", said)) == [
        "User works as a nurse at the hospital.",
        "User's wife is a teacher.",
        "User loves hiking in the mountains.",
    ]


def test_chatter_scores_below_facts() -> None:
    scorer = shipped_scorer()
    chatter = ["That sounds like a lot of fun!", "I'm sure you both will get on great."]
    lasting = ["I have two dogs and a cat.", "My wife is a teacher.", "I work as a nurse."]
    assert max(scorer.score(s) for s in chatter) < scorer.threshold
    assert min(scorer.score(s) for s in lasting) > 0


def test_assistant_and_tool_text_is_not_judged() -> None:
    conv = conversation_from_data(
        {
            "id": "c",
            "messages": [
                {"role": "user", "content": "When does my flight leave?"},
                {"role": "assistant", "content": "Your flight UA 915 departs at 9:40 AM."},
            ],
        }
    )
    kinds = [c["memory_type"] for c in offline_extract(conv)["candidates"]]
    assert "MODEL_INFERENCE" in kinds


# --- determinism ----------------------------------------------------------------------------------


def test_features_do_not_depend_on_word_order_of_their_list() -> None:
    first = features("I have 2 dogs, I love them!", after_question=True)
    assert first == sorted(set(first))
    assert "w:0" in first and "b:<s> i" in first and "c:after_question" in first
    assert features("I have 2 dogs, I love them!", after_question=True) == first


def test_score_is_the_bias_plus_the_weights_of_the_features() -> None:
    scorer = Scorer(weights={"w:dogs": 1.5, "b:<s> i": -0.25}, bias=0.5, threshold=0.0, metadata={})
    assert scorer.score("I have dogs") == pytest.approx(1.75)
    assert scorer.score("nothing known here") == pytest.approx(0.5)


def test_weights_file_round_trips_to_the_same_bytes() -> None:
    text = shipped_path().read_text(encoding="utf-8")
    assert Scorer.from_json(text).to_json() == text


def test_a_file_of_another_format_is_refused() -> None:
    with pytest.raises(ValueError, match="offline-scorer-1"):
        Scorer.from_json(json.dumps({"format": "other"}))


def _fixture(path: Path) -> Path:
    """A small MSC-format file: four chats; the dev half is chats 0 and 2."""
    turns = [
        ("I have two dogs and a cat.", "I have two dogs."),
        ("That sounds like fun!", None),
        ("My wife is a teacher at the school.", "My wife is a teacher."),
        ("I'm sure you will do great.", None),
        ("I love hiking on weekends.", "I love hiking."),
        ("Thanks, you too!", None),
    ]
    lines = []
    for n in range(4):
        messages, gold, annotated = [], [], []
        for text, fact in turns:
            annotated.append(len(messages))
            if fact is not None:
                gold.append({"role": "user", "text": fact, "message_index": len(messages)})
            messages += [{"role": "user", "content": text}, {"role": "assistant", "content": "Ok."}]
        gold_field = {"facts": gold, "annotated_user_message_indices": annotated}
        lines.append(json.dumps({"id": f"f{n}", "messages": messages, "gold": gold_field}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_training_is_deterministic_and_reads_only_the_dev_half(tmp_path: Path) -> None:
    source = _fixture(tmp_path / "msc.jsonl")
    once, twice = train(source).to_json(), train(source).to_json()
    assert once == twice
    model = Scorer.from_json(once)
    assert model.metadata["conversations"] == 2 and model.metadata["sentences"] == 12
    assert model.metadata["positives"] == 6
    assert model.score("I have two dogs and a cat.") > model.score("That sounds like fun!")
    assert model.threshold == THRESHOLD


def test_train_check_reports_a_stale_weights_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, out = _fixture(tmp_path / "msc.jsonl"), tmp_path / "scorer.json"
    assert main([str(source), "--out", str(out)]) == 0
    assert main([str(source), "--out", str(out), "--check"]) == 0
    out.write_text(out.read_text(encoding="utf-8").replace('"bias": ', '"bias": 1'), "utf-8")
    assert main([str(source), "--out", str(out), "--check"]) == 1
    assert "DIFFERS" in capsys.readouterr().out


def test_train_names_a_missing_input_file(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        main([str(tmp_path / "missing.jsonl")])


# --- provenance of the shipped weights ------------------------------------------------------------


def test_shipped_weights_record_their_training_data() -> None:
    meta = shipped_scorer().metadata
    assert meta["training_file"] == "msc-valid.jsonl"
    assert len(meta["training_file_sha256"]) == 64
    assert meta["split"].startswith("dev half")
    assert meta["conversations"] == 250
    assert shipped_scorer().threshold == THRESHOLD
    assert json.loads(shipped_path().read_text(encoding="utf-8"))["format"] == FORMAT
    assert shipped_path().stat().st_size < 2_000_000


@pytest.mark.slow
@pytest.mark.skipif(not MSC.exists(), reason="../shared/data/msc-valid.jsonl is not present")
def test_shipped_weights_are_what_the_training_script_makes_of_msc() -> None:
    digest = hashlib.sha256(MSC.read_bytes()).hexdigest()
    assert digest == shipped_scorer().metadata["training_file_sha256"]
    assert train(MSC).to_json() == shipped_path().read_text(encoding="utf-8")
