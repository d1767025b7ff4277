"""Event-write benchmark: what checking each trajectory event against its type costs.

``RunRecorder.event`` checks every event it writes against its type's record
(``dealroom.runs._events.check_written``: every field there, none other, each of its type)
before it appends the line. This writes a run's worth of events of the mix an RLM run writes
(per root turn: a root ``model_call``, a ``cell``, a ``wave`` of sub-calls, one ``model_call``
each, a ``memo``) to a fresh run folder, with the check and with it switched off, and prints
microseconds per event for both, for the check alone, and the one-off cost of building each
type's check (a pydantic TypeAdapter, on first use in a process). It also writes them, checked,
with two secrets known to the process (an API key and a header token, found in no event), so
every string of every event is searched for them (``dealroom._util.redact``).

    python benchmarks/bench_events.py                 # 20,000 events, best of 5
    python benchmarks/bench_events.py --events 100000 --repeat 3
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from dealroom._util.redact import SECRETS
from dealroom.runs import RunFolder, RunRecorder, _events, _recorder

USAGE = {"input_tokens": 1800, "cached_input_tokens": 0, "output_tokens": 40, "cost_usd": 0.0,
         "calls": 1}
PROVIDER = {"attempts": 1, "finish_reason": "stop", "usage_estimated": False, "streamed": False}


def turn_events(turn: int, subs: int) -> list[tuple[str, dict[str, Any]]]:
    """One root turn's events, as ``(type, fields)``."""
    call = {"model": "m", "usage": USAGE, "error": None, "latency_s": 0.8, "provider": PROVIDER,
            "tokens": None, "reasoning": None}
    out: list[tuple[str, dict[str, Any]]] = [("model_call", {
        **call, "role": "root", "call_id": f"root/t{turn}", "turn": turn, "wave": None,
        "input": {"messages": [{"role": "user", "content": "x" * 2000}]},
        "output": "```repl\nllm_batch(...)\n```"})]
    out += [("model_call", {
        **call, "role": "sub", "call_id": f"root/t{turn}/s{i}", "turn": turn, "wave": turn,
        "input": {"prompt": "Find the change-of-control clauses.", "text": "",
                  "docs": [{"id": f"d{i}", "pages": [1, 4], "chars": [0, 9000]}],
                  "truncated": False},
        "output": "ISSUE: consent required | SEVERITY: medium"}) for i in range(subs)]
    out.append(("wave", {"wave": turn, "calls": subs, "ok": subs, "failed": 0, "seconds": 1.2}))
    out.append(("cell", {"turn": turn, "code": "x = llm_batch(...)", "output": "ok\n",
                         "error": None, "timed_out": False, "crashed": False, "seconds": 1.3}))
    out.append(("memo", {"sections": turn, "chars": 400 * turn}))
    return out


def write(events: list[tuple[str, dict[str, Any]]]) -> float:
    """Seconds to record ``events`` into a fresh run folder."""
    with tempfile.TemporaryDirectory() as tmp:
        recorder = RunRecorder(RunFolder.create(Path(tmp) / "run", {"harness": "rlm"}))
        started = time.perf_counter()
        for kind, fields in events:
            recorder.event(kind, **fields)
        seconds = time.perf_counter() - started
        recorder.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    events: list[tuple[str, dict[str, Any]]] = []
    turn = 0
    while len(events) < args.events:
        turn += 1
        events += turn_events(turn, subs=16)
    events = events[:args.events]
    n = len(events)
    check = _recorder.check_written
    checked, unchecked, redacted = [], [], []
    for _ in range(args.repeat):  # interleaved: a busy machine slows all alike
        checked.append(write(events))
        SECRETS.add("sk-proj-0123456789abcdefghijklmnop")
        SECRETS.add("org-token-9876543210")
        try:
            redacted.append(write(events))
        finally:
            SECRETS.clear()
        _recorder.check_written = lambda record: None  # type: ignore[assignment]
        try:
            unchecked.append(write(events))
        finally:
            _recorder.check_written = check
    records = [{"seq": i, "t": 0.5, "type": kind, "agent": "root", "depth": 0, **fields}
               for i, (kind, fields) in enumerate(events)]
    _events._WRITERS.clear()  # the checks are built on first use, once per type and process
    started = time.perf_counter()
    for record in {r["type"]: r for r in records}.values():
        _events.check_written(record)
    built = time.perf_counter() - started
    started = time.perf_counter()
    for record in records:
        _events.check_written(record)
    alone = time.perf_counter() - started
    print(f"{n:,} events (root turns of 16 sub-calls), best of {args.repeat}")
    best, base = min(checked), min(unchecked)
    print(f"  written, unchecked: {1e6 * base / n:7.2f} us/event")
    print(f"  written, checked:   {1e6 * best / n:7.2f} us/event "
          f"({100 * (best - base) / base:+.0f}%)")
    print(f"  checked, 2 secrets known: {1e6 * min(redacted) / n:7.2f} us/event "
          f"({100 * (min(redacted) - best) / best:+.0f}% on checked)")
    print(f"  the check alone:    {1e6 * alone / n:7.2f} us/event")
    print(f"  building the checks of the {len(_events._WRITERS)} types, once a process: "
          f"{1e3 * built:.1f} ms")


if __name__ == "__main__":
    main()
