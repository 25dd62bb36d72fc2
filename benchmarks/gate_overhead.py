"""Gate overhead: validation + candidate building + admission cost per candidate, in µs.

The model's raw outputs are produced first (offline model, untimed); then only the gate runs,
repeatedly, over the same outputs. Times are CPU time of this process (``time.process_time``),
so a busy machine does not inflate them; the gate is single-threaded, pure Python. Compare the per-candidate figure with a model call
(hundreds of milliseconds): the gate is noise next to it.

    /tmp/venv/bin/python benchmarks/gate_overhead.py            # 2,000 synthetic conversations
    /tmp/venv/bin/python benchmarks/gate_overhead.py --count 500 --repeat 9
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synthetic

from extractor.admission import admit, load_policy
from extractor.candidates import Provenance, build_candidates
from extractor.conversation import Conversation, conversation_from_data
from extractor.offline import offline_extract
from extractor.validation import validate_extraction

PROVENANCE = Provenance(model="offline", prompt_id="p", prompt_version="1", prompt_hash="h",
                        schema_version="1", extractor_version="0")  # fmt: skip
NOW = datetime(2024, 7, 1, tzinfo=UTC)


def prepare(count: int) -> list[tuple[Conversation, Any]]:
    convs = [conversation_from_data(c) for c in synthetic.conversations(count)]
    return [(c, offline_extract(c)) for c in convs]


def one_pass(work: list[tuple[Conversation, Any]], policy: Any) -> tuple[float, float, int, int]:
    """Seconds in validation (+ building candidates), seconds in admission, raw and built counts."""
    validate_s = admit_s = 0.0
    raw_count = built = 0
    for conv, raw in work:
        t0 = time.process_time()
        report = validate_extraction(raw, conv)
        candidates = build_candidates(report.accepted, conv, provenance=PROVENANCE, recorded_at=NOW)
        t1 = time.process_time()
        admit(candidates, policy)
        t2 = time.process_time()
        validate_s += t1 - t0
        admit_s += t2 - t1
        raw_count += len(raw["candidates"]) if isinstance(raw, dict) else 0
        built += len(candidates)
    return validate_s, admit_s, raw_count, built


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    work = prepare(args.count)
    policy = load_policy()
    runs = [one_pass(work, policy) for _ in range(args.repeat)]
    raw_count, built = runs[0][2], runs[0][3]
    v_us = statistics.median(r[0] for r in runs) / raw_count * 1e6
    a_us = statistics.median(r[1] for r in runs) / built * 1e6
    print(f"{args.count} conversations, {raw_count} proposed candidates, {built} accepted; "
          f"median of {args.repeat} passes")  # fmt: skip
    print("| stage | µs per candidate |")
    print("|---|---:|")
    print(f"| validation + candidate building (per proposed candidate) | {v_us:.1f} |")
    print(f"| admission (per accepted candidate) | {a_us:.1f} |")
    print(f"| whole gate (per accepted candidate) | {v_us * raw_count / built + a_us:.1f} |")


if __name__ == "__main__":
    main()
