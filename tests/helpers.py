"""Small helpers shared by several test files.

Import from tests as ``from helpers import ...``.
"""

from __future__ import annotations

import functools
import json
import textwrap
from pathlib import Path
from typing import Any

import httpx
from jsonschema import Draft202012Validator

from extractor.resultline import decode, line_format
from extractor.results import ConversationResult
from extractor.schemas import schema_for


def read_raw_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of a JSONL output as written; the file must end with a newline (no
    half-written line)."""
    raw = path.read_bytes() if path.exists() else b""
    assert not raw or raw.endswith(b"\n"), f"{path} ends with a partial line"
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


def read_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of a JSONL output, result lines (format 2) expanded to every record whole
    (what :func:`extractor.load_result` gives, as JSON data); other lines as written."""
    return [_expanded(line) for line in read_raw_lines(path)]


def _expanded(line: dict[str, Any]) -> dict[str, Any]:
    if "candidates" not in line or line_format(line) == 1:
        return line
    expanded: dict[str, Any] = ConversationResult.model_validate(decode(line)).model_dump(
        mode="json"
    )
    return expanded


def conv(cid: str, text: str = "I live in Lisbon and I prefer tea.") -> str:
    """One input line: a conversation ``cid`` with a single user message."""
    return json.dumps({"id": cid, "messages": [{"role": "user", "content": text}]})


def cli_run_script(prelude: str, client: str, *, first_arg: int = 1) -> str:
    """Source for ``python -c``: ``extractor run *sys.argv[first_arg:]`` with the model client
    replaced by ``client``, an expression over the names ``prelude`` defines.

    The client is swapped where the CLI builds it (``extractor.cli._common.get_client``), so the
    real command runs in a real process that can be killed.
    """
    return textwrap.dedent(prelude) + textwrap.dedent(
        f"""
        import sys
        import extractor.cli._common as cli_common
        cli_common.get_client = lambda *args, **kwargs: {client}
        from extractor.cli import cli
        cli(["run", *sys.argv[{first_arg}:]])
        """
    )


def stalling_run_script() -> str:
    """:func:`cli_run_script` with the offline model answering only the first ``sys.argv[1]``
    extractions and then waiting forever on every other one (``-1``: it never waits); the CLI
    arguments follow. A test can then kill the run at a known point without any timing: the run
    cannot finish before the kill, however slow or fast the machine is."""
    prelude = """
        import asyncio
        import sys

        from extractor.offline import OfflineClient

        class Stalling(OfflineClient):
            answered = 0

            async def extract(self, *args):
                if 0 <= int(sys.argv[1]) <= Stalling.answered:
                    await asyncio.Event().wait()
                Stalling.answered += 1
                return await super().extract(*args)
        """
    return cli_run_script(prelude, "Stalling()", first_arg=2)


def examples(n: int) -> int:
    """The ``max_examples`` of a property test: ``n`` under the default hypothesis profile,
    scaled with the loaded profile (``HYPOTHESIS_PROFILE=thorough`` runs ten times as many;
    see tests/conftest.py and docs/testing.md)."""
    from hypothesis import settings

    default = settings.get_profile("default").max_examples
    return max(1, n * settings.default.max_examples // default)


@functools.cache
def schema_validator(name: str) -> Draft202012Validator:
    """A validator for the published schema ``name`` (``extractor.schemas.schema_for``), built
    once: generating a schema from its model costs ~40 ms, too much to repeat per example."""
    return Draft202012Validator(schema_for(name))


@functools.cache
def loopback() -> httpx.Client:
    """The client for the tests' requests to servers they start on 127.0.0.1 (plain HTTP).

    Building an ``httpx`` client loads the whole CA bundle (about 55 ms of CPU), which a request
    over ``http://`` never uses; ``httpx.get()`` builds one per call. This one is built once. It
    keeps no connection alive between requests, so a server a test stopped is never reached
    through a stale connection, and its default timeout is a generous ceiling (60 s).
    """
    return httpx.Client(timeout=60, limits=httpx.Limits(max_keepalive_connections=0))
