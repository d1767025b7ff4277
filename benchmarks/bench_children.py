"""Children benchmark: a depth-2 run whose root sends ``--children`` children in one
``rlm_batch``, against a loopback endpoint answering every call after ``--latency`` seconds.

The endpoint (its own process) plays every model: the root sends one child per document and
writes their answers into the memo; each child reads its document with one ``llm_batch`` of
``--calls`` sub-calls, then submits. A child is therefore three calls one after the other
(its first reply, its wave of sub-calls, its second reply), each sandboxed REPL its own. The
run goes through ``run_agent`` with ``--child-concurrency`` children at a time, and the
benchmark prints the children's time (first ``child_start`` to last ``child_end`` in the
trajectory) against the ideal

    ceil(children / child_concurrency) waves x 3 calls x latency

and the ratio (floor: 1.3x), with the CPU time per child of the host and of the REPLs' worker
processes (each child's REPL is a fresh interpreter that opens the room: on a loaded machine
their start-up, not the endpoint, sets the pace).

    python benchmarks/bench_children.py                      # 16 children, 4 at a time, 200 ms
    python benchmarks/bench_children.py --child-concurrency 16
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TURNS = 3
"""Calls one after the other in a child: its first reply, its wave of sub-calls, its last."""


def reply(request: dict[str, Any]) -> str:
    """Root, children and sub-agents as one served model (see the module docstring)."""
    messages = request["messages"]
    if len(messages) < 2:
        return "ok"
    first = messages[1]["content"]
    turn = sum(m["role"] == "assistant" for m in messages) + 1
    if "child agent" in first:
        doc, calls = re.search(r"read (D\d{5}) in (\d+)", first).groups()
        if turn == 1:
            return (f"```python\nr = llm_batch([{{'prompt': 'part ' + str(i), 'docs': "
                    f"['{doc}']}} for i in range({calls})])\n```")
        return f"```python\nsubmit('{doc}: ' + str(len(r)) + ' parts read')\n```"
    if "data room" in first:
        if turn == 1:
            return ("```python\nr = rlm_batch([f'read {d.id} in ' + CALLS for d in "
                    "room.docs[:CHILDREN]])\n```")
        return "```python\nmemo.write('\\n'.join(r))\nsubmit()\n```"
    return "finding: none"


def serve(latency: float, children: int, calls: int) -> None:
    """The endpoint's process: print the base URL, serve until killed."""
    import asyncio

    from dealroom.testing import MockOpenAIServer

    def answer(request: dict[str, Any]) -> str:
        text = reply(request)
        return text.replace("CHILDREN", str(children)).replace("CALLS", repr(str(calls)))

    async def main() -> None:
        server = MockOpenAIServer(answer, latency=latency, record=False)
        await server.astart()
        print(server.base_url, flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


def run_once(room: Path, out: Path, url: str, args: argparse.Namespace) -> dict[str, float]:
    from dealroom.harness import run_agent
    from dealroom.runs import RunFolder

    model = f"mock@{url}#context_window=32000"
    cpu = os.times()  # children's: the REPLs' workers, waited for as each closes
    result = run_agent(room, out, root=model, sub=model, depth=2, max_turns=4,
                       child_concurrency=args.child_concurrency, concurrency=64)
    cpu_s = sum(os.times()[:2]) - sum(cpu[:2])
    repl_cpu_s = sum(os.times()[2:4]) - sum(cpu[2:4])
    if result.status != "submitted":
        raise SystemExit(f"the run ended {result.status}: {result.reason}")
    events = RunFolder.open(out).events()
    starts = [e["t"] for e in events if e["type"] == "child_start"]
    ends = [e for e in events if e["type"] == "child_end"]
    if len(ends) != args.children or any(e.get("error") for e in ends):
        raise SystemExit(f"{len(ends)} children ended, expected {args.children} without error")
    return {"children_s": max(e["t"] for e in ends) - min(starts), "cpu_s": cpu_s,
            "repl_cpu_s": repl_cpu_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--children", type=int, default=16)
    parser.add_argument("--child-concurrency", type=int, default=4)
    parser.add_argument("--calls", type=int, default=4, help="sub-calls per child")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.latency, args.children, args.calls)
        return
    from dealroom.room import generate_room

    waves = math.ceil(args.children / args.child_concurrency)
    ideal = waves * TURNS * args.latency
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--latency", str(args.latency), "--children",
         str(args.children), "--calls", str(args.calls)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as tmp:
            room = Path(tmp) / "room"
            generate_room(room, docs=max(args.children, 20), seed=1, secret="bench")
            print(f"{args.children} children, {args.child_concurrency} at a time, "
                  f"{args.calls} sub-calls each, {args.latency * 1000:.0f} ms endpoint: ideal "
                  f"{waves} waves x {TURNS} calls x {args.latency} s = {ideal:.2f} s; load "
                  f"average {os.getloadavg()[0]:.1f}")
            ratios = []
            for n in range(args.repeat):
                t0 = time.perf_counter()
                got = run_once(room, Path(tmp) / f"run-{n}", url, args)
                ratio = got["children_s"] / ideal
                ratios.append(ratio)
                print(json.dumps({"children_s": round(got["children_s"], 3),
                                  "ratio": round(ratio, 3),
                                  "run_s": round(time.perf_counter() - t0, 3),
                                  "host_cpu_ms_per_child": round(
                                      1000 * got["cpu_s"] / args.children, 1),
                                  "repl_cpu_ms_per_child": round(
                                      1000 * got["repl_cpu_s"] / args.children, 1)}))
            best = min(ratios)
            print(f"children: {best:.2f}x the ideal at best, median "
                  f"{sorted(ratios)[len(ratios) // 2]:.2f}x (floor 1.3x: "
                  f"{'met' if best <= 1.3 else 'NOT met'}); load average "
                  f"{os.getloadavg()[0]:.1f}")
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
