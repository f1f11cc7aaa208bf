"""Canaries for a one-run audit in the white-box setting (canary gradients).

Steinke, Nasr and Jagielski, "Privacy Auditing with One (1) Training Run", NeurIPS 2023,
section 6: the auditor draws ``m`` canary vectors, each of norm ``clip`` (the most one unit may
move what is released), includes each in a contribution independently with probability 1/2,
and the adversary scores each canary by the inner product of what it received with it; its
most confident guesses feed :func:`fedsec.privacy.empirical.one_run_audit`. The canaries
are exactly orthogonal (:func:`draw_canary_signs`), so one canary's score is its own
inclusion (1 or 0) plus the noise, with no cross-talk from the others.

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
#: Chosen on the Gaussian mechanism itself (:func:`gaussian_mechanism_audit`, 200 audits each
#: at epsilon 2, 4 and 8 with 1,000 canaries): guessing on the 5% most confident each way gave
#: median bounds of 0.50, 0.58 and 0.59 of epsilon under the Gaussian claim, where adding the
#: 10% count gave 0.47, 0.54 and 0.55 (the union bound costs more than the second count finds)
#: and the former 1% to 50% schedule less again.
GUESS_FRACTIONS = (0.05,)


def _parity(values: np.ndarray) -> np.ndarray:
    """The parity of each non-negative int64's set bits (0 or 1)."""
    for shift in (32, 16, 8, 4, 2, 1):
        values = values ^ (values >> shift)
    return values & 1


def draw_canary_signs(n_canaries: int, dimension: int,
                      rng: np.random.Generator) -> np.ndarray:
    """``n_canaries`` exactly orthogonal random sign directions in ``dimension`` coordinates (a
    power of two at least ``n_canaries``), one a row, as ``int8`` signs: the canary of norm
    ``norm`` is the row times ``norm / sqrt(dimension)``.

    Distinct rows of the Sylvester Hadamard matrix of order ``dimension`` (entry ``(i, j)`` is
    ``(-1)^popcount(i & j)``), drawn at random, with every column's sign flipped at random.
    Any two are orthogonal, so a canary's score (:func:`sign_scores`) is its own inclusion
    plus noise, with no cross-talk from the others, as with the one-coordinate ("Dirac")
    canaries of Steinke, Nasr and Jagielski's white-box audit, of which these are a random
    rotation: each canary still spreads over every coordinate of its block.

    Examples
    --------
    >>> signs = draw_canary_signs(3, 8, np.random.default_rng(0))
    >>> signs.dtype, signs.shape, sorted(set(signs.ravel().tolist()))
    (dtype('int8'), (3, 8), [-1, 1])
    >>> (signs.astype(int) @ signs.T.astype(int)).tolist()  # orthogonal
    [[8, 0, 0], [0, 8, 0], [0, 0, 8]]
    """
    if n_canaries < 1 or dimension < n_canaries or dimension & (dimension - 1):
        raise ValidationError(f"Orthogonal canaries need a count >= 1 and a dimension that is "
                              f"a power of two at least the count. Got {n_canaries} and "
                              f"{dimension}.")
    rows = rng.choice(dimension, size=n_canaries, replace=False).astype(np.int64)
    flips = rng.integers(0, 2, size=dimension, dtype=np.int64)
    columns = np.arange(dimension, dtype=np.int64)
    out = np.empty((n_canaries, dimension), dtype=np.int8)
    for start in range(0, n_canaries, 256):  # 256 rows at a time: int64 scratch stays small
        bits = _parity(rows[start:start + 256, None] & columns[None, :]) ^ flips[None, :]
        out[start:start + 256] = 1 - 2 * bits
    return out


def canary_dimension(n_canaries: int) -> int:
    """The smallest power of two at least ``n_canaries``: the default canary block.

    Examples
    --------
    >>> canary_dimension(1000), canary_dimension(1024), canary_dimension(1)
    (1024, 1024, 1)
    """
    return 1 << max(0, int(n_canaries) - 1).bit_length()


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
    >>> signs = draw_canary_signs(4, 64, np.random.default_rng(2))
    >>> canaries = signs * (3.0 / np.sqrt(64))
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
    [(50, 50)]
    """
    return sorted({(max(1, int(f * n_canaries)),) * 2 for f in GUESS_FRACTIONS})


def gaussian_mechanism_audit(n_canaries: int, sigma: float, clip: float,
                             rng: np.random.Generator, *, dimension: int | None = None,
                             n_guesses: Sequence[tuple[int, int]] | None = None,
                             beta: float = 0.05, delta: float = 0.0,
                             claim: str = "any") -> OneRunBound:
    """One white-box one-run audit of the Gaussian mechanism with noise ``sigma`` per
    coordinate: orthogonal canaries of norm ``clip`` in ``dimension`` coordinates (the
    smallest power of two at least ``n_canaries`` by default), inserted, noised once, scored,
    bounded under ``claim`` (:func:`fedsec.privacy.empirical.one_run_audit`).

    Examples
    --------
    >>> bound = gaussian_mechanism_audit(1000, 0.0, 1.0, np.random.default_rng(0))
    >>> bound.epsilon >= 3, round(bound.ceiling, 2)  # no noise: near the ceiling
    (True, 3.49)
    """
    from fedsec.privacy.empirical import one_run_audit

    if not sigma >= 0:
        raise ValidationError(f"sigma must be >= 0. Got {sigma!r} instead.")
    if not clip > 0:
        raise ValidationError(f"The canaries' norm (clip) must be > 0. Got {clip!r} instead.")
    dimension = canary_dimension(n_canaries) if dimension is None else dimension
    signs = draw_canary_signs(n_canaries, dimension, rng)
    included = draw_inclusion(n_canaries, rng)
    released = sign_block(signs, included, clip) + rng.normal(0.0, sigma, size=dimension)
    scores = sign_scores(released, signs, clip)
    return one_run_audit(included, scores,
                         n_guesses=default_guesses(n_canaries) if n_guesses is None
                         else n_guesses, beta=beta, delta=delta, claim=claim)
