"""Fail when an installed package differs from its pin in constraints.txt.

    python .ci/check_pins.py [constraints.txt]

A pinned package that is not installed is fine (it belongs to an extra CI did not install);
one that is installed at another version is not: the suite would test something users won't get.
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
from pathlib import Path


def pins(path: Path) -> dict[str, str]:
    """``{normalized name: version}`` for every ``name==version`` line of a constraints file."""
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-]+)==([^\s;#]+)", line.strip())
        if match:
            found[_normal(match.group(1))] = match.group(2)
    return found


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def mismatches(expected: dict[str, str]) -> list[str]:
    """One line per installed package whose version is not the pinned one."""
    out = []
    for dist in importlib.metadata.distributions():
        name = _normal(dist.metadata["Name"] or "")
        if name in expected and not matches(dist.version, expected[name]):
            out.append(f"{name}: installed {dist.version}, pinned {expected[name]}")
    return sorted(set(out))


def matches(installed: str, pinned: str) -> bool:
    """``==`` as pip reads it: a pin without a local label accepts any (``2.13.0+cpu``)."""
    return installed == pinned or ("+" not in pinned and installed.split("+")[0] == pinned)


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
