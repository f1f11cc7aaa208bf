"""Every protocol's model reproduces, on the run's test rows, the predictions it reported."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from fedsec.errors import DataError
from fedsec.runner import RunConfig, RunResult, data_split, run
from fedsec.threads import limited_threads

#: The smallest configuration of each protocol (a few seconds at most).
TINY: dict[str, dict[str, Any]] = {
    "cencg": {"dataset": "iris"},
    "fedcg-naive": {"dataset": "iris"},
    "fedcg-secure": {"dataset": "iris", "params": {"gamma_jitter": 0.5}},
    "dsg": {"dataset": "breast_cancer", "params": {"n_iterations": 300}},
    "fdskl": {"dataset": "breast_cancer", "partition": "vertical:parties=3",
              "params": {"n_iterations": 300}},
    "mvl": {"dataset": "mfeat:views=zer+mor"},
    "single-view": {"dataset": "mfeat:views=mor"},
    "v-fedmv": {"dataset": "mfeat:views=zer+mor"},
    "h-fedmv": {"dataset": "mfeat:views=zer+mor", "partition": "horizontal:parties=2",
                "params": {"rounds": 2}},
    "s-fedmv": {"dataset": "keystrokes:participants=2,sessions=8,min_presses=4,max_presses=8",
                "params": {"fedavg_rounds": 2, "local_epochs": 1, "hidden": 4, "rounds": 2,
                           "local_baselines": False, "optimizer": "sgd"}},
    "fedgraph": {"partition": "random:parties=3,features=0.1",
                 "params": {"hidden": 32, "layers": 2, "epochs": 2, "gcn_epochs": 2,
                            "score_steps": 5, "compare": False, "depth": 1}},
    "nri-dc": {"dataset": "iris", "partition": "horizontal:parties=3",
               "params": {"n_anchor": 50}},
}


def _run(name: str) -> tuple[RunResult, Any]:
    config = RunConfig(protocol=name, seed=3, secret_seed=3, **TINY[name])
    return run(config), data_split(config).test


def _classes(result_scores: np.ndarray) -> np.ndarray:
    scores = np.asarray(result_scores)
    if scores.ndim == 1:
        return (scores > 0).astype(np.int64)
    if scores.shape[1] == 1:
        return (scores[:, 0] > 0).astype(np.int64)
    return np.argmax(scores, axis=1)


@pytest.mark.parametrize("name", [n for n in TINY if n != "nri-dc"])
def test_the_model_reproduces_the_reported_test_predictions(name: str) -> None:
    result, test = _run(name)
    for outcome in (result.outcome, result.reference):
        model = outcome.model
        predicted = model.predict(test.X)
        assert predicted.shape == test.y.shape
        assert np.array_equal(predicted, _classes(outcome.values["test_scores"]))
        assert float((predicted == test.y).mean()) == outcome.metrics["accuracy"]
    assert result.model is result.outcome.model


@pytest.mark.parametrize("name", ["cencg", "fedcg-secure", "dsg", "fdskl", "mvl", "h-fedmv"])
def test_decision_scores_are_the_reported_test_scores(name: str) -> None:
    result, test = _run(name)
    with limited_threads():  # bit for bit needs the run's BLAS threads (one, by default)
        scores = result.model.decision_function(test.X)
    assert np.array_equal(scores, result.outcome.values["test_scores"])


def test_v_fedmv_scores_match_its_federated_test_phase() -> None:
    result, test = _run("v-fedmv")
    scores = result.model.decision_function(test.X)
    assert np.allclose(scores, result.outcome.values["test_scores"], rtol=1e-9, atol=1e-12)


def test_nri_dc_has_one_model_per_worker_whose_scores_average_to_the_metrics() -> None:
    from fedsec.protocols.nri_dc.models import roc_auc

    result, test = _run("nri-dc")
    model = result.model
    predicted = model.predict(test.X)
    assert predicted.shape == (len(model.names), test.n_samples)
    accuracy = float(np.mean([(p == test.y).mean() for p in predicted]))
    assert accuracy == result.outcome.metrics["accuracy"]
    auc = float(np.mean([roc_auc(test.y, p) for p in model.predict_proba(test.X)]))
    assert auc == result.outcome.metrics["roc_auc"]
    assert np.array_equal(model[model.names[0]].predict(test.X), predicted[0])


def test_secure_sum_trains_no_model() -> None:
    assert run(RunConfig(protocol="secure-sum", dataset="iris")).model is None


def test_a_model_refuses_rows_of_the_wrong_width() -> None:
    result, test = _run("cencg")
    with pytest.raises(DataError, match="reads rows of 4 features"):
        result.model.predict(test.X[:, :3])


def test_the_model_is_not_in_the_transcript() -> None:
    a, _ = _run("fedcg-naive")
    b = run(RunConfig(protocol="fedcg-naive", seed=3, secret_seed=3, **TINY["fedcg-naive"]))
    assert a.transcript.footer["head"] == b.transcript.footer["head"]
    assert "model" not in a.record.to_json()
