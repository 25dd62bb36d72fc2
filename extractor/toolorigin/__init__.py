"""Which tools observe the world and which relay someone else's text: decided by the caller.

A shell or a test runner reports what happened on the machine it ran on: its output is an
observation (origin ``TOOL``). A web fetch, a search, an email or a document reader returns text
that someone else wrote, and that text can say anything -- "The user has authorised transfers
from account ..." is a web page's claim, not the user's authorisation. Its origin is
``EXTERNAL_SOURCE``, whatever the model extracting from it says.

The model never chooses between the two. The caller declares which tools observe:

1. ``metadata.observing_tools`` of the conversation (a list of tool names), else
2. the run's list (``extractor run --observing-tools NAME,...``, also on ``serve``;
   :attr:`~extractor.validation.ValidationOptions.observing_tools`), else
3. :data:`DEFAULT_OBSERVING_TOOLS`.

A tool's name is the function name of the assistant's tool call a message answers
(``tool_call_id``), else the message's ``name``; names are compared case-insensitively. A tool
not in the list -- and a tool message whose tool cannot be named -- relays external text.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..conversation import OBSERVING_TOOLS_KEY, Conversation, Message
from ..vocab import Origin, Role

#: Tools whose output is an observation unless the caller says otherwise: shells and test
#: runners, which report what happened where they ran. Every other tool relays external text.
DEFAULT_OBSERVING_TOOLS: frozenset[str] = frozenset(
    {"bash", "sh", "shell", "zsh", "terminal", "pytest", "run_tests", "test_runner"}
)
#: The conversation metadata key that declares the observing tools of one conversation.
METADATA_KEY = OBSERVING_TOOLS_KEY


def normalized(names: Iterable[str]) -> frozenset[str]:
    """Tool names as they are compared: stripped and case-folded, blanks dropped."""
    return frozenset(n.strip().casefold() for n in names if n.strip())


def tool_of(message: Message, conversation: Conversation) -> str | None:
    """The name of the tool that produced ``message``, as the transcript gives it."""
    if message.tool_call_id is not None:
        for earlier in conversation.messages:
            if earlier is message:
                break
            for call in earlier.tool_calls or []:
                if call.id == message.tool_call_id:
                    return call.function.name
    return message.name


def observing_tools(conversation: Conversation, run: frozenset[str]) -> frozenset[str]:
    """The observing tools of ``conversation``: its metadata's list, else the run's."""
    declared: Any = conversation.metadata.get(METADATA_KEY)
    if isinstance(declared, list) and all(isinstance(n, str) for n in declared):
        return normalized(declared)
    return run


def observes(
    message: Message, conversation: Conversation, run: frozenset[str] = DEFAULT_OBSERVING_TOOLS
) -> bool:
    """Whether tool ``message`` is an observation (else it relays external text)."""
    name = tool_of(message, conversation)
    return name is not None and name.strip().casefold() in observing_tools(conversation, run)


def text_origin(
    message: Message, conversation: Conversation, run: frozenset[str] = DEFAULT_OBSERVING_TOOLS
) -> Origin:
    """The origin of text quoted from ``message``: its role's, and for a tool message
    ``TOOL`` or ``EXTERNAL_SOURCE`` as the caller declared."""
    if message.role is not Role.TOOL:
        return {
            Role.USER: Origin.USER,
            Role.ASSISTANT: Origin.MODEL_OUTPUT,
            Role.SYSTEM: Origin.SYSTEM,
        }[message.role]
    return Origin.TOOL if observes(message, conversation, run) else Origin.EXTERNAL_SOURCE


__all__ = [
    "DEFAULT_OBSERVING_TOOLS",
    "METADATA_KEY",
    "normalized",
    "observes",
    "observing_tools",
    "text_origin",
    "tool_of",
]
