"""Host work on what a root writes: the memo history's delta, and the rest, against size.

    python benchmarks/bench_memo_delta.py              # 100k, 200k and 10 MB memos
    python benchmarks/bench_memo_delta.py --peer       # and difflib's delta (the former one)

Target (issue 37): two memos of random short lines, 10 MB each (the default ``--memo-limit``
is 10 MiB) → their delta under a second; the cost grows linearly with the memo. For each size
it prints the time of :func:`dealroom.runs.memo_delta` between two unrelated memos, of the same
memo with one line inserted in the middle, and of :func:`dealroom.runs.apply_delta` rebuilding
the new one; then the other host work a root's writing provokes, at 0.5, 1 and 2 MB (each should
double with the size): the ``.txt`` and ``.docx`` deliverables, the output's truncation, and
the coverage probe over a text of that size.
"""

from __future__ import annotations

import argparse
import difflib
import random
import time
from collections.abc import Callable

from dealroom.runs import apply_delta, memo_delta


def random_memo(rng: random.Random, chars: int) -> str:
    """Random short lines (0 to 12 characters of ``a``, ``b`` and spaces: many repeat)."""
    lines: list[str] = []
    size = 0
    while size < chars:
        line = "".join(rng.choice("ab ") for _ in range(rng.randint(0, 12))) + "\n"
        lines.append(line)
        size += len(line)
    return "".join(lines)


CPU: list[float] = []
"""The CPU seconds of the last :func:`timed` call (the figure on a machine shared with others)."""


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    """Wall-clock seconds of ``fn()`` and its result; its CPU seconds go to :data:`CPU`."""
    start, cpu = time.perf_counter(), time.process_time()
    out = fn()
    CPU[:] = [time.process_time() - cpu]
    return time.perf_counter() - start, out


def peer_delta(old: str, new: str) -> list[list[object]]:
    """The former delta: difflib over every line, no shared ends taken off first."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [[i1, i2, b[j1:j2]] for tag, i1, i2, j1, j2 in matcher.get_opcodes()
            if tag != "equal"]


def deltas(sizes: list[int], peer: bool) -> None:
    rng = random.Random(37)
    print("memo_delta between two random memos (and one line inserted in the middle):")
    for size in sizes:
        old, new = random_memo(rng, size), random_memo(rng, size)
        lines = old.splitlines(keepends=True)
        grown = "".join(lines[:len(lines) // 2] + ["one more finding\n"]
                        + lines[len(lines) // 2:])
        seconds, ops = timed(lambda old=old, new=new: memo_delta(old, new))
        cpu = CPU[0]
        rebuild, text = timed(lambda old=old, ops=ops: apply_delta(old, ops))
        assert text == new
        insert, small = timed(lambda old=old, grown=grown: memo_delta(old, grown))
        assert apply_delta(old, small) == grown and len(small) == 1
        line = (f"  {size:>12,} chars, {len(lines):>9,} lines: delta {seconds:7.3f} s "
                f"(CPU {cpu:.3f} s), "
                f"rebuilt {rebuild:6.3f} s; one line inserted {insert:6.3f} s")
        if peer and size <= 200_000:
            before, _ = timed(lambda old=old, new=new: peer_delta(old, new))
            line += f"; difflib (the former delta) {before:6.2f} s"
        print(line, flush=True)


def other_work(sizes: list[int]) -> None:
    from dealroom.harness._markdown import to_docx, to_text
    from dealroom.harness.rlm._prompt import truncate
    from dealroom.measure import CoverageProbe, DocText

    rng = random.Random(5)
    room = [DocText(f"D{i:05d}", f"doc {i}", "docs", random_memo(rng, 20_000)) for i in range(20)]
    print("other host work on what the root wrote (each should double with the size):")
    for size in sizes:
        text = random_memo(rng, size)
        txt, _ = timed(lambda text=text: to_text(text))
        docx, _ = timed(lambda text=text: to_docx(text))
        cut, _ = timed(lambda text=text: truncate(text, 4000))

        def cover(text: str = text) -> float:
            probe = CoverageProbe(room)
            probe.observe_text(text)
            return probe.coverage()

        probe, _ = timed(cover)
        print(f"  {size:>12,} chars: .txt (parse included) {txt:6.2f} s, .docx (from that parse) "
              f"{docx:6.2f} s, "
              f"truncate {cut:6.4f} s, coverage {probe:6.2f} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+",
                        default=[100_000, 200_000, 1_000_000, 10 * 2**20 - 4096])
    parser.add_argument("--other-sizes", type=int, nargs="+",
                        default=[2**19, 2**20, 2 * 2**20])
    parser.add_argument("--peer", action="store_true",
                        help="time difflib's delta too (100k and 200k only: it is quadratic)")
    args = parser.parse_args()
    deltas(args.sizes, args.peer)
    other_work(args.other_sizes)


if __name__ == "__main__":
    main()
