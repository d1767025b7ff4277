"""Episode benchmark: a whole RLM run over a large room, against a loopback endpoint.

Generates a room (2,270 documents / 31M tokens by default; ``--docs 5000 --tokens 80M`` for the
large case) and builds its index once, then starts a loopback OpenAI-compatible server in
another process that answers every call after ``--latency`` seconds and does no work per
request (it reads the body without parsing it, and reports usage from the body's size). An
episode then runs in a fresh host process, as ``dealroom run ROOM --root scripted --sub
mock@URL --concurrency 256`` does, live display included, and the benchmark prints:

* time in waves: the sum of the trajectory's ``wave`` seconds against waves x latency (ratio);
* host CPU seconds (user + sys of the host process, from the start of the run to its end;
  the sandboxed worker and the server are counted apart) and host CPU per sub-call;
* time to the first model call (the root's) and to the first sub-call, once the index exists;
* peak memory of the host process and of the sandboxed worker.

    python benchmarks/bench_episode.py                          # 2,270 docs / 31M tokens
    python benchmarks/bench_episode.py --docs 5000 --tokens 80M
    python benchmarks/bench_episode.py --rooms ~/bench-rooms    # keep the room between runs

Floors: 2,270 documents, waves within 1.3x of waves x latency, host CPU under 2 ms per
sub-call, first model call within 1 s; 5,000 documents / 80M tokens, within 1.6x and host
peak memory under 1.5 GB.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPLY = ("ISSUE: consent of the counterparty is required on a change of control | "
         "SEVERITY: medium | AMOUNT: none | DOC: - | PAGE: 1")


# -- the loopback server (its own process) ---------------------------------------------------
def serve(latency: float) -> None:
    """Answer every chat call after ``latency`` s; the body is read, never parsed."""
    from aiohttp import web

    head = json.dumps({"id": "x", "object": "chat.completion", "model": "mock", "choices": [
        {"index": 0, "finish_reason": "stop",
         "message": {"role": "assistant", "content": REPLY}}]})[:-1]

    async def chat(request: web.Request) -> web.Response:
        size = len(await request.read())
        await asyncio.sleep(latency)
        usage = f', "usage": {{"prompt_tokens": {size // 5}, "completion_tokens": 24}}}}'
        return web.Response(body=(head + usage).encode(), content_type="application/json")

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"data": [{"id": "mock"}]})

    async def main() -> None:
        app = web.Application(client_max_size=64 * 2**20)
        app.router.add_post("/v1/chat/completions", chat)
        app.router.add_get("/v1/models", models)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=4096)
        await site.start()
        print(f"http://127.0.0.1:{runner.addresses[0][1]}/v1", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


# -- the host process ------------------------------------------------------------------------
class _Timed:
    """A model client that notes when its first call starts (all else passes through)."""

    def __init__(self, inner: Any, t0: float) -> None:
        self._inner, self._t0, self.first = inner, t0, None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def chat(self, messages: Any, **kwargs: Any) -> Any:
        if self.first is None:
            self.first = time.monotonic() - self._t0
        return await self._inner.chat(messages, **kwargs)


def episode(room: str, out: str, base_url: str, concurrency: int) -> None:
    """Run one episode in this process; print its figures as one JSON line."""
    import os

    from rich.console import Console

    from dealroom.cli.display_live import RunDisplay
    from dealroom.harness import run_agent_async
    from dealroom.harness.rlm._scripted import scripted_root
    from dealroom.models import open_model

    async def go() -> dict[str, Any]:
        t0 = time.monotonic()
        sub = _Timed(open_model(f"mock@{base_url}", concurrency=concurrency), t0)
        root = _Timed(scripted_root(), t0)
        console = Console(file=open(os.devnull, "w"), force_terminal=True, width=160)  # noqa: SIM115
        with RunDisplay(console) as display:
            result = await run_agent_async(Path(room), Path(out), root=root, sub=sub,
                                           listeners=(display,))
        await sub.aclose()
        return {"status": result.status, "first_root_s": root.first, "first_sub_s": sub.first}

    cpu0, wall0 = time.process_time(), time.monotonic()
    figures = asyncio.run(go())
    self_use = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    figures.update(
        cpu_s=time.process_time() - cpu0, wall_s=time.monotonic() - wall0,
        cpu_total_s=self_use.ru_utime + self_use.ru_stime,
        worker_cpu_s=kids.ru_utime + kids.ru_stime,
        peak_mb=self_use.ru_maxrss / 1024, worker_peak_mb=kids.ru_maxrss / 1024,
    )
    print(json.dumps(figures), flush=True)


# -- the driver ------------------------------------------------------------------------------
def _tokens(text: str) -> int:
    text = text.strip().upper()
    scale = {"K": 1e3, "M": 1e6}.get(text[-1:], 1)
    return int(float(text.rstrip("KM")) * scale)


def prepare_room(rooms: Path, docs: int, tokens: int, seed: int) -> Path:
    """The generated room with its index, made once and kept under ``rooms``."""
    from dealroom.room import Room, generate_room, index_status

    room = rooms / f"room-{docs}-{tokens}-{seed}"
    if not (room / "room.json").is_file():
        shutil.rmtree(room, ignore_errors=True)
        start = time.monotonic()
        generate_room(room, docs=docs, seed=seed, tokens=tokens, secret=f"bench-{seed}")
        print(f"generated {room} in {time.monotonic() - start:.1f} s", flush=True)
    if index_status(room) is not None:
        start = time.monotonic()
        Room.open(room).close()
        print(f"indexed in {time.monotonic() - start:.1f} s", flush=True)
    return room


def waves_of(run_dir: Path) -> tuple[int, float, int]:
    """(waves, sum of their seconds, sub-calls) from the run's trajectory."""
    waves, seconds, calls = 0, 0.0, 0
    with open(run_dir / "trajectory.jsonl", encoding="utf-8") as fh:
        for line in fh:
            event = json.loads(line)
            if event["type"] == "wave":
                waves += 1
                seconds += event["seconds"]
            elif event["type"] == "model_call" and event.get("role") == "sub":
                calls += 1
    return waves, seconds, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=2270)
    parser.add_argument("--tokens", type=_tokens, default=31_000_000, help="e.g. 31M, 80M")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--rooms", type=Path, default=None,
                        help="folder to keep the generated room in (default: a temporary one)")
    parser.add_argument("--repeat", type=int, default=1, help="episodes to run")
    parser.add_argument("--serve", type=float, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--episode", nargs=3, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        return serve(args.serve)
    if args.episode is not None:
        return episode(*args.episode, args.concurrency)

    tmp = Path(tempfile.mkdtemp(prefix="bench-episode-"))
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(args.latency)],
                              stdout=subprocess.PIPE, text=True)
    try:
        room = prepare_room(args.rooms or tmp, args.docs, args.tokens, args.seed)
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        print(f"server {base_url}, latency {args.latency * 1000:g} ms, separate process; "
              f"{args.docs:,} docs / {args.tokens / 1e6:g}M tokens, concurrency "
              f"{args.concurrency}", flush=True)
        for n in range(args.repeat):
            run_one(room, tmp / f"run-{n}", base_url, args)
    finally:
        server.terminate()
        server.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


def run_one(room: Path, out: Path, base_url: str, args: argparse.Namespace) -> None:
    cmd = [sys.executable, __file__, "--episode", str(room), str(out), base_url,
           "--concurrency", str(args.concurrency)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-4000:])
    f = json.loads(done.stdout.strip().splitlines()[-1])
    waves, seconds, calls = waves_of(out)
    ideal = waves * args.latency
    large = args.docs > 2270
    floor = 1.6 if large else 1.3
    ratio = seconds / ideal if ideal else float("nan")
    per_call = 1000 * f["cpu_s"] / max(calls, 1)
    print(f"status {f['status']}: {calls:,} sub-calls in {waves} waves")
    print(f"  time in waves    {seconds:6.2f} s vs {waves} x {args.latency:g} s = {ideal:.2f} s: "
          f"{ratio:.2f}x (floor {floor}x: {'met' if ratio <= floor else 'NOT met'})")
    print(f"  host CPU         {f['cpu_s']:6.2f} s over {f['wall_s']:.2f} s wall, "
          f"{per_call:.2f} ms per sub-call"
          + ("" if large else f" (floor 2 ms: {'met' if per_call < 2 else 'NOT met'})")
          + f"; with imports {f['cpu_total_s']:.2f} s; sandboxed worker {f['worker_cpu_s']:.2f} s")
    first = f["first_root_s"]
    print(f"  first model call {first:6.2f} s (root), first sub-call {f['first_sub_s']:.2f} s"
          + ("" if large else f" (floor 1 s: {'met' if first <= 1 else 'NOT met'})"))
    print(f"  peak memory      host {f['peak_mb']:.0f} MB"
          + (f" (floor 1,500 MB: {'met' if f['peak_mb'] < 1500 else 'NOT met'})" if large else "")
          + f", sandboxed worker {f['worker_peak_mb']:.0f} MB", flush=True)


if __name__ == "__main__":
    main()
