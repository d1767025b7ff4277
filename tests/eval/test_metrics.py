"""The estimators against hand-computed cases and brute force."""

import doctest
import itertools
import math

import numpy as np
import pytest

from dealroom.eval import (
    _metrics,
    as_of,
    bootstrap_ci,
    cluster_bootstrap_ci,
    mean_pass_at_k,
    pass_at_k,
    pearson_log,
    sign_test,
    size_bucket,
    spearman,
)


def test_the_docstrings_examples_hold():
    assert doctest.testmod(_metrics).failed == 0


@pytest.mark.parametrize(("n", "c", "k", "want"), [
    (5, 2, 2, 1 - 3 / 10),        # 1 - C(3,2)/C(5,2)
    (10, 3, 4, 1 - 35 / 210),     # 1 - C(7,4)/C(10,4)
    (4, 0, 2, 0.0),               # c = 0: never
    (4, 4, 1, 1.0),               # c = n: always
    (3, 1, 3, 1.0),               # every sample drawn
    (1, 1, 1, 1.0),
])
def test_pass_at_k_by_hand(n, c, k, want):
    assert pass_at_k(n, c, k) == pytest.approx(want)


@pytest.mark.parametrize(("n", "c", "k"), [(2, 1, 3), (0, 0, 1), (3, 1, 0), (3, 4, 1)])
def test_pass_at_k_is_nan_where_undefined(n, c, k):
    assert math.isnan(pass_at_k(n, c, k))


def test_pass_at_k_is_the_mean_over_every_k_subset():
    for n in range(1, 8):
        for c in range(n + 1):
            samples = [True] * c + [False] * (n - c)
            for k in range(1, n + 1):
                subsets = list(itertools.combinations(samples, k))
                brute = sum(any(s) for s in subsets) / len(subsets)
                assert pass_at_k(n, c, k) == pytest.approx(brute, abs=1e-12), (n, c, k)


def test_pass_at_k_over_rooms_skips_rooms_with_too_few_samples():
    rooms = [[True, False, False], [False, False, False], [True]]
    value, used = mean_pass_at_k(rooms, 2)
    assert used == 2 and value == pytest.approx((1 - 1 / 3 + 0.0) / 2)
    assert mean_pass_at_k(rooms, 4) == (pytest.approx(math.nan, nan_ok=True), 0)


def test_as_of_reads_the_memo_at_turn_t_and_the_final_one_past_the_end():
    by_turn = [0.0, 0.0, 0.5, 0.75]
    assert [as_of(by_turn, t) for t in (1, 3, 4, 30)] == [0.0, 0.5, 0.75, 0.75]
    assert math.isnan(as_of([], 2)) and math.isnan(as_of(by_turn, 0))


def test_bootstrap_interval_is_seeded_and_brackets_the_mean():
    values = [0.1, 0.5, 0.3, 0.9, 0.4, 0.6]
    first, second = bootstrap_ci(values), bootstrap_ci(values)
    assert first == second
    est, low, high = first
    assert est == pytest.approx(np.mean(values)) and low < est < high
    assert bootstrap_ci([0.5, 0.5, 0.5]) == (0.5, 0.5, 0.5)
    assert all(math.isnan(v) for v in bootstrap_ci([]))
    assert bootstrap_ci([0.2, float("nan")])[0] == 0.2  # NaN left out
    assert math.isnan(bootstrap_ci([0.2])[1])
    wide = bootstrap_ci(values, level=0.99)
    assert wide[1] <= low and wide[2] >= high


def test_cluster_bootstrap_resamples_rooms():
    est, low, high = cluster_bootstrap_ci([1.0, 1.0, 0.0, 0.0], ["a", "a", "b", "b"])
    assert est == 0.5 and low == 0.0 and high == 1.0  # rooms, not pairs, are drawn
    assert math.isnan(cluster_bootstrap_ci([0.3, 0.1], ["a", "a"])[1])


def test_sign_test_by_hand():
    assert sign_test([1] * 5) == pytest.approx(2 / 32)
    assert sign_test([1] * 10) == pytest.approx(2 / 1024)
    assert sign_test([1, 1, -1]) == pytest.approx(1.0)          # 2 * (1 + 3) / 8, capped
    assert sign_test([1, 1, 1, 1, -1, 0, 0]) == pytest.approx(2 * 6 / 32)
    assert sign_test([0, 0]) == 1.0 and math.isnan(sign_test([]))


def test_rank_and_log_correlations():
    assert spearman([1, 2, 3, 4], [10, 30, 20, 40]) == pytest.approx(0.8)
    assert spearman([1, 1, 2], [1, 2, 3]) == pytest.approx(np.corrcoef([1.5, 1.5, 3],
                                                                       [1, 2, 3])[0, 1])
    assert math.isnan(spearman([1], [2]))
    assert pearson_log([0.0, 0.01, 0.1, 1.0], [9, 0.1, 0.2, 0.3]) == pytest.approx(1.0)


def test_size_buckets():
    assert [size_bucket(n) for n in (1, 49, 50, 199, 200, 999, 1000)] == [
        "1-49 docs", "1-49 docs", "50-199 docs", "50-199 docs", "200-999 docs",
        "200-999 docs", "1000+ docs"]
