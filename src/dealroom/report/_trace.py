"""One run's trace as data for the viewer: timeline items, the run's summary, its memo history
and the documents it read.

Items are the trajectory's events, flattened and made compact (``k``: reply, cell, sub, wave,
child_start, child_end, memo, tool, budget, resumed, run_end; ``a``: the agent path; ``turn``),
in ``seq`` order. A ``budget`` item follows each cell: what the run had spent by then (turn of
T, tokens, cost, seconds). Sub-call items hold the prompt, the slices as references
(``{id, pages, chars}``), the free text, the answer, usage and latency. A reply item holds
``seen``: the messages the harness added to the model's prompt for that call (what it saw
beyond its own earlier replies; all of them after a compaction, ``replaced``).

The summary names a fork's source (``fork``: source run, turn, policy before and after) and
the root's failure points per turn (``failures``: no code, cell error, failed wave, low
budget, tool error; the kinds error-prefix evaluation pools).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealroom.errors import DealroomError
from dealroom.eval import failure_points
from dealroom.measure import metrics_from_run
from dealroom.runs import Metrics, RunFolder, ScoresRecord

if TYPE_CHECKING:
    from dealroom.room import DocumentRecord

CITE = re.compile(r"\bD\d{5}\b")
NEAR = 0.25
"""Share of the turn budget left that marks a turn ``low_budget`` (``eval prefixes``' default)."""
CUT = re.compile(r"\[\.\.\. [\d,]+ of [\d,]+ characters cut \.\.\.\]")
"""How the harness marks a cell's output cut to its limit."""


def trace_items(events: list[dict[str, Any]], max_turns: int | None) -> list[dict[str, Any]]:
    """The timeline items of ``events`` (see the module docstring)."""
    items: list[dict[str, Any]] = []
    spent = {"tokens": 0, "cost": 0.0}
    for e in events:
        item = _item(e, max_turns, spent)
        if item is not None:
            items.append(item)
        if e.get("type") == "cell":
            items.append({"k": "budget", "a": e.get("agent", "root"), "turn": e.get("turn"),
                          "of": max_turns if e.get("depth", 0) == 0 else None,
                          "tokens": spent["tokens"], "cost": round(spent["cost"], 6),
                          "t": e.get("t")})
    return items


def _item(e: dict[str, Any], max_turns: int | None, spent: dict[str, Any]) -> dict | None:
    kind, agent = e.get("type"), e.get("agent", "root")
    base = {"a": agent, "d": e.get("depth", 0), "turn": e.get("turn"), "seq": e.get("seq")}
    if kind == "model_call":
        usage = e.get("usage") or {}
        spent["tokens"] += usage.get("input_tokens", 0) + usage.get("output_tokens", 0)
        spent["cost"] += usage.get("cost_usd") or 0.0
        call = {**base, "id": e.get("call_id"), "model": e.get("model"), "usage": usage,
                "lat": e.get("latency_s"), "err": e.get("error"), "out": e.get("output"),
                "think": e.get("reasoning")}
        if e.get("role") == "sub":
            inp = e.get("input") or {}
            return {**call, "k": "sub", "wave": e.get("wave"), "prompt": inp.get("prompt"),
                    "text": inp.get("text"), "docs": inp.get("docs") or [],
                    "cut": inp.get("truncated")}
        inp = e.get("input") or {}
        seen = [{"role": m.get("role"), "content": m.get("content")}
                for m in inp.get("messages") or []
                if isinstance(m, dict) and m.get("role") != "assistant"]
        return {**call, "k": "reply", "role": e.get("role"), "seen": seen,
                "replaced": bool(inp.get("replace"))}
    if kind == "compaction":
        usage = e.get("usage") or {}
        spent["tokens"] += usage.get("input_tokens", 0) + usage.get("output_tokens", 0)
        spent["cost"] += usage.get("cost_usd") or 0.0
        return {**base, "k": "compaction", "turns": e.get("turns"), "summary": e.get("summary"),
                "before": e.get("tokens_before"), "after": e.get("tokens_after"),
                "reason": e.get("reason"), "usage": usage, "err": e.get("error"),
                "think": e.get("reasoning")}
    if kind == "cell":
        output = e.get("output") or ""
        return {**base, "k": "cell", "code": e.get("code"), "out": output,
                "cut": bool(CUT.search(output)), "err": e.get("error"),
                "timed_out": e.get("timed_out"), "crashed": e.get("crashed"),
                "s": e.get("seconds")}
    if kind in ("wave", "child_start", "child_end", "memo", "tool", "resumed", "run_end"):
        keep = {k: v for k, v in e.items() if k not in ("seq", "t", "type", "agent", "depth")}
        return {**base, **keep, "k": kind}
    return None


def referenced_docs(items: list[dict[str, Any]], memo: str) -> set[str]:
    """The documents the viewer links to: slices sent, documents opened, citations."""
    docs = {d["id"] for i in items if i["k"] == "sub" for d in i["docs"] if "id" in d}
    docs |= {i["doc"] for i in items if i["k"] == "tool" and i.get("doc")}
    return docs | set(CITE.findall(memo))


def trace_summary(folder: RunFolder, events: list[dict[str, Any]],
                  manifest: list[Any]) -> dict[str, Any]:
    """The run's header, usage, scores and coverage tree (everything but the timeline)."""
    config = folder.config
    metrics = folder.metrics() or _metrics(folder.path)
    end: dict[str, Any] = next((e for e in reversed(events) if e.get("type") == "run_end"
                and e.get("agent", "root") == "root"), {})
    coverage = metrics.get("coverage") or {}
    return {
        "run": folder.name, "harness": config.get("harness"), "root": config.get("root"),
        "sub": config.get("sub"), "subs": config.get("subs") or {},
        "settings": config.get("settings") or {},
        "models": {role: {"model": m.get("model"), "base_url": m.get("base_url")}
                   for role, m in (config.get("models") or {}).items() if isinstance(m, dict)},
        "root_model": model_name(config.get("root")), "sub_model": model_name(config.get("sub")),
        "room": Path(str(config.get("room", ""))).name, "status": end.get("status", "running"),
        "reason": end.get("reason", ""), "turns": end.get("turns"),
        "wall_s": metrics.get("wall_s"), "usage": metrics.get("usage") or {},
        "behaviour": metrics.get("behaviour") or {},
        "coverage": {k: coverage.get(k) for k in ("coverage", "documents_touched",
                                                  "documents_total")},
        "tree": coverage_tree(manifest, coverage.get("by_document") or {}),
        "scores": scores_view(folder.scores()),
        "fork": fork_view(dict(config)),
        "ask": config.get("ask"),
        "asks": asks_view(folder.path),
        "failures": failures_by_turn(events, dict(config)),
    }


def model_name(spec: object) -> str | None:
    """The model a spec names, without its endpoint, options or prices (the header shows this,
    not the spec string).

    >>> model_name("qwen3-8b@http://gpu:8000/v1,price_in=0.1,price_out=0.4")
    'qwen3-8b'
    >>> model_name("scripted:waves=1"), model_name("hf:local,threads=2"), model_name(None)
    ('scripted:waves=1', 'hf:local', None)
    """
    return str(spec).split(",")[0].split("@")[0] if spec else None


def fork_view(config: dict[str, Any]) -> dict[str, Any] | None:
    """A forked (or recovered) run's source: run name and path, the turn it was forked after,
    and the policy before (the source's root) and after (this run's); None otherwise."""
    forked = config.get("forked_from")
    if not isinstance(forked, dict):
        return None
    source = str(forked.get("run") or "")
    return {"run": Path(source).name, "path": source, "turn": forked.get("turn"),
            "before": model_name(forked.get("root")), "after": model_name(config.get("root"))}


def asks_view(run: Path) -> list[dict[str, Any]]:
    """The run's follow-up questions (``dealroom ask``): number, question, answer, status,
    turns and cost of each answered one."""
    from dealroom.harness import read_answers

    return [{"number": a.get("number"), "question": a.get("question"),
             "answer": a.get("answer"), "status": a.get("status"), "turns": a.get("turns"),
             "cost_usd": (a.get("usage") or {}).get("cost_usd")} for a in read_answers(run)]


def failures_by_turn(events: list[dict[str, Any]], config: dict[str, Any]
                     ) -> dict[str, list[dict[str, str]]]:
    """Root turn → its failure points ``[{kind, detail}]`` (see :func:`failure_points`)."""
    max_turns = int((config.get("settings") or {}).get("max_turns") or 0)
    out: dict[str, list[dict[str, str]]] = defaultdict(list)
    for turn, kind, detail in sorted(failure_points(events, max_turns, NEAR,
                                                    config.get("harness") or "rlm")):
        out[str(turn)].append({"kind": kind, "detail": detail})
    return dict(out)


def _metrics(run: Path) -> Metrics:
    try:
        return metrics_from_run(run)
    except DealroomError:
        return metrics_from_run(run, coverage=False)


def scores_view(scores: ScoresRecord | None) -> dict[str, Any] | None:
    """The scores as the viewer shows them: criteria judged, and judge errors apart."""
    if not scores:
        return None
    results = scores.get("criteria_results") or []
    return {"judge": (scores.get("judge") or {}).get("name"), "summary": scores.get("summary"),
            "pass_rate": scores.get("pass_rate"), "all_pass": scores.get("all_pass"),
            "by_type": scores.get("pass_rate_by_type") or {},
            "criteria": [r for r in results if r.get("verdict") in ("pass", "fail")],
            "errors": [r for r in results if r.get("verdict") not in ("pass", "fail")]}


def coverage_tree(manifest: list[DocumentRecord],
                  by_document: dict[str, float]) -> list[dict[str, Any]]:
    """Category → folder → documents (the room's ``DocumentRecord``s), each with the share
    read (token-weighted)."""
    folders: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for doc in manifest:
        folders[doc.category][doc.folder].append(
            {"id": doc.id, "title": doc.title, "tokens": doc.tokens,
             "share": float(by_document.get(doc.id, 0.0) or 0.0)})
    return [{"name": cat, "share": _share(d for f in subs.values() for d in f),
             "folders": [{"name": name, "share": _share(docs), "docs": docs}
                         for name, docs in sorted(subs.items())]}
            for cat, subs in sorted(folders.items())]


def _share(docs: Iterable[dict[str, Any]]) -> float:
    docs = list(docs)
    total = sum(d["tokens"] for d in docs)
    read = sum(d["tokens"] * d["share"] for d in docs)
    share = read / total if total else 0.0
    return share if math.isfinite(share) else 0.0
