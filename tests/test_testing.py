"""The pytest plugin (extractor.testing), used here as a user would use it.

The fixtures below come from the installed plugin itself (the ``pytest11`` entry point), not
from a conftest, and the last tests run docs/testing.md's example files in a fresh project.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import httpx
import pytest
import vcr
import yaml

from extractor.errors import ModelClientError
from extractor.mockserver import MockServer
from extractor.testing import FIXED_NOW, MOCK_API_KEY, mock_llm_extractor_for, vcr_config
from extractor.validation import Code

CHAT = {
    "id": "chat-1",
    "messages": [
        {"role": "user", "content": "My manager is Alice."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "I think I prefer tea over coffee."},
    ],
}
DOCS = Path(__file__).resolve().parents[1] / "docs" / "testing.md"

pytest_plugins = ["pytester"]


def test_marker_is_registered(pytestconfig: pytest.Config):
    assert any(line.startswith("mock_llm_faults(") for line in pytestconfig.getini("markers"))


def test_offline_extractor_is_reproducible(offline_extractor):
    first, second = offline_extractor.process(CHAT), offline_extractor.process(CHAT)
    assert first.recorded_at == FIXED_NOW
    assert first.model_dump(exclude={"timings"}) == second.model_dump(exclude={"timings"})
    assert first.candidates


def test_mock_llm_extractor_talks_to_the_mock_over_http(
    mock_llm_extractor, mock_llm_server, offline_extractor
):
    result = mock_llm_extractor.process(CHAT)
    offline = offline_extractor.process(CHAT)
    assert [c.content for c in result.candidates] == [c.content for c in offline.candidates]
    assert len(mock_llm_server.requests) == 1
    assert mock_llm_extractor.client.base_url == mock_llm_server.base_url


@pytest.mark.mock_llm_faults("verified")
def test_marker_faults_reach_the_server(mock_llm_extractor):
    result = mock_llm_extractor.process(CHAT)
    assert result.attempts == 2
    codes = [r.code for r in result.failed_attempts[0].rejections]
    assert Code.EXTRACTOR_CLAIMED_VERIFIED in codes
    assert all(c.verification_state != "VERIFIED" for c in result.candidates)


@pytest.mark.mock_llm_faults("rate_limit:1")
def test_marker_transport_faults_are_retried(mock_llm_extractor, mock_llm_server):
    assert mock_llm_extractor.process(CHAT).candidates
    assert len(mock_llm_server.requests) == 2


def test_factory_servers_are_independent(mock_llm_server_factory):
    broken = mock_llm_server_factory(faults="server_error:always")
    healthy = mock_llm_server_factory()
    assert broken.base_url != healthy.base_url
    with pytest.raises(ModelClientError, match="HTTP 500"):
        mock_llm_extractor_for(broken, max_rate_limit_retries=0).process(CHAT)
    assert mock_llm_extractor_for(healthy).process(CHAT).candidates


def test_vcr_cassette_replays_without_server_and_keeps_no_secret(tmp_path: Path):
    cassette = tmp_path / "chat.yaml"
    with MockServer() as server, vcr.use_cassette(str(cassette), **vcr_config(record_mode="once")):
        recorded = mock_llm_extractor_for(server, api_key="sk-very-secret").process(CHAT)
    text = cassette.read_text(encoding="utf-8")
    assert "sk-very-secret" not in text and MOCK_API_KEY not in text
    headers = yaml.safe_load(text)["interactions"][0]["request"]["headers"]
    assert "authorization" not in {name.lower() for name in headers}

    # nothing listens on the discard port: only the cassette can answer
    dead = MockServer(port=9)
    dead._server = type("Bound", (), {"server_address": ("127.0.0.1", 9)})()  # base_url only
    with vcr.use_cassette(str(cassette), **vcr_config(record_mode="none")):
        replayed = mock_llm_extractor_for(dead).process(CHAT)
    assert replayed.model_dump(exclude={"timings"}) == recorded.model_dump(exclude={"timings"})

    # the body is matched: another conversation is a cassette miss, never a stale answer
    other = {**CHAT, "messages": [{"role": "user", "content": "My manager is Bob."}]}
    with vcr.use_cassette(str(cassette), **vcr_config(record_mode="none")):  # noqa: SIM117
        with pytest.raises(ModelClientError, match="no recorded interaction matches it"):
            mock_llm_extractor_for(dead, max_rate_limit_retries=0).process(other)


# -- docs/testing.md, run as a user's project ------------------------------------------------------


def doc_files() -> dict[str, str]:
    blocks = re.findall(r"```python\n# file: (\S+)\n(.*?)```", DOCS.read_text(encoding="utf-8"),
                        re.DOTALL)  # fmt: skip
    return dict(blocks)


LIFECYCLE = """
import httpx, pytest

SEEN = []


def test_first(mock_llm_server):
    SEEN.append(mock_llm_server.base_url)
    assert httpx.get(mock_llm_server.base_url + "/models").status_code == 200


def test_server_was_stopped_after_the_first_test():
    with pytest.raises(httpx.ConnectError):
        httpx.get(SEEN[0] + "/models")
"""


def test_documented_record_and_replay_flow_works(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
):
    files = doc_files()
    assert set(files) == {"test_hooks.py", "conftest.py"}
    pytester.makepyfile(**{name.removesuffix(".py"): body for name, body in files.items()})
    pytester.makepyfile(test_lifecycle=LIFECYCLE)
    for name in [k for k in os.environ if k.startswith(("OPENAI_", "EXTRACTOR_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("EXTRACTOR_MODEL", "offline")
    # plugins of other installed packages (schemathesis, anyio) play no part in the flow
    strict = ("-p", "no:randomly", "-p", "no:schemathesis", "-p", "no:anyio", "--strict-markers")

    with MockServer() as server:  # stands in for the real provider while recording
        monkeypatch.setenv("EXTRACTOR_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-recording-key")
        recorded = pytester.runpytest_inprocess(*strict, "--record-mode=once")
        recorded.assert_outcomes(passed=6)
    cassette = (
        pytester.path / "cassettes" / "test_hooks" / "test_hook_against_a_recorded_model.yaml"
    )
    assert cassette.is_file()
    assert "sk-recording-key" not in cassette.read_text(encoding="utf-8")

    monkeypatch.setenv("EXTRACTOR_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    monkeypatch.delenv("OPENAI_API_KEY")
    replayed = pytester.runpytest_inprocess(*strict, "--record-mode=none", "-k", "recorded")
    replayed.assert_outcomes(passed=1, deselected=5)


def test_mock_server_answers_on_loopback_only(mock_llm_server):
    assert mock_llm_server.base_url.startswith("http://127.0.0.1:")
    assert httpx.get(mock_llm_server.base_url + "/models").status_code == 200
