"""A 10-turn ``dealroom run`` against a real served model, on default settings (issue 36).

Two runs on one small generated room: ``--root local`` (the embedded SmolLM2 through
llama-cpp-python's server, which dealroom starts) and the same model re-templated so its chat
template opens ``<think>`` (``LlamaCppServer(think=True)``, given as a ``MODEL@URL`` root).
The sub-agent is the default (``local``). For each run it prints the turns completed, the
calls that timed out, the retries (HTTP attempts beyond one per call), and how many calls'
token counts were the server's against dealroom's estimate.

    nice python benchmarks/bench_served.py [--docs 4] [--turns 10] [--keep DIR]
        [--max-seconds S] [--only local|think]

Needs the ``local`` extra (and ``gguf``, the ``train`` extra, for the re-templated copy).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def run(room: Path, out: Path, root: str, turns: int, seconds: float | None) -> float:
    """``dealroom run`` with default settings but ``--root``, ``--max-turns`` (and
    ``--max-seconds``, to fit a busy machine)."""
    start = time.monotonic()
    limit = ["--max-seconds", str(seconds)] if seconds else []
    done = subprocess.run(
        [sys.executable, "-m", "dealroom", "run", str(room), "--out", str(out), "--root", root,
         "--max-turns", str(turns), "--progress-every", "0", *limit],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1, 4):
        print(done.stdout[-2000:], done.stderr[-2000:], sep="\n")
    return time.monotonic() - start


def figures(out: Path) -> dict[str, Any]:
    """What the run's events say about its model calls."""
    calls: list[dict[str, Any]] = []
    status = "?"
    for line in (out / "trajectory.jsonl").read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("type") == "model_call":
            calls.append(event)
        elif event.get("type") == "run_end":
            status = event.get("status", status)
    roots = [c for c in calls if c.get("role") == "root"]
    provider = [c.get("provider") or {} for c in calls]
    return {
        "status": status,
        "turns": sum(1 for c in roots if c.get("error") is None),
        "root_calls": len(roots),
        "sub_calls": len(calls) - len(roots),
        "timeouts": sum(1 for p in provider if p.get("kind") == "timeout"),
        "failed": sum(1 for c in calls if c.get("error") is not None),
        "retries": sum(max(int(p.get("attempts") or 1) - 1, 0) for p in provider),
        "counts_server": sum(1 for p in provider if p.get("usage_estimated") is False),
        "counts_estimated": sum(1 for p in provider if p.get("usage_estimated") is True),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=6000, help="the room's total tokens")
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--keep", type=Path, default=None, help="keep room and runs here")
    parser.add_argument("--max-seconds", type=float, default=None, help="per run")
    parser.add_argument("--only", choices=("local", "think"), default=None)
    args = parser.parse_args()

    from dealroom.models._spec import LOCAL_MODEL
    from dealroom.room import generate_room
    from dealroom.testing import LlamaCppServer

    work = args.keep or Path(tempfile.mkdtemp(prefix="dealroom-served-"))
    room = work / "room"
    if not room.is_dir():
        generate_room(room, docs=args.docs, seed=7, tokens=args.tokens, secret="bench-served")
    print(f"room: {args.docs} documents, {args.tokens} tokens; {args.turns} turns; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    rows: list[tuple[str, float, dict[str, Any]]] = []
    if args.only != "think":
        seconds = run(room, work / "run-local", "local", args.turns, args.max_seconds)
        rows.append(("local", seconds, figures(work / "run-local")))
    if args.only != "local":
        with LlamaCppServer(think=True) as server:
            seconds = run(room, work / "run-think", f"{LOCAL_MODEL}@{server.base_url}",
                          args.turns, args.max_seconds)
        rows.append(("think (MODEL@URL)", seconds, figures(work / "run-think")))
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    for name, seconds, row in rows:
        print(f"{name:18} {seconds:7.1f} s  " + "  ".join(f"{k}={v}" for k, v in row.items()))


if __name__ == "__main__":
    main()
