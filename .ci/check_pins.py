"""Fail when a package of dealroom's dependency tree differs from its pin in constraints.txt.

    python .ci/check_pins.py [constraints.txt] [--extras local,dev,train,report,ocr,search]

Only dealroom and what it requires (with the given extras; all of them by default) are
compared: other packages in the same environment are not ours. A pinned package that is not
installed is fine (it belongs to an extra CI did not install); one that is installed at another
version is not: the suite would test something users won't get. The same check is part of
``dealroom doctor``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dealroom._util.pins import mismatches, pins


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("constraints", nargs="?", type=Path,
                        default=Path(__file__).parents[1] / "constraints.txt")
    parser.add_argument("--extras", help="comma-separated extras of dealroom (default: all)")
    args = parser.parse_args()
    path = args.constraints
    extras = None if args.extras is None else [e for e in args.extras.split(",") if e]
    bad = mismatches(pins(path), extras=extras)
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
