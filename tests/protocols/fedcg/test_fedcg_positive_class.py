"""FedCG's ``positive_class``: which class's recall and precision a run reports, and nothing
else (the paper's Breast Cancer tables read malignant)."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.errors import ValidationError
from fedsec.private_store import auxiliary_key
from fedsec.runner import RunConfig, run


def breast_cancer(positive_class: str | None, protocol: str = "fedcg-naive"):
    params = {"n_landmarks": 20, "landmark_method": "U"}
    if positive_class is not None:
        params["positive_class"] = positive_class
    return run(RunConfig(protocol=protocol, dataset="breast_cancer", seed=0, secret_seed=0,
                         scaling="minmax", params=params))


def test_positive_class_changes_the_reported_class_only() -> None:
    default, malignant = breast_cancer(None), breast_cancer("malignant")
    # the same split, landmarks and model: only which class is scored moves
    assert np.array_equal(default.outcome.values["alpha"], malignant.outcome.values["alpha"])
    assert default.outcome.metrics["accuracy"] == malignant.outcome.metrics["accuracy"]
    assert malignant.record.comparison.agrees
    scores = np.asarray(malignant.outcome.values["test_scores"]).ravel()
    predicted = (scores > 0).astype(int)  # code 1 (benign) where the +1 column wins
    y = np.asarray(malignant.private[auxiliary_key("y")])
    for result, code in ((default, 1), (malignant, 0)):
        hits = np.sum((predicted == code) & (y == code))
        assert result.outcome.metrics["recall"] == pytest.approx(hits / np.sum(y == code))
        assert result.outcome.metrics["precision"] == pytest.approx(
            hits / np.sum(predicted == code))
        assert result.reference.metrics["recall"] == result.outcome.metrics["recall"]
    assert malignant.outcome.metrics["recall"] != default.outcome.metrics["recall"]


@pytest.mark.parametrize("protocol", ["fedcg-naive", "cencg"])
def test_an_unknown_class_is_refused_naming_the_classes(protocol: str) -> None:
    with pytest.raises(ValidationError, match="'malignant', 'benign'"):
        breast_cancer("Malignant", protocol)
