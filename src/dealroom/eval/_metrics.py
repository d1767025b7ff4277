"""The estimators of ``dealroom eval``: pure numpy functions that return NaN when undefined.

Each cites its source. Rooms are the unit of resampling: episodes of one room are not
independent of each other, so intervals resample rooms, never episodes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from dealroom.measure import correlation

LEVEL = 0.95
BOOTSTRAP = 2000
"""Bootstrap resamples."""
SIZE_BUCKETS: tuple[tuple[int, int], ...] = ((1, 49), (50, 199), (200, 999), (1000, 0))
"""Room sizes in documents, as reported per bucket (the last is open above)."""


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of ``n`` samples of which ``c`` succeeded: 1 - C(n-c, k) / C(n, k),
    the chance that ``k`` of them drawn without replacement hold a success; NaN when n < k.

    Chen et al. 2021, "Evaluating Large Language Models Trained on Code" (arXiv:2107.03374),
    eq. 1, computed as their numerically stable product 1 - prod_{i=n-c+1}^{n} (1 - k/i).

    >>> pass_at_k(4, 1, 1), pass_at_k(4, 1, 2), pass_at_k(4, 0, 3), pass_at_k(4, 4, 4)
    (0.25, 0.5, 0.0, 1.0)
    >>> pass_at_k(2, 1, 3)
    nan
    """
    if k < 1 or n < k or not 0 <= c <= n:
        return math.nan
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def mean_pass_at_k(outcomes: Sequence[Sequence[bool]], k: int) -> tuple[float, int]:
    """Pass@k over rooms: the mean of :func:`pass_at_k` over the rooms (each a list of sample
    successes) with at least ``k`` samples, and how many rooms that is (NaN, 0 when none).

    With the successes of one turn budget T, this is Pass@(K,T): success within K samples
    under a budget of T turns (the related paper, "What Does Multi-Turn Reinforcement Learning
    Really Improve in LLM Agents?", github.com/GaryStack/Rethinking-Agent-RL; also Zhai et al.
    2026, arXiv:2604.14877). Budget visible: the successes of runs made with budget T;
    truncation: those of runs at T_max judged on their memo as of turn T (:func:`as_of`).

    >>> mean_pass_at_k([[True, False], [False, False], [True]], 2)
    (0.5, 2)
    """
    values = [pass_at_k(len(o), int(sum(map(bool, o))), k) for o in outcomes if len(o) >= k]
    return (float(np.mean(values)), len(values)) if values else (math.nan, 0)


def as_of(by_turn: Sequence[float], turn: int) -> float:
    """A run's value (pass rate) as of ``turn`` from its per-turn values 1..turns; past its
    last turn the run had ended, so its final value; NaN for a run without turns.

    >>> as_of([0.0, 0.25, 0.5], 2), as_of([0.0, 0.25, 0.5], 30), as_of([], 4)
    (0.25, 0.5, nan)
    """
    if not by_turn or turn < 1:
        return math.nan
    return float(by_turn[min(turn, len(by_turn)) - 1])


def bootstrap_ci(values: Sequence[float], *, level: float = LEVEL, resamples: int = BOOTSTRAP,
                 seed: int = 0, stat: Callable[[np.ndarray], float] = np.mean,
                 ) -> tuple[float, float, float]:
    """``(estimate, low, high)``: ``stat`` of ``values`` and its percentile bootstrap
    interval (resampling the values, e.g. one per room, with replacement); NaN values are
    left out, the interval is NaN with fewer than 2 values.

    Efron 1979, "Bootstrap methods: another look at the jackknife" (Ann. Statist. 7(1)); the
    percentile interval of Efron & Tibshirani 1993, "An Introduction to the Bootstrap", ch. 13.

    >>> est, lo, hi = bootstrap_ci([0.2, 0.4, 0.6, 0.8])
    >>> round(est, 2), lo < est < hi, bootstrap_ci([0.5])[1]
    (0.5, True, nan)
    """
    x = np.asarray([v for v in values if v is not None and not math.isnan(v)], dtype=float)
    if x.size == 0:
        return math.nan, math.nan, math.nan
    estimate = float(stat(x))
    if x.size < 2:
        return estimate, math.nan, math.nan
    rng = np.random.default_rng(seed)
    draws = x[rng.integers(0, x.size, size=(resamples, x.size))]
    stats = np.apply_along_axis(stat, 1, draws) if stat is not np.mean else draws.mean(axis=1)
    alpha = (1.0 - level) / 2
    low, high = np.quantile(stats, [alpha, 1.0 - alpha])
    return estimate, float(low), float(high)


def cluster_bootstrap_ci(values: Sequence[float], clusters: Sequence[str], *,
                         level: float = LEVEL, resamples: int = BOOTSTRAP,
                         seed: int = 0) -> tuple[float, float, float]:
    """The mean of ``values`` and its percentile bootstrap interval resampling whole clusters
    (rooms): paired differences of one room are not independent. NaN as :func:`bootstrap_ci`.

    Field & Welsh 2007, "Bootstrapping clustered data" (J. R. Statist. Soc. B 69(3)).

    >>> est, lo, hi = cluster_bootstrap_ci([0.1, 0.3, 0.2, 0.6], ["a", "a", "b", "b"])
    >>> round(est, 2), lo <= est <= hi
    (0.3, True)
    """
    keep = [(v, c) for v, c in zip(values, clusters, strict=True)
            if v is not None and not math.isnan(v)]
    if not keep:
        return math.nan, math.nan, math.nan
    names = sorted({c for _, c in keep})
    sums = np.array([sum(v for v, c in keep if c == name) for name in names])
    counts = np.array([sum(1 for _, c in keep if c == name) for name in names], dtype=float)
    estimate = float(sums.sum() / counts.sum())
    if len(names) < 2:
        return estimate, math.nan, math.nan
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(names), size=(resamples, len(names)))
    stats = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    alpha = (1.0 - level) / 2
    low, high = np.quantile(stats, [alpha, 1.0 - alpha])
    return estimate, float(low), float(high)


def sign_test(differences: Sequence[float]) -> float:
    """Two-sided exact sign test p-value of paired ``differences`` (ties left out): the chance
    of a split of signs at least this uneven if each sign were a fair coin; 1.0 when every
    difference is 0, NaN without differences.

    Dixon & Mood 1946, "The statistical sign test" (J. Amer. Statist. Assoc. 41(236)).

    >>> sign_test([0.1, 0.2, 0.3, 0.1, 0.2]), sign_test([0.1, -0.1]), sign_test([0.0])
    (0.0625, 1.0, 1.0)
    """
    d = np.asarray([v for v in differences if v is not None and not math.isnan(v)], dtype=float)
    if d.size == 0:
        return math.nan
    pos, neg = int((d > 0).sum()), int((d < 0).sum())
    n = pos + neg
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(pos, neg) + 1)) / 2**n
    return float(min(1.0, 2 * tail))


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rank correlation (Pearson's r of the ranks, ties given their mean rank);
    NaN with fewer than 2 pairs or no variance.

    Spearman 1904, "The proof and measurement of association between two things" (Amer. J.
    Psychol. 15(1)).

    >>> spearman([1, 2, 3, 4], [1, 4, 9, 16]), spearman([1, 2, 3], [3, 2, 2])
    (1.0, -0.8660254037844387)
    """
    return correlation(_ranks(xs), _ranks(ys))


def pearson_log(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Pearson's r of log10(x) and y over the pairs with x > 0 (the source plots pass rate
    against coverage on a log scale); NaN as :func:`dealroom.measure.correlation`.

    >>> round(pearson_log([0.001, 0.01, 0.1, 1.0], [0.1, 0.2, 0.3, 0.4]), 6)
    1.0
    """
    pairs = [(math.log10(x), y) for x, y in zip(xs, ys, strict=True) if x is not None and x > 0]
    return correlation([p[0] for p in pairs], [p[1] for p in pairs])


def _ranks(values: Sequence[float]) -> list[float]:
    x = np.asarray(values, dtype=float)
    order = np.argsort(x, kind="stable")
    ranks = np.empty(x.size)
    ranks[order] = np.arange(1, x.size + 1)
    for value in np.unique(x):
        tied = x == value
        ranks[tied] = ranks[tied].mean()
    return ranks.tolist()


def size_bucket(docs: int) -> str:
    """The room-size bucket of a room of ``docs`` documents (:data:`SIZE_BUCKETS`).

    >>> size_bucket(20), size_bucket(400), size_bucket(5000)
    ('1-49 docs', '200-999 docs', '1000+ docs')
    """
    for low, high in SIZE_BUCKETS[:-1]:
        if docs <= high:
            return f"{low}-{high} docs"
    return f"{SIZE_BUCKETS[-1][0]}+ docs"
