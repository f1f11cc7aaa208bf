"""Scoring reconstructed samples that come back in no particular order (gradient inversion).

An inversion attack returns a set of samples: which reconstruction belongs to which private
sample is unknown, so each reconstruction is first paired with a distinct true sample by
optimal assignment (Hungarian method, :func:`scipy.optimize.linear_sum_assignment`, on the
mean squared error). That pairing uses the ground truth: it is the auditor's step, never the
attack's. The metrics over the matched pairs are :func:`match_reconstructions`' ``mse`` (mean
per-sample MSE), ``correlation`` (mean Pearson correlation), ``label_accuracy`` and
``nearest_rate``: how often a reconstruction's nearest candidate in a pool of samples
(``pool``, whose first rows are the true samples; the truth alone without it) is the true
sample it was matched with, i.e. how often the reconstruction singles its sample out. Its
baseline is the rate that as many uninformed draws (:func:`random_guesses`) reach through
the matching alone: with fewer reconstructions than true samples, the assignment picks each
one's nearest sample whatever it holds, so the raw rate means nothing without it.

The baseline is the prior guess an attacker makes without the messages: for each true
sample, the mean of its class. It may use the data of the population, not the messages:
the class means are taken over the rows of ``pool`` after the truth (the other parties'
samples: data of the same population that the attacked client does not hold) when there are
any, over the truth itself otherwise (an oracle prior that makes the attack's advantage
conservative), and the class of each true sample is taken as known (labels the attack may
itself recover). Without labels the guess is the overall mean. The baseline's label accuracy
is that of always guessing the most frequent class of the same data.

Samples may have any shape after the first axis. Variable-length sequences, ``(n, T, c)``
end-padded, come with ``lengths``: a pair is compared over the first ``lengths[i]`` steps of
true sample ``i`` only (axis 1).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from fedsec.errors import ValidationError


def match_reconstructions(recon: np.ndarray, truth: np.ndarray, *,
                          recon_labels: np.ndarray | None = None,
                          true_labels: np.ndarray | None = None,
                          lengths: np.ndarray | None = None,
                          pool: np.ndarray | None = None,
                          pool_labels: np.ndarray | None = None,
                          pool_lengths: np.ndarray | None = None) -> dict[str, float]:
    """Match reconstructions to true samples, then score the pairs and the class-mean prior.

    Parameters
    ----------
    recon : numpy.ndarray
        ``(m, ...)`` reconstructed samples, in any order.
    truth : numpy.ndarray
        ``(n, ...)`` the attacked client's samples; ``min(m, n)`` pairs are matched.
    recon_labels : numpy.ndarray, optional
        ``(m,)`` labels or ``(m, C)`` label probabilities of the reconstructions.
    true_labels : numpy.ndarray, optional
        ``(n,)`` labels of the true samples (class means and label accuracy need them).
    lengths : numpy.ndarray, optional
        ``(n,)`` valid steps (axis 1) of each true sample.
    pool, pool_labels, pool_lengths : numpy.ndarray, optional
        Candidates for ``nearest_rate`` and the class means; ``pool[:n]`` must be ``truth``
        (and the labels and lengths likewise).

    Returns
    -------
    dict of str to float
        ``mse``, ``correlation``, ``label_accuracy``, ``nearest_rate`` over matched pairs,
        the same four with a ``baseline_`` prefix for the class-mean guess, and
        ``n_matched``. A metric that cannot be computed (no labels) is NaN.

    Examples
    --------
    >>> truth = np.array([[0.0, 1.0, 2.0], [3.0, 1.0, 0.0]])
    >>> scores = match_reconstructions(truth[::-1], truth, true_labels=np.array([0, 1]),
    ...                                recon_labels=np.array([1, 0]))
    >>> scores["mse"], scores["correlation"], scores["label_accuracy"], scores["nearest_rate"]
    (0.0, 1.0, 1.0, 1.0)
    """
    recon, truth = _samples(recon, "recon"), _samples(truth, "truth")
    if recon.shape[1:] != truth.shape[1:]:
        raise ValidationError(f"Reconstructions of shape {recon.shape[1:]} cannot be matched "
                              f"to samples of shape {truth.shape[1:]}.")
    n = truth.shape[0]
    mask = valid_mask(truth.shape, lengths)
    cand, cand_labels, cand_mask = _pool(truth, true_labels, mask, pool, pool_labels,
                                         pool_lengths)
    rows, cols = linear_sum_assignment(pairwise_mse(recon, truth, mask))
    prior = slice(n, None) if cand.shape[0] > n else slice(None)  # the others' data if any
    prior_labels = None if cand_labels is None else cand_labels[prior]
    guess = class_means(cand[prior], prior_labels, cand_mask[prior], true_labels, n)
    out = _scores(recon[rows], truth[cols], mask[cols], cols, cand, cand_mask)
    out["label_accuracy"] = _label_accuracy(recon_labels, rows, true_labels, cols)
    base = _scores(guess, truth, mask, np.arange(n), cand, cand_mask)
    # singling out through the matching alone: as many uninformed draws, matched the same way
    draws = random_guesses(cand[prior], cand_mask[prior], recon.shape[0])
    rows_d, cols_d = linear_sum_assignment(pairwise_mse(draws, truth, mask))
    base["nearest_rate"] = _scores(draws[rows_d], truth[cols_d], mask[cols_d], cols_d, cand,
                                   cand_mask)["nearest_rate"]
    for key, value in base.items():
        out[f"baseline_{key}"] = value
    out["baseline_label_accuracy"] = _majority_accuracy(prior_labels, true_labels)
    out["n_matched"] = float(rows.size)
    return out


def _samples(x: np.ndarray, name: str) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim < 2 or x.shape[0] == 0:
        raise ValidationError(f"{name} needs at least one sample and one value each, "
                              f"not shape {x.shape}.")
    return x


def valid_mask(shape: tuple[int, ...], lengths: np.ndarray | None) -> np.ndarray:
    """``(n, D)`` 0/1 weights of each flattened value: 1 within the sample's length."""
    n, size = shape[0], int(np.prod(shape[1:]))
    if lengths is None:
        return np.ones((n, size))
    lengths = np.asarray(lengths)
    if len(shape) < 3 or lengths.shape != (n,) or lengths.min() < 1 or lengths.max() > shape[1]:
        raise ValidationError(f"lengths of shape {lengths.shape} (between 1 and the steps) do "
                              f"not fit sequences of shape {shape}.")
    steps = np.arange(shape[1])[None, :] < lengths[:, None]
    per_step = int(np.prod(shape[2:]))
    return np.repeat(steps, per_step, axis=1).astype(np.float64)


def pairwise_mse(a: np.ndarray, b: np.ndarray, mask_b: np.ndarray) -> np.ndarray:
    """``(len(a), len(b))`` MSE of every pair over the values ``mask_b`` keeps of each ``b``."""
    A, B = a.reshape(a.shape[0], -1), b.reshape(b.shape[0], -1)
    sq = (A * A) @ mask_b.T - 2 * A @ (B * mask_b).T + ((B * B) * mask_b).sum(axis=1)
    return np.maximum(sq, 0.0) / mask_b.sum(axis=1)


#: The draws' own stream (not a seed a user's data is likely generated from).
_GUESS_SEED = (0xF5EC, 0x6E55)


def random_guesses(data: np.ndarray, mask: np.ndarray, m: int) -> np.ndarray:
    """``m`` draws of an uninformed guess: each value Gaussian with the (valid-step) mean and
    spread of ``data``, the population the prior may use (a fixed seed: scores are
    reproducible)."""
    flat = data.reshape(data.shape[0], -1)
    count = np.maximum(mask.sum(axis=0), 1)
    mean = (flat * mask).sum(axis=0) / count
    std = np.sqrt((((flat - mean) ** 2) * mask).sum(axis=0) / count)
    draws = np.random.default_rng(_GUESS_SEED).standard_normal((m, flat.shape[1])) * std + mean
    return draws.reshape((m, *data.shape[1:]))


def class_means(data: np.ndarray, labels: np.ndarray | None, mask: np.ndarray,
                targets: np.ndarray | None, n: int) -> np.ndarray:
    """The prior guess per true sample: the (valid-step) mean of its class in ``data``."""
    flat = data.reshape(data.shape[0], -1) * mask
    if labels is None or targets is None:
        mean = flat.sum(axis=0) / np.maximum(mask.sum(axis=0), 1)
        return np.broadcast_to(mean, (n, mean.size)).reshape((n, *data.shape[1:])).copy()
    labels, targets = np.asarray(labels), np.asarray(targets)
    guess = np.empty((n, flat.shape[1]))
    for c in np.unique(targets):
        members = labels == c
        guess[targets == c] = flat[members].sum(axis=0) / np.maximum(mask[members].sum(axis=0),
                                                                     1)
    return guess.reshape((n, *data.shape[1:]))


def _pool(truth: np.ndarray, labels: np.ndarray | None, mask: np.ndarray,
          pool: np.ndarray | None, pool_labels: np.ndarray | None,
          pool_lengths: np.ndarray | None
          ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """The candidates (pool or truth), their labels and masks, with the pool checked."""
    if pool is None:
        return truth, labels, mask
    pool = np.asarray(pool, dtype=np.float64)
    n = truth.shape[0]
    if pool.shape[1:] != truth.shape[1:] or pool.shape[0] < n \
            or not np.array_equal(pool[:n], truth):
        raise ValidationError("The pool's first rows must be the true samples.")
    if labels is not None and (pool_labels is None
                               or not np.array_equal(np.asarray(pool_labels)[:n], labels)):
        raise ValidationError("With true labels, the pool needs labels that begin with them.")
    pool_mask = valid_mask(pool.shape, pool_lengths)
    if not np.array_equal(pool_mask[:n], mask):
        raise ValidationError("The pool's lengths must begin with the true samples' lengths.")
    return pool, None if labels is None else np.asarray(pool_labels), pool_mask


def _scores(recon: np.ndarray, truth: np.ndarray, mask: np.ndarray, index: np.ndarray,
            cand: np.ndarray, cand_mask: np.ndarray) -> dict[str, float]:
    """MSE, correlation and nearest rate of paired rows (``index``: each truth's candidate)."""
    R, T = recon.reshape(recon.shape[0], -1), truth.reshape(truth.shape[0], -1)
    keep = mask > 0
    mse = [float(np.mean((r[k] - t[k]) ** 2)) for r, t, k in zip(R, T, keep, strict=True)]
    corr = [_pearson(r[k], t[k]) for r, t, k in zip(R, T, keep, strict=True)]
    nearest = np.argmin(pairwise_mse(recon, cand, cand_mask), axis=1)
    return {"mse": float(np.mean(mse)), "correlation": float(np.mean(corr)),
            "nearest_rate": float(np.mean(nearest == index))}


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson correlation; 0 when either side is constant (it carries no pattern)."""
    a, b = a - a.mean(), b - b.mean()
    denom = float(np.sqrt((a @ a) * (b @ b)))
    return float(a @ b) / denom if denom > 0 else 0.0


def _label_accuracy(recon_labels: np.ndarray | None, rows: np.ndarray,
                    true_labels: np.ndarray | None, cols: np.ndarray) -> float:
    if recon_labels is None or true_labels is None:
        return float("nan")
    guess = np.asarray(recon_labels)
    if guess.ndim == 2:
        guess = guess.argmax(axis=1)
    return float(np.mean(guess[rows] == np.asarray(true_labels)[cols]))


def _majority_accuracy(labels: np.ndarray | None, true_labels: np.ndarray | None) -> float:
    if labels is None or true_labels is None:
        return float("nan")
    values, counts = np.unique(labels, return_counts=True)
    return float(np.mean(np.asarray(true_labels) == values[np.argmax(counts)]))
