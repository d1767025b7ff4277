"""The run folder as one object: its files, how it is created and opened, what it holds.

    RUN/
      config.json       how the run was configured (:class:`~dealroom.runs.RunConfig`)
      trajectory.jsonl  one event per line, appended as it happens (:data:`EVENT_TYPES`)
      output/           the deliverables under the task's file names (``memo.md`` when it
                        names none), each rewritten atomically
      tokens.jsonl      token-exact records of ``hf:`` calls (:class:`~dealroom.runs.TokenRecord`)
      memo_history.jsonl  the memo at the end of each turn it changed (line edits)
      metrics.json      measured when the run ends (:class:`~dealroom.runs.Metrics`)
      scores.json       written by ``dealroom judge`` (``scores.<judge>.json`` for others;
                        :class:`~dealroom.runs.ScoresRecord`)
      scores_by_turn.json  ``dealroom judge --by-turn``: the memo judged as of each turn

A run folder is never overwritten. A folder left by a run killed before it wrote
``config.json`` (nothing in it but an empty ``output/`` or a temp file of the config) holds no
run: ``dealroom run --out`` reuses it, and opening it says so.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from dealroom._util.files import (
    read_json,
    write_bytes_atomic,
    write_json_atomic,
    write_text_atomic,
)
from dealroom.errors import ConfigError, InputError
from dealroom.runs._check import ScoresByTurn, check_by_turn, check_config, check_event
from dealroom.runs._config import RUN_VERSION, RunConfig, migrate_config
from dealroom.runs._jsonl import read_jsonl
from dealroom.runs._memohistory import MEMO_HISTORY, memo_at, read_memo_history
from dealroom.runs._records import (
    Metrics,
    ScoresRecord,
    check_metrics_written,
    read_metrics,
    read_scores,
)
from dealroom.runs._tokens import TokenRecord, read_all_tokens

CONFIG = "config.json"
TRAJECTORY = "trajectory.jsonl"
METRICS = "metrics.json"
SCORES = "scores.json"
SCORES_BY_TURN = "scores_by_turn.json"
OUTPUT = "output"
MEMO = "memo.md"
"""The memo's file name in ``output/`` when the task names no deliverables."""
ROOM_MANIFEST = "room.json"
"""The file that makes a folder a room (the room format's manifest)."""


class RunFolder:
    """One run folder. Get one with :meth:`open` (an existing run) or :meth:`create` (a new
    one); ``RunFolder(path)`` alone checks nothing."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._config: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return f"RunFolder({str(self.path)!r})"

    # -- opening and creating ---------------------------------------------------------------
    @classmethod
    def open(cls, path: Path) -> RunFolder:
        """The run in ``path``; a ConfigError says what to do when there is none."""
        path = Path(path)
        if not path.exists():
            raise ConfigError(f"{path} does not exist: give the folder a `dealroom run` wrote")
        if not path.is_dir():
            raise ConfigError(f"{path} is a file, not a run folder")
        if not (path / CONFIG).is_file():
            if _leftovers(path) is not None:
                raise ConfigError(
                    f"{path} holds no run: it was stopped before it wrote {CONFIG}. Start it "
                    f"again with `dealroom run ROOM --out {path}` (the folder is reused)"
                )
            raise ConfigError(f"{path} is not a run folder: {CONFIG} is missing")
        folder = cls(path)
        folder.config  # noqa: B018  # read, migrated and validated now
        return folder

    @staticmethod
    def check_new(path: Path) -> None:
        """Raise ConfigError unless :meth:`create` can make a run in ``path`` (run this before
        opening any model)."""
        path = Path(path)
        if path.is_dir():
            if _leftovers(path) is not None:
                return
            if (path / CONFIG).is_file():
                raise ConfigError(
                    f"{path} already holds files: choose a new --out folder, "
                    f"or continue that run with `dealroom resume {path}`"
                )
            raise ConfigError(f"{path} already holds files and no run: choose a new --out folder")
        if path.exists():
            raise ConfigError(f"{path} is a file: give --out a new folder")
        parent = next(p for p in path.parents if p.exists())
        try:  # a real probe: permissions alone do not tell (/proc is "writable" for root)
            os.rmdir(tempfile.mkdtemp(prefix=".dealroom-probe-", dir=parent))
        except OSError as exc:
            raise ConfigError(f"cannot create the run folder {path}: {parent} is not a "
                              f"writable folder ({exc.strerror or exc})") from None

    @classmethod
    def create(cls, path: Path, config: dict[str, Any]) -> RunFolder:
        """A new run folder holding ``config`` (with ``version``); refuse a used folder."""
        path = Path(path)
        cls.check_new(path)
        for leftover in (_leftovers(path) or []) if path.is_dir() else []:
            shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
        try:
            path.mkdir(parents=True, exist_ok=True)
            write_json_atomic(path / CONFIG, {"version": RUN_VERSION, **config})
            (path / OUTPUT).mkdir(exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                f"cannot create the run folder {path}: {exc.strerror or exc}"
            ) from None
        return cls(path)

    # -- what it holds ----------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.path.name

    @property
    def config(self) -> RunConfig:
        """``config.json`` (read once), brought to the current version
        (:func:`~dealroom.runs.migrate_config`) and validated."""
        if self._config is None:
            path = self.path / CONFIG
            config = read_json(path, ConfigError, f"{self.path} is not a run folder: "
                               f"{CONFIG} is missing")
            if not isinstance(config, dict):
                raise InputError(f"{path} holds {type(config).__name__}, not a JSON object")
            try:
                config = migrate_config(config)
            except ConfigError as exc:
                raise ConfigError(f"{self.path} has {exc}") from None
            check_config(config, path)
            self._config = config
        return self._config  # type: ignore[return-value]

    @property
    def version(self) -> int:
        """The folder's format version: :data:`RUN_VERSION` once read (``config.json``'s own
        is migrated to it; 1 when it has none)."""
        return self.config.get("version", RUN_VERSION)

    def events(self) -> list[dict[str, Any]]:
        """Every event of the trajectory in ``seq`` order (none when it has not started)."""
        path = self.path / TRAJECTORY
        if not path.is_file():
            return []
        return sorted((check_event(e, path) for e in read_jsonl(path)),
                      key=lambda e: e.get("seq", 0))

    @staticmethod
    def ended(events: list[dict[str, Any]]) -> bool:
        """True when ``events`` hold the root's ``run_end``."""
        return any(e.get("type") == "run_end" and e.get("agent", "root") == "root"
                   for e in events)

    def tokens(self) -> dict[str, TokenRecord]:
        """The token records of ``tokens.jsonl`` by ``call_id`` (none for runs without
        ``hf:`` models); a call made again by a resumed run has its last record."""
        return read_all_tokens(self.path)

    @property
    def room(self) -> Path:
        """The room folder the run used: the config's ``room``, as given or relative to the run."""
        room = self.config.get("room")
        if not room:
            raise ConfigError(f"{self.path / CONFIG} names no room; pass the room explicitly")
        for candidate in (Path(room), self.path / room):
            if (candidate / ROOM_MANIFEST).is_file():
                return candidate
        raise ConfigError(f"the room of run {self.path} ({room}) is not found; pass it explicitly")

    # -- deliverables, metrics, scores --------------------------------------------------------
    @property
    def deliverables(self) -> dict[str, str]:
        """Deliverable name → file name in ``output/``: the task's when the run started
        (``config.json``'s ``deliverables``), ``{"memo": "memo.md"}`` for older runs."""
        recorded = self.config.get("deliverables")
        return dict(recorded) if isinstance(recorded, dict) and recorded else {"memo": MEMO}

    def deliverable(self, name: str) -> Path:
        """Where the deliverable ``name`` is written: a name of :attr:`deliverables` (``memo``)
        or a file name (``memo.md``, ``antitrust-risk-memo.docx``)."""
        return self.path / OUTPUT / self.deliverables.get(name, name)

    @property
    def memo_path(self) -> Path:
        """The main deliverable (:func:`primary_deliverable`): ``output/memo.md`` for older runs."""
        return self.deliverable(primary_deliverable(self.deliverables))

    def read_deliverable(self, name: str) -> str | None:
        """A Markdown or text deliverable as written (read other formats, such as ``.docx``,
        with :func:`dealroom.room.deliverable_text`), or None when the run never wrote it."""
        path = self.deliverable(name)
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None

    def write_deliverable(self, name: str, data: str | bytes) -> None:
        """Replace the deliverable atomically (a kill leaves the old one or the new one)."""
        if isinstance(data, bytes):
            write_bytes_atomic(self.deliverable(name), data)
        else:
            write_text_atomic(self.deliverable(name), data)

    def metrics(self) -> Metrics | None:
        """``metrics.json`` (brought to the current version and validated), or None when the
        run has not written it."""
        metrics = _json_or_none(self.path / METRICS)
        return metrics if metrics is None else read_metrics(metrics, str(self.path / METRICS))

    def write_metrics(self, metrics: Metrics) -> None:
        """Write ``metrics.json`` atomically; a ValueError, and nothing written, for a record
        that is not a whole :class:`~dealroom.runs.Metrics`."""
        check_metrics_written(metrics)
        write_json_atomic(self.path / METRICS, metrics)

    def scores_path(self, judge: str | None = None) -> Path:
        """``scores.json``, or ``scores.<judge>.json`` for a second judge's scores."""
        return self.path / (f"scores.{judge}.json" if judge else SCORES)

    def scores(self, judge: str | None = None) -> ScoresRecord | None:
        """The scores :meth:`scores_path` names (brought to the current version and
        validated), or None when the run was not judged so."""
        scores = _json_or_none(self.scores_path(judge))
        return scores if scores is None else read_scores(scores, str(self.scores_path(judge)))

    # -- the memo history and its scores -------------------------------------------------------
    def memo_history(self) -> list[tuple[int, str]]:
        """``(turn, memo)`` at the end of each root turn in which the memo changed."""
        return read_memo_history(self.path / MEMO_HISTORY)

    def memo_at(self, turn: int) -> str:
        """The memo as it stood at the end of root turn ``turn`` ("" before the first write)."""
        return memo_at(self.memo_history(), turn)

    def scores_by_turn_path(self, judge: str | None = None) -> Path:
        """``scores_by_turn.json`` (``scores_by_turn.<judge>.json`` for a second judge)."""
        return self.path / (f"scores_by_turn.{judge}.json" if judge else SCORES_BY_TURN)

    def scores_by_turn(self, judge: str | None = None) -> ScoresByTurn | None:
        """The by-turn scores, or None when the run was not judged by turn."""
        scores = _json_or_none(self.scores_by_turn_path(judge))
        return scores if scores is None else check_by_turn(scores,
                                                           self.scores_by_turn_path(judge))


def primary_deliverable(deliverables: dict[str, str]) -> str:
    """The main deliverable's name: ``memo`` when the task has one, else its first.

    >>> primary_deliverable({"issues": "issues.docx", "memo": "memo.md"})
    'memo'
    """
    return "memo" if "memo" in deliverables else next(iter(deliverables))


def deliverable_key(deliverables: dict[str, str], name: str) -> str | None:
    """The deliverable ``name`` refers to (its name, its file name, or ``output/`` and its file
    name), or None when it is none of them.

    >>> deliverable_key({"memo": "memo.md"}, "output/memo.md")
    'memo'
    """
    name = name.removeprefix(f"{OUTPUT}/")
    if name in deliverables:
        return name
    return next((key for key, filename in deliverables.items() if filename == name), None)


def _json_or_none(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path`` (None when absent); an InputError when it holds another
    kind of value."""
    if not path.is_file():
        return None
    data = read_json(path, ConfigError, "")
    if not isinstance(data, dict):
        raise InputError(f"{path} holds {type(data).__name__}, not a JSON object")
    return data


def _leftovers(path: Path) -> list[Path] | None:
    """What a run killed before it wrote ``config.json`` leaves (an empty ``output/``, a temp
    file of the config), or None when ``path`` holds anything else."""
    entries = list(path.iterdir())
    for entry in entries:
        if entry.name == OUTPUT and entry.is_dir() and not any(entry.iterdir()):
            continue
        if entry.is_file() and entry.name.startswith(f".{CONFIG}.") and entry.name.endswith(".tmp"):
            continue
        return None
    return entries
