"""Time ``load_manifest`` on a large room.json (5,000 documents by default).

    python benchmarks/bench_manifest.py              # 5,000 documents, 200 loads
    python benchmarks/bench_manifest.py --docs 500 --repeat 50

Only ``room.json`` is written (no documents): the figure is reading, parsing and validating the
manifest, which every command that opens a room does. Prints the median and the fastest load
and the file's size, and the time of ``totals()`` (six passes over the records' attributes).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path


def write_manifest(room: Path, n_docs: int) -> Path:
    """A room.json of ``n_docs`` records shaped like a generated room's."""
    docs = []
    for i in range(n_docs):
        cat, sub = i % 14 + 1, (i // 14) % 6 + 1
        folder = f"{cat:02d} Category {cat}/{cat}.{sub} Folder {sub}"
        docs.append({"id": f"D{i + 1:05d}", "path": f"documents/{folder}/doc{i:05d}.pdf",
                     "title": f"Master Services Agreement no. {i} with Counterparty {i % 97}",
                     "category": folder.split("/")[0], "folder": folder, "format": "pdf",
                     "pages": 1 + i % 40, "tokens": 500 + (i * 37) % 20_000,
                     "sha256": f"{i:064x}", "bytes": 10_000 + i})
    room.mkdir(parents=True, exist_ok=True)
    path = room / "room.json"
    path.write_text(json.dumps({"version": 1, "name": "bench", "tokenizer": "dealroom-words-v1",
                                "meta": {"generator": {"seed": 1}}, "totals": {},
                                "documents": docs}, indent=2), encoding="utf-8")
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args()
    from dealroom.room import load_manifest

    with tempfile.TemporaryDirectory() as tmp:
        path = write_manifest(Path(tmp), args.docs)
        load_manifest(Path(tmp))  # warm the page cache and imports
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            manifest = load_manifest(Path(tmp))
            times.append(time.perf_counter() - t)
        assert len(manifest.documents) == args.docs
        size = path.stat().st_size / 1e6
        sums = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            manifest.totals()
            sums.append(time.perf_counter() - t)
    print(f"load_manifest, {args.docs:,} documents ({size:.1f} MB): median "
          f"{1000 * statistics.median(times):.1f} ms, best {1000 * min(times):.1f} ms "
          f"over {args.repeat} loads; totals(): median {1000 * statistics.median(sums):.2f} ms")


if __name__ == "__main__":
    main()
