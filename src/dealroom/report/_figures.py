"""The numbers behind the report: one record per episode, the headline table per policy, source,
setting and turn budget T, and each plot's data (or the one-line reason it has none). Plain
data: ``report.json`` holds it as computed here, and the plots are drawn from it.

Nothing is pooled across sources or settings: a series is one (policy, source, setting), and
the tables and plots split it further by T. Recovery continuations are never counted here
(:mod:`dealroom.report._sources`)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dealroom.errors import DealroomError
from dealroom.eval import Row, as_of, bootstrap_ci, coverage_pass, run_row
from dealroom.measure import correlation, ratio
from dealroom.report._sources import Source, behind, run_setting
from dealroom.report._where import where_data
from dealroom.runs import RunFolder

NO_TAU = "not used (criteria pass rates)"
"""The ``tau`` of a plot of pass rates (no success threshold)."""


def episode(row: Row, source: Source) -> dict[str, Any]:
    """One episode: the row's figures, its source, setting and kind, and its run's harness,
    wall time, tokens and judge errors."""
    extra: dict[str, Any] = {}
    config: dict[str, Any] = {}
    if Path(row.run, "config.json").is_file():
        config = dict(RunFolder(Path(row.run)).config)
        if row.status != "failed":
            try:
                extra = run_row(Path(row.run))
            except DealroomError:
                extra = {}
    forked = bool(config.get("forked_from"))
    return {
        "source": source.label, "setting": source.setting or run_setting(config),
        "kind": "continuation" if forked or source.recovery is not None else "episode",
        "run": row.run, "room": row.room, "docs": row.docs, "real": row.real,
        "root": row.root, "sub": row.sub, "depth": row.depth, "max_turns": row.max_turns,
        "seed": row.seed, "status": row.status, "harness": extra.get("harness") or "rlm",
        "simulated": row.simulated, "pass_rate": row.pass_rate, "all_pass": row.all_pass,
        "pass_rate_positive": row.pass_rate_positive, "pass_rate_total": row.pass_rate_total,
        "evidence_f1": row.evidence_f1,
        "by_type": row.by_type, "by_turn": row.by_turn, "coverage": row.coverage,
        "cost_usd": row.cost_usd, "sub_calls": row.sub_calls, "turns": row.turns,
        "input_tokens": row.input_tokens, "output_tokens": row.output_tokens,
        "root_input_tokens": row.root_input_tokens, "root_output_tokens": row.root_output_tokens,
        "wall_s": extra.get("wall_s", math.nan), "judge_errors": extra.get("n_errors") or 0,
        "split": extra.get("split") or {},
    }


def policy_name(e: dict[str, Any]) -> str:
    return f"{e['root']} / {e['sub'] or '–'} / {e['harness']} / d{e['depth']}"


def series_name(e: dict[str, Any], turns: bool = False) -> str:
    """One series: (policy, source, setting), and T with ``turns``."""
    name = f"{policy_name(e)} · {e['source']} · {e['setting']}"
    return f"{name} · T={e['max_turns']}" if turns else name


def _key(e: dict[str, Any]) -> tuple:
    return (e["source"], e["setting"], e["root"], e["sub"] or "", e["harness"], e["depth"],
            e["max_turns"])


def headline(episodes: list[dict[str, Any]],
             passk: Iterable[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """Per (source, setting, policy, T) of the sampled episodes: the table at the top. A
    truncation sweep's runs ran to T_max; its smaller Ts (those of its Pass@(K,T) cells) get
    rows of their own: the pass rate of the memo as of turn T, the run's other figures
    (cost, tokens, ...) left empty, as they belong to the whole run."""
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for e in episodes:
        if e["kind"] == "episode":
            groups[_key(e)].append(e)
    budgets: dict[str, set[int]] = defaultdict(set)
    for cell in passk:
        if cell.get("setting") == "truncation":
            budgets[cell["source"]].add(int(cell["max_turns"]))
    for key, members in list(groups.items()):
        if key[1] == "truncation":
            for t in budgets[key[0]] - {key[-1]}:
                if t < key[-1]:
                    groups[(*key[:-1], t)] = [_truncated(e, t) for e in members]
    out = []
    for key, members in sorted(groups.items(), key=lambda kv: (*map(str, kv[0][:-1]),
                                                               kv[0][-1])):
        source, setting, root, sub, harness, depth, turns = key
        judged = [e for e in members if _ok(e["pass_rate"])]
        per_room = _by_room(judged, "pass_rate")
        rate, low, high = _ci(per_room)
        cost = _by_room(members, "cost_usd")
        out.append({
            "policy": policy_name(members[0]), "series": series_name(members[0]),
            "source": source, "setting": setting, "max_turns": turns, "root": root,
            "sub": sub or None, "harness": harness, "depth": depth, "episodes": len(members),
            "judged": len(judged), "rooms": len(per_room), "pass_rate": rate, "ci_low": low,
            "ci_high": high, "all_pass": _mean(
                math.nan if e["all_pass"] is None else float(bool(e["all_pass"]))
                for e in judged),
            "pass_rate_total": _mean(e.get("pass_rate_total", math.nan) for e in judged),
            "pass_rate_positive": _mean(e.get("pass_rate_positive", math.nan) for e in judged),
            "evidence_f1": _mean(e.get("evidence_f1", math.nan) for e in judged),
            "coverage": _mean(e["coverage"] for e in members),
            "cost_per_room": _mean(cost.values()),
            "tokens": _mean(e["input_tokens"] + e["output_tokens"] for e in members),
            "root_share": ratio(sum(e["root_input_tokens"] + e["root_output_tokens"]
                                    for e in members),
                                sum(e["input_tokens"] + e["output_tokens"] for e in members)),
            "sub_calls": _mean(e["sub_calls"] for e in members),
            "turns": _mean(e["turns"] for e in members),
            "wall_s": _mean(e["wall_s"] for e in members),
            "judge_errors": sum(e["judge_errors"] for e in members),
            "failed": sum(e["status"] == "failed" for e in members),
            "simulated": any(e["simulated"] for e in members)})
    return out


def _truncated(e: dict[str, Any], turns: int) -> dict[str, Any]:
    """A truncation episode as of turn ``turns``: its memo's pass rate then; the figures of
    the whole run (cost, tokens, coverage, ...) unknown at that turn."""
    nan = math.nan
    return {**e, "max_turns": turns, "pass_rate": as_of(e["by_turn"], turns),
            "pass_rate_positive": nan, "all_pass": None, "evidence_f1": nan, "coverage": nan,
            "cost_usd": nan,
            "input_tokens": nan, "output_tokens": nan, "root_input_tokens": nan,
            "root_output_tokens": nan, "sub_calls": nan, "turns": nan, "wall_s": nan,
            "judge_errors": 0}


def plot_data(episodes: list[dict[str, Any]], passk: list[dict[str, Any]],
              analyses: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each plot's data (``n``: the runs behind it; ``behind``: per source, setting and kind;
    ``setting``; ``tau``: Pass@k's, None for all-pass, :data:`NO_TAU` for pass rates), or
    ``{"note": why there is none}``. ``passk``: cells with their ``source``; ``analyses``:
    source label → :func:`dealroom.eval.analyze`. Only sampled episodes count."""
    sampled = [e for e in episodes if e["kind"] == "episode"]
    judged = [e for e in sampled if _ok(e["pass_rate"])]
    plots = {
        "pass_coverage": _pass_coverage(judged, analyses),
        "pass_cost": _pass_cost(judged, analyses),
        "passk_curves": _passk(passk),
        "passk_diff": _passk_diff(passk),
        "delegation": _delegation(sampled),
        "root_share": _root_share(sampled),
        "by_type": _by_type(judged),
        "depth": _depth_pairs(judged),
        "grid": _grid_data(analyses, sampled),
        "by_turn": _by_turn(judged),
        "where": where_data(sampled, policy_name, _described),
    }
    for data in plots.values():
        if "note" not in data:
            data.setdefault("tau", NO_TAU)
    return plots


def _described(members: list[dict[str, Any]], **data: Any) -> dict[str, Any]:
    settings = sorted({e["setting"] for e in members})
    return {"n": len(members), "behind": behind(members), "setting": ", ".join(settings),
            **data}


def _points(members: list[dict[str, Any]], x: str) -> dict[str, list[list[Any]]]:
    """Per (series, T): ``[x, pass rate, trace]`` of each episode."""
    series: dict[str, list[list[Any]]] = defaultdict(list)
    for e in sorted(members, key=_key):
        series[series_name(e, turns=True)].append([e[x], e["pass_rate"], e.get("trace")])
    return dict(series)


def _pass_coverage(judged: list[dict[str, Any]],
                   analyses: dict[str, dict[str, Any]]) -> dict[str, Any]:
    have = [e for e in judged if _ok(e["coverage"]) and e["coverage"] > 0]
    if not have:
        return {"note": "no judged episode has coverage above 0 (coverage is measured when "
                        "the run's room is found)"}
    stats = {}
    for source in dict.fromkeys(e["source"] for e in judged):
        mine = [e for e in judged if e["source"] == source]
        stats[source] = coverage_pass([e["coverage"] for e in mine],
                                      [e["pass_rate"] for e in mine])
    return _described(have, zero_coverage=sum(_ok(e["coverage"]) and e["coverage"] == 0
                                              for e in judged),
                      stats=stats, series=_points(have, "coverage"))


def _pass_cost(judged: list[dict[str, Any]],
               analyses: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The points, and per source ``eval analyze``'s cost against pass rate."""
    have = [e for e in judged if _ok(e["cost_usd"])]
    if not any(e["cost_usd"] > 0 for e in have):
        return {"note": "every episode cost nothing (offline or unpriced models): no cost axis"}
    stats = {s: analyses[s]["cost_pass"] for s in dict.fromkeys(e["source"] for e in have)
             if s in analyses}
    return _described(have, stats=stats, series=_points(have, "cost_usd"))


def _passk_series(cell: dict[str, Any]) -> str:
    return (f"{cell['root']} / {cell['sub'] or '–'} / d{cell['depth']} · {cell['source']} · "
            f"{cell['setting']}")


def _passk(passk: list[dict[str, Any]]) -> dict[str, Any]:
    """Per (policy, source, setting): per T the points ``[k, pass@k, low, high]``."""
    if not passk:
        return {"note": "no Pass@(K,T): the sources are no sweeps with judged samples"}
    policies: dict[str, dict[int, list[list[float | None]]]] = defaultdict(
        lambda: defaultdict(list))
    for cell in passk:
        if cell["pass_at_k"] is not None:
            policies[_passk_series(cell)][cell["max_turns"]].append(
                [cell["k"], cell["pass_at_k"], cell.get("ci_low"), cell.get("ci_high")])
    firsts = [c for c in passk if c["k"] == 1]
    taus = {c["tau"] for c in passk}
    runs = _passk_runs(firsts)
    return {"n": sum(runs.values()),
            "behind": [{"source": s, "setting": t, "kind": "episode",
                        "runs": sum(n for (s2, t2, _), n in runs.items() if (s2, t2) == (s, t))}
                       for s, t in dict.fromkeys((s, t) for s, t, _ in runs)],
            "setting": ", ".join(sorted({c["setting"] for c in passk})),
            "tau": taus.pop() if len(taus) == 1 else None,
            "samples": {_passk_series(c): c["samples"] for c in firsts},
            "policies": {p: {str(t): v for t, v in sorted(ts.items())}
                         for p, ts in policies.items()}}


def _passk_runs(firsts: list[dict[str, Any]]) -> dict[tuple, int]:
    """(source, setting, policy) → the runs behind its cells (rooms x samples): each T's own
    runs when the budget was visible, the same runs at the largest T for truncation."""
    runs: dict[tuple, list[int]] = defaultdict(list)
    for c in firsts:
        runs[(c["source"], c["setting"], _passk_series(c))].append(c["rooms"] * c["samples"])
    return {key: max(n) if key[1] == "truncation" else sum(n) for key, n in runs.items()}


def _passk_diff(passk: list[dict[str, Any]]) -> dict[str, Any]:
    """The first two policies of one source and setting."""
    curves = _passk(passk)
    names = list(curves.get("policies", {}))
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]
             if a.split(" · ", 1)[1] == b.split(" · ", 1)[1]]
    if not pairs:
        return {"note": "the difference of Pass@(K,T) needs two policies in one source and "
                        "setting"}
    a_name, b_name = pairs[0]
    a, b = curves["policies"][a_name], curves["policies"][b_name]
    cells = {(t, p[0]): p[1] - {q[0]: q[1] for q in b[t]}.get(p[0], math.nan)
             for t in a if t in b for p in a[t]}
    if not cells:
        return {"note": f"{a_name} and {b_name} share no (K, T) cell"}
    ts = sorted({t for t, _ in cells}, key=int)
    ks = sorted({k for _, k in cells})
    label = a_name.split(" · ", 1)[1]
    mine = [r for r in curves["behind"] if f"{r['source']} · {r['setting']}" == label]
    return {"n": sum(r["runs"] for r in mine), "behind": mine, "setting": mine[0]["setting"],
            "tau": curves["tau"], "a": a_name, "b": b_name, "turns": ts, "k": ks,
            "diff": [[cells.get((t, k), math.nan) for k in ks] for t in ts]}


def _delegation(episodes: list[dict[str, Any]]) -> dict[str, Any]:
    done = [e for e in episodes if e["status"] != "failed" and e["docs"]]
    if len({e["docs"] for e in done}) < 2:
        return {"note": "sub-calls against room size needs rooms of at least two sizes"}
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in sorted(done, key=_key):
        groups[series_name(e, turns=True)].append(e)
    return _described(done, series={name: [[e["docs"], e["sub_calls"], e.get("trace")]
                                           for e in members]
                                    for name, members in groups.items()},
                      pearson={name: correlation([e["sub_calls"] for e in members],
                                                 [e["docs"] for e in members])
                               for name, members in groups.items()})


def _root_share(episodes: list[dict[str, Any]]) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in sorted(episodes, key=_key):
        groups[series_name(e, turns=True)].append(e)
    shares = {}
    for name, members in groups.items():
        total_in = sum(e["input_tokens"] for e in members)
        total_out = sum(e["output_tokens"] for e in members)
        if total_in or total_out:
            shares[name] = [ratio(sum(e["root_input_tokens"] for e in members), total_in),
                            ratio(sum(e["root_output_tokens"] for e in members), total_out)]
    if not shares:
        return {"note": "no episode recorded token usage"}
    return _described(episodes, shares=shares)


def _by_type(judged: list[dict[str, Any]]) -> dict[str, Any]:
    """Per T, per series, per type: ``[mean over rooms, low, high]``."""
    have = [e for e in judged if e["by_type"]]
    if not have:
        return {"note": "no scores hold pass rates per criterion type"}
    types = sorted({t for e in have for t in e["by_type"]})
    groups: dict[int, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for e in sorted(have, key=_key):
        groups[e["max_turns"]][series_name(e)].append(e)
    rates = {str(t): {name: [list(_ci(_by_room(members, "by_type", kind))) for kind in types]
                      for name, members in series.items()}
             for t, series in sorted(groups.items())}
    return _described(have, types=types, rates=rates)


def _depth_pairs(judged: list[dict[str, Any]]) -> dict[str, Any]:
    cells: dict[tuple, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for e in judged:
        cells[(e["source"], e["setting"], e["root"], e["sub"], e["max_turns"],
               e["room"])][e["depth"]].append(e["pass_rate"])
    pairs = [[_mean(d[1]), _mean(d[2]),
              f"{key[5]} ({key[2]} / {key[3]}, T={key[4]}, {key[0]}, {key[1]})"]
             for key, d in sorted(cells.items(), key=lambda kv: str(kv[0])) if 1 in d and 2 in d]
    if not pairs:
        return {"note": "depth 1 against depth 2 needs the same room and policy at both depths"}
    used = [e for e in judged if 1 in cells[(e["source"], e["setting"], e["root"], e["sub"],
                                              e["max_turns"], e["room"])]
            and 2 in cells[(e["source"], e["setting"], e["root"], e["sub"], e["max_turns"],
                            e["room"])]]
    return _described(used, pairs=pairs)


def _grid_data(analyses: dict[str, dict[str, Any]],
               episodes: list[dict[str, Any]]) -> dict[str, Any]:
    """The root x sub grid of the first source that has one (a grid is one sweep's)."""
    for source, analysis in analyses.items():
        if analysis.get("grid"):
            mine = [e for e in episodes if e["source"] == source and _ok(e["pass_rate"])
                    and e["max_turns"] == analysis["grid"]["max_turns"]
                    and e["depth"] == analysis["grid"]["depth"]]
            return {**_described(mine), "source": source, **analysis["grid"]}
    return {"note": "the root x sub grid needs two roots or two sub-agents in one source"}


def _by_turn(judged: list[dict[str, Any]]) -> dict[str, Any]:
    """Per (series, T): per turn ``[turn, mean over rooms, low, high]`` of the memo's pass
    rate as of that turn."""
    have = [e for e in judged if e["by_turn"]]
    if not have:
        return {"note": "no episode was judged by turn (dealroom judge RUN --by-turn)"}
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in sorted(have, key=_key):
        groups[series_name(e, turns=True)].append(e)
    series: dict[str, Any] = {}
    for name, members in groups.items():
        longest = max(len(e["by_turn"]) for e in members)
        series[name] = []
        for t in range(1, longest + 1):
            rooms: dict[str, list[float]] = defaultdict(list)
            for e in members:
                rooms[e["room"]].append(as_of(e["by_turn"], t))
            series[name].append([t, *_ci({r: _mean(v) for r, v in rooms.items()})])
    return _described(have, series=series)


def _by_room(members: list[dict[str, Any]], key: str, sub: str | None = None
             ) -> dict[str, float]:
    """Each room's mean of ``key`` (of ``key[sub]`` when ``sub`` is given)."""
    rooms: dict[str, list[float]] = defaultdict(list)
    for e in members:
        rooms[e["room"]].append(e[key] if sub is None else e[key].get(sub, math.nan))
    return {room: _mean(values) for room, values in rooms.items()}


def _ci(per_room: dict[str, float]) -> tuple[float, float, float]:
    """The mean over rooms and its 95% bootstrap interval over rooms (seeded; rooms in the
    order their episodes were read, as ``eval table`` takes them, so both give one interval)."""
    return bootstrap_ci(list(per_room.values()))


def _ok(value: object) -> bool:
    return isinstance(value, int | float) and not math.isnan(value)


def _mean(values: Iterable[float | None]) -> float:
    present = [v for v in values if v is not None and _ok(v)]
    return sum(present) / len(present) if present else math.nan
