"""Fail when an installed package differs from its pin in constraints.txt.

    python .ci/check_pins.py [constraints.txt]

A pinned package that is not installed is fine (it belongs to an extra CI did not install);
one that is installed at another version is not: the suite would test something users won't get.
The same check is part of ``dealroom doctor``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from dealroom._util.pins import mismatches, pins


def main() -> int:
    path = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parents[1] / "constraints.txt")
    bad = mismatches(pins(path))
    for line in bad:
        print(f"version drift: {line}", file=sys.stderr)
    if bad:
        hint = f"install with `pip install -c {path.name} ...` (see README, Install)"
        print(hint, file=sys.stderr)
        return 1
    print(f"all installed packages match {path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
