"""Benchmark the room store at full scale: build, open, grep and search, with peak memory.

    python benchmarks/bench_room.py                   # synthesize 5,000 docs / 80M tokens, run
    python benchmarks/bench_room.py --docs 500 --tokens 8e6   # a quick, smaller run
    python benchmarks/bench_room.py --room rooms/aravon       # measure an existing room
    python benchmarks/bench_room.py --generator --docs 500 --tokens 8e6   # dealroom's generator

The synthetic room is legal-looking prose: a few hundred real contract words plus a Zipf tail of
made-up words, sentences of 6-20 words, ~500-token pages, 14 categories x 6 folders, and planted
phrases (change of control, dollar amounts, dates) at realistic rates. The measurements run in a
fresh child process so its peak RSS is the store's alone. Figures are with a warm page cache.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

_LEGAL = (
    "agreement party parties shall may section clause term termination notice consent "
    "assignment obligation obligations liability indemnify indemnification indemnified warranty "
    "warranties representation representations breach default remedy remedies payment fees "
    "invoice customer supplier vendor licensor licensee license services deliverables schedule "
    "exhibit amendment effective date company subsidiary affiliate affiliates control change "
    "merger acquisition closing purchase price escrow holdback employee employees benefit plan "
    "pension litigation claim claims damages loss losses court arbitration governing law "
    "jurisdiction confidential information disclosure regulatory compliance permit environmental "
    "insurance policy coverage lease landlord tenant premises rent property intellectual patent "
    "trademark copyright data privacy security incident tax taxes audit financial statements "
    "revenue debt loan credit facility lender borrower covenant covenants collateral guarantee "
    "board directors resolution shareholders shares stock option vesting severance bonus "
    "the of and to in a for or by with on as is be any such this that other all its which not "
    "from under than if no will are at upon each within without prior written days period"
)
LEGAL = _LEGAL.split()


_FUNCTION = ("the of and to in a for or by with on as is be any such this that other all its "
             "which not from under than if no will are at upon each shall may")
FUNCTION = _FUNCTION.split()


def _vocab(rng: np.random.Generator, n: int) -> np.ndarray:
    """Function words first, then contract words spread among made-up words (Zipf ranks)."""
    syll = ["ka", "ri", "to", "me", "sa", "de", "con", "tra", "ent", "in", "pro", "vi",
            "si", "la", "bi", "ty", "de", "ni", "wa", "ra", "ex", "cu", "te", "na"]
    made = sorted({"".join(syll[j] for j in rng.integers(0, len(syll), rng.integers(1, 5)))
                   for _ in range(n)} - set(LEGAL) - set(FUNCTION))
    made += [str(x) for x in rng.integers(1, 5000, n // 10)]
    legal = [w for w in LEGAL if w not in FUNCTION]
    rng.shuffle(made)
    out = list(FUNCTION)
    for i, word in enumerate(made):  # contract word k lands near rank 40 + 12k
        if i % 12 == 0 and legal:
            out.append(legal.pop(0))
        out.append(word)
    return np.array(out + legal)


PLANTS = ["change of control", "$88.2 million", "March 31, 2024", "Section 9.2",
          "material adverse effect", "consent of the Lender"]


def _doc_text(rng: np.random.Generator, words: np.ndarray, p: np.ndarray, n_tokens: int,
              page_tokens: int = 500) -> tuple[list[str], int]:
    """Pages of sentences; returns the pages and the token count (words + punctuation)."""
    n_words = max(20, int(n_tokens / 1.24))
    picked = words[rng.choice(len(words), size=n_words, p=p)].tolist()
    pages, tokens, i = [], 0, 0
    while i < n_words:
        lines, page_words = [], 0
        while page_words < page_tokens and i < n_words:
            k = int(rng.integers(6, 21))
            sent = picked[i:i + k]
            i += k
            for _ in range(k // 5):  # commas: legal prose is punctuation-heavy
                j = int(rng.integers(0, len(sent)))
                sent[j] += ","
                tokens += 1
            if rng.random() < 0.02:
                sent.insert(int(rng.integers(0, len(sent) + 1)), PLANTS[rng.integers(len(PLANTS))])
            lines.append(" ".join(sent).capitalize() + ".")
            page_words += len(sent) + 1
            tokens += len(sent) + 1
        pages.append("\n".join(lines))
    return pages, tokens


def synthesize(room: Path, n_docs: int, n_tokens: float, seed: int = 0) -> None:
    """Write a room of ``n_docs`` text documents totalling about ``n_tokens`` tokens."""
    rng = np.random.default_rng(seed)
    words = _vocab(rng, 40_000)
    p = 1 / np.arange(1, len(words) + 1) ** 1.07
    p /= p.sum()
    sizes = rng.lognormal(0, 1.0, n_docs)
    sizes = np.maximum(50, sizes / sizes.sum() * n_tokens).astype(int)
    shutil.rmtree(room, ignore_errors=True)
    records = []
    for i, size in enumerate(sizes):
        cat, sub = i % 14 + 1, (i // 14) % 6 + 1
        folder = f"{cat:02d} Category {cat}/{cat}.{sub} Folder {sub}"
        path = room / "documents" / folder / f"doc{i:05d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        pages, tokens = _doc_text(rng, words, p, int(size))
        path.write_text("\f".join(pages), encoding="utf-8")
        records.append({"id": f"D{i + 1:05d}", "path": str(path.relative_to(room)),
                        "title": f"Document {i}", "category": folder.split("/")[0],
                        "folder": folder, "format": "txt", "pages": len(pages),
                        "tokens": tokens, "sha256": "", "bytes": path.stat().st_size})
    (room / "room.json").write_text(json.dumps({"name": "bench", "documents": records}))


GREPS = [
    "change of control",            # rare literal phrase
    r"\bconsent\b",                  # common word, word boundaries
    "indemnif(y|ication|ied)",       # stem + alternation
    "warranty|covenant|escrow",      # alternation of common words
    r"\$\d+(\.\d+)? million",        # dollar amounts (prefilter on ' million')
    r"section \d+\.\d+",             # section references
    r"\d{2}, \d{4}",                 # no usable literal: full regex scan
    r"(?s)escrow.{0,40}holdback",    # may cross lines: document windows
]
SEARCHES = [
    "change of control consent", "indemnification cap", "material adverse effect",
    "environmental permit violation", "litigation claim damages", "lease landlord consent",
    "escrow holdback purchase price", "data privacy security incident", "pension plan",
    "revolving credit facility covenant", '"consent of the lender"', "severance bonus vesting",
]


def measure(room: Path) -> dict:
    """Open, grep and search ``room`` in this process; return timings and peak memory."""
    from dealroom.room import Room

    t = time.perf_counter()
    r = Room.open(room)
    out: dict = {"open_s": time.perf_counter() - t, "docs": len(r.docs),
                 "tokens": r.totals["tokens"], "pages": r.totals["pages"],
                 "text_mb": (room / ".index/text.bin").stat().st_size / 1e6}
    out["grep"] = []
    for pattern in GREPS:
        r.grep(pattern)  # warm the page cache for this file region
        t = time.perf_counter()
        hits = r.grep(pattern)
        out["grep"].append({"pattern": pattern, "s": time.perf_counter() - t,
                            "total": hits.total, "exact": hits.exact})
    times = []
    for query in SEARCHES:
        t = time.perf_counter()
        r.search(query)
        times.append(time.perf_counter() - t)
    out["search_ms"] = {"mean": 1000 * statistics.mean(times), "max": 1000 * max(times),
                        "each": [round(1000 * x, 1) for x in times]}
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["peak_rss_children_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--room", type=Path, help="benchmark this existing room")
    ap.add_argument("--out", type=Path, default=Path("/tmp/dealroom-bench-room"))
    ap.add_argument("--docs", type=int, default=5000)
    ap.add_argument("--tokens", type=float, default=80e6)
    ap.add_argument("--generator", action="store_true",
                    help="make the room with dealroom's generator (real formats) instead")
    ap.add_argument("--measure-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure_only:
        print(json.dumps(measure(args.room)))
        return
    room = args.room
    if room is None:
        room = args.out
        t = time.perf_counter()
        if args.generator:
            from dealroom.room._generate._api import generate_room

            shutil.rmtree(room, ignore_errors=True)
            generate_room(room, docs=args.docs, tokens=int(args.tokens))
        else:
            synthesize(room, args.docs, args.tokens)
        print(f"made {args.docs:,} docs in {time.perf_counter() - t:.1f} s")
    from dealroom.room import build_index, index_status

    if index_status(room) is not None:
        t = time.perf_counter()
        build_index(room)
        print(f"build_index: {time.perf_counter() - t:.1f} s")
    res = subprocess.run([sys.executable, __file__, "--measure-only", "--room", str(room)],
                         capture_output=True, text=True)
    if res.returncode:
        sys.exit(res.stderr)
    m = json.loads(res.stdout)
    print(f"room: {m['docs']:,} docs, {m['tokens'] / 1e6:.1f}M tokens, {m['pages']:,} pages, "
          f"text layer {m['text_mb']:.0f} MB")
    print(f"open: {m['open_s']:.2f} s")
    for g in m["grep"]:
        total = f"{'' if g['exact'] else '>='}{g['total']:,}"
        print(f"grep {g['pattern']!r:36} {g['s']:.2f} s  ({total} matches)")
    s = m["search_ms"]
    print(f"search: mean {s['mean']:.1f} ms, max {s['max']:.1f} ms over {len(s['each'])} queries "
          f"{s['each']}")
    print(f"peak RSS: {m['peak_rss_mb']:.0f} MB (forked grep scanners: "
          f"{m['peak_rss_children_mb']:.0f} MB each at most)")


if __name__ == "__main__":
    main()
