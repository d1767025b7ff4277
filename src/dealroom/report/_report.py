"""``dealroom report RUNS_OR_SWEEPS... --out DIR``: the HTML report over sweeps and runs.

    DIR/
      index.html     the headline table per policy, source, setting and T, the plots (SVG,
                     inline), each recovery folder's own figures, the episodes per room, each
                     linking to its trace
      report.json    the same numbers: sources, headline, episodes, plots' data, analyses,
                     Pass@k, recoveries
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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dealroom._util.files import json_safe, make_dir, write_json_atomic
from dealroom.errors import ConfigError
from dealroom.eval import analyze, load_rows, passk, with_headline
from dealroom.report._figures import episode, headline, plot_data, policy_name
from dealroom.report._html import page
from dealroom.report._plots import PLOTS
from dealroom.report._sources import behind_text, describe, settings_of, tau_text
from dealroom.report._view import write_trace
from dealroom.runs import RunFolder

REPORT_JSON = "report.json"
COLUMNS = (("policy", "policy", None), ("source", "source", None), ("setting", "setting", None),
           ("T", "max_turns", 0), ("episodes", "episodes", 0),
           ("rooms", "rooms", 0), ("headline [95% CI]", "pass_rate", 3),
           ("total", "pass_rate_total", 3), ("positive criteria", "pass_rate_positive", 3),
           ("all-pass", "all_pass", 3), ("evidence F1", "evidence_f1", 3),
           ("coverage", "coverage", 3),
           ("cost / room USD", "cost_per_room", 4), ("tokens", "tokens", 0),
           ("root share", "root_share", 3), ("sub-calls", "sub_calls", 1),
           ("turns", "turns", 1), ("wall s", "wall_s", 1), ("judge errors", "judge_errors", 0))
"""The headline table: header, key, digits (None: text)."""


def build_report(sources: Sequence[str | Path], out: Path, *, title: str | None = None,
                 progress: Callable[[int, int], None] | None = None,
                 headline_rate: str = "headline") -> Path:
    """Write the report of ``sources`` (sweeps, folders of runs, run folders, recovery
    folders, each with an optional ``:KEY=VALUE`` selector) into ``out``; its ``index.html``.
    ``progress(done, total)`` is called as the episodes' traces are written.
    ``headline_rate``: ``headline`` (each episode's ``scores.json`` headline), ``total`` or
    ``positive``, the pass rate the tables, plots and Pass@k use (the total and the positive
    criteria's rate stand beside it)."""
    if not sources:
        raise ConfigError("give at least one sweep or run folder to report on")
    out = Path(out)
    _check_out(out)
    shutil.rmtree(out / "traces", ignore_errors=True)  # a rebuilt report's old traces
    described = describe(list(map(str, sources)))
    episodes, cells, analyses = [], [], {}
    for source in described:
        rows = with_headline(load_rows(source.spec), headline_rate)
        episodes += [episode(r, source) for r in rows]
        if source.recovery is not None:
            continue  # continuations are no samples: the recovery's own figures instead
        with contextlib.suppress(ConfigError):  # a truncation sweep not judged by turn
            cells += [{**c, "source": source.label}
                      for c in passk(source.spec, headline=headline_rate)]
        analyses[source.label] = analyze(source.spec)
    _write_traces(episodes, out, progress)
    plots = plot_data(episodes, cells, analyses)
    table = headline(episodes, cells)
    report: dict[str, Any] = {
              "title": title or "dealroom report", "sources": [s.spec for s in described],
              "source_info": [{"source": s.spec, "label": s.label, "setting": s.setting,
                               "kind": s.kind} for s in described],
              "headline": table, "headline_rate": headline_rate, "plots": plots,
              "episodes": episodes, "passk": cells,
              "analyses": analyses,
              "recoveries": {s.label: s.recovery for s in described if s.recovery is not None}}
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
    make_dir(out, "the report's folder")


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
    sources = "".join(
        f"<span><b>{e(s['label'])}</b> {e(s['source'])} · {e(s['setting'] or 'per run')} · "
        f"{e(s['kind'])}s</span>" for s in report["source_info"])
    sampled = [x for x in report["episodes"] if x["kind"] == "episode"]
    continued = [x for x in report["episodes"] if x["kind"] != "episode"]
    simulated = any(row["simulated"] for row in report["headline"])
    note = ('<p class="note">Policies marked * use a simulated sub-agent (the oracle): their '
            "figures test the harness, not a model.</p>") if simulated else ""
    recovery = (f'<section id="recovery"><h2>Recovery</h2>'
                f"{_recoveries(report['recoveries'], continued)}</section>"
                if report["recoveries"] or continued else "")
    rooms = f"<h2>Episodes per room</h2>{_rooms(sampled)}" if sampled else ""
    return (f"<header><h1>{e(report['title'])}</h1><div class=facts>{sources}<span><b>"
            f"episodes</b> {len(sampled)} sampled, {len(continued)} recovery continuations"
            f'</span></div></header><main><section id="policies"><h2>Policies</h2>'
            '<p class="note">One row per policy, source, setting and turn budget T; sampled '
            f"episodes only (recovery continuations are reported apart).</p>"
            f"<div class=scroll>{_table(report['headline'])}</div>{note}"
            f"{_rate_note(report.get('headline_rate', 'total'))}</section>"
            f"<h2>Plots</h2>{_plots(report['plots'])}{recovery}{rooms}</main>")


def _recoveries(recoveries: dict[str, Any], continued: list[dict[str, Any]]) -> str:
    """Each recovery folder's own figures (its report.json, tables as they come), then its
    continuations per room."""
    out = []
    for label, figures in recoveries.items():
        out.append(f"<h3>{html.escape(label)}</h3>")
        if "note" in figures:
            out.append(f'<p class="note">{html.escape(str(figures["note"]))}</p>')
        out.append("<div class=facts>" + "".join(
            f"<span><b>{html.escape(str(k))}</b> {_fact(v)}</span>"
            for k, v in figures.items() if k != "note" and _fact(v) is not None) + "</div>")
        for key, value in figures.items():
            if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
                out.append(f"<h4>{html.escape(key.replace('_', ' '))}</h4>"
                           f"<div class=scroll>{_generic(value)}</div>")
        mine = [x for x in continued if x["source"] == label]
        if mine:
            out.append(_room_tables(mine, "recovery continuations"))
    others = [x for x in continued if x["source"] not in recoveries]
    if others:
        out.append("<h3>Forked runs</h3>" + _room_tables(others, "forked runs"))
    return "".join(out)


def _fact(value: object) -> str | None:
    """A scalar (or a list of scalars) as text; None for tables and mappings."""
    if isinstance(value, list) and not any(isinstance(v, list | dict) for v in value):
        return html.escape(", ".join(map(str, value)) or "none")
    if isinstance(value, list | dict):
        return None
    return _num(value, 0 if isinstance(value, int) else 3)


def _generic(rows: list[dict[str, Any]]) -> str:
    """A sortable table of dicts, one column per key in order of appearance."""
    keys = list(dict.fromkeys(k for row in rows for k in row))
    head = "".join(f"<th>{html.escape(str(k))}</th>" for k in keys)
    body = []
    for row in rows:
        cells = []
        for k in keys:
            v = row.get(k)
            if isinstance(v, int | float) and not isinstance(v, bool):
                sort = "" if isinstance(v, float) and math.isnan(v) else f' data-v="{v}"'
                cells.append(f'<td class="num"{sort}>{_num(v, 0 if isinstance(v, int) else 3)}'
                             "</td>")
            elif isinstance(v, dict):  # e.g. Pass@k per k: "1: 0.500, 2: 0.750"
                cells.append("<td>" + ", ".join(
                    f"{html.escape(str(key))}: {_num(x, 3)}" for key, x in v.items()) + "</td>")
            else:
                text = v if isinstance(v, str) else ("–" if v is None else str(v))
                cells.append(f"<td>{html.escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}'
            "</tbody></table>")


def _rate_note(rate: str) -> str:
    which = {"positive": "over positive criteria only (--headline positive)",
             "total": "over all criteria (--headline total); negative criteria pass an empty "
                      "memo, so the positive criteria's rate stands beside it"}.get(
        rate, "each episode's headline: over positive criteria where its rubric has negative "
              "criteria (they pass an empty memo), else over all; the total stands beside it")
    return f'<p class="note headline-rate">Pass rates are {which}.</p>'


def _esc(value: object) -> str:
    """Any value of the sources as HTML text (numbers too: a tampered file may hold markup)."""
    return html.escape(str(value))


def _num(value: object, digits: int | None) -> str:
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
            if digits is None:  # text: the policy (marked when simulated), source, setting
                mark = " *" if key == "policy" and row["simulated"] else ""
                cells.append(f'<td class="{key}">{html.escape(str(value))}{mark}</td>')
                continue
            text = _num(value, digits)
            if key == "pass_rate":
                text += (f"<br><span class=ci>[{_num(row['ci_low'], 3)}, "
                         f"{_num(row['ci_high'], 3)}]</span>")
            sort = "" if value is None or (isinstance(value, float) and math.isnan(value)) \
                else f' data-v="{html.escape(str(value))}"'
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
                     f"{html.escape(caption)} — n = {_esc(data['n'])} runs, "
                     + ("" if isinstance(data["tau"], str) else
                        f"tau {html.escape(tau_text(data['tau']))}, ")
                     + "setting "
                     f"{html.escape(settings_of(data['behind']))}. Runs behind it: "
                     f"{html.escape(behind_text(data['behind']))}.</figcaption></figure>")
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
    forks = kind in ("recovery continuations", "forked runs")
    for room, members in sorted(rooms.items()):
        rows = []
        for ep in sorted(members, key=lambda x: (policy_name(x), x["source"], x["setting"],
                                                 x["max_turns"], x["seed"], x["run"])):
            link = (f'<a class="trace" href="{html.escape(ep["trace"])}">trace</a>'
                    if ep["trace"] else "")
            run = "/".join(Path(ep["run"]).parts[-3:])  # a continuation's prefix and sample
            rows.append(f"<tr><td>{html.escape(policy_name(ep))}</td>"
                        f"<td>{html.escape(ep['source'])}</td>"
                        f"<td>{html.escape(ep['setting'])}</td>"
                        f'<td class="num">{_esc(ep["max_turns"])}</td>'
                        f'<td class="num">{_esc(ep["seed"])}</td>'
                        f"<td>{html.escape(ep['status'])}</td>"
                        f'<td class="num">{_num(ep["pass_rate"], 3)}</td>'
                        f'<td class="num">{_num(ep["coverage"], 3)}</td>'
                        f'<td class="num">{_esc(ep["turns"])}</td><td>{link}</td>'
                        f"{f'<td>{html.escape(run)}</td>' if forks else ''}</tr>")
        css = " real" if kind == "real documents" else ""
        out.append(f'<details class="room{css}" open><summary>'
                   f"{html.escape(room)}{mark} · {len(members)} episodes</summary>"
                   "<div class=scroll><table class=sortable><thead><tr>"
                   "<th>policy</th><th>source</th><th>setting</th><th>T</th><th>seed</th>"
                   "<th>status</th><th>pass rate</th>"
                   f"<th>coverage</th><th>turns</th><th>trace</th>{'<th>run</th>' * forks}"
                   "</tr></thead><tbody>"
                   f"{''.join(rows)}</tbody></table></div></details>")
    return "".join(out)
