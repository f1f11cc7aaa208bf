"""Label inference from S-FedMV's FedAvg updates: exact for one sample under any optimizer and
for counts under SGD, refused where RMSProp hides the counts, back to the baseline under
update noise; the scorer puts an uninformed guess at its baseline."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from fedsec import registry
from fedsec.outcomes import Reconstruction
from fedsec.private_store import truth_key
from fedsec.runner import RunResult
from fedsec.views import build_view

pytest.importorskip("torch")

Tiny = Callable[..., RunResult]


def labels(result: RunResult, threat: str = "server", **params: object) -> dict[str, float]:
    view = build_view(result.transcript, threat, result.private)
    attack = registry.create("attack", "update-labels", params)
    reason = attack.not_applicable(view)
    if reason is not None:
        return {"not_applicable": reason}  # type: ignore[dict-item]
    return registry.create("scorer", "label-counts", {}).score(attack.run(view), result.private)


@pytest.mark.parametrize("optimizer", ["sgd", "rmsprop"])
def test_one_sample_gives_its_label_under_either_optimizer(tiny_sfedmv: Tiny,
                                                           optimizer: str) -> None:
    scores = labels(tiny_sfedmv(optimizer=optimizer, local_epochs=3, lr=0.01))
    assert scores["n_targets"] == 2
    assert scores["exact_rate"] == 1.0 and scores["label_error"] == 0.0


def test_sgd_counts_of_a_batch_are_read_from_the_bias(tiny_sfedmv: Tiny) -> None:
    scores = labels(tiny_sfedmv(local_rows=8, batch_size=8), clients=2)
    assert scores["n_targets"] == 2
    assert scores["label_error"] == 0.0 and scores["exact_rate"] == 1.0


def test_the_other_client_reads_the_label_from_the_average(tiny_sfedmv: Tiny) -> None:
    scores = labels(tiny_sfedmv(backend="noise"), "party1", other_rows=1)
    assert scores["exact_rate"] == 1.0


def test_rmsprop_on_several_samples_is_refused_with_the_reason(tiny_sfedmv: Tiny) -> None:
    scores = labels(tiny_sfedmv(local_rows=8, optimizer="rmsprop"))
    assert "rmsprop on several samples" in str(scores["not_applicable"])


def test_update_noise_hides_the_counts(tiny_sfedmv: Tiny) -> None:
    clean = labels(tiny_sfedmv(local_rows=8, batch_size=8))
    noisy = labels(tiny_sfedmv(local_rows=8, batch_size=8, clip=0.1, noise_multiplier=1.0))
    assert noisy["label_error"] > clean["label_error"]
    assert noisy["advantage"] < 0.5


def test_an_uninformed_guess_scores_at_the_baseline() -> None:
    # the victim's labels are skewed, the others' balanced: a uniform random guess knows as
    # much as the others' distribution does
    rng = np.random.default_rng(0)
    truth = {truth_key(f"party{i}", "value", "sequences", "y"): rng.integers(0, 3, 400)
             for i in (2, 3)}
    key = truth_key("party1", "value", "sequences", "y")
    truth[key] = rng.choice(3, size=400, p=[0.7, 0.2, 0.1])
    guess = Reconstruction(attack="a", threat="server", baseline={},
                           estimates={key: rng.integers(0, 3, 400)})
    scores = registry.create("scorer", "label-counts", {}).score(guess, truth)
    assert scores["baseline_label_error"] > 0.3
    assert abs(scores["advantage"]) < 0.15
    exact = Reconstruction(attack="a", threat="server", baseline={},
                           estimates={key: np.sort(truth[key])})
    assert registry.create("scorer", "label-counts", {}).score(exact, truth)["advantage"] == 1.0
