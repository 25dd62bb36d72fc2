"""The extraction prompt: template files in ``prompts/``, rendered with the transcript.

Prompts are data. A prompt directory holds ``prompt.toml`` (id, version, file names), a plain
system prompt and a ``string.Template`` for the user turn; a missing variable fails loudly. The
prompt's hash covers the exact bytes of every file, so any edit changes the hash recorded in
each output.

Untrusted text cannot escape its section: each message is rendered as one line of JSON with
``<``, ``>`` and ``&`` escaped as ``\\u003c``-style sequences, so a message containing
``</conversation>`` or a fake candidate stays inside its string. The text is never passed through
any other template engine (instructor's Jinja rendering in particular), so the model sees it
exactly, and spans computed on it match the transcript.
"""

from __future__ import annotations

import json
import string
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from .conversation import Conversation, Message
from .hashing import text_hash

#: The prompts shipped with the project (top-level ``prompts/`` of the checkout or the wheel).
DEFAULT_PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
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
            conversation_id=_escape(conversation.id),
            message_count=len(conversation.messages),
            transcript=render_transcript(conversation.messages),
        )
        return [
            {"role": "system", "content": self.system_template},
            {"role": "user", "content": user},
        ]


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
    return _escape(json.dumps(entry, ensure_ascii=False))


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
