"""How long a sandboxed REPL takes to start (confinement included) and to answer its first cell.

    python benchmarks/bench_sandbox_start.py --room rooms/bank --n 10

Prints the median and the slowest of ``--n`` starts (``start()`` until the worker is ready) and
of the first cell (``room.grep``), so a change to the confinement (the allow-list's new root,
say) can be weighed against the one before it.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from dealroom.harness.sandbox import ProcessSandbox


async def one(room: Path | None, scratch: Path) -> tuple[float, float, str]:
    sb = ProcessSandbox(room, scratch)
    t0 = time.perf_counter()
    await sb.start()
    started = time.perf_counter() - t0
    try:
        t1 = time.perf_counter()
        await sb.execute("len(room.grep('agreement'))" if room else "1")
        return started, time.perf_counter() - t1, sb.confinement.get("filesystem", "-")
    finally:
        await sb.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--room", type=Path, default=None)
    parser.add_argument("--n", type=int, default=10)
    args = parser.parse_args()
    starts, cells = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.n):
            s, c, how = asyncio.run(one(args.room, Path(tmp) / f"s{i}"))
            starts.append(s)
            cells.append(c)
    print(f"filesystem: {how}")
    print(f"start: median {statistics.median(starts):.3f} s, max {max(starts):.3f} s "
          f"(n={args.n})")
    print(f"first cell: median {statistics.median(cells):.3f} s, max {max(cells):.3f} s")


if __name__ == "__main__":
    main()
