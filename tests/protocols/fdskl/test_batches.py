"""Mini-batch DSG's maths: ownership of features, the pairs a batch needs, the averaged step."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec.protocols.fdskl import batches, dsg
from fedsec.protocols.fdskl import random_features as rf


@given(start=st.integers(0, 40), length=st.integers(0, 40), stride=st.integers(1, 4),
       group=st.integers(1, 4), data=st.data())
@settings(max_examples=80, deadline=None)
def test_owned_features_follow_their_iteration_s_turn(start: int, length: int, stride: int,
                                                      group: int, data) -> None:
    residue = data.draw(st.integers(0, stride - 1))
    stop = start + length
    got = batches.owned(start, stop, residue, stride, group)
    expected = [j for j in range(start, stop) if (j // group) % stride == residue]
    assert got.tolist() == expected
    assert np.arange(100)[batches.owned_slice(start, stop, residue, stride, group)].tolist() \
        == expected
    assert batches.n_owned(stop, residue, stride, group) == len(
        [j for j in range(stop) if (j // group) % stride == residue])


def test_revisited_samples_only_need_the_new_features() -> None:
    last = np.full(4, -1)
    first = batches.segments(np.array([1, 3, 1]), 0, last)
    second = batches.segments(np.array([3, 0]), 3, last)
    assert first == [(1, 0, 1), (3, 0, 2), (1, 1, 3)]
    assert second == [(3, 2, 4), (0, 0, 5)]


def test_a_batch_needs_every_feature_since_each_sample_s_last_iteration() -> None:
    last = np.full(4, -1)
    # iteration 0: samples 1, 3; iteration 1: samples 1, 1 (twice: nothing new the second time)
    got = batches.segments(np.array([1, 3, 1, 1]), 0, last, batch_size=2,
                           features_per_iteration=2)
    assert got == [(1, 0, 2), (3, 0, 2), (1, 2, 4), (1, 4, 4)]
    assert last.tolist() == [-1, 1, -1, 0]


def test_the_step_averages_the_functional_gradient_over_samples_and_features() -> None:
    rng = np.random.default_rng(3)
    g, phis = rng.normal(size=5), rng.normal(size=(5, 3))
    expected = -0.3 * (g[:, None] * phis).mean(axis=0) / 3  # (1/B) sum_b, each feature 1/r
    assert batches.new_alphas(g, phis, step=0.3) == pytest.approx(expected, rel=1e-12)


def test_one_sample_one_feature_is_equation_7_exactly() -> None:
    derivative = rf.loss_derivative("logistic")
    g = batches.batch_gradients(np.array([0.7]), np.array([-1.0]), derivative)
    assert batches.new_alphas(g, np.array([[0.4]]), step=0.1).tolist() == [
        -0.1 * derivative(0.7, -1.0) * 0.4]


@pytest.mark.parametrize(("batch_size", "features"), [(1, 1), (4, 3), (6, 1)])
def test_dsg_equals_a_direct_mini_batch_recursion(batch_size: int, features: int) -> None:
    rng = np.random.default_rng(7)
    X, y = rng.uniform(size=(20, 3)), np.sign(rng.normal(size=20))
    T, seed = 30, 5
    params = dsg.DSGParams(n_iterations=T, batch_size=batch_size,
                           features_per_iteration=features, block=7, kernel_width=0.7)
    alpha, bank = dsg.train(params, X, y, seed)
    # the oracle: every feature at every sample up front, then the recursion as written
    samples = dsg.schedule(seed, 20, T, batch_size).samples.reshape(T, batch_size)
    F = T * features
    Phi = rf.feature_map(X @ bank.directions(0, F).T + bank.phases(0, F))
    derivative = rf.loss_derivative(params.loss)
    ref = np.zeros(F)
    for t in range(T):
        old, new = slice(0, t * features), slice(t * features, (t + 1) * features)
        g = np.array([derivative(Phi[s, old] @ ref[old], y[s]) for s in samples[t]])
        ref[new] = -params.step * (g[:, None] * Phi[samples[t], new]).mean(axis=0) / features
        ref[old] *= 1.0 - params.step * params.regularization
    assert alpha == pytest.approx(ref, rel=1e-10, abs=1e-14)
