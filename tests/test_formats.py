"""Input formats people have, each from a realistic sample in tests/samples/formats/: detected
automatically, forced with --format, mapped to the same Conversation with the source's ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import examples, read_lines
from hypothesis import given, settings
from hypothesis import strategies as st

from extractor.cli import cli
from extractor.conversation import Conversation, conversation_from_data, iter_inputs
from extractor.errors import InputError
from extractor.formats import FORMATS, detect
from extractor.formats.timestamps import normalize_timestamp

SAMPLES = Path(__file__).with_name("samples") / "formats"


def load(name: str, input_format: str = "auto") -> list[Conversation]:
    items = list(iter_inputs([SAMPLES / name], input_format=input_format))
    errors = [i for i in items if isinstance(i, InputError)]
    assert not errors, errors
    return [i for i in items if isinstance(i, Conversation)]


def roles_and_texts(conv: Conversation) -> list[tuple[str, str]]:
    return [(m.role.value, m.text) for m in conv.messages]


def test_chatgpt_export_follows_the_current_branch_and_keeps_ids() -> None:
    moving, tea = load("chatgpt_conversations.json")
    assert moving.id == "6650b1c2-3d4e-8000-a1b2-c3d4e5f60718"
    assert moving.metadata == {"source_format": "chatgpt", "title": "Moving to Denver"}
    # The edited first question (Seattle) is an abandoned branch; the hidden system node and the
    # empty root are scaffolding.
    assert roles_and_texts(moving) == [
        ("user", "Sorry, I meant Denver. I'm moving to Denver next month."),
        ("assistant", "Denver is a mile high: drink more water the first week."),
        ("user", "[image]\nThis is the apartment I rented."),
    ]
    assert [m.id for m in moving.messages] == [
        "aaa3d9f1-2e3d-4a5b-9c8d-1e2f3a4b5c04",
        "c62d1bae-6a1e-4e7f-8d32-8b9c0d1e2f05",
        "d73e2cbf-7b2f-4f80-9e43-9c0d1e2f3a06",
    ]
    assert moving.messages[0].timestamp is not None
    assert moving.messages[0].timestamp.isoformat() == "2024-06-03T12:03:20+00:00"
    assert moving.messages[2].placeholder_ranges == ((0, 7),)  # the image is never quotable
    assert tea.id == "6650c0ff-0000-8000-a1b2-c3d4e5f60719"
    assert roles_and_texts(tea) == [("user", "I prefer green tea to coffee.")]


def test_claude_export_maps_senders_and_leaves_out_thinking() -> None:
    [conv] = load("claude_conversations.json")
    assert conv.id == "0b1c2d3e-4f50-4617-a8b9-c0d1e2f3a4b5"
    assert conv.metadata["title"] == "Allergy-friendly recipes"
    assert roles_and_texts(conv) == [
        ("user", "I'm allergic to peanuts. Can you suggest a satay sauce without them?"),
        ("assistant", "Sure: sunflower seed butter works well in place of peanut butter."),
        ("user", "Here is my shopping list.\n[file]"),
    ]
    assert conv.messages[0].id == "1a2b3c4d-0001-4e5f-8a9b-0c1d2e3f4a5b"
    assert str(conv.messages[1].timestamp) == "2024-06-03 18:21:19.100000+00:00"


def test_langchain_dump_keeps_ids_tool_calls_and_metadata() -> None:
    [conv] = load("langchain_messages.json")
    assert conv.id == "thread-7f3a" and (conv.tenant, conv.subject) == ("acme", "u-204")
    assert [m.role.value for m in conv.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert [m.id for m in conv.messages] == ["sys-0", "run-1-h", "run-1-a", "run-1-t", "run-2-a"]
    call = conv.messages[2].tool_calls
    assert call is not None and call[0].function.name == "passport_rules"
    assert json.loads(call[0].function.arguments) == {"country": "PT"}
    tool = conv.messages[3]
    assert (tool.tool_call_id, tool.name) == ("call_Qx1", "passport_rules")
    assert conv.messages[4].text == "You can travel to Portugal until December 2024."


def test_langchain_serialized_messages_per_jsonl_line() -> None:
    [conv] = load("langchain_serialized.jsonl")
    assert roles_and_texts(conv) == [
        ("user", "I work night shifts at the hospital."),
        ("assistant", "That sounds demanding."),
    ]
    assert [m.id for m in conv.messages] == ["h-1", "a-1"]


def test_responses_items_become_chat_messages() -> None:
    [conv] = load("responses_items.json")
    assert conv.id == "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b"
    assert roles_and_texts(conv) == [
        ("system", "Answer briefly."),
        ("user", "I live in Porto. What's the weather like?\n[image]"),
        ("assistant", ""),
        ("tool", "18°C, light rain"),
        ("assistant", "It's 18°C with light rain in Porto."),
    ]
    assert conv.messages[3].name == "get_weather" and conv.messages[3].tool_call_id == "call_wx9"
    assert conv.messages[1].id == "msg_in_1" and conv.messages[4].id == "msg_out_1"


def test_bom_epoch_seconds_and_milliseconds_and_role_aliases() -> None:
    [conv] = load("bom_epoch_aliases.jsonl")
    assert [m.role.value for m in conv.messages] == ["user", "assistant", "assistant"]
    stamps = [m.timestamp.isoformat() if m.timestamp else None for m in conv.messages]
    # seconds, milliseconds (both UTC), and a zone-less time kept as written
    assert stamps == ["2024-06-03T12:00:00+00:00", "2024-06-03T12:00:05.123000+00:00",
                      "2024-06-03T12:00:10"]  # fmt: skip
    assert conv.messages[2].text == "Anything else?"


@pytest.mark.parametrize(
    "name, fmt",
    [("chatgpt_conversations.json", "chatgpt"), ("claude_conversations.json", "claude"),
     ("langchain_messages.json", "langchain"), ("responses_items.json", "responses"),
     ("bom_epoch_aliases.jsonl", "openai")],
)  # fmt: skip
def test_forcing_the_right_format_gives_what_auto_gives(name: str, fmt: str) -> None:
    auto = load(name)
    assert [c.model_dump() for c in load(name, fmt)] == [c.model_dump() for c in auto]


def test_forcing_the_wrong_format_names_the_format_expected(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    src = SAMPLES / "claude_conversations.json"
    result = CliRunner().invoke(
        cli, ["run", str(src), "--format", "chatgpt", "--out", str(out), "-q"]
    )
    assert result.exit_code == 1
    [failure] = read_lines(tmp_path / "o.jsonl.failures.jsonl")
    assert "not a ChatGPT export conversation" in failure["error"]
    assert "--format chatgpt" in failure["error"]


def test_an_unknown_shape_names_every_format_expected() -> None:
    with pytest.raises(InputError) as info:
        conversation_from_data({"turns": [{"speaker": "A", "utterance": "hi"}]})
    text = str(info.value)
    assert "got an object with keys 'turns'" in text
    for name in FORMATS:
        assert f"{name}: " in text


def test_every_sample_runs_through_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "o.jsonl"
    result = CliRunner().invoke(cli, ["run", str(SAMPLES), "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    ids = [r["conversation_id"] for r in read_lines(out)]
    assert len(ids) == 7 and "thread-7f3a" in ids
    assert sum(len(r["candidates"]) for r in read_lines(out)) > 0


@settings(max_examples=examples(50), deadline=None)
@given(st.integers(min_value=0, max_value=4_102_444_800))  # 1970 .. 2100
def test_epoch_seconds_and_milliseconds_mean_the_same_moment(seconds: int) -> None:
    as_seconds = normalize_timestamp(seconds)
    if seconds * 1000 >= 100_000_000_000:  # the millisecond reading starts in 1973
        assert normalize_timestamp(seconds * 1000) == as_seconds
    assert as_seconds.endswith("+00:00")


def test_detection_does_not_mistake_a_plain_chat_for_another_format() -> None:
    plain = {"messages": [{"role": "user", "content": "hi"}]}
    detected = detect(plain)
    assert detected is not None and detected.name == "openai"
