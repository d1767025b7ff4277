"""What writing a deliverable costs when the memo changes: Markdown, plain text and Word.

    python benchmarks/bench_deliverables.py                 # memos of 100, 1,000 and 3,000 findings
    python benchmarks/bench_deliverables.py --findings 5000 --turns 30

Target (issue 8): rendering the .docx on every memo change must not cost seconds on a large
memo. The memo is the scripted root's (sections of bullet findings, each bold-titled with a
severity, an amount and a citation), with a table and a numbered list. For each size it prints
the time of one write of ``output/memo.md``, ``output/memo.txt`` and ``output/memo.docx``
(through :class:`dealroom.harness.Deliverables`: render + atomic write; each write changes the
memo's last section, as a growing memo does), the same Word document built with python-docx's
public ``add_paragraph(style=...)``/``add_run`` API as the peer (from the cached parse, so the
ratio compares building and saving the document), and the total a run spends rendering the
.docx when its memo grows to that size over ``--turns`` cell changes.
"""

from __future__ import annotations

import argparse
import io
import statistics
import tempfile
import time
from pathlib import Path

from dealroom.harness import Deliverables
from dealroom.harness._markdown import parse_blocks, plain
from dealroom.runs import RunFolder


def memo(findings: int) -> str:
    lines = ["# Due Diligence Memo", "", "## Executive Summary", "",
             f"We reviewed every document; **{findings} findings** are set out below.", ""]
    per_section = 50
    for n in range(findings):
        if n % per_section == 0:
            lines += ["", f"## Key Findings: Category {n // per_section + 1}", ""]
        lines.append(f"- **Change of control in agreement {n}** (severity: high): the "
                     f"counterparty may terminate on a change of control without consent, "
                     f"putting $1.{n % 10} million of annual revenue at risk. Exposure: "
                     f"$1.{n % 10} million. Next step: obtain consent. [D{n:05d} p.{n % 9 + 1}]")
    lines += ["", "## Exposures", "", "| Issue | Severity | Amount |", "|---|---|---|",
              *(f"| Issue {n} | High | ${n}.0 million |" for n in range(20)), "",
              "## Recommended Next Steps", "", "1. Confirm each finding.", "2. Obtain consents.",
              "3. Price the exposures.", ""]
    return "\n".join(lines)


def peer_docx(markdown: str) -> bytes:
    """The same blocks through python-docx's public API (a style looked up per paragraph)."""
    import docx

    from dealroom.harness._markdown import _style_name

    document = docx.Document()
    for block in parse_blocks(markdown):
        if block.kind == "table":
            table = document.add_table(rows=len(block.rows), cols=len(block.rows[0]))
            for row, cells in zip(table.rows, block.rows, strict=True):
                for cell, spans in zip(row.cells, cells, strict=False):
                    cell.text = plain(spans)
            continue
        paragraph = document.add_paragraph(style=_style_name(block))
        for span in block.spans:
            run = paragraph.add_run(span.text)
            run.bold, run.italic = span.bold or None, span.italic or None
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def timed(fn, repeat: int) -> float:
    """Median seconds of ``repeat`` calls of ``fn``."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(findings: int, turns: int, repeat: int) -> dict:
    text = memo(findings)
    files = {"memo": "memo.md", "text": "memo.txt", "word": "memo.docx"}
    with tempfile.TemporaryDirectory() as tmp:
        out = Deliverables(RunFolder.create(Path(tmp) / "run", {"deliverables": files}))
        versions = iter(range(10**9))

        def write(name: str) -> None:
            out.write(name, text + f"\n<!-- {next(versions)} -->\n")  # a change every time

        row = {"findings": findings, "kb": len(text) / 1000,
               "md_s": timed(lambda: write("memo"), repeat),
               "txt_s": timed(lambda: write("text"), repeat),
               "docx_s": timed(lambda: write("word"), repeat),
               "peer_s": timed(lambda: peer_docx(text), max(1, repeat // 3))}
        cut = [text[: len(text) * (t + 1) // turns] for t in range(turns)]
        started = time.perf_counter()
        for version in cut:
            out.write("word", version)
        row["run_s"] = time.perf_counter() - started
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--findings", type=int, nargs="*", default=[100, 1000, 3000])
    parser.add_argument("--turns", type=int, default=30, help="memo changes in a run")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'findings':>8} {'memo KB':>8} {'.md':>8} {'.txt':>8} {'.docx':>8} "
          f"{'peer':>8} {'peer/ours':>9} {f'run ({args.turns} changes)':>20}")
    for n in args.findings:
        r = measure(n, args.turns, args.repeat)
        print(f"{r['findings']:>8,} {r['kb']:>8.0f} {r['md_s'] * 1e3:>6.1f}ms "
              f"{r['txt_s'] * 1e3:>6.0f}ms {r['docx_s'] * 1e3:>6.0f}ms "
              f"{r['peer_s'] * 1e3:>6.0f}ms {r['peer_s'] / r['docx_s']:>8.1f}x "
              f"{r['run_s']:>19.2f}s")


if __name__ == "__main__":
    main()
