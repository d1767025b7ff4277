"""Agreement between two judges on the same memos: raw agreement and Cohen's kappa."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dealroom.judge._scores import ERROR, PASS, Scores


def agreement(a: Scores | list[Scores], b: Scores | list[Scores]) -> dict[str, Any]:
    """Per-criterion agreement of two judges, and Cohen's kappa, over paired scores.

    ``a`` and ``b`` are the two judges' scores of the same memos (one or a list, in the same
    order). Criteria are paired by id; a pair where either judge returned an error is left out
    and counted in ``excluded``. Kappa corrects agreement for chance (Cohen, "A coefficient of
    agreement for nominal scales", 1960): ``(p_o - p_e) / (1 - p_e)``; NaN when no pair is
    left or when chance agreement is 1 (both judges gave one verdict throughout).

    >>> from dealroom.judge import CriterionResult as R, Scores as S
    >>> x = S([R("C-1", "", "pass", ""), R("C-2", "", "fail", ""), R("C-3", "", "pass", "")])
    >>> y = S([R("C-1", "", "pass", ""), R("C-2", "", "fail", ""), R("C-3", "", "fail", "")])
    >>> r = agreement(x, y); (r["n"], round(r["agreement"], 3), round(r["kappa"], 3))
    (3, 0.667, 0.4)
    """
    pairs_a, pairs_b = _as_list(a), _as_list(b)
    if len(pairs_a) != len(pairs_b):
        raise ValueError(f"agreement needs paired scores: got {len(pairs_a)} and {len(pairs_b)}")
    xs, ys, excluded = [], [], 0
    for sa, sb in zip(pairs_a, pairs_b, strict=True):
        other = {r.id: r.verdict for r in sb.criteria_results}
        for r in sa.criteria_results:
            if r.id not in other:
                continue
            if ERROR in (r.verdict, other[r.id]):
                excluded += 1
                continue
            xs.append(r.verdict == PASS)
            ys.append(other[r.id] == PASS)
    return {"n": len(xs), "excluded": excluded, **_kappa(np.array(xs), np.array(ys))}


def _kappa(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    if not x.size:
        return {"agreement": math.nan, "kappa": math.nan}
    p_o = float((x == y).mean())
    pa, pb = float(x.mean()), float(y.mean())
    p_e = pa * pb + (1 - pa) * (1 - pb)
    kappa = (p_o - p_e) / (1 - p_e) if p_e < 1 else math.nan
    return {"agreement": p_o, "kappa": kappa}


def _as_list(scores: Scores | list[Scores]) -> list[Scores]:
    return [scores] if isinstance(scores, Scores) else list(scores)
