"""``dealroom report RUNS_OR_SWEEPS... --out DIR``: the HTML report over sweeps and runs.

    DIR/
      index.html     the headline table per policy, the plots (SVG, inline), the episodes per
                     room, each linking to its trace
      report.json    the same numbers: sources, headline, episodes, plots' data, analyses, Pass@k
      traces/eNNNN/  the trace viewer of each episode (``dealroom view``'s folder)
      rooms/NAME/    the documents' texts the traces link to, written once per room
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import math
import shutil
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dealroom._util.files import json_safe, write_json_atomic
from dealroom.errors import ConfigError
from dealroom.eval import analyze, load_rows, passk, with_headline
from dealroom.report._figures import episode, headline, plot_data, policy_name
from dealroom.report._html import page
from dealroom.report._plots import PLOTS
from dealroom.report._view import write_trace
from dealroom.runs import RunFolder

REPORT_JSON = "report.json"
COLUMNS = (("policy", "policy", None), ("episodes", "episodes", 0),
           ("rooms", "rooms", 0), ("pass rate [95% CI]", "pass_rate", 3),
           ("positive criteria", "pass_rate_positive", 3),
           ("all-pass", "all_pass", 3), ("coverage", "coverage", 3),
           ("cost / room USD", "cost_per_room", 4), ("tokens", "tokens", 0),
           ("root share", "root_share", 3), ("sub-calls", "sub_calls", 1),
           ("turns", "turns", 1), ("wall s", "wall_s", 1), ("judge errors", "judge_errors", 0))
"""The headline table: header, key, digits (None: text)."""


def build_report(sources: list[str | Path], out: Path, *, title: str | None = None,
                 progress: Callable[[int, int], None] | None = None,
                 headline_rate: str = "total") -> Path:
    """Write the report of ``sources`` (sweeps, folders of runs, run folders, each with an
    optional ``:KEY=VALUE`` selector) into ``out``; its ``index.html``. ``progress(done,
    total)`` is called as the episodes' traces are written. ``headline_rate``: ``total`` or
    ``positive``, the pass rate the tables, plots and Pass@k use (the positive criteria's
    rate stands beside it either way)."""
    if not sources:
        raise ConfigError("give at least one sweep or run folder to report on")
    out = Path(out)
    _check_out(out)
    shutil.rmtree(out / "traces", ignore_errors=True)  # a rebuilt report's old traces
    episodes, cells, analyses = [], [], {}
    for source in map(str, sources):
        rows = with_headline(load_rows(source), headline_rate)
        episodes += [episode(r, source) for r in rows]
        with contextlib.suppress(ConfigError):  # a truncation sweep not judged by turn
            cells += passk(source, headline=headline_rate)
        analyses[source] = analyze(source)
    _write_traces(episodes, out, progress)
    plots = plot_data(episodes, cells, analyses)
    table = headline(episodes)
    report = {"title": title or "dealroom report", "sources": list(map(str, sources)),
              "headline": table, "headline_rate": headline_rate,
              "plots": plots, "episodes": episodes, "passk": cells,
              "analyses": analyses}
    write_json_atomic(out / REPORT_JSON, json_safe(report))
    body = _body(report)
    (out / "index.html").write_text(page(report["title"], "report", body=body),
                                    encoding="utf-8")
    return out / "index.html"


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out} is a file: give --out a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / REPORT_JSON).is_file():
        raise ConfigError(f"{out} holds other files: give --out a new folder (or a report's)")


def _write_traces(episodes: list[dict[str, Any]], out: Path,
                  progress: Callable[[int, int], None] | None) -> None:
    """Each episode with a run folder gets ``trace`` (its viewer, relative to ``out``)."""
    total = len(episodes)
    for n, e in enumerate(episodes):
        e["trace"] = None
        if e["status"] != "failed" and (Path(e["run"]) / "config.json").is_file():
            room = _room_key(Path(e["run"]))
            trace = Path("traces") / f"e{n:04d}"
            write_trace(Path(e["run"]), out / trace, docs_dir=out / "rooms" / room,
                        title=f"{e['room']}: {policy_name(e)} T={e['max_turns']} "
                              f"seed={e['seed']}")
            e["trace"] = f"{trace.as_posix()}/index.html"
        if progress:
            progress(n + 1, total)


def _room_key(run: Path) -> str:
    """A folder name for the run's room: its name and a hash of its path."""
    room = str(RunFolder(run).config.get("room", ""))
    digest = hashlib.sha1(room.encode()).hexdigest()[:8]
    return f"{Path(room).name or 'room'}-{digest}"


# -- the page ------------------------------------------------------------------------------------


def _body(report: dict[str, Any]) -> str:
    e = html.escape
    sources = ", ".join(e(s) for s in report["sources"])
    simulated = any(row["simulated"] for row in report["headline"])
    note = ('<p class="note">Policies marked * use a simulated sub-agent (the oracle): their '
            "figures test the harness, not a model.</p>") if simulated else ""
    return (f"<header><h1>{e(report['title'])}</h1><div class=facts><span><b>sources</b> "
            f"{sources}</span><span><b>episodes</b> {len(report['episodes'])}</span></div>"
            f"</header><main><h2>Policies</h2>{_table(report['headline'])}{note}"
            f"{_rate_note(report.get('headline_rate', 'total'))}"
            f"<h2>Plots</h2>{_plots(report['plots'])}"
            f"<h2>Episodes per room</h2>{_rooms(report['episodes'])}</main>")


def _rate_note(rate: str) -> str:
    which = ("over positive criteria only (--headline positive)" if rate == "positive" else
             "over all criteria; negative criteria pass an empty memo, so the positive "
             "criteria's rate stands beside it")
    return f'<p class="note headline-rate">Pass rates are {which}.</p>'


def _num(value: Any, digits: int | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:,.{digits}f}" if isinstance(value, int | float) else html.escape(str(value))


def _table(rows: list[dict[str, Any]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h, _, _ in COLUMNS)
    body = []
    for row in rows:
        cells = []
        for _, key, digits in COLUMNS:
            value = row[key]
            if key == "policy":
                text = html.escape(value) + (" *" if row["simulated"] else "")
                cells.append(f"<td>{text}</td>")
                continue
            text = _num(value, digits)
            if key == "pass_rate":
                text += f" [{_num(row['ci_low'], 3)}, {_num(row['ci_high'], 3)}]"
            sort = "" if value is None or (isinstance(value, float) and math.isnan(value)) \
                else f' data-v="{value}"'
            cells.append(f'<td class="num"{sort}>{text}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<table class="sortable headline"><thead><tr>{head}</tr></thead><tbody>'
            f"{''.join(body)}</tbody></table>")


def _plots(plots: dict[str, dict[str, Any]]) -> str:
    drawn, missing = [], []
    for plot_id, (key, caption, draw) in PLOTS.items():
        data = plots[key]
        if "note" in data:
            missing.append(f"<li><b>{html.escape(caption)}</b>: {html.escape(data['note'])}</li>")
            continue
        drawn.append(f'<figure class="plot" id="plot-{plot_id}">{draw(data)}<figcaption>'
                     f"{html.escape(caption)} — {data['n']} runs</figcaption></figure>")
    notes = f'<ul class="missing">{"".join(missing)}</ul>' if missing else ""
    return "".join(drawn) + notes


def _rooms(episodes: list[dict[str, Any]]) -> str:
    """Episodes per room: generated rooms first, then rooms of real documents, apart."""
    generated = [e for e in episodes if not e.get("real")]
    real = [e for e in episodes if e.get("real")]
    if not real:
        return _room_tables(generated)
    head = ('<h3 class="kind">Real-document rooms (ingested, LAB, CUAD: labels by people, not '
            "planted by the generator)</h3>")
    if not generated:
        return head + _room_tables(real, "real documents")
    return ('<h3 class="kind">Generated rooms</h3>' + _room_tables(generated) + head
            + _room_tables(real, "real documents"))


def _room_tables(episodes: list[dict[str, Any]], kind: str = "") -> str:
    rooms: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for ep in episodes:
        rooms[ep["room"]].append(ep)
    out = []
    mark = f" · {kind}" if kind else ""
    for room, members in sorted(rooms.items()):
        rows = []
        for ep in sorted(members, key=lambda x: (policy_name(x), x["max_turns"], x["seed"])):
            link = (f'<a class="trace" href="{html.escape(ep["trace"])}">trace</a>'
                    if ep["trace"] else "")
            rows.append(f"<tr><td>{html.escape(policy_name(ep))}</td>"
                        f'<td class="num">{ep["max_turns"]}</td><td class="num">{ep["seed"]}</td>'
                        f"<td>{html.escape(ep['status'])}</td>"
                        f'<td class="num">{_num(ep["pass_rate"], 3)}</td>'
                        f'<td class="num">{_num(ep["coverage"], 3)}</td>'
                        f'<td class="num">{ep["turns"]}</td><td>{link}</td></tr>')
        out.append(f'<details class="room{" real" if kind else ""}" open><summary>'
                   f"{html.escape(room)}{mark} · {len(members)} episodes</summary>"
                   "<table class=sortable><thead><tr>"
                   "<th>policy</th><th>T</th><th>seed</th><th>status</th><th>pass rate</th>"
                   "<th>coverage</th><th>turns</th><th>trace</th></tr></thead><tbody>"
                   f"{''.join(rows)}</tbody></table></details>")
    return "".join(out)
