"""mem0's side of ``benchmarks/tokens.py``: run mem0's own ``Memory.add`` on MSC conversations
against the logging stub. Runs in a throwaway venv with mem0ai installed (never the project's):

    python3 -m venv /tmp/mem0-venv && /tmp/mem0-venv/bin/pip install mem0ai
    /tmp/mem0-venv/bin/python benchmarks/mem0_driver.py --base-url URL --limit 50

Standard library and mem0 only: this file does not import the project. Each conversation is one
``add`` call under a fresh ``user_id`` (so no memory of another conversation is retrieved),
with the whole conversation as its messages; before it, ``POST <base>/control`` tells the stub
which conversation mem0 is about to extract, so it can answer with the same facts our offline
model finds. mem0's vector store is its default (Qdrant), in a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import urllib.request
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "msc-valid.jsonl"


def conversations(path: Path, limit: int) -> list[dict[str, object]]:
    out = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if len(out) >= limit:
                break
            out.append(json.loads(line))
    return out


def announce(base_url: str, conversation_id: str) -> None:
    body = json.dumps({"conversation": conversation_id}).encode()
    request = urllib.request.Request(f"{base_url}/control", data=body, method="POST")
    urllib.request.urlopen(request, timeout=30).read()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True, help="the stub, e.g. http://127.0.0.1:9/v1")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "stub-key")
    os.environ["MEM0_TELEMETRY"] = "False"
    from mem0 import Memory

    with tempfile.TemporaryDirectory() as tmp:
        config = {
            "llm": {"provider": "openai",
                    "config": {"model": "gpt-4o-mini", "openai_base_url": args.base_url}},
            "embedder": {"provider": "openai",
                         "config": {"model": "text-embedding-3-small",
                                    "openai_base_url": args.base_url}},
            "vector_store": {"provider": "qdrant",
                             "config": {"path": f"{tmp}/qdrant", "on_disk": False,
                                        "embedding_model_dims": 1536}},
            "history_db_path": f"{tmp}/history.db",
        }  # fmt: skip
        memory = Memory.from_config(config)
        for n, conv in enumerate(conversations(args.data, args.limit)):
            announce(args.base_url, str(conv["id"]))
            messages = [
                {"role": m["role"], "content": m["content"]}
                for m in conv["messages"]  # type: ignore[attr-defined]
                if isinstance(m.get("content"), str)
            ]
            memory.add(messages, user_id=f"user-{n}")
    print("mem0 done")


if __name__ == "__main__":
    main()
