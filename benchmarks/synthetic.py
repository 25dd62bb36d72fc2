"""Deterministic synthetic conversations for the throughput benchmarks.

``python benchmarks/synthetic.py 10000 out.jsonl`` writes 10,000 conversations (seeded, so every
run writes the same bytes). Each has 4-14 messages mixing first-person facts, preferences,
hedges, questions, assistant replies with the occasional tool call, and timestamps, so every
stage of the pipeline does real work.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

NAMES = ["Alice", "Bob", "Priya", "Marco", "Jen", "Tom", "Yuki", "Omar", "Lena", "Sam"]
CITIES = ["Leeds", "Berlin", "Lisbon", "Austin", "Denver", "Oslo", "Cork", "Lyon", "Osaka"]
JOBS = ["nurse", "data analyst", "teacher", "backend developer", "architect", "chef"]
FOODS = ["spicy food", "sushi", "green tea", "dark chocolate", "oat milk", "pho"]
USER_LINES = [
    "My manager is {name}.",
    "I live in {city} and work as a {job}.",
    "I think I might move to {city} next year.",
    "I used to live in {city}, but since March I've been in {city2}.",
    "I love {food}, but I really don't like {food2}.",
    "My sister {name} told me the rent goes up 5% in July.",
    "I have roughly {n} colleagues on my team.",
    "What's a good restaurant in {city}?",
    "If I won the lottery I'd buy a farm near {city}.",
    "Yesterday I got promoted to senior {job}!",
    "I'm allergic to peanuts 🥜 so please keep that in mind.",
    "Can you remind me what {name} said about the budget?",
]
ASSISTANT_LINES = [
    "Thanks, noted.",
    "That sounds great! How long have you been there?",
    "Many people in {city} recommend the old town.",
    "Your flight departs at 9:40 AM.",
    "I can't confirm that, but I can look it up.",
]
TOOL_LINES = [
    "On branch main\nnothing to commit, working tree clean",
    "Error: HTTP 503 Service Unavailable",
    '{"city": "{city}", "temp_c": 18, "conditions": "cloudy"}',
]


def _fill(template: str, rng: random.Random) -> str:
    city, city2 = rng.sample(CITIES, 2)
    food, food2 = rng.sample(FOODS, 2)
    return (
        template.replace("{name}", rng.choice(NAMES))
        .replace("{city2}", city2)
        .replace("{city}", city)
        .replace("{job}", rng.choice(JOBS))
        .replace("{food2}", food2)
        .replace("{food}", food)
        .replace("{n}", str(rng.randint(5, 60)))
    )


def conversation(index: int, rng: random.Random) -> dict[str, Any]:
    start = datetime(2024, 1, 1, 9) + timedelta(hours=rng.randint(0, 24 * 300))
    messages: list[dict[str, Any]] = []
    for turn in range(rng.randint(2, 7)):
        ts = (start + timedelta(minutes=3 * turn)).isoformat()
        messages.append(
            {"role": "user", "content": _fill(rng.choice(USER_LINES), rng), "timestamp": ts}
        )
        if rng.random() < 0.15:
            call = f"call_{index}_{turn}"
            fn = {"name": "lookup", "arguments": "{}"}
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "timestamp": ts,
                    "tool_calls": [{"id": call, "type": "function", "function": fn}],
                }
            )
            messages.append({"role": "tool", "tool_call_id": call, "timestamp": ts,
                             "content": _fill(rng.choice(TOOL_LINES), rng)})  # fmt: skip
        reply = {"role": "assistant", "content": _fill(rng.choice(ASSISTANT_LINES), rng)}
        messages.append({**reply, "timestamp": ts})
    return {"id": f"synthetic-{index:06d}", "messages": messages}


def conversations(count: int, seed: int = 7) -> Iterator[dict[str, Any]]:
    rng = random.Random(seed)
    for index in range(count):
        yield conversation(index, rng)


def write(count: int, path: Path, seed: int = 7) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for conv in conversations(count, seed):
            fh.write(json.dumps(conv, ensure_ascii=False) + "\n")
    return path


if __name__ == "__main__":
    write(int(sys.argv[1]), Path(sys.argv[2]))
