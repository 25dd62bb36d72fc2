"""Loading conversations: accepted shapes, stable ids, span coordinates, and clear errors."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extractor.conversation import (
    Conversation,
    Limits,
    conversation_from_data,
    iter_inputs,
    iter_stream,
)
from extractor.errors import InputError, LimitExceeded
from extractor.vocab import Commitment, Role


def load(text: str, source: str = "in.jsonl") -> list[Conversation | InputError]:
    return list(iter_stream(io.BytesIO(text.encode()), source=source))


def test_conversation_object_with_openai_fields():
    conv = conversation_from_data(
        {
            "id": "c-1",
            "metadata": {"app": "demo"},
            "messages": [
                {"role": "system", "content": "Be brief."},
                {
                    "role": "user",
                    "content": "My manager is Alice.",
                    "timestamp": "2024-05-10T09:00:00Z",
                },
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "t1",
                            "type": "function",
                            "function": {"name": "git_status", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "t1", "content": "working tree clean"},
                {"role": "assistant", "content": "Noted.", "commitment": "HOLD"},
            ],
        }
    )
    assert conv.id == "c-1"
    assert [m.id for m in conv.messages] == ["m0", "m1", "m2", "m3", "m4"]
    assert conv.messages[1].timestamp is not None and conv.messages[1].timestamp.year == 2024
    assert conv.messages[2].tool_calls[0].function.name == "git_status"
    assert conv.messages[2].text == ""
    assert conv.messages[3].role is Role.TOOL
    assert conv.messages[4].commitment is Commitment.HOLD
    assert conv.metadata == {"app": "demo"}


def test_bare_message_list_gets_a_stable_content_derived_id():
    messages = [{"role": "user", "content": "I live in Porto."}]
    first = conversation_from_data(messages)
    again = conversation_from_data(json.loads(json.dumps(messages)))
    other = conversation_from_data([{"role": "user", "content": "I live in Lisbon."}])
    assert first.id == again.id and first.id.startswith("conv-")
    assert other.id != first.id


def test_given_message_ids_are_kept_and_missing_ones_derive_from_position():
    conv = conversation_from_data(
        {
            "id": "x",
            "messages": [
                {"role": "user", "content": "a", "id": "u1"},
                {"role": "user", "content": "b"},
            ],
        }
    )
    assert [m.id for m in conv.messages] == ["u1", "m1"]


def test_multipart_content_uses_text_parts_and_placeholders():
    conv = conversation_from_data(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Here is my cat 🐱"},
                    {"type": "image_url", "image_url": {"url": "https://example.invalid/cat.png"}},
                    {"type": "text", "text": "Her name is Miso."},
                    {"type": "input_audio", "input_audio": {"data": "...", "format": "wav"}},
                ],
            }
        ]
    )
    message = conv.messages[0]
    assert message.text == "Here is my cat 🐱\n[image]\nHer name is Miso.\n[audio]"
    start = message.text.index("Her name")
    assert message.text[start : start + 17] == "Her name is Miso."
    holes = [message.text[a:b] for a, b in message.placeholder_ranges]
    assert holes == ["[image]", "[audio]"]


@pytest.mark.parametrize(
    "text,quote",
    [
        ("Je m'appelle Zoé et j'habite à Montréal.", "j'habite à Montréal"),
        ("She said “I’ll be there” at noon.", "“I’ll be there”"),
        ("Mi perro 🐕‍🦺 se llama Toby.", "se llama Toby"),
        ("我住在东京。我的经理是爱丽丝。", "我的经理是爱丽丝"),
    ],
)
def test_span_offsets_are_code_point_indices(text, quote):
    message = conversation_from_data([{"role": "user", "content": text}]).messages[0]
    start = message.text.index(quote)
    assert message.text[start : start + len(quote)] == quote
    # code points, not bytes: the offset differs from the UTF-8 byte offset for non-ASCII text
    assert start == len(text[:start])


def test_jsonl_bad_lines_name_file_line_and_conversation_and_others_still_load():
    text = "\n".join(
        [
            json.dumps({"id": "ok-1", "messages": [{"role": "user", "content": "hi"}]}),
            "{not json",
            json.dumps({"id": "bad-role", "messages": [{"role": "narrator", "content": "x"}]}),
            json.dumps({"id": "empty", "messages": []}),
            json.dumps({"id": "bad-type", "messages": [{"role": "user", "content": 42}]}),
            json.dumps({"id": "ok-2", "messages": [{"role": "user", "content": "bye"}]}),
        ]
    )
    items = load(text, "archive.jsonl")
    assert [i.id for i in items if isinstance(i, Conversation)] == ["ok-1", "ok-2"]
    errors = [str(i) for i in items if isinstance(i, InputError)]
    assert errors[0].startswith("archive.jsonl:2: not valid JSON")
    assert (
        "archive.jsonl:3, conversation 'bad-role', field messages[0].role: unknown role 'narrator'"
        in errors[1]
    )
    assert (
        "archive.jsonl:4, conversation 'empty', field messages: conversation has no messages"
        in errors[2]
    )
    assert errors[3].startswith(
        "archive.jsonl:5, conversation 'bad-type', field messages[0].content"
    )


def test_non_utf8_line_is_an_error_for_that_line_only():
    raw = b'{"id":"a","messages":[{"role":"user","content":"hi"}]}\n\xff\xfe\n'
    items = list(iter_stream(io.BytesIO(raw), source="x.jsonl", mode="jsonl"))
    assert isinstance(items[0], Conversation)
    assert isinstance(items[1], InputError) and "x.jsonl:2: not valid UTF-8" in str(items[1])


def test_duplicate_message_ids_are_rejected():
    with pytest.raises(InputError, match=r"field messages\[1\]\.id: duplicate message id 'a'"):
        conversation_from_data(
            {
                "id": "d",
                "messages": [
                    {"role": "user", "content": "1", "id": "a"},
                    {"role": "user", "content": "2", "id": "a"},
                ],
            }
        )


def test_limits_are_enforced_with_clear_errors():
    with pytest.raises(
        LimitExceeded, match=r"field messages\[0\]: message has 11 characters, over the limit of 10"
    ):
        conversation_from_data(
            {"id": "big", "messages": [{"role": "user", "content": "x" * 11}]},
            limits=Limits(max_message_chars=10),
        )
    with pytest.raises(LimitExceeded, match="3 messages exceed the limit of 2"):
        conversation_from_data(
            [{"role": "user", "content": "x"}] * 3, limits=Limits(max_messages=2)
        )


def test_json_document_forms_and_gzip_and_directories(tmp_path: Path):
    (tmp_path / "one.json").write_text(
        json.dumps({"id": "one", "messages": [{"role": "user", "content": "a"}]})
    )
    (tmp_path / "list.json").write_text(json.dumps([{"role": "user", "content": "bare"}]))
    (tmp_path / "many.json").write_text(
        json.dumps(
            [
                {"id": f"many-{i}", "messages": [{"role": "user", "content": str(i)}]}
                for i in range(2)
            ]
        )
    )
    sub = tmp_path / "sub"
    sub.mkdir()
    with gzip.open(sub / "z.jsonl.gz", "wt") as fh:
        fh.write(json.dumps({"id": "gz", "messages": [{"role": "user", "content": "zip"}]}) + "\n")
    (tmp_path / "notes.txt").write_text("ignored")
    items = list(iter_inputs([tmp_path]))
    assert all(isinstance(i, Conversation) for i in items)
    ids = [i.id for i in items if isinstance(i, Conversation)]
    assert ids[0].startswith("conv-") and ids[1:] == ["many-0", "many-1", "one", "gz"]


def test_stdin_is_sniffed_as_json_or_jsonl():
    doc = json.dumps({"id": "s", "messages": [{"role": "user", "content": "x"}]}, indent=2).encode()
    items = list(iter_inputs(["-"], stdin=io.BytesIO(doc)))
    assert [i.id for i in items if isinstance(i, Conversation)] == ["s"]
    lines = b'{"id":"a","messages":[{"role":"user","content":"x"}]}\n{"id":"b","messages":[{"role":"user","content":"y"}]}\n'
    items = list(iter_inputs(["-"], stdin=io.BytesIO(lines)))
    assert [i.id for i in items if isinstance(i, Conversation)] == ["a", "b"]


def test_missing_file_is_a_load_error_not_a_crash(tmp_path: Path):
    items = list(iter_inputs([tmp_path / "nope.jsonl"]))
    assert len(items) == 1 and isinstance(items[0], InputError)
    assert "nope.jsonl" in str(items[0]) and "cannot open" in str(items[0])


def test_developer_role_is_read_as_system():
    conv = conversation_from_data([{"role": "developer", "content": "rules"}])
    assert conv.messages[0].role is Role.SYSTEM


@given(st.lists(st.binary(max_size=200), max_size=8))
def test_arbitrary_bytes_never_crash_the_loader(lines):
    raw = b"\n".join(lines)
    for item in iter_stream(io.BytesIO(raw), source="fuzz.jsonl", mode="jsonl"):
        assert isinstance(item, Conversation | InputError)


@given(st.text(max_size=300))
def test_any_text_round_trips_as_message_text(text):
    conv = conversation_from_data([{"role": "user", "content": text}])
    assert conv.messages[0].text == text


def test_lone_surrogates_are_a_clear_error_not_a_crash():
    raw = b'{"id": "s1", "messages": [{"role": "user", "content": "bad \\ud800 x"}]}\n'
    good = b'{"id": "s2", "messages": [{"role": "user", "content": "emoji \\ud83d\\ude00 ok"}]}\n'
    items = list(iter_stream(io.BytesIO(raw + good), source="s.jsonl", mode="jsonl"))
    assert isinstance(items[0], InputError) and "s.jsonl:1" in str(items[0])
    assert "lone surrogate" in str(items[0])
    assert isinstance(items[1], Conversation) and items[1].messages[0].text == "emoji 😀 ok"


@given(st.text(alphabet=st.characters(codec=None), max_size=50))
def test_any_code_points_load_or_fail_cleanly(text):
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        with pytest.raises(InputError, match="lone surrogate"):
            conversation_from_data([{"role": "user", "content": text}])
        return
    conv = conversation_from_data([{"role": "user", "content": text}])
    assert conv.messages[0].text == text
    assert conv.content_hash().startswith("sha256:")
