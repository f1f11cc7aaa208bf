"""FedCG's ``start_seed``: new starts on fixed landmarks, and the reverse (the paper's two
protocols)."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.errors import ValidationError
from fedsec.protocols.fedcg.setup import FedCGParams, derive_shared, seed_material
from fedsec.runner import RunConfig, run


def shared_for(secret_seed: int, start_seed: int | None):
    params = FedCGParams(landmark_method="U", n_landmarks=6, start_seed=start_seed)
    return derive_shared(params, seed_material(secret_seed), n_features=4, n_rows=20,
                         n_outputs=1, base_gamma=0.5, mean=None, std=None, pool=None)


def test_start_seed_sets_the_start_and_nothing_else() -> None:
    base = shared_for(0, None)
    new_start = shared_for(0, 1)
    new_landmarks = shared_for(1, 1)
    assert np.array_equal(new_start.W, base.W)
    assert not np.allclose(new_start.alpha0, base.alpha0)
    assert not np.allclose(new_landmarks.W, new_start.W)
    assert np.array_equal(new_landmarks.alpha0, new_start.alpha0)
    # the clients' stream goes on as without a start seed (FedCG secure's label noise)
    assert np.array_equal(new_start.rng.normal(size=3), base.rng.normal(size=3))
    assert not np.allclose(shared_for(1, None).alpha0, base.alpha0)


def test_start_seed_is_validated() -> None:
    with pytest.raises(ValidationError, match="start_seed"):
        FedCGParams(start_seed=-1)


def regime_run(secret_seed: int, start_seed: int):
    return run(RunConfig(protocol="fedcg-naive", dataset="sonar", seed=0, split_seed=0,
                         secret_seed=secret_seed, scaling="minmax",
                         params={"landmark_method": "P", "n_landmarks": 20,
                                 "start_seed": start_seed}))


def test_the_two_regimes_vary_what_they_should() -> None:
    fixed = regime_run(0, 0)
    new_start = regime_run(0, 1)  # the paper's Tables 1-3: same landmarks, another start
    new_landmarks = regime_run(1, 0)  # its Tables 4-6: same start, other landmarks
    landmarks = [r.outcome.truth["landmarks"] for r in (fixed, new_start, new_landmarks)]
    assert np.array_equal(landmarks[0], landmarks[1])
    assert not np.allclose(landmarks[0], landmarks[2])
    # CG reaches one solution from any start: the paper's 0.00 standard deviations
    alpha = [r.outcome.values["alpha"] for r in (fixed, new_start)]
    assert np.allclose(alpha[0], alpha[1], rtol=1e-6, atol=1e-9 * np.abs(alpha[0]).max())
    assert not np.allclose(fixed.outcome.values["alpha"], new_landmarks.outcome.values["alpha"])
    for result in (fixed, new_start, new_landmarks):
        assert result.record.comparison.agrees
        for key in ("accuracy", "recall", "precision"):
            assert result.outcome.metrics[key] == result.reference.metrics[key]
