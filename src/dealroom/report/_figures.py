"""The numbers behind the report: one record per episode, the headline table per policy, and
each plot's data (or the one-line reason it has none). Plain data: ``report.json`` holds it as
computed here, and the plots are drawn from it."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from dealroom.errors import DealroomError
from dealroom.eval import Row, bootstrap_ci, pearson_log, run_row, spearman
from dealroom.measure import correlation, ratio


def episode(row: Row, source: str) -> dict[str, Any]:
    """One episode: the row's figures and its run's harness, wall time, tokens, judge errors."""
    extra: dict[str, Any] = {}
    if row.status != "failed" and Path(row.run, "config.json").is_file():
        try:
            extra = run_row(Path(row.run))
        except DealroomError:
            extra = {}
    return {
        "source": source, "run": row.run, "room": row.room, "docs": row.docs, "real": row.real,
        "root": row.root, "sub": row.sub, "depth": row.depth, "max_turns": row.max_turns,
        "seed": row.seed, "status": row.status, "harness": extra.get("harness") or "rlm",
        "simulated": row.simulated, "pass_rate": row.pass_rate, "all_pass": row.all_pass,
        "pass_rate_positive": row.pass_rate_positive,
        "by_type": row.by_type, "by_turn": row.by_turn, "coverage": row.coverage,
        "cost_usd": row.cost_usd, "sub_calls": row.sub_calls, "turns": row.turns,
        "input_tokens": row.input_tokens, "output_tokens": row.output_tokens,
        "root_input_tokens": row.root_input_tokens, "root_output_tokens": row.root_output_tokens,
        "wall_s": extra.get("wall_s", math.nan), "judge_errors": extra.get("n_errors") or 0,
    }


def policy_name(e: dict[str, Any]) -> str:
    return f"{e['root']} / {e['sub'] or '–'} / {e['harness']} / d{e['depth']}"


def headline(episodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per policy (root x sub x harness x depth): the table at the top of the report."""
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for e in episodes:
        groups[(e["root"], e["sub"] or "", e["harness"], e["depth"])].append(e)
    out = []
    for (root, sub, harness, depth), members in sorted(groups.items(), key=lambda kv: str(kv[0])):
        judged = [e for e in members if _ok(e["pass_rate"])]
        per_room = _by_room(judged, "pass_rate")
        rate, low, high = bootstrap_ci(list(per_room.values()))
        cost = _by_room(members, "cost_usd")
        out.append({
            "policy": policy_name(members[0]), "root": root, "sub": sub or None,
            "harness": harness, "depth": depth, "episodes": len(members),
            "judged": len(judged), "rooms": len(per_room), "pass_rate": rate, "ci_low": low,
            "ci_high": high, "all_pass": _mean(float(bool(e["all_pass"])) for e in judged),
            "pass_rate_positive": _mean(e.get("pass_rate_positive", math.nan) for e in judged),
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


def plot_data(episodes: list[dict[str, Any]], passk: list[dict[str, Any]],
              analyses: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each plot's data (``n``: the runs behind it), or ``{"note": why there is none}``;
    ``analyses``: :func:`dealroom.eval.analyze` of each source."""
    judged = [e for e in episodes if _ok(e["pass_rate"])]
    return {
        "pass_coverage": _pass_coverage(judged),
        "pass_cost": _pass_cost(judged),
        "passk_curves": _passk(passk),
        "passk_diff": _passk_diff(passk),
        "delegation": _delegation(episodes),
        "root_share": _root_share(episodes),
        "by_type": _by_type(judged),
        "depth": _depth_pairs(judged),
        "grid": _grid_data(analyses),
        "by_turn": _by_turn(judged),
    }


def _points(members: list[dict[str, Any]], x: str) -> dict[str, list[list[float]]]:
    series: dict[str, list[list[float]]] = defaultdict(list)
    for e in members:
        series[policy_name(e)].append([e[x], e["pass_rate"]])
    return dict(sorted(series.items()))


def _pass_coverage(judged: list[dict[str, Any]]) -> dict[str, Any]:
    have = [e for e in judged if _ok(e["coverage"]) and e["coverage"] > 0]
    if not have:
        return {"note": "no judged episode has coverage above 0 (coverage is measured when "
                        "the run's room is found)"}
    xs, ys = [e["coverage"] for e in have], [e["pass_rate"] for e in have]
    return {"n": len(have), "zero_coverage": sum(_ok(e["coverage"]) and e["coverage"] == 0
                                                 for e in judged),
            "spearman": spearman(xs, ys), "pearson_log": pearson_log(xs, ys),
            "series": _points(have, "coverage")}


def _pass_cost(judged: list[dict[str, Any]]) -> dict[str, Any]:
    have = [e for e in judged if _ok(e["cost_usd"])]
    if not any(e["cost_usd"] > 0 for e in have):
        return {"note": "every episode cost nothing (offline or unpriced models): no cost axis"}
    xs, ys = [e["cost_usd"] for e in have], [e["pass_rate"] for e in have]
    return {"n": len(have), "spearman": spearman(xs, ys), "pearson": correlation(xs, ys),
            "series": _points(have, "cost_usd")}


def _passk(passk: list[dict[str, Any]]) -> dict[str, Any]:
    if not passk:
        return {"note": "no Pass@(K,T): the sources are no sweeps with judged samples"}
    policies: dict[str, dict[int, list[list[float]]]] = defaultdict(lambda: defaultdict(list))
    for cell in passk:
        name = f"{cell['root']} / {cell['sub'] or '–'} / d{cell['depth']}"
        if cell["pass_at_k"] is not None:
            policies[name][cell["max_turns"]].append([cell["k"], cell["pass_at_k"]])
    return {"n": sum(c["rooms"] for c in passk if c["k"] == 1),
            "setting": passk[0]["setting"], "tau": passk[0]["tau"],
            "policies": {p: {str(t): v for t, v in sorted(ts.items())}
                         for p, ts in sorted(policies.items())}}


def _passk_diff(passk: list[dict[str, Any]]) -> dict[str, Any]:
    curves = _passk(passk)
    names = list(curves.get("policies", {}))
    if len(names) < 2:
        return {"note": "the difference of Pass@(K,T) needs two policies"}
    a, b = (curves["policies"][n] for n in names[:2])
    cells = {(t, k): va - dict(map(tuple, b[t])).get(k, math.nan)
             for t in a if t in b for k, va in a[t]}
    if not cells:
        return {"note": f"{names[0]} and {names[1]} share no (K, T) cell"}
    ts = sorted({t for t, _ in cells}, key=int)
    ks = sorted({k for _, k in cells})
    return {"n": curves["n"], "a": names[0], "b": names[1], "turns": ts, "k": ks,
            "diff": [[cells.get((t, k), math.nan) for k in ks] for t in ts]}


def _delegation(episodes: list[dict[str, Any]]) -> dict[str, Any]:
    done = [e for e in episodes if e["status"] != "failed" and e["docs"]]
    if len({e["docs"] for e in done}) < 2:
        return {"note": "sub-calls against room size needs rooms of at least two sizes"}
    series: dict[str, list[list[float]]] = defaultdict(list)
    for e in done:
        series[policy_name(e)].append([e["docs"], e["sub_calls"]])
    return {"n": len(done), "pearson": correlation([e["sub_calls"] for e in done],
                                                   [e["docs"] for e in done]),
            "series": dict(sorted(series.items()))}


def _root_share(episodes: list[dict[str, Any]]) -> dict[str, Any]:
    shares = {}
    for row in headline(episodes):
        members = [e for e in episodes if policy_name(e) == row["policy"]]
        total_in = sum(e["input_tokens"] for e in members)
        total_out = sum(e["output_tokens"] for e in members)
        if total_in or total_out:
            shares[row["policy"]] = [
                ratio(sum(e["root_input_tokens"] for e in members), total_in),
                ratio(sum(e["root_output_tokens"] for e in members), total_out)]
    if not shares:
        return {"note": "no episode recorded token usage"}
    return {"n": len(episodes), "shares": shares}


def _by_type(judged: list[dict[str, Any]]) -> dict[str, Any]:
    have = [e for e in judged if e["by_type"]]
    if not have:
        return {"note": "no scores hold pass rates per criterion type"}
    types = sorted({t for e in have for t in e["by_type"]})
    policies: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in have:
        policies[policy_name(e)].append(e)
    return {"n": len(have), "types": types,
            "rates": {p: [_mean(e["by_type"].get(t, math.nan) for e in members) for t in types]
                      for p, members in sorted(policies.items())}}


def _depth_pairs(judged: list[dict[str, Any]]) -> dict[str, Any]:
    cells: dict[tuple, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for e in judged:
        cells[(e["root"], e["sub"], e["max_turns"], e["room"])][e["depth"]].append(e["pass_rate"])
    pairs = [[_mean(d[1]), _mean(d[2]), f"{key[3]} ({key[0]} / {key[1]}, T={key[2]})"]
             for key, d in sorted(cells.items(), key=lambda kv: str(kv[0])) if 1 in d and 2 in d]
    if not pairs:
        return {"note": "depth 1 against depth 2 needs the same room and policy at both depths"}
    return {"n": sum(len(d[1]) + len(d[2]) for d in cells.values() if 1 in d and 2 in d),
            "pairs": pairs}


def _grid_data(analyses: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The root x sub grid of the first source that has one (a grid is one sweep's)."""
    for source, analysis in analyses.items():
        if analysis.get("grid"):
            return {"n": analysis["episodes"], "source": source, **analysis["grid"]}
    return {"note": "the root x sub grid needs two roots or two sub-agents in one source"}


def _by_turn(judged: list[dict[str, Any]]) -> dict[str, Any]:
    have = [e for e in judged if e["by_turn"]]
    if not have:
        return {"note": "no episode was judged by turn (dealroom judge RUN --by-turn)"}
    series: dict[str, list[list[float]]] = {}
    policies: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in have:
        policies[policy_name(e)].append(e)
    for name, members in sorted(policies.items()):
        longest = max(len(e["by_turn"]) for e in members)
        series[name] = [[t + 1, _mean(e["by_turn"][min(t, len(e["by_turn"]) - 1)]
                                      for e in members)] for t in range(longest)]
    return {"n": len(have), "series": series}


def _by_room(members: list[dict[str, Any]], key: str) -> dict[str, float]:
    rooms: dict[str, list[float]] = defaultdict(list)
    for e in members:
        rooms[e["room"]].append(e[key])
    return {room: _mean(values) for room, values in rooms.items()}


def _ok(value: Any) -> bool:
    return isinstance(value, int | float) and not math.isnan(value)


def _mean(values: Any) -> float:
    present = [v for v in values if _ok(v)]
    return sum(present) / len(present) if present else math.nan
