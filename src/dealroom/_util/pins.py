"""Pins: the ``name==version`` lines of constraints.txt, and what is installed otherwise."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path


def normal_name(name: str) -> str:
    """A distribution name as the index compares it (``Foo_Bar`` → ``foo-bar``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    """``{normalized name: version}`` for every ``name==version`` line of a constraints file."""
    found = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-]+)==([^\s;#]+)", line.strip())
        if match:
            found[normal_name(match.group(1))] = match.group(2)
    return found


def mismatches(expected: dict[str, str]) -> list[str]:
    """One line per installed package whose version is not the pinned one (a pinned package
    that is not installed is fine: it belongs to an extra that was not installed)."""
    out = []
    for dist in importlib.metadata.distributions():
        name = normal_name(dist.metadata["Name"] or "")
        if name in expected and not matches(dist.version, expected[name]):
            out.append(f"{name}: installed {dist.version}, pinned {expected[name]}")
    return sorted(set(out))


def matches(installed: str, pinned: str) -> bool:
    """``==`` as pip reads it: a pin without a local label accepts any (``2.13.0+cpu``)."""
    return installed == pinned or ("+" not in pinned and installed.split("+")[0] == pinned)
