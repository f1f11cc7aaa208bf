"""Synthetic truths with known answers, one per kind of estimate, for :func:`check_scorer`.

Each :class:`Case` holds a small ground truth keyed like a private store, the estimate an
attack that recovered everything would return (:attr:`Case.perfect`), and uninformed ones
(:attr:`Case.uninformed`): what an adversary guesses from the population alone, the prior's
mean and a random draw of the prior's spread. The attack's naive baseline
(:attr:`Case.baseline`) is the prior's mean. Every draw is seeded: a case is the same each
time it is built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fedsec.outcomes import Reconstruction
from fedsec.private_store import shard_key, truth_key
from fedsec.scoring.rows import SOURCE_ROWS

Arrays = Mapping[str, np.ndarray]


@dataclass(frozen=True)
class Case:
    """One kind's synthetic truth and estimates of known quality.

    ``info`` is the Reconstruction's info every estimate carries (what a scorer of the kind
    needs beside the estimates: a sequence layout); ``n_targets`` the targets the estimates
    stand for (a sequence case's labels go with its inputs: one target).
    """

    kind: str
    truth: Arrays
    perfect: Arrays
    baseline: Arrays
    uninformed: Mapping[str, Arrays]
    info: Mapping[str, Any] = field(default_factory=dict)
    n_targets: int = 1

    def reconstruction(self, estimates: Arrays) -> Reconstruction:
        """``estimates`` as an attack's Reconstruction, with this case's baseline."""
        return Reconstruction(attack="conformance", threat="party1", estimates=estimates,
                              baseline=self.baseline, info=self.info)


def _rng(kind: str) -> np.random.Generator:
    return np.random.default_rng([0xC0DE, *kind.encode()])


def _records(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """Correlated records with an offset, as a party's shard holds them."""
    return rng.normal(size=(n, d)) @ rng.normal(size=(d, d)) + rng.normal(size=d)


def _like(rng: np.random.Generator, X: np.ndarray) -> np.ndarray:
    """Rows drawn independently with ``X``'s own mean and spread: its shape, nothing else."""
    return X.mean(axis=0) + rng.normal(size=X.shape) * X.std(axis=0)


def _mean_rows(X: np.ndarray, n: int) -> np.ndarray:
    return np.repeat(X.mean(axis=0, keepdims=True), n, axis=0)


def values_case() -> Case:
    """One party's 0/1 vector (which of 200 items it holds, half of them): the prior's mean is
    1/2 everywhere, a random guess a fair coin per entry."""
    rng = _rng("values")
    truth = rng.permutation(np.repeat([0.0, 1.0], 100))
    key = truth_key("party1", "value", "included")
    half = np.full(truth.shape, 0.5)
    return Case("values", {key: truth}, {key: truth.copy()}, {key: half},
                {"the prior's mean": {key: half},
                 "a random guess": {key: rng.integers(0, 2, truth.shape).astype(float)}})


def _rows_case(kind: str, order: Callable[[np.random.Generator, int], np.ndarray]) -> Case:
    """A party's records, and the record behind each row of the perfect estimate as a run's
    store keeps it for the auditor where rows travel in a secret order
    (:data:`fedsec.scoring.rows.SOURCE_ROWS`)."""
    rng = _rng(kind)
    X = _records(rng, 40, 6)
    key = shard_key("party1", 0, "X")
    rows = order(rng, len(X))
    mean = _mean_rows(X, len(X))
    return Case(kind, {key: X, truth_key("party1", "value", SOURCE_ROWS): rows},
                {key: X[rows]}, {key: mean},
                {"the prior's mean": {key: mean}, "a random guess": {key: _like(rng, X)}})


def rows_case() -> Case:
    """A party's 40 records of 6 correlated features, in its own row order."""
    return _rows_case("rows", lambda rng, n: np.arange(n))


def unordered_rows_case() -> Case:
    """The same records in an order unknown to the attack (the auditor's store keeps it)."""
    return _rows_case("unordered-rows", lambda rng, n: rng.permutation(n))


def basis_case() -> Case:
    """A rank-4 block of 60 rows, estimated by another basis of its column space; the
    uninformed guess is a random subspace of the same rank."""
    rng = _rng("basis")
    X = _records(rng, 60, 4)
    key = shard_key("party1", 0, "X")
    guess, _ = np.linalg.qr(rng.normal(size=(60, 4)))
    return Case("basis", {key: X}, {key: X @ rng.normal(size=(4, 4))}, {key: guess},
                {"a random subspace": {key: guess}})


def binary_columns_case() -> Case:
    """A block of 80 rows with three 0/1 columns among five; the uninformed guesses are
    constant 1/2 columns and random 0/1 ones."""
    rng = _rng("binary-columns")
    binary = rng.integers(0, 2, size=(80, 3)).astype(float)
    X = np.column_stack([binary[:, :2], rng.normal(size=80), binary[:, 2], rng.normal(size=80)])
    key = shard_key("party1", 0, "X")
    half = np.full(binary.shape, 0.5)
    return Case("binary-columns", {key: X}, {key: binary.copy()}, {key: half},
                {"the prior's mean": {key: half},
                 "a random guess": {key: rng.integers(0, 2, binary.shape).astype(float)}})


#: The sequence case's layout: one view of two channels over four steps, time major.
SEQUENCE_LAYOUT = {"motion": {"channels": ["x", "y"], "length": 4}}


def sequences_case() -> Case:
    """Three parties' labelled sequences (two classes with their own mean pattern); the target
    is the first party's, returned shuffled; the prior is the other parties' data."""
    rng = _rng("sequences")
    patterns = rng.normal(size=(2, 8))
    truth: dict[str, np.ndarray] = {}
    for party in ("party1", "party2", "party3"):
        y = rng.permutation(np.arange(12) % 2)
        truth[shard_key(party, 0, "X")] = patterns[y] + 0.3 * rng.normal(size=(12, 8))
        truth[shard_key(party, 0, "y")] = y
    x_key, y_key = shard_key("party1", 0, "X"), shard_key("party1", 0, "y")
    others = np.vstack([truth[shard_key(p, 0, "X")] for p in ("party2", "party3")])
    order = rng.permutation(12)
    mean = _mean_rows(others, 12)
    return Case("sequences", truth,
                {x_key: truth[x_key][order], y_key: truth[y_key][order]}, {x_key: mean},
                {"the prior's mean": {x_key: mean},
                 "a random guess": {x_key: _like(rng, others)[:12]}},
                info={"layouts": SEQUENCE_LAYOUT})


def labels_case() -> Case:
    """Three parties' class labels drawn from one population (three classes, unevenly); the
    target is the first party's, returned in another order; the prior is the other parties'
    labels, and a random guess draws as many from them."""
    rng = _rng("labels")
    truth = {shard_key(p, 0, "y"): rng.choice(3, size=30, p=[0.6, 0.3, 0.1])
             for p in ("party1", "party2", "party3")}
    key = shard_key("party1", 0, "y")
    others = np.concatenate([truth[shard_key(p, 0, "y")] for p in ("party2", "party3")])
    return Case("labels", truth, {key: rng.permutation(truth[key])}, {key: others},
                {"the prior's distribution": {key: others},
                 "a random guess": {key: rng.choice(others, size=30)}})


#: Each kind of estimate (:data:`fedsec.interfaces.ESTIMATE_KINDS`) and its case.
CASES: Mapping[str, Callable[[], Case]] = {
    "values": values_case, "rows": rows_case, "unordered-rows": unordered_rows_case,
    "basis": basis_case, "binary-columns": binary_columns_case, "sequences": sequences_case,
    "labels": labels_case,
}
