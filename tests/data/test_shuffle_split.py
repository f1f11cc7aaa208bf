"""The seeded split draws the rows scikit-learn's train_test_split drew (the oracle)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.model_selection import train_test_split

from fedsec.data.shuffle_split import shuffle_split


def _reference(n: int, size: float | int, seed: int,
               strata: np.ndarray | None) -> tuple[list[int], list[int]]:
    train, test = train_test_split(np.arange(n), test_size=size, random_state=seed,
                                   stratify=strata)
    return sorted(train.tolist()), sorted(test.tolist())


def _ours(n: int, size: float | int, seed: int,
          strata: np.ndarray | None) -> tuple[list[int], list[int]]:
    train, test = shuffle_split(n, size, seed, strata)
    return sorted(train.tolist()), sorted(test.tolist())


@settings(max_examples=150, deadline=None)
@given(n=st.integers(2, 400), fraction=st.floats(0.01, 0.99), seed=st.integers(0, 2**32 - 2),
       as_count=st.booleans())
def test_plain_split_matches_scikit_learn(n: int, fraction: float, seed: int,
                                          as_count: bool) -> None:
    size: float | int = max(1, min(n - 1, round(fraction * n))) if as_count else fraction
    try:
        expected = _reference(n, size, seed, None)
    except ValueError:
        with pytest.raises(ValueError):
            _ours(n, size, seed, None)
        return
    assert _ours(n, size, seed, None) == expected


@settings(max_examples=150, deadline=None)
@given(counts=st.lists(st.integers(2, 60), min_size=2, max_size=7),
       fraction=st.floats(0.05, 0.95), seed=st.integers(0, 2**32 - 2), shuffled=st.booleans(),
       as_count=st.booleans())
def test_stratified_split_matches_scikit_learn(counts: list[int], fraction: float, seed: int,
                                               shuffled: bool, as_count: bool) -> None:
    y = np.repeat(np.arange(len(counts)), counts)
    if shuffled:
        y = np.random.default_rng(seed).permutation(y)
    n = y.size
    size: float | int = max(1, min(n - 1, round(fraction * n))) if as_count else fraction
    try:
        expected = _reference(n, size, seed, y)
    except ValueError as error:
        with pytest.raises(ValueError, match=str(error).split()[1]):
            _ours(n, size, seed, y)
        return
    assert _ours(n, size, seed, y) == expected


def test_ties_between_classes_are_broken_as_scikit_learn_breaks_them() -> None:
    y = np.repeat([0, 1, 2, 3], [5, 5, 5, 5])  # every class ties: the draw decides
    for seed in range(50):
        assert _ours(20, 0.3, seed, y) == _reference(20, 0.3, seed, y)


@pytest.mark.parametrize(("y", "size", "words"), [
    (np.array([0, 0, 0, 1]), 0.5, "least populated"),
    (np.repeat(np.arange(5), 2), 3, "test_size = 3"),
])
def test_impossible_stratified_splits_are_refused(y: np.ndarray, size: float | int,
                                                  words: str) -> None:
    with pytest.raises(ValueError, match=words):
        shuffle_split(y.size, size, 0, y)
