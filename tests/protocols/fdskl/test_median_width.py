"""The median kernel width: its maths against a direct computation, and FDSKL's secure sum of
partial distances against the pooled rows."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from fedsec.errors import ValidationError
from fedsec.private_store import shard_key
from fedsec.protocols.fdskl import median_width, tags
from fedsec.runner import RunConfig, run


@pytest.mark.parametrize(("kernel", "metric"), [("rbf", "euclidean"), ("laplace", "cityblock")])
def test_partial_distances_over_feature_groups_sum_to_the_distance(kernel: str,
                                                                   metric: str) -> None:
    X = np.random.default_rng(0).normal(size=(30, 7))
    pairs = median_width.pair_sample(4, 30, 200)
    parts = sum(median_width.partial_distances(X[:, g], pairs, kernel=kernel)
                for g in (slice(0, 2), slice(2, 5), slice(5, 7)))
    whole = cdist(X, X, metric=metric)[pairs[:, 0], pairs[:, 1]]
    assert median_width.median_width(parts, kernel=kernel) == pytest.approx(np.median(whole),
                                                                            rel=1e-12)


def test_the_pairs_come_from_the_run_seed_and_are_distinct() -> None:
    a, b = median_width.pair_sample(1, 10, 500), median_width.pair_sample(1, 10, 500)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, median_width.pair_sample(2, 10, 500))
    assert (a[:, 0] != a[:, 1]).all() and a.min() >= 0 and a.max() < 10
    with pytest.raises(ValidationError, match="at least 2 training samples"):
        median_width.pair_sample(0, 1, 5)


@pytest.mark.parametrize("offsets", ["per-feature", "none"])
def test_fdskl_s_median_width_equals_dsg_s_and_hides_partials(offsets: str) -> None:
    result = run(RunConfig(protocol="fdskl", dataset="breast_cancer",
                           partition="vertical:parties=4", secret_seed=0,
                           params={"n_iterations": 100, "width_rule": "median",
                                   "width_pairs": 300, "offsets": offsets}))
    width = result.outcome.metrics["kernel_width"]
    assert width == pytest.approx(result.reference.metrics["kernel_width"], rel=1e-12)
    assert width != pytest.approx(run(RunConfig(
        protocol="dsg", dataset="breast_cancer", params={"n_iterations": 1})
    ).outcome.metrics["kernel_width"], rel=1e-3)  # not the "scale" width
    assert result.record.comparison.agrees
    messages = result.transcript.messages
    counts = Counter(m.tag for m in messages)
    assert counts[tags.PARTIAL_DISTANCE] == 3  # q - 1 along T1, one vector of 300 values each
    # the masks: q - 2 along the tree over the three others, then delivered to the requester
    assert counts[tags.DISTANCE_MASK] == (0 if offsets == "none" else 3)
    assert counts[tags.COLUMN_STATISTICS] == 0
    first = next(m for m in messages if m.tag == tags.PARTIAL_DISTANCE)
    assert first.payload.shape == (300,)
    pairs = next(m for m in messages if m.tag == tags.WIDTH_PAIRS).payload
    # what the first sender's receiver sees is its partial distances only when unmasked
    private = result.private
    X = private[shard_key(first.sender, 0, "X")]
    rows = np.argsort(private[shard_key(first.sender, 0, "rows")])
    assert np.array_equal(pairs.T, median_width.pair_sample(0, rows.size, 300))
    own = median_width.partial_distances(np.asarray(X)[rows], pairs.T, kernel="rbf")
    assert np.allclose(first.payload, own) == (offsets == "none")


def test_median_width_with_a_given_width_is_refused() -> None:
    with pytest.raises(ValidationError, match="'width_rule' parameter of protocol 'fdskl'"):
        run(RunConfig(protocol="fdskl", params={"width_rule": "median", "kernel_width": 1.0}))
    with pytest.raises(ValidationError, match="'width_rule' parameter"):
        run(RunConfig(protocol="dsg", params={"width_rule": "mean"}))
