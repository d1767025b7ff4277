"""``dealroom view DIR`` over a folder of runs or a sweep: a list of its runs, each opening
its trace viewer; with ``--serve`` the list is rewritten as runs are written.

    OUT/
      index.html        the list (status, room, policy, pass rate, cost, turns), each run
                        linking to its trace; served over HTTP it reloads data/runs.js
                        every REFRESH_S seconds
      data/runs.js      the rows
      runs/NAME/        each run's trace viewer (``dealroom view RUN``'s folder)
      rooms/ROOM/       the documents' texts the traces link to, written once per room

A run's trace is rewritten only when its files changed since the last pass (the size and
modification time of its trajectory, scores, metrics and asks' answers), so watching a sweep
re-reads only the runs that moved.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import threading
from pathlib import Path
from typing import Any

from dealroom._util.files import make_dir
from dealroom.errors import ConfigError, DealroomError
from dealroom.report._html import page
from dealroom.report._pages import write_script
from dealroom.report._trace import model_name
from dealroom.report._view import write_trace
from dealroom.runs import METRICS, SCORES, TRAJECTORY, RunFolder, find_runs

REFRESH_S = 2.0
"""How often a served list reloads its rows, and how often ``watch_listing`` looks."""
LISTING = "data/runs.js"
ASKS, ANSWER = "asks", "answer.json"
"""Where ``dealroom ask`` versions a run's answers: ``RUN/asks/N/answer.json``."""


class Listing:
    """The list of the runs under ``source`` written into ``out``; :meth:`update` rewrites it
    (and the traces of the runs that changed)."""

    def __init__(self, source: Path, out: Path) -> None:
        self.source, self.out = Path(source), Path(out)
        self._seen: dict[Path, tuple] = {}
        self._names: dict[Path, str] = {}
        self._rows: dict[Path, dict[str, Any]] = {}

    def update(self, allow_empty: bool = True) -> Path:
        """Look for runs again, rewrite the changed ones' traces and the list; ``index.html``.
        A folder that holds no run yet lists none (a sweep that has not started), unless not
        ``allow_empty`` (then find_runs' ConfigError)."""
        try:
            runs = find_runs([self.source])
        except ConfigError as exc:
            if not self.source.is_dir():
                raise
            if not allow_empty:
                raise ConfigError(f"{self.source} is not a run folder, and {exc}") from None
            runs = []
        for run in runs:
            stamp = _stamp(run)
            if self._seen.get(run) == stamp:
                continue
            self._rows[run] = self._write_run(run)
            self._seen[run] = stamp
        rows = [self._rows[r] for r in runs if r in self._rows]
        write_script(self.out / LISTING, "runs", {"source": str(self.source), "rows": rows,
                                                  "refresh_s": REFRESH_S})
        index = self.out / "index.html"
        if not index.is_file():
            index.write_text(page(f"dealroom runs: {self.source.name}", "runs",
                                  body=RUNS_BODY, scripts=[LISTING]), encoding="utf-8")
        return index

    def _write_run(self, run: Path) -> dict[str, Any]:
        name = self._names.setdefault(run, unique_name(run_name(run, self.source),
                                                   set(self._names.values())))
        row = run_row(run)
        row["name"] = name
        try:
            write_trace(run, self.out / "runs" / name, docs_dir=self.out / "rooms" / _room(run),
                        title=f"{row['room']}: {name}")
            row["trace"] = f"runs/{name}/index.html"
        except DealroomError as exc:  # a run folder too damaged to show is listed, not lost
            row["trace"], row["error"] = None, str(exc)
        return row


RUNS_BODY = """<header><h1 id="title">Runs</h1><div class="facts" id="facts"></div></header>
<main><table class="runs" id="runs"><thead><tr><th>run</th><th>status</th><th>room</th>
<th>policy</th><th>pass rate</th><th>cost USD</th><th>turns</th></tr></thead>
<tbody></tbody></table></main>
"""


def write_listing(source: Path, out: Path, *, allow_empty: bool = False) -> Path:
    """Write the list of the runs under ``source`` (a sweep or a folder of runs) and their
    traces into ``out``; its ``index.html``. A source that holds no run is a ConfigError
    (nothing written) unless ``allow_empty``."""
    if not Path(source).is_dir():
        raise ConfigError(f"{source} is not a run folder, a sweep or a folder of runs")
    out = Path(out)
    made = not out.exists()
    _check_out(out)
    try:
        return Listing(source, out).update(allow_empty)
    except BaseException:
        if made:
            shutil.rmtree(out, ignore_errors=True)
        raise


def watch_listing(listing: Listing, stop: threading.Event, interval: float = REFRESH_S
                  ) -> None:
    """Rewrite ``listing`` every ``interval`` seconds until ``stop`` is set."""
    while not stop.wait(interval):
        try:
            listing.update()
        except (DealroomError, OSError):
            continue  # a run half-written right now: the next pass reads it whole


def run_row(run: Path) -> dict[str, Any]:
    """One run's line of the list: status, room, policy, pass rate, cost and turns."""
    folder = RunFolder.open(run)
    config = folder.config
    events = folder.events()
    end = next((e for e in reversed(events) if e.get("type") == "run_end"
                and e.get("agent", "root") == "root"), None)
    turns = end.get("turns") if end else max(
        (int(e.get("turn") or 0) for e in events if e.get("agent", "root") == "root"
         and e.get("type") in ("model_call", "cell")), default=0)
    scores = folder.scores() or {}
    metrics = folder.metrics() or {}
    cost = sum(float((e.get("usage") or {}).get("cost_usd") or 0.0) for e in events
               if e.get("type") in ("model_call", "compaction"))
    total = ((metrics.get("usage") or {}).get("total") or {}).get("cost_usd")
    return {"path": str(run), "status": end.get("status") if end else "running",
            "room": Path(str(config.get("room") or "")).name,
            "policy": " + ".join(p for p in (model_name(config.get("root")), _subs(config))
                                 if p),
            "pass_rate": scores.get("pass_rate"),
            "cost_usd": round(float(total if total is not None else cost), 6),
            "turns": turns}


def _subs(config: Any) -> str | None:
    """The sub-agents' models: the one (``oracle``), or each by name (``fast=a, strong=b``)."""
    named = config.get("subs")
    if isinstance(named, dict) and named:
        return ", ".join(f"{name}={model_name(spec)}" for name, spec in named.items())
    return model_name(config.get("sub"))


def _stamp(run: Path) -> tuple:
    """What changes when a run is written to: its files' sizes and modification times, and
    its follow-up questions' answers (``dealroom ask``)."""
    out: list[tuple[int, int] | None] = []
    for path in (*(run / name for name in (TRAJECTORY, SCORES, METRICS)),
                 *sorted((run / ASKS).glob(f"*/{ANSWER}"))):
        try:
            st = path.stat()
            out.append((st.st_size, st.st_mtime_ns))
        except OSError:
            out.append(None)
    return tuple(out)


def run_name(run: Path, source: Path) -> str:
    """A file name for ``run`` found under ``source``: its path below it (``episodes/``
    left out, ``/`` as ``_``), or its own name for the run folder itself."""
    try:
        rel = run.relative_to(source)
    except ValueError:
        rel = Path(run.name)
    parts = [p for p in rel.parts if p != "episodes"] or [run.name]
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", "_".join(parts)).strip("._") or "run"


def unique_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name-2``, ``name-3``, ... the first not in ``taken``."""
    n, candidate = 1, name
    while candidate in taken:
        n += 1
        candidate = f"{name}-{n}"
    return candidate


def _room(run: Path) -> str:
    room = str(RunFolder(run).config.get("room", ""))
    return f"{Path(room).name or 'room'}-{hashlib.sha1(room.encode()).hexdigest()[:8]}"


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out} is a file: give --out a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / LISTING).is_file():
        raise ConfigError(f"{out} holds other files: give --out a new folder")
    make_dir(out, "the list's folder")
