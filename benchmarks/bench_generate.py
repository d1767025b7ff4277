"""Benchmark ``dealroom generate``: wall time and peak memory at full scale.

    python benchmarks/bench_generate.py                 # both targets below, 2 workers, 2 CPUs
    python benchmarks/bench_generate.py --case 31M      # only the 2,270-document room
    python benchmarks/bench_generate.py --keep rooms/   # keep the rooms it writes

Targets (from the issue): an 80M-token room (5,000 documents) in at most 120 s with peak memory
under 2 GB on 2 cores; a 2,270-document, 31M-token room in under 60 s.

Each case runs ``python -m dealroom generate`` in a fresh child process, pinned to two CPUs with
``taskset`` when there are at least two, and under ``/usr/bin/time -v`` when it exists. Memory
is reported two ways: ``maxrss`` is the largest resident set of any single process (what
``time -v`` calls "Maximum resident set size"), and ``tree_rss`` is the peak of the summed
resident sets of the whole process tree (parent plus workers), sampled every 20 ms from /proc;
``tree_rss`` is the figure to hold against the 2 GB budget.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

CASES = {
    "31M": {"docs": 2270, "tokens": 31_000_000, "seed": 7, "limit_s": 60},
    "80M": {"docs": 5000, "tokens": 80_000_000, "seed": 11, "limit_s": 120},
}
MEMORY_LIMIT_MB = 2048


def _tree_rss_kb(root: int) -> int:
    """Summed VmRSS (kB) of ``root`` and all its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        ppid = re.search(r"^PPid:\s+(\d+)", status, re.M)
        vm = re.search(r"^VmRSS:\s+(\d+)", status, re.M)
        if ppid:
            children.setdefault(int(ppid.group(1)), []).append(int(entry))
        rss[int(entry)] = int(vm.group(1)) if vm else 0
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total


class _Sampler(threading.Thread):
    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak_kb, self.stop = pid, 0, threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.peak_kb = max(self.peak_kb, _tree_rss_kb(self.pid))
            self.stop.wait(0.02)


def run_case(name: str, out: Path, workers: int) -> dict[str, object]:
    case = CASES[name]
    cmd = [sys.executable, "-m", "dealroom", "generate", str(out), "--docs", str(case["docs"]),
           "--seed", str(case["seed"]), "--tokens", str(case["tokens"]), "--workers",
           str(workers), "--json"]
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if shutil.which("taskset") and len(cpus) >= 2:
        cmd = ["taskset", "-c", f"{cpus[0]},{cpus[1]}", *cmd]
    timed = Path("/usr/bin/time").exists()
    if timed:
        cmd = ["/usr/bin/time", "-v", *cmd]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = _Sampler(proc.pid)
    sampler.start()
    stdout, stderr = proc.communicate()
    seconds = time.perf_counter() - start
    sampler.stop.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"{name}: generate failed ({proc.returncode}):\n{stderr[-2000:]}")
    info = json.loads(stdout.strip().splitlines()[-1])
    maxrss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr)
    return {
        "case": name, "docs": info["docs"], "tokens": info["tokens"], "folders": info["folders"],
        "categories": info["categories"], "criteria": info["criteria"],
        "bytes": info["bytes"], "seconds": round(seconds, 1),
        "maxrss_mb": round(int(maxrss.group(1)) / 1024, 1) if maxrss else None,
        "tree_rss_mb": round(sampler.peak_kb / 1024, 1), "workers": workers,
        "cpus": len(cpus[:2]) or os.cpu_count(), "limit_s": case["limit_s"],
        "ok": seconds <= case["limit_s"] and sampler.peak_kb / 1024 < MEMORY_LIMIT_MB,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", choices=sorted(CASES), action="append",
                        help="run only this case (repeatable); default: all")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="write rooms here and keep them")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-generate-"))
    base.mkdir(parents=True, exist_ok=True)
    print(f"{'case':>5} {'docs':>6} {'tokens':>12} {'folders':>7} {'criteria':>8} "
          f"{'seconds':>8} {'maxrss MB':>9} {'tree MB':>8}  ok")
    try:
        for name in args.case or list(CASES):
            out = base / f"room-{name}"
            if out.exists():
                shutil.rmtree(out)
            r = run_case(name, out, args.workers)
            print(f"{r['case']:>5} {r['docs']:>6,} {r['tokens']:>12,} {r['folders']:>7} "
                  f"{r['criteria']:>8} {r['seconds']:>8} {r['maxrss_mb']!s:>9} "
                  f"{r['tree_rss_mb']:>8}  {'yes' if r['ok'] else 'NO'}", flush=True)
            print(json.dumps(r), file=sys.stderr)
            if not args.keep:
                shutil.rmtree(out)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
