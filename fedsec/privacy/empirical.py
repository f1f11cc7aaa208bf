"""Empirical lower bounds on epsilon from an adversary's guesses.

Two estimators, both at confidence ``1 - beta``: a mechanism whose outputs let an adversary
guess this well cannot be (epsilon, delta)-DP for any epsilon below the bound (except with
probability ``beta`` over the audit's own randomness).

- **One run** (Steinke, Nasr and Jagielski, "Privacy Auditing with One (1) Training Run",
  NeurIPS 2023, Theorem 3.1 and Algorithm 1): ``m`` canaries, each included independently
  with probability 1/2; the adversary guesses inclusion for ``r`` of them (abstaining on the
  rest) and ``v`` guesses are right. Under (epsilon, delta)-DP,
  ``P[W >= v] <= P[Binomial(r, q) >= v] + 2 m delta max_i P[v - i <= Binomial(r, q) < v] / i``
  with ``q = e^epsilon / (1 + e^epsilon)`` (:func:`one_run_p_value`); the bound is the largest
  epsilon whose p-value stays below ``beta`` (:func:`one_run_epsilon`). With all ``m`` guesses
  right it reaches its ceiling, which grows like ``log(m / log(1 / beta))``
  (:func:`one_run_ceiling`).
- **Many runs** (the hypothesis test of Jagielski, Ullman and Oprea, "Auditing differentially
  private machine learning", NeurIPS 2020; Kairouz, Oh and Viswanath 2015): from a
  distinguisher's false positives and false negatives over independent runs, Clopper-Pearson
  upper bounds on both rates give ``epsilon >= log((1 - delta - FNR) / FPR)``
  (:func:`hypothesis_test_epsilon`).

Every function is pure, on counts or numpy arrays.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import beta as beta_distribution
from scipy.stats import binom

from fedsec.errors import ValidationError


def _check_confidence(beta: float, delta: float) -> None:
    if not 0 < beta < 1:
        raise ValidationError(f"beta (1 - confidence) must be in (0, 1). Got {beta!r} instead.")
    if not 0 <= delta < 1:
        raise ValidationError(f"delta must be in [0, 1). Got {delta!r} instead.")


def _check_counts(m: int, r: int, v: int) -> None:
    if not 0 <= v <= r <= m:
        raise ValidationError(f"The counts must satisfy 0 <= correct (v) <= guesses (r) <= "
                              f"canaries (m). Got v={v}, r={r}, m={m}.")


def one_run_p_value(m: int, r: int, v: int, epsilon: float, delta: float = 0.0) -> float:
    """The largest probability of ``v`` or more right guesses out of ``r`` (among ``m``
    canaries) that an (epsilon, delta)-DP mechanism allows.

    Examples
    --------
    >>> round(one_run_p_value(10, 10, 10, 0.0), 6)  # epsilon 0: a fair coin, 2^-10
    0.000977
    >>> one_run_p_value(10, 10, 0, 1.0)
    1.0
    """
    _check_counts(m, r, v)
    _check_confidence(0.5, delta)
    if v == 0:
        return 1.0
    q = 1.0 / (1.0 + math.exp(-epsilon))  # right-guess rate of epsilon-DP randomized response
    tail = float(binom.sf(v - 1, r, q))  # P[Binomial(r, q) >= v]
    if delta == 0:
        return min(tail, 1.0)
    below = binom.pmf(np.arange(v - 1, -1, -1), r, q)  # P[B = v-1], P[B = v-2], ..., P[B = 0]
    alpha = float(np.max(np.cumsum(below) / np.arange(1, v + 1)))
    return min(tail + 2.0 * m * delta * alpha, 1.0)


def one_run_epsilon(m: int, r: int, v: int, *, beta: float = 0.05, delta: float = 0.0) -> float:
    """The lower bound on epsilon at confidence ``1 - beta`` from ``v`` right guesses out of
    ``r`` (among ``m`` canaries): the largest epsilon whose p-value is below ``beta``
    (0 when even epsilon 0 explains the guesses).

    Examples
    --------
    >>> round(one_run_epsilon(1000, 1000, 1000), 3)  # every guess right: the ceiling
    5.809
    >>> one_run_epsilon(1000, 1000, 500)
    0.0
    """
    _check_counts(m, r, v)
    _check_confidence(beta, delta)
    if one_run_p_value(m, r, v, 0.0, delta) >= beta:
        return 0.0
    low, high = 0.0, 1.0
    while one_run_p_value(m, r, v, high, delta) < beta:
        low, high = high, 2.0 * high
        if high > 1e3:  # pragma: no cover - needs beta below about e^-1000
            return low
    for _ in range(60):  # bisection: p-value(low) < beta <= p-value(high)
        middle = 0.5 * (low + high)
        if one_run_p_value(m, r, v, middle, delta) < beta:
            low = middle
        else:
            high = middle
    return low


def one_run_ceiling(m: int, *, beta: float = 0.05, delta: float = 0.0) -> float:
    """The largest bound ``m`` canaries can give: every one guessed, every guess right.

    Examples
    --------
    >>> round(one_run_ceiling(100), 3), round(one_run_ceiling(1000), 3)
    (3.493, 5.809)
    """
    return one_run_epsilon(m, m, m, beta=beta, delta=delta)


@dataclass(frozen=True, kw_only=True)
class OneRunBound:
    """The result of a one-run audit: the bound and the guesses it came from."""

    epsilon: float
    """The lower bound on epsilon at confidence ``1 - beta``."""
    ceiling: float
    """The largest bound these guesses could give (the most guesses tried, all right)."""
    n_canaries: int
    n_guesses: int
    n_correct: int
    beta: float
    delta: float
    claim: str = "any"
    """What the guesses were tested against: ``"any"`` (epsilon, delta)-DP mechanism, or the
    ``"gaussian"`` mechanism with that (epsilon, delta)."""


def guesses_from_scores(scores: np.ndarray, n_included: int, n_excluded: int) -> np.ndarray:
    """Guess 1 (included) for the ``n_included`` highest scores, 0 (excluded) for the
    ``n_excluded`` lowest, and abstain (-1) on the rest.

    Examples
    --------
    >>> guesses_from_scores(np.array([0.1, 0.9, 0.5, 0.2]), 1, 1).tolist()
    [0, 1, -1, -1]
    """
    scores = np.asarray(scores, dtype=float).ravel()
    if n_included < 0 or n_excluded < 0 or n_included + n_excluded > scores.size:
        raise ValidationError(f"Cannot guess {n_included} included and {n_excluded} excluded "
                              f"among {scores.size} canaries: the counts must be >= 0 and add "
                              "up to at most the number of canaries.")
    order = np.argsort(scores, kind="stable")
    guesses = np.full(scores.size, -1, dtype=int)
    guesses[order[:n_excluded]] = 0
    if n_included:
        guesses[order[scores.size - n_included:]] = 1
    return guesses


def one_run_audit(included: np.ndarray, scores: np.ndarray, *,
                  n_guesses: Sequence[tuple[int, int]], beta: float = 0.05,
                  delta: float = 0.0, claim: str = "any") -> OneRunBound:
    """The best one-run bound over the guess counts ``n_guesses`` (``(n_included,
    n_excluded)`` pairs, chosen before looking at ``included``), each tested at confidence
    ``1 - beta / len(n_guesses)`` so that the best holds at ``1 - beta`` (a union bound).

    ``included`` says which canaries were in (the ground truth); ``scores`` how strongly the
    adversary believes each one was. ``claim`` is what the guesses are tested against:
    ``"any"`` an (epsilon, delta)-DP mechanism (:func:`one_run_epsilon`), ``"gaussian"`` the
    Gaussian mechanism with that (epsilon, delta), a stronger claim that the same guesses
    reject further (:func:`fedsec.privacy.gaussian_audit.gaussian_one_run_epsilon`).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> included = rng.random(1000) < 0.5
    >>> bound = one_run_audit(included, included.astype(float), n_guesses=[(400, 400)])
    >>> bound.n_correct == bound.n_guesses == 800, round(bound.epsilon, 2)
    (True, 5.59)
    """
    included = np.asarray(included, dtype=bool).ravel()
    scores = np.asarray(scores, dtype=float).ravel()
    if included.shape != scores.shape:
        raise ValidationError(f"One score per canary: {scores.size} scores for "
                              f"{included.size} canaries.")
    if not np.all(np.isfinite(scores)):
        raise ValidationError("The adversary's scores hold NaN or infinite values; give every "
                              "canary a finite score.")
    if not n_guesses:
        raise ValidationError("n_guesses is empty: give at least one (n_included, n_excluded) "
                              "pair.")
    bound = _bound_of(claim)
    m, level = included.size, beta / len(n_guesses)
    best: tuple[float, int, int] = (-1.0, 0, 0)
    for k_in, k_out in n_guesses:
        guesses = guesses_from_scores(scores, min(k_in, m), min(k_out, m - min(k_in, m)))
        made = guesses >= 0
        r, v = int(made.sum()), int(np.sum(guesses[made] == included[made]))
        epsilon = bound(m, r, v, beta=level, delta=delta)
        if epsilon > best[0]:
            best = (epsilon, r, v)
    most = max(min(m, k_in + k_out) for k_in, k_out in n_guesses)  # every guess right
    return OneRunBound(epsilon=best[0], ceiling=bound(m, most, most, beta=level, delta=delta),
                       n_canaries=m, n_guesses=best[1], n_correct=best[2], beta=beta,
                       delta=delta, claim=claim)


#: What a one-run audit can test its guesses against (:func:`one_run_audit`).
CLAIMS = ("gaussian", "any")


def _bound_of(claim: str) -> Callable[..., float]:
    if claim == "any":
        return one_run_epsilon
    if claim == "gaussian":
        from fedsec.privacy.gaussian_audit import gaussian_one_run_epsilon

        return gaussian_one_run_epsilon
    raise ValidationError(f"A one-run audit tests its guesses against one of "
                          f"{', '.join(map(repr, CLAIMS))}. Got {claim!r} instead.")


def clopper_pearson_upper(k: int, n: int, beta: float) -> float:
    """The one-sided ``1 - beta`` Clopper-Pearson upper bound on a rate seen ``k`` times in
    ``n`` trials.

    Examples
    --------
    >>> round(clopper_pearson_upper(0, 100, 0.05), 4)  # the "rule of three": about 3 / n
    0.0295
    >>> clopper_pearson_upper(100, 100, 0.05)
    1.0
    """
    if not 0 <= k <= n or n < 1:
        raise ValidationError(f"A rate needs 0 <= k <= n and n >= 1. Got k={k}, n={n}.")
    if k == n:
        return 1.0
    return float(beta_distribution.ppf(1.0 - beta, k + 1, n - k))


def hypothesis_test_epsilon(false_positives: int, n_negatives: int, false_negatives: int,
                            n_positives: int, *, beta: float = 0.05,
                            delta: float = 0.0) -> float:
    """The multi-run lower bound on epsilon at confidence ``1 - beta``.

    A distinguisher told "in" or "out" over ``n_positives`` runs with the canary and
    ``n_negatives`` without errs ``false_negatives`` and ``false_positives`` times; each
    rate's Clopper-Pearson upper bound at ``1 - beta / 2`` (a union bound over the two)
    enters ``max(log((1 - delta - FNR) / FPR), log((1 - delta - FPR) / FNR), 0)``.

    Examples
    --------
    >>> round(hypothesis_test_epsilon(0, 1000, 0, 1000), 3)  # a perfect distinguisher
    5.601
    >>> hypothesis_test_epsilon(500, 1000, 500, 1000)  # a coin
    0.0
    """
    _check_confidence(beta, delta)
    fpr = clopper_pearson_upper(false_positives, n_negatives, beta / 2)
    fnr = clopper_pearson_upper(false_negatives, n_positives, beta / 2)
    best = 0.0
    for miss, alarm in ((fnr, fpr), (fpr, fnr)):
        if 1.0 - delta - miss > 0 and alarm > 0:
            best = max(best, math.log((1.0 - delta - miss) / alarm))
    return best
