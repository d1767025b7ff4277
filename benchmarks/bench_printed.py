"""What reading printed page numbers from the text costs the index build.

    python benchmarks/bench_printed.py                 # a generated 500-document room
    python benchmarks/bench_printed.py --docs 2000
    python benchmarks/bench_printed.py --room rooms/aravon

Prints the room's size, the time ``build_index`` takes, and the time and throughput of
:func:`read_printed` over every page of every paged document (what the build spends on it),
with the documents it labelled.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from dealroom.room import Room, build_index, generate_room
from dealroom.room._index import PRINTED_FORMATS
from dealroom.room._printed import read_printed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=500)
    parser.add_argument("--room", type=Path, help="an existing room (else one is generated)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        room_dir = args.room or Path(tmp) / "room"
        if args.room is None:
            generate_room(room_dir, docs=args.docs, seed=7, secret="bench")
        started = time.perf_counter()
        build_index(room_dir)
        build = time.perf_counter() - started
        with Room.open(room_dir) as room:
            docs = [[room.text(d, n) for n in range(1, d.pages + 1)]
                    for d in room.docs if d.format in PRINTED_FORMATS]
            labelled = sum(1 for d in room.docs if d.labels_from == "text")
        chars = sum(len(page) for pages in docs for page in pages)
        started = time.perf_counter()
        for pages in docs:
            read_printed(pages)
        spent = time.perf_counter() - started
    print(f"{len(docs):,} paged documents, {sum(map(len, docs)):,} pages, {chars / 1e6:.1f}M "
          f"characters; {labelled} labelled from their text")
    print(f"build_index: {build:.2f} s; read_printed: {spent:.2f} s "
          f"({chars / spent / 1e6:.0f} M characters/s, {spent / build:.1%} of the build)")
    print(f"load average: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
