"""Seeded train/test row indices, drawn exactly as scikit-learn's ``train_test_split`` draws them.

:meth:`fedsec.data.Dataset.split` used ``sklearn.model_selection.train_test_split`` with an
integer ``random_state``; importing scikit-learn costs about a second, more than a small run,
so the same draws are made here with numpy alone: ``ShuffleSplit`` (one permutation of the
rows, the first ``n_test`` of it for testing) and ``StratifiedShuffleSplit`` (per-class counts
by the approximate mode of the multivariate hypergeometric, ties broken at random, then one
permutation per class). The random stream is the legacy ``RandomState(seed)`` scikit-learn
makes from an integer seed, so a seed gives the rows it gave before, and the same transcript.
tests/data/test_shuffle_split.py checks the indices against scikit-learn's for many sizes,
seeds and class layouts.

Row order within each returned array is not part of the contract: callers sort them.
"""

from __future__ import annotations

import math

import numpy as np


def split_sizes(n_samples: int, test_size: float | int) -> tuple[int, int]:
    """``(n_train, n_test)``: ``test_size`` a fraction in (0, 1) (rounded up) or a row count.

    Raises ValueError with scikit-learn's wording when a set would be empty.

    Examples
    --------
    >>> split_sizes(150, 0.25), split_sizes(150, 40)
    ((112, 38), (110, 40))
    """
    if isinstance(test_size, float):
        if not 0.0 < test_size < 1.0:
            raise ValueError(f"test_size={test_size} should be either positive and smaller "
                             f"than the number of samples {n_samples} or a float in the "
                             "(0, 1) range")
        n_test = math.ceil(test_size * n_samples)
    else:
        if not 0 < test_size < n_samples:
            raise ValueError(f"test_size={test_size} should be either positive and smaller "
                             f"than the number of samples {n_samples} or a float in the "
                             "(0, 1) range")
        n_test = int(test_size)
    n_train = n_samples - n_test
    if n_train <= 0:
        raise ValueError(f"With n_samples={n_samples}, test_size={test_size} and "
                         "train_size=None, the resulting train set will be empty. Adjust any "
                         "of the aforementioned parameters.")
    return n_train, n_test


def approximate_mode(class_counts: np.ndarray, n_draws: int,
                     rng: np.random.RandomState) -> np.ndarray:
    """The most likely per-class counts of ``n_draws`` rows drawn without replacement.

    Floors each class's expected count, then adds the missing draws to the classes with the
    largest remainders, breaking ties with ``rng`` (scikit-learn's ``_approximate_mode``).

    Examples
    --------
    >>> approximate_mode(np.array([4, 2]), 3, np.random.RandomState(0))
    array([2, 1])
    """
    continuous = class_counts / class_counts.sum() * n_draws
    floored = np.floor(continuous)
    need_to_add = int(n_draws - floored.sum())
    if need_to_add > 0:
        remainder = continuous - floored
        for value in np.sort(np.unique(remainder))[::-1]:
            (inds,) = np.where(remainder == value)
            add_now = min(len(inds), need_to_add)
            floored[rng.choice(inds, size=add_now, replace=False)] += 1
            need_to_add -= add_now
            if need_to_add == 0:
                break
    return floored.astype(int)


def shuffle_split(n_samples: int, test_size: float | int, seed: int,
                  strata: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Train and test row indices of ``n_samples`` rows, stratified by ``strata`` if given.

    ``seed`` seeds the legacy ``RandomState`` stream scikit-learn uses, so the rows are those
    of ``train_test_split(np.arange(n_samples), test_size=test_size, random_state=seed,
    stratify=strata)`` (as sets). Raises ValueError, in scikit-learn's words, when a set
    would be empty or a class too small.

    Examples
    --------
    >>> train, test = shuffle_split(10, 0.3, seed=0)
    >>> sorted(test.tolist()), len(train)
    ([2, 4, 8], 7)
    """
    n_train, n_test = split_sizes(n_samples, test_size)
    # scikit-learn's legacy stream for an integer seed: the rows it gave, the same transcripts
    rng = np.random.RandomState(seed)
    if strata is None:
        permutation = rng.permutation(n_samples)
        return permutation[n_test:n_test + n_train], permutation[:n_test]
    return _stratified(np.asarray(strata), n_train, n_test, rng)


def _stratified(y: np.ndarray, n_train: int, n_test: int,
                rng: np.random.RandomState) -> tuple[np.ndarray, np.ndarray]:
    if y.ndim == 2:  # multi-label: one stratum per distinct row, as scikit-learn does
        y = np.array([" ".join(row.astype("str")) for row in y])
    classes, y_indices, class_counts = np.unique(y, return_inverse=True, return_counts=True)
    n_classes = classes.shape[0]
    if np.min(class_counts) < 2:
        too_few = classes[class_counts < 2].tolist()
        raise ValueError("The least populated classes in y have only 1 member, which is too "
                         "few. The minimum number of groups for any class cannot be less than "
                         f"2. Classes with too few members are: {too_few}")
    if n_train < n_classes:
        raise ValueError(f"The train_size = {n_train} should be greater or equal to the "
                         f"number of classes = {n_classes}")
    if n_test < n_classes:
        raise ValueError(f"The test_size = {n_test} should be greater or equal to the "
                         f"number of classes = {n_classes}")
    class_indices = np.split(np.argsort(y_indices, kind="stable"), np.cumsum(class_counts)[:-1])
    n_i = approximate_mode(class_counts, n_train, rng)
    t_i = approximate_mode(class_counts - n_i, n_test, rng)
    train: list[int] = []
    test: list[int] = []
    for i in range(n_classes):
        members = class_indices[i].take(rng.permutation(class_counts[i]), mode="clip")
        train.extend(members[:n_i[i]])
        test.extend(members[n_i[i]:n_i[i] + t_i[i]])
    return np.asarray(train, dtype=np.intp), np.asarray(test, dtype=np.intp)
