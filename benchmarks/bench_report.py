"""Report and trace-viewer benchmark: ``dealroom report`` over a 200-episode sweep, and the
first paint of ``dealroom view`` of a large scripted run in headless Chromium.

* report: four real scripted episodes (two policies on two generated rooms, judged, judged by
  turn) copied into a sweep of ``--episodes`` (200) with scores varied per seed, as
  ``dealroom eval sweep`` lays it out; then ``build_report`` is timed (plots, report.json,
  one trace per episode, each room's documents once). Floor: under 10 s.
* trace: a scripted run (oracle sub-agent) on a generated room of ``--docs`` (2,270)
  documents / ``--tokens`` (31M); ``write_trace`` is timed, then the viewer is opened from disk
  in headless Chromium: first contentful paint and the first turns rendered, from the
  navigation's start (the page's own clock). Floor: first paint under 2 s.

    python benchmarks/bench_report.py                       # both cases
    python benchmarks/bench_report.py --case trace --docs 500 --tokens 7M
    python benchmarks/bench_report.py --rooms ~/bench-rooms # keep the rooms between runs
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path


def room_at(rooms: Path, docs: int, tokens: int | None, seed: int) -> Path:
    """The generated room with its index, made once and kept under ``rooms``."""
    from dealroom.room import Room, generate_room

    room = rooms / f"g{docs}-{tokens or 0}-s{seed}"
    if not (room / "room.json").is_file():
        start = time.monotonic()
        generate_room(room, docs=docs, seed=seed, tokens=tokens, secret=f"bench-{seed}")
        print(f"generated {docs} documents in {time.monotonic() - start:.1f} s", flush=True)
    Room.open(room).close()
    return room


def scripted_run(room: Path, out: Path, root: str, judged: bool = True) -> Path:
    from dealroom.harness import run_agent
    from dealroom.judge import judge_by_turn, judge_run

    if not (out / "metrics.json").is_file():
        shutil.rmtree(out, ignore_errors=True)
        run_agent(room, out, root=root, sub="oracle", max_turns=30, concurrency=64)
        if judged:
            judge_run(out)
            judge_by_turn(out)
    return out


def bench_report(work: Path, rooms: Path, episodes: int) -> None:
    from dealroom.report import build_report

    sources = []
    for docs in (20, 60):
        room = room_at(rooms, docs, None, 1)
        for root in ("scripted", "scripted:coverage=0.3"):
            name = f"{room.name}-{root.replace(':', '_').replace('=', '')}"
            sources.append((room, root, scripted_run(room, rooms / "runs" / name, root)))
    sweep = work / "sweep"
    entries = []
    for n in range(episodes):
        room, root, run = sources[n % len(sources)]
        seed = n // len(sources)
        eid = f"{room.name}/{root}__oracle/d1-T30-s{seed}"
        target = sweep / "episodes" / eid
        shutil.copytree(run, target)
        scores = json.loads((target / "scores.json").read_text())
        scores["pass_rate"] = max(0.0, scores["pass_rate"] - 0.01 * (seed % 7))
        (target / "scores.json").write_text(json.dumps(scores))
        entries.append({"id": eid, "room": room.name, "room_path": str(room), "root": root,
                        "sub": "oracle", "depth": 1, "max_turns": 30, "seed": seed,
                        "status": "done"})
    (sweep / "sweep.json").write_text(json.dumps({"version": 1, "spec": {
        "budget_visible": True, "max_turns": [30], "samples": episodes // len(sources)},
        "episodes": entries}))
    start = time.perf_counter()
    index = build_report([sweep], work / "report")
    seconds = time.perf_counter() - start
    size = sum(p.stat().st_size for p in index.parent.rglob("*") if p.is_file())
    print(f"report over {episodes} episodes: {seconds:.2f} s (floor 10 s: "
          f"{seconds / 10:.2f}x of it); index.html {index.stat().st_size / 1e3:.0f} kB, "
          f"folder {size / 1e6:.1f} MB")


def bench_trace(work: Path, rooms: Path, docs: int, tokens: int | None) -> None:
    from dealroom.report import write_trace

    sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))  # the suite's browser driver
    from support.browser import Browser

    room = room_at(rooms, docs, tokens, 7)
    start = time.perf_counter()
    run = scripted_run(room, rooms / "runs" / f"{room.name}-scripted", "scripted", judged=False)
    print(f"scripted run ready in {time.perf_counter() - start:.1f} s", flush=True)
    metrics = json.loads((run / "metrics.json").read_text())
    start = time.perf_counter()
    index = write_trace(run, work / "view")
    written = time.perf_counter() - start
    data = sum(p.stat().st_size for p in (index.parent / "data").iterdir())
    texts = sum(p.stat().st_size for p in (index.parent / "docs").iterdir())
    print(f"trace of {docs} documents, {metrics['behaviour']['sub_calls']} sub-calls, "
          f"{metrics['events']} events: written in {written:.2f} s (data {data / 1e6:.1f} MB "
          f"in {len(list((index.parent / 'data').iterdir()))} files, document texts "
          f"{texts / 1e6:.0f} MB)")
    with Browser() as browser:
        paints, turns = [], []
        for _ in range(3):
            browser.open(index.as_uri())
            turns.append(browser.wait_for(
                "document.querySelectorAll('section.turn').length > 0 && performance.now()"))
            paints.append(browser.evaluate(
                "performance.getEntriesByName('first-contentful-paint')[0].startTime"))
        nodes = browser.evaluate("document.getElementsByTagName('*').length")
        assert not browser.errors, browser.errors
    print(f"first contentful paint {min(paints) / 1e3:.2f} s (median of 3 "
          f"{sorted(paints)[1] / 1e3:.2f} s; floor 2 s: {sorted(paints)[1] / 2e3:.2f}x of it); "
          f"first turns rendered {sorted(turns)[1] / 1e3:.2f} s; {nodes} DOM nodes after the "
          "first page")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=("report", "trace", "both"), default="both")
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--docs", type=int, default=2270)
    parser.add_argument("--tokens", default="31M", help="room tokens (31M, 7M, 500k)")
    parser.add_argument("--rooms", type=Path, default=None, help="keep rooms and runs here")
    args = parser.parse_args()
    tokens = int(float(args.tokens.rstrip("MkK")) * (1e6 if args.tokens.endswith("M") else
                                                      1e3 if args.tokens[-1] in "kK" else 1))
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        rooms = args.rooms or Path(tmp) / "rooms"
        rooms.mkdir(parents=True, exist_ok=True)
        if args.case in ("report", "both"):
            bench_report(Path(tmp) / "r", rooms, args.episodes)
        if args.case in ("trace", "both"):
            bench_trace(Path(tmp) / "t", rooms, args.docs, tokens)
    return 0


if __name__ == "__main__":
    sys.exit(main())
