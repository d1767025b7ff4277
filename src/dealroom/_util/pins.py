"""Pins: the ``name==version`` lines of constraints.txt, and what is installed otherwise.

Only dealroom's own dependency tree is compared: a package that something else in the same
environment installed (at whatever version it likes) is not ours to pin.
"""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Iterable
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement


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


def mismatches(expected: dict[str, str], root: str = "dealroom",
               extras: Iterable[str] | None = None) -> list[str]:
    """One line per package of ``root``'s installed dependency tree (with ``extras``; all of
    them when None) whose version is not the pinned one. A pinned package that is not
    installed is fine: it belongs to an extra that was not installed."""
    out = []
    for name, version in dependency_tree(root, extras).items():
        if name in expected and not matches(version, expected[name]):
            out.append(f"{name}: installed {version}, pinned {expected[name]}")
    return sorted(out)


def dependency_tree(root: str, extras: Iterable[str] | None = None) -> dict[str, str]:
    """``{normalized name: installed version}`` for ``root`` and every installed package it
    requires, transitively, with the given extras of ``root`` (all of its extras when None)."""
    found: dict[str, str] = {}
    todo = [(normal_name(root), None if extras is None else frozenset(extras))]
    seen: set[tuple[str, frozenset[str] | None]] = set()
    while todo:
        name, wanted = todo.pop()
        if (name, wanted) in seen:
            continue
        seen.add((name, wanted))
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        found[name] = dist.version
        if wanted is None:
            wanted = frozenset(dist.metadata.get_all("Provides-Extra") or [])
        todo.extend((normal_name(req.name), frozenset(req.extras))
                    for req in _requirements(dist) if _applies(req, wanted))
    return found


def _requirements(dist: importlib.metadata.Distribution) -> list[Requirement]:
    reqs = []
    for line in dist.requires or []:
        try:
            reqs.append(Requirement(line))
        except InvalidRequirement:
            continue
    return reqs


def _applies(req: Requirement, extras: frozenset[str]) -> bool:
    """Whether ``req`` holds on this interpreter for a package installed with ``extras``."""
    if req.marker is None:
        return True
    return any(req.marker.evaluate({"extra": extra}) for extra in (*extras, ""))


def matches(installed: str, pinned: str) -> bool:
    """``==`` as pip reads it: a pin without a local label accepts any (``2.13.0+cpu``)."""
    return installed == pinned or ("+" not in pinned and installed.split("+")[0] == pinned)
