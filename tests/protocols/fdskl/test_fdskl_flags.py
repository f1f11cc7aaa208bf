"""FDSKL's agreement check by task: a regression's predictions within the test scores'
tolerance, a classifier's predicted classes exactly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_diabetes

from fedsec.results import Comparison, compare
from fedsec.runner import RunConfig, run


def diabetes_csv(folder: Path) -> Path:
    """scikit-learn's diabetes progression (442 rows, 10 features), standardized targets."""
    data = load_diabetes()
    y = (data.target - data.target.mean()) / data.target.std()
    path = folder / "diabetes.csv"
    rows = [",".join([*data.feature_names, "label"])]
    rows += [",".join(repr(float(v)) for v in (*x, t)) for x, t in zip(data.data, y, strict=True)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def own_tolerances(comparison: Comparison) -> dict[str, float]:
    """The per-value tolerances the run's protocol chose (``agreement_tolerances``)."""
    return {k: v.rtol for k, v in comparison.values.items() if v.rtol is not None}


def test_a_regression_run_agrees_with_dsg_to_rounding(tmp_path: Path) -> None:
    result = run(RunConfig(protocol="fdskl", dataset=str(diabetes_csv(tmp_path)),
                           partition="vertical:parties=4", secret_seed=0,
                           params={"loss": "square", "step": 0.01, "n_iterations": 600}))
    assert result.record.dataset.task == "regression"
    comparison = result.record.comparison
    predictions = comparison.values["predictions"]
    assert predictions.rtol == comparison.values["test_scores"].rtol >= 1e-8
    assert 0.0 < predictions.max_rel_diff < 1e-12  # rounding: an exact check would fail
    assert comparison.agrees


def test_a_regression_prediction_moved_beyond_rounding_differs(tmp_path: Path) -> None:
    result = run(RunConfig(protocol="fdskl", dataset=str(diabetes_csv(tmp_path)),
                           partition="vertical:parties=4", secret_seed=0,
                           params={"loss": "square", "step": 0.01, "n_iterations": 200}))
    moved = np.array(result.outcome.values["predictions"], dtype=float)
    moved[0] += 1e-3 * np.max(np.abs(moved))
    checked = compare({"predictions": moved}, result.reference.values, rtol=1e-8,
                      tolerances=own_tolerances(result.record.comparison))
    assert not checked.agrees


@pytest.mark.parametrize("flip", [False, True])
def test_a_changed_class_prediction_differs(flip: bool) -> None:
    result = run(RunConfig(protocol="fdskl", dataset="breast_cancer",
                           partition="vertical:parties=4", secret_seed=0,
                           params={"n_iterations": 200}))
    assert result.record.comparison.values["predictions"].rtol == 0.0
    predictions = np.array(result.outcome.values["predictions"], dtype=float)
    if flip:
        predictions[0] = 1.0 - predictions[0]
    checked = compare({"predictions": predictions}, result.reference.values, rtol=1e-8,
                      tolerances=own_tolerances(result.record.comparison))
    assert checked.agrees is not flip
