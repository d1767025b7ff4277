"""Finding run folders: named ones, folders of runs, and sweeps of runs."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from dealroom.errors import ConfigError
from dealroom.runs._folder import CONFIG

EPISODES = "episodes"
"""A sweep's folder of run folders (at any depth below it)."""


def find_runs(paths: Iterable[Path]) -> list[Path]:
    """The run folders ``paths`` name, in order, each once.

    A path is a run folder (it holds ``config.json``), a sweep (it holds ``episodes/``: every
    run folder below it), or a folder holding run folders or sweeps at any depth (hidden folders
    are not searched). A ConfigError names a path that is none of these, or says that nothing
    was found.
    """
    found: dict[Path, None] = {}
    for path in map(Path, paths):
        if not path.is_dir():
            raise ConfigError(f"{path} is not a run folder")
        for run in _expand(path):
            found.setdefault(run)
    if not found:
        raise ConfigError(
            f"no run folders found (a run folder holds {CONFIG}; a sweep holds {EPISODES}/)"
        )
    return list(found)


def _expand(path: Path) -> Iterator[Path]:
    if (path / CONFIG).is_file():
        yield path
    elif (path / EPISODES).is_dir():
        yield from _below(path / EPISODES)
    else:  # hidden folders (.git, .venv, a sweep's .locks) hold no runs
        for child in sorted(p for p in path.iterdir() if p.is_dir() and p.name[0] != "."):
            yield from _expand(child)


def _below(folder: Path) -> Iterator[Path]:
    for child in sorted(p for p in folder.iterdir() if p.is_dir()):
        if (child / CONFIG).is_file():
            yield child
        else:
            yield from _below(child)
