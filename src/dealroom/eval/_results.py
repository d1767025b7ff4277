"""Episodes as rows: what the metrics, comparisons and analyses of a sweep are computed from.

A source is a sweep folder (its ``sweep.json`` names each episode's policy as the spec wrote
it), any folder :func:`~dealroom.runs.find_runs` accepts (the policy is then the run's root and
sub with the sample's ``seed=`` option taken out), or either with a selector:
``SWEEP:root=scripted``, ``SWEEP:root=scripted,sub=oracle,max_turns=30`` (keys: ``root``,
``sub``, ``depth``, ``max_turns``, ``room``, ``seed``; a value holding ``,KEY=`` of one of
those keys is cut there, so write such filters with ``;`` between them).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dealroom.errors import ConfigError, DealroomError, InputError
from dealroom.eval._metrics import size_bucket
from dealroom.eval._spec import join_parts, seeded_parts
from dealroom.eval._sweep_record import SWEEP_JSON, EpisodeEntry, read_sweep
from dealroom.runs import (
    Behaviour,
    Metrics,
    RunFolder,
    ScoresRecord,
    UsageRecord,
    UsageSummary,
    find_runs,
)

KEYS = ("root", "sub", "depth", "max_turns", "room", "seed")
"""What a selector may filter on."""
HEADLINES = ("headline", "total", "positive")
"""Which pass rate is a row's ``pass_rate``: its ``scores.json`` ``headline`` (the positive
criteria's rate where the rubric has negatives, else the total; docs/judging.md), the rate over
all criteria, or over positive criteria only (``pass_rate_positive``: an empty memo scores 0)."""
_SPLIT = re.compile(r"[,;](?=(?:root|sub|depth|max_turns|room|seed)=)")


@dataclass
class Row:
    """One judged (or failed) episode."""

    run: str
    room: str
    root: str
    sub: str | None
    depth: int
    max_turns: int
    seed: int
    status: str
    """``done`` or ``failed`` (an episode of a sweep that failed); runs outside a sweep: done."""
    docs: int = 0
    """Documents in the room."""
    real: bool = False
    """The room holds real documents (ingested, a LAB task, CUAD), not generated ones."""
    simulated: bool = False
    """The sub-agent is a simulator (the oracle)."""
    pass_rate: float = math.nan
    """The pass rate computed with: the ``scores.json`` ``headline`` as loaded (the total or
    the positive criteria's rate with :func:`with_headline`)."""
    headline_kind: str = "total"
    """What the ``headline`` is: ``positive`` or ``total`` (``scores.json``)."""
    pass_rate_total: float = math.nan
    """Pass rate over all criteria (``scores.json`` ``pass_rate``)."""
    pass_rate_positive: float = math.nan
    """Pass rate over positive criteria alone (``scores.json`` ``pass_rate_positive``)."""
    all_pass: bool | None = None
    evidence_f1: float = math.nan
    """Evidence F1 (``scores.json`` ``evidence.f1``; NaN where not measured)."""
    by_type: dict[str, float] = field(default_factory=dict)
    by_turn: list[float] = field(default_factory=list)
    """``pass_rate``'s kind for the memo as of turns 1..turns (empty when not judged by
    turn)."""
    by_turn_total: list[float] = field(default_factory=list)
    by_turn_positive: list[float] = field(default_factory=list)
    by_turn_all_pass: list[bool] = field(default_factory=list)
    by_turn_types: list[dict[str, float]] = field(default_factory=list)
    coverage: float = math.nan
    cost_usd: float = math.nan
    sub_calls: int = 0
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    root_input_tokens: int = 0
    root_output_tokens: int = 0
    memo_incremental: bool | None = None
    first_memo_turn: int | None = None
    """First turn whose memo held a section (None: never)."""

    @property
    def policy(self) -> tuple[str, str | None, int]:
        return self.root, self.sub, self.depth

    @property
    def bucket(self) -> str:
        return size_bucket(self.docs)

    def value(self, key: str) -> Any:
        return self.bucket if key == "size" else getattr(self, key)


def load_rows(source: str | Path) -> list[Row]:
    """The rows of a sweep, a folder of runs, or either with a ``:KEY=VALUE,...`` selector."""
    path, filters = parse_source(str(source))
    rows = _sweep_rows(path) if (path / SWEEP_JSON).is_file() else _run_rows(path)
    chosen = [r for r in rows if all(str(r.value(k)) == v for k, v in filters.items())]
    if not chosen:
        what = f" matching {', '.join(f'{k}={v}' for k, v in filters.items())}" if filters else ""
        raise ConfigError(f"{path} holds no episodes{what}")
    return chosen


def parse_source(source: str) -> tuple[Path, dict[str, str]]:
    """``(folder, filters)`` of ``SWEEP`` or ``SWEEP:key=value,...``.

    >>> parse_source("out:root=scripted:coverage=0.3,sub=oracle")
    (PosixPath('out'), {'root': 'scripted:coverage=0.3', 'sub': 'oracle'})
    """
    for match in re.finditer(r":(?=(?:root|sub|depth|max_turns|room|seed)=)", source):
        path, rest = Path(source[:match.start()]), source[match.end():]
        filters = dict(part.split("=", 1) for part in _SPLIT.split(rest))
        return path, filters
    other = re.search(r":([A-Za-z_][\w-]*)=", source)
    if other and not Path(source).exists():
        raise ConfigError(f"unknown selector key {other[1]!r} in {source}: a selector filters "
                          f"on {', '.join(KEYS)} (SWEEP:root=scripted,max_turns=16)")
    return Path(source), {}


def _sweep_rows(path: Path) -> list[Row]:
    rows = []
    for entry in read_sweep(path / SWEEP_JSON).get("episodes") or []:
        eid, room, root, max_turns, room_path = _check_entry(entry, path / SWEEP_JSON)
        run = path / "episodes" / eid
        row = Row(run=str(run), room=room, root=root, sub=entry.get("sub"),
                  depth=entry.get("depth", 1), max_turns=max_turns, seed=entry.get("seed", 0),
                  status=entry.get("status", "pending"), docs=_docs(room_path),
                  real=_real(room_path))
        if row.status == "done":
            _fill(row, RunFolder(run))
        rows.append(row)
    return rows


def _check_entry(entry: EpisodeEntry, where: Path) -> tuple[str, str, str, int, str]:
    """The ``id``, ``room``, ``root``, ``max_turns`` and ``room_path`` of a ``sweep.json``
    episode (its types were checked on read); an InputError when one is missing or its id
    leaves the sweep's ``episodes/`` folder."""
    eid = entry.get("id") or ""
    missing = [k for k in ("id", "room", "root", "max_turns", "room_path") if entry.get(k) is None]
    if missing or eid.startswith("/") or ".." in eid.split("/") or "\0" in eid:
        raise InputError(f"{where}: episode {eid!r} lacks {', '.join(missing)} or its id leaves "
                         "episodes/: the sweep folder is damaged or was edited")
    return eid, entry["room"], entry["root"], entry["max_turns"], entry["room_path"]


def _run_rows(path: Path) -> list[Row]:
    rows = []
    for run in find_runs([path]):
        folder = RunFolder.open(run)
        config = folder.config
        root, root_seed = _unseeded(config.get("root", ""))
        sub, sub_seed = _unseeded(config.get("sub"))
        settings = config.get("settings") or {}
        room = str(config.get("room", ""))
        row = Row(run=str(run), room=Path(room).name, root=root or "", sub=sub,
                  depth=int(settings.get("depth", 1)),
                  max_turns=int(settings.get("max_turns", 0)), seed=root_seed or sub_seed,
                  status="done", docs=_docs(room), real=_real(room))
        _fill(row, folder)
        rows.append(row)
    return rows


def _unseeded(spec: str | None) -> tuple[str | None, int]:
    """A policy's spec without its sample ``seed`` option, and that seed (0 without one).

    >>> _unseeded("oracle:recall=0.7,seed=4"), _unseeded("scripted:seed=2"), _unseeded("local")
    (('oracle:recall=0.7', 4), ('scripted', 2), ('local', 0))
    """
    parts = seeded_parts(spec) if spec else None
    if parts is None:
        return spec, 0
    head, options, separator = parts
    seed = options.pop("seed", "0")
    return join_parts(head, options, separator), int(seed) if seed.lstrip("-").isdigit() else 0


def _fill(row: Row, folder: RunFolder) -> None:
    """The row's figures from the run's records (typed, their kinds checked on read)."""
    scores: ScoresRecord = folder.scores() or {}
    if not scores:
        row.status = "unjudged"
    row.headline_kind = scores.get("headline_kind", "total")
    row.pass_rate = _num(scores.get("headline", scores.get("pass_rate")))
    row.pass_rate_total = _num(scores.get("pass_rate"))
    row.pass_rate_positive = _num(scores.get("pass_rate_positive"))
    row.all_pass = scores.get("all_pass")
    row.evidence_f1 = _num((scores.get("evidence") or {}).get("f1"))
    row.by_type = {k: _num(v.get("pass_rate"))
                   for k, v in (scores.get("pass_rate_by_type") or {}).items()}
    by_turn = (folder.scores_by_turn() or {}).get("by_turn") or []
    row.by_turn_total = [_num(t.get("pass_rate")) for t in by_turn]
    row.by_turn_positive = [_num(t.get("pass_rate_positive")) for t in by_turn]
    row.by_turn = row.by_turn_positive if row.headline_kind == "positive" else row.by_turn_total
    row.by_turn_all_pass = [bool(t.get("all_pass")) for t in by_turn]
    row.by_turn_types = [t.get("pass_rate_by_type") or {} for t in by_turn]
    metrics: Metrics = folder.metrics() or {}
    usage: UsageSummary = metrics.get("usage") or {}
    total: UsageRecord = usage.get("total") or {}
    root: UsageRecord = (usage.get("by_role") or {}).get("root") or {}
    behaviour: Behaviour = metrics.get("behaviour") or {}
    row.simulated = bool(metrics.get("simulators", folder.config.get("simulators")))
    row.coverage = _num((metrics.get("coverage") or {}).get("coverage"))
    row.cost_usd = _num(total.get("cost_usd"))
    row.input_tokens, row.output_tokens = total.get("input_tokens", 0), \
        total.get("output_tokens", 0)
    row.root_input_tokens, row.root_output_tokens = root.get("input_tokens", 0), \
        root.get("output_tokens", 0)
    row.sub_calls = behaviour.get("sub_calls", 0)
    row.turns = behaviour.get("turns", 0)
    row.memo_incremental = behaviour.get("memo_incremental")
    row.first_memo_turn = next((t for t, memo in folder.memo_history() if "\n## " in memo), None)


def _num(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else math.nan


@functools.lru_cache(maxsize=256)
def _docs(room: str) -> int:
    from dealroom.room import load_manifest

    try:
        return len(load_manifest(Path(room)).documents)
    except DealroomError:
        return 0


def _real(room: str) -> bool:
    """Whether the room's documents are real: its manifest names no generator."""
    from dealroom.room import load_manifest

    try:
        return "generator" not in load_manifest(Path(room)).meta
    except DealroomError:
        return False


def with_headline(rows: list[Row], headline: str = "headline") -> list[Row]:
    """``rows`` with ``headline``'s pass rate as their ``pass_rate`` (and by turn):
    ``headline`` keeps them (each episode's ``scores.json`` headline); ``total`` puts the rate
    over all criteria there, ``positive`` the positive criteria's."""
    if headline not in HEADLINES:
        raise ConfigError(f"--headline must be {', '.join(HEADLINES)}, got {headline!r}")
    if headline == "headline":
        return rows
    if headline == "total":
        return [dataclasses.replace(r, pass_rate=r.pass_rate_total, by_turn=r.by_turn_total,
                                    headline_kind="total") for r in rows]
    return [dataclasses.replace(r, pass_rate=r.pass_rate_positive, headline_kind="positive",
                                by_turn=[] if all(map(math.isnan, r.by_turn_positive))
                                else r.by_turn_positive) for r in rows]


def judged(rows: list[Row]) -> list[Row]:
    """The rows with a pass rate."""
    return [r for r in rows if not math.isnan(r.pass_rate)]


def sweep_spec(source: str | Path) -> dict[str, Any] | None:
    """The spec recorded in a sweep's ``sweep.json`` (None for a folder of runs)."""
    path = parse_source(str(source))[0] / SWEEP_JSON
    return read_sweep(path).get("spec") if path.is_file() else None
