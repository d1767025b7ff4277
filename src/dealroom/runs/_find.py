"""Finding run folders: named ones, folders of runs, and sweeps of runs."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path

from dealroom.errors import ConfigError, DealroomWarning
from dealroom.runs._folder import CONFIG

EPISODES = "episodes"
"""A sweep's folder of run folders (at any depth below it)."""


def find_runs(paths: Iterable[Path]) -> list[Path]:
    """The run folders ``paths`` name, in order, each once.

    A path is a run folder (it holds ``config.json``), a sweep (it holds ``episodes/``: every
    run folder below it), or a folder holding run folders or sweeps at any depth (hidden folders
    are not searched). Links are followed, but no folder is searched twice: a link to a folder
    above it makes no loop and finds no run again. A folder that cannot be listed is skipped
    with a :class:`~dealroom.errors.DealroomWarning`. A ConfigError names a path that is none
    of these, or says that nothing was found.
    """
    found: dict[Path, None] = {}
    seen: set[tuple[int, int]] = set()
    for path in map(Path, paths):
        if not path.is_dir():
            raise ConfigError(f"{path} is not a run folder")
        for run in _expand(path, seen):
            found.setdefault(run)
    if not found:
        raise ConfigError(
            f"no run folders found (a run folder holds {CONFIG}; a sweep holds {EPISODES}/)"
        )
    return list(found)


def _expand(path: Path, seen: set[tuple[int, int]]) -> Iterator[Path]:
    if not _first_visit(path, seen):
        return
    if (path / CONFIG).is_file():
        yield path
    elif (path / EPISODES).is_dir():
        yield from _below(path / EPISODES, seen)
    else:  # hidden folders (.git, .venv, a sweep's .locks) hold no runs
        for child in _folders(path):
            if child.name[0] != ".":
                yield from _expand(child, seen)


def _below(folder: Path, seen: set[tuple[int, int]]) -> Iterator[Path]:
    for child in _folders(folder):
        if (child / CONFIG).is_file():
            if _first_visit(child, seen):
                yield child
        elif _first_visit(child, seen):
            yield from _below(child, seen)


def _first_visit(folder: Path, seen: set[tuple[int, int]]) -> bool:
    """False when ``folder`` (through whatever links) was searched already, or is gone."""
    try:
        stat = folder.stat()
    except OSError:
        return False
    key = (stat.st_dev, stat.st_ino)
    if key in seen:
        return False
    seen.add(key)
    return True


def _folders(folder: Path) -> list[Path]:
    """The folders in ``folder``, sorted; none, with a warning, when it cannot be listed."""
    try:
        return sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError as exc:
        warnings.warn(f"cannot search {folder} ({exc.strerror or exc}): the runs in it are "
                      "left out", DealroomWarning, stacklevel=2)
        return []
