"""Host memory under huge replies: peak RSS of the client with many calls in flight.

Starts the suite's ``HostileServer`` (``tests/support/hostile.py``) in a separate process
answering every call with one scenario, then makes ``--calls`` chat calls at
``--concurrency`` in flight from a fresh child process of its own (so each figure is that
scenario's peak alone) and prints the child's peak RSS and how the calls ended:

* ``huge_json``: a valid ``--size``-byte chat completion (default 60 MB) with its length
  declared; every call succeeds, its text cut to the cap, under the shared byte budget;
* ``huge_declared``: ``Content-Length`` of 10 GB; every call is refused unread;
* ``huge_undeclared``: a body without a length that never ends; cut at the body limit.

    python benchmarks/bench_reply_memory.py                    # 256 in flight, 60 MB
    python benchmarks/bench_reply_memory.py --scenarios huge_json --calls 64
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

HOSTILE = Path(__file__).parents[1] / "tests" / "support" / "hostile.py"
"""The suite's raw-socket server, run as a script."""

LIMIT_MB = 1536


def start_server(scenario: str, size: int) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, str(HOSTILE), scenario,
                             "--size", str(size)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


async def fan_out(url: str, calls: int, concurrency: int) -> dict[str, int]:
    from dealroom.models import ModelSpec, ProviderError, gather_bounded, open_model

    spec = ModelSpec(name="huge", kind="openai", model="m", base_url=url, stream=False,
                     concurrency=concurrency, timeout=600.0, deadline=600.0, max_retries=0,
                     hedge=0)
    async with open_model(spec) as client:
        results = await gather_bounded(
            [lambda: client.chat([{"role": "user", "content": "hi"}], max_tokens=512)
             for _ in range(calls)], limit=concurrency)
    return dict(collections.Counter(
        r.kind if isinstance(r, ProviderError) else type(r).__name__ for r in results))


def child(url: str, calls: int, concurrency: int) -> None:
    """Run in a fresh process: make the calls, print the outcome and the peak RSS as JSON."""
    start = time.perf_counter()
    outcomes = asyncio.run(fan_out(url, calls, concurrency))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(json.dumps({"outcomes": outcomes, "peak_mb": round(peak),
                      "seconds": round(time.perf_counter() - start, 1)}))


def measure(scenario: str, size: int, calls: int, concurrency: int) -> dict:
    server, url = start_server(scenario, size)
    try:
        out = subprocess.run([sys.executable, __file__, "--child", url, "--calls", str(calls),
                              "--concurrency", str(concurrency)], capture_output=True,
                             text=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])
    finally:
        server.terminate()
        server.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=256)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--size", type=int, default=60 * 10**6, help="bytes of a huge reply")
    parser.add_argument("--scenarios", nargs="+",
                        default=["huge_declared", "huge_undeclared", "huge_json"])
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.calls, args.concurrency)
        return
    print(f"{args.calls} calls, {args.concurrency} in flight, replies of {args.size:,} bytes; "
          f"the host must stay under {LIMIT_MB} MB")
    for scenario in args.scenarios:
        result = measure(scenario, args.size, args.calls, args.concurrency)
        verdict = "ok" if result["peak_mb"] < LIMIT_MB else "OVER"
        print(f"{scenario:16s} peak RSS {result['peak_mb']:6,} MB  {verdict}  "
              f"{result['seconds']:6.1f} s  {result['outcomes']}", flush=True)


if __name__ == "__main__":
    main()
