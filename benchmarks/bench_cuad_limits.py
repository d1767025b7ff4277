"""`dealroom cuad import` size limits: what a hostile context costs now, and the largest accepted.

Writes a CUAD-format folder holding one contract whose context is ``--refused-mb`` MB (100: the
issue's case, which took 3.7 GB before it was killed), imports it in a child process and prints
the child's wall time, peak RSS and its error; then the same with a contract of
``--accepted-mb`` MB (the default limit, 20 MB), which is imported, to show what the largest
accepted contract costs.

    python benchmarks/bench_cuad_limits.py
    python benchmarks/bench_cuad_limits.py --refused-mb 100 --accepted-mb 5
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LAW = "This Agreement is governed by the laws of the State of Delaware."
CHILD = """
import resource, sys
from dealroom.errors import InputError
from dealroom.room import CuadSettings, import_cuad
try:
    report = import_cuad(sys.argv[1], sys.argv[2], CuadSettings(workers=1))
    outcome = f"imported, {report.manifest.totals()}"
except InputError as exc:
    outcome = f"InputError: ...{str(exc)[-120:]}"
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, outcome)
"""


def cuad_folder(root: Path, megabytes: float) -> Path:
    """A CUAD folder of one contract whose context is ``megabytes`` MB of contract-like lines."""
    folder = root / "CUAD_v1"
    (folder / "full_contract_txt").mkdir(parents=True)
    line = "The Supplier shall deliver the Products to the Buyer in accordance with Schedule 2.\n"
    head = f"SUPPLY AGREEMENT\n\n{LAW}\n\n"
    context = head + line * int((megabytes * 2**20 - len(head)) / len(line))
    entry = {"title": "Big", "paragraphs": [{"context": context, "qas": [
        {"id": "Big__Governing Law", "answers": [{"text": LAW, "answer_start": 18}]}]}]}
    (folder / "CUAD_v1.json").write_text(json.dumps({"data": [entry]}))
    return folder


def measure(megabytes: float) -> None:
    """Import a ``megabytes``-MB contract in a fresh child; print its time, memory, outcome."""
    with tempfile.TemporaryDirectory(prefix="bench-cuad-") as tmp:
        folder = cuad_folder(Path(tmp), megabytes)
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", CHILD, str(folder), str(Path(tmp) / "room")],
                              capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
    if done.returncode:
        print(f"{megabytes:g} MB context: failed after {wall:.1f} s: {done.stderr[-400:]}")
        return
    peak_kb, outcome = done.stdout.strip().split(" ", 1)
    print(f"{megabytes:g} MB context: {wall:.1f} s, peak RSS {int(peak_kb) / 1024:,.0f} MB "
          f"(the importing process); {outcome}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refused-mb", type=float, default=100.0)
    parser.add_argument("--accepted-mb", type=float, default=20.0)
    args = parser.parse_args()
    measure(args.refused_mb)
    if args.accepted_mb > 0:
        measure(args.accepted_mb)


if __name__ == "__main__":
    main()
