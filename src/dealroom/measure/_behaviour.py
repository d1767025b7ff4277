"""Behaviour statistics of a run, as the source reports them, and the across-run correlation.

The diligence post-training work (SPEC.md, "Numbers from the seeds") describes trained roots
that delegate more (sub-agent calls +29% after SFT, +64% after GRPO), scale their team with
the room (delegation-vs-room-size correlation 0.17 → 0.84) and write the memo incrementally,
while sub-agents are still reading. These functions measure exactly those behaviours.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from dealroom.runs import Behaviour


def behaviour(events: Sequence[dict[str, Any]]) -> Behaviour:
    """Delegation and memo-writing statistics of one run's trajectory events.

    ``sub_calls``: sub-agent model calls at any depth; ``sub_calls_failed``: those with an error;
    ``children``: child RLMs started (depth 2); ``waves``: rounds of sub-calls the root sent;
    ``max_wave``: most calls in one root wave; ``docs_delegated``: distinct documents named in
    sub-call inputs; ``turns``: root turns used; ``memo_incremental``: the root's memo had
    sections before the last wave of sub-agents returned (None when there were no waves);
    ``memo_sections`` and ``memo_chars``: the memo's final size; ``docs_read``: distinct
    documents opened with a tool-loop ``read`` (None when the run called no tool);
    ``room_docs``: documents in the room (``run_start``), so ``docs_read``/``room_docs`` is
    LAB's "Docs read: 31/60"; ``non_findings``: sub-agent replies not in the finding format
    a prompt asked for (:func:`non_findings`).
    """
    calls = [e for e in events if e.get("type") == "model_call"]
    subs = [e for e in calls if e.get("role") == "sub"]
    root_waves = [e for e in events if e.get("type") == "wave" and e.get("agent", "root") == "root"]
    docs = {ref.get("id") for e in subs for ref in (e.get("input") or {}).get("docs") or []}
    turns = {e.get("turn") for e in calls if e.get("role") == "root"}
    memos = [e for e in events if e.get("type") == "memo" and e.get("agent", "root") == "root"]
    last = memos[-1] if memos else {}
    tools = [e for e in events if e.get("type") == "tool"]
    start = next((e for e in events if e.get("type") == "run_start"), {})
    return {
        "sub_calls": len(subs),
        "sub_calls_failed": sum(1 for e in subs if e.get("error")),
        "children": sum(1 for e in events if e.get("type") == "child_start"),
        "waves": len(root_waves),
        "max_wave": max((int(e.get("calls", 0)) for e in root_waves), default=0),
        "docs_delegated": len(docs - {None}),
        "turns": len(turns - {None}),
        "memo_incremental": memo_incremental(events),
        "memo_sections": int(last.get("sections", 0)),
        "memo_chars": int(last.get("chars", 0)),
        "docs_read": len({e.get("doc") for e in tools} - {None}) if tools else None,
        "room_docs": start.get("docs"),
        "non_findings": non_findings(subs),
    }


FINDING_LINE = re.compile(
    r"^[\s\-*\d.]*\**ISSUE\**\s*:\s*\**\s*(?!none\b)[^|\s]+(?:[ \t]+[^|\s]+){2}", re.I | re.M)
"""A line in the finding format: ``ISSUE: <three words or more> | ...`` (bullets, numbers and
bold aside); the scripted root's parser uses the same pattern."""


def non_findings(subs: Sequence[dict[str, Any]]) -> int | None:
    """Of the sub-calls whose prompt asks for ``ISSUE:`` lines, those answered without one
    (and not ``NONE``); a call made with a schema asks too, and its answer, which matched,
    is never one; None when no call asked.

    >>> asked = {"prompt": "One line per issue: ISSUE: <what> | PAGE: <page>"}
    >>> non_findings([{"input": asked, "output": "ISSUE: Lease in default | PAGE: 2"},
    ...               {"input": asked, "output": "NONE"},
    ...               {"input": asked, "output": "The above excerpt contains a description."}])
    1
    """
    asked = [e for e in subs if not e.get("error")
             and ("ISSUE:" in str((e.get("input") or {}).get("prompt") or "")
                  or "schema" in (e.get("input") or {}))]
    if not asked:
        return None
    return sum(1 for e in asked if "schema" not in (e.get("input") or {})
               and not FINDING_LINE.search(e.get("output") or "")
               and not re.match(r"\W*NONE\b", (e.get("output") or "").strip(), re.I))


def memo_incremental(events: Sequence[dict[str, Any]]) -> bool | None:
    """Whether the root's memo had sections before the last wave of sub-agents returned.

    A ``wave`` event is written when its sub-calls have returned, so the memo was written
    incrementally when a root ``memo`` event with ``sections > 0`` comes earlier in the
    trajectory than the last ``wave`` event (of any agent). None when no wave was sent.

    >>> memo_incremental([{"seq": 0, "type": "memo", "agent": "root", "sections": 2},
    ...                   {"seq": 1, "type": "wave", "agent": "root"}])
    True
    """
    waves = [e.get("seq", i) for i, e in enumerate(events) if e.get("type") == "wave"]
    if not waves:
        return None
    return any(
        e.get("type") == "memo"
        and e.get("agent", "root") == "root"
        and int(e.get("sections", 0)) > 0
        and e.get("seq", i) < max(waves)
        for i, e in enumerate(events)
    )


def correlation(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Pearson correlation of ``xs`` and ``ys``; NaN with fewer than 2 pairs or no variance.

    Used across runs for sub-agent calls against room size: the source reports it rising from
    0.17 to 0.84 after self-distillation SFT (SPEC.md; Pearson, "Notes on regression and
    inheritance", 1895).

    >>> round(correlation([1, 2, 3, 4], [10, 20, 25, 45]), 3)
    0.965
    >>> correlation([1, 1, 1], [2, 3, 4]), correlation([-0.5228787452803376] * 6, [1, 2, 3] * 2)
    (nan, nan)
    """
    x = np.asarray(xs, dtype=float)
    y = np.asarray(ys, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"correlation needs pairs: got {x.size} xs and {y.size} ys")
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan  # no variance (a mean off by rounding would give 0, not NaN)
    dx, dy = x - x.mean(), y - y.mean()
    den = math.sqrt(float((dx * dx).sum()) * float((dy * dy).sum()))
    return float((dx * dy).sum()) / den if den > 0 else math.nan


def ratio(num: float, den: float) -> float:
    """``num / den``, or NaN when ``den`` is 0 (a share of nothing is undefined, not 0).

    >>> ratio(1, 4), math.isnan(ratio(0, 0))
    (0.25, True)
    """
    return num / den if den else math.nan
