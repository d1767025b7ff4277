"""The report's "where the tokens went" plot: per policy, the share of its runs' tokens (and
dollars) spent by the root's own calls, by each named sub-agent model the root called, and by
its children (their whole subtrees), from each run's ``metrics.json`` ``usage.split``."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any


def where_data(episodes: list[dict[str, Any]], name: Callable[[dict[str, Any]], str],
               described: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """``{policies: {policy: {part: [tokens, cost_usd]}}, parts: [...]}``: each part's mean
    per run; or ``{"note": ...}`` when no run recorded its split."""
    have = [e for e in episodes if e.get("split")]
    if not have:
        return {"note": "no run recorded where its tokens went (metrics.json usage.split)"}
    sums: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    runs: dict[str, int] = defaultdict(int)
    for e in have:
        runs[name(e)] += 1
        for part, figures in e["split"].items():
            sums[name(e)][part][0] += figures["tokens"]
            sums[name(e)][part][1] += figures["cost_usd"]
    parts = sorted({p for s in sums.values() for p in s},
                   key=lambda k: (k != "root", k == "children", k))
    policies = {policy: {p: [v[0] / runs[policy], v[1] / runs[policy]] for p, v in s.items()}
                for policy, s in sorted(sums.items())}
    return described(have, policies=policies, parts=parts)


def where_tokens(d: dict[str, Any]) -> str:
    """Stacked horizontal bars per policy: each part's share of the tokens, its mean dollars
    per run written on the bar."""
    from dealroom.report._plots import SMALL, TITLE, Layout, _wrap, short_labels

    names, parts = list(d["policies"]), d["parts"]
    lay = Layout(panel=max(1.2, 0.5 * len(names)), legend=1, left=2.4, right=0.3, top=0.7)
    ax = lay.axes[0]
    left = [0.0] * len(names)
    for i, part in enumerate(parts):
        tokens = [d["policies"][n].get(part, [0, 0])[0] for n in names]
        totals = [sum(v[0] for v in d["policies"][n].values()) or 1 for n in names]
        shares = [100 * t / total for t, total in zip(tokens, totals, strict=True)]
        ax.barh(range(len(names)), shares, 0.6, left=left, gid=f"data-{i}",
                label=part.removeprefix("sub."))
        for j, (share, start) in enumerate(zip(shares, left, strict=True)):
            if share >= 12:
                cost = d["policies"][names[j]].get(part, [0, 0])[1]
                ax.text(start + share / 2, j, f"${cost:.3g}", ha="center", va="center",
                        fontsize=SMALL)
        left = [a + b for a, b in zip(left, shares, strict=True)]
    ticks, common = short_labels(names)
    ax.set_yticks(range(len(names)), [_wrap(n) for n in ticks], fontsize=SMALL)
    ax.invert_yaxis()
    ax.set(xlabel="share of the run's tokens (%); mean dollars per run on the bars",
           xlim=(0, 100))
    ax.set_title("where the tokens went: root, each sub-agent model, children"
                 + (f"\n(all: {common})" if common else ""), fontsize=TITLE)
    handles, labels = ax.get_legend_handles_labels()
    lay.legend(handles, labels, ncol=min(4, len(labels)))
    lay.foot(d)
    return lay.svg()
