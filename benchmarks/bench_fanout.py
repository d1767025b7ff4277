"""Fan-out benchmark: many chat calls at high concurrency against a slow loopback server.

Starts ``MockOpenAIServer`` in a separate process answering every call after ``--latency``
seconds (client and server share the machine's cores), then times

1. dealroom: ``gather_bounded`` over ``OpenAICompatibleClient.chat`` (``--calls`` calls at
   ``--concurrency``);
2. the same fan-out as a root makes it: ``llm_batch`` in the sandboxed REPL, every call built,
   budgeted and appended to a trajectory;
3. the official RLM package (``rlms``): ``LocalREPL``'s ``llm_query_batched`` routed through its
   ``LMHandler`` to an ``OpenAIClient`` pointed at the same server, once at its default batch
   concurrency (16) and once with it raised to ``--concurrency``. Skipped if ``rlms`` is absent.

Each figure is printed with the ideal time ``calls * latency / concurrency``, the ratio, and
this process's CPU time per call over the timed part (``time.process_time``: the host work per
sub-call, which moves less than the wall clock when other jobs share the machine).
Every run is cold (new connections), as a first wave of sub-calls is.

    python benchmarks/bench_fanout.py                      # 5,000 calls at 256, 200 ms
    python benchmarks/bench_fanout.py --rlms-default-calls 5000
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from collections.abc import Callable

from dealroom.models import ModelSpec, gather_bounded, open_model


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dealroom.testing",
            "--latency",
            str(latency),
            "--reply",
            "ok",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    base_url = proc.stdout.readline().strip()
    if not base_url.startswith("http"):
        proc.kill()
        raise SystemExit(f"mock server did not start (got {base_url!r})")
    return proc, base_url


def report(
    label: str, calls: int, concurrency: int, latency: float, elapsed: float, failed: int,
    cpu: float | None = None,
) -> float:
    ideal = calls * latency / concurrency
    ratio = elapsed / ideal
    host = "" if cpu is None else f" host_cpu={cpu / calls * 1000:.3f}ms/call"
    print(
        f"{label:<44} calls={calls:>5} conc={concurrency:>3} elapsed={elapsed:6.2f}s "
        f"ideal={ideal:5.2f}s ratio={ratio:5.2f}x failed={failed}{host}",
        flush=True,
    )
    return ratio


CPU: dict[str, float] = {}
"""Host CPU seconds of the last timed fan-out of each kind (``client``, ``llm_batch``)."""


async def dealroom_fanout(base_url: str, calls: int, concurrency: int) -> tuple[float, int]:
    spec = ModelSpec(
        name=f"mock@{base_url}",
        kind="openai",
        model="mock",
        base_url=base_url,
        concurrency=concurrency,
        timeout=120.0,
    )
    client = open_model(spec)
    jobs: list[Callable[[], object]] = [
        (lambda i=i: client.chat([{"role": "user", "content": f"question {i}"}], max_tokens=8))
        for i in range(calls)
    ]
    start, cpu = time.perf_counter(), time.process_time()
    results = await gather_bounded(jobs, limit=concurrency)  # type: ignore[arg-type]
    elapsed = time.perf_counter() - start
    CPU["client"] = time.process_time() - cpu
    await client.aclose()
    return elapsed, sum(isinstance(r, Exception) for r in results)


async def harness_fanout(base_url: str, calls: int, concurrency: int) -> tuple[float, int]:
    """The same fan-out as the root makes it: ``llm_batch`` in the sandboxed REPL, recorded."""
    import tempfile
    from pathlib import Path

    from dealroom.harness.rlm import ReplSession
    from dealroom.room import ingest

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src" / "01 Corporate"
        src.mkdir(parents=True)
        (src / "note.md").write_text("A one-page room for the fan-out benchmark.")
        ingest(src.parent, Path(tmp) / "room")
        spec = ModelSpec(name=f"mock@{base_url}", kind="openai", model="mock",
                         base_url=base_url, concurrency=concurrency, timeout=120.0)
        client = open_model(spec)
        async with ReplSession(Path(tmp) / "room", client) as repl:
            start, cpu = time.perf_counter(), time.process_time()
            out = await repl.run(
                f"r = llm_batch([f'question {{i}}' for i in range({calls})])\n"
                "print(sum(isinstance(x, SubcallError) for x in r))"
            )
            elapsed = time.perf_counter() - start
            CPU["llm_batch"] = time.process_time() - cpu
        await client.aclose()
    if out.error:
        raise SystemExit(out.error)
    return elapsed, int(out.text.split()[-1])


def rlms_fanout(base_url: str, calls: int, concurrency: int | None) -> tuple[float, int]:
    from rlm.clients.openai import OpenAIClient
    from rlm.core.lm_handler import LMHandler
    from rlm.environments.local_repl import LocalREPL

    client = OpenAIClient(api_key="bench", model_name="mock", base_url=base_url)
    kwargs = {} if concurrency is None else {"batch_max_concurrent": concurrency}
    handler = LMHandler(client, **kwargs)
    handler.start()
    repl = LocalREPL(lm_handler_address=handler.address)
    try:
        prompts = [f"question {i}" for i in range(calls)]
        start = time.perf_counter()
        out = repl.globals["llm_query_batched"](prompts)
        elapsed = time.perf_counter() - start
    finally:
        repl.cleanup()
        handler.stop()
    return elapsed, sum(str(r).startswith("Error") for r in out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument(
        "--rlms-default-calls",
        type=int,
        default=1000,
        help="calls for rlms at its default concurrency (16)",
    )
    parser.add_argument("--skip-rlms", action="store_true")
    args = parser.parse_args()

    proc, base_url = start_server(args.latency)
    try:
        print(f"mock server {base_url}, latency {args.latency * 1000:g} ms, separate process")
        elapsed, failed = asyncio.run(dealroom_fanout(base_url, args.calls, args.concurrency))
        ratio = report(
            "dealroom (OpenAI-compatible client, gather_bounded)",
            args.calls,
            args.concurrency,
            args.latency,
            elapsed,
            failed,
            CPU["client"],
        )
        print(f"  target <= 1.20x: {'met' if ratio <= 1.2 else 'NOT met'}")
        elapsed, failed = asyncio.run(harness_fanout(base_url, args.calls, args.concurrency))
        ratio = report("dealroom llm_batch (sandboxed REPL, recorded)", args.calls,
                       args.concurrency, args.latency, elapsed, failed, CPU["llm_batch"])
        print(f"  target <= 1.20x: {'met' if ratio <= 1.2 else 'NOT met'}")
        try:
            import rlm  # noqa: F401
        except ImportError:
            args.skip_rlms = True
            print(
                "rlms not installed: skipping the RLM comparison "
                "(pip install 'dealroom[bench]' or rlms==0.1.3)"
            )
        if not args.skip_rlms:
            n = args.rlms_default_calls
            elapsed, failed = rlms_fanout(base_url, n, None)
            report("rlms llm_query_batched (default, 16)", n, 16, args.latency, elapsed, failed)
            total = elapsed * args.calls / n
            wide_ideal = args.calls * args.latency / args.concurrency
            if n != args.calls:
                print(
                    f"  extrapolated to {args.calls} calls: {total:.1f}s "
                    f"(linear in calls at a fixed limit)"
                )
            print(
                f"  vs the {args.concurrency}-wide ideal ({wide_ideal:.2f}s): "
                f"{total / wide_ideal:.1f}x"
            )
            elapsed, failed = rlms_fanout(base_url, args.calls, args.concurrency)
            report(
                f"rlms llm_query_batched (raised to {args.concurrency})",
                args.calls,
                args.concurrency,
                args.latency,
                elapsed,
                failed,
            )
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
