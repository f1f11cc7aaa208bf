"""Points on a sphere around the landmarks' affine hull: the isotropic-prior estimate against
references (closed forms, numerical integration) and against the affine-hull projection."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate

from fedsec.geometry.sphere_prior import (
    CHI2_1_95,
    fit_radius_prior,
    hull_split,
    isotropic_prior_points,
    mean_resultant_length,
    radius_log_likelihood,
)


def distances(X, W):
    return ((X[:, None, :] - W[None]) ** 2).sum(-1)


def test_hull_split_is_the_orthogonal_projection_and_the_rest():
    rng = np.random.default_rng(0)
    W, X = rng.random((3, 5)), rng.random((7, 5))

    centre, radius, basis = hull_split(distances(X, W), W)

    Q, _ = np.linalg.qr((W[1:] - W[0]).T)  # reference: project onto the hull directly
    projection = W[0] + (X - W[0]) @ Q @ Q.T
    np.testing.assert_allclose(centre, projection, atol=1e-12)
    np.testing.assert_allclose(radius, np.linalg.norm(X - projection, axis=1), atol=1e-12)
    assert basis.shape == (5, 3)
    np.testing.assert_allclose(basis.T @ basis, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(basis.T @ Q, 0.0, atol=1e-12)


@pytest.mark.parametrize(("q", "offset", "scale"), [(1, 0.0, 0.3), (1, 0.5, 0.2), (2, 0.4, 0.1),
                                                    (3, 0.0, 1.0), (7, 1.0, 0.2)])
def test_radius_likelihood_is_a_density(q, offset, scale):
    total, _ = integrate.quad(
        lambda r: float(np.exp(radius_log_likelihood(np.array([r]), q, offset, scale)[0])),
        0.0, offset + 12 * scale, points=[offset], limit=200)

    assert total == pytest.approx(1.0, abs=1e-7)


def test_mean_resultant_length_matches_the_closed_forms():
    kappa = np.array([1e-3, 0.5, 2.0, 30.0, 800.0])

    np.testing.assert_allclose(mean_resultant_length(1, kappa), np.tanh(kappa), rtol=1e-10)
    langevin = 1 / np.tanh(kappa) - 1 / kappa  # q = 3: coth(kappa) - 1 / kappa
    np.testing.assert_allclose(mean_resultant_length(3, kappa), langevin, rtol=1e-6)
    assert mean_resultant_length(4, np.array([0.0]))[0] == 0.0


def test_fit_recovers_the_offset_and_scale_of_the_radii():
    rng = np.random.default_rng(2)
    z = rng.normal(0.0, 0.2, size=(3000, 3)) + np.array([1.0, 0.0, 0.0])

    fit = fit_radius_prior(np.linalg.norm(z, axis=1), 3)

    assert fit.offset == pytest.approx(1.0, abs=0.03)
    assert fit.scale == pytest.approx(0.2, abs=0.02)
    assert fit.statistic > CHI2_1_95


def test_radii_centred_on_the_hull_give_no_evidence_of_an_offset():
    rng = np.random.default_rng(3)
    z = rng.normal(0.0, 0.3, size=(400, 4))

    fit = fit_radius_prior(np.linalg.norm(z, axis=1), 4)

    assert fit.statistic < CHI2_1_95


def test_few_rows_fit_no_prior():
    fit = fit_radius_prior(np.array([0.5, 0.6, 0.7]), 2)

    assert (fit.offset, fit.statistic) == (0.0, 0.0)


def test_prior_estimate_beats_the_hull_projection_when_the_points_lie_off_the_hull():
    rng = np.random.default_rng(4)
    W = np.array([[0.1, 0.1, 0.1, 0.1], [0.9, 0.1, 0.1, 0.1], [0.1, 0.9, 0.1, 0.1]])
    X = np.clip(rng.normal(0.5, 0.12, size=(300, 4)), 0.0, 1.0)  # the box centre, off the hull

    fit = isotropic_prior_points(distances(X, W), W, direction=np.full(4, 0.5))

    hull_error = np.linalg.norm(fit.centre - X, axis=1).mean()
    prior_error = np.linalg.norm(fit.points - X, axis=1).mean()
    assert fit.prior.statistic > CHI2_1_95
    assert prior_error < 0.6 * hull_error
