"""The response cache: identical requests are answered from disk, anything else is a miss."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from extractor.cache import CachingClient, default_cache_dir
from extractor.clients.base import ClientResult, Usage
from extractor.clients.openai_client import OpenAIClient
from extractor.conversation import Conversation, conversation_from_data
from extractor.errors import RateLimited
from extractor.mockserver import MockServer
from extractor.offline import offline_extract
from extractor.prompts import Prompt, load_prompt
from extractor.validation import ValidationOptions

PROMPT = load_prompt()
OPTIONS = ValidationOptions()
CONV = conversation_from_data(
    {"id": "c", "messages": [{"role": "user", "content": "I live in Lisbon."}]}
)


class Counting:
    """A client that counts its calls; ``fail`` makes it raise instead."""

    def __init__(self, model_name: str = "m", settings: dict[str, Any] | None = None) -> None:
        self.model_name = model_name
        self.settings = settings or {"temperature": 0.0}
        self.calls = 0
        self.fail = False

    async def extract(self, conv: Conversation, prompt: Prompt, options: Any) -> ClientResult:
        self.calls += 1
        if self.fail:
            raise RateLimited("slow down", retry_after=1)
        return ClientResult(output=offline_extract(conv), model=self.model_name,
                            usage=Usage(total_tokens=42))  # fmt: skip


def ask(client: CachingClient, conv: Conversation = CONV, prompt: Prompt = PROMPT,
        options: ValidationOptions = OPTIONS) -> ClientResult:  # fmt: skip
    return asyncio.run(client.extract(conv, prompt, options))


def test_a_repeated_request_is_served_from_disk(tmp_path: Path) -> None:
    inner = Counting()
    cache = CachingClient(inner, tmp_path)
    first, second = ask(cache), ask(cache)
    assert inner.calls == 1
    assert not first.cached and second.cached
    assert second.model_copy(update={"cached": False}) == first
    assert CachingClient(Counting(), tmp_path).model_name == "m"
    assert ask(CachingClient(inner, tmp_path)).cached  # a new process sees the same entry


PORTO = conversation_from_data(
    {"id": "c", "messages": [{"role": "user", "content": "I live in Porto."}]}
)


@pytest.mark.parametrize(
    "change",
    [
        lambda c, p, o: (PORTO, p, o),
        lambda c, p, o: (c, dataclasses.replace(p, hash="sha256:other"), o),
        lambda c, p, o: (c, p, ValidationOptions(allow_system_sources=True)),
    ],
    ids=["conversation", "prompt", "options"],
)
def test_any_change_to_the_request_is_a_miss(tmp_path: Path, change: Any) -> None:
    inner = Counting()
    cache = CachingClient(inner, tmp_path)
    ask(cache)
    ask(cache, *change(CONV, PROMPT, OPTIONS))
    assert inner.calls == 2


def test_model_and_settings_are_part_of_the_key(tmp_path: Path) -> None:
    keys = {
        CachingClient(inner, tmp_path).key(CONV, PROMPT, OPTIONS)
        for inner in (Counting(), Counting("other"), Counting(settings={"temperature": 0.7}))
    }
    assert len(keys) == 3
    a = OpenAIClient(model="gpt", base_url="http://127.0.0.1:1/v1", mode="tools")
    b = OpenAIClient(model="gpt", base_url="http://127.0.0.1:1/v1", mode="json")
    assert CachingClient(a, tmp_path).key(CONV, PROMPT, OPTIONS) != CachingClient(b, tmp_path).key(
        CONV, PROMPT, OPTIONS
    )


def test_errors_are_not_cached(tmp_path: Path) -> None:
    inner = Counting()
    inner.fail = True
    cache = CachingClient(inner, tmp_path)
    with pytest.raises(RateLimited):
        ask(cache)
    inner.fail = False
    assert not ask(cache).cached
    assert inner.calls == 2


def test_a_corrupt_entry_is_a_miss_and_is_replaced(tmp_path: Path) -> None:
    inner = Counting()
    cache = CachingClient(inner, tmp_path)
    path = cache.path_for(cache.key(CONV, PROMPT, OPTIONS))
    path.parent.mkdir(parents=True)
    path.write_text("{truncated", encoding="utf-8")
    assert not ask(cache).cached
    assert ask(cache).cached
    assert inner.calls == 1
    assert list(path.parent.glob(".tmp-*")) == []


def test_an_unwritable_cache_still_returns_the_answer(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory", encoding="utf-8")
    inner = Counting()
    result = ask(CachingClient(inner, blocker / "cache"))
    assert result.output == offline_extract(CONV)


def test_default_directory_follows_the_environment(tmp_path: Path) -> None:
    assert default_cache_dir({"EXTRACTOR_CACHE_DIR": str(tmp_path)}) == tmp_path
    xdg = default_cache_dir({"XDG_CACHE_HOME": str(tmp_path)})
    assert xdg == tmp_path / "memory-candidate-extractor"
    assert default_cache_dir({}) == Path.home() / ".cache" / "memory-candidate-extractor"


def test_rerunning_against_a_server_does_not_ask_it_again(tmp_path: Path) -> None:
    with MockServer() as server:
        inner = OpenAIClient(model="offline", base_url=server.base_url, api_key="k")
        first, second = ask(CachingClient(inner, tmp_path)), ask(CachingClient(inner, tmp_path))
        assert len(server.requests) == 1
    assert second.cached and second.output == first.output
    assert second.usage == first.usage
