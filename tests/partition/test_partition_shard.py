"""Shards: each party's private slices of X and y, and their flat-array form."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec.errors import DataError
from fedsec.partition import Shard, ShardCell, parse_partition

SPECS = [
    "horizontal:parties=3,overlap=0.4",
    "horizontal:parties=2,size=5",
    "vertical:parties=3,labels=party1+party3,overlap=0.5",
    "hybrid:cohorts=2,groups=3,overlap_rows=0.3,overlap_features=0.5",
    "hybrid:cohorts=3,groups=2,centres=per-cohort",
    "hybrid:owners=h1+c1+c2/h2+c3+c2,labels=h1+h2+c2",
]


def _data(n_samples: int = 14, n_features: int = 7) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    return rng.normal(size=(n_samples, n_features)), rng.integers(0, 2, size=n_samples)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(SPECS), st.integers(0, 1000))
def test_shard_cells_are_the_slices_of_x_and_y(spec: str, seed: int) -> None:
    X, y = _data()
    part = parse_partition(spec).apply(
        n_samples=14,
        feature_groups={"all": range(7)},
        y=y,
        rng=np.random.default_rng(seed),
        coordinators=[("server", "server")],
    )
    for party in part.parties:
        shard = part.shard(party, X, y)
        assert shard.party == party
        cells = part.cells_of(party)
        assert len(shard.cells) == len(cells)
        for mine, cell in zip(shard.cells, cells, strict=True):
            assert (mine.cohort, mine.group) == (cell.cohort, cell.group)
            assert np.array_equal(mine.X, X[np.ix_(cell.rows, cell.columns)])
            if party in part.label_owners[cell.cohort]:
                assert np.array_equal(mine.y, y[cell.rows])
            else:
                assert mine.y is None
        expected_rows = np.unique(np.concatenate([np.empty(0, int), *(c.rows for c in cells)]))
        assert np.array_equal(shard.rows, expected_rows)


def test_shard_data_is_a_copy() -> None:
    X, y = _data()
    part = parse_partition("vertical:parties=2").apply(
        n_samples=14, feature_groups={"all": range(7)}, rng=np.random.default_rng(0)
    )
    shard = part.shard("party1", X, y)
    shard.X[0, 0] = 1e9
    assert X[0, 0] != 1e9
    assert np.array_equal(shard.y, y)
    assert part.shard("party2", X, y).y is None


def test_without_y_no_cell_carries_labels() -> None:
    X, _ = _data()
    part = parse_partition("horizontal:parties=2").apply(
        n_samples=14, feature_groups={"all": range(7)}, rng=np.random.default_rng(0)
    )
    assert part.shard("party1", X).y is None


def test_coordinators_get_an_empty_shard() -> None:
    X, y = _data()
    part = parse_partition("horizontal:parties=2").apply(
        n_samples=14,
        feature_groups={"all": range(7)},
        rng=np.random.default_rng(0),
        coordinators=[("server", "server")],
    )
    shard = part.shard("server", X, y)
    assert shard.cells == ()
    assert shard.n_rows == 0
    assert shard.arrays() == {}


def test_x_of_a_multi_cell_shard_is_a_clear_error() -> None:
    X, y = _data()
    part = parse_partition("hybrid:cohorts=2,groups=2").apply(
        n_samples=14, feature_groups={"all": range(7)}, rng=np.random.default_rng(0)
    )
    shard = part.shard("centre1", X, y)
    assert len(shard.cells) == 2
    with pytest.raises(DataError, match=r"holds 2 cells.*Iterate over shard\.cells"):
        _ = shard.X
    with pytest.raises(DataError, match="holds 2 cells"):
        _ = shard.y
    assert shard.n_rows == 14


@pytest.mark.parametrize(
    ("X", "y", "fragment"),
    [
        (np.zeros((13, 7)), None, "X must be a matrix with 14 rows and at least 7 columns"),
        (np.zeros((14, 6)), None, "Got shape (14, 6)"),
        (np.zeros(14), None, "X must be a matrix"),
        (np.zeros((14, 7)), np.zeros(13), "y must have 14 entries"),
    ],
)
def test_shard_refuses_data_of_the_wrong_shape(
    X: np.ndarray, y: np.ndarray | None, fragment: str
) -> None:
    part = parse_partition("vertical").apply(
        n_samples=14, feature_groups={"all": range(7)}, rng=np.random.default_rng(0)
    )
    with pytest.raises(DataError) as info:
        part.shard("party1", X, y)
    assert fragment in str(info.value)


@pytest.mark.parametrize("spec", SPECS)
def test_arrays_round_trip_through_npz_without_pickle(spec: str) -> None:
    X, y = _data()
    part = parse_partition(spec).apply(
        n_samples=14, feature_groups={"all": range(7)}, y=y, rng=np.random.default_rng(3)
    )
    for party in part.parties:
        shard = part.shard(party, X, y)
        arrays = shard.arrays()
        assert "cell0/X" in arrays
        assert "cell0/rows" in arrays
        assert ("cell0/y" in arrays) == (shard.cells[0].y is not None)
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        buffer.seek(0)
        with np.load(buffer, allow_pickle=False) as loaded:
            again = Shard.from_arrays(party, loaded)
        assert again == shard
        assert again != Shard(party, ())


@pytest.mark.parametrize(
    ("arrays", "fragment"),
    [
        ({"cell0/Z": np.zeros(1)}, "Unexpected array 'cell0/Z'"),
        ({"X": np.zeros(1)}, "Unexpected array 'X'"),
        ({"cell1/X": np.zeros((1, 1))}, "cells numbered [1]"),
        ({"cell0/X": np.zeros((1, 1))}, "lacks 'cell0/cohort', 'cell0/group', 'cell0/rows'"),
        (
            {
                "cell0/cohort": np.array(0),
                "cell0/group": np.array(0),
                "cell0/rows": np.array([0, 1]),
                "cell0/columns": np.array([0]),
                "cell0/X": np.zeros((1, 1)),
            },
            "has X of shape (1, 1) but 2 rows and 1 columns",
        ),
    ],
)
def test_from_arrays_refuses_broken_input(arrays: dict, fragment: str) -> None:
    with pytest.raises(DataError) as info:
        Shard.from_arrays("alice", arrays)
    assert fragment in str(info.value)


def test_shard_cell_refuses_mismatched_labels() -> None:
    with pytest.raises(DataError, match="1 labels for 2 rows"):
        ShardCell(0, 0, np.array([0, 1]), np.array([0]), np.zeros((2, 1)), np.zeros(1))
