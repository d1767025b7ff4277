"""Search precision: ``room.search`` against clause labels, precision at 5 per clause question.

Imports a CUAD-format folder as a room (``dealroom cuad import``): your copy of CUAD v1 with
``--cuad``, else a 40-contract sample in CUAD's format written from dealroom's own clause texts
(:func:`dealroom.room.write_cuad_sample`: contracts whose boilerplate uses *change*, *control*,
*termination* and the like on many pages in other senses, as real contracts do). For each of
ten clause questions it asks ``room.search(question, k=5)`` and counts the hits whose contract
is labelled with that category: P@5 = labelled hits / 5, and whether any labelled contract is
in the top 5.

    python benchmarks/bench_search.py                       # the 40-contract sample
    python benchmarks/bench_search.py --cuad ~/data/CUAD_v1 --contracts 40 --seed 1
"""

from __future__ import annotations

import argparse
import json
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


def measure(room_dir: Path) -> list[tuple[str, float, bool, float]]:
    """``(question, P@5, any labelled in the top 5, milliseconds)`` per question."""
    from dealroom.room import Room

    labels = json.loads((room_dir / "answer_key" / "cuad_labels.json").read_text())
    rows = []
    with Room.open(room_dir) as room:
        for question, category in QUESTIONS.items():
            relevant = {c["doc"] for c in labels["contracts"] if c["labels"].get(category)}
            started = time.perf_counter()
            hits = room.search(question, k=5)
            ms = 1000 * (time.perf_counter() - started)
            good = sum(h.doc in relevant for h in hits)
            rows.append((question, good / 5, good > 0, ms))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cuad", type=Path, help="a CUAD v1 folder (default: the sample)")
    parser.add_argument("--contracts", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    from dealroom.room import CuadSettings, import_cuad, write_cuad_sample

    with tempfile.TemporaryDirectory() as tmp:
        cuad = args.cuad or write_cuad_sample(Path(tmp) / "CUAD_v1", args.contracts, args.seed)
        room = Path(tmp) / "room"
        settings = CuadSettings(contracts=args.contracts, seed=args.seed,
                                categories=tuple(sorted(set(QUESTIONS.values()))))
        report = import_cuad(cuad, room, settings)
        totals = report.manifest.totals()
        print(f"room: {totals['docs']} contracts, {totals['pages']} pages "
              f"({'CUAD' if args.cuad else 'CUAD-format sample'})")
        rows = measure(room)
    for question, p5, hit, ms in rows:
        print(f"  {question:38s} P@5 {p5:.1f}  {'labelled in top 5' if hit else 'NONE in top 5'}"
              f"  {ms:.1f} ms")
    print(f"mean P@5 {statistics.mean(r[1] for r in rows):.2f}; questions with a labelled "
          f"contract in the top 5: {sum(r[2] for r in rows)}/{len(rows)}")


if __name__ == "__main__":
    main()
