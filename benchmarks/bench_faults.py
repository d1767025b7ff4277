"""Provider-fault benchmark: sub-calls lost and wall time as the endpoint's fault rate rises.

Generates a 60-document room, starts ``MockOpenAIServer`` in a separate process answering
``NONE`` after ``--latency`` seconds, with ``--rates`` of its calls faulted at random (a
quarter of the faults are hangs of 600 s, the rest spread over 429, 500, dropped connections
and malformed 200s: plain text, an HTML page, empty ``choices``, ``null`` content), and runs
the scripted root over it with the endpoint as sub-agent (``dealroom run ROOM --sub
mock@URL``, default client settings: streamed, 60 s first-byte time-out, 300 s total, 4
retries). Each rate runs ``--repeats`` times with fault seeds 0, 1, ...; with ``--no-hedge``
also with hedging off (``#hedge=0``), where each hang costs the first-byte time-out.

Prints per rate: sub-calls, sub-calls lost (failed for good), HTTP requests sent, hedges,
wall time, and the run's status.

    python benchmarks/bench_faults.py                       # 0%, 20%, 50%; 3 repeats
    python benchmarks/bench_faults.py --no-hedge --repeats 1
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dealroom.harness import run_agent
from dealroom.room import generate_room


def start_server(latency: float, rate: float, seed: int) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "dealroom.testing", "--latency", str(latency),
         "--reply", "NONE", "--fault-rate", str(rate), "--seed", str(seed)],
        stdout=subprocess.PIPE, text=True,
    )
    assert proc.stdout is not None
    base_url = proc.stdout.readline().strip()
    if not base_url.startswith("http"):
        proc.kill()
        raise SystemExit(f"mock server did not start (got {base_url!r})")
    return proc, base_url


def one_run(room: Path, out: Path, base_url: str, hedge: bool) -> dict[str, Any]:
    sub = f"mock@{base_url}" + ("" if hedge else "#hedge=0")
    start = time.perf_counter()
    result = run_agent(room, out, root="scripted", sub=sub, max_turns=30)
    wall = time.perf_counter() - start
    events = [json.loads(x) for x in (out / "trajectory.jsonl").read_text().splitlines()]
    subs = [e for e in events if e["type"] == "model_call" and e["role"] == "sub"]
    providers = [e.get("provider") or {} for e in subs]
    return {
        "calls": len(subs),
        "lost": sum(1 for e in subs if e["error"]),
        "requests": sum(p.get("attempts") or 0 for p in providers),
        "hedges": sum(1 for p in providers if p.get("hedge")),
        "wall_s": wall,
        "status": result.status,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", default="0,0.2,0.5", help="fault rates, comma separated")
    parser.add_argument("--repeats", type=int, default=3, help="fault seeds per rate")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per answer")
    parser.add_argument("--docs", type=int, default=60)
    parser.add_argument("--no-hedge", action="store_true", help="also run with hedging off")
    args = parser.parse_args()
    rates = [float(r) for r in args.rates.split(",")]
    with tempfile.TemporaryDirectory(prefix="dealroom-bench-faults-") as tmp:
        room = Path(tmp) / "room"
        generate_room(room, docs=args.docs, seed=0)
        print(f"room: {args.docs} documents; server latency {args.latency:g} s; a quarter of "
              "the faults are 600 s hangs")
        print(f"{'hedging':8} {'faults':>6} {'seed':>4} {'sub-calls':>9} {'lost':>4} "
              f"{'requests':>8} {'hedges':>6} {'wall s':>7}  status")
        modes = [True, False] if args.no_hedge else [True]
        for hedge in modes:
            for rate in rates:
                for seed in range(args.repeats if hedge else 1):
                    proc, base_url = start_server(args.latency, rate, seed)
                    try:
                        row = one_run(room, Path(tmp) / f"run-{hedge}-{rate}-{seed}", base_url,
                                      hedge)
                    finally:
                        proc.kill()
                        proc.wait()
                    print(f"{'on' if hedge else 'off':8} {rate:>6.0%} {seed:>4} "
                          f"{row['calls']:>9} {row['lost']:>4} {row['requests']:>8} "
                          f"{row['hedges']:>6} {row['wall_s']:>7.1f}  {row['status']}",
                          flush=True)


if __name__ == "__main__":
    main()
