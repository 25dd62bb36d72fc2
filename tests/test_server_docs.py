"""docs/server.md stays true: the documented commands run against a real `extractor serve`."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from helpers import loopback

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "server.md").read_text(encoding="utf-8")
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(port: int, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            loopback().get(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return
        except httpx.TransportError:
            assert server.poll() is None and time.monotonic() < deadline, "serve did not start"
            time.sleep(0.1)


@pytest.mark.slow  # runs documented shell commands: each `extractor` process starts afresh
@pytest.mark.skipif(shutil.which("curl") is None, reason="the documented commands use curl")
def test_documented_commands_work(tmp_path: Path):
    (script,) = re.findall(r"```bash\n(.*?)```", DOC, re.DOTALL)
    create, serve, *calls = script.strip().splitlines()
    assert serve == "extractor serve --keys keys.sqlite --store memory.db --port 8000 &"
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    run = lambda command: subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env,  # noqa: E731
                                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert run(create).returncode == 0
    port = free_port()
    server = subprocess.Popen([str(BIN / "extractor"), "serve", "--keys", "keys.sqlite",
                               "--store", "memory.db", "--port", str(port)], cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        wait_for(port, server)
        outputs = []
        for call in calls:
            assert call.startswith("curl ")
            done = run(call.replace(":8000/", f":{port}/"))
            assert done.returncode == 0, done.stderr
            outputs.append(json.loads(done.stdout))
    finally:
        server.terminate()
        server.wait(timeout=30)
    health, support, bare, bad, anonymous, schema, ingested = outputs
    assert health["status"] == "ok"
    assert support["conversation_id"] == "support-42" and support["candidates"]
    assert support["tenant"] == "acme"
    assert bare["conversation_id"].startswith("conv-")
    assert bad["error"]["field"] == "messages[0].role"
    assert anonymous["error"]["code"] == "UNAUTHENTICATED"
    assert schema["$id"].startswith("urn:memory-candidate-extractor:schema:conversation:")
    assert ingested["conversation_id"] == "acme/support-42" and ingested["stored"]
