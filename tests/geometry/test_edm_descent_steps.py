"""Invariants of Alternating Descent's building blocks: the cubic, the step, the colouring."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fedsec.geometry.completers.alternating_descent import (
    _cubic_real_roots,
    best_quartic_step,
    colour_classes,
)

finite = st.floats(-50, 50, allow_nan=False, width=64)


@settings(max_examples=200, deadline=None)
@given(finite, finite, finite)
def test_cubic_roots_are_roots_and_none_is_missed(b, c, d):
    roots = _cubic_real_roots(np.array([b]), np.array([c]), np.array([d]))[0]

    def cubic(t):
        return ((t + b) * t + c) * t + d

    scale = 1 + abs(b) ** 3 + abs(c) ** 1.5 + abs(d)
    assert np.all(np.abs(cubic(roots)) <= 1e-6 * scale)
    reference = np.roots([1.0, b, c, d])
    clearly_real = reference[np.abs(reference.imag) < 1e-9].real
    for root in clearly_real:
        # Each real root of the reference is (close to) one of ours, or a double root
        # the closed form reports as nearby.
        assert np.min(np.abs(roots - root)) <= 1e-4 * (1 + abs(root))


@settings(max_examples=100, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 8)), elements=finite),
       arrays(np.float64, st.tuples(st.integers(1, 8)), elements=finite))
def test_step_is_the_global_minimiser_of_the_coordinate_quartic(a, r):
    size = min(a.size, r.size)
    a, r = a[:size], r[:size]

    def f(t):
        return np.sum((t**2 + 2 * a[:, None] * t + r[:, None]) ** 2, axis=0)

    step = best_quartic_step(np.array([float(size)]), np.array([a.sum()]),
                             np.array([(a * a).sum()]), np.array([r.sum()]),
                             np.array([(a * r).sum()]))[0]

    grid = np.linspace(-200, 200, 40001)
    rounding = 1e-9 * size * (1 + np.max(a * a) + np.max(np.abs(r))) ** 2
    assert f(np.array([step]))[0] <= f(grid).min() + rounding
    assert f(np.array([step]))[0] <= f(np.array([0.0]))[0] + rounding  # never worse than staying


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 25), st.floats(0.0, 1.0), st.integers(0, 2**32 - 1))
def test_colour_classes_partition_the_points_into_independent_sets(n, density, seed):
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n, n)) < density, 1)
    known = upper | upper.T

    classes = colour_classes(known)

    assert sorted(np.concatenate(classes).tolist()) == list(range(n))
    for members in classes:
        assert not known[np.ix_(members, members)].any()


def test_the_attack_structure_puts_all_private_points_in_one_class():
    n, m = 30, 5
    known = np.ones((n + m, n + m), bool)
    known[:n, :n] = False
    np.fill_diagonal(known, False)

    classes = colour_classes(known)

    assert len(classes) == m + 1
    assert any(set(c.tolist()) == set(range(n)) for c in classes)
