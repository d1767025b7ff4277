"""Search precision and speed: ``room.search`` by bm25 alone and hybrid (bm25 + embeddings).

Imports a CUAD-format folder as a room (``dealroom cuad import``, passage embeddings built):
your copy of CUAD v1 with ``--cuad``, else a 40-contract sample in CUAD's format written from
dealroom's own clause texts (:func:`dealroom.room.write_cuad_sample`: contracts whose
boilerplate uses *change*, *control*, *termination* and the like on many pages in other
senses, as real contracts do). For each of ten clause questions it asks
``room.search(question, k=5)`` and counts

* document level: the hits whose contract is labelled with that category (P@5 = labelled
  hits / 5), and whether any labelled contract is in the top 5;
* page level: the hits on a page that a labelled span of that category is on.

The same room is searched twice: with its embeddings (hybrid) and without (bm25 alone, as a
room built without the ``[search]`` extra). It also reports the time to build the embeddings
of this room and their size, per token, extrapolated (linearly: the work is per passage) to an
80M-token room, and with ``--speed-docs N`` the search time per query on a generated room of
N documents (see :func:`speed`).

    python benchmarks/bench_search.py                       # the 40-contract sample
    python benchmarks/bench_search.py --cuad ~/data/CUAD_v1 --contracts 40 --seed 1
    python benchmarks/bench_search.py --speed-docs 5000     # + search time on 5,000 docs
    python benchmarks/bench_search.py --speed-only          # only that
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

QUESTIONS = {
    "change of control": "Change Of Control",
    "termination for convenience": "Termination For Convenience",
    "anti-assignment consent to assign": "Anti-Assignment",
    "non-compete": "Non-Compete",
    "exclusive distributor exclusivity": "Exclusivity",
    "most favored nation pricing": "Most Favored Nation",
    "right of first refusal": "Rofr/Rofo/Rofn",
    "liquidated damages": "Liquidated Damages",
    "minimum purchase commitment": "Minimum Commitment",
    "audit rights books and records": "Audit Rights",
}
"""Question → the CUAD category whose labelled contracts count as relevant."""
DEV_QUESTIONS = {
    "cap on liability": "Cap On Liability",
    "limitation of liability": "Cap On Liability",
    "uncapped liability": "Uncapped Liability",
    "unlimited liability": "Uncapped Liability",
    "governing law": "Governing Law",
    "which state's law governs the agreement": "Governing Law",
    "renewal term": "Renewal Term",
    "automatic renewal": "Renewal Term",
    "ip ownership assignment": "Ip Ownership Assignment",
    "assignment of intellectual property rights": "Ip Ownership Assignment",
}
"""``--dev``: questions on five other categories, where the fusion's weight was chosen (on
the sample's seed 2), never on :data:`QUESTIONS`."""
SPEED_QUERIES = (
    "change of control", "termination for convenience", "company termination fee",
    "non-compete", "indemnification cap", "consent to assignment", "material adverse effect",
    "governing law", "most favored nation pricing", "exclusive license",
    "liquidated damages", "audit rights books and records",
)
TARGET_TOKENS = 80_000_000


def _bm25_only(query: str, n: int, ranges: object) -> list[tuple[int, float, int]]:
    from dealroom.errors import RoomError

    raise RoomError("measured without embeddings")


def measure(room_dir: Path, hybrid: bool, questions: dict[str, str] = QUESTIONS
            ) -> list[tuple[str, float, float, bool, float]]:
    """``(question, doc P@5, page P@5, any labelled in the top 5, ms)`` per question."""
    from dealroom.room import Room

    labels = json.loads((room_dir / "answer_key" / "cuad_labels.json").read_text())
    rows = []
    with Room.open(room_dir, dense_search=None if hybrid else _bm25_only) as room:
        room.search("warm up", k=5)  # the model's load is not a query's time
        for question, category in questions.items():
            relevant = {c["doc"] for c in labels["contracts"] if c["labels"].get(category)}
            pages = {(c["doc"], p) for c in labels["contracts"]
                     for span in c["labels"].get(category, [])
                     for p in range(span["pages"][0], span["pages"][-1] + 1)}
            started = time.perf_counter()
            hits = room.search(question, k=5)
            ms = 1000 * (time.perf_counter() - started)
            good = sum(h.doc in relevant for h in hits)
            on_page = sum((h.doc, h.page) in pages for h in hits)
            rows.append((question, good / 5, on_page / 5, good > 0, ms))
    return rows


def _weights(room: Path, questions: dict[str, str], weights: list[float]) -> None:
    """Mean P@5 (document, page) of the hybrid ranking at each dense weight."""
    import dealroom.room._dense as dense

    for weight in weights:
        dense.DENSE_WEIGHT = weight
        rows = measure(room, True, questions)
        print(f"dense weight {weight}: mean P@5 document {statistics.mean(r[1] for r in rows):.2f}"
              f", page {statistics.mean(r[2] for r in rows):.2f}, a labelled contract in the "
              f"top 5: {sum(r[3] for r in rows)}/{len(rows)}")


def build_cost(room_dir: Path) -> tuple[float, float, int, int]:
    """Seconds to embed the room's passages (wall, CPU of this process's threads), bytes of
    the dense files, tokens of the room."""
    from dealroom.room import Room
    from dealroom.room._dense import DENSE_FILES, embed_index, encoder
    from dealroom.room._index import read_json, read_layout

    encoder()  # the model's load is paid once per process, not per token
    idx = room_dir / ".index"
    meta = read_json(idx / "meta.json")
    started, cpu = time.perf_counter(), time.process_time()
    embed_index(idx, read_layout(idx, meta["counts"]))
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    with Room.open(room_dir) as room:
        tokens = room.totals["tokens"]
    return seconds, cpu, sum((idx / name).stat().st_size for name in DENSE_FILES), tokens


def speed(docs: int, tokens: str, tmp: Path) -> None:
    """Search time per query on a generated room of ``docs`` documents: its bm25 index is
    built for real; its passage embeddings are random unit vectors of the real shape (one row
    per passage of the room, one per page with passages): the time of the dense half depends
    on their number, not on their values, and embedding 80M tokens takes days on 2 CPUs (see
    the build cost)."""
    import numpy as np

    from dealroom.room import Room, build_index, generate_room
    from dealroom.room._dense import _groups, passages, write_map

    room_dir = tmp / "speed"
    started = time.perf_counter()
    generate_room(room_dir, docs=docs, seed=3, tokens=tokens, secret="bench")
    build_index(room_dir, dense=False)
    print(f"speed room: {docs:,} docs generated and indexed in "
          f"{time.perf_counter() - started:.0f} s")
    idx = room_dir / ".index"
    with Room.open(room_dir) as room:
        where = np.array([(p, a) for p in range(room.totals["pages"])
                          for a in passages(room._rowid_text(p + 1))], dtype=np.int32)
        totals = room.totals
    rng = np.random.default_rng(0)

    def unit(rows: int) -> np.ndarray:
        block = rng.standard_normal((rows, 384)).astype(np.float32)
        return block / np.linalg.norm(block, axis=1, keepdims=True)

    matrix = np.lib.format.open_memmap(idx / "dense.npy", mode="w+", dtype=np.float16,
                                       shape=(len(where), 384))
    for i in range(0, len(where), 65536):
        matrix[i:i + 65536] = unit(min(65536, len(where) - i))
    matrix.flush()
    del matrix
    np.save(idx / "dense_pages.npy", unit(len(_groups(where[:, 0]))).astype(np.float16))
    write_map(idx, where.reshape(-1, 2))
    with Room.open(room_dir) as room:
        for hybrid in (False, True):
            room._dense_search = room.dense_pages if hybrid else _bm25_only
            room._no_dense = False
            room.search("warm up", k=5)
            times, cpu = [], []
            for _ in range(2):
                for q in SPEED_QUERIES:
                    started, used = time.perf_counter(), time.process_time()
                    room.search(q, k=20)
                    times.append(1000 * (time.perf_counter() - started))
                    cpu.append(1000 * (time.process_time() - used))
            print(f"  {'hybrid' if hybrid else 'bm25  '} search on {totals['docs']:,} docs / "
                  f"{totals['tokens'] / 1e6:.1f}M tokens / {len(where):,} passages, "
                  f"{len(times)} queries: mean {statistics.mean(times):.1f} ms, median "
                  f"{statistics.median(times):.1f} ms, max {max(times):.1f} ms; CPU (all "
                  f"threads) mean {statistics.mean(cpu):.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cuad", type=Path, help="a CUAD v1 folder (default: the sample)")
    parser.add_argument("--contracts", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--speed-docs", type=int, default=0,
                        help="also time search on a generated room of this many documents")
    parser.add_argument("--speed-tokens", default="80M", help="that room's total tokens")
    parser.add_argument("--speed-only", action="store_true",
                        help="only the search time (with --speed-docs)")
    parser.add_argument("--dev", action="store_true",
                        help="the development questions (other categories; use --seed 2)")
    parser.add_argument("--weights", default="",
                        help="comma-separated dense weights to compare (with --dev)")
    args = parser.parse_args()
    questions = DEV_QUESTIONS if args.dev else QUESTIONS
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is read from its package's files
    from dealroom.room import CuadSettings, import_cuad, write_cuad_sample

    print(f"load average {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} "
          f"{os.getloadavg()[2]:.1f} on {os.cpu_count()} CPUs")
    if args.speed_only:
        with tempfile.TemporaryDirectory() as tmp:
            speed(args.speed_docs or 5000, args.speed_tokens, Path(tmp))
        return
    with tempfile.TemporaryDirectory() as tmp:
        cuad = args.cuad or write_cuad_sample(Path(tmp) / "CUAD_v1", args.contracts, args.seed)
        room = Path(tmp) / "room"
        settings = CuadSettings(contracts=args.contracts, seed=args.seed, dense=True,
                                categories=tuple(sorted(set(questions.values()))))
        report = import_cuad(cuad, room, settings)
        totals = report.manifest.totals()
        print(f"room: {totals['docs']} contracts, {totals['pages']} pages "
              f"({'CUAD' if args.cuad else 'CUAD-format sample'})")
        results = {hybrid: measure(room, hybrid, questions) for hybrid in (False, True)}
        if args.weights:
            _weights(room, questions, [float(w) for w in args.weights.split(",")])
            return
        seconds, cpu, size, tokens = build_cost(room)
        if args.speed_docs:
            speed(args.speed_docs, args.speed_tokens, Path(tmp))
    print(f"{'question':36s} {'bm25 doc/page':>14s} {'hybrid doc/page':>16s}")
    for (q, d0, p0, h0, _), (_, d1, p1, h1, ms) in zip(results[False], results[True],
                                                      strict=True):
        print(f"  {q:34s} {d0:5.1f} {p0:4.1f}{'' if h0 else ' NONE':5s}   {d1:5.1f} {p1:4.1f}"
              f"{'' if h1 else ' NONE':5s} {ms:6.1f} ms")
    for hybrid, rows in results.items():
        name = "hybrid" if hybrid else "bm25  "
        print(f"{name}: mean P@5 document {statistics.mean(r[1] for r in rows):.2f}, "
              f"page {statistics.mean(r[2] for r in rows):.2f}; questions with a labelled "
              f"contract in the top 5: {sum(r[3] for r in rows)}/{len(rows)}")
    scale = TARGET_TOKENS / tokens
    print(f"embeddings of this room ({tokens:,} tokens): built in {seconds:.1f} s "
          f"({cpu:.1f} CPU s), {size / 1e6:.2f} MB; extrapolated (linearly) to 80M tokens: "
          f"{seconds * scale / 3600:.1f} h ({cpu * scale / 3600:.1f} CPU h), "
          f"{size * scale / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
