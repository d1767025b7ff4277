"""Coverage benchmark: an 80M-token room and a run whose model inputs cover most of it.

Builds a synthetic room text in memory (``--docs`` documents, ``--tokens`` tokens in all;
paragraph lines of 8-40 tokens, short heading and table lines, a boilerplate footer on every
page), then a trajectory in the shape the RLM engine writes:

* sub-calls that reference document slices (``--delegated`` of the documents, each cut into
  four slices by character offsets, as ``input.docs``);
* sub-calls whose free ``input.text`` carries raw chunks of further documents (``--raw``),
  cut mid-line at both ends as ``text[a:b]`` does;
* root turns whose ``input.messages`` hold printed excerpts (``text[:3000]``) of
  ``--printed`` documents.

The trajectory is written to ``trajectory.jsonl`` and read back, then timed: building the
:class:`~dealroom.measure.CoverageIndex`, observing every event with a
:class:`~dealroom.measure.CoverageProbe`, and the summary. The budget is 60 s in all. The exact
coverage of the slices is known, so the figure is checked against it.

    python benchmarks/bench_coverage.py                    # 80M tokens, 5,000 documents
    python benchmarks/bench_coverage.py --tokens 8e6 --docs 500
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from dealroom.measure import CoverageIndex, CoverageProbe, DocText
from dealroom.runs import read_jsonl

BUDGET_S = 60.0


def make_room(n_docs: int, n_tokens: float, seed: int) -> list[DocText]:
    """Synthetic documents; tokens are words, so the total lands near ``n_tokens``."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(20_000)] + ["the", "of", "and", "shall", "Party"])
    per_doc = int(n_tokens / n_docs)
    docs = []
    for d in range(n_docs):
        words = vocab[rng.integers(0, len(vocab), per_doc)].tolist()
        cuts = np.cumsum(rng.integers(8, 41, per_doc // 8 + 2))
        lines, start = [], 0
        for i, end in enumerate(cuts.tolist()):
            if start >= per_doc:
                break
            lines.append(" ".join(words[start:end]))
            if i % 17 == 0:
                lines.append(f"Section {i}")
            if i % 61 == 0:
                lines.append("\nConfidential - Aravon Holdings Inc.\f")
            start = end
        category = f"{d % 14:02d} Category"
        docs.append(
            DocText(f"D{d:05d}", f"{category}/{d % 82:02d} Folder", category, "\n".join(lines))
        )
    return docs


def make_events(docs: list[DocText], args: argparse.Namespace) -> tuple[list[dict], int]:
    """Trajectory events, and the exact number of tokens the slice references cover."""
    rng = np.random.default_rng(args.seed + 1)
    order = rng.permutation(len(docs)).tolist()
    n_sliced = int(args.delegated * len(docs))
    n_raw = int(args.raw * len(docs))
    events: list[dict] = []
    for i in order[:n_sliced]:
        size = len(docs[i].text)
        cuts = [0, size // 4, size // 2, 3 * size // 4, size]
        refs = [
            {"id": docs[i].id, "pages": [1, 1], "chars": [a, b]}
            for a, b in zip(cuts, cuts[1:], strict=False)
        ]
        events.append(
            {
                "type": "model_call",
                "role": "sub",
                "input": {
                    "prompt": "List every change-of-control clause.",
                    "text": "",
                    "docs": refs,
                },
            }
        )
    for i in order[n_sliced : n_sliced + n_raw]:
        text = docs[i].text
        a, b = 7, len(text) - 7  # both ends cut mid-line
        events.append(
            {
                "type": "model_call",
                "role": "sub",
                "input": {"prompt": "Summarise this.", "text": text[a:b], "docs": []},
            }
        )
    for i in order[n_sliced + n_raw : n_sliced + n_raw + args.printed]:
        events.append(
            {
                "type": "model_call",
                "role": "root",
                "input": {
                    "messages": [{"role": "user", "content": f"Out[{i}]: {docs[i].text[:3000]!s}"}]
                },
            }
        )
    for seq, event in enumerate(events):
        event.update(seq=seq, t=float(seq), agent="root", depth=event.get("depth", 1))
    return events, n_sliced


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=float, default=80e6)
    ap.add_argument("--docs", type=int, default=5000)
    ap.add_argument("--delegated", type=float, default=0.85, help="share of docs sliced")
    ap.add_argument("--raw", type=float, default=0.05, help="share of docs sent as raw text")
    ap.add_argument("--printed", type=int, default=200, help="docs printed to the root")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    docs = make_room(args.docs, args.tokens, args.seed)
    events, n_sliced = make_events(docs, args)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trajectory.jsonl"
        with open(path, "w", encoding="utf-8") as fh:
            for event in events:
                fh.write(json.dumps(event) + "\n")
        mb = path.stat().st_size / 1e6
        print(
            f"setup: {len(docs):,} docs, {len(events):,} model calls, trajectory {mb:.0f} MB "
            f"({time.perf_counter() - t0:.1f} s, not timed)"
        )

        t1 = time.perf_counter()
        index = CoverageIndex(docs)
        t2 = time.perf_counter()
        probe = CoverageProbe(index)
        probe.observe_events(read_jsonl(path))
        t3 = time.perf_counter()
        summary = probe.summary()
        t4 = time.perf_counter()

    total = t4 - t1
    print(f"room: {index.total_tokens / 1e6:.1f}M tokens, {index.n_units / 1e6:.2f}M lines")
    print(f"index build      {t2 - t1:6.1f} s")
    print(f"observe inputs   {t3 - t2:6.1f} s")
    print(f"summary          {t4 - t3:6.2f} s")
    print(f"total            {total:6.1f} s   (budget {BUDGET_S:.0f} s)")
    print(
        f"coverage {summary['coverage']:.2%}: {summary['documents_touched']:,} documents "
        f"touched, {summary['evidence']['lines_matched']:,} raw lines matched"
    )
    sliced = sum(
        int(index.doc_tokens[index.doc_index[e["input"]["docs"][0]["id"]]])
        for e in events[:n_sliced]
    )
    print(f"slice references alone cover exactly {sliced / index.total_tokens:.2%}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {rss:,.0f} MB")
    if total > BUDGET_S or summary["tokens_covered"] < sliced:
        sys.exit(1)


if __name__ == "__main__":
    main()
