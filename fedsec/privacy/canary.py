"""Canaries for a one-run audit in the white-box setting (canary gradients).

Steinke, Nasr and Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS 2023,
section 6: the auditor draws ``m`` canary vectors, each of norm ``clip`` (the most one unit may
move what is released), includes each in a contribution independently with probability 1/2,
and the adversary scores each canary by the inner product of what it received with it; its
most confident guesses feed :func:`fedsec.privacy.empirical.one_run_audit`. Random directions
in a space of dimension well above ``m`` are nearly orthogonal, so one canary's score is its
own inclusion (``clip`` or 0) plus the noise and a small cross-talk from the others.

The pure steps are here; :func:`gaussian_mechanism_audit` runs them against the Gaussian
mechanism itself (the mechanism ``gaussian-noise`` declares), the reference an audit of a
protocol is compared with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from fedsec.errors import ValidationError

if TYPE_CHECKING:  # pragma: no cover - the bound needs scipy, which a run without it never loads
    from fedsec.privacy.empirical import OneRunBound

#: The (n_included, n_excluded) guess counts tried by default, as fractions of the canaries.
GUESS_FRACTIONS = (0.01, 0.05, 0.1, 0.25, 0.5)


def draw_canaries(n_canaries: int, dimension: int, norm: float,
                  rng: np.random.Generator) -> np.ndarray:
    """``n_canaries`` random directions in ``dimension`` coordinates, each of L2 norm ``norm``
    (one a row).

    Examples
    --------
    >>> canaries = draw_canaries(3, 50, 2.0, np.random.default_rng(0))
    >>> canaries.shape, np.round(np.linalg.norm(canaries, axis=1), 12).tolist()
    ((3, 50), [2.0, 2.0, 2.0])
    """
    if n_canaries < 1 or dimension < 1 or not norm > 0:
        raise ValidationError(f"Canaries need a count >= 1, a dimension >= 1 and a norm > 0. "
                              f"Got {n_canaries}, {dimension} and {norm}.")
    directions = rng.standard_normal((n_canaries, dimension))
    return norm * directions / np.linalg.norm(directions, axis=1, keepdims=True)


def draw_canary_signs(n_canaries: int, dimension: int,
                      rng: np.random.Generator) -> np.ndarray:
    """``n_canaries`` random sign directions in ``dimension`` coordinates, one a row, as
    ``int8`` signs: the canary of norm ``norm`` is the row times ``norm / sqrt(dimension)``.

    As nearly orthogonal as Gaussian directions (two canaries' inner product has mean 0 and
    standard deviation ``norm^2 / sqrt(dimension)`` alike), at one random bit and one byte a
    coordinate: 1,000 canaries in 10,000 coordinates take 10 MB and milliseconds, where
    Gaussian ones take 80 MB and ten normal variates' time
    (:func:`sign_block`, :func:`sign_scores` use them without expanding them).

    Examples
    --------
    >>> signs = draw_canary_signs(3, 8, np.random.default_rng(0))
    >>> signs.dtype, signs.shape, sorted(set(signs.ravel().tolist()))
    (dtype('int8'), (3, 8), [-1, 1])
    """
    if n_canaries < 1 or dimension < 1:
        raise ValidationError(f"Canaries need a count >= 1 and a dimension >= 1. Got "
                              f"{n_canaries} and {dimension}.")
    size = n_canaries * dimension
    bits = np.unpackbits(np.frombuffer(rng.bytes(-(-size // 8)), dtype=np.uint8), count=size)
    return (2 * bits.astype(np.int8) - 1).reshape(n_canaries, dimension)


def sign_block(signs: np.ndarray, included: np.ndarray, norm: float) -> np.ndarray:
    """The sum of the included sign canaries of norm ``norm`` (:func:`draw_canary_signs`):
    what inserting them adds to a vector of zeros.

    Examples
    --------
    >>> signs = np.array([[1, -1], [1, 1]], dtype=np.int8)
    >>> np.round(sign_block(signs, np.array([True, True]), np.sqrt(2.0)), 12).tolist()
    [2.0, 0.0]
    """
    included = np.asarray(included, dtype=bool)
    counts = np.asarray(signs)[included].sum(axis=0, dtype=np.int64)
    return counts * (norm / np.sqrt(np.shape(signs)[1]))


def sign_scores(received: np.ndarray, signs: np.ndarray, norm: float,
                rows: int = 128) -> np.ndarray:
    """:func:`canary_scores` of sign canaries of norm ``norm``: each one's inner product
    with ``received`` over its squared norm, ``rows`` canaries at a time (never the whole
    matrix in floating point).

    Examples
    --------
    >>> signs = draw_canary_signs(4, 50, np.random.default_rng(2))
    >>> canaries = signs * (3.0 / np.sqrt(50))
    >>> received = canaries[0] + canaries[2]
    >>> bool(np.allclose(sign_scores(received, signs, 3.0), canary_scores(received, canaries)))
    True
    """
    received = np.asarray(received, dtype=float)
    signs = np.asarray(signs)
    out = np.empty(signs.shape[0])
    for start in range(0, signs.shape[0], rows):
        out[start:start + rows] = signs[start:start + rows].astype(float) @ received
    return out / (norm * np.sqrt(signs.shape[1]))


def draw_inclusion(n_canaries: int, rng: np.random.Generator) -> np.ndarray:
    """Which canaries go in: each independently with probability 1/2.

    Examples
    --------
    >>> draw_inclusion(8, np.random.default_rng(1)).dtype
    dtype('bool')
    """
    return rng.random(n_canaries) < 0.5


def insert_canaries(values: np.ndarray, canaries: np.ndarray,
                    included: np.ndarray) -> np.ndarray:
    """``values`` plus the sum of the included canaries.

    Examples
    --------
    >>> insert_canaries(np.zeros(2), np.eye(2), np.array([True, False])).tolist()
    [1.0, 0.0]
    """
    values = np.asarray(values, dtype=float)
    canaries = np.asarray(canaries, dtype=float)
    included = np.asarray(included, dtype=bool)
    if canaries.ndim != 2 or canaries.shape[1] != values.size \
            or included.shape != (canaries.shape[0],):
        raise ValidationError(f"Canaries of shape {canaries.shape} and {included.shape} "
                              f"inclusion flags do not fit a vector of {values.size} values: "
                              "give one canary a row, as long as the vector, and one flag each.")
    return values + canaries[included].sum(axis=0)


def canary_scores(received: np.ndarray, canaries: np.ndarray) -> np.ndarray:
    """How strongly ``received`` holds each canary: its inner product with each, over the
    canary's squared norm (about 1 when included, 0 when not, before noise).

    Examples
    --------
    >>> canary_scores(np.array([2.0, 0.0]), np.array([[2.0, 0.0], [0.0, 2.0]])).tolist()
    [1.0, 0.0]
    """
    canaries = np.asarray(canaries, dtype=float)
    return canaries @ np.asarray(received, dtype=float) / np.sum(canaries**2, axis=1)


def default_guesses(n_canaries: int) -> list[tuple[int, int]]:
    """The guess counts tried by default: :data:`GUESS_FRACTIONS` of the canaries each way.

    Examples
    --------
    >>> default_guesses(1000)
    [(10, 10), (50, 50), (100, 100), (250, 250), (500, 500)]
    """
    return sorted({(max(1, int(f * n_canaries)),) * 2 for f in GUESS_FRACTIONS})


def gaussian_mechanism_audit(n_canaries: int, sigma: float, clip: float,
                             rng: np.random.Generator, *, dimension: int | None = None,
                             n_guesses: Sequence[tuple[int, int]] | None = None,
                             beta: float = 0.05, delta: float = 0.0) -> OneRunBound:
    """One white-box one-run audit of the Gaussian mechanism with noise ``sigma`` per
    coordinate: canaries of norm ``clip`` in ``dimension`` coordinates (ten per canary by
    default), inserted, noised once, scored, bounded.

    Examples
    --------
    >>> bound = gaussian_mechanism_audit(1000, 0.0, 1.0, np.random.default_rng(0))
    >>> bound.epsilon >= 3, round(bound.ceiling, 2)  # no noise: near the ceiling
    (True, 5.38)
    """
    from fedsec.privacy.empirical import one_run_audit

    if not sigma >= 0:
        raise ValidationError(f"sigma must be >= 0. Got {sigma!r} instead.")
    dimension = 10 * n_canaries if dimension is None else dimension
    canaries = draw_canaries(n_canaries, dimension, clip, rng)
    included = draw_inclusion(n_canaries, rng)
    released = insert_canaries(np.zeros(dimension), canaries, included)
    released = released + rng.normal(0.0, sigma, size=dimension)
    scores = canary_scores(released, canaries)
    return one_run_audit(included, scores,
                         n_guesses=default_guesses(n_canaries) if n_guesses is None
                         else n_guesses, beta=beta, delta=delta)
