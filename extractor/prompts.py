"""The extraction prompt: template files in ``prompts/``, rendered with the transcript.

Prompts are data. A prompt directory holds ``prompt.toml`` (id, version, file names), a plain
system prompt and a ``string.Template`` for the user turn; a missing variable fails loudly. The
prompt's hash covers the exact bytes of every file, so any edit changes the hash recorded in
each output.

Untrusted text cannot escape its section: each message is rendered as one line of JSON with
``<``, ``>`` and ``&`` escaped as ``\\u003c``-style sequences, so a message containing
``</conversation>`` or a fake candidate stays inside its string; the conversation id gets the
same JSON escapes inside its tag, so no newline or quote in it can start a line of its own.
The text is never passed through any other template engine (instructor's Jinja rendering in
particular), so the model sees it exactly, and spans computed on it match the transcript.
"""

from __future__ import annotations

import json
import os
import re
import string
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ._paths import shipped_dir
from .conversation import Conversation, Message, conversation_from_data
from .errors import InputError, InputLocation
from .hashing import text_hash

#: The prompts shipped with the project (``$EXTRACTOR_PROMPTS_DIR`` overrides).
DEFAULT_PROMPTS_DIR = Path(os.environ.get("EXTRACTOR_PROMPTS_DIR") or shipped_dir("prompts"))
DEFAULT_PROMPT_ID = "extract_candidates"


@dataclass(frozen=True)
class Prompt:
    id: str
    version: str
    hash: str
    system_template: str
    user_template: str

    def render(self, conversation: Conversation) -> list[dict[str, str]]:
        """Chat messages for the model: the system prompt and the rendered transcript."""
        user = string.Template(self.user_template).substitute(
            conversation_id=render_id(conversation.id),
            message_count=len(conversation.messages),
            transcript=render_transcript(conversation.messages),
        )
        return [
            {"role": "system", "content": self.system_template},
            {"role": "user", "content": user},
        ]


def render_id(conversation_id: str) -> str:
    """The id as it stands in ``<conversation id="...">``: JSON string escapes (so a quote or a
    newline cannot close the tag or start a fake message line) plus the markup escapes."""
    return _escape(json.dumps(conversation_id, ensure_ascii=False)[1:-1])


def render_transcript(messages: list[Message]) -> str:
    return "\n".join(render_message(m) for m in messages)


def render_message(message: Message) -> str:
    entry: dict[str, str] = {"id": str(message.id), "role": message.role.value}
    if message.name:
        entry["name"] = message.name
    if message.timestamp is not None:
        entry["time"] = message.timestamp.isoformat()
    if message.commitment is not None:
        entry["commitment"] = message.commitment.value
    entry["text"] = message.text
    if message.tool_calls:
        entry["tool_calls"] = "; ".join(
            f"{c.function.name}({c.function.arguments})" for c in message.tool_calls
        )
    return _escape(json.dumps(entry, ensure_ascii=False, separators=(",", ":")))


def _escape(text: str) -> str:
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


@cache
def load_prompt(directory: Path | None = None, prompt_id: str = DEFAULT_PROMPT_ID) -> Prompt:
    """Load a prompt by id from ``directory`` (default: the project's ``prompts/``)."""
    base = (directory or DEFAULT_PROMPTS_DIR) / prompt_id
    meta_bytes = (base / "prompt.toml").read_bytes()
    meta = tomllib.loads(meta_bytes.decode("utf-8"))
    system = (base / meta["system"]).read_text(encoding="utf-8")
    user = (base / meta["user"]).read_text(encoding="utf-8")
    if not string.Template(user).is_valid():
        raise ValueError(f"{base / meta['user']}: invalid $-placeholder in template")
    digest = text_hash("\0".join([meta_bytes.decode("utf-8"), system, user]))
    return Prompt(meta["id"], meta["version"], digest, system, user)


_CONVERSATION_OPEN = re.compile(r'^<conversation id="(?P<id>.*)">$')
_TOOL_CALL = re.compile(r"(?:^|; )(?P<name>[A-Za-z_][\w.\-]*)\(")


def parse_transcript(user_content: str) -> Conversation:
    """Rebuild the conversation from a rendered user turn: the inverse of :meth:`Prompt.render`.

    The mock server uses this to see exactly what a model would see. Text, ids, roles, names,
    times and commitments round-trip; multi-part content comes back as its rendered text (with
    placeholders such as ``[image]`` as plain text), and tool calls are split back at
    ``"; name("`` boundaries. Raises :class:`~extractor.errors.InputError` when the text holds
    no rendered ``<conversation>`` block.
    """
    lines = user_content.split("\n")
    start = next((i for i, line in enumerate(lines) if _CONVERSATION_OPEN.match(line)), None)
    where = InputLocation(source="<prompt>")
    if start is None or "</conversation>" not in lines[start + 1 :]:
        raise InputError("no rendered <conversation> block in the prompt", where)
    match = _CONVERSATION_OPEN.match(lines[start])
    assert match is not None
    end = lines.index("</conversation>", start + 1)
    try:
        conv_id = json.loads(f'"{match.group("id")}"')
    except ValueError:
        raise InputError("the conversation id is not a rendered id", where) from None
    messages = []
    for number, line in enumerate(lines[start + 1 : end], start=start + 2):
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise InputError(f"line {number} of the transcript is not JSON: {exc}", where) from None
        if not isinstance(entry, dict) or not {"id", "role", "text"} <= entry.keys():
            raise InputError(f"line {number} of the transcript is not a message entry", where)
        messages.append(_message_from_entry(entry))
    return conversation_from_data({"id": conv_id, "messages": messages}, location=where)


def _message_from_entry(entry: dict[str, str]) -> dict[str, object]:
    message: dict[str, object] = {
        "id": entry["id"],
        "role": entry["role"],
        "content": entry["text"],
    }
    for key, target in (("name", "name"), ("time", "timestamp"), ("commitment", "commitment")):
        if key in entry:
            message[target] = entry[key]
    if "tool_calls" in entry:
        message["tool_calls"] = _parse_tool_calls(entry["tool_calls"])
    return message


def _parse_tool_calls(rendered: str) -> list[dict[str, object]]:
    starts = list(_TOOL_CALL.finditer(rendered))
    calls: list[dict[str, object]] = []
    for i, m in enumerate(starts):
        stop = starts[i + 1].start() if i + 1 < len(starts) else len(rendered)
        body = rendered[m.end() : stop]
        calls.append({"function": {"name": m.group("name"), "arguments": body.removesuffix(")")}})
    return calls
