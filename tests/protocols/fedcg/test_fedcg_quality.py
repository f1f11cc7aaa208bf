"""FedCG's recall and precision (the paper's Tables 2-6 report them beside accuracy): the pure
function against scikit-learn, and both in the run's federated and centralized metrics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import precision_score, recall_score

from fedsec.protocols.fedcg import krls
from fedsec.runner import RunConfig, data_split, run


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 5), st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)),
                                   min_size=1, max_size=40))
def test_recall_and_precision_are_scikit_learn_s(n_classes: int,
                                                 pairs: list[tuple[int, int]]) -> None:
    y = np.array([t % n_classes for t, _ in pairs])
    p = np.array([q % n_classes for _, q in pairs])
    binary = n_classes == 2
    options = {"average": "binary", "pos_label": 1} if binary else {"average": "macro"}
    recall, precision = krls.recall_precision(y, p, binary=binary)
    assert recall == pytest.approx(recall_score(y, p, zero_division=0, **options))
    assert precision == pytest.approx(precision_score(y, p, zero_division=0, **options))


@pytest.mark.parametrize(("protocol", "dataset", "partition"), [
    ("fedcg-secure", "ionosphere", "hybrid:cohorts=2,groups=2,centres=per-cohort"),
    ("fedcg-naive", "wine", "hybrid:cohorts=2,groups=3,centres=per-cohort"),
])
def test_a_run_reports_recall_and_precision_on_both_sides(protocol: str, dataset: str,
                                                          partition: str) -> None:
    config = RunConfig(protocol=protocol, dataset=dataset, partition=partition, secret_seed=0)
    result = run(config)
    test = data_split(config).test
    binary = test.task == "binary"
    options = {"average": "binary", "pos_label": 1} if binary else {"average": "macro"}
    for side in (result.outcome, result.reference):
        predicted = side.model.predict(test.X)
        assert side.metrics["recall"] == pytest.approx(
            recall_score(test.y, predicted, zero_division=0, **options))
        assert side.metrics["precision"] == pytest.approx(
            precision_score(test.y, predicted, zero_division=0, **options))
    assert {"accuracy", "recall", "precision"} <= set(result.record.metric_gaps)
    written = result.record.to_json()["metrics"]
    assert {"recall", "precision"} <= set(written["federated"]) & set(written["centralized"])
