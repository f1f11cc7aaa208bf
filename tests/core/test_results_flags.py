"""What a run's result claims: warnings when a classifier scores below the majority-class
rate, and agreement stated as not claimed where no tolerance applies."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.dummy import DummyClassifier

from fedsec.private_store import auxiliary_key
from fedsec.results import RESULT_FILE, compare, majority_rate, quality_warnings
from fedsec.runner import RunConfig, run

#: A FedGraph run of a few seconds (small networks, few epochs).
SMALL_FEDGRAPH = {"hidden": 16, "layers": 2, "epochs": 2, "gcn_epochs": 5, "gcn_hidden": 16,
                  "score_steps": 2, "score_samples": 4, "depth": 1}


@pytest.mark.parametrize("y", [[0, 1, 1], [2, 2, 0, 1, 1], [0, 0, 1, 1], [3] * 4 + [0] * 5])
def test_majority_rate_is_the_accuracy_of_always_answering_the_most_frequent_class(y) -> None:
    y = np.array(y)
    dummy = DummyClassifier(strategy="most_frequent").fit(np.zeros((y.size, 1)), y)
    top, rate = majority_rate(y)
    assert top == dummy.predict(np.zeros((1, 1)))[0]
    assert rate == pytest.approx(dummy.score(np.zeros((y.size, 1)), y))


def test_quality_warnings_name_the_rate_the_class_and_what_to_try() -> None:
    y = np.array([0, 1, 1, 1])
    (warning,) = quality_warnings({"accuracy": 0.5}, {"accuracy": 0.95}, y, task="binary",
                                  protocol="fdskl", class_names=("no", "yes"))
    assert "0.500 is below the test set's majority-class rate 0.750" in warning
    assert "'yes'" in warning and "reference scores 0.950" in warning
    assert "step size" in warning and "fedsec describe fdskl" in warning
    assert quality_warnings({"accuracy": 0.75}, {}, y, task="binary", protocol="p") == ()
    assert quality_warnings({"accuracy": 0.1}, {}, np.array([0.5, 1.5]), task="regression",
                            protocol="p") == ()  # a regression is judged by its mse


def test_a_regression_worse_than_predicting_the_mean_is_flagged() -> None:
    y = np.array([0.0, 1.0, 2.0, 3.0])  # variance 1.25: the error of predicting the mean
    assert quality_warnings({"mse": 1.25}, {}, y, task="regression", protocol="p") == ()
    (warning,) = quality_warnings({"mse": 9.0}, {"mse": 0.5}, y, task="regression",
                                  protocol="fdskl")
    assert "mean squared error 9 is above the test targets' variance 1.25" in warning
    assert "reference scores 0.5: the federated training lost" in warning
    (warning,) = quality_warnings({"mse": 9.0}, {"mse": 4.0}, y, task="regression",
                                  protocol="fdskl")
    assert "worse than that too: the training settings fail" in warning
    assert quality_warnings({"f1": 0.1}, {}, y, task="binary", protocol="p") == ()


def test_fdskl_square_loss_at_the_default_step_warns_below_the_majority_rate(
        tmp_path: Path) -> None:
    result = run(RunConfig(protocol="fdskl", dataset="breast_cancer", params={"loss": "square"},
                           secret_seed=0), tmp_path)
    assert result.record.partition["spec"] == "vertical:parties=4"
    _, rate = majority_rate(result.private[auxiliary_key("y")])
    assert result.outcome.metrics["accuracy"] < rate
    (warning,) = result.record.warnings
    assert "below the test set's majority-class rate" in warning
    written = json.loads((tmp_path / RESULT_FILE).read_text(encoding="utf-8"))
    assert written["warnings"] == [warning]


def test_a_run_that_learns_has_no_warning() -> None:
    result = run(RunConfig(protocol="fdskl", dataset="breast_cancer",
                           params={"loss": "square", "step": 0.01}, secret_seed=0))
    assert result.outcome.metrics["accuracy"] > 0.9
    assert result.record.warnings == ()
    assert result.record.to_json()["warnings"] == []


def test_an_infinite_tolerance_claims_no_agreement_whatever_the_difference() -> None:
    far = compare({"s": np.array([1.0, 2.0])}, {"s": np.array([9.0, 2.0])}, rtol=float("inf"))
    assert far.claimed is False and far.verdict is None
    assert far.to_json()["agrees"] is None and far.to_json()["claimed"] is False
    assert far.to_json()["values"]["s"]["agrees"] is None
    assert far.agrees  # the Python flag stays a bool for callers that only ask "any failure?"
    mixed = compare({"s": np.array([1.0]), "t": np.array([1.0])},
                    {"s": np.array([9.0]), "t": np.array([2.0])}, rtol=float("inf"),
                    tolerances={"t": 1e-9})
    assert mixed.claimed and mixed.verdict is False  # a finite per-value tolerance is a claim
    nothing = compare({}, {}, rtol=1e-9)  # no reference computed
    assert nothing.verdict is None and nothing.to_json()["claimed"] is False


def test_fedgraph_result_json_claims_no_agreement(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    result = run(RunConfig(protocol="fedgraph", partition="random:parties=4,features=0.2",
                           params=SMALL_FEDGRAPH, test_size=200, secret_seed=0), tmp_path)
    written = json.loads((tmp_path / RESULT_FILE).read_text(encoding="utf-8"))["comparison"]
    assert result.record.comparison.values  # values were compared, but with no tolerance
    assert written["agrees"] is None and written["claimed"] is False


def test_a_protocol_with_a_tolerance_still_says_true_or_false(tmp_path: Path) -> None:
    result = run(RunConfig(protocol="secure-sum", dataset="iris", seed=1, secret_seed=1),
                 tmp_path)
    written = json.loads((tmp_path / RESULT_FILE).read_text(encoding="utf-8"))["comparison"]
    assert result.record.comparison.rtol < float("inf")
    assert written["agrees"] is True and written["claimed"] is True
    noisy = run(RunConfig(protocol="secure-sum", dataset="iris", seed=1, secret_seed=1,
                          defenses=[("gaussian-noise", {"sigma": 5.0})]))
    assert noisy.record.to_json()["comparison"]["agrees"] is False


def test_the_command_line_prints_the_warning_and_the_unclaimed_agreement(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from fedsec.cli.main import main

    pytest.importorskip("torch")
    assert main(["run", "fdskl", "--set", "loss=square", "--secret-seed", "0",
                 "--out", str(tmp_path / "square")]) == 0
    printed = capsys.readouterr().out
    assert "WARNING: The federated model's test accuracy 0.524 is below" in printed
    assert main(["run", "fedgraph", "--partition", "random:parties=4,features=0.2",
                 "--test-size", "200", "--secret-seed", "0", "--out", str(tmp_path / "graph"),
                 *(f"--set={k}={v}" for k, v in SMALL_FEDGRAPH.items())]) == 0
    printed = capsys.readouterr().out
    assert "not the centralized one (no agreement claimed)" in printed
    assert "WARNING" not in printed and "matches the centralized" not in printed
