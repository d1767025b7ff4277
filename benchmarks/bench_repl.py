"""The room inside the agent's sandboxed REPL: start, grep, search and the worker's peak memory.

    python benchmarks/bench_repl.py --room rooms/big            # an existing room
    python benchmarks/bench_repl.py --docs 5000 --tokens 80M    # generate one first (~30 s)

Targets (issue: RLM harness): open in the REPL <= 3 s, grep over the room <= 2 s, search
<= 100 ms per query, the REPL worker's peak memory < 1.5 GB. Timings are taken inside the worker,
so they are what the root's code sees.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from dealroom.harness.sandbox import ProcessSandbox

PATTERNS = [r"change of control", r"indemnif\w+", r"\$\d[\d,]*(\.\d+)?( million)?",
            r"terminat\w+ .{0,40}consent", r"permit|licen[cs]e", r"\d{4}-\d{2}-\d{2}"]
QUERIES = ["change of control consent", "uncapped indemnity", "pending litigation damages",
           "tax audit assessment", "expired permit", "invention assignment founder",
           "data breach notification", "environmental remediation", "severance change in control",
           "covenant default lender", "related party transaction", "missing schedule"]

MEASURE = f"""
import json, resource, time
patterns, queries = {PATTERNS!r}, {QUERIES!r}
grep = []
for p in patterns:
    t = time.perf_counter(); hits = room.grep(p, max_hits=200); grep.append(time.perf_counter() - t)
search = []
for q in queries:
    t = time.perf_counter(); hits = room.search(q, k=20); search.append(time.perf_counter() - t)
print(json.dumps({{"grep": grep, "search": search,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


async def measure(room: Path) -> dict:
    with tempfile.TemporaryDirectory() as scratch:
        sandbox = ProcessSandbox(room, scratch)
        started = time.perf_counter()
        await sandbox.start()
        start_s = time.perf_counter() - started
        result = await sandbox.execute(MEASURE, timeout=600)
        isolation = sandbox.isolation
        await sandbox.close()
    if result.error:
        raise SystemExit(result.error)
    return {"start_s": start_s, "isolation": isolation, **json.loads(result.stdout)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--room", type=Path)
    parser.add_argument("--docs", type=int, default=5000)
    parser.add_argument("--tokens", default="80M")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        room = args.room
        if room is None:
            from dealroom.room import Room, generate_room

            room = Path(tmp) / "room"
            tokens = int(float(args.tokens.rstrip("Mm")) * 1e6) if args.tokens[-1] in "Mm" \
                else int(args.tokens)
            t = time.perf_counter()
            generate_room(room, docs=args.docs, seed=args.seed, tokens=tokens)
            print(f"generated {args.docs} docs / {tokens:,} tokens in "
                  f"{time.perf_counter() - t:.1f} s")
            t = time.perf_counter()
            Room.open(room).close()
            print(f"index built in {time.perf_counter() - t:.1f} s")
        r = asyncio.run(measure(room))
    print(f"sandbox isolation: {r['isolation']}")
    print(f"open in the REPL (worker start + Room.open): {r['start_s']:.2f} s   (target <= 3 s)")
    print(f"grep, {len(PATTERNS)} patterns: {min(r['grep']):.2f}-{max(r['grep']):.2f} s "
          "(target <= 2 s)")
    mean = sum(r["search"]) / len(r["search"])
    print(f"search, {len(QUERIES)} queries: mean {mean * 1000:.0f} ms, "
          f"max {max(r['search']) * 1000:.0f} ms   (target <= 100 ms)")
    print(f"REPL worker peak memory: {r['peak_mb']:.0f} MB   (target < 1,536 MB)")


if __name__ == "__main__":
    main()
