"""One row per run (pass rate, coverage, cost, tokens, root share, sub-calls, turns) and totals.

Rows are read from each run folder: ``scores.json`` for the judged figures and
``metrics.json`` for the rest (computed with :func:`dealroom.measure.metrics_from_run` when a
run has none yet). Nothing is estimated: a figure a run does not have is None.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from dealroom._util.files import json_safe
from dealroom.errors import DealroomError
from dealroom.measure import correlation, metrics_from_run, ratio
from dealroom.room import load_manifest
from dealroom.runs import Metrics, RunFolder


def summarize_runs(run_dirs: list[Path]) -> dict[str, Any]:
    """``{"runs": [row, ...], "totals": {...}}`` for the given run folders (JSON-safe); expand
    folders of runs and sweeps first with :func:`dealroom.runs.find_runs`."""
    rows = [run_row(Path(r)) for r in run_dirs]
    return json_safe({"runs": rows, "totals": totals(rows)})


def run_row(run_dir: Path) -> dict[str, Any]:
    """The summary row of one run folder."""
    folder = RunFolder.open(run_dir)
    metrics = folder.metrics() or _metrics(run_dir)
    scores = folder.scores() or {}
    usage = metrics.get("usage", {})
    total = usage.get("total", {})
    share = usage.get("root_share", {})
    behaviour = metrics.get("behaviour", {})
    coverage = metrics.get("coverage") or {}
    config = folder.config
    return {
        "run": run_dir.name,
        "path": str(run_dir),
        "room": metrics.get("room") or str(config.get("room", "")),
        "policy": " / ".join(str(p) for p in (config.get("root"), _subs_label(config)) if p),
        "harness": metrics.get("harness", ""),
        "root_model": metrics.get("root_model", ""),
        "sub_model": metrics.get("sub_model", folder.config.get("sub", "")),
        "simulated": bool(metrics.get("simulators", folder.config.get("simulators"))),
        "status": metrics.get("status", ""),
        "headline": scores.get("headline") if scores else None,
        "headline_kind": scores.get("headline_kind") if scores else None,
        "pass_rate": scores.get("pass_rate") if scores else None,
        "pass_rate_positive": scores.get("pass_rate_positive") if scores else None,
        **_evidence(scores),
        "n_criteria": scores.get("n_criteria"),
        "n_passed": scores.get("n_passed"),
        "n_errors": scores.get("n_errors"),
        "judge": (scores.get("judge") or {}).get("name"),
        "coverage": coverage.get("coverage"),
        "cost_usd": total.get("cost_usd", 0.0),
        "judge_cost_usd": (scores.get("usage") or {}).get("cost_usd", 0.0),
        "judge_input_tokens": (scores.get("usage") or {}).get("input_tokens", 0),
        "judge_output_tokens": (scores.get("usage") or {}).get("output_tokens", 0),
        "input_tokens": total.get("input_tokens", 0),
        "cached_input_tokens": total.get("cached_input_tokens", 0),
        "output_tokens": total.get("output_tokens", 0),
        "root_input_tokens": usage.get("by_role", {}).get("root", {}).get("input_tokens", 0),
        "root_output_tokens": usage.get("by_role", {}).get("root", {}).get("output_tokens", 0),
        "root_share_input": share.get("input"),
        "root_share_output": share.get("output"),
        "sub_calls": behaviour.get("sub_calls", 0),
        "turns": behaviour.get("turns", 0),
        "waves": behaviour.get("waves", 0),
        "unpriced_calls": usage.get("unpriced_calls", 0),
        "usage_estimated_calls": usage.get("usage_estimated_calls", 0),
        "room_tokens": coverage.get("tokens_total") or _room_tokens(metrics.get("room")),
        "wall_s": metrics.get("wall_s", 0.0),
        "endpoints": endpoints(config),
        "split": where_it_went(usage.get("split") or {}),
        "cost_by_sub": {name: u.get("cost_usd", 0.0)
                        for name, u in (usage.get("by_sub") or {}).items()},
    }


def _evidence(scores: Mapping[str, Any]) -> dict[str, float | None]:
    """``evidence_f1``, ``evidence_precision`` and ``evidence_recall`` of ``scores.json``'s
    ``evidence`` (None where a run has none)."""
    evidence = scores.get("evidence") or {}
    return {f"evidence_{k}": evidence.get(k) for k in ("f1", "precision", "recall")}


def _subs_label(config: Mapping[str, Any]) -> str | None:
    """The sub-agent part of a run's policy: its spec, or ``fast=A, strong=B``."""
    named = config.get("subs")
    if named:
        return ", ".join(f"{name}={spec}" for name, spec in named.items())
    return config.get("sub")


def where_it_went(split: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """``metrics.json`` ``usage.split`` as part → ``{tokens, cost_usd, share}`` (share of the
    run's tokens), in the order root, each sub, children."""
    order = sorted(split, key=lambda k: (k != "root", k == "children", k))
    total = sum(int(split[k].get("input_tokens", 0)) + int(split[k].get("output_tokens", 0))
                for k in order)
    out = {}
    for key in order:
        tokens = int(split[key].get("input_tokens", 0)) + int(split[key].get("output_tokens", 0))
        out[key] = {"tokens": tokens, "cost_usd": float(split[key].get("cost_usd", 0.0)),
                    "share": ratio(tokens, total)}
    return out


def endpoints(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Role → ``{name, model, base_url, served}`` of each model ``config.json`` records
    (``served``: the id the server gave; older runs record the name only)."""
    out = {}
    for role, record in (config.get("models") or {}).items():
        if isinstance(record, dict) and "name" in record:
            server = record.get("server") or {}
            out[role] = {"name": record["name"], "model": record.get("model"),
                         "base_url": record.get("base_url"), "served": server.get("id")}
    return out


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Sums over runs, means of the per-run rates, and the delegation/room-size correlation."""
    # a run's trajectory holds agent calls only (the judge's are in scores.json)
    agents_in = sum(r["input_tokens"] for r in rows)
    agents_out = sum(r["output_tokens"] for r in rows)
    sized = [r for r in rows if r["room_tokens"]]
    return {
        "runs": len(rows),
        "scored_runs": sum(r["pass_rate"] is not None for r in rows),
        "headline_mean": _mean(r["headline"] for r in rows),
        "headline_positive_runs": sum(r["headline_kind"] == "positive" for r in rows),
        "pass_rate_mean": _mean(r["pass_rate"] for r in rows),
        "pass_rate_positive_mean": _mean(r["pass_rate_positive"] for r in rows),
        "evidence_f1_mean": _mean(r["evidence_f1"] for r in rows),
        "evidence_precision_mean": _mean(r["evidence_precision"] for r in rows),
        "evidence_recall_mean": _mean(r["evidence_recall"] for r in rows),
        "coverage_mean": _mean(r["coverage"] for r in rows),
        "cost_usd": sum(r["cost_usd"] for r in rows),
        "judge_cost_usd": sum(r["judge_cost_usd"] for r in rows),
        "judge_input_tokens": sum(r["judge_input_tokens"] for r in rows),
        "judge_output_tokens": sum(r["judge_output_tokens"] for r in rows),
        "input_tokens": sum(r["input_tokens"] for r in rows),
        "cached_input_tokens": sum(r["cached_input_tokens"] for r in rows),
        "output_tokens": sum(r["output_tokens"] for r in rows),
        "root_share_input": ratio(sum(r["root_input_tokens"] for r in rows), agents_in),
        "root_share_output": ratio(sum(r["root_output_tokens"] for r in rows), agents_out),
        "sub_calls": sum(r["sub_calls"] for r in rows),
        "turns": sum(r["turns"] for r in rows),
        "unpriced_calls": sum(r["unpriced_calls"] for r in rows),
        "usage_estimated_calls": sum(r.get("usage_estimated_calls", 0) for r in rows),
        "corr_sub_calls_room_tokens": correlation(
            [r["sub_calls"] for r in sized], [r["room_tokens"] for r in sized]
        ),
    }


def _metrics(run_dir: Path) -> Metrics:
    """Metrics of a run that wrote no ``metrics.json``: with coverage when its room is there."""
    try:
        return metrics_from_run(run_dir)
    except DealroomError:
        return metrics_from_run(run_dir, coverage=False)


def _room_tokens(room: str | None) -> int | None:
    try:
        return load_manifest(Path(room)).totals()["tokens"] if room else None
    except DealroomError:
        return None


def _mean(values: Iterable[float | None]) -> float:
    present = [v for v in values if v is not None and math.isfinite(v)]
    return sum(present) / len(present) if present else math.nan
