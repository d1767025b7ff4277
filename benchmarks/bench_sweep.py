"""Sweep throughput: the process pool against the ideal, Ray against the pool, and what one
episode costs beyond its run.

Generates one room (``--docs``), then runs the same ``--episodes`` episodes (scripted roots on
the oracle sub-agent, offline) three times, each into a fresh sweep folder:

1. one worker, in order: the mean episode time ``m`` (the ideal's unit);
2. the process pool with ``--workers`` workers: its wall time against the ideal
   ``episodes * m / workers`` (target: within 1.3x);
3. ``--backend ray`` on a local cluster with as many CPUs: its wall time against the pool's
   (target: within 1.2x), with and without starting Ray (skipped without ray installed).

Per-episode overhead is printed from the serial sweep's own records and direct timings: a
worker's start (a fresh interpreter importing what an episode needs), opening the room with
its coverage probe, and judging. The load average is printed before and after: on a shared
machine every figure is pessimistic.

    python benchmarks/bench_sweep.py                      # 32 episodes, 50 documents, 2 workers
    python benchmarks/bench_sweep.py --episodes 64 --workers 4 --no-ray
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dealroom.eval import run_sweep
from dealroom.room import Room, generate_room


def spec(room: Path, episodes: int) -> str:
    samples = max(1, episodes // 2)
    return (f'rooms = ["{room}"]\nroots = ["scripted", "scripted:coverage=0.5"]\n'
            f'subs = ["oracle"]\nmax_turns = [8]\nsamples = {samples}\n')


def sweep(spec_path: Path, out: Path, workers: int, backend: str = "process"
          ) -> tuple[float, float]:
    """Wall seconds of the sweep, and the CPU seconds its workers (and their sandboxes) used
    (the pool's processes are reaped when it ends; Ray's are not ours: NaN)."""
    cpu = _cpu()
    started = time.monotonic()
    result = run_sweep(spec_path, out, workers=workers, backend=backend)
    wall = time.monotonic() - started
    if result.failed:
        raise SystemExit(f"{result.failed} episodes failed: see {out / 'sweep.json'}")
    return wall, (_cpu() - cpu) if backend == "process" else float("nan")


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def worker_start() -> float:
    """Seconds for a fresh interpreter to import what an episode runs."""
    code = "import dealroom.eval._episode, dealroom.harness, dealroom.judge, dealroom.measure"
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.monotonic() - started


def open_room(room: Path) -> float:
    from dealroom.measure import CoverageProbe

    started = time.monotonic()
    CoverageProbe(Room.open(room))
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        tmp = Path(tmp)
        room = tmp / "room"
        generate_room(room, docs=args.docs, seed=1, secret="bench")
        Room.open(room)
        spec_path = tmp / "spec.toml"
        spec_path.write_text(spec(room, args.episodes))
        serial, serial_cpu = sweep(spec_path, tmp / "serial", 1)
        record = json.loads((tmp / "serial" / "sweep.json").read_text())["episodes"]
        n = len(record)
        mean = statistics.fmean(e["seconds"] for e in record)
        ideal = n * mean / args.workers
        pool, pool_cpu = sweep(spec_path, tmp / "pool", args.workers)
        cores = min(args.workers, os.cpu_count() or 1)
        print(f"{n} episodes, {args.docs} documents: one worker {serial:.1f} s "
              f"(mean episode {mean:.2f} s, {serial_cpu / n:.2f} CPU-s with its sandbox)")
        print(f"process pool, {args.workers} workers: {pool:.1f} s; ideal {ideal:.1f} s "
              f"({n} x {mean:.2f} s / {args.workers}): {pool / ideal:.2f}x (target <= 1.3x); "
              f"CPU-bound ideal {serial_cpu / cores:.1f} s; the pool had "
              f"{pool_cpu / (pool * cores):.0%} of {cores} cores")
        if not args.no_ray:
            ray_figures(spec_path, tmp, args.workers, pool)
        runs = [e["timing"]["run_s"] for e in record]
        judged = [e["timing"]["judge_s"] for e in record]
        print(f"per episode: worker start {worker_start():.2f} s (once per worker), open room "
              f"and coverage probe {open_room(room):.2f} s, run {statistics.fmean(runs):.2f} s "
              f"(room opening included), judge {statistics.fmean(judged):.3f} s, sweep "
              f"bookkeeping {mean - statistics.fmean(runs) - statistics.fmean(judged):.3f} s")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def ray_figures(spec_path: Path, tmp: Path, workers: int, pool: float) -> None:
    try:
        import ray
    except ImportError:
        print("ray: not installed (pip install \"dealroom[ray]\"), skipped")
        return
    started = time.monotonic()
    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}})
    init = time.monotonic() - started
    try:
        wall, _ = sweep(spec_path, tmp / "ray", workers, backend="ray")
    finally:
        ray.shutdown()
    print(f"ray, {workers} CPUs: {wall:.1f} s after a {init:.1f} s start: {wall / pool:.2f}x "
          f"the pool ({(wall + init) / pool:.2f}x with the start; target <= 1.2x)")


if __name__ == "__main__":
    main()
